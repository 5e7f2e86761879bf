//! Bad input on every front end's command line: each flag, found by walking the front end's
//! clap definition (so a new flag is walked without anyone listing it), is given bad values
//! (non-numbers, negatives, huge numbers, empty, odd separators). Each must end fast with
//! a one-line error and exit status 1: never a panic, a hang, a backtrace, or a run that
//! eats the machine.
//!
//! Wired front ends run as the `kvbench` binary, one process per flag and value, aimed at
//! a closed port of 127.0.0.1 so that a value the front end accepts ends at the connection
//! (still one error line and exit 1) and never reaches a real server. The same command
//! lines are parsed in-process first, through the front end's parse and validation
//! functions, in every spelling (`--flag=V`, `--flag V`, `-f V`): a refusal there must be
//! exactly what the binary prints.

mod common;

use std::collections::VecDeque;
use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::os::unix::process::CommandExt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use clap::{Arg, Command};
use common::{TestDir, closed_port, kvbench_command, run_with_timeout};

/// Values no flag should take as meant, or at least survive: non-numbers, signs, floats
/// where integers go, the integer types' edges and past them, empty and blank, odd
/// separators, a non-ASCII character, a very long number.
const BAD_VALUES: &[&str] = &[
    "abc",
    "-1",
    "0",
    "-0",
    "1.5",
    "1e3",
    "0x10",
    "NaN",
    "inf",
    "4294967295",
    "4294967296",
    "9223372036854775807",
    "99999999999999999999",
    "-99999999999999999999",
    "",
    " ",
    "1:2:3",
    "1,,2",
    ":",
    ",",
    "1-",
    "-",
    "1;2",
    "\u{1F4A5}",
    "a\nb",
    "999999999999999999999999999999999999999999999999999999999999999999999999999999999999",
];

/// What a switch (a flag without a value) is given: `--switch=V` must be refused.
const SWITCH_VALUES: &[&str] = &["abc", ""];

/// One process or parse may take this long; longer is a hang.
const HANG: Duration = Duration::from_secs(15);

/// Address space each binary run may use (4 GiB): far more than a refused or failed run
/// needs, far less than a run that allocates for a huge number would take.
const ADDRESS_SPACE: libc::rlim_t = 4 << 30;

/// A front end as the walk sees it.
struct FrontEnd {
    /// The word that selects it on kvbench's command line (its `FRONT_ENDS` name).
    word: &'static str,
    /// Its clap definition.
    command: fn() -> Command,
    /// Its parse and validation, in-process, on an argv whose first item is the program
    /// name: `Err` with what `main` would print after `error: `, `Ok` when the command
    /// line would go on to run.
    parse: fn(Vec<String>) -> Result<(), String>,
    /// Put before each walked flag: a closed port on 127.0.0.1 (`{port}`), so that an
    /// accepted value ends at the connection, and whatever else a run needs.
    target: &'static [&'static str],
    /// Positional arguments a run needs (left out when a positional is walked).
    positionals: &'static [&'static str],
    /// Go-style flags (`-name value`, `-name=value`) besides clap's spellings.
    go_style: bool,
    /// A run without a server may succeed (exit 0) for an accepted value.
    serverless: bool,
}

impl FrontEnd {
    /// Whether the binary dispatches to it yet (else it is walked in-process only).
    fn wired(&self) -> bool {
        kvbench::frontend::FRONT_ENDS
            .iter()
            .any(|(name, _)| *name == self.word)
    }
}

fn os_args(argv: Vec<String>) -> Vec<OsString> {
    argv.into_iter().map(OsString::from).collect()
}

fn memtier_parse(argv: Vec<String>) -> Result<(), String> {
    use kvbench::frontend::memtier::{Parsed, Settings, parse_args};
    match parse_args(argv).map_err(|e| e.to_string())? {
        Parsed::Print(_) => Ok(()),
        Parsed::Run(cli) => Settings::from_cli(&cli)
            .map(|_| ())
            .map_err(|e| e.to_string()),
    }
}

fn intrinsic_latency_parse(argv: Vec<String>) -> Result<(), String> {
    kvbench::frontend::intrinsic_latency::flags::parse(os_args(argv))
        .map(|_| ())
        .map_err(|e| e.to_string())
}

