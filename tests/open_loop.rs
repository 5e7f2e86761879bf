//! Open-loop load against a real redis-server: a server stall shows in the response
//! times (the true open-loop values) and not in the service times, with `--rate` and with
//! memtier's `--rate-limiting`; a total rate is held (uniform and Poisson); the warm-up
//! is left out; a rate far beyond the server is reported as behind (and a server frozen
//! until `--reply-timeout` ends the run as stopped); replies come at a `--test-time`
//! deadline are counted, not left in flight; a sweep stops at its objective. Each
//! test checks what the server saw, not only what kvbench printed.

mod common;

use std::time::Duration;

use serde_json::Value;

use common::python::{PY_LOG_SUMS, python, python_hdrh};
use common::{CONDITION_TIMEOUT, RedisServer, TestDir, kvbench, kvbench_at, wait_until};

/// SET and GET calls the server counted.
fn set_get_calls(server: &RedisServer) -> u64 {
    let stats = server.commandstats();
    stats.get("set").copied().unwrap_or(0) + stats.get("get").copied().unwrap_or(0)
}

fn f64_at(v: &Value, path: &[&str]) -> f64 {
    let mut at = v;
    for key in path {
        at = &at[*key];
    }
    at.as_f64()
        .unwrap_or_else(|| panic!("{path:?} is not a number: {at}"))
}

/// A 10 s run at 2000 requests/s on 10 connections (`pacing` sets the rate), with the
/// server asleep for one second from 4 s in (when it has counted 8000 requests). Every
/// request due during the stall waits for it, so 2000 of the 20000 requests (10%) have
/// response times spread evenly over 0-1000 ms: p95 about 500 ms and p99 about 900 ms.
/// Their service times, from when each actually went out, stay low.
fn stall_run(pacing: &[&str]) -> Value {
    let server = RedisServer::start_with(&["--enable-debug-command", "yes"]);
    let run = kvbench_at(server.port, &["-t", "1", "-c", "10", "--test-time=10"])
        .args(pacing)
        .args(&["--hide-histogram", "--print-percentiles=50,90,95,99"])
        .with_json()
        .spawn();
    wait_until("8000 requests answered", CONDITION_TIMEOUT, || {
        set_get_calls(&server) >= 8000
    });
    // Blocks this thread for the second the server sleeps.
    assert_eq!(server.cli(&["DEBUG", "SLEEP", "1"]), "OK");
    let out = run.wait(Duration::from_secs(60));
    assert!(out.status.success(), "{}", out.describe());
    let json = out.json();
    let totals = &json["ALL STATS"]["Totals"];
    let count = totals["Count"].as_u64().unwrap();
    // The stall did not lower the rate: every request due was sent, late. A closed loop
    // would have skipped the stall's 2000; the lower bound leaves 400 ms of requests (at
    // 2000/s) still unsent or in flight at the end, for a loaded machine that held the
    // client off the CPU there (CI saw a 346 ms stop; 19 459 was counted with kvbench
    // stopped for 350 ms every few seconds), and the schedule's own count of what was
    // due is exact.
    assert!((19_200..=20_010).contains(&count), "count {count}");
    let due = json["ALL STATS"]["Schedule"]["Sent"].as_u64().unwrap()
        + json["ALL STATS"]["Schedule"]["Unsent At End"]
            .as_u64()
            .unwrap();
    // The schedule runs from when the connections are up, so a loaded machine that takes
    // tens of milliseconds to connect leaves that much of the 10 s unscheduled (19 955
    // and 19 975 were seen; up to half a second allowed); a rate lowered by the stall
    // would be 2000 short.
    assert!((19_000..=20_020).contains(&due), "{due} due");
    let served = set_get_calls(&server);
    assert!(
        served >= count && served <= count + 20,
        "server {served}, kvbench {count}"
    );
    let p = |key: &str| f64_at(totals, &["Percentile Latencies", key]);
    let (p95, p99) = (p("p95.00"), p("p99.00"));
    // A loaded machine stretches the stall (the server wakes late, the backlog drains
    // slowly), which moves both up: the bounds leave room above (706 ms was seen with the
    // client also stopped for 350 ms every few seconds, as a stalled VM does), and a
    // closed loop (p95 of a few milliseconds) still fails them by far.
    assert!((380.0..=900.0).contains(&p95), "response p95 {p95} ms");
    assert!((800.0..=1500.0).contains(&p99), "response p99 {p99} ms");
    let s = |key: &str| f64_at(totals, &["Service Latency", "Percentile Latencies", key]);
    let (s90, s99) = (s("p90.00"), s("p99.00"));
    // Sub-millisecond while the machine is quiet, but a loaded 2-core box (other builds,
    // other benchmarks) holds the client or the server off the CPU for milliseconds at a
    // time, so a quiet-machine bound would fail a correct program. The check that counts
    // is that service times leave the stall out: were they response times, p99 would be
    // the response p99 (at least 800 ms, checked above); 200 ms is far below that and far
    // above scheduling noise. p90 stays a loose bound on the ordinary requests.
    assert!(s90 < 50.0, "service p90 {s90} ms");
    assert!(s99 < 200.0, "service p99 {s99} ms");
    let schedule = &json["ALL STATS"]["Schedule"];
    // The requests due during the stall went out late, waiting for a connection.
    assert!(
        schedule["Late Waiting For Connection"].as_u64().unwrap() >= 1500,
        "{schedule}"
    );
    json
}

