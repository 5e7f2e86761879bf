//! memtier's `--config` expansion on any file and command line: what the `config` fuzz
//! target asserts.
//!
//! The file is written to a scratch path and named with `--config=`, as a user would;
//! the rest of the input is the command line after it. Parsing (the file's JSON, its
//! keys turned into flags, the clashes with the command line settled, clap) must never
//! panic, and a refusal is shown on one line.
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

/// Parses `kvbench --config=<file> <words...>` and checks the outcome.
pub fn check_parse(file: &[u8], words: &[String]) {
    let path = scratch();
    if let Err(e) = std::fs::write(&path, file) {
        panic!(
            "cannot write the scratch config file {}: {e}",
            path.display()
        );
    }
    let argv = [
        "kvbench".to_string(),
        format!("--config={}", path.display()),
    ]
    .into_iter()
    .chain(words.iter().cloned());
    let parsed = parse_args(argv);
    let _ = std::fs::remove_file(&path);
    match parsed {
        Ok(Parsed::Run(_) | Parsed::Print(_)) => {}
        Err(e) => {
            // What `main` prints after `error: `.
            let shown = e.to_string();
            assert!(
                !shown.is_empty() && !shown.contains(['\n', '\r']),
                "{shown:?}"
            );
        }
    }
}
