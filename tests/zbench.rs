//! `kvbench zbench` against real servers: a redis-server (and a 3-master cluster for
//! `-oss-cluster`) started by each test. What the server saw is checked (DBSIZE, INFO
//! commandstats, each set's ZCARD), beside the output's sections parsed back.

mod common;

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Command;
use std::time::{Duration, Instant};

use common::{RedisCluster, RedisServer, TestDir, kvbench};
use kvbench::frontend::zbench::workload::write_key;

/// What zbench printed, section by section.
#[derive(Debug, Default)]
struct Output {
    header: Vec<String>,
    /// Progress rows (each ends in a tab and a carriage return).
    rows: Vec<String>,
    summary: HashMap<String, String>,
    /// p50, p95, p99 in ms.
    latency: Vec<f64>,
    /// `(size, count, percent)` per line of the reply histogram.
    histogram: Vec<(u64, u64, f64)>,
    total_replies: Option<u64>,
}

impl Output {
    fn number(&self, key: &str) -> f64 {
        let text = self
            .summary
            .get(key)
            .unwrap_or_else(|| panic!("no {key:?} in {self:#?}"));
        text.split_whitespace()
            .next()
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{key}: {text:?}"))
    }
}

/// Parses zbench's stdout into its sections; panics on a layout it does not expect.
fn parse(stdout: &str) -> Output {
    let mut out = Output::default();
    let (before, after) = stdout
        .split_once("#################################################\n")
        .unwrap_or_else(|| panic!("no summary rule in {stdout:?}"));
    let mut lines = before.split('\n');
    for line in lines.by_ref() {
        if line.trim_start().starts_with("Test time") {
            break;
        }
        out.header.push(line.to_string());
    }
    let rest: Vec<&str> = lines.collect();
    for row in rest.join("\n").split('\r') {
        if !row.trim().is_empty() && !row.contains("received Ctrl-c") {
            assert!(row.ends_with('\t'), "row {row:?}");
            out.rows.push(row.to_string());
        }
    }
    let mut lines = after.lines();
    while let Some(line) = lines.next() {
        if line.starts_with("Latency summary") {
            assert!(lines.next().is_some_and(|l| l.contains("p50")));
            out.latency = lines
                .next()
                .expect("latency values")
                .split_whitespace()
                .map(|v| v.parse().expect("ms"))
                .collect();
            continue;
        }
        if let Some(rest) = line.strip_prefix("Size: ") {
            // Size: 3<TAB>Count: 83. (% 4.15)
            let (size, rest) = rest.split_once("\tCount: ").expect("count");
            let (count, rest) = rest.split_once(". (% ").expect("share");
            out.histogram.push((
                size.parse().expect("size"),
                count.parse().expect("count"),
                rest.trim_end_matches(')').parse().expect("percent"),
            ));
            continue;
        }
        if let Some(total) = line.strip_prefix("Total processed replies ") {
            out.total_replies = Some(total.parse().expect("total"));
            continue;
        }
        for key in [
            "Total Duration",
            "Total Issued commands",
            "Total Errors",
            "Throughput summary:",
            "Average zcard",
        ] {
            if let Some(value) = line.strip_prefix(key) {
                out.summary
                    .insert(key.to_string(), value.trim().to_string());
            }
        }
    }
    out
}

/// `kvbench zbench ARGS... -p PORT`, which must succeed; its output parsed.
fn zbench(port: u16, args: &[&str]) -> (Output, String) {
    let port = port.to_string();
    let run = kvbench(&["zbench", "-p", &port]).args(args).ok();
    let text = run.stdout_text();
    (parse(&text), text)
}