#[test]
fn a_stall_shows_in_response_time_with_a_total_rate() {
    let json = stall_run(&["--rate=2000"]);
    let schedule = &json["ALL STATS"]["Schedule"];
    assert_eq!(schedule["Target Rate"], 2000);
    assert_eq!(schedule["Rate Set"], "in all");
    assert_eq!(json["configuration"]["rate"], 2000);
    assert_eq!(json["configuration"]["arrival"], "uniform");
}

#[test]
fn a_stall_shows_in_response_time_with_a_rate_per_connection() {
    let json = stall_run(&["--rate-limiting=200"]);
    let schedule = &json["ALL STATS"]["Schedule"];
    assert_eq!(schedule["Target Rate"], 2000);
    assert_eq!(schedule["Rate Set"], "per connection");
    assert_eq!(json["configuration"]["rate_limit"], 200);
}

/// A total rate the server sustains, held within `tolerance` (a fraction) by what the
/// server counted over the measured seconds and by what kvbench reports. 5000/s, not
/// more: CI's loaded 2-core box, running this beside the other tests, could not give
/// client and server the CPU for 20 000/s (the server's p50 service time went to 0.12 ms
/// from 0.03, the median lag to 21 ms). A pacing error is a time (2% slow is 30 ms late
/// at 1.5 s whatever the rate), so the lower rate checks the pacing as strictly.
fn holds_rate(arrival: &str, tolerance: f64) {
    let server = RedisServer::start();
    let out = kvbench_at(server.port, &["-t", "2", "-c", "5", "--test-time=3"])
        .args(&[
            "--rate=5000",
            &format!("--arrival={arrival}"),
            "--hide-histogram",
        ])
        .with_json()
        .ok();
    let json = out.json();
    let schedule = &json["ALL STATS"]["Schedule"];
    let field = |key: &str| schedule[key].as_u64().unwrap_or_else(|| panic!("{key}"));
    let (sent, unsent) = (field("Sent"), field("Unsent At End"));
    // The schedule itself, whatever the machine managed: every request due in the 3 s
    // was either sent or is counted as unsent at the end. The schedule starts at the
    // first send while the deadline counts from the run's start, so what a loaded machine
    // takes to connect is left unscheduled (13 ms seen; 150 ms allowed below); above,
    // the tolerance alone.
    let scheduled = (sent + unsent) as f64 / 15_000.0;
    assert!(
        (0.95..=1.0 + tolerance).contains(&scheduled),
        "{sent} sent and {unsent} unsent in 3 s ({arrival}): {schedule}"
    );
    // Requests went out when they were due: the lag (how late each was sent) stays
    // small for most. A program that paced even 2% slow would be 30 ms late by the
    // middle of the run and 60 ms by its end, so its median lag fails this; a loaded
    // 2-core box that holds the client off the CPU for a few hundred milliseconds
    // (346 ms seen in CI) moves the tail only.
    let lag_p50 = f64_at(schedule, &["Lag", "p50.00"]);
    assert!(
        lag_p50 < 20.0,
        "lag p50 {lag_p50} ms ({arrival}): {schedule}"
    );
    // What was answered never runs ahead of the schedule. It falls behind it only where
    // the machine did: held off the CPU near the end, due requests stay unsent or in
    // flight (counted above as scheduled). CI saw 88% after a 346 ms stall at the end;
    // the lower bound leaves room for such a stall (0.75 is 750 ms of 3 s) and the
    // median lag above is what holds the pacing itself.
    let achieved = f64_at(schedule, &["Achieved Rate"]);
    assert!(
        achieved / 5_000.0 <= 1.0 + tolerance && achieved / 5_000.0 >= 0.75,
        "achieved {achieved}/s ({arrival}): {schedule}"
    );
    // The server executed every answered request and nothing that was not sent.
    let count = json["ALL STATS"]["Totals"]["Count"]
        .as_u64()
        .expect("Count");
    let served = set_get_calls(&server);
    assert!(
        served >= count && served <= sent,
        "the server counted {served}, kvbench answered {count} of {sent} sent ({arrival})"
    );
    assert_eq!(schedule["Arrival"], arrival);
}