fn latency_parse(argv: Vec<String>) -> Result<(), String> {
    use kvbench::frontend::latency::{Parsed, parse};
    match parse(os_args(argv)).map_err(|e| e.to_string())? {
        Parsed::Print(_) => Ok(()),
        Parsed::Run(options) => {
            options.resolve(false);
            options.resolve(true);
            // The connection flags are checked where the probe's plan is built.
            let (tx, _rx) = crossbeam_channel::unbounded();
            kvbench::frontend::latency::probe::probe_plan(&options, tx)
                .map(|_| ())
                .map_err(|e| e.to_string())
        }
    }
}

fn redis_benchmark_parse(argv: Vec<String>) -> Result<(), String> {
    kvbench::frontend::redis_benchmark::flags::parse(argv)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

fn zbench_parse(argv: Vec<String>) -> Result<(), String> {
    // zbench's argv has no program name: the words after `kvbench zbench`.
    kvbench::frontend::zbench::flags::parse(argv.into_iter().skip(1))
        .map(|_| ())
        .map_err(|e| e.to_string())
}

fn merge_command() -> Command {
    <kvbench::frontend::merge::flags::MergeFlags as clap::CommandFactory>::command()
}

fn merge_parse(argv: Vec<String>) -> Result<(), String> {
    use clap::Parser;
    use kvbench::frontend::merge::flags::MergeFlags;
    match MergeFlags::try_parse_from(argv) {
        Ok(flags) => {
            flags.options();
            Ok(())
        }
        Err(e) if e.kind() == clap::error::ErrorKind::DisplayHelp => Ok(()),
        Err(e) => Err(kvbench::frontend::common::usage::one_line(&e).to_string()),
    }
}

fn front_ends() -> Vec<FrontEnd> {
    let plain = FrontEnd {
        word: "",
        command: kvbench::frontend::memtier::parse::command,
        parse: memtier_parse,
        target: &[],
        positionals: &[],
        go_style: false,
        serverless: false,
    };
    vec![
        FrontEnd {
            word: "memtier_benchmark",
            target: &["--server=127.0.0.1", "--port={port}"],
            ..plain
        },
        FrontEnd {
            word: "intrinsic-latency",
            command: kvbench::frontend::intrinsic_latency::flags::command,
            parse: intrinsic_latency_parse,
            positionals: &["0.001"],
            serverless: true,
            ..plain
        },
        FrontEnd {
            word: "latency",
            command: kvbench::frontend::latency::flags::command,
            parse: latency_parse,
            ..plain
        },
        FrontEnd {
            word: "redis-benchmark",
            command: kvbench::frontend::redis_benchmark::flags::command,
            parse: redis_benchmark_parse,
            target: &["-h", "127.0.0.1", "-p", "{port}", "-n", "10"],
            ..plain
        },
        FrontEnd {
            word: "zbench",
            command: kvbench::frontend::zbench::flags::command,
            parse: zbench_parse,
            target: &["-mode", "load", "-h", "127.0.0.1", "-p", "{port}"],
            go_style: true,
            ..plain
        },
        FrontEnd {
            word: "merge",
            command: merge_command,
            parse: merge_parse,
            positionals: &["no-such-result.json"],
            ..plain
        },
    ]
}

/// Flags whose value names a host: a value like `1.5` or `4294967295` is an IPv4
/// address to the resolver (`1.0.0.5`, `255.255.255.255`), and the walk sends nothing
/// anywhere but 127.0.0.1, so those are not given to them.
fn names_a_host(arg: &Arg) -> bool {
    let long = arg.get_long().unwrap_or_default();
    let id = arg.get_id().as_str();
    let value_names: Vec<String> = arg
        .get_value_names()
        .unwrap_or_default()
        .iter()
        .map(|n| n.to_string())
        .collect();
    long.contains("host")
        || id.contains("host")
        || ["server", "uri", "h"].contains(&long)
        || ["server", "uri"].contains(&id)
        || value_names
            .iter()
            .any(|n| n == "ADDR" || n == "HOST" || n == "URI")
}

fn resolver_number(value: &str) -> bool {
    !value.is_empty()
        && value
            .chars()
            .all(|c| c.is_ascii_hexdigit() || c == '.' || c == 'x' || c == 'X')
}

/// One walked command line: the flag's words, in one spelling.
#[derive(Clone, Debug)]
struct Case {
    front: usize,
    words: Vec<String>,
    /// A positional argument is walked: the front end's own positionals are left out.
    positional: bool,
    /// Run through the binary too (one spelling per flag and value, wired front ends).
    binary: bool,
}

fn cases(front_ends: &[FrontEnd]) -> Vec<Case> {
    let mut out = Vec::new();
    for (front, fe) in front_ends.iter().enumerate() {
        let wired = fe.wired();
        let command = (fe.command)();
        for arg in command.get_arguments() {
            if arg.is_positional() {
                // In-process only: an accepted value may mean a long run (seconds to
                // measure for), which the binary would then do.
                for &v in BAD_VALUES {
                    out.push(Case {
                        front,
                        words: vec![v.to_string()],
                        positional: true,
                        binary: false,
                    });
                }
                continue;
            }
            let long = arg.get_long();
            let short = arg.get_short();
            if !arg.get_action().takes_values() {
                if let Some(long) = long {
                    for v in SWITCH_VALUES {
                        out.push(Case {
                            front,
                            words: vec![format!("--{long}={v}")],
                            positional: false,
                            binary: wired,
                        });
                    }
                }
                continue;
            }
            for &v in BAD_VALUES {
                if names_a_host(arg) && resolver_number(v) {
                    continue;
                }
                let mut spellings: Vec<Vec<String>> = Vec::new();
                if let Some(long) = long {
                    spellings.push(vec![format!("--{long}={v}")]);
                    spellings.push(vec![format!("--{long}"), v.to_string()]);
                    if fe.go_style {
                        spellings.push(vec![format!("-{long}={v}")]);
                        spellings.push(vec![format!("-{long}"), v.to_string()]);
                    }
                }
                if let Some(short) = short {
                    spellings.push(vec![format!("-{short}"), v.to_string()]);
                }
                for (i, words) in spellings.into_iter().enumerate() {
                    out.push(Case {
                        front,
                        words,
                        positional: false,
                        binary: wired && i == 0,
                    });
                }
            }
        }
    }
    out
}

/// The in-process verdict on `argv`, or a failure: a panic, or a refusal not on one line.
fn parse_in_process(fe: &FrontEnd, argv: Vec<String>) -> Result<Result<(), String>, String> {
    let started = Instant::now();
    let shown = format!("{argv:?}");
    let verdict = catch_unwind(AssertUnwindSafe(|| (fe.parse)(argv)))
        .map_err(|_| format!("panicked parsing {shown}"))?;
    if started.elapsed() > HANG {
        return Err(format!("took {:?} to parse {shown}", started.elapsed()));
    }
    if let Err(message) = &verdict
        && (message.is_empty() || message.contains(['\n', '\r']))
    {
        return Err(format!("refused {shown} not on one line: {message:?}"));
    }
    Ok(verdict)
}

/// Runs the binary on `argv` (program name first) in `dir` and checks what it did
/// against the in-process verdict.
fn run_binary(
    fe: &FrontEnd,
    argv: &[OsString],
    verdict: &Result<(), String>,
    dir: &TestDir,
) -> Result<(), String> {
    let mut cmd = kvbench_command();
    cmd.arg(fe.word)
        .args(&argv[1..])
        .current_dir(dir.path())
        .env("RUST_BACKTRACE", "1");
    // A value that makes the binary allocate without end must fail here, fast, not
    // thrash the machine: its address space is capped.
    // SAFETY: the closure runs in the child between fork and exec and only calls
    // setrlimit, which is async-signal-safe, on a struct it owns.
    unsafe {
        cmd.pre_exec(|| {
            let cap = libc::rlimit {
                rlim_cur: ADDRESS_SPACE,
                rlim_max: ADDRESS_SPACE,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &cap) == 0 {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        });
    }
    let started = Instant::now();
    let out = run_with_timeout(cmd, HANG);
    // A run that failed still writes the files it was given (`-o abc`): the next
    // command lines must not find them (`--data-import=abc` would read that one).
    for entry in std::fs::read_dir(dir.path())
        .into_iter()
        .flatten()
        .flatten()
    {
        let path = entry.path();
        let _ = std::fs::remove_dir_all(&path).or_else(|_| std::fs::remove_file(&path));
    }
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let shown = format!("{:?}", &argv[1..]);
    if stderr.contains("panicked") || stderr.contains("backtrace") {
        return Err(format!("{shown}: panic or backtrace:\n{stderr}"));
    }
    let accepted_and_done = fe.serverless && verdict.is_ok() && out.status.code() == Some(0);
    if out.status.code() != Some(1) && !accepted_and_done {
        return Err(format!(
            "{shown}: exit status {:?}, not 1 (after {:?}):\n{stderr}",
            out.status,
            started.elapsed()
        ));
    }
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    match verdict {
        // Any refusal, as long as it is one error line.
        Err(message) if message.is_empty() => {
            if lines.len() != 1 || !lines[0].starts_with("error: ") {
                return Err(format!("{shown}: not one error line:\n{stderr}"));
            }
        }
        Err(message) => {
            let want = format!("error: {message}");
            // Messages that quote the clock (`--start-at` in the past or too far ahead)
            // differ between the two runs: they print those figures with a fraction, and
            // the comparison reads each number with a fraction as one and the same.
            let same = lines.len() == 1 && without_fractions(lines[0]) == without_fractions(&want);
            if !same {
                return Err(format!(
                    "{shown}: refused in-process with {want:?}, the binary printed:\n{stderr}"
                ));
            }
        }
        Ok(()) if accepted_and_done => {}
        Ok(()) => {
            // Accepted: it ran, against a closed port, and ended on one error line (the
            // redis-benchmark front end's is redis-benchmark's own wording).
            let error_line = |l: &&str| {
                l.starts_with("error: ") || l.starts_with("Could not connect to Redis at ")
            };
            if !lines.last().is_some_and(error_line) {
                return Err(format!(
                    "{shown}: accepted, but did not end on one error line:\n{stderr}"
                ));
            }
        }
    }
    Ok(())
}

#[test]
fn every_flag_refuses_bad_values_on_one_line() {
    let front_ends = front_ends();
    let port = closed_port().to_string();
    let queue = Mutex::new(cases(&front_ends).into_iter().collect::<VecDeque<_>>());
    let total = queue.lock().expect("queue").len();
    let failures = Mutex::new(Vec::new());
    let binary_runs = Mutex::new(0usize);
    let started = Instant::now();
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| {
                let dir = TestDir::new("flag-walk");
                loop {
                    let Some(case) = queue.lock().expect("queue").pop_front() else {
                        break;
                    };
                    let fe = &front_ends[case.front];
                    let positionals: &[&str] = if case.positional { &[] } else { fe.positionals };
                    let argv: Vec<String> = std::iter::once("kvbench".to_string())
                        .chain(fe.target.iter().map(|w| w.replace("{port}", &port)))
                        .chain(positionals.iter().map(|w| w.to_string()))
                        .chain(case.words.iter().cloned())
                        .collect();
                    let outcome = parse_in_process(fe, argv.clone()).and_then(|verdict| {
                        if !case.binary {
                            return Ok(());
                        }
                        *binary_runs.lock().expect("count") += 1;
                        let argv: Vec<OsString> = argv.into_iter().map(OsString::from).collect();
                        run_binary(fe, &argv, &verdict, &dir)
                    });
                    if let Err(failure) = outcome {
                        failures.lock().expect("failures").push(failure);
                    }
                }
            });
        }
    });
    let failures = failures.into_inner().expect("failures");
    eprintln!(
        "flag walk: {total} command lines, {} binary runs, {:?}",
        binary_runs.into_inner().expect("count"),
        started.elapsed()
    );
    assert!(
        failures.is_empty(),
        "{} of {total} command lines misbehaved:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Arguments that are not UTF-8, as a flag's value and as a word of their own: one line,
/// exit 1, for every wired front end.
#[test]
fn arguments_that_are_not_utf8_are_refused_on_one_line() {
    let dir = TestDir::new("flag-walk-utf8");
    for fe in front_ends().iter().filter(|fe| fe.wired()) {
        let command = (fe.command)();
        let Some(long) = command
            .get_arguments()
            .find(|a| a.get_action().takes_values())
            .and_then(Arg::get_long)
        else {
            continue;
        };
        for arg in [
            OsString::from_vec([format!("--{long}=").into_bytes(), vec![0xff, 0xfe]].concat()),
            OsString::from_vec(vec![b'x', 0xff]),
        ] {
            let argv = vec![OsString::from("kvbench"), arg];
            // Each front end words it its own way; one error line is the rule.
            let verdict = Err(String::new());
            if let Err(failure) = run_binary(fe, &argv, &verdict, &dir) {
                panic!("{failure}");
            }
        }
    }
}

/// What the walk found: huge numbers memtier's front end once accepted, each of which
/// made the binary allocate gigabytes, spawn threads without end or wait for ever (a 4 GB
/// value buffer, 4 billion clients, room for 4 billion keys per client, a connection
/// started 290 000 years late). Each is now one usage error before anything starts.
#[test]
fn huge_loads_are_refused_before_anything_runs() {
    for (flag, says) in [
        (
            "--data-size=4294967295",
            "data-size must be at most 536870912 bytes",
        ),
        (
            "--data-size-range=1-4294967295",
            "data-size-range maximum (4294967295) must be at most 536870912 bytes",
        ),
        (
            "--data-size-list=4294967295:1",
            "size must be at most 536870912 bytes",
        ),
        ("--threads=100000", "threads must be at most 1024."),
        ("--clients=4294967295", "open files (one per connection)"),
        (
            "--multi-key-get=4294967295",
            "--multi-key-get must be at most 10000 keys",
        ),
        (
            "--thread-conn-start-max-jitter-micros=9223372036854775807",
            "must be at most 86400000000 microseconds (a day)",
        ),
    ] {
        let argv = ["kvbench", "--server=127.0.0.1", flag]
            .map(String::from)
            .to_vec();
        match memtier_parse(argv) {
            Err(message) => assert!(message.contains(says), "{flag}: {message}"),
            Ok(()) => panic!("{flag} was accepted"),
        }
    }
    // The largest values still allowed are accepted.
    for flag in [
        "--data-size=536870912",
        "--multi-key-get=10000",
        "--thread-conn-start-max-jitter-micros=86400000000",
    ] {
        let argv = ["kvbench", "--server=127.0.0.1", "--clients=1", flag]
            .map(String::from)
            .to_vec();
        assert_eq!(memtier_parse(argv), Ok(()), "{flag}");
    }
}

/// `text` with every decimal number that has a fraction read as `#` (`1796049387.572 s`
/// reads `# s`), so two readings of the clock compare equal even when a second ticks
/// over between them; whole numbers and the words around them still have to match.
fn without_fractions(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        if chars[i].is_ascii_digit() {
            let start = i;
            while i < chars.len() && chars[i].is_ascii_digit() {
                i += 1;
            }
            let fraction = i + 1 < chars.len() && chars[i] == '.' && chars[i + 1].is_ascii_digit();
            if fraction {
                i += 1;
                while i < chars.len() && chars[i].is_ascii_digit() {
                    i += 1;
                }
                out.push('#');
            } else {
                out.extend(&chars[start..i]);
            }
        } else {
            out.push(chars[i]);
            i += 1;
        }
    }
    out
}

#[test]
fn clock_readings_compare_equal_across_a_second_but_other_numbers_do_not() {
    let a = "error: --start-at=0 is 1796074660.998 s in the past (now is 1796074660.998)";
    let b = "error: --start-at=0 is 1796074661.001 s in the past (now is 1796074661.000)";
    assert_eq!(without_fractions(a), without_fractions(b));
    assert_eq!(without_fractions("at 1.5 s, port 80."), "at # s, port 80.");
    assert_ne!(
        without_fractions("-c 5: too many"),
        without_fractions("-c 6: too many")
    );
}