/// The ZCARD of every key id in `ids`, pipelined over one connection.
fn zcards(port: u16, ids: std::ops::Range<u64>) -> Vec<u64> {
    let mut conn = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    let mut request = Vec::new();
    for id in ids.clone() {
        let mut key = Vec::new();
        write_key(&mut key, id);
        request.extend_from_slice(format!("*2\r\n$5\r\nZCARD\r\n${}\r\n", key.len()).as_bytes());
        request.extend_from_slice(&key);
        request.extend_from_slice(b"\r\n");
    }
    conn.write_all(&request).expect("write");
    let wanted = ids.count();
    let mut text = String::new();
    let mut buf = [0u8; 65536];
    while text.matches('\n').count() < wanted {
        let n = conn.read(&mut buf).expect("read");
        assert!(n > 0, "server closed");
        text.push_str(&String::from_utf8_lossy(&buf[..n]));
    }
    text.lines()
        .map(|l| l.trim_start_matches(':').parse().expect("an integer reply"))
        .collect()
}

#[test]
fn load_makes_one_zipf_sized_set_per_key() {
    let server = RedisServer::start();
    let (out, _) = zbench(
        server.port,
        &["-mode", "load", "-r", "2000", "-c", "7", "-pipeline", "10"],
    );
    assert_eq!(server.dbsize(), 2000);
    assert_eq!(server.commandstats().get("zadd"), Some(&2000));
    assert_eq!(out.number("Total Issued commands"), 2000.0);
    assert_eq!(out.number("Total Errors"), 0.0);
    assert!(
        out.header
            .contains(&"Each ZSET contains between 1 and 10 elements.".to_string())
    );
    assert!(
        out.header
            .contains(&"Keyspace range: 2000 keys. [0 ; 2000]".to_string())
    );
    assert!(out.header[1].starts_with("Total clients: 7. Commands per client: 285 Total"));
    let sizes = zcards(server.port, 0..2000);
    let mut seen = [0u64; 11];
    for &size in &sizes {
        assert!((1..=10).contains(&size), "{size}");
        seen[size as usize] += 1;
    }
    assert!(seen[1] >= 2 * seen[10], "zipf skew: {seen:?}");
    // 10-letter members never collide here, so the sets hold every element sent.
    let average = sizes.iter().sum::<u64>() as f64 / 2000.0;
    assert_eq!(out.number("Average zcard"), average.round(), "{average}");
    assert!(out.histogram.is_empty(), "a load prints no reply histogram");
    assert!(!out.rows.is_empty());
}

#[test]
fn uniform_sizes_cover_the_whole_range() {
    let server = RedisServer::start();
    zbench(
        server.port,
        &[
            "-mode",
            "load",
            "-r",
            "1000",
            "-r-start",
            "500",
            "-key-elements-min",
            "3",
            "-key-elements-max",
            "5",
            "-key-elements-dist=uniform",
            "-c",
            "3",
        ],
    );
    assert_eq!(server.dbsize(), 1000);
    let sizes = zcards(server.port, 500..1500);
    for n in 3..=5 {
        let count = sizes.iter().filter(|&&s| s == n).count();
        assert!((200..470).contains(&count), "size {n}: {count}");
    }
}

#[test]
fn query_with_multi_makes_one_transaction_per_pipeline() {
    let server = RedisServer::start();
    zbench(server.port, &["-mode", "load", "-r", "2000"]);
    server.config_resetstat();
    let (out, _) = zbench(
        server.port,
        &[
            "-mode",
            "query",
            "-pipeline",
            "10",
            "-multi",
            "-n",
            "2000",
            "-r",
            "2000",
            "-c",
            "5",
        ],
    );
    let stats = server.commandstats();
    assert_eq!(stats.get("multi"), Some(&200), "{stats:?}");
    assert_eq!(stats.get("exec"), Some(&200), "{stats:?}");
    assert_eq!(stats.get("zrangebylex"), Some(&2000), "{stats:?}");
    assert_eq!(out.number("Total Issued commands"), 2000.0);
    assert_eq!(out.number("Total Errors"), 0.0);
    assert_eq!(out.total_replies, Some(2000));
    let counted: u64 = out.histogram.iter().map(|h| h.1).sum();
    assert_eq!(counted, 2000);
    let percent: f64 = out.histogram.iter().map(|h| h.2).sum();
    assert!((percent - 100.0).abs() < 0.1, "{percent}");
    // Sizes come from the sets: at most 10 elements each, and a lexical bound selects
    // fewer than all of them often.
    assert!(
        out.histogram.iter().all(|h| h.0 <= 10),
        "{:?}",
        out.histogram
    );
    assert!(out.histogram.iter().any(|h| h.0 == 0));
    assert_eq!(out.latency.len(), 3);
    assert!(out.latency[0] <= out.latency[1] && out.latency[1] <= out.latency[2]);
}

