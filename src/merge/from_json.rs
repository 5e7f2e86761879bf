//! Merges kvbench and memtier_benchmark JSON results: picks each file's whole-run block,
//! checks the files describe the same workload, and hands each row's pieces to
//! [`super::combine`]; merges the configuration and run information for the JSON header.

use crate::error::Error;
use crate::report::{Limit, RunInfo};
use crate::resultfile::ordered::Json;
use crate::resultfile::{Block, BlockKind, JsonResult, RowData, Runtime};
use crate::results::Results;
use crate::stats::RowName;

use super::MergedResult;
use super::combine::{Layout, Rates, RowPiece, SecondPiece, Window, merge_row, nearest_second};

/// What one file contributes: its whole-run rows and the blocks whose seconds feed the
/// per-second series.
struct WholeRun<'a> {
    name: &'a str,
    file: &'a JsonResult,
    block: &'a Block,
    runtime: Runtime,
    series_blocks: Vec<&'a Block>,
}

/// A file's whole run: `ALL STATS`; for `-x N` files the AGGREGATED block (counts summed
/// over the runs, rates their mean), with its runtime and seconds taken from the `RUN #i`
/// blocks when the file has them (memtier writes zeros in its aggregate's runtime); a
/// file with one block of another title, that block.
fn whole_run<'a>(name: &'a str, file: &'a JsonResult) -> Result<WholeRun<'a>, Error> {
    if file.rate_steps.is_some() {
        // Its blocks are steps at different rates: adding them up would describe no
        // load that ever ran.
        return Err(Error::usage(format!(
            "{name}: a rate sweep (its blocks are steps at different rates): merging sweeps step by step is not supported yet; merge runs at one --rate"
        )));
    }
    let find = |pred: &dyn Fn(BlockKind) -> bool| file.blocks.iter().find(|b| pred(b.kind));
    if let Some(block) = find(&|k| k == BlockKind::AllStats) {
        return Ok(WholeRun {
            name,
            file,
            block,
            runtime: block.runtime.clone(),
            series_blocks: vec![block],
        });
    }
    if let Some(block) = find(&|k| matches!(k, BlockKind::Aggregated(_))) {
        let runs: Vec<&Block> = file
            .blocks
            .iter()
            .filter(|b| matches!(b.kind, BlockKind::Run(_)))
            .collect();
        let mut runtime = block.runtime.clone();
        if runtime.start_epoch_ms == 0 && !runs.is_empty() {
            runtime = Runtime {
                start_epoch_ms: runs
                    .iter()
                    .map(|b| b.runtime.start_epoch_ms)
                    .min()
                    .unwrap_or(0),
                finish_epoch_ms: runs
                    .iter()
                    .map(|b| b.runtime.finish_epoch_ms)
                    .max()
                    .unwrap_or(0),
                duration_ms: runs.iter().map(|b| b.runtime.duration_ms).sum(),
                interrupted: runs.iter().any(|b| b.runtime.interrupted),
            };
        }
        return Ok(WholeRun {
            name,
            file,
            block,
            runtime,
            series_blocks: runs,
        });
    }
    match &file.blocks[..] {
        [block] => Ok(WholeRun {
            name,
            file,
            block,
            runtime: block.runtime.clone(),
            series_blocks: vec![block],
        }),
        blocks => Err(Error::usage(format!(
            "{name}: {} results blocks but no \"ALL STATS\" or \"AGGREGATED AVERAGE RESULTS\" block to merge",
            blocks.len()
        ))),
    }
}

/// `redis` for the RESP protocols, `memcache` for memcached's: results of one family
/// describe the same commands.
fn protocol_family(protocol: &str) -> &'static str {
    if protocol.starts_with("memcache") {
        "memcache"
    } else {
        "redis"
    }
}

fn command_names(block: &Block) -> Vec<&str> {
    block
        .command_rows()
        .iter()
        .map(|r| r.name.as_str())
        .collect()
}

/// Every file must be of one protocol family and have the same command rows.
fn check_alike(runs: &[WholeRun]) -> Result<(), Error> {
    let first = &runs[0];
    let first_commands = command_names(first.block);
    let mut sorted_first = first_commands.clone();
    sorted_first.sort_unstable();
    for run in &runs[1..] {
        if let (Some(a), Some(b)) = (&first.file.config.protocol, &run.file.config.protocol)
            && protocol_family(a) != protocol_family(b)
        {
            return Err(Error::usage(format!(
                "{}: protocol {b} cannot be merged with {}'s {a}",
                run.name, first.name
            )));
        }
        let commands = command_names(run.block);
        let mut sorted = commands.clone();
        sorted.sort_unstable();
        if sorted != sorted_first {
            return Err(Error::usage(format!(
                "{}: different commands from {}: {} has {}; {} has {}",
                run.name,
                first.name,
                first.name,
                first_commands.join(", "),
                run.name,
                commands.join(", ")
            )));
        }
    }
    Ok(())
}

fn find_row<'a>(block: &'a Block, name: &str) -> Option<&'a RowData> {
    block.rows.iter().find(|r| r.name == name)
}