#[test]
fn a_uniform_rate_is_held() {
    holds_rate("uniform", 0.02);
}

#[test]
fn a_poisson_rate_is_held() {
    holds_rate("poisson", 0.03);
}

#[test]
fn the_warmup_is_left_out_of_every_result_and_file() {
    let server = RedisServer::start();
    let dir = TestDir::new("warmup");
    let prefix = dir.file_arg("lat");
    let out = kvbench_at(server.port, &["-t", "1", "-c", "4", "--rate=2000"])
        .args(&["--warmup=2", "--test-time=2", "--hide-histogram"])
        .args(&[format!("--hdr-file-prefix={prefix}")])
        .with_json()
        .ok();
    let json = out.json();
    let count = json["ALL STATS"]["Totals"]["Count"].as_u64().unwrap();
    let served = set_get_calls(&server);
    // 4 s at 2000/s reach the server; kvbench reports the last 2 s only. Below 4000 by
    // what a loaded machine leaves unsent or in flight at the end (here up to 200 ms of
    // it); a run that measured the warm-up too, or only one second, is far outside.
    assert!((3_600..=4_010).contains(&count), "kvbench counted {count}");
    // The warm-up counts from the first send, the run from its start: connecting on a
    // loaded machine shortens the warm-up (50 ms is 100 requests). Measuring the warm-up
    // too would leave a share near 0, the count check above fails that anyway.
    let warmup_share = served - count;
    assert!(
        (3_000..=4_100).contains(&warmup_share),
        "server {served} - kvbench {count} = {warmup_share}, not the warm-up's 4000"
    );
    assert_eq!(json["configuration"]["warmup"], 2);
    // Seconds 0 and 1 of the measured part (and a last partial one, when replies came
    // in as the deadline passed): none of the warm-up.
    let series = json["ALL STATS"]["Totals"]["Time-Serie"]
        .as_object()
        .unwrap();
    assert!(
        (2..=3).contains(&series.len()),
        "seconds reported: {series:?}"
    );
    let in_series: u64 = series.values().map(|s| s["Count"].as_u64().unwrap()).sum();
    assert_eq!(in_series, count);
    // The measured part's own clock: 2 s, plus however late a loaded machine lets the
    // worker see the deadline; with the warm-up it would be 4 s.
    assert!(f64_at(&json, &["ALL STATS", "Runtime", "Total duration"]) < 3_000.0);
    // The HDR files hold the measured requests only; service times in files of their own.
    let intervals = |name: &str| {
        let log = std::fs::read_to_string(dir.file(name)).unwrap();
        assert!(!log.contains("Tag="), "{name}:\n{log}");
        log.lines()
            .filter(|l| l.starts_with(|c: char| c.is_ascii_digit()))
            .count()
    };
    let plain = intervals("lat_FULL_RUN_1.hgrm");
    assert!((2..=3).contains(&plain), "{plain} intervals");
    assert_eq!(intervals("lat_FULL_RUN_1_service.hgrm"), plain);
    let service_txt = std::fs::read_to_string(dir.file("lat_FULL_RUN_1_service.txt")).unwrap();
    let total_count: u64 = service_txt
        .lines()
        .find_map(|l| l.split("Total count    =").nth(1))
        .and_then(|v| v.trim().trim_end_matches(']').trim().parse().ok())
        .unwrap();
    assert_eq!(total_count, count);
}

