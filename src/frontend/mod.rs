//! The command lines kvbench speaks: one folder per tool, each parsing its own flags into
//! the engine's plan and rendering its own output. [`FRONT_ENDS`] is the one list of them.
//!
//! `main` picks a front end with [`pick`]: by the first argument (`kvbench
//! memtier_benchmark ...`), else by the program's file name (a link named
//! `memtier_benchmark`), else memtier's, which is kvbench's default command line.

pub mod common;
pub mod intrinsic_latency;
pub mod latency;
pub mod manual;
pub mod memtier;
pub mod merge;
pub mod redis_benchmark;
pub mod report;
pub mod zbench;

use std::ffi::OsString;
use std::path::Path;

use crate::error::Error;

/// A front end's entry point: the whole argv (program name first, the front end's own
/// name already removed when it was the first argument); returns the exit status.
pub type Entry = fn(Vec<OsString>) -> Result<u8, Error>;

/// Every front end by the name that selects it. Adding a tool is one line here and its
/// folder beside `memtier/`.
///
/// Every command kvbench speaks is in the table.
pub const FRONT_ENDS: &[(&str, Entry)] = &[
    ("memtier_benchmark", memtier::main),
    ("latency", latency::main),
    ("intrinsic-latency", intrinsic_latency::main),
    ("merge", merge::main),
    ("report", report::main),
    ("completions", manual::completions::main),
    ("man", manual::man::main),
    ("redis-benchmark", redis_benchmark::main),
    ("zbench", zbench::main),
];

/// The front end for `args` (as from `std::env::args_os()`) and the argv to hand it.
pub fn pick(mut args: Vec<OsString>) -> (Entry, Vec<OsString>) {
    let by_first = args.get(1).and_then(|a| a.to_str()).and_then(find);
    if let Some(entry) = by_first {
        args.remove(1);
        return (entry, args);
    }
    let program = args
        .first()
        .and_then(|p| Path::new(p).file_name())
        .and_then(|n| n.to_str())
        .and_then(find);
    (program.unwrap_or(memtier::main), args)
}

fn find(name: &str) -> Option<Entry> {
    FRONT_ENDS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, entry)| *entry)
}

/// The arguments as UTF-8 strings: every front end's flags are text, so a byte sequence
/// that is not is a usage error, not a panic.
pub fn utf8_args(args: Vec<OsString>) -> Result<Vec<String>, Error> {
    args.into_iter()
        .map(|a| {
            a.into_string().map_err(|a| {
                Error::usage(format!(
                    "argument '{}' is not valid UTF-8",
                    a.to_string_lossy()
                ))
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(args: &[&str]) -> Vec<OsString> {
        args.iter().map(OsString::from).collect()
    }

    #[test]
    fn first_word_then_program_name_then_memtier() {
        let memtier = memtier::main as Entry;
        let (entry, rest) = pick(argv(&["kvbench", "memtier_benchmark", "-n", "5"]));
        assert_eq!(entry as usize, memtier as usize);
        assert_eq!(rest, argv(&["kvbench", "-n", "5"]));
        let (entry, rest) = pick(argv(&["/usr/local/bin/memtier_benchmark", "-n", "5"]));
        assert_eq!(entry as usize, memtier as usize);
        assert_eq!(rest.len(), 3);
        let (_, rest) = pick(argv(&["kvbench", "--ratio=1:1"]));
        assert_eq!(rest, argv(&["kvbench", "--ratio=1:1"]));
        let (_, rest) = pick(argv(&[]));
        assert!(rest.is_empty());
    }
}
