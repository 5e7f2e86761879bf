//! Merges the open-loop `"Schedule"` objects of several blocks into one
//! [`ScheduleResult`]: targets and achieved rates summed, counts summed, the send lag and
//! the unfinished requests' ages from the sum of their histograms, and the reason for a
//! missed target judged again on the merged figures.

use hdrhistogram::Histogram;

use crate::error::Error;
use crate::resultfile::ScheduleData;
use crate::resultfile::ordered::Json;
use crate::results::{Capacity, Row, ScheduleResult};
use crate::stats::ScheduleStats;

use super::combine::Layout;
use super::inputs::WholeRun;

/// Bounds on what a file may claim, so a damaged one cannot overflow the judgement of
/// why a target was missed (connections × pipeline).
const MAX_CONNECTIONS: u64 = 1 << 32;
const MAX_PIPELINE: u64 = 1 << 20;

/// The arrival names a [`ScheduleResult`] carries.
fn arrival(name: &str) -> &'static str {
    if name == "poisson" {
        "poisson"
    } else {
        "uniform"
    }
}

/// A configuration number, written as a number or as a string (`"pipeline": 1`).
fn config_u64(run: &WholeRun, key: &str) -> Option<u64> {
    match run.file.configuration.iter().find(|(k, _)| k == key)?.1 {
        Json::String(ref s) => s.trim().parse().ok(),
        ref v => v.as_u64(),
    }
}

/// How many requests each file could have in flight: its connections and pipeline.
fn capacity(runs: &[WholeRun]) -> Capacity {
    let connections = runs
        .iter()
        .map(|r| {
            let threads = r.file.run_info.threads.or(r.file.config.threads);
            let clients = r
                .file
                .run_info
                .connections_per_thread
                .or(r.file.config.clients);
            threads.unwrap_or(1).saturating_mul(clients.unwrap_or(1))
        })
        .fold(0u64, u64::saturating_add)
        .min(MAX_CONNECTIONS);
    let pipeline = runs
        .iter()
        .filter_map(|r| config_u64(r, "pipeline"))
        .max()
        .unwrap_or(1)
        .min(MAX_PIPELINE);
    Capacity {
        connections,
        pipeline,
    }
}

/// The histogram `h` of `what`, or an error naming the file: without it the merged
/// percentiles could not be exact.
fn needed<'a>(
    run: &WholeRun,
    h: &'a Option<Histogram<u64>>,
    what: &str,
    recorded: u64,
) -> Result<Option<&'a Histogram<u64>>, Error> {
    match h {
        Some(h) => Ok(Some(h)),
        None if recorded == 0 => Ok(None),
        None => Err(Error::usage(format!(
            "{}: \"{}\" > \"Schedule\" > \"{what}\" has no compressed histogram, so it cannot be merged exactly",
            run.name, run.block.title
        ))),
    }
}

/// The merged schedule of `runs`' blocks (`None` in closed loop); `totals` is the merged
/// Totals row, whose service times judge why a missed target was missed.
pub(super) fn merge_schedule(
    runs: &[WholeRun],
    totals: Option<&Row>,
) -> Result<Option<ScheduleResult>, Error> {
    let with: Vec<(&WholeRun, &ScheduleData)> = runs
        .iter()
        .filter_map(|r| r.block.schedule.as_ref().map(|s| (r, s)))
        .collect();
    let Some(&(first_run, first)) = with.first() else {
        return Ok(None);
    };
    if let Some(closed) = runs.iter().find(|r| r.block.schedule.is_none()) {
        // The file does not say which front end wrote it: each one's flag for a total rate.
        let flag = match first.per_connection {
            true => "--rate-limiting",
            false => "--rate, --rps or zbench's -rps",
        };
        return Err(Error::usage(format!(
            "{}: a closed-loop run cannot be merged with {}'s open-loop one ({flag}): their latencies mean different things",
            closed.name, first_run.name
        )));
    }
    if let Some((other, _)) = with
        .iter()
        .find(|(_, s)| s.per_connection != first.per_connection)
    {
        return Err(Error::usage(format!(
            "{}: its rate is set {} but {}'s {}; merge runs paced alike",
            other.name,
            if first.per_connection {
                "in all"
            } else {
                "per connection"
            },
            first_run.name,
            if first.per_connection {
                "per connection"
            } else {
                "in all"
            },
        )));
    }
    let mut lags = Vec::with_capacity(with.len());
    let mut ages = Vec::with_capacity(with.len());
    let mut health = ScheduleStats::new();
    for &(run, s) in &with {
        lags.extend(needed(run, &s.lag, "Lag", s.sent)?);
        let unfinished = s.unsent_at_end.saturating_add(s.in_flight_at_end);
        ages.extend(needed(
            run,
            &s.unfinished_age,
            "Unfinished Age",
            unfinished,
        )?);
        // Saturating, and late sends waiting for a connection are some of the late ones:
        // a damaged file cannot make the merge overflow.
        health.sent = health.sent.saturating_add(s.sent);
        health.late = health.late.saturating_add(s.late);
        health.late_blocked = health
            .late_blocked
            .saturating_add(s.late_blocked.min(s.late))
            .min(health.late);
        // Each at most half the range: their sum (the unfinished requests) stays exact.
        health.unsent_at_end = health
            .unsent_at_end
            .saturating_add(s.unsent_at_end)
            .min(u64::MAX / 2);
        health.in_flight_at_end = health
            .in_flight_at_end
            .saturating_add(s.in_flight_at_end)
            .min(u64::MAX / 2);
    }
    health.lag = Layout::of(lags.iter().copied()).sum(lags.iter().copied())?;
    health.unfinished_age = Layout::of(ages.iter().copied()).sum(ages.iter().copied())?;
    Ok(Some(ScheduleResult::new(
        with.iter()
            .map(|(_, s)| s.target_per_sec)
            .fold(0, u64::saturating_add),
        arrival(&first.arrival),
        first.per_connection,
        with.iter().map(|(_, s)| s.achieved_per_sec).sum(),
        health,
        totals
            .and_then(|t| t.service.as_ref())
            .map(|s| &s.histogram),
        capacity(runs),
    )))
}
