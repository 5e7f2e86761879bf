//! Merges the shards of one `--rate-sweep` step by step: step *k* of every file into one
//! step block, then the curve judged again on the merged steps.
//!
//! Each shard ran every step at its share of the rate, so a merged step's target and
//! achieved rate are the shards' sums, its percentiles come from the sum of the steps'
//! histograms (with the unfinished requests at their age, as a single sweep counts
//! them), and the objective is checked on those. Steps are matched by position and must
//! carry the same title (which names the whole rate). Only steps every shard ran are
//! merged, and as in a single sweep the curve ends at the first step that breaks the
//! objective.

use crate::error::Error;
use crate::resultfile::{Block, JsonResult, RateSteps};
use crate::results::{Results, SweepReport};

use super::MergedResult;
use super::from_json::{chosen_percentiles, merge_block, merge_configuration, merge_run_info};
use super::inputs::{WholeRun, check_alike};

/// The step blocks of a sweep's file: `STEP #n RESULTS (R requests/s)`, in order.
fn step_blocks(file: &JsonResult) -> Vec<&Block> {
    file.blocks
        .iter()
        .filter(|b| b.title.starts_with("STEP #"))
        .collect()
}

/// `p99:5` -> (99, 5).
fn parse_slo(name: &str, text: &str) -> Result<(f64, f64), Error> {
    let parsed = text
        .strip_prefix('p')
        .and_then(|t| t.split_once(':'))
        .and_then(|(p, ms)| Some((p.parse::<f64>().ok()?, ms.parse::<f64>().ok()?)));
    parsed.ok_or_else(|| {
        Error::usage(format!(
            "{name}: \"Rate Steps\" > \"SLO\": expected pPERCENTILE:MS, found \"{text}\""
        ))
    })
}

/// Merges the shards of one rate sweep.
pub(super) fn merge(
    files: &[(&str, &JsonResult)],
    percentiles: Option<&[f64]>,
) -> Result<MergedResult, Error> {
    let sweep_name = files
        .iter()
        .find(|(_, f)| f.rate_steps.is_some())
        .map_or("", |(n, _)| n);
    let mut sweeps: Vec<&RateSteps> = Vec::with_capacity(files.len());
    for (name, file) in files {
        match &file.rate_steps {
            Some(s) => sweeps.push(s),
            None => {
                return Err(Error::usage(format!(
                    "{name}: a run at one rate cannot be merged with a rate sweep ({sweep_name}); merge the shards of one --rate-sweep together"
                )));
            }
        }
    }
    let (first_name, first_file) = files[0];
    for ((name, _), s) in files.iter().zip(&sweeps).skip(1) {
        if s.slo != sweeps[0].slo {
            return Err(Error::usage(format!(
                "{name}: its sweep's objective ({}) differs from {first_name}'s ({}): not shards of one sweep",
                s.slo.as_deref().unwrap_or("none"),
                sweeps[0].slo.as_deref().unwrap_or("none")
            )));
        }
    }
    let slo = sweeps[0]
        .slo
        .as_deref()
        .map(|t| parse_slo(first_name, t))
        .transpose()?;
    let steps: Vec<Vec<&Block>> = files.iter().map(|(_, f)| step_blocks(f)).collect();
    let common = steps.iter().map(Vec::len).min().unwrap_or(0);
    let most = steps.iter().map(Vec::len).max().unwrap_or(0);
    if common == 0 {
        let (name, _) = files[steps.iter().position(Vec::is_empty).unwrap_or(0)];
        return Err(Error::usage(format!(
            "{name}: a rate sweep with no \"STEP #n RESULTS\" block: nothing to merge"
        )));
    }
    let mut notes = Vec::new();
    if most > common {
        notes.push(format!(
            "note: the shards ran {common} to {most} steps (each judged its own share); steps after {common} are left out: not every shard ran them"
        ));
    }

    let planned = sweeps
        .iter()
        .filter_map(|s| s.planned_steps)
        .max()
        .unwrap_or(common as u64);
    let mut report = SweepReport::new(slo, planned as usize);
    // A shard interrupted in its last step leaves the merged curve short of its plan.
    report.interrupted = sweeps.iter().any(|s| s.interrupted);
    let mut merged_steps: Vec<Results> = Vec::with_capacity(common);
    let mut chosen: Option<Vec<f64>> = percentiles.map(<[f64]>::to_vec);
    for k in 0..common {
        let runs: Vec<WholeRun> = files
            .iter()
            .zip(&steps)
            .map(|((name, file), blocks)| WholeRun::of_block(name, file, blocks[k]))
            .collect();
        let title = &runs[0].block.title;
        if let Some(other) = runs.iter().find(|r| &r.block.title != title) {
            return Err(Error::usage(format!(
                "{}: step {} is \"{}\" but {first_name}'s is \"{title}\": not shards of one sweep",
                other.name,
                k + 1,
                other.block.title
            )));
        }
        check_alike(&runs)?;
        let pcts = chosen
            .get_or_insert_with(|| chosen_percentiles(&runs[0], None))
            .clone();
        let mut step = merge_block(&runs, &pcts, title.clone())?;
        step.run_number = k as u32 + 1;
        let Some(target) = step.schedule.as_ref().map(|s| s.target_per_sec) else {
            return Err(Error::usage(format!(
                "{first_name}: \"{title}\" has no \"Schedule\": not a rate sweep's step"
            )));
        };
        let held = report.add(target, &step);
        merged_steps.push(step);
        if !held {
            if k + 1 < common {
                notes.push(format!(
                    "note: the merged step {} broke the objective; the {} later steps the shards ran are left out, as a single sweep stops there",
                    k + 1,
                    common - k - 1
                ));
            }
            break;
        }
    }

    let whole: Vec<WholeRun> = files
        .iter()
        .map(|(name, file)| WholeRun::of_block(name, file, step_blocks(file)[0]))
        .collect();
    let last = merged_steps
        .last()
        .cloned()
        .expect("at least one step was merged");
    let start = merged_steps.first().map_or(0, |s| s.start_epoch_ms);
    let duration = last.finish_epoch_ms.saturating_sub(start);
    Ok(MergedResult {
        run_info: merge_run_info(&whole, duration),
        configuration: merge_configuration(&whole),
        hide_histogram: first_file.blocks[0].distributions.is_empty(),
        percentiles: chosen.unwrap_or_else(|| vec![50.0, 99.0, 99.9]),
        inputs: files.iter().map(|(n, _)| n.to_string()).collect(),
        results: last,
        steps: merged_steps,
        sweep: Some(report),
        notes,
    })
}
