//! Reads a result file into a typed model: kvbench's and memtier_benchmark's JSON, and
//! HdrHistogram interval logs (`.hgrm`, `--hdr-log`).
//!
//! This is the one place that parses result files; `merge` and the HTML report read them
//! through [`read_file`]. The model ([`model`]) keeps every figure as written, with each
//! compressed histogram (`HISTF...`: HdrHistogram V2 + DEFLATE, base64) decoded into a
//! `Histogram<u64>` of microseconds; [`run_count`] says how many runs (`-x N`) a block's
//! figures stand for.
//!
//! Every error is one line that starts with the file's name and says what is wrong:
//!
//! ```text
//! run.json: not a kvbench or memtier_benchmark result file (no "ALL STATS" or run results)
//! run.json: invalid JSON at line 3, column 8: expected value
//! run.json: "ALL STATS" > "Sets" > "Count": expected a whole number, found "12"
//! set.hgrm: line 7: "x" is not a time in seconds
//! ```

pub mod interval_log;
pub mod json;
pub mod model;
pub mod ordered;
pub mod run_count;

use std::path::Path;

use crate::error::Error;
pub use model::*;
pub use run_count::RunCount;

/// Reads and parses the file at `path`; errors name it as given.
pub fn read_file(path: &Path) -> Result<ResultFile, Error> {
    let name = path.display().to_string();
    let bytes =
        std::fs::read(path).map_err(|e| Error::usage(format!("{name}: cannot read: {e}")))?;
    let text = String::from_utf8(bytes)
        .map_err(|_| Error::usage(format!("{name}: not a result file (not UTF-8 text)")))?;
    read_str(&name, &text)
}

/// Parses `text`, the contents of the file called `name` (used in error messages). The
/// format is told from the first character: `{` for JSON, anything an interval log may
/// start with (`#`, `"StartTimestamp"`, `Tag=`, a digit) for an interval log.
pub fn read_str(name: &str, text: &str) -> Result<ResultFile, Error> {
    let fail = |msg: String| Error::usage(format!("{name}: {msg}"));
    let body = text.trim_start_matches('\u{feff}').trim_start();
    let content = match body.chars().next() {
        None => return Err(fail("empty file, not a result file".into())),
        Some('{') | Some('[') => {
            let doc = ordered::parse(text.trim_start_matches('\u{feff}')).map_err(fail)?;
            Content::Json(json::read(&doc).map_err(fail)?)
        }
        Some(c) if c == '#' || c == '"' || c.is_ascii_digit() || body.starts_with("Tag=") => {
            Content::IntervalLog(interval_log::read(text).map_err(fail)?)
        }
        Some(_) => {
            return Err(fail(
                "not a kvbench or memtier_benchmark result file, nor an HdrHistogram interval log"
                    .into(),
            ));
        }
    };
    Ok(ResultFile {
        name: name.to_string(),
        content,
    })
}

#[cfg(test)]
pub(crate) mod tests;
