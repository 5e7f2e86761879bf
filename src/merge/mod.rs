//! Merges several result files (the shards of one workload) into one [`Results`], exactly:
//! counts summed, latency from the sum of the HdrHistograms, seconds aligned by wall clock.
//!
//! Front-end neutral: [`merge_files`] reads the files through [`crate::resultfile`] and
//! returns a [`MergedResult`] that the existing writers render (the ALL STATS table, the
//! JSON with [`MergedResult::shown`], the HDR files). docs/distributed.md states the rules;
//! in short:
//!
//! - **Inputs.** All JSON results (kvbench's or memtier_benchmark's) or all interval logs.
//!   Each JSON file contributes its whole run: `ALL STATS`, or for `-x N` files the
//!   AGGREGATED block (its seconds from the `RUN #i` blocks). The files must have the same
//!   command rows and one protocol family (RESP or memcached). Files of different run
//!   counts (`-x 3` beside `-x 2`) are merged with a note saying what the figures then are.
//! - **Counts** (requests, connection errors, bytes per second) are summed.
//! - **Rates** (Ops/sec, Hits/sec, Misses/sec, MOVED/sec, ASK/sec, Connection Errors/sec,
//!   KB/sec) are the sum of the inputs' rates, each input's count over its own duration.
//!   That is the aggregate rate over the common window, the span in which all inputs ran,
//!   taking each input's rate as steady; shards started together with the same
//!   `--test-time` share their whole window. (Count over the merged span would understate
//!   it by every shard's start-up skew and tail.)
//! - **Latency** of every row: percentiles, min, max and average all from the sum of the
//!   inputs' histograms (never an average of percentiles).
//! - **Seconds**: an input's second *i* starts at its start time + *i* s and is counted in
//!   the epoch second nearest that start; merged seconds sum counts and bytes and take
//!   latency from the sum of that second's histograms where every input has one (interval
//!   logs), else the true mean, min and max and no percentiles (JSON carries none per
//!   second).
//! - **Runtime**: earliest start to latest finish; interrupted if any input was.
//! - **Open loop**: service times like response times (summed histograms); the
//!   `"Schedule"` with targets, achieved rates and counts summed and the send lag from the
//!   summed histograms ([`schedule`]).
//! - **Pools and replicas**: per-server rows matched by address, the visibility lag like
//!   a row, its timeouts summed; TRYAGAIN and error counts summed.
//! - **Unanswered requests** (a closed loop's `"Unfinished"`): counts summed, the oldest
//!   age the largest; the warning judged again against the merged slowest answer.
//! - **Rate sweeps**: step by step ([`sweep`]).

mod combine;
mod from_json;
mod from_logs;
mod inputs;
mod schedule;
mod sweep;

use std::path::Path;

use crate::error::Error;
use crate::plan::Shard;
use crate::report::RunInfo;
use crate::resultfile::ordered::Json;
use crate::resultfile::{Content, IntervalLog, JsonResult, ResultFile, read_file};
use crate::results::{Results, SweepReport};

/// Choices a front end passes to the merge.
#[derive(Clone, Debug, Default)]
pub struct MergeOptions {
    /// Percentiles for the merged per-second figures and the JSON's keys; default: the
    /// first JSON file's (`p50.00`, `p99.00`, `p99.90`...), or 50, 99, 99.9 for logs.
    pub percentiles: Option<Vec<f64>>,
}

/// The merged result and what the JSON writer needs beside it.
#[derive(Clone, Debug)]
pub struct MergedResult {
    /// One block titled `ALL STATS`, run number 1: rows in the first file's order, Totals
    /// last, each with its summed histogram and per-second series. For a rate sweep, the
    /// last merged step (all of them are in `steps`).
    pub results: Results,
    /// A rate sweep's merged steps, in order (empty otherwise).
    pub steps: Vec<Results>,
    /// A rate sweep's curve, judged on the merged steps.
    pub sweep: Option<SweepReport>,
    /// What the merge left out and why, for the front end to print.
    pub notes: Vec<String>,
    /// The `"configuration"` entries: key and JSON literal. A key keeps its value where
    /// every input agrees and becomes an array of the inputs' values (`null` where one
    /// lacks it) where they differ; `"merged_from"` lists the inputs.
    pub configuration: Vec<(String, String)>,
    /// The `"run information"`: threads summed over the inputs.
    pub run_info: RunInfo,
    /// The percentiles the merged figures were computed for.
    pub percentiles: Vec<f64>,
    /// Whether the first input left out its latency distribution arrays.
    pub hide_histogram: bool,
    /// The inputs' names, in order.
    pub inputs: Vec<String>,
}

impl MergedResult {
    /// The blocks to render: a sweep's steps, else the one merged block.
    pub fn blocks(&self) -> &[Results] {
        if self.sweep.is_some() {
            &self.steps
        } else {
            std::slice::from_ref(&self.results)
        }
    }

