//! `kvbench redis-benchmark`'s output against the real redis-benchmark's, both run on
//! the same redis-server and read by the same parser (`common/rb_output.rs`): normal
//! blocks, `-q` lines and `--csv` rows compared test by test and line by line (figures
//! aside). Then every redis-benchmark command line of the tutorials in
//! `reference/tutorials` runs through `kvbench redis-benchmark` and through a link named
//! `redis-benchmark`, with `-n` scaled down so the test stays fast.

mod common;
#[path = "common/rb_output.rs"]
mod rb_output;

use common::{RedisServer, TestDir, kvbench, run_ok};
use rb_output::{BlockServer, block_shape, parse_csv, parse_normal, parse_quiet};

/// The kvbench binary the tests were built with.
const KVBENCH: &str = env!("CARGO_BIN_EXE_kvbench");

fn text(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Both tools' stdout for the same arguments (kvbench's first).
fn both(port: u16, args: &[&str]) -> (String, String) {
    let mut full: Vec<String> = vec![
        "-h".into(),
        "127.0.0.1".into(),
        "-p".into(),
        port.to_string(),
    ];
    full.extend(args.iter().map(|a| a.to_string()));
    let mine = kvbench(&["redis-benchmark"]).args(&full).ok();
    let theirs = run_ok("redis-benchmark", &full);
    (mine.stdout_text(), text(&theirs))
}

/// redis-benchmark 7.0 ends the suite at MSET, 7.2 and later add XADD, as kvbench does:
/// both sides are compared without it, whichever version the machine installed.
fn without_xadd<T>(items: Vec<T>, title: impl Fn(&T) -> &str) -> Vec<T> {
    items.into_iter().filter(|i| title(i) != "XADD").collect()
}

#[test]
fn normal_blocks_match_line_for_line() {
    let server = RedisServer::start();
    let (mine, theirs) = both(server.port, &["-n", "500", "-c", "4", "--threads", "2"]);
    let mine = parse_normal(&mine).unwrap_or_else(|e| panic!("kvbench: {e}\n{mine}"));
    let theirs = parse_normal(&theirs).unwrap_or_else(|e| panic!("redis-benchmark: {e}\n{theirs}"));
    let mine_blocks = without_xadd(mine.blocks, |b| &b.title);
    let theirs_blocks = without_xadd(theirs.blocks, |b| &b.title);
    assert_eq!(mine_blocks.len(), theirs_blocks.len());
    for (m, t) in mine_blocks.iter().zip(&theirs_blocks) {
        assert_eq!(block_shape(m), block_shape(t), "{}", t.title);
        assert_eq!(
            (m.requests, m.clients, m.payload_bytes, m.keep_alive),
            (t.requests, t.clients, t.payload_bytes, t.keep_alive),
            "{}",
            t.title
        );
        assert_eq!((m.multi_thread, m.threads), (t.multi_thread, t.threads));
        assert_eq!(m.server, t.server, "{}", t.title);
        assert!(matches!(m.server, BlockServer::Single { .. }));
        assert!(m.rps > 0.0 && m.summary.iter().all(|v| *v >= 0.0), "{m:?}");
    }
    assert_eq!(mine.trailing_empty_line, theirs.trailing_empty_line);
    assert_eq!(mine.masters, None);
}

#[test]
fn quiet_and_csv_lines_match_test_by_test() {
    let server = RedisServer::start();
    let (mine, theirs) = both(server.port, &["-n", "300", "-c", "3", "-q", "-P", "4"]);
    let mine = parse_quiet(&mine).unwrap_or_else(|e| panic!("{e}\n{mine}"));
    let theirs = parse_quiet(&theirs).unwrap_or_else(|e| panic!("{e}\n{theirs}"));
    let mine = without_xadd(mine, |l| &l.title);
    let theirs = without_xadd(theirs, |l| &l.title);
    let titles = |v: &[rb_output::QuietLine]| v.iter().map(|l| l.title.clone()).collect::<Vec<_>>();
    assert_eq!(titles(&mine), titles(&theirs));
    assert!(mine.iter().all(|l| l.rps > 0.0));

    let (mine, theirs) = both(
        server.port,
        &[
            "-t",
            "ping,set,get,lrange_300",
            "-n",
            "300",
            "--csv",
            "-r",
            "100",
        ],
    );
    let mine = parse_csv(&mine).unwrap_or_else(|e| panic!("{e}\n{mine}"));
    let theirs = parse_csv(&theirs).unwrap_or_else(|e| panic!("{e}\n{theirs}"));
    let titles = |v: &[rb_output::CsvRow]| v.iter().map(|r| r.title.clone()).collect::<Vec<_>>();
    assert_eq!(titles(&mine), titles(&theirs));
    for row in &mine {
        let [avg, min, p50, p95, p99, max] = row.latencies;
        assert!(
            min <= p50 && p50 <= p95 && p95 <= p99 && p99 <= max,
            "{row:?}"
        );
        assert!(min <= avg && avg <= max, "{row:?}");
    }
    // An arbitrary command, as CSV: kvbench doubles the quotes inside the title, which
    // the parser undoes.
    let (mine, theirs) = both(
        server.port,
        &[
            "-n",
            "100",
            "--csv",
            "eval",
            "return redis.call(\"ping\")",
            "0",
        ],
    );
    assert_eq!(
        titles(&parse_csv(&mine).unwrap()),
        titles(&parse_csv(&theirs).unwrap())
    );
}

