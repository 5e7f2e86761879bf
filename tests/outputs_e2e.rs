//! Outputs of a real run end to end, against a real redis-server each test starts:
//! `--client-stats` per-client CSV files (their counts add up to what the server ran),
//! the live progress line on stderr (memtier's counts, its end and blank line),
//! StatsD gauges and Graphite events received by sockets the test binds, `-D -D` debug
//! lines, HDR files for every run of `-x 2`, and output files that cannot be written
//! (refused before the run).

mod common;

use std::io::{ErrorKind, Read, Write};
use std::net::{TcpListener, UdpSocket};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use common::{RedisServer, TestDir, kvbench_at, read_json};

/// SET plus GET calls the server ran (`INFO commandstats`).
fn server_set_get(server: &RedisServer) -> u64 {
    let stats = server.commandstats();
    stats.get("set").copied().unwrap_or(0) + stats.get("get").copied().unwrap_or(0)
}

// ---------------------------------------------------------------------------------------
// --client-stats

/// memtier's per-second header line.
const CLIENT_STATS_HEADER: &str = "Second,SET Requests,SET Average Latency,SET Total Bytes,\
SET Total Bytes TX,SET Total Bytes RX,GET Requests,GET Average Latency,GET Total Bytes,\
GET Total Bytes TX,GET Total Bytes RX,GET Misses,GET Hits,WAIT Requests,WAIT Average Latency";

/// Check the client-stats files of run 1 under `dir` (prefix `cs`): exactly one per
/// thread and client, each opening with the banner and header, rows numbered from second
/// 0. Returns the SET + GET requests of all rows of all files, and the rows per file.
fn client_stats_requests(dir: &TestDir, threads: usize, clients: usize) -> (u64, Vec<usize>) {
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("cs-"))
        .collect();
    names.sort();
    let mut expected: Vec<String> = (0..threads)
        .flat_map(|t| (0..clients).map(move |c| format!("cs-1-{t}-{c}.csv")))
        .collect();
    expected.sort();
    assert_eq!(names, expected, "one file per client");

    let columns: Vec<&str> = CLIENT_STATS_HEADER.split(',').collect();
    let set_col = columns.iter().position(|c| *c == "SET Requests").unwrap();
    let get_col = columns.iter().position(|c| *c == "GET Requests").unwrap();
    let mut total = 0;
    let mut rows_per_file = Vec::new();
    for name in &names {
        let text = std::fs::read_to_string(dir.file(name)).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines.first(),
            Some(&"Per-Second Benchmark Data"),
            "{name}:\n{text}"
        );
        assert_eq!(lines.get(1), Some(&CLIENT_STATS_HEADER), "{name}:\n{text}");
        let rows: Vec<&str> = lines[2..]
            .iter()
            .take_while(|l| !l.trim().is_empty())
            .copied()
            .collect();
        assert!(!rows.is_empty(), "{name} has no per-second rows:\n{text}");
        for (second, row) in rows.iter().enumerate() {
            let cells: Vec<&str> = row.split(',').collect();
            assert_eq!(cells.len(), columns.len(), "{name}: {row:?}");
            assert_eq!(
                cells[0],
                second.to_string(),
                "{name}: rows go second by second"
            );
            let n = |i: usize| -> u64 {
                cells[i]
                    .parse()
                    .unwrap_or_else(|_| panic!("{name}: {:?} in {row:?}", columns[i]))
            };
            total += n(set_col) + n(get_col);
        }
        rows_per_file.push(rows.len());
        for block in ["GET", "SET", "WAIT"] {
            assert!(
                text.contains(&format!(
                    "Full-Test {block} Latency\nLatency (<= msec),Percent\n"
                )),
                "{name}: no {block} latency block"
            );
        }
    }
    (total, rows_per_file)
}