/// An open-loop run's `.hgrm` files (memtier's names) hold the response times only, in
/// memtier's untagged layout, and the service times are in `..._service.hgrm` beside them:
/// python hdrh, summing every line of a file as its documentation reads a log, gets each
/// row's JSON count from each file (the old tagged service lines doubled it).
#[test]
fn open_loop_hgrm_files_read_back_with_python_hdrh_to_the_json_counts() {
    let server = RedisServer::start();
    let dir = TestDir::new("ol-hgrm");
    let prefix = dir.file_arg("ol");
    let out = kvbench_at(server.port, &["-t", "1", "-c", "2", "--rate=2000"])
        .args(&["--test-time=2", "--ratio=1:1", "--hide-histogram"])
        .args(&[format!("--hdr-file-prefix={prefix}")])
        .with_json()
        .ok();
    let json = out.json();
    if !python_hdrh() {
        return;
    }
    let rows = [
        ("FULL_RUN_1", "Totals"),
        ("SET_command_run_1", "Sets"),
        ("GET_command_run_1", "Gets"),
    ];
    let mut paths = Vec::new();
    for (file, _) in rows {
        paths.push(dir.file(&format!("ol_{file}.hgrm")));
        paths.push(dir.file(&format!("ol_{file}_service.hgrm")));
    }
    let refs: Vec<&std::path::Path> = paths.iter().map(|p| p.as_path()).collect();
    let sums = python(PY_LOG_SUMS, &refs);
    for (i, (file, row)) in rows.iter().enumerate() {
        let count = json["ALL STATS"][row]["Count"].as_u64().unwrap();
        assert!(count > 0, "{row} ran");
        for path in &paths[2 * i..2 * i + 2] {
            let key = path.display().to_string();
            assert_eq!(sums[&key][0].as_u64(), Some(count), "{file}: {key}");
        }
    }
    // The response-time file's percentiles are the JSON's (ms there, µs here).
    let p99_ms = json["ALL STATS"]["Totals"]["Percentile Latencies"]["p99.00"]
        .as_f64()
        .unwrap();
    let p99_us = sums[&paths[0].display().to_string()][2].as_f64().unwrap();
    assert!(
        (p99_us / 1000.0 - p99_ms).abs() <= p99_ms * 0.01 + 0.001,
        "{p99_us} us vs {p99_ms} ms"
    );
}

/// Four workers' shares of a uniform `--rate` interleave evenly at the server, as one
/// schedule would: each worker's share started when its own connection was ready, so the
/// shares ran out of phase (with two workers MONITOR saw gaps alternating 0.8 / 3.2 ms
/// where 2 ms were asked). Now all keep the run's grid: the median distance of a gap
/// from the 1 ms asked is about 0.02 ms (out of phase, the connections' start jitter's).
#[test]
fn workers_shares_of_a_uniform_rate_interleave_evenly() {
    let server = RedisServer::start();
    let dir = TestDir::new("uniform-interleave");
    let feed = dir.file("monitor.txt");
    let mut monitor = std::process::Command::new("redis-cli")
        .args(["-p", &server.port.to_string(), "monitor"])
        .stdout(std::fs::File::create(&feed).expect("monitor file"))
        .spawn()
        .expect("redis-cli monitor starts");
    wait_until("MONITOR is on", CONDITION_TIMEOUT, || {
        std::fs::read_to_string(&feed).is_ok_and(|t| t.starts_with("OK"))
    });
    // Four workers whose connections start up to 3 ms apart (memtier's start jitter).
    kvbench_at(server.port, &["-t", "4", "-c", "1", "--test-time=3"])
        .args(&[
            "--rate=1000",
            "--thread-conn-start-min-jitter-micros=0",
            "--thread-conn-start-max-jitter-micros=3000",
            "--hide-histogram",
        ])
        .ok();
    let seen = server.commandstats();
    // Only this test's child: killed by its own PID, then reaped.
    let _ = monitor.kill();
    let _ = monitor.wait();
    let text = std::fs::read_to_string(&feed).unwrap();
    let times: Vec<f64> = text
        .lines()
        .filter(|l| l.contains("\"SET\"") || l.contains("\"GET\""))
        .filter_map(|l| l.split_whitespace().next()?.parse().ok())
        .collect();
    let sent = seen.get("set").copied().unwrap_or(0) + seen.get("get").copied().unwrap_or(0);
    assert_eq!(times.len() as u64, sent, "MONITOR saw every request");
    assert!(times.len() > 2000, "{} requests", times.len());
    let mut off: Vec<f64> = times
        .windows(2)
        .map(|w| ((w[1] - w[0]) * 1000.0 - 1.0).abs())
        .collect();
    off.sort_by(f64::total_cmp);
    let median = off[off.len() / 2];
    assert!(median < 0.15, "gaps {median:.3} ms from 1 ms (median)");
}

