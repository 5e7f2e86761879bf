//! memtier's `--config` expansion on any file and command line: what the `config` fuzz
//! target asserts.
//!
//! The file is written to a scratch path and named with `--config=`, as a user would;
//! the rest of the input is the command line after it. Parsing (the file's JSON, its
//! keys turned into flags, the clashes with the command line settled, clap) must never
//! panic; a refusal is one line; the same input parses the same way twice.
//!
//! Included by path from the main suite's `tests/fuzz_properties.rs`.

use std::path::PathBuf;

use kvbench::frontend::memtier::{Parsed, parse_args};

/// The scratch file this process writes each input's config file to.
fn scratch() -> PathBuf {
    std::env::temp_dir().join(format!("kvbench-fuzz-config-{}.json", std::process::id()))
}

/// Checks one fuzz input: the config file's bytes up to the first NUL; after it, the
/// command-line words that follow `--config=FILE`, separated by NULs.
pub fn check(data: &[u8]) {
    let (file, rest) = match data.iter().position(|&b| b == 0) {
        Some(nul) => (&data[..nul], &data[nul + 1..]),
        None => (data, &[][..]),
    };
    let words: Vec<String> = if rest.is_empty() {
        Vec::new()
    } else {
        rest.split(|&b| b == 0)
            .map(|w| String::from_utf8_lossy(w).into_owned())
            .collect()
    };
    check_parse(file, &words);
}

/// Parses `kvbench --config=<file> <words...>` twice and checks the outcome.
pub fn check_parse(file: &[u8], words: &[String]) {
    let path = scratch();
    if let Err(e) = std::fs::write(&path, file) {
        panic!(
            "cannot write the scratch config file {}: {e}",
            path.display()
        );
    }
    let argv = || {
        [
            "kvbench".to_string(),
            format!("--config={}", path.display()),
        ]
        .into_iter()
        .chain(words.iter().cloned())
    };
    let first = describe(parse_args(argv()));
    let second = describe(parse_args(argv()));
    assert_eq!(first, second, "the same command line parsed two ways");
}

/// The outcome as text, checking that a refusal is one line.
fn describe(parsed: Result<Parsed, kvbench::error::Error>) -> String {
    match parsed {
        Ok(parsed) => format!("{parsed:?}"),
        Err(e) => {
            // What `main` prints after `error: `.
            let shown = e.to_string();
            assert!(
                !shown.is_empty() && !shown.contains(['\n', '\r']),
                "{shown:?}"
            );
            format!("error: {shown}")
        }
    }
}