/// `-t 2 -c 2 --test-time=2`: four files whose rows add up to what the JSON counted,
/// and to what the server ran less at most the one request per connection still in
/// flight at the deadline (documented: those replies are not counted).
#[test]
fn client_stats_files_add_up_to_the_server_counts_timed() {
    let server = RedisServer::start();
    server.config_resetstat();
    let dir = TestDir::new("client-stats-timed");
    let prefix = format!("--client-stats={}", dir.file_arg("cs"));
    let json_arg = format!("--json-out-file={}", dir.file_arg("run.json"));
    kvbench_at(server.port, &["--hide-histogram"])
        .args(&[
            "-t",
            "2",
            "-c",
            "2",
            "--test-time=2",
            "--ratio=1:4",
            &prefix,
            &json_arg,
        ])
        .ok();
    let server_total = server_set_get(&server);
    let (total, rows) = client_stats_requests(&dir, 2, 2);
    for n in &rows {
        assert!((2..=3).contains(n), "2 s run, rows per file: {rows:?}");
    }
    let json = read_json(&dir.file("run.json"));
    let counted = json["ALL STATS"]["Totals"]["Count"].as_u64().unwrap();
    assert_eq!(total, counted, "client files vs JSON Totals");
    assert!(total > 100, "hardly any requests: {total}");
    let in_flight = 4; // 4 connections × --pipeline=1
    assert!(
        total <= server_total && server_total - total <= in_flight,
        "client stats sum {total}, server ran {server_total} SET+GET \
         (at most {in_flight} may be in flight at the deadline)"
    );
}

/// With `-n` nothing is left in flight: the files add up to the server's count exactly.
#[test]
fn client_stats_files_add_up_to_the_server_counts_exactly_with_n() {
    let server = RedisServer::start();
    server.config_resetstat();
    let dir = TestDir::new("client-stats-n");
    let prefix = format!("--client-stats={}", dir.file_arg("cs"));
    kvbench_at(server.port, &["--hide-histogram"])
        .args(&["-t", "2", "-c", "2", "-n", "500", "--ratio=1:1", &prefix])
        .ok();
    let (total, _) = client_stats_requests(&dir, 2, 2);
    assert_eq!(server_set_get(&server), 2000);
    assert_eq!(total, 2000, "client stats sum");
}

/// With arbitrary commands the files take memtier's arbitrary-command layout: a column
/// group per command (`GET Requests`, ... with a comma after every field) and a
/// `Full-Test <CMD> Latency` block each; the columns add up to what the server ran (30
/// GETs, 10 SETs, 10 PINGs). They held only a header before.
#[test]
fn client_stats_files_of_arbitrary_commands_count_each_command() {
    let server = RedisServer::start();
    server.config_resetstat();
    let dir = TestDir::new("client-stats-arbitrary");
    let prefix = format!("--client-stats={}", dir.file_arg("cs"));
    kvbench_at(server.port, &["--hide-histogram"])
        .args(&[
            "--command=get __key__",
            "--command-ratio=3",
            "--command=set __key__ __data__",
            "--command=ping",
            "-t",
            "1",
            "-c",
            "1",
            "-n",
            "50",
            &prefix,
        ])
        .ok();
    let stats = server.commandstats();
    assert_eq!(
        (stats["get"], stats["set"], stats["ping"]),
        (30, 10, 10),
        "{stats:?}"
    );
    let text = std::fs::read_to_string(dir.file("cs-1-0-0.csv")).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("Per-Second Benchmark Arbitrary Commands Data")
    );
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(header.first(), Some(&"Second"));
    assert_eq!(
        header.last(),
        Some(&""),
        "a comma after every field, as memtier's"
    );
    let mut totals = std::collections::HashMap::new();
    for row in lines.take_while(|l| !l.trim().is_empty()) {
        let cells: Vec<&str> = row.split(',').collect();
        assert_eq!(cells.len(), header.len(), "{row}");
        for (name, cell) in header.iter().zip(&cells) {
            if let Some(command) = name.strip_suffix(" Requests") {
                *totals.entry(command.to_string()).or_insert(0) += cell.parse::<u64>().unwrap();
            }
        }
    }
    assert_eq!(totals.get("GET"), Some(&30), "{totals:?}\n{text}");
    assert_eq!(totals.get("SET"), Some(&10), "{totals:?}\n{text}");
    assert_eq!(totals.get("PING"), Some(&10), "{totals:?}\n{text}");
    for command in ["GET", "SET", "PING"] {
        let block = text
            .split(&format!(
                "\nFull-Test {command} Latency\nLatency (<= msec),Percent\n"
            ))
            .nth(1)
            .unwrap_or_else(|| panic!("no {command} block in {text}"));
        assert!(
            block.lines().next().is_some_and(|l| l.contains(',')),
            "{command}: an empty block in {text}"
        );
    }
}

