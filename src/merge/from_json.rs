//! Merges kvbench and memtier_benchmark JSON results block by block: hands each row's
//! pieces (command rows, a pool's servers, the visibility lag) to [`super::combine`] and
//! the schedule to [`super::schedule`]; merges the configuration and run information for
//! the JSON header.

use crate::error::Error;
use crate::report::{Limit, RunInfo};
use crate::resultfile::ordered::Json;
use crate::resultfile::{Block, JsonResult, RowData, Runtime};
use crate::results::{Results, VisibilityResult};
use crate::stats::RowName;

use super::MergedResult;
use super::combine::{
    Layout, Rates, RowPiece, SecondPiece, ServiceSecond, Window, merge_row, nearest_second,
    saturating_sum,
};
use super::inputs::{WholeRun, check_alike, run_counts_note, whole_run};
use super::schedule::merge_schedule;

/// Which rows of a block a piece comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Source {
    /// The command rows and `Totals`.
    Commands,
    /// A pool's per-server rows (`"Servers"`), matched by address.
    Servers,
    /// The replica visibility lag row.
    Visibility,
}

fn rows_of(block: &Block, source: Source) -> &[RowData] {
    match source {
        Source::Commands => &block.rows,
        Source::Servers => &block.servers,
        Source::Visibility => block
            .visibility
            .as_ref()
            .map_or(&[][..], |v| std::slice::from_ref(&v.lag)),
    }
}

fn find_row<'a>(rows: &'a [RowData], name: &str) -> Option<&'a RowData> {
    rows.iter().find(|r| r.name == name)
}

/// One file's piece of the row named `row_name` among its `source` rows.
fn row_piece<'a>(
    run: &WholeRun<'a>,
    row_name: &str,
    source: Source,
) -> Result<RowPiece<'a>, Error> {
    let Some(row) = find_row(rows_of(run.block, source), row_name) else {
        return Ok(RowPiece::default());
    };
    let place = match source {
        Source::Commands => format!("\"{}\" > \"{row_name}\"", run.block.title),
        Source::Servers => format!("\"{}\" > \"Servers\" > \"{row_name}\"", run.block.title),
        Source::Visibility => format!(
            "\"{}\" > \"Replica Visibility\" > \"{row_name}\"",
            run.block.title
        ),
    };
    let histograms = match (&row.histogram, row.count) {
        // memtier writes a histogram for a row that never ran; nothing to add.
        (_, 0) => Vec::new(),
        (Some(h), count) if h.len() == count => vec![h],
        (Some(h), count) => {
            return Err(Error::usage(format!(
                "{}: {place}: its histogram holds {} requests but its Count is {count}, so its latency cannot be merged exactly",
                run.name,
                h.len()
            )));
        }
        (None, _) => {
            return Err(Error::usage(format!(
                "{}: {place} has no compressed histogram, so its latency cannot be merged exactly",
                run.name
            )));
        }
    };
    let service = match &row.service {
        None => None,
        Some(s) => match &s.histogram {
            Some(h) => Some(h),
            None if row.count == 0 => None,
            None => {
                return Err(Error::usage(format!(
                    "{}: {place} > \"Service Latency\" has no compressed histogram, so its service time cannot be merged exactly",
                    run.name
                )));
            }
        },
    };
    let mut seconds = Vec::new();
    for block in &run.series_blocks {
        // A block that never ran (a shard stopped while it waited for --start-at) has one
        // empty second at its planned start: it stretches no series, as it stretches no
        // span (below).
        let Some(r) = find_row(rows_of(block, source), row_name) else {
            continue;
        };
        if block.runtime.finish_epoch_ms <= block.runtime.start_epoch_ms
            && r.series.iter().all(|s| s.count == 0)
        {
            continue;
        }
        for s in &r.series {
            seconds.push(SecondPiece {
                epoch_second: nearest_second(
                    block
                        .runtime
                        .start_epoch_ms
                        .saturating_add(s.offset.saturating_mul(1000)),
                ),
                count: s.count,
                bytes_rx: s.bytes_rx,
                bytes_tx: s.bytes_tx,
                average_ms: s.average_latency_ms,
                min_ms: s.min_latency_ms,
                max_ms: s.max_latency_ms,
                histogram: s.histogram.as_ref().filter(|_| s.count > 0),
                service: s.service.as_ref().map(|sv| ServiceSecond {
                    average_ms: sv.average_latency_ms,
                    min_ms: sv.min_latency_ms,
                    max_ms: sv.max_latency_ms,
                    histogram: sv.histogram.as_ref(),
                }),
            });
        }
    }
    Ok(RowPiece {
        count: row.count,
        connection_errors: row.connection_errors,
        tryagain: row.tryagain,
        errors: row.errors,
        service,
        rates: Rates {
            ops: row.ops_per_sec,
            hits: row.hits_per_sec,
            misses: row.misses_per_sec,
            moved: row.moved_per_sec.unwrap_or(0.0),
            ask: row.ask_per_sec.unwrap_or(0.0),
            connection_errors: row.connection_errors_per_sec,
            tryagain: row.tryagain_per_sec,
            kb: row.kb_per_sec,
            kb_rx: row.kb_rx_per_sec,
            kb_tx: row.kb_tx_per_sec,
        },
        histograms,
        seconds,
    })
}

