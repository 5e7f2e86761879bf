//! The Prometheus endpoint over real sockets: scrapes while a thread feeds seconds, what
//! `promtool check metrics` thinks of the text, HTTP answers, slow and half-open clients,
//! the client cap, and a clean stop; and `--prometheus-port` on a real run against a real
//! redis-server, whose counts the scraped counters must agree with.

mod common;

use std::collections::BTreeMap;
use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use common::{CONDITION_TIMEOUT as DEADLINE, KVBENCH_TIMEOUT, RedisServer, kvbench_at, wait_until};
use hdrhistogram::Histogram;
use kvbench::error::Error;
use kvbench::frontend::common::prometheus::PrometheusArgs;
use kvbench::sinks::prometheus::server::{CLIENT_TIMEOUT, MAX_CLIENTS};
use kvbench::sinks::prometheus::{
    CommandSecond, PrometheusEndpoint, PrometheusMetrics, PrometheusSettings, RunInfo, SecondSample,
};

fn settings(extra: &[&str]) -> PrometheusSettings {
    let mut args = PrometheusArgs {
        prometheus_port: Some("0".into()),
        ..PrometheusArgs::default()
    };
    for arg in extra {
        args.prometheus_run_label.push((*arg).to_string());
    }
    args.settings().unwrap().unwrap()
}

fn histogram(values: impl IntoIterator<Item = u64>) -> Histogram<u64> {
    let mut h = kvbench::stats::new_histogram();
    for v in values {
        h.record(v).unwrap();
    }
    h
}

/// Second `i` of a made-up run: GETs and SETs with latencies spread over the buckets.
fn feed_second(metrics: &mut PrometheusMetrics, i: u64) {
    let get = histogram((0..10).map(|k| 1 + (i * 7919 + k * 104_729) % 200_000));
    let set = histogram((0..5).map(|k| 1 + (i * 31 + k * 977) % 3_000));
    let commands = [
        CommandSecond {
            command: "GET",
            ops: 10,
            hits: 7,
            misses: 3,
            errors: i % 2,
            connection_errors: 0,
            bytes_sent: 300,
            bytes_received: 700,
            latency_sum_us: 0,
            latency_us: &get,
        },
        CommandSecond {
            command: "SET",
            ops: 5,
            hits: 0,
            misses: 0,
            errors: 0,
            connection_errors: u64::from(i.is_multiple_of(10)),
            bytes_sent: 500,
            bytes_received: 25,
            latency_sum_us: 5 * 1_000,
            latency_us: &set,
        },
    ];
    metrics.update(&SecondSample {
        commands: &commands,
        other_connection_errors: 0,
        connections: 4,
        threads: 2,
        run: 1,
    });
}

/// A parsed HTTP response.
struct Reply {
    status: u16,
    head: String,
    body: String,
}

fn request(addr: SocketAddr, raw: &str) -> Reply {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(DEADLINE)).unwrap();
    s.write_all(raw.as_bytes()).unwrap();
    let mut bytes = Vec::new();
    s.read_to_end(&mut bytes).unwrap();
    let text = String::from_utf8(bytes).unwrap();
    let (head, body) = text.split_once("\r\n\r\n").expect("a head and a body");
    let status = head[9..12].parse().unwrap();
    let length = head
        .lines()
        .find_map(|l| l.strip_prefix("Content-Length: "))
        .expect("Content-Length")
        .parse::<usize>()
        .unwrap();
    if !raw.starts_with("HEAD") {
        assert_eq!(length, body.len(), "{head}");
    }
    Reply {
        status,
        head: head.to_string(),
        body: body.to_string(),
    }
}

fn scrape(addr: SocketAddr) -> String {
    let reply = request(addr, "GET /metrics HTTP/1.1\r\nHost: kvbench\r\n\r\n");
    assert_eq!(reply.status, 200, "{}", reply.head);
    reply.body
}

/// `series -> value` of every sample line.
fn samples(text: &str) -> BTreeMap<String, f64> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            let (series, value) = l.rsplit_once(' ').expect("series and value");
            (series.to_string(), value.parse::<f64>().expect(l))
        })
        .collect()
}

