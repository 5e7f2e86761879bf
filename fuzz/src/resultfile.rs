//! Result files (`merge`, the HTML report) on any text: what the `resultfile` fuzz target
//! asserts.
//!
//! - The order-keeping JSON reader: a document it reads, written back as a literal, reads
//!   back the same.
//! - [`read_str`] never panics; a refusal is one line that starts with the file's name.
//! - A file that reads merges, alone and with itself, without a panic (a refusal is one
//!   line); merged with itself its counts are twice its own. (Files whose times span
//!   more than a day are only read: see [`MAX_CHECKED_SPAN_SECONDS`].)
//! - The merge written back (as JSON, or for a log as the totals' log and one log per
//!   command) reads and merges again to the same rows and counts (a log that recorded
//!   nothing is written without intervals, and reading that back may be refused, on one
//!   line).
//!
//! Included by path from the main suite's `tests/fuzz_properties.rs`.

use kvbench::merge::{MergeOptions, MergedResult, merge};
use kvbench::report::hdr_log::{logged_commands, render_command_log, render_hdr_log};
use kvbench::report::json::render_json;
use kvbench::resultfile::{Content, ordered, read_str};

/// Checks one fuzz input: the file's text (bytes that are not UTF-8 are not a result
/// file, and `read_file` refuses them before any parser runs).
pub fn check(data: &[u8]) {
    if let Ok(text) = std::str::from_utf8(data) {
        check_text(text);
    }
}

/// Checks the readers on the text of one result file.
pub fn check_text(text: &str) {
    if let Ok(doc) = ordered::parse(text) {
        let literal = doc.to_literal();
        assert_eq!(ordered::parse(&literal), Ok(doc), "{literal}");
    }
    let file = match read_str("fuzz.json", text) {
        Ok(file) => file,
        Err(e) => {
            one_line(&e.to_string());
            assert!(e.to_string().starts_with("fuzz.json: "), "{e}");
            return;
        }
    };
    if json_span_seconds(&file.content) > MAX_CHECKED_SPAN_SECONDS {
        return;
    }
    let options = MergeOptions::default();
    let Some(alone) = merged(merge(std::slice::from_ref(&file), &options)) else {
        return;
    };
    if let Some(twice) = merged(merge(&[file.clone(), file.clone()], &options)) {
        let doubled: Vec<(String, Option<u64>)> = counts(&alone)
            .into_iter()
            .map(|(row, n)| (row, n.checked_mul(2)))
            .collect();
        let twice: Vec<(String, Option<u64>)> = counts(&twice)
            .into_iter()
            .map(|(row, n)| (row, Some(n)))
            .collect();
        assert_eq!(twice, doubled, "a file merged with itself");
    }
    let runs = std::slice::from_ref(&alone.results);
    let written = match &file.content {
        Content::Json(_) => render_json(
            &alone.shown(),
            &alone.run_info,
            &[&alone.results],
            &alone.percentiles,
            alone.hide_histogram,
        ),
        Content::IntervalLog(_) => {
            // Each command's log is a file of its own (`FILE_<CMD>`): it reads back to
            // that command's row of the merge.
            for hist in logged_commands(runs) {
                let log = render_command_log(runs, hist);
                let again = read_str("again", &log)
                    .unwrap_or_else(|e| panic!("{hist}'s log does not read: {e}\n{log}"));
                let again = merge(&[again], &MergeOptions::default())
                    .unwrap_or_else(|e| panic!("{hist}'s log does not merge: {e}\n{log}"));
                let row = |m: &MergedResult| {
                    counts(m)
                        .into_iter()
                        .find(|(row, _)| row.ends_with(&format!("/{hist}")))
                        .map(|(_, n)| n)
                };
                assert_eq!(row(&again), row(&alone), "{hist}'s log read back");
            }
            render_hdr_log(runs)
        }
    };
    // A log holds only the seconds that recorded something, so a log of a merge that
    // recorded nothing has no intervals; reading it back may refuse that, on one line.
    let empty_log = matches!(file.content, Content::IntervalLog(_))
        && alone.results.totals().is_none_or(|t| t.count == 0);
    let again = match read_str("again", &written) {
        Ok(again) => again,
        Err(e) if empty_log => return one_line(&e.to_string()),
        Err(e) => panic!("the merge written back does not read: {e}\n{written}"),
    };
    let options = MergeOptions {
        percentiles: Some(alone.percentiles.clone()),
    };
    let again = match merge(&[again], &options) {
        Ok(again) => again,
        Err(e) if empty_log => return one_line(&e.to_string()),
        Err(e) => panic!("the merge written back does not merge: {e}\n{written}"),
    };
    // A log's tags cannot hold spaces, commas or line breaks: the writer turns them into
    // `_` (documented), so names are compared as a tag would hold them.
    let as_tags = |m: &MergedResult| -> Vec<(String, u64)> {
        counts(m)
            .into_iter()
            .map(|(row, n)| (row.replace([' ', ',', '\r', '\n'], "_"), n))
            .collect()
    };
    // A log file holds the totals only (the commands' logs are checked above).
    let written_rows = |m: &MergedResult| -> Vec<(String, u64)> {
        as_tags(m)
            .into_iter()
            .filter(|(row, _)| {
                matches!(file.content, Content::Json(_)) || row.starts_with("Totals/")
            })
            .collect()
    };
    assert_eq!(
        written_rows(&again),
        written_rows(&alone),
        "merged, written, read, merged"
    );
}

/// The longest span of wall clock a merge is checked over here: a day. A merge's series
/// is dense, one entry per second of the span (up to 7 days by design, see
/// `merge::combine::MAX_SECONDS`), so a damaged start time in a small file makes a merged
/// file of hundreds of megabytes; writing and reading that back three times outlasts the
/// fuzzer's time limit without telling anything new.
const MAX_CHECKED_SPAN_SECONDS: u64 = 86_400;

/// The wall-clock span of a JSON file's blocks (earliest start to latest finish), in
/// seconds; 0 for an interval log or a file without times.
fn json_span_seconds(content: &Content) -> u64 {
    let Content::Json(json) = content else {
        return 0;
    };
    let starts = json
        .blocks
        .iter()
        .map(|b| b.runtime.start_epoch_ms)
        .filter(|&ms| ms > 0);
    let finishes = json.blocks.iter().map(|b| b.runtime.finish_epoch_ms);
    match (starts.min(), finishes.max()) {
        (Some(start), Some(finish)) => finish.saturating_sub(start) / 1000,
        _ => 0,
    }
}

/// The merge, or `None` after checking its refusal is one line.
fn merged(result: Result<MergedResult, kvbench::error::Error>) -> Option<MergedResult> {
    match result {
        Ok(m) => Some(m),
        Err(e) => {
            one_line(&e.to_string());
            None
        }
    }
}

fn one_line(message: &str) {
    assert!(
        !message.is_empty() && !message.contains(['\n', '\r']),
        "{message:?}"
    );
}

/// Each row's name (table and histogram) and count.
fn counts(m: &MergedResult) -> Vec<(String, u64)> {
    m.results
        .rows
        .iter()
        .map(|row| (format!("{}/{}", row.name.row, row.name.hist), row.count))
        .collect()
}