/// The merged `"configuration"`: each key in first-seen order; its value where every file
/// agrees, else an array of each file's value (`null` where a file lacks the key); then
/// `"merged_from"`, the files' names.
pub(super) fn merge_configuration(runs: &[WholeRun]) -> Vec<(String, String)> {
    let mut keys: Vec<&str> = Vec::new();
    for run in runs {
        for (k, _) in &run.file.configuration {
            if !keys.contains(&k.as_str()) {
                keys.push(k);
            }
        }
    }
    let mut out = Vec::with_capacity(keys.len() + 1);
    for key in keys {
        let values: Vec<Option<&Json>> = runs
            .iter()
            .map(|r| {
                r.file
                    .configuration
                    .iter()
                    .find(|(k, _)| k == key)
                    .map(|(_, v)| v)
            })
            .collect();
        let literal = match values[0] {
            Some(first) if values.iter().all(|v| *v == Some(first)) => first.to_literal(),
            _ => Json::Array(
                values
                    .iter()
                    .map(|v| v.cloned().unwrap_or(Json::Null))
                    .collect(),
            )
            .to_literal(),
        };
        out.push((key.to_string(), literal));
    }
    let names = runs
        .iter()
        .map(|r| Json::String(r.name.to_string()))
        .collect();
    out.push(("merged_from".to_string(), Json::Array(names).to_literal()));
    out
}

/// The merged `"run information"`: threads summed; connections per thread kept when every
/// file agrees, else all connections over all threads (rounded down); requests per client
/// or seconds, the largest, when every file has the same kind, else the merged duration.
pub(super) fn merge_run_info(runs: &[WholeRun], duration_ms: u64) -> RunInfo {
    let threads: Vec<u64> = runs
        .iter()
        .map(|r| {
            r.file
                .run_info
                .threads
                .or(r.file.config.threads)
                .unwrap_or(0)
        })
        .collect();
    let conns: Vec<u64> = runs
        .iter()
        .map(|r| {
            r.file
                .run_info
                .connections_per_thread
                .or(r.file.config.clients)
                .unwrap_or(0)
        })
        .collect();
    let total_threads: u64 = threads.iter().sum();
    let per_thread = if conns.windows(2).all(|w| w[0] == w[1]) {
        conns.first().copied().unwrap_or(0)
    } else {
        let total: u64 = threads.iter().zip(&conns).map(|(t, c)| t * c).sum();
        total.checked_div(total_threads).unwrap_or(0)
    };
    let requests: Option<Vec<u64>> = runs
        .iter()
        .map(|r| r.file.run_info.requests_per_client)
        .collect();
    let seconds: Option<Vec<u64>> = runs.iter().map(|r| r.file.run_info.seconds).collect();
    let limit = match (requests, seconds) {
        (Some(n), _) => Limit::RequestsPerClient(n.into_iter().max().unwrap_or(0)),
        (None, Some(s)) => Limit::Seconds(s.into_iter().max().unwrap_or(0)),
        (None, None) => Limit::Seconds(duration_ms / 1000),
    };
    RunInfo {
        threads: total_threads as usize,
        connections_per_thread: per_thread as usize,
        limit,
        ramp: None,
    }
}