/// Every histogram's buckets: `le` ascending, counts cumulative, `+Inf` equal to `_count`.
fn assert_buckets_cumulative(text: &str) {
    let values = samples(text);
    let mut per_command: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
    for line in text.lines() {
        let Some(rest) = line.strip_prefix("memtier_latency_seconds_bucket{") else {
            continue;
        };
        let (labels, value) = rest.rsplit_once("} ").unwrap();
        let (others, le) = labels.rsplit_once(",le=\"").unwrap();
        let le = le.trim_end_matches('"');
        let le = if le == "+Inf" {
            f64::INFINITY
        } else {
            le.parse().unwrap()
        };
        per_command
            .entry(others.to_string())
            .or_default()
            .push((le, value.parse().unwrap()));
    }
    assert!(!per_command.is_empty(), "no buckets in:\n{text}");
    for (labels, buckets) in per_command {
        for pair in buckets.windows(2) {
            assert!(
                pair[0].0 < pair[1].0,
                "{labels}: le not ascending: {buckets:?}"
            );
            assert!(
                pair[0].1 <= pair[1].1,
                "{labels}: not cumulative: {buckets:?}"
            );
        }
        let last = buckets.last().unwrap();
        assert_eq!(last.0, f64::INFINITY, "{labels}: +Inf last");
        let count = values[&format!("memtier_latency_seconds_count{{{labels}}}")];
        assert_eq!(last.1, count, "{labels}: +Inf equals _count");
    }
}

/// Every counter-like sample of `after` is at least its value in `before`; returns
/// whether any grew.
fn assert_only_grew(before: &str, after: &str) -> bool {
    let (before, after) = (samples(before), samples(after));
    let mut grew = false;
    for (series, old) in &before {
        let counter = series.contains("_total")
            || series.starts_with("memtier_latency_seconds_bucket")
            || series.starts_with("memtier_latency_seconds_count")
            || series.starts_with("memtier_latency_seconds_sum");
        if !counter {
            continue;
        }
        let new = after
            .get(series)
            .unwrap_or_else(|| panic!("{series} vanished"));
        assert!(new >= old, "{series} went from {old} to {new}");
        grew |= new > old;
    }
    grew
}

fn promtool_check(text: &str) {
    let child = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(child) => child,
        Err(e) if e.kind() == ErrorKind::NotFound => {
            // CI installs it (.ci/run): there a missing promtool is a failure, not a skip.
            assert!(
                std::env::var_os("CI").is_none(),
                "promtool is not installed (Debian: prometheus); .ci/run installs it"
            );
            eprintln!("SKIPPED promtool check: promtool is not installed (Debian: prometheus)");
            return;
        }
        Err(e) => panic!("cannot run promtool: {e}"),
    };
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "promtool check metrics failed ({}):\n{}{}\n--- text ---\n{text}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
}

#[test]
fn promtool_accepts_the_golden_text_and_a_live_scrape() {
    promtool_check(include_str!("../src/sinks/prometheus/testdata/golden.prom"));

    let settings = settings(&["env=ci", "note=a \"quoted\" \\ value\nwith a newline"]);
    let mut metrics = PrometheusMetrics::new(&settings, RunInfo::new(2));
    let endpoint = PrometheusEndpoint::start(&settings, metrics.exposition()).unwrap();
    promtool_check(&scrape(endpoint.local_addr()));
    for i in 0..3 {
        feed_second(&mut metrics, i);
    }
    let text = scrape(endpoint.local_addr());
    assert!(
        text.contains("memtier_ops_total{command=\"GET\",env=\"ci\""),
        "{text}"
    );
    promtool_check(&text);
    endpoint.stop();
}

