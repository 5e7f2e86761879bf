//! `kvbench report`'s flags, parsed as typed (clap) and validated into [`Options`]; every
//! usage error is one line found here.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::error::ErrorKind;
use clap::{ArgAction, CommandFactory, FromArgMatches, Parser};

use crate::error::Error;
use crate::frontend::common::usage::one_line;

/// The flags as typed.
#[derive(Parser, Debug)]
#[command(
    name = "kvbench report",
    bin_name = "kvbench report",
    about = "Render result files as one self-contained HTML page: the ALL STATS table, the \
             latency percentile spectrum, throughput and latency per second, a rate sweep's \
             curve and the configuration. With several files the runs are overlaid and \
             compared to the first.",
    version = env!("CARGO_PKG_VERSION"),
    after_help = "Reads --json-out-file results: kvbench's (one run, -x N, merged, a rate \
                  sweep) and memtier_benchmark's. The page loads nothing from anywhere: no \
                  script, font or style sheet, so it reads the same offline or attached to a \
                  ticket. See docs/report.md."
)]
struct Flags {
    /// JSON result files, the baseline first.
    #[arg(required = true, value_name = "RUN.json")]
    files: Vec<PathBuf>,

    /// Write the page to FILE (replaced atomically); `-` writes it to standard output.
    #[arg(short = 'o', long = "out-file", value_name = "FILE", required = true)]
    out_file: PathBuf,

    /// The page's heading (default: kvbench report).
    #[arg(long, value_name = "TEXT", allow_hyphen_values = true)]
    title: Option<String>,

    /// A run's name in legends and tables, one per file in order (default: the file's
    /// name).
    #[arg(long = "label", value_name = "NAME", action = ArgAction::Append,
          allow_hyphen_values = true)]
    labels: Vec<String>,
}

/// Where the page goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Output {
    /// Standard output (`-o -`).
    Stdout,
    /// This file, replaced atomically.
    File(PathBuf),
}

/// Validated `kvbench report` options.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// The result files, in order (the first is the baseline).
    pub files: Vec<PathBuf>,
    /// Each file's run name, one per file.
    pub labels: Vec<String>,
    pub output: Output,
    /// Empty for the page's default heading.
    pub title: String,
}

/// What the command line asks for.
#[derive(Debug)]
pub enum Parsed {
    /// Render the report.
    Run(Options),
    /// Print this text to stdout and exit 0 (`--help`).
    Print(String),
}

/// The clap command, for `--help`, completions and the man page.
pub fn command() -> clap::Command {
    Flags::command()
}

/// Parses the tool's argv (the first item is the program name, ignored).
pub fn parse(args: Vec<OsString>) -> Result<Parsed, Error> {
    let matches = match Flags::command().try_get_matches_from(args) {
        Ok(m) => m,
        Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => {
            return Ok(Parsed::Print(e.to_string()));
        }
        Err(e) => return Err(one_line(&e)),
    };
    let flags = Flags::from_arg_matches(&matches).map_err(|e| one_line(&e))?;
    if flags.labels.len() > flags.files.len() {
        return Err(Error::usage(format!(
            "--label given {} times for {} file(s): one label per file, in order",
            flags.labels.len(),
            flags.files.len()
        )));
    }
    if flags.out_file.as_os_str().is_empty() {
        return Err(Error::usage(
            "--out-file needs a file name (or - for stdout)",
        ));
    }
    if flags.title.as_deref().is_some_and(|t| t.trim().is_empty()) {
        return Err(Error::usage(
            "--title needs some text (leave it out for the default, kvbench report)",
        ));
    }
    let output = if flags.out_file.as_os_str() == "-" {
        Output::Stdout
    } else {
        Output::File(flags.out_file)
    };
    let labels = default_labels(&flags.files)
        .into_iter()
        .enumerate()
        .map(|(i, default)| flags.labels.get(i).cloned().unwrap_or(default))
        .collect();
    Ok(Parsed::Run(Options {
        files: flags.files,
        labels,
        output,
        title: flags.title.unwrap_or_default(),
    }))
}

/// Each file's name without its directory, or the path as given where two files share a
/// name (`a/run.json` and `b/run.json`).
fn default_labels(files: &[PathBuf]) -> Vec<String> {
    let short = |p: &PathBuf| {
        p.file_name().map_or_else(
            || p.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        )
    };
    files
        .iter()
        .map(|p| {
            let name = short(p);
            if files.iter().filter(|q| short(q) == name).count() > 1 {
                p.display().to_string()
            } else {
                name
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_args(args: &[&str]) -> Result<Parsed, Error> {
        parse(
            std::iter::once("kvbench report")
                .chain(args.iter().copied())
                .map(OsString::from)
                .collect(),
        )
    }

    fn options(args: &[&str]) -> Options {
        match parse_args(args).unwrap() {
            Parsed::Run(o) => o,
            Parsed::Print(t) => panic!("printed {t}"),
        }
    }

    fn error(args: &[&str]) -> String {
        parse_args(args).unwrap_err().message().to_string()
    }

    #[test]
    fn files_output_title_and_labels() {
        let o = options(&["a/run.json", "b/run.json", "c/new.json", "-o", "r.html"]);
        assert_eq!(o.labels, ["a/run.json", "b/run.json", "new.json"]);
        assert_eq!(o.output, Output::File(PathBuf::from("r.html")));
        assert_eq!(o.title, "");
        let o = options(&[
            "x.json",
            "y.json",
            "--out-file=-",
            "--title",
            "--pipeline=1 vs --pipeline=8",
            "--label=before",
        ]);
        assert_eq!(o.labels, ["before", "y.json"]);
        assert_eq!(o.output, Output::Stdout);
        assert_eq!(o.title, "--pipeline=1 vs --pipeline=8");
    }

    #[test]
    fn usage_errors_are_one_line() {
        let e = error(&["-o", "r.html"]);
        assert!(e.contains("RUN.json"), "{e}");
        assert!(e.ends_with("see --help"), "{e}");
        let e = error(&["x.json"]);
        assert!(e.contains("--out-file"), "{e}");
        assert_eq!(
            error(&["x.json", "-o", "r.html", "--label=a", "--label=b"]),
            "--label given 2 times for 1 file(s): one label per file, in order"
        );
        let e = error(&["x.json", "-o", "r.html", "--nope"]);
        assert!(e.starts_with("unexpected argument '--nope'"), "{e}");
        for e in [error(&["-o", "r.html"]), error(&["x.json", "-o", ""])] {
            assert!(!e.contains('\n'), "{e}");
        }
    }

    #[test]
    fn help_is_printed() {
        match parse_args(&["--help"]).unwrap() {
            Parsed::Print(text) => assert!(text.contains("--out-file"), "{text}"),
            Parsed::Run(_) => panic!("--help ran"),
        }
    }
}