/// A server frozen (SIGSTOP) from a second in until after the run ends: the requests due
/// meanwhile were never sent, every connection full. The reason given is that the server
/// stopped answering, not kvbench's CPU (which a few late sends from before the freeze
/// used to win: "the generator's own CPU: 22 requests went out late").
#[test]
fn a_server_frozen_to_the_end_is_said_to_have_stopped() {
    let server = RedisServer::start();
    let run = kvbench_at(server.port, &["-t", "2", "-c", "5", "--test-time=6"])
        .args(&["--rate=2000", "--hide-histogram"])
        .with_json()
        .spawn();
    wait_until("2000 requests answered", CONDITION_TIMEOUT, || {
        set_get_calls(&server) >= 2000
    });
    server.signal(libc::SIGSTOP);
    let out = run.wait(Duration::from_secs(60));
    // It must run again to be stopped cleanly.
    server.signal(libc::SIGCONT);
    assert!(out.status.success(), "{}", out.describe());
    let json = out.json();
    let schedule = &json["ALL STATS"]["Schedule"];
    let behind = schedule["Behind"].as_str().unwrap_or_default();
    assert!(
        behind.starts_with("the server stopped answering"),
        "{schedule}"
    );
    assert!(
        schedule["Unsent At End"].as_u64().unwrap() > 1000,
        "{schedule}"
    );
    assert_eq!(
        schedule["In Flight At End"].as_u64(),
        Some(10),
        "{schedule}"
    );
    assert!(
        out.stdout_text()
            .contains("\nBehind target the server stopped answering"),
        "{}",
        out.stdout_text()
    );
    let count = json["ALL STATS"]["Totals"]["Count"].as_u64().unwrap();
    assert!(set_get_calls(&server) >= count);
}

/// A server frozen until `--reply-timeout` ends the run (exit 1): the run is judged as
/// one that ran to its end with the server stalled. Both connections' requests count as
/// in flight (the one the timeout gave up on among them) and the schedule's requests due
/// by the end as never sent. The failed client used to be dropped before the count:
/// "0 due but never sent, 1 in flight", and a reason blaming the server's speed (or, with
/// one connection, "the schedule asked for fewer").
#[test]
fn a_reply_timeout_ending_counts_what_the_frozen_server_left() {
    let server = RedisServer::start();
    let run = kvbench_at(server.port, &["-t", "1", "-c", "2", "-n", "3000"])
        .args(&["--rate=200", "--reply-timeout=2", "--hide-histogram"])
        .with_json()
        .spawn();
    wait_until("100 requests answered", CONDITION_TIMEOUT, || {
        set_get_calls(&server) >= 100
    });
    server.signal(libc::SIGSTOP);
    let out = run.wait(Duration::from_secs(60));
    server.signal(libc::SIGCONT);
    assert_eq!(out.status.code(), Some(1), "{}", out.describe());
    assert!(
        out.stderr_text().contains("--reply-timeout"),
        "{}",
        out.describe()
    );
    let json = out.json();
    let schedule = &json["ALL STATS"]["Schedule"];
    assert_eq!(schedule["In Flight At End"].as_u64(), Some(2), "{schedule}");
    // At least 2 s frozen at 200/s: 400 due, of which only the two in flight went out.
    let unsent = schedule["Unsent At End"].as_u64().unwrap();
    assert!(unsent >= 300, "{schedule}");
    let sent = schedule["Sent"].as_u64().unwrap();
    let count = json["ALL STATS"]["Totals"]["Count"].as_u64().unwrap();
    assert_eq!(sent, count + 2, "{schedule}");
    let behind = schedule["Behind"].as_str().unwrap_or_default();
    assert!(
        behind.starts_with("the server stopped answering"),
        "{schedule}"
    );
    assert!(
        out.stdout_text().contains(&format!(
            "Unfinished    {unsent} due but never sent, 2 in flight"
        )),
        "{}",
        out.stdout_text()
    );
}

