//! What each JSON file contributes to a merge: its whole run (or one block of it), and
//! the check that the files describe the same workload.

use crate::error::Error;
use crate::resultfile::{Block, BlockKind, JsonResult, RunCount, Runtime};

/// What one file contributes: its whole-run rows and the blocks whose seconds feed the
/// per-second series.
pub(super) struct WholeRun<'a> {
    pub name: &'a str,
    pub file: &'a JsonResult,
    pub block: &'a Block,
    pub runtime: Runtime,
    pub series_blocks: Vec<&'a Block>,
}

impl<'a> WholeRun<'a> {
    /// One block that stands for itself (a rate sweep's step).
    pub fn of_block(name: &'a str, file: &'a JsonResult, block: &'a Block) -> WholeRun<'a> {
        WholeRun {
            name,
            file,
            block,
            runtime: block.runtime.clone(),
            series_blocks: vec![block],
        }
    }
}

/// A file's whole run: `ALL STATS`; for `-x N` files the AGGREGATED block (counts summed
/// over the runs, rates their mean), with its runtime and seconds taken from the `RUN #i`
/// blocks when the file has them (memtier writes zeros in its aggregate's runtime); a
/// file with one block of another title, that block.
pub(super) fn whole_run<'a>(name: &'a str, file: &'a JsonResult) -> Result<WholeRun<'a>, Error> {
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
                stopped_by: runs.iter().rev().find_map(|b| b.runtime.stopped_by.clone()),
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

/// The note for inputs that stand for different numbers of runs (`-x 3` beside `-x 2`,
/// or beside a single run): each input counts as its runs' aggregate, its counts summed
/// over its runs and its rates its mean run, so the merged counts and latencies are every
/// input's runs together while its rates add one mean run of each. Inputs that agree (all
/// single runs, or all `-x N`) need no note: their merged file's `run_count` says N.
pub(super) fn run_counts_note(runs: &[WholeRun]) -> Option<String> {
    let counts: Vec<RunCount> = runs.iter().map(|r| r.file.runs_behind(r.block)).collect();
    let agreed = counts
        .iter()
        .all(|c| matches!(c, RunCount::Runs(_)) && c == &counts[0]);
    if agreed {
        return None;
    }
    let each: Vec<String> = runs
        .iter()
        .zip(&counts)
        .map(|(run, count)| {
            let runs = match count {
                RunCount::Runs(n) => RunCount::runs_text(*n),
                RunCount::PerInput(inputs) => {
                    let parts: Vec<String> = inputs.iter().map(|(_, n)| n.to_string()).collect();
                    format!("{} runs", parts.join("+"))
                }
            };
            format!("{}: {runs}", run.name)
        })
        .collect();
    let total: u64 = counts.iter().map(RunCount::total).sum();
    Some(format!(
        "note: inputs of different run counts ({}): the merged counts and latencies are all \
         {total} runs' requests, the merged rates the sum of each input's mean run",
        each.join(", ")
    ))
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
pub(super) fn check_alike(runs: &[WholeRun]) -> Result<(), Error> {
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
            // A file with no command rows says so, never "has ;".
            let listed = |names: &[&str]| match names {
                [] => "no command rows".to_string(),
                names => names.join(", "),
            };
            return Err(Error::usage(format!(
                "{}: different commands from {}: {} has {}; {} has {}",
                run.name,
                first.name,
                first.name,
                listed(&first_commands),
                run.name,
                listed(&commands)
            )));
        }
    }
    Ok(())
}