/// The client-stats notice comes after the progress line's end (its `\r\n\n`), as
/// memtier prints it, not over the line.
#[test]
fn the_client_stats_notice_follows_the_progress_line() {
    let server = RedisServer::start();
    let dir = TestDir::new("client-stats-notice");
    let prefix = format!("--client-stats={}", dir.file_arg("cs"));
    let run = kvbench_at(server.port, &["--hide-histogram", "-t", "1", "-c", "1"])
        .args(&["-n", "50", &prefix])
        .ok();
    let stderr = run.stderr_text();
    assert!(
        stderr.contains(" msec latency\r\n\n[RUN 1] Writing client stats files...\n"),
        "{stderr:?}"
    );
}

// ---------------------------------------------------------------------------------------
// The live progress line

/// The progress updates of run `run` in `stderr`: the `\r`-ended lines after its
/// `Launching threads now...`, up to the `\r\n\n` that ends them.
fn progress_updates(stderr: &str, run: u32) -> Vec<&str> {
    let launched = format!("[RUN #{run}] Launching threads now...\n");
    let from = stderr
        .find(&launched)
        .unwrap_or_else(|| panic!("no {launched:?} in {stderr:?}"))
        + launched.len();
    let len = stderr[from..]
        .find("\r\n\n")
        .unwrap_or_else(|| panic!("run {run}'s progress does not end in \\r\\n\\n: {stderr:?}"));
    let updates: Vec<&str> = stderr[from..from + len].split('\r').collect();
    for update in &updates {
        assert!(
            update.starts_with(&format!("[RUN #{run} ")) && update.ends_with(" msec latency"),
            "{update:?} in {stderr:?}"
        );
    }
    updates
}

/// The progress line as memtier writes it (reference `timed.stderr`, `default.stderr`):
/// `conns` is the clients of one thread (`-c`), the last update of each run says
/// `0 threads` (they are done; a timed run's last second is reported once they are), and
/// `\r\n\n` ends it (a blank line under it), before the next run starts.
#[test]
fn progress_line_counts_as_memtier_and_ends_with_a_blank_line() {
    let server = RedisServer::start();
    let timed = kvbench_at(server.port, &["--hide-histogram", "-t", "2", "-c", "3"])
        .args(&["--test-time=2"])
        .ok();
    let stderr = timed.stderr_text();
    let updates = progress_updates(&stderr, 1);
    let last = updates.last().unwrap();
    assert!(
        last.starts_with("[RUN #1 100%,") && last.contains("]  0 threads  3 conns: "),
        "{last:?}"
    );
    // Both threads run until the deadline; the seconds reported once they stopped (the
    // last timed one, and a tail with replies that came as they stopped) say 0.
    let running: Vec<bool> = updates
        .iter()
        .map(|u| {
            assert!(
                u.contains("]  2 threads  3 conns: ") || u.contains("]  0 threads  3 conns: "),
                "{u:?}"
            );
            u.contains("]  2 threads ")
        })
        .collect();
    assert!(
        running.windows(2).all(|w| w[0] || !w[1]),
        "threads came back: {updates:?}"
    );

    let counted = kvbench_at(server.port, &["--hide-histogram", "-t", "2", "-c", "3"])
        .args(&["-n", "200", "-x", "2"])
        .ok();
    let stderr = counted.stderr_text();
    for run in [1, 2] {
        let updates = progress_updates(&stderr, run);
        let last = updates.last().unwrap();
        assert!(
            last.starts_with(&format!("[RUN #{run} 100%,"))
                && last.contains("]  0 threads  3 conns:        1200 ops,"),
            "{last:?}"
        );
    }
    assert!(
        stderr.contains(" msec latency\r\n\n[RUN #2] Preparing benchmark client...\n"),
        "{stderr:?}"
    );
}

// ---------------------------------------------------------------------------------------
// StatsD and Graphite

/// A UDP socket and a TCP listener the test owns, recording what kvbench sends them
/// until [`Sinks::finish`].
struct Sinks {
    udp_port: u16,
    http_port: u16,
    stop: Arc<AtomicBool>,
    udp: Option<JoinHandle<Vec<String>>>,
    http: Option<JoinHandle<Vec<String>>>,
}

