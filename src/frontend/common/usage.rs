//! A clap error as kvbench's one-line usage error, for the front ends that word their
//! errors as kvbench does (memtier's, `latency`, `intrinsic-latency`); tools that mimic
//! another program's words (redis-benchmark, zbench) keep their own.

use std::fmt::Write as _;

use clap::error::{ContextKind, ContextValue, ErrorKind};

use crate::error::Error;

/// Turns a clap error into one line: no usage block, no colour, what a "not provided:"
/// line refers to appended to it, clap's suggestion if it made one, and a pointer to
/// `--help`:
///
/// ```text
/// unexpected argument '--nope' (did you mean '--no-raw'?); see --help
/// the following required arguments were not provided: --dist; see --help
/// ```
pub fn one_line(e: &clap::Error) -> Error {
    let rendered = e.to_string();
    let first = rendered
        .lines()
        .next()
        .unwrap_or("invalid arguments")
        .trim()
        .trim_start_matches("error: ")
        .to_string();
    let mut msg = match (e.kind(), e.get(ContextKind::InvalidArg)) {
        (ErrorKind::UnknownArgument, Some(ContextValue::String(arg))) => {
            format!("unexpected argument '{arg}'")
        }
        // clap puts what a "... not provided:" line refers to on the lines below it.
        _ if first.ends_with(':') => {
            let detail: Vec<&str> = rendered
                .lines()
                .skip(1)
                .map(str::trim)
                .take_while(|l| !l.is_empty())
                .collect();
            format!("{first} {}", detail.join(" "))
        }
        _ => first,
    };
    match e.get(ContextKind::SuggestedArg) {
        Some(ContextValue::String(s)) => {
            let _ = write!(msg, " (did you mean '{s}'?)");
        }
        Some(ContextValue::Strings(v)) if !v.is_empty() => {
            let _ = write!(msg, " (did you mean '{}'?)", v.join("' or '"));
        }
        _ => {}
    }
    // A value outside a fixed set: the set, which clap's rendering puts on a line of its
    // own that the first line leaves out.
    if let Some(ContextValue::Strings(valid)) = e.get(ContextKind::ValidValue)
        && !valid.is_empty()
    {
        let _ = write!(msg, " (one of: {})", valid.join(", "));
    }
    Error::usage(format!("{msg}; see --help"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{Arg, ArgAction, Command};

    fn command() -> Command {
        Command::new("kvbench test")
            .arg(Arg::new("dist").long("dist").action(ArgAction::SetTrue))
            .arg(
                Arg::new("mono")
                    .long("mono")
                    .action(ArgAction::SetTrue)
                    .requires("dist"),
            )
            .arg(
                Arg::new("precision")
                    .long("precision")
                    .value_parser(["ms", "us"]),
            )
    }

    fn error(args: &[&str]) -> String {
        let argv = std::iter::once("kvbench test").chain(args.iter().copied());
        let e = command().try_get_matches_from(argv).unwrap_err();
        one_line(&e).to_string()
    }

    #[test]
    fn unknown_arguments_missing_requirements_and_suggestions() {
        assert_eq!(
            error(&["--dits"]),
            "unexpected argument '--dits' (did you mean '--dist'?); see --help"
        );
        assert_eq!(
            error(&["--mono"]),
            "the following required arguments were not provided: --dist; see --help"
        );
        assert_eq!(error(&["x"]), "unexpected argument 'x'; see --help");
        assert_eq!(
            error(&["--precision", "s"]),
            "invalid value 's' for '--precision <precision>' (one of: ms, us); see --help"
        );
    }
}
