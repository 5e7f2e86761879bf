//! `kvbench intrinsic-latency`'s flags, parsed as typed (clap) and validated into
//! [`Options`]; every usage error is one line found here.

use std::ffi::OsString;
use std::time::Duration;

use clap::error::ErrorKind;
use clap::{CommandFactory, FromArgMatches, Parser};

use crate::error::Error;
use crate::frontend::common::usage::one_line;

/// Longest run accepted: a day.
const MAX_SECONDS: f64 = 86_400.0;
/// The shortest test: a millisecond.
const MIN_SECONDS: f64 = 0.001;
/// redis-cli's spelling of the test, taken as a prefix to `SECONDS`.
pub const REDIS_CLI_FLAG: &str = "--intrinsic-latency";

/// The flags as typed.
#[derive(Parser, Debug)]
#[command(
    name = "kvbench intrinsic-latency",
    bin_name = "kvbench intrinsic-latency",
    about = "Measure the latency this machine itself adds: the longest a busy loop, pinned \
             to one CPU, is kept from running (redis-cli --intrinsic-latency). No server \
             is involved; run it on the server's host.",
    version = env!("CARGO_PKG_VERSION"),
    after_help = "Prints `Max latency so far: N microseconds.` at each new maximum, then the \
                  number of runs with their average and how much longer the worst run took. \
                  Ctrl-C ends the test early with the same summary."
)]
struct Flags {
    /// How long to run the test, in seconds (decimals allowed).
    #[arg(value_name = "SECONDS", value_parser = parse_seconds, allow_negative_numbers = true)]
    seconds: Duration,

    /// Pin the test to this CPU (default: the CPU it starts on).
    // Hyphen values reach the parser, which says what a CPU number is (`--cpu -1`).
    #[arg(long, value_name = "N", value_parser = parse_cpu, allow_hyphen_values = true)]
    cpu: Option<usize>,
}

/// Validated `kvbench intrinsic-latency` options.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// How long the busy loop runs.
    pub duration: Duration,
    /// The CPU to pin to, if chosen.
    pub cpu: Option<usize>,
}

/// What the command line asks for.
#[derive(Debug)]
pub enum Parsed {
    /// Run the test.
    Run(Options),
    /// Print this text to stdout and exit 0 (`--help`).
    Print(String),
}

/// The clap command, for `--help`, completions, the man page and the flag-walk test.
pub fn command() -> clap::Command {
    Flags::command()
}

/// Parses the tool's argv (the first item is the program name, ignored).
pub fn parse(args: Vec<OsString>) -> Result<Parsed, Error> {
    // `redis-cli -h HOST --intrinsic-latency 5`, translated word for word: -h beside
    // other words is that host, not a request for help (which would exit 0 unrun).
    if args.len() > 2 && args.iter().skip(1).any(|a| a == "-h") {
        return Err(Error::usage(
            "-h: intrinsic-latency measures the machine it runs on and takes no server \
             (redis-cli ignores -h there); drop -h HOST, and run it on the server's host \
             (the help is --help)",
        ));
    }
    let matches = match Flags::command().try_get_matches_from(redis_cli_words(args)) {
        Ok(m) => m,
        Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => {
            return Ok(Parsed::Print(e.to_string()));
        }
        Err(e) => return Err(one_line(&e)),
    };
    let flags = Flags::from_arg_matches(&matches).map_err(|e| one_line(&e))?;
    Ok(Parsed::Run(Options {
        duration: flags.seconds,
        cpu: flags.cpu,
    }))
}

/// redis-cli's `--intrinsic-latency SECONDS` (also `--intrinsic-latency=SECONDS`) as
/// `SECONDS`, so that the tutorials' `redis-cli --intrinsic-latency 30` runs with only the
/// tool's name changed, as `kvbench latency` takes redis-cli's `--latency`. The flag stays
/// out of `--help`: the positional `SECONDS` is the spelling taught there.
fn redis_cli_words(args: Vec<OsString>) -> Vec<OsString> {
    let mut words = Vec::with_capacity(args.len());
    for (i, arg) in args.into_iter().enumerate() {
        if i == 0 {
            words.push(arg);
            continue;
        }
        match arg.to_str() {
            // The next word, SECONDS, is then the positional one.
            Some(REDIS_CLI_FLAG) => {}
            Some(word) => match word
                .strip_prefix(REDIS_CLI_FLAG)
                .and_then(|w| w.strip_prefix('='))
            {
                Some(seconds) => words.push(OsString::from(seconds)),
                None => words.push(arg),
            },
            None => words.push(arg),
        }
    }
    words
}