#[test]
fn counters_only_grow_while_a_thread_feeds_seconds() {
    let settings = settings(&["env=live"]);
    let mut metrics = PrometheusMetrics::new(&settings, RunInfo::new(1));
    let endpoint = PrometheusEndpoint::start(&settings, metrics.exposition()).unwrap();
    let addr = endpoint.local_addr();

    // Lock-step: the feeder adds a batch of seconds when asked, so every scrape after a
    // batch must show strictly more.
    let (ask, asked) = mpsc::channel::<u64>();
    let (done, batch_done) = mpsc::channel::<()>();
    let feeder = thread::spawn(move || {
        let mut i = 0;
        for batch in asked {
            for _ in 0..batch {
                feed_second(&mut metrics, i);
                i += 1;
            }
            done.send(()).unwrap();
        }
        metrics
    });
    let mut previous = scrape(addr);
    for _ in 0..5 {
        ask.send(3).unwrap();
        batch_done.recv_timeout(DEADLINE).unwrap();
        let text = scrape(addr);
        assert!(assert_only_grew(&previous, &text), "nothing grew:\n{text}");
        assert_buckets_cumulative(&text);
        previous = text;
    }
    drop(ask);
    let mut metrics = feeder.join().unwrap();

    // The totals are exact: 15 seconds fed.
    let last = samples(&previous);
    let get = "{command=\"GET\",env=\"live\"}";
    assert_eq!(last[&format!("memtier_ops_total{get}")], 150.0);
    assert_eq!(last[&format!("memtier_hits_total{get}")], 105.0);
    assert_eq!(last[&format!("memtier_misses_total{get}")], 45.0);
    assert_eq!(last[&format!("memtier_errors_total{get}")], 7.0);
    assert_eq!(last[&format!("memtier_latency_seconds_count{get}")], 150.0);
    assert_eq!(last["memtier_sent_bytes_total{env=\"live\"}"], 15.0 * 800.0);
    assert_eq!(
        last["memtier_received_bytes_total{env=\"live\"}"],
        15.0 * 725.0
    );
    assert_eq!(last["memtier_connection_errors_total{env=\"live\"}"], 2.0);
    assert_eq!(
        last["memtier_latency_seconds_sum{command=\"SET\",env=\"live\"}"],
        0.075
    );
    assert_eq!(last["memtier_connections{env=\"live\"}"], 4.0);

    // Free-running: the feeder publishes as fast as it can while four scrapers read.
    let stop = Arc::new(AtomicBool::new(false));
    let scrapers: Vec<_> = (0..4)
        .map(|_| {
            let stop = Arc::clone(&stop);
            thread::spawn(move || {
                let mut previous = scrape(addr);
                let mut scrapes = 1;
                while !stop.load(Ordering::Acquire) || scrapes < 3 {
                    let text = scrape(addr);
                    assert_only_grew(&previous, &text);
                    assert_buckets_cumulative(&text);
                    previous = text;
                    scrapes += 1;
                }
            })
        })
        .collect();
    for i in 15..415 {
        feed_second(&mut metrics, i);
    }
    stop.store(true, Ordering::Release);
    for s in scrapers {
        s.join().unwrap();
    }
    let last = samples(&scrape(addr));
    assert_eq!(last[&format!("memtier_ops_total{get}")], 4150.0);
    endpoint.stop();
}

#[test]
fn http_answers() {
    let settings = settings(&[]);
    let metrics = PrometheusMetrics::new(&settings, RunInfo::new(1));
    let endpoint = PrometheusEndpoint::start(&settings, metrics.exposition()).unwrap();
    let addr = endpoint.local_addr();
    assert!(addr.ip().is_loopback() && addr.port() != 0, "{addr}");

    let get = request(addr, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
    assert_eq!(get.status, 200);
    assert!(
        get.head
            .contains("\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"),
        "{}",
        get.head
    );
    assert!(get.body.contains("\nmemtier_run 0\n"), "{}", get.body);

    let head = request(addr, "HEAD /metrics HTTP/1.1\r\n\r\n");
    assert_eq!(head.status, 200);
    assert!(head.body.is_empty());
    let length = format!("\r\nContent-Length: {}\r\n", get.body.len());
    assert!(head.head.contains(&length), "{}", head.head);

    let post = request(addr, "POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n");
    assert_eq!(post.status, 405);
    assert!(post.head.contains("\r\nAllow: GET, HEAD"), "{}", post.head);
    assert_eq!(request(addr, "GET / HTTP/1.1\r\n\r\n").status, 404);
    assert_eq!(
        request(addr, "GET /favicon.ico HTTP/1.0\r\n\r\n").status,
        404
    );
    assert_eq!(request(addr, "hello\r\n\r\n").status, 400);
    let huge = format!("GET /metrics HTTP/1.1\r\nX: {}\r\n\r\n", "a".repeat(10_000));
    assert_eq!(request(addr, &huge).status, 431);

    // A request sent a byte at a time is still answered.
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(DEADLINE)).unwrap();
    s.set_nodelay(true).unwrap();
    for b in b"GET /metrics HTTP/1.1\r\n\r\n" {
        s.write_all(&[*b]).unwrap();
    }
    let mut reply = String::new();
    s.read_to_string(&mut reply).unwrap();
    assert!(reply.starts_with("HTTP/1.1 200 OK\r\n"), "{reply}");
    endpoint.stop();
}