/// A tutorial's command line for the test server: `-h`/`-p` pointed at it (added when
/// missing), `-n` at most `max_n` (added when missing, as the default is 100000).
fn scaled(line: &[&str], port: u16, max_n: u64) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let (mut host, mut port_given, mut n_given) = (false, false, false);
    let mut i = 0;
    // Flags come before the command; the first word that is not a flag ends them.
    let command_at = {
        let mut j = 0;
        while j < line.len() && line[j].starts_with('-') {
            let takes_value = !matches!(line[j], "-q" | "--csv" | "--cluster" | "-l" | "-I");
            j += if takes_value { 2 } else { 1 };
        }
        j
    };
    while i < command_at {
        match line[i] {
            "-h" => {
                out.extend(["-h".into(), "127.0.0.1".into()]);
                host = true;
                i += 2;
            }
            "-p" => {
                out.extend(["-p".into(), port.to_string()]);
                port_given = true;
                i += 2;
            }
            "-n" => {
                let n: u64 = line[i + 1].parse().expect("-n is a number");
                out.extend(["-n".into(), n.min(max_n).to_string()]);
                n_given = true;
                i += 2;
            }
            flag => {
                out.push(flag.into());
                i += 1;
            }
        }
    }
    if !host {
        out.extend(["-h".into(), "127.0.0.1".into()]);
    }
    if !port_given {
        out.extend(["-p".into(), port.to_string()]);
    }
    if !n_given {
        out.extend(["-n".into(), max_n.to_string()]);
    }
    out.extend(line[command_at..].iter().map(|a| a.to_string()));
    out
}

/// The titles a run printed, whatever its output mode.
fn titles_of(stdout: &str) -> Vec<String> {
    if stdout.starts_with("\"test\"") || stdout.contains("\n\"test\"") {
        return parse_csv(stdout)
            .unwrap()
            .into_iter()
            .map(|r| r.title)
            .collect();
    }
    if let Ok(q) = parse_quiet(stdout)
        && !q.is_empty()
    {
        return q.into_iter().map(|l| l.title).collect();
    }
    let normal = parse_normal(stdout).unwrap_or_else(|e| panic!("{e}\n{stdout}"));
    normal.blocks.into_iter().map(|b| b.title).collect()
}

/// Every redis-benchmark command line of the tutorials (single node; the cluster one is
/// in `redis_benchmark_cluster.rs`), each with the most requests the test sends.
const TUTORIAL_LINES: &[(&[&str], u64)] = &[
    (&[], 300),
    (&["-q"], 300),
    (
        &[
            "-h",
            "192.168.1.1",
            "-p",
            "6379",
            "-n",
            "100000",
            "-c",
            "20",
        ],
        400,
    ),
    (
        &["-h", "127.0.0.1", "-p", "6379", "-n", "100000", "-c", "20"],
        400,
    ),
    (&["-t", "set", "-n", "1000000", "-r", "100000000"], 2000),
    (&["-t", "ping,set,get", "-n", "100000", "--csv"], 2000),
    (
        &[
            "-r",
            "10000",
            "-n",
            "10000",
            "eval",
            "return redis.call(\"ping\")",
            "0",
        ],
        2000,
    ),
    (
        &[
            "-r",
            "10000",
            "-n",
            "10000",
            "lpush",
            "mylist",
            "__rand_int__",
        ],
        2000,
    ),
    (
        &["-q", "-p", "6379", "-h", "192.168.56.105", "-d", "1024"],
        300,
    ),
    (&["-t", "set,get", "-q"], 2000),
    (&["-t", "set,get", "-q", "-c", "1000"], 3000),
    (&["-t", "set", "-c", "100", "-n", "1000000"], 2000),
    // 1 MB values: a few are enough.
    (&["-t", "set,get", "-d", "1000000", "-n", "1000", "-q"], 20),
    (&["-t", "get,set", "-q", "-P", "8"], 4000),
];

#[test]
fn every_tutorial_line_runs_through_kvbench_and_the_link() {
    let server = RedisServer::start();
    let dir = TestDir::new("rb-link");
    let link = dir.file("redis-benchmark");
    std::os::unix::fs::symlink(KVBENCH, &link).expect("link to kvbench");
    let link = link.to_string_lossy().into_owned();
    for (line, max_n) in TUTORIAL_LINES {
        let args = scaled(line, server.port, *max_n);
        let theirs = without_xadd(titles_of(&text(&run_ok("redis-benchmark", &args))), |t| t);
        let mut through_kvbench = vec!["redis-benchmark".to_string()];
        through_kvbench.extend(args.iter().cloned());
        for (how, out) in [
            ("kvbench redis-benchmark", run_ok(KVBENCH, &through_kvbench)),
            ("the redis-benchmark link", run_ok(&link, &args)),
        ] {
            let mine = without_xadd(titles_of(&text(&out)), |t| t);
            assert_eq!(mine, theirs, "{how} {args:?}");
        }
    }
    // The link answers --help as redis-benchmark does, and never runs memtier's flags.
    let help = run_ok(&link, &["--help".to_string()]);
    assert!(text(&help).starts_with("Usage: redis-benchmark [OPTIONS] [COMMAND ARGS...]\n"));
}