#[test]
fn a_rate_far_beyond_the_server_is_reported_behind() {
    let server = RedisServer::start();
    let out = kvbench_at(server.port, &["-t", "1", "-c", "1", "--test-time=2"])
        .args(&["--rate=1000000", "--hide-histogram"])
        .with_json()
        .ok();
    let json = out.json();
    let schedule = &json["ALL STATS"]["Schedule"];
    // The target stays what was asked; what was achieved and why not are said.
    assert_eq!(schedule["Target Rate"], 1_000_000);
    assert!(f64_at(schedule, &["Achieved Percent"]) < 50.0, "{schedule}");
    assert!(f64_at(schedule, &["Late Percent"]) > 50.0, "{schedule}");
    let behind = schedule["Behind"].as_str().unwrap_or_default();
    assert!(behind.starts_with("connections all busy"), "{schedule}");
    assert!(
        schedule["Unsent At End"].as_u64().unwrap() > 100_000,
        "{schedule}"
    );
    let text = out.stdout_text();
    assert!(
        text.contains("\nBehind target connections all busy"),
        "{text}"
    );
    // The server saw what kvbench says it answered, no more.
    let count = json["ALL STATS"]["Totals"]["Count"].as_u64().unwrap();
    let served = set_get_calls(&server);
    assert!(
        served >= count && served <= count + 2,
        "{served} vs {count}"
    );
}

/// The replies already come when a `--test-time` deadline passes are read and counted,
/// not reported in flight: a rate far beyond the server keeps every connection's pipeline
/// full, so at the deadline each held its 64, and the ones whose replies had come (most,
/// on loopback) were said to be "In Flight At End" (64 or 128 of 256 in every run,
/// before). What the server ran is what was counted plus what is said to be in flight.
#[test]
fn replies_come_at_the_deadline_are_counted_not_in_flight() {
    let server = RedisServer::start();
    let pipeline = 64;
    let mut in_flight_at_end = Vec::new();
    for _ in 0..3 {
        server.config_resetstat();
        let out = kvbench_at(server.port, &["-t", "2", "-c", "2", "--test-time=1"])
            .args(&["--rate=2000000", "--pipeline=64", "--ratio=1:1"])
            .args(&["--key-maximum=100", "--hide-histogram"])
            .with_json()
            .ok();
        let json = out.json();
        let counted = json["ALL STATS"]["Totals"]["Count"].as_u64().unwrap();
        let schedule = &json["ALL STATS"]["Schedule"];
        let in_flight = schedule["In Flight At End"].as_u64().unwrap();
        let ran = set_get_calls(&server);
        // Redis may not have run what was still in flight when the connections closed.
        assert!(
            counted <= ran && ran <= counted + in_flight,
            "Redis ran {ran}; kvbench counted {counted} with {in_flight} in flight"
        );
        in_flight_at_end.push(in_flight);
    }
    // A run whose last replies were all still on their way is possible on a loaded
    // machine, not three in a row.
    assert!(
        in_flight_at_end.iter().any(|&n| n < pipeline),
        "in flight at the end of each run: {in_flight_at_end:?}"
    );
}