impl Sinks {
    fn start() -> Sinks {
        let stop = Arc::new(AtomicBool::new(false));
        let udp = UdpSocket::bind("127.0.0.1:0").expect("bind UDP");
        udp.set_read_timeout(Some(Duration::from_millis(50)))
            .unwrap();
        let udp_port = udp.local_addr().unwrap().port();
        let flag = Arc::clone(&stop);
        let udp = thread::spawn(move || {
            let mut datagrams = Vec::new();
            let mut buf = [0u8; 65536];
            // Once told to stop, it still takes what is queued: a read that times out
            // finds the socket empty.
            loop {
                match udp.recv(&mut buf) {
                    Ok(n) => datagrams.push(String::from_utf8_lossy(&buf[..n]).into_owned()),
                    Err(_) if flag.load(Ordering::Relaxed) => break,
                    Err(_) => {}
                }
            }
            datagrams
        });

        let listener = TcpListener::bind("127.0.0.1:0").expect("bind TCP");
        listener.set_nonblocking(true).unwrap();
        let http_port = listener.local_addr().unwrap().port();
        let flag = Arc::clone(&stop);
        let http = thread::spawn(move || {
            let mut requests = Vec::new();
            loop {
                let stopping = flag.load(Ordering::Relaxed);
                match listener.accept() {
                    Ok((mut conn, _)) => {
                        conn.set_nonblocking(false).unwrap();
                        conn.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
                        let request = read_http_request(&mut conn);
                        let _ = conn.write_all(
                            b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                        );
                        requests.push(request);
                    }
                    // Once told to stop, connections already queued are still taken.
                    Err(e) if e.kind() == ErrorKind::WouldBlock && !stopping => {
                        thread::sleep(Duration::from_millis(10))
                    }
                    Err(_) => break,
                }
            }
            requests
        });
        Sinks {
            udp_port,
            http_port,
            stop,
            udp: Some(udp),
            http: Some(http),
        }
    }

    /// Stop listening once what kvbench sent before it exited is taken; the datagrams
    /// and HTTP requests.
    fn finish(mut self) -> (Vec<String>, Vec<String>) {
        self.stop.store(true, Ordering::Relaxed);
        let udp = self.udp.take().unwrap().join().unwrap();
        let http = self.http.take().unwrap().join().unwrap();
        (udp, http)
    }
}

impl Drop for Sinks {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// Read one HTTP request: the head, then `Content-Length` bytes of body.
fn read_http_request(conn: &mut std::net::TcpStream) -> String {
    let mut data = Vec::new();
    let mut buf = [0u8; 4096];
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        if let Some(end) = data.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&data[..end]).to_lowercase();
            let length: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0);
            if data.len() >= end + 4 + length {
                break;
            }
        }
        if Instant::now() > deadline {
            break;
        }
        match conn.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => data.extend_from_slice(&buf[..n]),
        }
    }
    String::from_utf8_lossy(&data).into_owned()
}

/// The body of each request that POSTs to `/events/`, parsed as JSON.
fn graphite_events(requests: &[String]) -> Vec<serde_json::Value> {
    requests
        .iter()
        .filter(|r| r.starts_with("POST /events/ "))
        .map(|r| {
            let body = r.split_once("\r\n\r\n").map(|(_, b)| b).unwrap_or("");
            serde_json::from_str(body).unwrap_or_else(|e| panic!("event body {body:?}: {e}"))
        })
        .collect()
}

/// Values of every `NAME:<value>|g` line across the datagrams (one datagram may carry
/// several lines).
fn gauge_values(datagrams: &[String], name: &str) -> Vec<f64> {
    let prefix = format!("{name}:");
    datagrams
        .iter()
        .flat_map(|d| d.lines())
        .filter_map(|l| l.strip_prefix(prefix.as_str()))
        .map(|v| {
            let value = v
                .strip_suffix("|g")
                .unwrap_or_else(|| panic!("{name} is not a gauge: {v:?}"));
            value
                .parse()
                .unwrap_or_else(|_| panic!("{name} value {value:?}"))
        })
        .collect()
}