#[test]
fn stuck_clients_neither_block_others_nor_stay() {
    let settings = settings(&[]);
    let metrics = PrometheusMetrics::new(&settings, RunInfo::new(1));
    let endpoint = PrometheusEndpoint::start(&settings, metrics.exposition()).unwrap();
    let addr = endpoint.local_addr();

    // Half-open: connects and says nothing. Slow: half a request line, then silence.
    // The clock starts before either connects: the server's timeout runs from its accept,
    // which may come before `connect` returns here, and a loaded machine can hold this
    // thread for a while after it, so a clock started afterwards could see a timely close
    // as early.
    let opened = Instant::now();
    let mut silent = TcpStream::connect(addr).unwrap();
    let mut slow = TcpStream::connect(addr).unwrap();
    slow.write_all(b"GET /met").unwrap();

    // Others are served meanwhile, long before the stuck ones time out.
    for _ in 0..5 {
        scrape(addr);
    }
    let served_in = opened.elapsed();
    assert!(
        served_in < CLIENT_TIMEOUT,
        "five scrapes took {served_in:?}: they waited for the stuck clients"
    );

    // The stuck clients are closed once their time is up, not before.
    for stream in [&mut silent, &mut slow] {
        stream
            .set_read_timeout(Some(CLIENT_TIMEOUT + DEADLINE))
            .unwrap();
        let mut buf = [0u8; 64];
        let n = stream.read(&mut buf).unwrap_or(0);
        assert_eq!(n, 0, "a stuck client gets no response, only a close");
    }
    let closed_after = opened.elapsed();
    assert!(
        closed_after >= CLIENT_TIMEOUT - Duration::from_millis(100),
        "closed after {closed_after:?}, before the timeout"
    );
    endpoint.stop();
}

#[test]
fn many_scrapes_at_once_and_a_cap() {
    let settings = settings(&[]);
    let metrics = PrometheusMetrics::new(&settings, RunInfo::new(1));
    let endpoint = PrometheusEndpoint::start(&settings, metrics.exposition()).unwrap();
    let addr = endpoint.local_addr();

    let scrapers: Vec<_> = (0..16)
        .map(|_| thread::spawn(move || (0..5).for_each(|_| drop(scrape(addr)))))
        .collect();
    for s in scrapers {
        s.join().unwrap();
    }

    // Fill every slot with a client that never finishes its request; the server accepts
    // in arrival order, so the next connection finds no slot and is told 503.
    let held: Vec<TcpStream> = (0..MAX_CLIENTS)
        .map(|_| {
            let mut s = TcpStream::connect(addr).unwrap();
            s.write_all(b"GET /metrics HTTP/1.1\r\n").unwrap();
            s
        })
        .collect();
    let busy = request(addr, "GET /metrics HTTP/1.1\r\n\r\n");
    assert_eq!(busy.status, 503, "{}", busy.head);
    drop(held);
    // Slots free up as the server sees the closes.
    wait_until("a client slot to free up", DEADLINE, || {
        request(addr, "GET /metrics HTTP/1.1\r\n\r\n").status == 200
    });
    endpoint.stop();
}

#[test]
fn stop_closes_the_listener_and_every_client() {
    let settings = settings(&[]);
    let metrics = PrometheusMetrics::new(&settings, RunInfo::new(1));
    let endpoint = PrometheusEndpoint::start(&settings, metrics.exposition()).unwrap();
    let addr = endpoint.local_addr();
    scrape(addr);
    let mut open = TcpStream::connect(addr).unwrap();
    open.write_all(b"GET /").unwrap();
    let started = Instant::now();
    endpoint.stop();
    open.set_read_timeout(Some(DEADLINE)).unwrap();
    let mut buf = [0u8; 16];
    assert_eq!(open.read(&mut buf).unwrap_or(0), 0);
    assert!(
        started.elapsed() < CLIENT_TIMEOUT,
        "stop waited for a client"
    );
    let refused = TcpStream::connect(addr).unwrap_err();
    assert_eq!(refused.kind(), ErrorKind::ConnectionRefused);

    // Dropping stops too.
    let endpoint = PrometheusEndpoint::start(&settings, metrics.exposition()).unwrap();
    let addr = endpoint.local_addr();
    drop(endpoint);
    assert!(TcpStream::connect(addr).is_err());
}

