//! The latency probes end to end: `kvbench intrinsic-latency` prints redis-cli's three
//! kinds of line (checked beside `redis-cli --intrinsic-latency`), stays pinned to one CPU,
//! stops cleanly on Ctrl-C, and refuses bad values with one line and exit 1; redis-cli's
//! `--intrinsic-latency SECONDS` runs it through `kvbench latency` too.

mod common;

use std::time::{Duration, Instant};

use common::{CONDITION_TIMEOUT, RedisServer, describe, kvbench, run_with_timeout, wait_until};

const TIMEOUT: Duration = Duration::from_secs(60);

/// The figures of one intrinsic-latency output.
#[derive(Debug)]
struct Intrinsic {
    maxima: Vec<u64>,
    runs: u64,
    avg_us: f64,
    avg_ns: f64,
    worst: u64,
}

/// Parses the three kinds of line, in redis-cli's order, failing on anything else.
fn parse_intrinsic(stdout: &str) -> Intrinsic {
    let lines: Vec<&str> = stdout.lines().collect();
    let blank = lines
        .iter()
        .position(|l| l.is_empty())
        .unwrap_or_else(|| panic!("a blank line before the summary:\n{stdout}"));
    let maxima: Vec<u64> = lines[..blank]
        .iter()
        .map(|l| {
            l.strip_prefix("Max latency so far: ")
                .and_then(|r| r.strip_suffix(" microseconds."))
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| panic!("not a maximum line: {l:?}"))
        })
        .collect();
    assert_eq!(lines.len(), blank + 3, "two summary lines:\n{stdout}");
    let totals = lines[blank + 1];
    let (runs, rest) = totals
        .split_once(" total runs (avg latency: ")
        .unwrap_or_else(|| panic!("not a totals line: {totals:?}"));
    let (avg_us, rest) = rest.split_once(" microseconds / ").expect("µs average");
    let avg_ns = rest
        .strip_suffix(" nanoseconds per run).")
        .expect("ns average");
    let worst_line = lines[blank + 2];
    let worst = worst_line
        .strip_prefix("Worst run took ")
        .and_then(|r| r.strip_suffix("x longer than the average latency."))
        .unwrap_or_else(|| panic!("not a worst-run line: {worst_line:?}"));
    // redis-cli's precisions: 4 decimals of µs, 2 of ns, a whole ratio.
    assert_eq!(avg_us.split('.').nth(1).map(str::len), Some(4), "{totals}");
    assert_eq!(avg_ns.split('.').nth(1).map(str::len), Some(2), "{totals}");
    Intrinsic {
        maxima,
        runs: runs.parse().expect("runs"),
        avg_us: avg_us.parse().expect("avg µs"),
        avg_ns: avg_ns.parse().expect("avg ns"),
        worst: worst.parse().expect("worst ratio"),
    }
}

/// The same text with every number replaced by `#`: what redis-cli and kvbench must share.
fn shape(text: &str) -> Vec<String> {
    let mut lines: Vec<String> = text
        .lines()
        .map(|l| {
            let mut out = String::new();
            let mut in_number = false;
            for c in l.chars() {
                if c.is_ascii_digit() || (in_number && c == '.') {
                    if !in_number {
                        out.push('#');
                        in_number = true;
                    }
                } else {
                    in_number = false;
                    out.push(c);
                }
            }
            out
        })
        .collect();
    // How many new maxima each tool found is up to the machine.
    lines.dedup();
    lines
}

/// The figures must agree with each other, as redis-cli's do.
fn check_consistent(figures: &Intrinsic, min_seconds: f64, out: &str) {
    assert!(!figures.maxima.is_empty(), "at least one maximum:\n{out}");
    assert!(
        figures.maxima.windows(2).all(|w| w[0] < w[1]),
        "maxima only grow:\n{out}"
    );
    assert!(figures.maxima[0] > 0, "{out}");
    assert!(figures.runs > 1_000, "{out}");
    assert!(
        (figures.avg_ns / 1000.0 - figures.avg_us).abs() < 0.0001,
        "the two averages agree:\n{out}"
    );
    let measured_s = figures.avg_ns * figures.runs as f64 / 1e9;
    assert!(
        measured_s >= min_seconds * 0.99 && measured_s < min_seconds + 5.0,
        "runs × average ≈ the test's length ({measured_s} s):\n{out}"
    );
    // The ratio comes from the unrounded average; the finer of the two printed
    // averages (nanoseconds, two decimals) bounds the rounding it carries.
    let max = *figures.maxima.last().expect("a maximum") as f64;
    let ratio = max * 1000.0 / figures.avg_ns;
    let rounding = 0.005 / figures.avg_ns;
    assert!(
        (ratio - figures.worst as f64).abs() <= 1.0 + ratio * (rounding + 1e-4),
        "worst run ratio is max / average ({ratio}):\n{out}"
    );
}

#[test]
fn intrinsic_latency_prints_redis_cli_three_line_kinds() {
    let out = kvbench(&["intrinsic-latency", "1"]).timeout(TIMEOUT).ok();
    assert!(out.stderr.is_empty(), "{}", out.describe());
    let stdout = out.stdout_text();
    let ours = parse_intrinsic(&stdout);
    check_consistent(&ours, 1.0, &stdout);

    // redis-cli beside it: the same lines, number for number in kind.
    let mut cmd = std::process::Command::new("redis-cli");
    cmd.args(["--intrinsic-latency", "1"]);
    let theirs = run_with_timeout(cmd, TIMEOUT);
    assert!(theirs.status.success(), "{}", describe(&theirs));
    let their_stdout = String::from_utf8_lossy(&theirs.stdout).to_string();
    parse_intrinsic(&their_stdout);
    assert_eq!(shape(&stdout), shape(&their_stdout));
}