/// During a 2 s run StatsD gauges arrive once a second under `memtier.default.`, and
/// Graphite gets a `POST /events/` for the start and the end of the run.
#[test]
fn statsd_gauges_and_graphite_events_reach_the_test_sockets() {
    let server = RedisServer::start();
    let sinks = Sinks::start();
    let udp_port = sinks.udp_port.to_string();
    let http_port = sinks.http_port.to_string();
    kvbench_at(server.port, &["--hide-histogram"])
        .args(&[
            "-t",
            "1",
            "-c",
            "2",
            "--test-time=2",
            "--statsd-host=127.0.0.1",
            "--statsd-port",
            &udp_port,
            "--graphite-port",
            &http_port,
        ])
        .ok();
    let (datagrams, requests) = sinks.finish();

    let ops = gauge_values(&datagrams, "memtier.default.ops_sec");
    assert!(
        ops.len() >= 2,
        "one ops_sec a second expected: {datagrams:#?}"
    );
    assert!(ops.iter().any(|v| *v > 0.0), "no ops_sec above 0: {ops:?}");
    for line in datagrams.iter().flat_map(|d| d.lines()) {
        assert!(
            line.starts_with("memtier.default."),
            "metric outside the prefix: {line:?}"
        );
        assert!(
            line.ends_with("|g") || line.ends_with("|ms") || line.ends_with("|c"),
            "not a StatsD line: {line:?}"
        );
    }
    let progress = gauge_values(&datagrams, "memtier.default.progress_pct");
    assert!(
        progress.iter().any(|p| (99.0..=100.0).contains(p)),
        "progress never reached 100%: {progress:?}"
    );

    let events = graphite_events(&requests);
    let whats: Vec<&str> = events.iter().filter_map(|e| e["what"].as_str()).collect();
    assert!(
        whats.contains(&"Benchmark Started"),
        "no start event: {requests:#?}"
    );
    assert!(
        whats.contains(&"Benchmark Completed"),
        "no end event: {requests:#?}"
    );
    assert_eq!(
        whats.iter().position(|w| *w == "Benchmark Started"),
        Some(0),
        "the start event comes first: {whats:?}"
    );
}

/// A StatsD host that does not resolve fails before anything is sent, not after the
/// whole run (which used to run to its end and then report it, with no metrics sent).
#[test]
fn an_unresolvable_statsd_host_fails_before_the_run() {
    let server = RedisServer::start();
    let started = Instant::now();
    let out = kvbench_at(server.port, &["--hide-histogram", "--test-time=30"])
        .args(&["--statsd-host=no-such-host.invalid"])
        .run();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("cannot resolve StatsD host 'no-such-host.invalid'"),
        "{stderr}"
    );
    assert!(started.elapsed() < Duration::from_secs(20), "ran first");
    let stats = server.commandstats();
    assert!(
        !stats.contains_key("set") && !stats.contains_key("get"),
        "the run sent requests: {stats:?}"
    );
}

/// `--statsd-prefix` and `--statsd-run-label` name the metrics and tag the events.
#[test]
fn statsd_prefix_and_run_label_name_the_metrics() {
    let server = RedisServer::start();
    let sinks = Sinks::start();
    let udp_port = sinks.udp_port.to_string();
    let http_port = sinks.http_port.to_string();
    kvbench_at(server.port, &["--hide-histogram"])
        .args(&[
            "-t",
            "1",
            "-c",
            "1",
            "--test-time=1",
            "--statsd-host=127.0.0.1",
            "--statsd-port",
            &udp_port,
            "--graphite-port",
            &http_port,
            "--statsd-prefix=kvb",
            "--statsd-run-label=ci",
        ])
        .ok();
    let (datagrams, requests) = sinks.finish();
    assert!(
        !gauge_values(&datagrams, "kvb.ci.ops_sec").is_empty(),
        "{datagrams:#?}"
    );
    assert!(
        datagrams
            .iter()
            .flat_map(|d| d.lines())
            .all(|l| l.starts_with("kvb.ci.")),
        "{datagrams:#?}"
    );
    let events = graphite_events(&requests);
    assert!(
        events
            .iter()
            .any(|e| e["tags"].as_str().unwrap_or("").contains("ci")),
        "no event tagged with the run label: {requests:#?}"
    );
}