/// A server that pauses for a second near the end of a run of a fixed count and then
/// catches up: the run ends a second late, below its target, with every request
/// answered. The reason names the wait for the server, not "the schedule asked for
/// fewer" (as it did before). (A pause mid-run is caught up on within the schedule.)
#[test]
fn a_pause_the_server_caught_up_on_is_named_as_such() {
    let server = RedisServer::start_with(&["--enable-debug-command", "yes"]);
    let run = kvbench_at(server.port, &["-t", "1", "-c", "2", "-n", "500"])
        .args(&["--rate=500", "--hide-histogram"])
        .with_json()
        .spawn();
    wait_until("900 requests answered", CONDITION_TIMEOUT, || {
        set_get_calls(&server) >= 900
    });
    // Blocks this thread for the second the server sleeps.
    assert_eq!(server.cli(&["DEBUG", "SLEEP", "1"]), "OK");
    let out = run.wait(Duration::from_secs(60));
    assert!(out.status.success(), "{}", out.describe());
    let json = out.json();
    let schedule = &json["ALL STATS"]["Schedule"];
    // 1000 requests over about 3 s where 2 s were planned.
    assert!(f64_at(schedule, &["Achieved Percent"]) < 90.0, "{schedule}");
    assert_eq!(schedule["Unsent At End"].as_u64(), Some(0), "{schedule}");
    let behind = schedule["Behind"].as_str().unwrap_or_default();
    assert!(
        behind.starts_with("the server kept kvbench waiting"),
        "{schedule}"
    );
    assert_eq!(set_get_calls(&server), 1000);
}

/// A request count under a uniform rate: the last request is due a period before the
/// schedule's span (count / rate) ends, so a run that kept time reads 100 % of target,
/// not count / (count - 1) of it (105 % for 20 requests, before).
#[test]
fn a_request_count_kept_on_time_reads_no_more_than_the_target() {
    let server = RedisServer::start();
    let out = kvbench_at(server.port, &["-t", "1", "-c", "1", "-n", "20"])
        .args(&["--rate=100", "--hide-histogram"])
        .with_json()
        .ok();
    let json = out.json();
    let schedule = &json["ALL STATS"]["Schedule"];
    let percent = f64_at(schedule, &["Achieved Percent"]);
    // A loaded machine may stretch the run, never shorten it.
    assert!(percent <= 100.0 && percent > 50.0, "{schedule}");
    assert!(f64_at(schedule, &["Achieved Rate"]) <= 100.0, "{schedule}");
    assert_eq!(set_get_calls(&server), 20);
}

/// A count run cut short by Ctrl-C is measured over the time it ran: it read as the
/// answered requests over the whole count's span (2.5 % of target for 2.5 s of a 50 s
/// `-n`), with a "Behind target" line that blamed the schedule.
#[test]
fn a_count_run_cut_short_reads_its_rate_over_the_time_it_ran() {
    let server = RedisServer::start();
    let run = kvbench_at(server.port, &["-t", "1", "-c", "2", "-n", "25000"])
        .args(&["--rate=500", "--hide-histogram"])
        .with_json()
        .spawn();
    wait_until("a thousand requests answered", CONDITION_TIMEOUT, || {
        set_get_calls(&server) >= 1000
    });
    // SAFETY: kill(2) on the PID of a child this test spawned and has not reaped.
    assert_eq!(
        unsafe { libc::kill(run.pid() as libc::pid_t, libc::SIGINT) },
        0
    );
    let out = run.wait(CONDITION_TIMEOUT);
    assert_eq!(out.status.code(), Some(130), "{}", out.describe());
    let schedule = &out.json()["ALL STATS"]["Schedule"];
    let percent = f64_at(schedule, &["Achieved Percent"]);
    // Two seconds or more of 500/s kept: near the target, whatever a loaded machine
    // did to the edges; over the 100 s span it read 2 %.
    assert!((70.0..=101.0).contains(&percent), "{schedule}");
    let text = out.stdout_text();
    if percent >= 99.0 {
        assert!(!text.contains("Behind target"), "{text}");
    }
}

