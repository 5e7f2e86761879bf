//! The flags of `kvbench merge`, as typed, and the merge options they give.

use std::path::PathBuf;

use clap::{CommandFactory, Parser};

use crate::frontend::common::percentiles;
use crate::merge::MergeOptions;

/// `kvbench merge [OPTIONS] FILE...`: one exact result from the results of several shards.
#[derive(Parser, Clone, Debug, PartialEq)]
#[command(
    name = "kvbench merge",
    bin_name = "kvbench merge",
    version = env!("CARGO_PKG_VERSION"),
    about = "Merge the results of several kvbench or memtier_benchmark runs (the shards of one \
             workload) into one: counts and rates summed, percentiles from the summed \
             HdrHistograms, seconds aligned by wall clock.",
    after_help = "Give JSON result files (kvbench's or memtier_benchmark's --json-out-file), or \
                  HdrHistogram interval logs (.hgrm files, --hdr-log files), not both. \
                  See docs/distributed.md for the exact rules."
)]
pub struct MergeFlags {
    /// Result files to merge, in order.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,

    /// Write the merged result as JSON, in the --json-out-file format.
    #[arg(long = "json-out-file", value_name = "FILE")]
    pub json_out_file: Option<PathBuf>,

    /// Write the merged HDR histogram files (PREFIX_FULL_RUN_1.txt, .hgrm, per command).
    #[arg(long = "hdr-file-prefix", value_name = "PREFIX")]
    pub hdr_file_prefix: Option<String>,

    /// Write the merged per-second histograms as HdrHistogram interval logs: all commands
    /// to FILE, each command to FILE_<CMD>.
    #[arg(long = "hdr-log", value_name = "FILE")]
    pub hdr_log: Option<PathBuf>,

    /// Write the ALL STATS table to FILE instead of standard output.
    #[arg(short = 'o', long = "out-file", value_name = "FILE")]
    pub out_file: Option<PathBuf>,

    /// Percentiles to print and compute per second (default: the first file's).
    #[arg(long = "print-percentiles", value_name = "LIST", value_parser = parse_percentiles)]
    pub print_percentiles: Option<Percentiles>,

    /// Leave the latency distribution out of the table and the JSON.
    #[arg(long = "hide-histogram")]
    pub hide_histogram: bool,
}

/// The clap command, for `--help`, completions and the man page.
pub fn command() -> clap::Command {
    MergeFlags::command()
}

/// A `--print-percentiles` list: `50,99,99.9`.
#[derive(Clone, Debug, PartialEq)]
pub struct Percentiles(pub Vec<f64>);

/// `50,99,99.9` -> percentiles; the message is memtier's for its own flag.
fn parse_percentiles(raw: &str) -> Result<Percentiles, String> {
    percentiles::parse_percentiles(raw)
        .map(Percentiles)
        // The message ends a sentence; the one-line error adds "; see --help" after it.
        .map_err(|e| e.message().trim_end_matches('.').to_string())
}

impl MergeFlags {
    /// The options for `crate::merge::merge_files`.
    pub fn options(&self) -> MergeOptions {
        MergeOptions {
            percentiles: self.print_percentiles.as_ref().map(|p| p.0.clone()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<MergeFlags, String> {
        MergeFlags::try_parse_from(std::iter::once("kvbench merge").chain(args.iter().copied()))
            .map_err(|e| e.to_string())
    }

    #[test]
    fn files_and_outputs() {
        let f = parse(&[
            "--json-out-file=all.json",
            "--hdr-file-prefix",
            "all",
            "--hdr-log=all.hlog",
            "-o",
            "all.txt",
            "--print-percentiles=50,99.99",
            "--hide-histogram",
            "a.json",
            "b.json",
        ])
        .unwrap();
        assert_eq!(f.files, [PathBuf::from("a.json"), PathBuf::from("b.json")]);
        assert_eq!(f.json_out_file, Some(PathBuf::from("all.json")));
        assert_eq!(f.hdr_file_prefix.as_deref(), Some("all"));
        assert_eq!(f.hdr_log, Some(PathBuf::from("all.hlog")));
        assert_eq!(f.out_file, Some(PathBuf::from("all.txt")));
        assert!(f.hide_histogram);
        assert_eq!(f.options().percentiles, Some(vec![50.0, 99.99]));
        assert_eq!(parse(&["a.json"]).unwrap().options().percentiles, None);
    }

    #[test]
    fn bad_input_is_a_usage_error() {
        let e = parse(&[]).unwrap_err();
        assert!(e.contains("required"), "{e}");
        let e = parse(&["--print-percentiles=50,101", "a.json"]).unwrap_err();
        assert!(e.contains("quantiles must be expressed as"), "{e}");
        let e = parse(&["--nope", "a.json"]).unwrap_err();
        assert!(e.contains("--nope"), "{e}");
    }
}