// ---------------------------------------------------------------------------------------
// -D

/// `-D -D` prints each request on stderr (the key the server got among them); `-D` alone
/// does not.
#[test]
fn debug_twice_prints_each_request() {
    let server = RedisServer::start();
    let out = kvbench_at(server.port, &["--hide-histogram"])
        .args(&[
            "-D",
            "-D",
            "-n",
            "2",
            "-c",
            "1",
            "-t",
            "1",
            "--ratio=1:1",
            "--key-prefix=dbgkey-",
        ])
        .ok();
    let keys = server.cli(&["KEYS", "dbgkey-*"]);
    let keys: Vec<&str> = keys.lines().collect();
    assert_eq!(keys.len(), 1, "one SET: {keys:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    let with_key: Vec<&str> = err.lines().filter(|l| l.contains(keys[0])).collect();
    assert!(
        with_key.iter().any(|l| l.contains("SET")),
        "the SET of {} is not in the debug output:\n{err}",
        keys[0]
    );
    let requests = err.lines().filter(|l| l.contains("dbgkey-")).count();
    assert!(
        requests >= 2,
        "both requests (SET and GET) expected:\n{err}"
    );

    server.flushall();
    let out = kvbench_at(server.port, &["--hide-histogram"])
        .args(&[
            "-D",
            "-n",
            "2",
            "-c",
            "1",
            "-t",
            "1",
            "--ratio=1:1",
            "--key-prefix=dbgkey-",
        ])
        .ok();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !err.contains("dbgkey-"),
        "a single -D prints no requests:\n{err}"
    );
    assert!(err.contains("127.0.0.1"), "-D shows the connection:\n{err}");

    let out = kvbench_at(server.port, &["--hide-histogram"])
        .args(&["-n", "2", "-c", "1", "-t", "1", "--key-prefix=dbgkey-"])
        .ok();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains(".rs:"), "no debug lines without -D:\n{err}");
}

// ---------------------------------------------------------------------------------------
// HDR files

/// `Total count` of a `.txt` percentile distribution's footer.
fn hdr_total_count(text: &str) -> u64 {
    let line = text
        .lines()
        .find(|l| l.starts_with("#[Max"))
        .unwrap_or_else(|| panic!("no #[Max footer:\n{text}"));
    line.split("Total count")
        .nth(1)
        .and_then(|r| {
            r.trim_start_matches([' ', '='])
                .trim_end_matches(']')
                .trim()
                .parse()
                .ok()
        })
        .unwrap_or_else(|| panic!("no Total count in {line:?}"))
}

/// `-x 2 --hdr-file-prefix=P`: full-run and per-command files for each of the two runs,
/// each counting that run's requests.
#[test]
fn hdr_files_for_each_run_of_x_2() {
    let server = RedisServer::start();
    let dir = TestDir::new("hdr-x2");
    let prefix = dir.file_arg("P");
    let prefix_arg = format!("--hdr-file-prefix={prefix}");
    kvbench_at(server.port, &["--hide-histogram"])
        .args(&["-x", "2", "-n", "100", "-c", "1", "-t", "1", &prefix_arg])
        .ok();
    for run in 1..=2 {
        for ext in ["txt", "hgrm"] {
            for stem in ["FULL_RUN", "SET_command_run", "GET_command_run"] {
                let path = dir.file(&format!("P_{stem}_{run}.{ext}"));
                assert!(path.exists(), "{} not written", path.display());
            }
        }
        let full = std::fs::read_to_string(dir.file(&format!("P_FULL_RUN_{run}.txt"))).unwrap();
        assert!(full.contains("Value   Percentile   TotalCount"), "{full}");
        assert_eq!(hdr_total_count(&full), 100, "run {run}");
        let set =
            std::fs::read_to_string(dir.file(&format!("P_SET_command_run_{run}.txt"))).unwrap();
        let get =
            std::fs::read_to_string(dir.file(&format!("P_GET_command_run_{run}.txt"))).unwrap();
        assert_eq!(
            hdr_total_count(&set) + hdr_total_count(&get),
            100,
            "run {run}"
        );

        let hgrm = std::fs::read_to_string(dir.file(&format!("P_FULL_RUN_{run}.hgrm"))).unwrap();
        assert!(
            hgrm.contains("#[Histogram log format version 1.2]"),
            "{hgrm}"
        );
        assert!(
            hgrm.contains("\"StartTimestamp\",\"EndTimestamp\",\"Interval_Max\",\"Interval_Compressed_Histogram\""),
            "{hgrm}"
        );
        let intervals = hgrm
            .lines()
            .filter(|l| !l.starts_with('#') && !l.starts_with('"') && !l.trim().is_empty())
            .count();
        assert!(intervals >= 1, "no interval line:\n{hgrm}");
    }
    assert!(!dir.file("P_FULL_RUN_3.txt").exists(), "only two runs");
    assert_eq!(server_set_get(&server), 200);
}