#[test]
fn a_sweep_stops_at_the_first_step_that_breaks_the_objective() {
    let server = RedisServer::start();
    // 2000/s holds p99 <= 500 ms (a loaded machine's stall of a tenth of a second
    // included); 502000/s on one connection cannot (its backlog grows by the second: the
    // last answered waited most of the step); the third step must never run.
    let out = kvbench_at(server.port, &["-t", "1", "-c", "1", "--hide-histogram"])
        .args(&[
            "--rate-sweep=2000:1002000:500000",
            "--step-duration=1",
            "--slo=p99:500",
        ])
        .with_json()
        .ok();
    let json = out.json();
    let steps = &json["Rate Steps"];
    assert_eq!(steps["SLO"], "p99:500");
    assert_eq!(steps["Highest Rate Held"], 2000);
    let list = steps["Steps"].as_array().unwrap();
    assert_eq!(list.len(), 2, "{steps}");
    assert_eq!(list[0]["Held"], "true");
    assert_eq!(list[1]["Held"], "false");
    assert_eq!(list[1]["Target Rate"], 502_000);
    assert!(json.get("STEP #3 RESULTS (1002000 requests/s)").is_none());
    let text = out.stdout_text();
    assert!(text.contains("STEP #1 RESULTS (2000 requests/s)"), "{text}");
    assert!(
        text.contains(
            "Highest rate that held p99 <= 500 ms: 2000 requests/s (stopped at 502000 requests/s"
        ),
        "{text}"
    );
    // The server saw the two steps only: 2000 plus what one connection carried in 1 s.
    let first = json["STEP #1 RESULTS (2000 requests/s)"]["Totals"]["Count"]
        .as_u64()
        .unwrap();
    let second = json["STEP #2 RESULTS (502000 requests/s)"]["Totals"]["Count"]
        .as_u64()
        .unwrap();
    let served = set_get_calls(&server);
    assert!(served >= first + second && served <= first + second + 2);
}

/// Ctrl-C in a sweep's second step of five: the report says so and gives no verdict on
/// the rates not tried (it used to say "every step held it"), and the JSON's
/// `"Rate Steps"` says `"Interrupted": "true"`.
#[test]
fn an_interrupted_sweep_says_so() {
    let server = RedisServer::start();
    let run = kvbench_at(server.port, &["-t", "1", "-c", "4", "--hide-histogram"])
        .args(&[
            "--rate-sweep=500:2500:500",
            "--step-duration=3",
            "--slo=p99:500",
        ])
        .with_json()
        .spawn();
    // Step 1 sends 1500 requests in 3 s: past them, step 2 has begun.
    wait_until("the second step under way", CONDITION_TIMEOUT, || {
        set_get_calls(&server) >= 1800
    });
    // SAFETY: kill(2) on the PID of a child this test spawned and has not reaped.
    assert_eq!(
        unsafe { libc::kill(run.pid() as libc::pid_t, libc::SIGINT) },
        0
    );
    let out = run.wait(CONDITION_TIMEOUT);
    assert_eq!(out.status.code(), Some(130), "{}", out.describe());
    let text = out.stdout_text();
    assert!(
        text.contains(
            "Interrupted in step 2 of 5: the highest rate that held p99 <= 500 ms so far is \
             1000 requests/s; the rates above it were not tried."
        ),
        "{text}"
    );
    assert!(!text.contains("every step held it"), "{text}");
    let json = out.json();
    let steps = &json["Rate Steps"];
    assert_eq!(steps["Interrupted"], "true", "{steps}");
    assert_eq!(steps["Steps"].as_array().map(Vec::len), Some(2), "{steps}");
    let answered: u64 = [
        "STEP #1 RESULTS (500 requests/s)",
        "STEP #2 RESULTS (1000 requests/s)",
    ]
    .iter()
    .map(|block| json[block]["Totals"]["Count"].as_u64().unwrap_or(0))
    .sum();
    assert!(set_get_calls(&server) >= answered);
}

#[test]
fn bad_open_loop_flags_are_one_line_errors() {
    for (args, wanted) in [
        (
            &["--rate=0"][..],
            "--rate must be a number of requests per second",
        ),
        (
            &["--rate=10", "--rate-limiting=10"],
            "cannot be used together",
        ),
        (&["--warmup=3"], "--warmup needs --test-time"),
        (
            &["--rate-sweep=1:10:1"],
            "--rate-sweep needs --step-duration",
        ),
        (&["--slo=p99:1"], "--slo needs --rate-sweep"),
    ] {
        let out = kvbench(args).run();
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", out.describe());
        let stderr = out.stderr_text();
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.contains(wanted), "{args:?}: {stderr}");
    }
}