/// The first CPU this test process may run on (from `/proc/self/status`).
fn first_allowed_cpu() -> u32 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let list = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .expect("Cpus_allowed_list");
    list.trim()
        .split(|c: char| !c.is_ascii_digit())
        .next()
        .and_then(|n| n.parse().ok())
        .expect("a CPU number")
}

/// The CPUs the process `pid`'s main thread may run on, as the kernel lists them.
fn allowed_cpus_of(pid: u32) -> Option<String> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .map(|l| l.trim().to_string())
}

#[test]
fn intrinsic_latency_pins_one_cpu_and_stops_on_ctrl_c() {
    let cpu = first_allowed_cpu().to_string();
    let probe = kvbench(&["intrinsic-latency", "--cpu", &cpu, "60"]).spawn();
    let pid = probe.pid();

    // It pins itself after installing its Ctrl-C handler: once pinned, SIGINT is safe.
    wait_until(
        &format!("kvbench intrinsic-latency pinned to CPU {cpu}"),
        CONDITION_TIMEOUT,
        || allowed_cpus_of(pid).as_deref() == Some(cpu.as_str()),
    );
    // On a machine that allows one CPU only, that holds from the start: its first line
    // comes after the handler too.
    probe.wait_for_stdout("Max latency so far: ");
    let pid_t = libc::pid_t::try_from(pid).expect("pid fits pid_t");
    // SAFETY: `pid` is our own child, not reaped yet (so not reused); SIGINT is a plain
    // signal with no memory effects on this process.
    let rc = unsafe { libc::kill(pid_t, libc::SIGINT) };
    assert_eq!(rc, 0, "kill(SIGINT)");
    let sent = Instant::now();

    let out = probe.wait(TIMEOUT);
    assert!(
        sent.elapsed() < Duration::from_secs(10),
        "took {:?} to stop",
        sent.elapsed()
    );
    assert_eq!(out.status.code(), Some(130), "{}", out.describe());
    let stdout = out.stdout_text();
    let figures = parse_intrinsic(&stdout);
    assert!(figures.runs > 0, "{stdout}");
}

#[test]
fn intrinsic_latency_bad_values_are_one_line_errors() {
    for (args, needle) in [
        (&["intrinsic-latency"][..], "<SECONDS>"),
        (&["intrinsic-latency", "abc"][..], "not a number of seconds"),
        (&["intrinsic-latency", "0"][..], "more than 0 seconds"),
        (&["intrinsic-latency", "-1"][..], "more than 0 seconds"),
        (
            &["intrinsic-latency", "--cpu", "99999", "1"][..],
            "may not run on CPU 99999",
        ),
        (&["intrinsic-latency", "--bogus", "1"][..], "--bogus"),
        (
            &["intrinsic-latency", "--cpu", "x", "1"][..],
            "expected a CPU number (0 or more)",
        ),
    ] {
        let out = kvbench(args).timeout(TIMEOUT).run();
        let stderr = out.stderr_text();
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", out.describe());
        assert!(out.stdout.is_empty(), "{args:?}: {}", out.describe());
        assert_eq!(stderr.lines().count(), 1, "{args:?}: one line: {stderr:?}");
        assert!(
            stderr.starts_with("error: ") && stderr.contains(needle),
            "{args:?}: {stderr}"
        );
    }
}

#[test]
fn intrinsic_latency_help() {
    let out = kvbench(&["intrinsic-latency", "--help"])
        .timeout(TIMEOUT)
        .ok();
    let stdout = out.stdout_text();
    assert!(stdout.contains("Usage: kvbench intrinsic-latency [OPTIONS] <SECONDS>"));
    assert!(stdout.contains("--cpu <N>"));
}

/// The tutorials' `redis-cli --intrinsic-latency 30`, with only the tool's name changed,
/// runs the test, as `kvbench latency --latency` runs the probe; so does the flag given to
/// `kvbench intrinsic-latency` itself. Both were refused ("unexpected argument
/// '--intrinsic-latency'").
#[test]
fn redis_cli_intrinsic_latency_line_runs_word_for_word() {
    for args in [
        &["latency", "--intrinsic-latency", "0.3"][..],
        &["latency", "--intrinsic-latency=0.3"][..],
        &["intrinsic-latency", "--intrinsic-latency", "0.3"][..],
    ] {
        let out = kvbench(args).timeout(TIMEOUT).ok();
        assert!(out.stderr.is_empty(), "{args:?}: {}", out.describe());
        let stdout = out.stdout_text();
        check_consistent(&parse_intrinsic(&stdout), 0.3, &stdout);
    }

    // The test takes no server: a server flag beside it is refused, nothing is probed.
    let server = RedisServer::start();
    server.config_resetstat();
    let port = server.port.to_string();
    let out = kvbench(&["latency", "-p", &port, "--intrinsic-latency", "0.3"])
        .timeout(TIMEOUT)
        .run();
    assert_eq!(out.status.code(), Some(1), "{}", out.describe());
    assert!(out.stderr_text().contains("'-p'"), "{}", out.describe());
    assert_eq!(server.commandstats().get("ping"), None, "no probe was sent");

    // The word as -a's value is a password, not the test: the probe runs with it.
    server.cli(&["CONFIG", "SET", "requirepass", "--intrinsic-latency"]);
    let out = kvbench(&[
        "latency",
        "-p",
        &port,
        "-a",
        "--intrinsic-latency",
        "-i",
        "0.2",
    ])
    .timeout(TIMEOUT)
    .ok();
    let line = out.stdout_text();
    assert_eq!(
        line.split_whitespace().count(),
        4,
        "min max avg count: {line:?}"
    );
}