// ---------------------------------------------------------------------------------------
// Output files that cannot be written

/// Each output file or prefix in a directory that does not exist is a one-line error and
/// exit 1 before the run: the server ran nothing, and nothing was left behind.
#[test]
fn an_unwritable_output_fails_before_the_run() {
    let server = RedisServer::start();
    server.config_resetstat();
    let dir = TestDir::new("unwritable");
    let missing = dir.file_arg("no-such-dir/x");
    let cases = [
        (
            format!("--json-out-file={missing}.json"),
            format!("cannot write {missing}.json: "),
        ),
        (
            format!("--out-file={missing}.txt"),
            format!("cannot write {missing}.txt: "),
        ),
        (
            format!("--hdr-log={missing}.hlog"),
            format!("cannot write {missing}.hlog: "),
        ),
        (
            format!("--hdr-file-prefix={missing}"),
            format!("cannot write --hdr-file-prefix={missing} files: "),
        ),
        (
            format!("--client-stats={missing}"),
            format!("cannot write --client-stats={missing} files: "),
        ),
    ];
    for (flag, message) in cases {
        let run = kvbench_at(server.port, &["--hide-histogram", "-n", "1000", &flag]).run();
        assert_eq!(run.out.status.code(), Some(1), "{flag}: {}", run.describe());
        let stderr = run.stderr_text();
        let last = stderr.lines().last().unwrap_or_default();
        assert!(
            last.starts_with(&format!("error: {message}")),
            "{flag}: {stderr}"
        );
        assert_eq!(server_set_get(&server), 0, "{flag}: the run never started");
    }
    // A directory where the file should be is refused before the run too (the probe
    // beside it would pass; the rename over it would not), as is a name ending in `/`.
    let existing_dir = dir.file_arg("a-dir");
    std::fs::create_dir(&existing_dir).unwrap();
    for value in [
        existing_dir.clone(),
        format!("{}/", dir.file_arg("new.json")),
    ] {
        let flag = format!("--json-out-file={value}");
        let run = kvbench_at(server.port, &["--hide-histogram", "-n", "1000", &flag]).run();
        assert_eq!(run.out.status.code(), Some(1), "{flag}: {}", run.describe());
        let stderr = run.stderr_text();
        let expected = format!("error: cannot write {value}: is a directory");
        assert_eq!(
            stderr.lines().last(),
            Some(expected.as_str()),
            "{flag}: {stderr}"
        );
        assert_eq!(server_set_get(&server), 0, "{flag}: the run never started");
    }
    std::fs::remove_dir(&existing_dir).unwrap();
    // A writable one passes the check and leaves only the file itself behind.
    let json = format!("--json-out-file={}", dir.file_arg("ok.json"));
    let run = kvbench_at(server.port, &["--hide-histogram", "-n", "10", &json]).ok();
    // memtier's stderr order: the JSON file is named before the run, closed after it.
    let stderr = run.stderr_text();
    let at = |needle: &str| {
        stderr
            .find(needle)
            .unwrap_or_else(|| panic!("no {needle:?} in {stderr}"))
    };
    assert!(
        at("Json file ") < at("[RUN #1] Preparing benchmark client..."),
        "{stderr}"
    );
    assert!(
        at("[RUN #1] Launching threads now...") < at("Saving JSON output file: "),
        "{stderr}"
    );
    assert!(
        at("Saving JSON output file: ") < at("Json file closed."),
        "{stderr}"
    );
    let left: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, ["ok.json"], "no probe file left behind");
}