/// `SECONDS` (decimals allowed, at least a millisecond, at most a day).
/// `--cpu N`: a CPU number, said so when it is not one (not Rust's "invalid digit").
fn parse_cpu(raw: &str) -> Result<usize, String> {
    raw.trim()
        .parse()
        .map_err(|_| "expected a CPU number (0 or more)".to_string())
}

fn parse_seconds(raw: &str) -> Result<Duration, String> {
    let seconds: f64 = raw
        .trim()
        .parse()
        .map_err(|_| "not a number of seconds".to_string())?;
    // Infinity (`inf`, `1e400`) is past the day below and is refused as such.
    if seconds.is_nan() || seconds <= 0.0 {
        return Err("the test must run for more than 0 seconds".to_string());
    }
    if seconds < MIN_SECONDS {
        // Shorter rounds to no time at all: one pass, "Worst run took 0x".
        return Err("the test must run for at least a millisecond (0.001 seconds)".to_string());
    }
    if seconds > MAX_SECONDS {
        return Err("the test may run for at most a day (86400 seconds)".to_string());
    }
    Ok(Duration::from_secs_f64(seconds))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_args(args: &[&str]) -> Result<Parsed, Error> {
        parse(
            std::iter::once("kvbench intrinsic-latency")
                .chain(args.iter().copied())
                .map(OsString::from)
                .collect(),
        )
    }

    #[test]
    fn seconds_and_cpu() {
        match parse_args(&["30"]) {
            Ok(Parsed::Run(o)) => assert_eq!(
                o,
                Options {
                    duration: Duration::from_secs(30),
                    cpu: None
                }
            ),
            other => panic!("{other:?}"),
        }
        match parse_args(&["--cpu", "1", "0.25"]) {
            Ok(Parsed::Run(o)) => {
                assert_eq!(o.duration, Duration::from_millis(250));
                assert_eq!(o.cpu, Some(1));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn bad_values_are_one_line_errors() {
        for (args, needle) in [
            (&[][..], "SECONDS"),
            (&["abc"][..], "not a number of seconds"),
            (&["0"][..], "more than 0 seconds"),
            (&["-3"][..], "more than 0 seconds"),
            (&["1e-12"][..], "at least a millisecond"),
            (&["0.0009"][..], "at least a millisecond"),
            (&["inf"][..], "at most a day (86400 seconds)"),
            (&["1e400"][..], "at most a day (86400 seconds)"),
            (&["--", "-inf"][..], "more than 0 seconds"),
            (&["nan"][..], "more than 0 seconds"),
            (&["100000"][..], "at most a day"),
            (&["1", "2"][..], "unexpected argument"),
            (&["--cpu", "x", "1"][..], "--cpu"),
        ] {
            let msg = match parse_args(args) {
                Err(e) => e.to_string(),
                other => panic!("{args:?} should fail: {other:?}"),
            };
            assert!(msg.contains(needle), "{args:?}: {msg}");
            assert!(!msg.contains('\n'), "{args:?}: {msg:?}");
        }
    }

    #[test]
    fn redis_cli_spelling_is_the_seconds() {
        for args in [
            &["--intrinsic-latency", "0.25"][..],
            &["--intrinsic-latency=0.25"][..],
            &["--cpu", "1", "--intrinsic-latency", "0.25"][..],
        ] {
            match parse_args(args) {
                Ok(Parsed::Run(o)) => assert_eq!(o.duration, Duration::from_millis(250)),
                other => panic!("{args:?}: {other:?}"),
            }
        }
        for (args, needle) in [
            (&["--intrinsic-latency"][..], "SECONDS"),
            (&["--intrinsic-latency", "-5"][..], "more than 0 seconds"),
            (&["--intrinsic-latency=abc"][..], "not a number of seconds"),
            (
                &["--intrinsic-latency", "1", "2"][..],
                "unexpected argument",
            ),
        ] {
            match parse_args(args) {
                Err(e) => assert!(e.to_string().contains(needle), "{args:?}: {e}"),
                other => panic!("{args:?} should fail: {other:?}"),
            }
        }
    }

    #[test]
    fn a_host_given_with_h_is_refused_not_help() {
        match parse_args(&["-h", "127.0.0.1", "5"]) {
            Err(e) => assert!(e.to_string().contains("takes no server"), "{e}"),
            other => panic!("{other:?}"),
        }
        assert!(matches!(parse_args(&["-h"]), Ok(Parsed::Print(_))));
    }

    #[test]
    fn help_is_printed() {
        match parse_args(&["--help"]) {
            Ok(Parsed::Print(text)) => {
                assert!(text.contains("Usage: kvbench intrinsic-latency [OPTIONS] <SECONDS>"));
                assert!(text.contains("--cpu"));
            }
            other => panic!("{other:?}"),
        }
    }
}