#[test]
fn reply_sizes_are_each_reply_s_element_count() {
    // One key read again and again: every reply is its whole set, inside MULTI or not.
    let server = RedisServer::start();
    zbench(
        server.port,
        &["-mode", "load", "-r", "100", "-key-elements-min", "4"],
    );
    let size = zcards(server.port, 7..8)[0];
    for multi in ["-multi=false", "-multi"] {
        server.config_resetstat();
        let (out, _) = zbench(
            server.port,
            &[
                "-mode",
                "query",
                "-query",
                "zrange-byscore",
                "-r",
                "1",
                "-r-start",
                "7",
                "-n",
                "50",
                "-pipeline",
                "5",
                "-c",
                "2",
                multi,
            ],
        );
        assert_eq!(out.histogram, vec![(size, 50, 100.0)], "{multi}");
        assert_eq!(server.commandstats().get("zrange"), Some(&50));
    }
}

#[test]
fn query_kinds_send_their_commands() {
    let server = RedisServer::start();
    zbench(server.port, &["-mode", "load", "-r", "200"]);
    for (kind, command) in [
        ("zrevrangebylex", "zrevrangebylex"),
        ("zrange-byscore-rev", "zrevrangebyscore"),
        ("zrangebyscore", "zrange"),
    ] {
        server.config_resetstat();
        let (out, _) = zbench(
            server.port,
            &[
                "-mode", "query", "-query", kind, "-n", "300", "-r", "200", "-c", "3",
            ],
        );
        assert_eq!(server.commandstats().get(command), Some(&300), "{kind}");
        assert_eq!(out.total_replies, Some(300), "{kind}");
        assert_eq!(out.number("Total Errors"), 0.0, "{kind}");
    }
}

#[test]
fn rps_paces_the_whole_run() {
    let server = RedisServer::start();
    zbench(server.port, &["-mode", "load", "-r", "1000"]);
    server.config_resetstat();
    let started = Instant::now();
    let (out, _) = zbench(
        server.port,
        &[
            "-mode", "query", "-rps", "1000", "-n", "3000", "-r", "1000", "-c", "5",
        ],
    );
    let wall = started.elapsed();
    // Five clients split 3 and 2 over two worker threads: each thread takes the rate in
    // proportion to its clients' commands (an even split made the 3-client thread run 3.6 s at
    // 833/s), so the run takes its 3 s at the target.
    let duration = out.number("Total Duration");
    // Up to 3.55 s for a loaded machine's late start and end; the uneven split's 3.6 s
    // and 833/s stay outside.
    assert!((2.5..3.55).contains(&duration), "Total Duration {duration}");
    assert!(wall >= Duration::from_millis(2500), "{wall:?}");
    let rate = out.number("Throughput summary:");
    assert!((850.0..1100.0).contains(&rate), "{rate}");
    assert_eq!(server.commandstats().get("zrangebylex"), Some(&3000));
    // A row a second, each with the second's rate near the target.
    assert!(out.rows.len() >= 3, "{:?}", out.rows);
}