    /// The configuration as `report::json::render_json` takes it.
    pub fn shown(&self) -> Vec<(&str, String)> {
        self.configuration
            .iter()
            .map(|(k, v)| (k.as_str(), v.clone()))
            .collect()
    }
}

/// Reads every file and merges them. Errors name the file and what is wrong.
pub fn merge_files<P: AsRef<Path>>(
    paths: &[P],
    options: &MergeOptions,
) -> Result<MergedResult, Error> {
    // One file given twice (a glob that matches it twice, say) would count it twice.
    let mut seen: Vec<(std::path::PathBuf, &Path)> = Vec::new();
    for path in paths.iter().map(AsRef::as_ref) {
        let Ok(real) = path.canonicalize() else {
            continue; // Reading it names the problem.
        };
        if let Some((_, first)) = seen.iter().find(|(r, _)| *r == real) {
            return Err(Error::usage(format!(
                "{}: given twice (also as {}): its requests would be counted twice",
                path.display(),
                first.display()
            )));
        }
        seen.push((real, path));
    }
    let files = paths
        .iter()
        .map(|p| read_file(p.as_ref()))
        .collect::<Result<Vec<_>, _>>()?;
    // A copy under another name is the same run too (tests of `merge` use one document
    // as several shards, so the check is made on files).
    let jsons: Vec<(&str, &JsonResult)> = files
        .iter()
        .filter_map(|f| match &f.content {
            Content::Json(j) => Some((f.name.as_str(), j)),
            Content::IntervalLog(_) => None,
        })
        .collect();
    check_copies(&jsons)?;
    merge(&files, options)
}

/// Merges files already read.
pub fn merge(files: &[ResultFile], options: &MergeOptions) -> Result<MergedResult, Error> {
    let Some(first) = files.first() else {
        return Err(Error::usage("merge needs at least one result file"));
    };
    let percentiles = options.percentiles.as_deref();
    match &first.content {
        Content::Json(_) => {
            let mut jsons = Vec::with_capacity(files.len());
            for f in files {
                match &f.content {
                    Content::Json(j) => jsons.push((f.name.as_str(), j)),
                    Content::IntervalLog(_) => return Err(mixed(f, first)),
                }
            }
            // A sweep beside a run at one rate is refused as that first: they may share
            // a shard number without being parts of one workload.
            let sweeps = jsons.iter().filter(|(_, j)| j.rate_steps.is_some()).count();
            if let Some((name, _)) = jsons.iter().find(|(_, j)| j.rate_steps.is_none())
                && sweeps > 0
            {
                let sweep = jsons.iter().find(|(_, j)| j.rate_steps.is_some());
                return Err(Error::usage(format!(
                    "{name}: a run at one rate cannot be merged with a rate sweep ({}); merge the shards of one --rate-sweep together",
                    sweep.map_or("", |(n, _)| n)
                )));
            }
            let missing = check_shards(&jsons)?;
            let mut merged = if sweeps > 0 {
                sweep::merge(&jsons, percentiles)
            } else {
                from_json::merge(&jsons, percentiles)
            }?;
            merged.notes.extend(missing);
            Ok(merged)
        }
        Content::IntervalLog(_) => {
            let mut logs: Vec<(&str, &IntervalLog)> = Vec::with_capacity(files.len());
            for f in files {
                match &f.content {
                    Content::IntervalLog(l) => logs.push((f.name.as_str(), l)),
                    Content::Json(_) => return Err(mixed(f, first)),
                }
            }
            if let Some((name, _)) = logs.iter().find(|(_, l)| l.service != logs[0].1.service) {
                let kind = |service| {
                    if service {
                        "service times"
                    } else {
                        "response times"
                    }
                };
                return Err(Error::usage(format!(
                    "{name}: its {} cannot be merged with {}'s {}: merge the _service.hgrm files on their own",
                    kind(!logs[0].1.service),
                    logs[0].0,
                    kind(logs[0].1.service)
                )));
            }
            from_logs::check_repeats(&logs)?;
            from_logs::merge(&logs, percentiles)
        }
    }
}

/// Refuses a result that is another input's run again (a copy under another name; a
/// link or the same path twice is caught before reading): every block's start, finish, counts and
/// histograms the same. Two generators never record the same histograms, so this is
/// one run given twice, which would count its requests twice.
fn check_copies(jsons: &[(&str, &JsonResult)]) -> Result<(), Error> {
    let same_run = |a: &JsonResult, b: &JsonResult| {
        a.blocks.len() == b.blocks.len()
            && a.blocks.iter().any(|x| x.rows.iter().any(|r| r.count > 0))
            && a.blocks.iter().zip(&b.blocks).all(|(x, y)| {
                x.runtime.start_epoch_ms == y.runtime.start_epoch_ms
                    && x.runtime.finish_epoch_ms == y.runtime.finish_epoch_ms
                    && x.rows.len() == y.rows.len()
                    && x.rows
                        .iter()
                        .zip(&y.rows)
                        .all(|(r, s)| r.count == s.count && r.histogram == s.histogram)
            })
    };
    for (later, (name, json)) in jsons.iter().enumerate() {
        if let Some((first, _)) = jsons[..later].iter().find(|(_, j)| same_run(j, json)) {
            return Err(Error::usage(format!(
                "{name}: the same run as {first} (the same start, finish and figures: a \
                 copy?): its requests would be counted twice"
            )));
        }
    }
    Ok(())
}

