//! Arbitrary commands and connection options end to end, against a real redis-server
//! each test starts: `--command` with ratios, placeholders and key patterns, keyless and
//! pub/sub commands, `--command-stats-breakdown=line`, MONITOR replay
//! (`--monitor-input`), SCAN cursor following, RESP3, ACL users, `-u` URIs, and that a
//! password never shows up in any output.
//!
//! Each test checks what the server saw (`INFO commandstats`, the keys it holds, a MONITOR
//! feed, a subscriber's messages), not only what kvbench printed.

mod common;

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::process::Output;
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use serde_json::Value;

use common::{
    CONDITION_TIMEOUT, Memcached, RedisServer, TestDir, describe, kvbench, kvbench_at, read_json,
};

// ---------------------------------------------------------------------------------------
// Helpers

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `Count` of one row of the `ALL STATS` object.
fn count(json: &Value, row: &str) -> u64 {
    json["ALL STATS"][row]["Count"]
        .as_u64()
        .unwrap_or_else(|| panic!("ALL STATS/{row}/Count missing in {json:#}"))
}

/// Names of the objects in `ALL STATS` (rows and histogram arrays), without `Runtime`.
fn all_stats_keys(json: &Value) -> Vec<String> {
    let mut keys: Vec<String> = json["ALL STATS"]
        .as_object()
        .unwrap_or_else(|| panic!("no ALL STATS object in {json:#}"))
        .keys()
        .filter(|k| *k != "Runtime")
        .cloned()
        .collect();
    keys.sort();
    keys
}

/// The ALL STATS table of a text report: its header line, then one line per row
/// (`Sets ...`, `Totals ...`), dashed lines left out.
fn stats_table(report: &str) -> (String, Vec<String>) {
    let mut lines = report
        .lines()
        .skip_while(|l| l.trim() != "ALL STATS")
        .skip(1);
    let header = lines
        .find(|l| l.starts_with("Type"))
        .unwrap_or_else(|| panic!("no table header in:\n{report}"))
        .to_string();
    let rows = lines
        .take_while(|l| !l.trim().is_empty())
        .filter(|l| !l.starts_with('-') && !l.starts_with('='))
        .map(str::to_string)
        .collect();
    (header, rows)
}

/// Calls of `name` in `INFO commandstats` (0 when the server never ran it).
fn calls(server: &RedisServer, name: &str) -> u64 {
    server.commandstats().get(name).copied().unwrap_or(0)
}

/// One more connection to the server that sends one command, checks the server's
/// acknowledgement, then records everything the server pushes to it (a MONITOR feed or
/// a subscriber's messages) on a background thread. Dropping it closes the connection.
struct Feed {
    stream: TcpStream,
    data: Arc<Mutex<Vec<u8>>>,
    reader: Option<JoinHandle<()>>,
}