#[test]
fn rps_sends_each_pipeline_whole() {
    // redis-zbench-go's limiter hands out a pipeline at a time: at -rps 1000 with
    // -pipeline 100 a batch goes out every 100 ms. Sent command by command as each fell
    // due, the batches never reached the server as batches (a read per command), and
    // with -multi each command waited up to 100 ms for its EXEC (p50 about 50 ms).
    let server = RedisServer::start();
    zbench(server.port, &["-mode", "load", "-r", "1000"]);
    for multi in [false, true] {
        server.config_resetstat();
        let mut args = vec![
            "-mode",
            "query",
            "-rps",
            "1000",
            "-pipeline",
            "100",
            "-n",
            "2000",
            "-r",
            "1000",
            "-c",
            "4",
        ];
        if multi {
            args.push("-multi");
        }
        let (out, _) = zbench(server.port, &args);
        let info = server.cli(&["INFO", "stats"]);
        let reads: u64 = info
            .lines()
            .find_map(|l| l.trim().strip_prefix("total_reads_processed:"))
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no total_reads_processed in {info:?}"));
        // 20 batches, the connections' setup and this test's redis-cli: a read per
        // command would be 2000. A batch may arrive in two reads now and then.
        assert!(reads < 100, "multi {multi}: {reads} reads for 20 batches");
        let stats = server.commandstats();
        assert_eq!(stats.get("zrangebylex"), Some(&2000), "{stats:?}");
        if multi {
            assert_eq!(stats.get("exec"), Some(&20), "{stats:?}");
        }
        // Each command's latency runs from its batch's due time to the reply (EXEC's),
        // not from the first command of a batch trickling out.
        let p50 = out.latency[0];
        assert!(p50 < 25.0, "multi {multi}: p50 {p50} ms");
        let rate = out.number("Throughput summary:");
        assert!((800.0..1150.0).contains(&rate), "multi {multi}: {rate}");
    }
}

#[test]
fn a_short_batch_does_not_split_the_next_one_under_rps() {
    // 20 queries per client at -pipeline 15: each client's batches are 15 and 5, and a
    // thread's bursts of 15 positions fall out of step with them. A batch that took the
    // last 10 positions of a burst once waited for the next burst (1.1 s here) for its
    // other 5, its MULTI held open and its first 10 commands' latency counting the wait.
    let server = RedisServer::start();
    zbench(server.port, &["-mode", "load", "-r", "200"]);
    server.config_resetstat();
    let (out, _) = zbench(
        server.port,
        &[
            "-mode",
            "query",
            "-rps",
            "20",
            "-n",
            "60",
            "-r",
            "200",
            "-c",
            "3",
            "-pipeline",
            "15",
            "-multi",
        ],
    );
    let stats = server.commandstats();
    assert_eq!(stats.get("zrangebylex"), Some(&60), "{stats:?}");
    assert_eq!(
        stats.get("exec"),
        Some(&6),
        "two batches a client: {stats:?}"
    );
    let p99 = out.latency[2];
    assert!(p99 < 500.0, "p99 {p99} ms: a batch waited for a burst");
}

#[test]
fn rps_holds_when_the_commands_do_not_split_evenly() {
    // -n 75 on 50 clients: 25 send 2 and 25 send 1, and on two worker threads every
    // client that sends 2 is on the first. A rate shared by clients ran that thread at
    // half the rate for two thirds of the work: 1.97 s, not 1.5. A load of 10 keys on
    // 20 clients puts every key on the first thread: 3.6 s, not 1.8.
    let server = RedisServer::start();
    for (args, command, count, last_due) in [
        (
            ["-mode", "query", "-n", "75", "-c", "50", "-rps", "50"],
            "zrangebylex",
            75,
            1.48,
        ),
        (
            ["-mode", "load", "-r", "10", "-c", "20", "-rps", "5"],
            "zadd",
            10,
            1.8,
        ),
    ] {
        server.config_resetstat();
        let started = Instant::now();
        let (out, _) = zbench(server.port, &[&args[..], &["-r", "10"]].concat());
        let wall = started.elapsed().as_secs_f64();
        assert_eq!(server.commandstats().get(command), Some(&count), "{args:?}");
        // From the first send to the last reply: the last command is due at
        // (count - 1) / rate; a loaded machine may add a little, the uneven split a third
        // or more.
        let duration = out.number("Total Duration");
        assert!(
            (0.95 * last_due..1.1 * last_due).contains(&duration),
            "{args:?}: Total Duration {duration}, the last command due at {last_due}"
        );
        assert!(wall >= 0.95 * last_due, "{args:?}: {wall}");
    }
}