/// The shards of one split workload (`"shard": "I/N"` in each file's configuration; in a
/// merged file, the list of its inputs' shards), each once and all of one split: a shard
/// given twice (on its own and inside a merged file too, or in two merged files) would
/// count its requests twice, and shards of splits into different numbers are not parts
/// of one workload. Files without a shard (runs of their own) are not checked.
///
/// When every input is a shard of one split and some of its shards are not among them,
/// returns a note naming those: the merge is then part of the workload (its rates and
/// counts are the given shards'), which is allowed (a pod that failed) but said.
fn check_shards(jsons: &[(&str, &JsonResult)]) -> Result<Option<String>, Error> {
    let mut seen: Vec<(&str, &str, &str)> = Vec::new();
    // An input that is no shard: a run of its own (several such are the usual merge of
    // generators that each ran the whole workload).
    let mut unsharded: Option<&str> = None;
    for (name, json) in jsons {
        let mut shards = Vec::new();
        for (key, value) in &json.configuration {
            if key == "shard" {
                if !matches!(value, Json::String(_) | Json::Array(_) | Json::Null) {
                    return Err(Error::usage(format!(
                        "{name}: its shard ({}) is not I/N with I below N (what --shard writes)",
                        value.to_literal()
                    )));
                }
                shard_names(value, &mut shards);
            }
        }
        if shards.is_empty() {
            unsharded = unsharded.or(Some(name));
        }
        let mut own: Vec<(&str, &str, &str)> = Vec::new();
        for shard in shards {
            if Shard::parse(shard).is_err() {
                return Err(Error::usage(format!(
                    "{name}: its shard \"{shard}\" is not I/N with I below N (what --shard writes)"
                )));
            }
            let split = shard.split_once('/').map_or("", |(_, of)| of);
            if let Some((other, _, _)) = seen.iter().find(|(_, s, _)| *s == shard) {
                return Err(Error::usage(format!(
                    "{name}: shard {shard} is also {other}'s: the same shard twice would count its requests twice"
                )));
            }
            if let Some((other, theirs, _)) = seen.iter().find(|(_, _, of)| *of != split) {
                return Err(Error::usage(format!(
                    "{name}: shard {shard} and {other}'s {theirs} are parts of different splits: not shards of one workload"
                )));
            }
            own.push((name, shard, split));
        }
        seen.extend(own);
    }
    if let (Some(own), Some((other, shard, _))) = (unsharded, seen.first()) {
        // Allowed (the sum of what each sent), but rarely meant: said.
        return Ok(Some(format!(
            "note: {own} is no shard, {other} is shard {shard}: merged as given, the sum of what each sent, not one split's whole"
        )));
    }
    Ok(missing_shards(jsons.len(), &seen))
}

/// The note for shards of the split that no input holds, when every input held one.
fn missing_shards(inputs: usize, seen: &[(&str, &str, &str)]) -> Option<String> {
    let files_with_shards = {
        let mut names: Vec<&str> = seen.iter().map(|(name, _, _)| *name).collect();
        names.dedup();
        names.len()
    };
    let (_, _, split) = seen.first()?;
    let of: u64 = split.parse().ok()?;
    if files_with_shards < inputs || of > 1024 {
        return None;
    }
    let given: Vec<u64> = seen
        .iter()
        .filter_map(|(_, shard, _)| shard.split_once('/')?.0.parse().ok())
        .collect();
    let missing: Vec<String> = (0..of)
        .filter(|i| !given.contains(i))
        .map(|i| format!("{i}/{of}"))
        .collect();
    if missing.is_empty() {
        return None;
    }
    Some(format!(
        "note: {} of the {of} shards merged; not given: {} (the merged rates and counts are the given shards' only)",
        of as usize - missing.len(),
        missing.join(", ")
    ))
}

/// Every shard a configuration's `"shard"` value names: a string, or (a merged file's)
/// a list of its inputs' values, nested for a merge of merges; `null` is an input that
/// was no shard.
fn shard_names<'a>(value: &'a Json, out: &mut Vec<&'a str>) {
    match value {
        Json::String(shard) => out.push(shard),
        Json::Array(values) => values.iter().for_each(|v| shard_names(v, out)),
        _ => {}
    }
}

fn mixed(file: &ResultFile, first: &ResultFile) -> Error {
    let kind = |f: &ResultFile| match f.content {
        Content::Json(_) => "a JSON result",
        Content::IntervalLog(_) => "an interval log",
    };
    Error::usage(format!(
        "{}: {} cannot be merged with {} ({}); give only JSON results or only interval logs",
        file.name,
        kind(file),
        kind(first),
        first.name
    ))
}

#[cfg(test)]
mod tests;