/// One file's piece of the row named `row_name`.
fn row_piece<'a>(run: &WholeRun<'a>, row_name: &str) -> Result<RowPiece<'a>, Error> {
    let Some(row) = find_row(run.block, row_name) else {
        return Ok(RowPiece::default());
    };
    let histograms = match (&row.histogram, row.count) {
        // memtier writes a histogram for a row that never ran; nothing to add.
        (_, 0) => Vec::new(),
        (Some(h), count) if h.len() == count => vec![h],
        (Some(h), count) => {
            return Err(Error::usage(format!(
                "{}: \"{}\" > \"{row_name}\": its histogram holds {} requests but its Count is {count}, so its latency cannot be merged exactly",
                run.name,
                run.block.title,
                h.len()
            )));
        }
        (None, _) => {
            return Err(Error::usage(format!(
                "{}: \"{}\" > \"{row_name}\" has no compressed histogram, so its latency cannot be merged exactly",
                run.name, run.block.title
            )));
        }
    };
    let mut seconds = Vec::new();
    for block in &run.series_blocks {
        let Some(r) = find_row(block, row_name) else {
            continue;
        };
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
            });
        }
    }
    Ok(RowPiece {
        count: row.count,
        connection_errors: row.connection_errors,
        rates: Rates {
            ops: row.ops_per_sec,
            hits: row.hits_per_sec,
            misses: row.misses_per_sec,
            moved: row.moved_per_sec.unwrap_or(0.0),
            ask: row.ask_per_sec.unwrap_or(0.0),
            connection_errors: row.connection_errors_per_sec,
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
fn merge_configuration(runs: &[WholeRun]) -> Vec<(String, String)> {
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
fn merge_run_info(runs: &[WholeRun], duration_ms: u64) -> RunInfo {
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
fn file_percentiles(run: &WholeRun) -> Vec<f64> {
    run.block
        .totals()
        .map(|t| t.percentiles.iter().map(|p| p.percent).collect())
        .unwrap_or_default()
}

/// Merges JSON results; `files` holds each file's name and contents, in input order.
pub fn merge(
    files: &[(&str, &JsonResult)],
    percentiles: Option<&[f64]>,
) -> Result<MergedResult, Error> {
    let runs: Vec<WholeRun> = files
        .iter()
        .map(|(name, file)| whole_run(name, file))
        .collect::<Result<_, _>>()?;
    check_alike(&runs)?;
    let first = &runs[0];
    let percentiles = match percentiles {
        Some(p) => p.to_vec(),
        None => {
            let p = file_percentiles(first);
            if p.is_empty() {
                vec![50.0, 99.0, 99.9]
            } else {
                p
            }
        }
    };

    let names: Vec<RowName> = first
        .block
        .rows
        .iter()
        .map(|r| RowName {
            row: r.name.clone(),
            hist: r.hist_name.clone(),
            has_hits: r.has_hits,
        })
        .collect();
    let pieces: Vec<Vec<RowPiece>> = names
        .iter()
        .map(|n| runs.iter().map(|r| row_piece(r, &n.row)).collect())
        .collect::<Result<_, _>>()?;

    let known: Vec<&Runtime> = runs
        .iter()
        .map(|r| &r.runtime)
        .filter(|t| t.start_epoch_ms > 0)
        .collect();
    let start = known.iter().map(|t| t.start_epoch_ms).min().unwrap_or(0);
    let finish = known
        .iter()
        .map(|t| t.finish_epoch_ms)
        .max()
        .unwrap_or(0)
        .max(start);
    let all_seconds = || {
        pieces
            .iter()
            .flatten()
            .flat_map(|p| p.seconds.iter().map(|s| s.epoch_second))
    };
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
    )?;
    let layout = Layout::of(pieces.iter().flatten().flat_map(|p| {
        p.histograms
            .iter()
            .copied()
            .chain(p.seconds.iter().filter_map(|s| s.histogram))
    }));
    let rows = names
        .into_iter()
        .zip(&pieces)
        .map(|(name, p)| merge_row(name, p, &layout, &window, &percentiles))
        .collect::<Result<Vec<_>, _>>()?;

    let results = Results {
        title: "ALL STATS".to_string(),
        run_number: 1,
        start_epoch_ms: window.start_epoch_ms,
        finish_epoch_ms: finish.max(window.start_epoch_ms),
        duration_ms: finish.saturating_sub(window.start_epoch_ms),
        interrupted: runs.iter().any(|r| r.runtime.interrupted),
        cluster: runs
            .iter()
            .any(|r| r.block.rows.iter().any(|row| row.moved_per_sec.is_some())),
        rows,
        // An open-loop run's "Schedule" is not read back yet.
        schedule: None,
    };
    Ok(MergedResult {
        run_info: merge_run_info(&runs, results.duration_ms),
        configuration: merge_configuration(&runs),
        hide_histogram: first.block.distributions.is_empty(),
        percentiles,
        inputs: runs.iter().map(|r| r.name.to_string()).collect(),
        results,
    })
}