#[test]
fn clients_with_nothing_to_send_do_not_hold_the_run() {
    // One key to load on two clients, or 20 queries on 50: some clients (and, with two
    // worker threads, a whole thread's) have nothing to send. Such a thread used to wait
    // for its first once-a-second tick before it saw it was done, so the run reported a
    // second and a rate hundreds of times too low.
    let server = RedisServer::start();
    let (out, _) = zbench(server.port, &["-mode", "load", "-r", "1", "-c", "2"]);
    let duration = out.number("Total Duration");
    // The bug read a whole second; the bound leaves a loaded machine most of one.
    assert!(duration < 0.9, "load: Total Duration {duration}");
    assert_eq!(server.dbsize(), 1);
    server.config_resetstat();
    let (out, _) = zbench(server.port, &["-mode", "query", "-r", "1", "-n", "20"]);
    let duration = out.number("Total Duration");
    assert!(duration < 0.9, "query: Total Duration {duration}");
    assert_eq!(server.commandstats().get("zrangebylex"), Some(&20));
}

#[test]
fn json_out_file_holds_kvbench_s_results() {
    let server = RedisServer::start();
    zbench(server.port, &["-mode", "load", "-r", "300"]);
    let dir = std::env::temp_dir().join(format!("kvbench-zbench-json-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("out.json");
    let path_text = path.display().to_string();
    zbench(
        server.port,
        &[
            "-mode",
            "query",
            "-n",
            "500",
            "-r",
            "300",
            "-c",
            "4",
            "-query",
            "zrange-byscore-rev",
            "-json-out-file",
            &path_text,
        ],
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("json written")).expect("json");
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(json["configuration"]["tool"], "zbench");
    // Every flag that changes the figures is named, so two runs can be told apart.
    let config = &json["configuration"];
    assert_eq!(config["mode"], "query");
    assert_eq!(config["query"], "zrange-byscore-rev");
    assert_eq!(config["member size"], 10);
    assert_eq!(config["key elements min"], 1);
    assert_eq!(config["key elements max"], 10);
    assert_eq!(config["key elements dist"], "zipf");
    assert_eq!(json["ALL STATS"]["Queries"]["Count"], 500);
    assert_eq!(json["ALL STATS"]["Totals"]["Count"], 500);
}

#[test]
fn the_tutorial_command_lines_run() {
    // The README's two lines, scaled down: -r 1000000 becomes 20000 keys, -n 100000 at
    // -rps 10000 becomes 10000 queries (one second), against this test's server.
    let server = RedisServer::start();
    let (load, _) = zbench(server.port, &["-mode", "load", "-r", "20000"]);
    assert_eq!(server.dbsize(), 20000);
    assert_eq!(load.number("Total Issued commands"), 20000.0);
    server.config_resetstat();
    let (query, _) = zbench(
        server.port,
        &[
            "-mode",
            "query",
            "-pipeline",
            "100",
            "-c",
            "10",
            "-multi",
            "-rps",
            "10000",
            "-n",
            "10000",
            "-r",
            "20000",
        ],
    );
    let stats = server.commandstats();
    assert_eq!(stats.get("zrangebylex"), Some(&10000));
    assert_eq!(stats.get("exec"), Some(&100));
    assert_eq!(query.total_replies, Some(10000));
    assert_eq!(query.number("Total Errors"), 0.0);
}

#[test]
fn oss_cluster_routes_every_set_and_batch_to_its_master() {
    let cluster = RedisCluster::start();
    let port = cluster.nodes[0].port;
    // Key id N lives in slot N: 20000 keys cover every slot, so every master.
    let (load, _) = zbench(
        port,
        &["-mode", "load", "-r", "20000", "-oss-cluster", "-c", "6"],
    );
    assert_eq!(cluster.dbsize(), 20000);
    assert_eq!(cluster.calls("zadd"), 20000);
    assert!(
        cluster.per_node("zadd").iter().all(|&n| n > 5000),
        "{:?}",
        cluster.per_node("zadd")
    );
    assert_eq!(load.number("Total Errors"), 0.0);
    for node in &cluster.nodes {
        node.config_resetstat();
    }
    let (query, _) = zbench(
        port,
        &[
            "-mode",
            "query",
            "-oss-cluster",
            "-multi",
            "-pipeline",
            "10",
            "-n",
            "2000",
            "-r",
            "20000",
            "-c",
            "5",
        ],
    );
    // 400 queries a client, 40 batches of 10 each.
    assert_eq!(cluster.calls("multi"), 200);
    assert_eq!(cluster.calls("exec"), 200);
    assert_eq!(cluster.calls("zrangebylex"), 2000);
    assert!(
        cluster.per_node("exec").iter().all(|&n| n > 20),
        "{:?}",
        cluster.per_node("exec")
    );
    assert_eq!(query.number("Total Errors"), 0.0);
    assert_eq!(query.total_replies, Some(2000));
}

#[test]
fn ctrl_c_prints_the_summary_of_what_was_measured() {
    let server = RedisServer::start();
    zbench(server.port, &["-mode", "load", "-r", "100"]);
    let port = server.port.to_string();
    let run = kvbench(&[
        "zbench", "-p", &port, "-mode", "query", "-rps", "200", "-n", "100000", "-r", "100",
    ])
    .spawn();
    run.wait_for_stdout("[0.");
    let status = Command::new("kill")
        .args(["-INT", &run.pid().to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success());
    let done = run.wait(Duration::from_secs(30));
    let text = done.stdout_text();
    assert!(text.contains("received Ctrl-c - shutting down"), "{text}");
    let out = parse(&text);
    let issued = out.number("Total Issued commands");
    assert!(issued > 0.0 && issued < 100000.0, "{issued}");
    assert_eq!(out.total_replies, Some(issued as u64));
    assert_eq!(done.out.status.code(), Some(130));
}

#[test]
fn ctrl_c_during_a_stall_says_what_was_never_answered() {
    // Under -rps, commands keep falling due while the server is stopped; Ctrl-C then
    // ends the run with none of them answered. The summary's latency cannot hold them:
    // a warning says how many there were and how long the oldest waited.
    let server = RedisServer::start();
    zbench(server.port, &["-mode", "load", "-r", "100"]);
    let port = server.port.to_string();
    let run = kvbench(&[
        "zbench", "-p", &port, "-mode", "query", "-rps", "500", "-n", "100000", "-r", "100", "-c",
        "2",
    ])
    .spawn();
    run.wait_for_stdout("[0.");
    let pid = server.pid() as libc::pid_t;
    // SAFETY: kill(2) on the PID of the server this test started and has not reaped.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGSTOP) }, 0);
    // Two more progress rows (a second each) while the server is stopped.
    let rows = |text: &str| text.matches('\r').count();
    let before = rows(&run.stdout_so_far());
    common::wait_until(
        "two seconds of the stall",
        common::CONDITION_TIMEOUT,
        || rows(&run.stdout_so_far()) >= before + 2,
    );
    // SAFETY: kill(2) on our own child, not reaped yet.
    assert_eq!(
        unsafe { libc::kill(run.pid() as libc::pid_t, libc::SIGINT) },
        0
    );
    let done = run.wait(Duration::from_secs(30));
    // SAFETY: as above; the server must run again to be stopped cleanly.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGCONT) }, 0);
    assert_eq!(done.out.status.code(), Some(130), "{}", done.describe());
    let err = done.stderr_text();
    let line = err
        .lines()
        .find(|l| l.contains("were due and never answered"))
        .unwrap_or_else(|| panic!("no warning: {err}"));
    let count: u64 = line
        .split_whitespace()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{line}"));
    // Two seconds at 500/s: hundreds, at least.
    assert!(count >= 200, "{line}");
}

#[test]
fn bad_input_is_one_line_and_exit_1() {
    for (args, needle) in [
        (vec!["-p", "1"], "please specify a valid -mode option"),
        (vec!["-mode", "write"], "invalid -mode"),
        (
            vec![
                "-mode",
                "load",
                "-key-elements-min",
                "5",
                "-key-elements-max",
                "4",
            ],
            "-key-elements-min 5 is greater than -key-elements-max 4",
        ),
        (
            vec!["-mode", "load", "-r", "0"],
            "-r must be at least 1 key",
        ),
        (
            vec!["-mode", "query", "-c", "x"],
            "invalid value \"x\" for flag -c",
        ),
        (
            vec!["-mode", "query", "-bogus"],
            "flag provided but not defined: -bogus",
        ),
        (
            vec!["-mode", "load", "--c=4294967295"],
            "at most 100000 clients",
        ),
        (
            vec!["-mode", "load", "--pipeline=4294967295"],
            "at most 65536 commands",
        ),
    ] {
        let run = kvbench(&["zbench"]).args(&args).run();
        assert_eq!(
            run.out.status.code(),
            Some(1),
            "{args:?}: {}",
            run.describe()
        );
        let err = run.stderr_text();
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err:?}");
        assert!(err.contains(needle), "{args:?}: {err:?}");
        assert!(run.stdout_text().is_empty(), "{args:?}");
    }
}

#[test]
fn an_unreachable_server_is_an_error() {
    let port = common::closed_port().to_string();
    let run = kvbench(&["zbench", "-p", &port, "-mode", "load", "-r", "10"])
        .with_json()
        .run();
    assert_eq!(run.out.status.code(), Some(1), "{}", run.describe());
    assert!(run.stderr_text().contains("error:"), "{}", run.describe());
    // Nothing was measured: no summary of zeros, and the progress row is ended.
    let out = run.stdout_text();
    assert!(!out.contains("Total Issued commands"), "{}", run.describe());
    assert!(out.ends_with('\n'), "{}", run.describe());
    // The JSON file asked for says why it has no figures.
    let json = run.json();
    let stopped = json["ALL STATS"]["Runtime"]["Stopped by error"]
        .as_str()
        .unwrap_or_default();
    assert!(stopped.contains("cannot connect"), "{json}");
}

#[test]
fn an_unwritable_json_file_fails_before_the_run() {
    let server = RedisServer::start();
    let dir = TestDir::new("zbench-unwritable");
    let missing = dir.file_arg("no-such-dir/z.json");
    let port = server.port.to_string();
    let run = kvbench(&[
        "zbench",
        "-p",
        &port,
        "-mode",
        "load",
        "-r",
        "50",
        "-json-out-file",
        &missing,
    ])
    .run();
    assert_eq!(run.out.status.code(), Some(1), "{}", run.describe());
    let err = run.stderr_text();
    assert_eq!(err.lines().count(), 1, "{}", run.describe());
    assert!(
        err.starts_with(&format!("error: cannot write {missing}: ")),
        "{err}"
    );
    assert_eq!(server.cli(&["DBSIZE"]).trim(), "0", "the run never started");
}

#[test]
fn acl_user_and_uri_authenticate() {
    let server = RedisServer::start_with(&["--requirepass", "secret"]);
    server.cli(&["ACL", "SETUSER", "zb", "on", ">zbpw", "~*", "+@all"]);
    let port = server.port.to_string();
    let run = kvbench(&["zbench", "-p", &port, "-mode", "load", "-r", "50"]).run();
    assert_eq!(run.out.status.code(), Some(1), "{}", run.describe());
    // Redis answers NOAUTH, or closes on a long unauthenticated ZADD.
    let err = run.stderr_text();
    assert!(
        err.contains("-a PASSWORD") || err.contains("unauthenticated"),
        "{}",
        run.describe()
    );
    // A wrong password fails before any command: the error, and no summary of zeros.
    let run = kvbench(&[
        "zbench", "-p", &port, "-mode", "load", "-r", "50", "-a", "nope",
    ])
    .run();
    assert_eq!(run.out.status.code(), Some(1), "{}", run.describe());
    assert!(
        run.stderr_text().contains("WRONGPASS"),
        "{}",
        run.describe()
    );
    assert!(
        !run.stdout_text().contains("Total Issued commands"),
        "{}",
        run.describe()
    );
    assert_eq!(server.dbsize(), 0);
    zbench(
        server.port,
        &["-mode", "load", "-r", "50", "--user", "zb", "-a", "zbpw"],
    );
    assert_eq!(server.dbsize(), 50);
    let uri = format!("redis://zb:zbpw@127.0.0.1:{}/2", server.port);
    // The URI's port wins over -p.
    kvbench(&["zbench", "-p", "1", "-u", &uri, "-mode", "load", "-r", "30"]).ok();
    assert!(server.cli(&["INFO", "keyspace"]).contains("db2:keys=30"));
}

#[test]
fn tls_connections() {
    let pki = common::TestPki::generate();
    let server = RedisServer::start_tls(&pki, "server", &[]);
    let port = server.port.to_string();
    let tls = [
        "-tls".to_string(),
        format!("-cacert={}", pki.file("ca.pem")),
        "-cert".to_string(),
        pki.file("client.pem"),
        "--key".to_string(),
        pki.file("client.key"),
    ];
    kvbench(&[
        "zbench", "-p", &port, "-mode", "load", "-r", "100", "-c", "4",
    ])
    .args(&tls)
    .ok();
    assert_eq!(server.dbsize(), 100);
    let run = kvbench(&[
        "zbench",
        "-p",
        &port,
        "-mode",
        "query",
        "-n",
        "200",
        "-multi",
        "-pipeline",
        "5",
    ])
    .args(&tls)
    .ok();
    assert!(run.stdout_text().contains("Total processed replies 200"));
    // Plaintext to a TLS-only server fails with an error, not a hang or a panic.
    let plain = kvbench(&["zbench", "-p", &port, "-mode", "load", "-r", "1"]).run();
    assert_eq!(plain.out.status.code(), Some(1), "{}", plain.describe());
}

/// Flags this run cannot use are said on stderr, not dropped in silence: the other mode's
/// flags, `-debug` past its levels, and `-h`/`-p` beside a `-u` that sets them. The run
/// does what it would without them (the server's counts).
#[test]
fn flags_a_run_cannot_use_are_named() {
    let server = RedisServer::start();
    let port = server.port.to_string();
    let run = kvbench(&["zbench", "-p", &port])
        .args(&["-mode", "load", "-r", "50", "-c", "2", "-n", "5", "-multi"])
        .args(&["-print-histogram", "-debug", "-1"])
        .ok();
    let err = run.stderr_text();
    for said in [
        "warning: -n has no effect with -mode load (it sends one ZADD per key of -r); ignored",
        "warning: -multi has no effect with -mode load (it sends one ZADD per key of -r); ignored",
        "warning: -print-histogram has no effect with -mode load",
        "warning: -debug -1: the levels are 0 to 2; using 0",
    ] {
        assert!(err.contains(said), "{said:?} not in {err}");
    }
    let stats = server.commandstats();
    assert_eq!(stats.get("zadd"), Some(&50), "{stats:?}");
    assert_eq!(stats.get("multi"), None, "{stats:?}");

    server.config_resetstat();
    let uri = format!("redis://127.0.0.1:{port}");
    let run = kvbench(&["zbench", "-u", &uri, "-h", "192.0.2.1", "-p", "1"])
        .args(&[
            "-mode", "query", "-n", "40", "-r", "50", "-c", "2", "-d", "64",
        ])
        .args(&["-key-elements-max", "3"])
        .ok();
    let err = run.stderr_text();
    for said in [
        "warning: -d has no effect with -mode query (the flag shapes -mode load's ZADDs); ignored",
        "warning: -key-elements-max has no effect with -mode query",
        "warning: both URI and -h specified, URI takes precedence.",
        "warning: both URI and -p specified, URI takes precedence.",
    ] {
        assert!(err.contains(said), "{said:?} not in {err}");
    }
    assert_eq!(server.commandstats().get("zrangebylex"), Some(&40));
}