impl Feed {
    fn open(server: &RedisServer, command: &[&str], ack: &[u8]) -> Feed {
        let addr: SocketAddr = ([127, 0, 0, 1], server.port).into();
        let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(2))
            .unwrap_or_else(|e| panic!("connect to {}: {e}", server.addr()));
        stream
            .set_read_timeout(Some(Duration::from_secs(5)))
            .expect("set read timeout");
        let mut req = format!("*{}\r\n", command.len());
        for arg in command {
            req.push_str(&format!("${}\r\n{arg}\r\n", arg.len()));
        }
        stream.write_all(req.as_bytes()).expect("send feed command");
        let mut got = vec![0u8; ack.len()];
        stream
            .read_exact(&mut got)
            .unwrap_or_else(|e| panic!("{command:?}: no acknowledgement: {e}"));
        assert_eq!(
            got,
            ack,
            "{command:?} answered {:?}",
            String::from_utf8_lossy(&got)
        );
        // From here on the reader owns reading; a read timeout only means "quiet".
        stream
            .set_read_timeout(Some(Duration::from_millis(100)))
            .expect("set read timeout");
        let data = Arc::new(Mutex::new(Vec::new()));
        let mut reader_stream = stream.try_clone().expect("clone feed stream");
        let sink = Arc::clone(&data);
        let reader = thread::spawn(move || {
            let mut buf = [0u8; 64 * 1024];
            loop {
                match reader_stream.read(&mut buf) {
                    Ok(0) => return,
                    Ok(n) => sink.lock().unwrap().extend_from_slice(&buf[..n]),
                    Err(e)
                        if e.kind() == std::io::ErrorKind::WouldBlock
                            || e.kind() == std::io::ErrorKind::TimedOut =>
                    {
                        continue;
                    }
                    Err(_) => return,
                }
            }
        });
        Feed {
            stream,
            data,
            reader: Some(reader),
        }
    }

    /// Everything received so far.
    fn bytes(&self) -> Vec<u8> {
        self.data.lock().unwrap().clone()
    }

    /// Wait (up to [`CONDITION_TIMEOUT`]) until `done` holds for what was received, and
    /// return it; on timeout return what there is, for the caller's assertion to explain.
    fn wait_until(&self, done: impl Fn(&[u8]) -> bool) -> Vec<u8> {
        let deadline = Instant::now() + CONDITION_TIMEOUT;
        loop {
            let bytes = self.bytes();
            if done(&bytes) || Instant::now() > deadline {
                return bytes;
            }
            thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Feed {
    fn drop(&mut self) {
        let _ = self.stream.shutdown(Shutdown::Both);
        if let Some(reader) = self.reader.take() {
            let _ = reader.join();
        }
    }
}

/// A MONITOR connection: every command the server runs, as its arguments.
struct Monitor(Feed);

impl Monitor {
    fn start(server: &RedisServer) -> Monitor {
        Monitor(Feed::open(server, &["MONITOR"], b"+OK\r\n"))
    }

    /// Every command seen so far, each as its arguments, the name in upper case.
    fn commands(&self) -> Vec<Vec<String>> {
        parse_monitor(&self.0.bytes())
    }

    /// Wait until `n` commands named `name` (upper case) were seen; return all of them.
    fn wait_for(&self, name: &str, n: usize) -> Vec<Vec<String>> {
        let bytes = self.0.wait_until(|b| {
            parse_monitor(b)
                .iter()
                .filter(|c| c.first().map(String::as_str) == Some(name))
                .count()
                >= n
        });
        parse_monitor(&bytes)
            .into_iter()
            .filter(|c| c.first().map(String::as_str) == Some(name))
            .collect()
    }
}

/// Parse MONITOR lines (`+1700000000.123456 [0 127.0.0.1:5000] "SET" "k" "v"`) into
/// argument lists. Arguments are quoted with Redis's `sdscatrepr` escapes.
fn parse_monitor(bytes: &[u8]) -> Vec<Vec<String>> {
    let text = String::from_utf8_lossy(bytes);
    let mut commands = Vec::new();
    for line in text.split("\r\n") {
        let Some(rest) = line.strip_prefix('+') else {
            continue;
        };
        let Some((_, args)) = rest.split_once("] ") else {
            continue;
        };
        let mut out = Vec::new();
        let mut chars = args.chars().peekable();
        while let Some(c) = chars.next() {
            if c != '"' {
                continue;
            }
            let mut arg = String::new();
            while let Some(c) = chars.next() {
                match c {
                    '"' => break,
                    '\\' => match chars.next() {
                        Some('n') => arg.push('\n'),
                        Some('r') => arg.push('\r'),
                        Some('t') => arg.push('\t'),
                        Some('a') => arg.push('\x07'),
                        Some('b') => arg.push('\x08'),
                        Some('x') => {
                            let hex: String = chars.by_ref().take(2).collect();
                            let byte = u8::from_str_radix(&hex, 16).unwrap_or(b'?');
                            arg.push(byte as char);
                        }
                        Some(other) => arg.push(other),
                        None => break,
                    },
                    other => arg.push(other),
                }
            }
            out.push(arg);
        }
        if let Some(name) = out.first_mut() {
            *name = name.to_uppercase();
            commands.push(out);
        }
    }
    commands
}

// ---------------------------------------------------------------------------------------
// Arbitrary commands, ratios and rows

/// memtier's own example (`arbitrary.out`): 2 HSETs to each GET. 2 clients × 99 requests
/// = 198 commands, 132 HSETs and 66 GETs, on the server and in both reports.
#[test]
fn command_ratio_counts_on_the_server_and_in_table_and_json() {
    let server = RedisServer::start();
    let dir = TestDir::new("cmd-ratio");
    let json_path = dir.file("run.json");
    let json_arg = format!("--json-out-file={}", json_path.display());
    let out = kvbench_at(
        server.port,
        &[
            "--command=hset __key__ f __data__",
            "--command-ratio=2",
            "--command=get __key__",
            "-t",
            "1",
            "-c",
            "2",
            "-n",
            "99",
            &json_arg,
        ],
    )
    .ok();

    let stats = server.commandstats();
    assert_eq!(stats.get("hset"), Some(&132), "commandstats: {stats:?}");
    assert_eq!(stats.get("get"), Some(&66), "commandstats: {stats:?}");
    assert_eq!(stats.get("set"), None, "no SET was asked for: {stats:?}");

    let json = read_json(&json_path);
    assert_eq!(count(&json, "Hsets"), 132);
    assert_eq!(count(&json, "Gets"), 66);
    assert_eq!(count(&json, "Totals"), 198);
    // Rows plus one histogram array per command; no Sets/Waits rows of the SET:GET mode.
    assert_eq!(
        all_stats_keys(&json),
        ["GET", "Gets", "HSET", "Hsets", "Totals"],
        "{:#}",
        json["ALL STATS"]
    );

    let report = stdout(&out);
    let (header, rows) = stats_table(&report);
    assert!(
        !header.contains("Hits/sec") && !header.contains("Misses/sec"),
        "arbitrary commands have no Hits/Misses columns: {header:?}"
    );
    assert!(
        header.contains("Ops/sec") && header.contains("KB/sec"),
        "{header:?}"
    );
    let names: Vec<&str> = rows
        .iter()
        .map(|r| r.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(names, ["Hsets", "Gets", "Totals"], "{report}");
    // Every row has as many cells as the header has columns.
    // Header cells are separated by two or more blanks (`Avg. Latency` is one cell).
    let columns = header.split("  ").filter(|c| !c.trim().is_empty()).count();
    assert_eq!(columns, 7, "Type, Ops/sec, 4 latencies, KB/sec: {header:?}");
    for row in &rows {
        assert_eq!(
            row.split_whitespace().count(),
            columns,
            "row {row:?} vs {header:?}"
        );
    }
}

/// SET, GET and INCR at 3:2:1 with one client and 600 requests: exactly 300, 200 and 100
/// on the server, and the same in the JSON.
#[test]
fn three_command_mix_lands_in_the_asked_proportions() {
    let server = RedisServer::start();
    let dir = TestDir::new("cmd-mix");
    let json_path = dir.file("run.json");
    let json_arg = format!("--json-out-file={}", json_path.display());
    kvbench_at(
        server.port,
        &[
            "--command=set __key__ __data__",
            "--command-ratio=3",
            "--command=get __key__",
            "--command-ratio=2",
            "--command=incr __key__",
            "--command-ratio=1",
            "-t",
            "1",
            "-c",
            "1",
            "-n",
            "600",
            "--hide-histogram",
            &json_arg,
        ],
    )
    .ok();
    let stats = server.commandstats();
    assert_eq!(
        (stats.get("set"), stats.get("get"), stats.get("incr")),
        (Some(&300), Some(&200), Some(&100)),
        "commandstats: {stats:?}"
    );
    let json = read_json(&json_path);
    assert_eq!(count(&json, "Sets"), 300);
    assert_eq!(count(&json, "Gets"), 200);
    assert_eq!(count(&json, "Incrs"), 100);
    assert_eq!(count(&json, "Totals"), 600);
}

/// Each `__key__` of one command draws its own key: MSET with two pairs over a sequential
/// pattern writes keys 1..20 in 10 calls, each holding the generated value.
#[test]
fn several_placeholders_in_one_command_write_two_keys_per_call() {
    let server = RedisServer::start();
    kvbench_at(
        server.port,
        &[
            "--command=mset __key__ __data__ __key__ __data__",
            "--command-key-pattern=S",
            "--key-minimum=1",
            "--key-maximum=100",
            "-d",
            "7",
            "-t",
            "1",
            "-c",
            "1",
            "-n",
            "10",
            "--hide-histogram",
        ],
    )
    .ok();
    assert_eq!(calls(&server, "mset"), 10);
    assert_eq!(server.dbsize(), 20, "two keys per MSET");
    for id in [1, 2, 11, 20] {
        let value = server.cli(&["GET", &format!("memtier-{id}")]);
        assert_eq!(value.len(), 7, "memtier-{id} holds {value:?}");
    }
    assert_eq!(server.cli(&["EXISTS", "memtier-21"]), "0");
}

/// A command without placeholders (PING) runs as is and writes nothing.
#[test]
fn keyless_command_ping() {
    let server = RedisServer::start();
    // The harness's own readiness PINGs do not count.
    server.config_resetstat();
    let dir = TestDir::new("cmd-ping");
    let json_path = dir.file("run.json");
    let json_arg = format!("--json-out-file={}", json_path.display());
    kvbench_at(
        server.port,
        &[
            "--command=ping",
            "-t",
            "1",
            "-c",
            "2",
            "-n",
            "50",
            "--hide-histogram",
            &json_arg,
        ],
    )
    .ok();
    assert_eq!(calls(&server, "ping"), 100);
    assert_eq!(server.dbsize(), 0);
    assert_eq!(count(&read_json(&json_path), "Pings"), 100);
}

/// PUBLISH reaches a real subscriber: every message arrives with the generated payload.
#[test]
fn publish_reaches_a_subscriber() {
    let server = RedisServer::start();
    let subscriber = Feed::open(
        &server,
        &["SUBSCRIBE", "chan"],
        b"*3\r\n$9\r\nsubscribe\r\n$4\r\nchan\r\n:1\r\n",
    );
    kvbench_at(
        server.port,
        &[
            "--command=publish chan __data__",
            "-d",
            "12",
            "-t",
            "1",
            "-c",
            "2",
            "-n",
            "50",
            "--hide-histogram",
        ],
    )
    .ok();
    assert_eq!(calls(&server, "publish"), 100);
    let message = format!(
        "*3\r\n$7\r\nmessage\r\n$4\r\nchan\r\n$12\r\n{}\r\n",
        "x".repeat(12)
    );
    let occurrences = |b: &[u8]| String::from_utf8_lossy(b).matches(message.as_str()).count();
    let got = subscriber.wait_until(|b| occurrences(b) >= 100);
    assert_eq!(
        occurrences(&got),
        100,
        "subscriber got: {:?}",
        String::from_utf8_lossy(&got)
    );
}

/// `--command-stats-breakdown=line`: two SET lines are two rows, `Sets` and `Sets #2`
/// (memtier names both `Sets`), 5 requests each; the default breakdown merges them.
#[test]
fn line_breakdown_gives_two_rows_for_two_set_lines() {
    let server = RedisServer::start();
    let dir = TestDir::new("cmd-line");
    let json_path = dir.file("run.json");
    let json_arg = format!("--json-out-file={}", json_path.display());
    let common = [
        "--command=set __key__ __data__",
        "--command=set __key__ other",
        "-t",
        "1",
        "-c",
        "1",
        "-n",
        "10",
        "--hide-histogram",
    ];

    let mut args = common.to_vec();
    args.extend(["--command-stats-breakdown=line", json_arg.as_str()]);
    let out = kvbench_at(server.port, &args).ok();
    assert_eq!(calls(&server, "set"), 10);
    let (_, rows) = stats_table(&stdout(&out));
    let sets: Vec<&String> = rows.iter().filter(|r| r.starts_with("Sets ")).collect();
    assert_eq!(sets.len(), 2, "two Sets rows expected: {rows:#?}");
    // memtier repeats the row name (two "Sets" rows, two "Sets" JSON keys, which a JSON
    // reader collapses to one, and one HDR file written over the other); kvbench numbers
    // the second line's row, so each line's figures are read back whole.
    assert!(rows.iter().any(|r| r.starts_with("Sets #2 ")), "{rows:#?}");
    let doc = read_json(&json_path);
    assert_eq!(count(&doc, "Sets"), 5);
    assert_eq!(count(&doc, "Sets #2"), 5);
    assert_eq!(count(&read_json(&json_path), "Totals"), 10);

    server.config_resetstat();
    let mut args = common.to_vec();
    args.push(json_arg.as_str());
    let out = kvbench_at(server.port, &args).ok();
    assert_eq!(calls(&server, "set"), 10);
    let (_, rows) = stats_table(&stdout(&out));
    assert_eq!(
        rows.iter().filter(|r| r.starts_with("Sets ")).count(),
        1,
        "{rows:#?}"
    );
    assert_eq!(count(&read_json(&json_path), "Sets"), 10);
}

// ---------------------------------------------------------------------------------------
// MONITOR replay

const MONITOR_CAPTURE: &str = "\
1700000000.123456 [0 127.0.0.1:50000] \"SET\" \"k1\" \"v1\"
1700000000.223456 [0 127.0.0.1:50000] \"GET\" \"k1\"
";

/// `__monitor_line1__` sends the captured command byte for byte, every time.
#[test]
fn monitor_line_n_sends_exactly_the_captured_command() {
    let server = RedisServer::start();
    let dir = TestDir::new("monitor-n");
    let capture = dir.file("monitor.txt");
    std::fs::write(&capture, MONITOR_CAPTURE).unwrap();
    let input = format!("--monitor-input={}", capture.display());
    let monitor = Monitor::start(&server);
    kvbench_at(
        server.port,
        &[
            &input,
            "--command=__monitor_line1__",
            "-t",
            "1",
            "-c",
            "1",
            "-n",
            "3",
            "--hide-histogram",
        ],
    )
    .ok();
    let sets = monitor.wait_for("SET", 3);
    assert_eq!(
        sets,
        vec![vec!["SET", "k1", "v1"]; 3],
        "{:?}",
        monitor.commands()
    );
    let stats = server.commandstats();
    assert_eq!(stats.get("set"), Some(&3), "{stats:?}");
    assert_eq!(
        stats.get("get"),
        None,
        "line 2 was not asked for: {stats:?}"
    );
    assert_eq!(server.dbsize(), 1);

    // Line 2 is the GET.
    server.config_resetstat();
    kvbench_at(
        server.port,
        &[
            &input,
            "--command=__monitor_line2__",
            "-t",
            "1",
            "-c",
            "1",
            "-n",
            "4",
            "--hide-histogram",
        ],
    )
    .ok();
    let gets = monitor.wait_for("GET", 4);
    assert_eq!(gets, vec![vec!["GET", "k1"]; 4]);
    assert_eq!(calls(&server, "set"), 0);
    // The value line 1 wrote (read after the MONITOR check, which would see this GET).
    assert_eq!(server.cli(&["GET", "k1"]), "v1");
}

/// `__monitor_line@__` with `--monitor-pattern=S` walks the capture in file order and
/// wraps around: 7 requests over 3 RPUSH lines push a b c a b c a.
#[test]
fn monitor_line_at_replays_the_capture_in_order() {
    let server = RedisServer::start();
    let dir = TestDir::new("monitor-at");
    let capture = dir.file("monitor.txt");
    std::fs::write(
        &capture,
        "1700000000.100000 [0 127.0.0.1:50000] \"RPUSH\" \"list\" \"a\"\n\
         1700000000.200000 [0 127.0.0.1:50000] \"RPUSH\" \"list\" \"b\"\n\
         1700000000.300000 [0 127.0.0.1:50000] \"RPUSH\" \"list\" \"c\"\n",
    )
    .unwrap();
    let input = format!("--monitor-input={}", capture.display());
    kvbench_at(
        server.port,
        &[
            &input,
            "--command=__monitor_line@__",
            "--monitor-pattern=S",
            "-t",
            "1",
            "-c",
            "1",
            "-n",
            "7",
            "--hide-histogram",
        ],
    )
    .ok();
    assert_eq!(calls(&server, "rpush"), 7);
    let list = server.cli(&["LRANGE", "list", "0", "-1"]);
    let list: Vec<&str> = list.lines().collect();
    assert_eq!(list, ["a", "b", "c", "a", "b", "c", "a"]);
}

/// MONITOR escapes (`\x00`, `\r`, `\n`, `\"`, `\\`) are undone before replay: the
/// server gets the original bytes. `__monitor_line@__` with S shares one position among
/// all clients, so 2 threads × 3 clients × 3 requests replay each of 3 lines 6 times.
#[test]
fn monitor_replay_is_binary_safe_and_sequential_across_clients() {
    let server = RedisServer::start();
    let dir = TestDir::new("monitor-escapes");
    let capture = dir.file("monitor.txt");
    std::fs::write(
        &capture,
        concat!(
            r#"1700000000.100000 [0 127.0.0.1:50000] "SET" "bin" "a\x00b\r\n\"q\"\\z""#,
            "\n",
            r#"1700000000.200000 [0 127.0.0.1:50000] "RPUSH" "la" "1""#,
            "\n",
            r#"1700000000.300000 [0 127.0.0.1:50000] "RPUSH" "lb" "2""#,
            "\n",
        ),
    )
    .unwrap();
    let input = format!("--monitor-input={}", capture.display());
    kvbench_at(
        server.port,
        &[
            &input,
            "--command=__monitor_line1__",
            "-t",
            "1",
            "-c",
            "1",
            "-n",
            "1",
            "--hide-histogram",
        ],
    )
    .ok();
    // a NUL b CR LF " q " \ z: 10 bytes.
    assert_eq!(server.cli(&["STRLEN", "bin"]), "10");
    assert_eq!(
        server.cli(&["--no-raw", "GET", "bin"]),
        r#""a\x00b\r\n\"q\"\\z""#
    );

    server.flushall();
    server.config_resetstat();
    kvbench_at(
        server.port,
        &[
            &input,
            "--command=__monitor_line@__",
            "--monitor-pattern=S",
            "-t",
            "2",
            "-c",
            "3",
            "-n",
            "3",
            "--hide-histogram",
        ],
    )
    .ok();
    assert_eq!(calls(&server, "set"), 6);
    assert_eq!(server.cli(&["LLEN", "la"]), "6");
    assert_eq!(server.cli(&["LLEN", "lb"]), "6");
}

// ---------------------------------------------------------------------------------------
// SCAN cursor following

/// A server holding 200 keys (`scan:1` .. `scan:200`).
fn server_with_200_keys() -> RedisServer {
    let server = RedisServer::start();
    let mut args = vec!["MSET".to_string()];
    for i in 1..=200 {
        args.push(format!("scan:{i}"));
        args.push("v".to_string());
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    assert_eq!(server.cli(&args), "OK");
    assert_eq!(server.dbsize(), 200);
    server
}

/// The cursor the server answers to `SCAN cursor COUNT 10`.
fn next_cursor(server: &RedisServer, cursor: &str) -> String {
    let reply = server.cli(&["SCAN", cursor, "COUNT", "10"]);
    reply.lines().next().unwrap_or_default().to_string()
}

/// Check a monitored sequence of SCAN cursors against the server: each continuation
/// sends the cursor the previous reply returned, and a cycle restarts at 0 only when the
/// previous reply said 0 or after `max_continuations`. Returns the number of cycles.
fn check_scan_sequence(
    server: &RedisServer,
    scans: &[Vec<String>],
    max_continuations: Option<usize>,
) -> usize {
    for scan in scans {
        assert_eq!(scan[2..], ["COUNT", "10"], "sent {scan:?}");
    }
    let cursors: Vec<&str> = scans.iter().map(|s| s[1].as_str()).collect();
    assert_eq!(
        cursors.first(),
        Some(&"0"),
        "the first SCAN starts at 0: {cursors:?}"
    );
    let mut continuations = 0;
    for pair in cursors.windows(2) {
        let expected = next_cursor(server, pair[0]);
        let limit_hit = max_continuations.is_some_and(|m| continuations == m);
        if expected == "0" || limit_hit {
            assert_eq!(
                pair[1], "0",
                "cycle should restart after {}: {cursors:?}",
                pair[0]
            );
            continuations = 0;
        } else {
            assert_eq!(
                pair[1], expected,
                "after SCAN {} the server returned cursor {expected}: {cursors:?}",
                pair[0]
            );
            continuations += 1;
        }
    }
    cursors.iter().filter(|c| **c == "0").count()
}

/// `--scan-incremental-iteration` follows the cursor: the server sees `SCAN <cursor>`
/// continuations carrying the cursors it returned, and the JSON splits them into
/// `Scan 0s` and `Scan <cursor>s` rows.
#[test]
fn scan_incremental_iteration_follows_the_cursor() {
    let server = server_with_200_keys();
    let dir = TestDir::new("scan");
    let json_path = dir.file("run.json");
    let json_arg = format!("--json-out-file={}", json_path.display());
    server.config_resetstat();
    let monitor = Monitor::start(&server);
    kvbench_at(
        server.port,
        &[
            "--scan-incremental-iteration",
            "--command=SCAN 0 COUNT 10",
            "--pipeline=1",
            "-t",
            "1",
            "-c",
            "1",
            "-n",
            "60",
            "--hide-histogram",
            &json_arg,
        ],
    )
    .ok();
    let scans = monitor.wait_for("SCAN", 60);
    assert_eq!(calls(&server, "scan"), 60);
    assert_eq!(scans.len(), 60, "{scans:?}");
    drop(monitor);
    let cycles = check_scan_sequence(&server, &scans, None);

    let json = read_json(&json_path);
    let first = count(&json, "Scan 0s");
    let next = count(&json, "Scan <cursor>s");
    assert_eq!(first as usize, cycles, "one Scan 0 per cycle");
    assert_eq!(first + next, 60);
    assert!(next > 0, "no continuation SCANs");
    // 200 keys at COUNT 10 take well over 5 calls per cycle.
    assert!(
        first <= 12,
        "{first} cycles in 60 SCANs: the cursor was not followed"
    );
}

/// `--scan-incremental-max-iterations=2`: each cycle is SCAN 0 plus at most two
/// continuations, so 60 requests make 20 cycles.
#[test]
fn scan_incremental_max_iterations_caps_each_cycle() {
    let server = server_with_200_keys();
    let dir = TestDir::new("scan-max");
    let json_path = dir.file("run.json");
    let json_arg = format!("--json-out-file={}", json_path.display());
    let monitor = Monitor::start(&server);
    kvbench_at(
        server.port,
        &[
            "--scan-incremental-iteration",
            "--scan-incremental-max-iterations=2",
            "--command=SCAN 0 COUNT 10",
            "--pipeline=1",
            "-t",
            "1",
            "-c",
            "1",
            "-n",
            "60",
            "--hide-histogram",
            &json_arg,
        ],
    )
    .ok();
    let scans = monitor.wait_for("SCAN", 60);
    drop(monitor);
    assert_eq!(check_scan_sequence(&server, &scans, Some(2)), 20);
    let json = read_json(&json_path);
    assert_eq!(count(&json, "Scan 0s"), 20);
    assert_eq!(count(&json, "Scan <cursor>s"), 40);
}

// ---------------------------------------------------------------------------------------
// RESP3

/// With `-P resp3` each connection sends HELLO 3 and HGETALL answers are RESP3 maps,
/// decoded whole: every reply byte is accounted for, nothing is an error.
#[test]
fn resp3_decodes_hgetall_maps() {
    let server = RedisServer::start();
    // 50 hashes of two 32-byte fields.
    kvbench_at(
        server.port,
        &[
            "--command=hset __key__ f1 __data__ f2 __data__",
            "--command-key-pattern=S",
            "--key-minimum=1",
            "--key-maximum=50",
            "-t",
            "1",
            "-c",
            "1",
            "-n",
            "50",
            "--hide-histogram",
        ],
    )
    .ok();
    assert_eq!(server.dbsize(), 50);
    assert_eq!(server.cli(&["TYPE", "memtier-25"]), "hash");
    server.config_resetstat();

    let dir = TestDir::new("resp3");
    let json_path = dir.file("run.json");
    let json_arg = format!("--json-out-file={}", json_path.display());
    let out = kvbench_at(
        server.port,
        &[
            "-P",
            "resp3",
            "--command=hgetall __key__",
            "--command-key-pattern=S",
            "--key-minimum=1",
            "--key-maximum=50",
            "-t",
            "1",
            "-c",
            "2",
            "-n",
            "50",
            "--hide-histogram",
            &json_arg,
        ],
    )
    .ok();
    let err = stderr(&out);
    assert!(!err.to_lowercase().contains("error"), "{}", describe(&out));
    let stats = server.commandstats();
    assert_eq!(
        stats.get("hello"),
        Some(&2),
        "one HELLO per connection: {stats:?}"
    );
    assert_eq!(stats.get("hgetall"), Some(&100), "{stats:?}");

    let json = read_json(&json_path);
    assert_eq!(count(&json, "Hgetalls"), 100);
    // A map of 2 fields: %2, $2 f1, $32 <data>, $2 f2, $32 <data> = 98 bytes.
    let series = json["ALL STATS"]["Hgetalls"]["Time-Serie"]
        .as_object()
        .expect("Time-Serie");
    let rx: u64 = series
        .values()
        .map(|s| s["Bytes RX"].as_u64().unwrap())
        .sum();
    assert_eq!(rx, 100 * 98, "bytes received for 100 HGETALL maps");

    // The debug log names the reply type it decoded.
    let out = kvbench_at(
        server.port,
        &[
            "-P",
            "resp3",
            "--command=hgetall __key__",
            "--command-key-pattern=S",
            "--key-minimum=1",
            "--key-maximum=50",
            "-t",
            "1",
            "-c",
            "1",
            "-n",
            "2",
            "--hide-histogram",
            "-D",
            "-D",
        ],
    )
    .ok();
    assert!(stderr(&out).contains("(Map)"), "{}", describe(&out));
}

/// The major version of the `redis-server` on PATH.
fn redis_major_version() -> u32 {
    let out = std::process::Command::new("redis-server")
        .arg("--version")
        .output()
        .expect("redis-server --version");
    let text = String::from_utf8_lossy(&out.stdout);
    text.split_whitespace()
        .find_map(|w| w.strip_prefix("v="))
        .and_then(|v| v.split('.').next())
        .and_then(|m| m.parse().ok())
        .unwrap_or_else(|| panic!("no version in {text:?}"))
}

/// Send `request` (inline commands) followed by `PING` on `stream`; return the bytes
/// that came before the `+PONG`.
fn reply_before_pong(stream: &mut TcpStream, request: &str) -> Vec<u8> {
    stream
        .write_all(format!("{request}\r\nPING\r\n").as_bytes())
        .expect("send");
    let mut data = Vec::new();
    let mut buf = [0u8; 4096];
    while !data.ends_with(b"+PONG\r\n") {
        let n = stream.read(&mut buf).expect("read reply");
        assert!(n > 0, "server closed after {request:?}");
        data.extend_from_slice(&buf[..n]);
    }
    data.truncate(data.len() - b"+PONG\r\n".len());
    data
}

/// Every RESP3 reply type Redis can produce (`DEBUG PROTOCOL <type>`: bulk, integer,
/// double, big number, null, array, set, map, attribute, push, verbatim, booleans) is
/// decoded whole: the run succeeds and kvbench received exactly the reply's bytes per
/// request, no more and no less.
#[test]
fn resp3_decodes_every_reply_type() {
    if redis_major_version() < 7 {
        eprintln!("skipped: --enable-debug-command needs redis-server 7 or newer");
        return;
    }
    let server = RedisServer::start_with(&["--enable-debug-command", "yes"]);
    let addr: SocketAddr = ([127, 0, 0, 1], server.port).into();
    let mut raw = TcpStream::connect_timeout(&addr, Duration::from_secs(2)).unwrap();
    raw.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    reply_before_pong(&mut raw, "HELLO 3");
    let dir = TestDir::new("resp3-types");
    let json_path = dir.file("run.json");
    let json_arg = format!("--json-out-file={}", json_path.display());
    for ty in [
        "string", "integer", "double", "bignum", "null", "array", "set", "map", "attrib", "push",
        "verbatim", "true", "false",
    ] {
        let reply = reply_before_pong(&mut raw, &format!("DEBUG PROTOCOL {ty}"));
        assert!(!reply.starts_with(b"-"), "DEBUG PROTOCOL {ty}: {reply:?}");
        server.config_resetstat();
        let command = format!("--command=DEBUG PROTOCOL {ty}");
        let out = kvbench_at(server.port, &["--hide-histogram"])
            .args(&[
                "-P",
                "resp3",
                &command,
                "-t",
                "1",
                "-c",
                "1",
                "-n",
                "5",
                "--pipeline=2",
                "--hide-histogram",
                &json_arg,
            ])
            .ok();
        assert!(
            !stderr(&out).to_lowercase().contains("error"),
            "{ty}: {}",
            describe(&out)
        );
        assert_eq!(calls(&server, "debug"), 5, "{ty}");
        let json = read_json(&json_path);
        assert_eq!(count(&json, "Debugs"), 5, "{ty}");
        let rx: u64 = json["ALL STATS"]["Debugs"]["Time-Serie"]
            .as_object()
            .expect("Time-Serie")
            .values()
            .map(|s| s["Bytes RX"].as_u64().unwrap())
            .sum();
        // `push` answers with an out-of-band push frame, then the reply proper (a bulk
        // string). The frame answers no request, so kvbench may leave its bytes out of
        // the command's row; either way every byte of the reply itself is there.
        let mut allowed = vec![5 * reply.len() as u64];
        if ty == "push" {
            let bulk_start = reply
                .windows(3)
                .rposition(|w| w == b"\r\n$")
                .expect("push is followed by a bulk reply")
                + 2;
            allowed.push(5 * (reply.len() - bulk_start) as u64);
        }
        assert!(
            allowed.contains(&rx),
            "{ty}: received {rx} bytes, expected one of {allowed:?} for 5 replies of {:?}",
            String::from_utf8_lossy(&reply)
        );
    }
}

/// Client-side caching invalidations are RESP3 pushes the server sends unasked, between
/// replies; pipelined connections must skip them and keep every reply matched to its
/// request.
#[test]
fn resp3_tracking_pushes_between_pipelined_replies() {
    let server = RedisServer::start();
    server.config_resetstat();
    kvbench_at(
        server.port,
        &[
            "-P",
            "resp3",
            "--command=client tracking on",
            "--command=get __key__",
            "--command=set __key__ __data__",
            "--key-minimum=1",
            "--key-maximum=3",
            "-t",
            "1",
            "-c",
            "3",
            "-n",
            "900",
            "--pipeline=16",
            "--hide-histogram",
        ],
    )
    .ok();
    let stats = server.commandstats();
    assert_eq!(stats.get("client|tracking"), Some(&900), "{stats:?}");
    assert_eq!(stats.get("get"), Some(&900), "{stats:?}");
    assert_eq!(stats.get("set"), Some(&900), "{stats:?}");
}

// ---------------------------------------------------------------------------------------
// Authentication

/// An ACL user made by the test logs in with `-a user:password` and with a `-u` URI
/// (which also selects database 2); a wrong password is one clear error line.
#[test]
fn acl_user_authenticates_and_wrong_password_fails_cleanly() {
    // The default user needs another password, so only `bench` can get in.
    let server = RedisServer::start_with(&["--requirepass", "adminpw"]);
    assert_eq!(
        server.cli(&["ACL", "SETUSER", "bench", "on", ">pw", "~*", "+@all"]),
        "OK"
    );
    let fill = [
        "--ratio=1:0",
        "--key-pattern=S:S",
        "-n",
        "allkeys",
        "--key-minimum=1",
        "--key-maximum=40",
        "-t",
        "1",
        "-c",
        "2",
        "--hide-histogram",
    ];

    let mut args = vec!["-a", "bench:pw"];
    args.extend(fill);
    kvbench_at(server.port, &args).ok();
    assert_eq!(server.dbsize(), 40);
    assert_eq!(server.cli(&["-n", "2", "DBSIZE"]), "0");

    let mut args = vec!["-a", "bench:badsecret42"];
    args.extend(fill);
    let out = kvbench_at(server.port, &args).run();
    assert!(!out.status.success(), "{}", describe(&out));
    assert_eq!(out.status.code(), Some(1), "{}", describe(&out));
    let err = stderr(&out);
    let error_lines: Vec<&str> = err
        .split(['\n', '\r'])
        .filter(|l| l.to_lowercase().contains("error"))
        .collect();
    assert_eq!(error_lines.len(), 1, "one error line expected:\n{err}");
    assert!(
        error_lines[0].contains("authentication"),
        "{:?} does not say authentication failed",
        error_lines[0]
    );
    assert!(!err.contains("badsecret42"), "password leaked: {err}");

    server.flushall();
    let uri = format!("redis://bench:pw@127.0.0.1:{}/2", server.port);
    let mut args = vec!["-u", uri.as_str()];
    args.extend(fill);
    let out = kvbench(&args).run();
    assert!(out.status.success(), "{}", describe(&out));
    assert_eq!(server.cli(&["-n", "2", "DBSIZE"]), "40", "keys go to db 2");
    assert_eq!(server.dbsize(), 0, "nothing in db 0");
}

/// Not in `--show-config`, the JSON, stdout, stderr, nor an error message: the password
/// is never printed, given with `-a` or inside a `-u` URI, right or wrong.
#[test]
fn credentials_never_leak() {
    const SECRET: &str = "secretpw";
    let server = RedisServer::start_with(&["--requirepass", SECRET]);
    let dir = TestDir::new("no-leak");
    let json_path = dir.file("run.json");
    let json_arg = format!("--json-out-file={}", json_path.display());
    let port = server.port.to_string();
    let run = ["-t", "1", "-c", "1", "-n", "10", "--hide-histogram"];

    let check = |what: &str, out: &Output, json: Option<&std::path::Path>| {
        for (stream, text) in [("stdout", stdout(out)), ("stderr", stderr(out))] {
            assert!(
                !text.contains(SECRET),
                "{what}: password in {stream}:\n{text}"
            );
        }
        if let Some(path) = json {
            let text = std::fs::read_to_string(path).expect("JSON written");
            assert!(
                !text.contains(SECRET),
                "{what}: password in the JSON:\n{text}"
            );
        }
    };

    // Right password with -a: shown masked.
    let mut args = vec![
        "-s",
        "127.0.0.1",
        "-p",
        &port,
        "-a",
        SECRET,
        "--show-config",
        &json_arg,
    ];
    args.extend(run);
    let out = kvbench(&args).run();
    assert!(out.status.success(), "{}", describe(&out));
    assert!(
        stdout(&out).contains("authenticate"),
        "no config shown:\n{}",
        describe(&out)
    );
    check("-a", &out, Some(&json_path));
    assert!(read_json(&json_path)["configuration"]["authenticate"].is_string());
    std::fs::remove_file(&json_path).unwrap();

    // Right password in a URI.
    let uri = format!("redis://default:{SECRET}@127.0.0.1:{port}");
    let mut args = vec!["-u", uri.as_str(), "--show-config", &json_arg];
    args.extend(run);
    let out = kvbench(&args).run();
    assert!(out.status.success(), "{}", describe(&out));
    assert!(
        stdout(&out).contains(&format!("127.0.0.1:{port}")),
        "{}",
        describe(&out)
    );
    check("-u", &out, Some(&json_path));
    std::fs::remove_file(&json_path).unwrap();

    // Debug output shows requests as sent, but not the AUTH (nor HELLO ... AUTH).
    for protocol in ["redis", "resp3"] {
        let creds = format!("default:{SECRET}");
        let mut args = vec![
            "-s",
            "127.0.0.1",
            "-p",
            &port,
            "-P",
            protocol,
            "-a",
            &creds,
            "-D",
            "-D",
        ];
        args.extend(run);
        let out = kvbench(&args).run();
        assert!(out.status.success(), "{}", describe(&out));
        assert!(
            stderr(&out).contains("request"),
            "no debug output: {}",
            describe(&out)
        );
        check(&format!("-D -D -P {protocol}"), &out, None);
    }

    // Wrong passwords that contain the right one: an echo of either would show.
    let wrong = format!("{SECRET}WRONG");
    let mut args = vec![
        "-s",
        "127.0.0.1",
        "-p",
        &port,
        "-a",
        &wrong,
        "--show-config",
    ];
    args.extend(run);
    let out = kvbench(&args).run();
    assert!(!out.status.success(), "{}", describe(&out));
    assert!(
        stderr(&out).contains("authentication"),
        "{}",
        describe(&out)
    );
    check("wrong -a", &out, None);

    let uri = format!("redis://default:{wrong}@127.0.0.1:{port}/0");
    let mut args = vec!["-u", uri.as_str(), "--show-config"];
    args.extend(run);
    let out = kvbench(&args).run();
    assert!(!out.status.success(), "{}", describe(&out));
    check("wrong -u", &out, None);

    // A URI refused before connecting.
    for bad in [
        format!("redis://default:{SECRET}@127.0.0.1:notaport"),
        format!("redis://default:{SECRET}@127.0.0.1:{port}/notadb"),
        format!("nosuch://default:{SECRET}@127.0.0.1:{port}"),
    ] {
        let out = kvbench(&["-u", &bad, "-n", "1"]).run();
        assert_eq!(out.status.code(), Some(1), "{bad}: {}", describe(&out));
        check(&bad, &out, None);
    }

    // SASL over memcache_binary against a memcached without SASL: an error, no password.
    let mc = Memcached::start();
    let mc_port = mc.port.to_string();
    let creds = format!("bench:{SECRET}");
    let out = kvbench(&[
        "-P",
        "memcache_binary",
        "-s",
        "127.0.0.1",
        "-p",
        &mc_port,
        "-a",
        &creds,
        "-t",
        "1",
        "-c",
        "1",
        "-n",
        "5",
        "--show-config",
    ])
    .run();
    assert!(!out.status.success(), "{}", describe(&out));
    check("memcache_binary -a", &out, None);
}

/// memtier's checks of the SET/GET flags beside `--command`, in its words: refused before
/// any connection, nothing sent.
#[test]
fn set_get_flags_beside_a_command_are_refused_as_memtier_does() {
    let server = RedisServer::start();
    server.config_resetstat();
    for (extra, words) in [
        (
            &["--key-pattern=S:S"][..],
            "key pattern is configured with --command-key-pattern option",
        ),
        (
            &["--ratio=1:1"][..],
            "ratio is configured with --command-ratio option",
        ),
        (
            &["--command-key-pattern=P", "--command=get __key__"][..],
            "parallel key-pattern must be configured to all commands",
        ),
    ] {
        let mut args = vec!["--command=set __key__ v", "-n", "5", "--hide-histogram"];
        args.extend_from_slice(extra);
        let run = kvbench_at(server.port, &args).run();
        assert_eq!(run.status.code(), Some(1), "{extra:?}: {}", run.describe());
        let stderr = run.stderr_text();
        assert!(
            stderr.contains(words) && stderr.lines().count() == 1,
            "{extra:?}: {stderr}"
        );
    }
    assert_eq!(calls(&server, "set"), 0);
    assert_eq!(calls(&server, "get"), 0);
}