/// The first file's percentile list (its `Totals` "Percentile Latencies" keys).
pub(super) fn file_percentiles(run: &WholeRun) -> Vec<f64> {
    run.block
        .totals()
        .map(|t| t.percentiles.iter().map(|p| p.percent).collect())
        .unwrap_or_default()
}

/// Merges JSON results of runs at one rate (or closed loop); `files` holds each file's
/// name and contents, in input order.
pub fn merge(
    files: &[(&str, &JsonResult)],
    percentiles: Option<&[f64]>,
) -> Result<MergedResult, Error> {
    let runs: Vec<WholeRun> = files
        .iter()
        .map(|(name, file)| whole_run(name, file))
        .collect::<Result<_, _>>()?;
    check_alike(&runs)?;
    let percentiles = chosen_percentiles(&runs[0], percentiles);
    let results = merge_block(&runs, &percentiles, "ALL STATS".to_string())?;
    let first = &runs[0];
    Ok(MergedResult {
        run_info: merge_run_info(&runs, results.duration_ms),
        configuration: merge_configuration(&runs),
        hide_histogram: first.block.distributions.is_empty(),
        percentiles,
        inputs: runs.iter().map(|r| r.name.to_string()).collect(),
        results,
        steps: Vec::new(),
        sweep: None,
        notes: run_counts_note(&runs).into_iter().collect(),
    })
}

/// The percentiles asked for, else the first file's, else 50, 99, 99.9.
pub(super) fn chosen_percentiles(first: &WholeRun, percentiles: Option<&[f64]>) -> Vec<f64> {
    match percentiles {
        Some(p) => p.to_vec(),
        None => {
            let p = file_percentiles(first);
            if p.is_empty() {
                vec![50.0, 99.0, 99.9]
            } else {
                p
            }
        }
    }
}

/// The row names of `source` in every run, in first-seen order (a pool's members are
/// matched by address; one shard may have seen a member the other did not list).
fn source_names(runs: &[WholeRun], source: Source) -> Vec<RowName> {
    let mut names: Vec<RowName> = Vec::new();
    for run in runs {
        for r in rows_of(run.block, source) {
            if !names.iter().any(|n| n.row == r.name) {
                names.push(RowName {
                    row: r.name.clone(),
                    hist: r.hist_name.clone(),
                    has_hits: r.has_hits,
                });
            }
        }
        if source == Source::Commands {
            // The first file's order; check_alike made every file's rows the same.
            break;
        }
    }
    names
}