#[test]
fn a_port_in_use_is_a_one_line_error() {
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let args = PrometheusArgs {
        prometheus_port: Some(port.clone()),
        ..PrometheusArgs::default()
    };
    let settings = args.settings().unwrap().unwrap();
    let metrics = PrometheusMetrics::new(&settings, RunInfo::new(1));
    match PrometheusEndpoint::start(&settings, metrics.exposition()) {
        Err(Error::Run(msg)) => {
            assert!(
                msg.starts_with(&format!(
                    "cannot serve Prometheus metrics on 127.0.0.1:{port}: "
                )),
                "{msg}"
            );
            assert!(!msg.contains('\n') && !msg.contains("os error"), "{msg}");
        }
        other => panic!("expected a run error, got {other:?}"),
    }
}

/// The value of the sample whose line starts with `prefix` (name and the labels up to
/// where the prefix ends), or 0 when there is none yet.
fn sample_value(text: &str, prefix: &str) -> f64 {
    text.lines()
        .find(|l| l.starts_with(prefix))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0)
}

/// The address a running kvbench's endpoint announced on stderr.
fn endpoint_address(run: &common::Background) -> SocketAddr {
    let line = "Prometheus exporter listening on http://";
    run.wait_for_stderr(line);
    let stderr = run.stderr_so_far();
    stderr
        .lines()
        .find_map(|l| l.strip_prefix(line))
        .and_then(|rest| rest.strip_suffix("/metrics"))
        .and_then(|a| a.parse().ok())
        .unwrap_or_else(|| panic!("no address in {stderr}"))
}

/// A real run with `--prometheus-port=0`: the endpoint answers while it runs, its counters
/// move, promtool accepts the text, and the scraped SET total agrees with the server's
/// `INFO commandstats`: exactly, once the server holds every SET (`CLIENT PAUSE WRITE`)
/// and a whole second has been folded in. The endpoint closes with the run.
#[test]
fn a_real_run_is_scraped_and_agrees_with_the_server() {
    let server = RedisServer::start();
    let run = kvbench_at(
        server.port,
        &[
            "-t",
            "1",
            "-c",
            "2",
            "-n",
            "400",
            // 8 s of SETs: the pause below must come mid-run, after the first fold (1 s)
            // and a scrape, which a loaded machine can stretch to seconds.
            "--rate-limiting=50",
            "--ratio=1:1",
            "--hide-histogram",
            "--prometheus-port=0",
            "--prometheus-run-label=test=e2e",
        ],
    )
    .with_json()
    .spawn();
    let addr = endpoint_address(&run);
    assert!(addr.ip().is_loopback() && addr.port() != 0, "{addr}");

    let set = "memtier_ops_total{command=\"SET\",test=\"e2e\"}";
    let mut text = String::new();
    wait_until("SETs counted on the endpoint", DEADLINE, || {
        text = scrape(addr);
        sample_value(&text, set) > 0.0
    });
    assert!(
        text.contains("memtier_connections{test=\"e2e\"} 2\n"),
        "{text}"
    );
    assert!(text.contains("memtier_threads{test=\"e2e\"} 1\n"), "{text}");
    assert!(text.contains("memtier_run{test=\"e2e\"} 1\n"), "{text}");
    assert!(
        sample_value(&text, "memtier_sent_bytes_total") > 0.0,
        "{text}"
    );
    assert_buckets_cumulative(&text);

    // Hold every SET at the server: the count it has executed stops, and so, once the
    // replies already sent are folded into a second, does the scraped counter.
    assert_eq!(server.cli(&["CLIENT", "PAUSE", "30000", "WRITE"]), "OK");
    let mut agreed = (0.0, 0);
    wait_until(
        "the scraped SET total to equal the server's",
        DEADLINE,
        || {
            let scraped = sample_value(&scrape(addr), set);
            let executed = server.commandstats().get("set").copied().unwrap_or(0);
            agreed = (scraped, executed);
            scraped == executed as f64
        },
    );
    assert!(agreed.1 > 0 && agreed.1 < 400, "{agreed:?}: paused mid-run");
    assert_eq!(server.cli(&["CLIENT", "UNPAUSE"]), "OK");
    // The first scrape, checked now: promtool is slow to start on a loaded machine,
    // and before the pause it ate into the run's 8 s.
    promtool_check(&text);

    let done = run.wait(KVBENCH_TIMEOUT);
    assert!(done.status.success(), "{}", done.describe());
    // The whole run: what the server executed is what kvbench counted.
    let sets = done.json()["ALL STATS"]["Sets"]["Count"].as_u64();
    assert_eq!(sets, Some(400));
    assert_eq!(server.commandstats().get("set").copied(), Some(400));
    assert!(
        TcpStream::connect(addr).is_err(),
        "the endpoint outlived the run"
    );
}

