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

/// A front end as the walk sees it.
struct FrontEnd {
    /// The word that selects it on kvbench's command line (`None`: the default, memtier).
    word: Option<&'static str>,
    /// Its clap definition.
    command: fn() -> Command,
    /// Its parse and validation, in-process: `Err` with what `main` would print after
    /// `error: `, `Ok` when the command line would go on to run.
    parse: fn(Vec<String>) -> Result<(), String>,
    /// Put before each walked flag: a closed port on 127.0.0.1, so that an accepted
    /// value ends at the connection. `{port}` is replaced.
    target: &'static [&'static str],
    /// Whether the binary dispatches to it yet (else it is walked in-process only).
    wired: bool,
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

fn front_ends() -> Vec<FrontEnd> {
    vec![FrontEnd {
        word: None,
        command: kvbench::frontend::memtier::parse::command,
        parse: memtier_parse,
        target: &["--server=127.0.0.1", "--port={port}"],
        wired: true,
    }]
}

/// Flags whose value names a host: a value like `1.5` or `4294967295` is an IPv4
/// address to the resolver (`1.0.0.5`, `255.255.255.255`), and the walk sends nothing
/// anywhere but 127.0.0.1, so those are not given to them.
fn names_a_host(arg: &Arg) -> bool {
    let long = arg.get_long().unwrap_or_default();
    let value_names: Vec<String> = arg
        .get_value_names()
        .unwrap_or_default()
        .iter()
        .map(|n| n.to_string())
        .collect();
    long.contains("host")
        || long == "server"
        || long == "uri"
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
    /// Run through the binary too (one spelling per flag and value).
    binary: bool,
}

fn cases(front_ends: &[FrontEnd]) -> Vec<Case> {
    let mut out = Vec::new();
    for (front, fe) in front_ends.iter().enumerate() {
        let command = (fe.command)();
        for arg in command.get_arguments() {
            if arg.is_positional() {
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
                            binary: fe.wired,
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
                }
                if let Some(short) = short {
                    spellings.push(vec![format!("-{short}"), v.to_string()]);
                }
                for (i, words) in spellings.into_iter().enumerate() {
                    out.push(Case {
                        front,
                        words,
                        binary: fe.wired && i == 0,
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
    if let Some(word) = fe.word {
        cmd.arg(word);
    }
    cmd.args(&argv[1..])
        .current_dir(dir.path())
        .env("RUST_BACKTRACE", "1");
    let started = Instant::now();
    let out = run_with_timeout(cmd, HANG);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let shown = format!("{:?}", &argv[1..]);
    if stderr.contains("panicked") || stderr.contains("backtrace") {
        return Err(format!("{shown}: panic or backtrace:\n{stderr}"));
    }
    if out.status.code() != Some(1) {
        return Err(format!(
            "{shown}: exit status {:?}, not 1 (after {:?}):\n{stderr}",
            out.status,
            started.elapsed()
        ));
    }
    let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    match verdict {
        Err(message) => {
            let want = format!("error: {message}");
            if lines != [want.as_str()] {
                return Err(format!(
                    "{shown}: refused in-process with {want:?}, the binary printed:\n{stderr}"
                ));
            }
        }
        Ok(()) => {
            // Accepted: it ran, against a closed port, and ended on one error line.
            if !lines.last().is_some_and(|l| l.starts_with("error: ")) {
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
                    let argv: Vec<String> = std::iter::once("kvbench".to_string())
                        .chain(fe.target.iter().map(|w| w.replace("{port}", &port)))
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
    for fe in front_ends().iter().filter(|fe| fe.wired) {
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
            let verdict = Err(format!(
                "argument '{}' is not valid UTF-8",
                argv[1].to_string_lossy()
            ));
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