/// Merges one block of each run (already checked alike) into one titled `title`: command
/// rows, a pool's per-server rows, the visibility lag, the open-loop schedule and the
/// closed loop's unanswered requests.
pub(super) fn merge_block(
    runs: &[WholeRun],
    percentiles: &[f64],
    title: String,
) -> Result<Results, Error> {
    let sources = [Source::Commands, Source::Servers, Source::Visibility];
    let mut names: Vec<Vec<RowName>> = Vec::with_capacity(sources.len());
    let mut pieces: Vec<Vec<Vec<RowPiece>>> = Vec::with_capacity(sources.len());
    for source in sources {
        let n = source_names(runs, source);
        let p = n
            .iter()
            .map(|name| {
                runs.iter()
                    .map(|r| row_piece(r, &name.row, source))
                    .collect()
            })
            .collect::<Result<Vec<Vec<RowPiece>>, Error>>()?;
        names.push(n);
        pieces.push(p);
    }

    let mut known: Vec<&Runtime> = runs
        .iter()
        .map(|r| &r.runtime)
        .filter(|t| t.start_epoch_ms > 0)
        .collect();
    // A shard stopped before its start (Ctrl-C while it waited for --start-at) records
    // that start and no time run: it does not stretch the others' span.
    let ran = |t: &&Runtime| t.finish_epoch_ms > t.start_epoch_ms;
    if known.iter().any(ran) {
        known.retain(ran);
    }
    let start = known.iter().map(|t| t.start_epoch_ms).min().unwrap_or(0);
    let finish = known
        .iter()
        .map(|t| t.finish_epoch_ms)
        .max()
        .unwrap_or(0)
        .max(start);
    let all_pieces = || pieces.iter().flatten().flatten();
    let all_seconds = || all_pieces().flat_map(|p| p.seconds.iter().map(|s| s.epoch_second));
    let first_second = all_seconds()
        .chain((start > 0).then(|| nearest_second(start)))
        .min()
        .unwrap_or(0);
    let last_second = all_seconds().max();
    let window = Window::checked(
        first_second,
        last_second.map_or(0, |l| l - first_second + 1),
        if start > 0 {
            start
        } else {
            first_second.saturating_mul(1000)
        },
        finish,
    )
    .map_err(|e| name_the_far_inputs(e, runs))?;
    let layout = Layout::of(all_pieces().flat_map(|p| {
        p.histograms
            .iter()
            .copied()
            .chain(p.service)
            .chain(p.seconds.iter().filter_map(|s| s.histogram))
            .chain(
                p.seconds
                    .iter()
                    .filter_map(|s| s.service.as_ref().and_then(|v| v.histogram)),
            )
    }));
    let mut merged: Vec<Vec<crate::results::Row>> = Vec::with_capacity(sources.len());
    for (n, p) in names.into_iter().zip(&pieces) {
        merged.push(
            n.into_iter()
                .zip(p)
                .map(|(name, p)| merge_row(name, p, &layout, &window, percentiles))
                .collect::<Result<Vec<_>, _>>()?,
        );
    }
    let visibility_rows = merged.pop().unwrap_or_default();
    let servers = merged.pop().unwrap_or_default();
    let rows = merged.pop().unwrap_or_default();
    let visibility = visibility_rows.into_iter().next().map(|lag| {
        let of = |f: fn(&crate::resultfile::VisibilityData) -> u64| {
            saturating_sum(
                runs.iter()
                    .filter_map(|r| r.block.visibility.as_ref())
                    .map(f),
            )
        };
        Box::new(VisibilityResult {
            lag,
            timeouts: of(|v| v.timeouts),
            untracked: of(|v| v.untracked),
        })
    });
    let schedule = merge_schedule(runs, rows.last())?;

    Ok(Results {
        title,
        run_number: 1,
        start_epoch_ms: window.start_epoch_ms,
        finish_epoch_ms: finish.max(window.start_epoch_ms),
        duration_ms: finish.saturating_sub(window.start_epoch_ms),
        interrupted: runs.iter().any(|r| r.runtime.interrupted),
        stopped_by: runs.iter().find_map(|r| r.runtime.stopped_by.clone()),
        cluster: runs
            .iter()
            .any(|r| r.block.rows.iter().any(|row| row.moved_per_sec.is_some())),
        rows,
        servers,
        visibility,
        schedule,
        // The shards of one run each left their own requests unanswered: the run left
        // them all, the oldest of them its oldest (the warning is judged again against
        // the merged slowest answer).
        unanswered: runs
            .iter()
            .filter_map(|r| r.block.unfinished.as_ref())
            .map(|u| u.unanswered)
            .reduce(|mut all, u| {
                all.merge(&u);
                all
            }),
    })
}

/// [`Window::checked`]'s refusal with the inputs that stretch the span named: the one
/// that starts first and the one that ends last.
fn name_the_far_inputs(err: Error, runs: &[WholeRun]) -> Error {
    let started = runs.iter().filter(|r| r.runtime.start_epoch_ms > 0);
    let earliest = started.clone().min_by_key(|r| r.runtime.start_epoch_ms);
    let latest = started.max_by_key(|r| r.runtime.finish_epoch_ms);
    match (earliest, latest) {
        (Some(a), Some(b)) if a.name != b.name => Error::usage(format!(
            "{}; {} starts first and {} ends last",
            err.message(),
            a.name,
            b.name
        )),
        _ => err,
    }
}