/// `memtier_connections` is the connections up, not those configured: against a server
/// that takes two clients (`--maxclients 2`), three clients that reconnect on error show
/// as two (the server's `rejected_connections` counts the third's attempts).
#[test]
fn the_connections_gauge_counts_connections_up() {
    let server = RedisServer::start_with(&["--maxclients", "2"]);
    let run = kvbench_at(
        server.port,
        &[
            "-t",
            "1",
            "-c",
            "3",
            "--test-time=6",
            "--reconnect-on-error",
            "--hide-histogram",
            "--prometheus-port=0",
        ],
    )
    .with_json()
    .spawn();
    let addr = endpoint_address(&run);
    let mut text = String::new();
    wait_until("two connections up on the endpoint", DEADLINE, || {
        text = scrape(addr);
        sample_value(&text, "memtier_ops_total{command=\"SET\"}") > 0.0
            && sample_value(&text, "memtier_connections") == 2.0
    });
    assert!(
        sample_value(&text, "memtier_connection_errors_total") > 0.0,
        "the third client was refused: {text}"
    );
    let done = run.wait(KVBENCH_TIMEOUT);
    assert!(done.status.success(), "{}", done.describe());
    let stats = server.cli(&["INFO", "stats"]);
    let rejected: u64 = stats
        .lines()
        .find_map(|l| l.trim().strip_prefix("rejected_connections:"))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    assert!(
        rejected > 0,
        "the server turned the third client away: {stats}"
    );
}

/// A port already taken is one line and exit status 1, before any connection; a stray
/// companion flag without `--prometheus-port` is refused.
#[test]
fn prometheus_flag_errors_are_one_line() {
    let server = RedisServer::start();
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let run = kvbench_at(
        server.port,
        &["-n", "5", "--prometheus-port", &port, "--hide-histogram"],
    )
    .run();
    assert_eq!(run.status.code(), Some(1), "{}", run.describe());
    let stderr = run.stderr_text();
    assert!(
        stderr.contains(&format!(
            "error: cannot serve Prometheus metrics on 127.0.0.1:{port}"
        )),
        "{stderr}"
    );
    let stats = server.commandstats();
    assert!(
        !stats.contains_key("set") && !stats.contains_key("get"),
        "no request before the endpoint is up: {stats:?}"
    );

    let run = kvbench_at(server.port, &["-n", "5", "--prometheus-run-label=a=b"]).run();
    assert_eq!(run.status.code(), Some(1), "{}", run.describe());
    assert!(
        run.stderr_text()
            .contains("--prometheus-run-label needs --prometheus-port"),
        "{}",
        run.describe()
    );
}

/// `--prometheus-linger`: after the run the endpoint stays up until a scrape takes the
/// final figures, and that scrape's counters are the whole run's (the JSON's and the
/// server's); then kvbench exits at once, well before the linger's bound. Without it
/// the last second never reached a scraper (the endpoint closed with the run).
#[test]
fn lingering_lets_a_scrape_take_the_final_figures() {
    let server = RedisServer::start();
    let run = kvbench_at(
        server.port,
        &[
            "-t",
            "1",
            "-c",
            "2",
            "-n",
            "300",
            "--ratio=1:0",
            "--hide-histogram",
            "--prometheus-port=0",
            "--prometheus-linger=120",
        ],
    )
    .with_json()
    .spawn();
    let addr = endpoint_address(&run);
    run.wait_for_stderr("stays up until a scrape takes the final figures (at most 120 s)");
    let text = scrape(addr);
    let done = run.wait(KVBENCH_TIMEOUT);
    assert!(done.status.success(), "{}", done.describe());
    assert_eq!(
        sample_value(&text, "memtier_ops_total{command=\"SET\"}"),
        600.0,
        "{text}"
    );
    assert!(text.contains("memtier_connections 0\n"), "{text}");
    assert_eq!(
        done.json()["ALL STATS"]["Sets"]["Count"].as_u64(),
        Some(600)
    );
    assert_eq!(server.commandstats().get("set").copied(), Some(600));
    assert!(
        TcpStream::connect(addr).is_err(),
        "the endpoint outlived the lingering"
    );
}
