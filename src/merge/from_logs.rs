//! Merges HdrHistogram interval logs: one row per command tag, `Totals` from the untagged
//! lines, every figure from the interval histograms.

use crate::error::Error;
use crate::report::{Limit, RunInfo};
use crate::resultfile::ordered::Json;
use crate::resultfile::{Interval, IntervalLog};
use crate::results::Results;
use crate::stats::RowName;
use crate::stats::rows::{HIST_NUMBER, ROW_NUMBER, split_number};
use crate::workload::commands::row_name;

use super::MergedResult;
use super::combine::{Layout, Rates, RowPiece, SecondPiece, Window, merge_row, nearest_second};

/// The command an interval belongs to: its tag, or the log's `.hgrm` title; `None` is the
/// whole run.
fn command_of<'a>(log: &'a IntervalLog, tag: Option<&'a str>) -> Option<&'a str> {
    tag.or_else(|| log.title_command())
}

/// One log's piece of a row: the intervals for which `wanted` holds.
fn piece<'a>(log: &'a IntervalLog, wanted: impl Fn(Option<&str>) -> bool) -> RowPiece<'a> {
    let start = log
        .intervals
        .iter()
        .map(|i| i.start_epoch_ms)
        .min()
        .unwrap_or(0);
    let end = log
        .intervals
        .iter()
        .map(|i| i.end_epoch_ms)
        .max()
        .unwrap_or(0);
    let span_secs = end.saturating_sub(start) as f64 / 1000.0;
    let mut p = RowPiece::default();
    for iv in &log.intervals {
        if !wanted(command_of(log, iv.tag.as_deref())) {
            continue;
        }
        let h = &iv.histogram;
        p.count += h.len();
        p.histograms.push(h);
        p.seconds.push(SecondPiece {
            epoch_second: nearest_second(iv.start_epoch_ms),
            count: h.len(),
            histogram: Some(h),
            ..SecondPiece::default()
        });
    }
    if span_secs > 0.0 {
        p.rates = Rates {
            ops: p.count as f64 / span_secs,
            ..Rates::default()
        };
    }
    p
}

/// Refuses a log that repeats another's intervals: one run's command written twice (its
/// `--hdr-log` `FILE_SET.hlog` and its `--hdr-file-prefix` `..._SET_command_run_1.hgrm`,
/// or its `FILE` and `..._FULL_RUN_1.hgrm`), which merging would count twice. A repeat
/// is a command whose every interval (start, end and histogram) is the other log's, with
/// at least one request: shards of one workload started together (`--start-at`) share
/// the times, never every histogram.
pub fn check_repeats(logs: &[(&str, &IntervalLog)]) -> Result<(), Error> {
    for (later, (name, log)) in logs.iter().enumerate() {
        let mut commands: Vec<Option<&str>> = Vec::new();
        for iv in &log.intervals {
            let command = command_of(log, iv.tag.as_deref());
            if !commands.contains(&command) {
                commands.push(command);
            }
        }
        for command in commands {
            let mine = series(log, command);
            if mine.iter().all(|iv| iv.histogram.is_empty()) {
                continue;
            }
            for (first, first_log) in &logs[..later] {
                let theirs = series(first_log, command);
                let same = theirs.len() == mine.len()
                    && theirs.iter().zip(&mine).all(|(a, b)| {
                        a.start_epoch_ms == b.start_epoch_ms
                            && a.end_epoch_ms == b.end_epoch_ms
                            && a.histogram == b.histogram
                    });
                if same {
                    return Err(Error::usage(format!(
                        "{name}: its {} intervals are {first}'s (the same run written twice, \
                         as --hdr-log and --hdr-file-prefix files): its requests would be \
                         counted twice; give one of them",
                        command.unwrap_or("whole-run")
                    )));
                }
            }
        }
    }
    Ok(())
}

/// The intervals of `log` that belong to `command` (`None`: the whole run).
fn series<'a>(log: &'a IntervalLog, command: Option<&str>) -> Vec<&'a Interval> {
    log.intervals
        .iter()
        .filter(|iv| command_of(log, iv.tag.as_deref()) == command)
        .collect()
}

/// Merges interval logs; `logs` holds each file's name and contents, in input order.
///
/// Rows are the commands (tags, or the command in a `.hgrm` title) in first-seen order;
/// `Totals` is the untagged whole-run lines when any log has them, else the sum of the
/// commands. A log's rate is its count over its span (first interval start to last
/// interval end); rates of several logs are summed. Logs carry no bytes, hits or errors.
pub fn merge(
    logs: &[(&str, &IntervalLog)],
    percentiles: Option<&[f64]>,
) -> Result<MergedResult, Error> {
    for (name, log) in logs {
        if log.intervals.is_empty() {
            return Err(Error::usage(format!(
                "{name}: no intervals, nothing to merge"
            )));
        }
    }
    let mut commands: Vec<&str> = Vec::new();
    let mut any_whole_run = false;
    for (_, log) in logs {
        for iv in &log.intervals {
            match command_of(log, iv.tag.as_deref()) {
                Some(c) if !commands.contains(&c) => commands.push(c),
                Some(_) => {}
                None => any_whole_run = true,
            }
        }
    }
    let percentiles = percentiles.map_or_else(|| vec![50.0, 99.0, 99.9], <[f64]>::to_vec);

    let mut names: Vec<RowName> = commands
        .iter()
        .map(|c| RowName {
            row: row_of_histogram(c),
            hist: c.to_string(),
            has_hits: false,
        })
        .collect();
    let mut pieces: Vec<Vec<RowPiece>> = commands
        .iter()
        .map(|c| {
            logs.iter()
                .map(|(_, log)| piece(log, |x| x == Some(*c)))
                .collect()
        })
        .collect();
    names.push(RowName {
        row: "Totals".to_string(),
        hist: "FULL_RUN".to_string(),
        has_hits: false,
    });
    pieces.push(
        logs.iter()
            .map(|(_, log)| piece(log, |x| x.is_none() || !any_whole_run))
            .collect(),
    );

    let start = logs
        .iter()
        .flat_map(|(_, l)| l.intervals.iter().map(|i| i.start_epoch_ms))
        .min()
        .unwrap_or(0);
    let finish = logs
        .iter()
        .flat_map(|(_, l)| l.intervals.iter().map(|i| i.end_epoch_ms))
        .max()
        .unwrap_or(0);
    let all_seconds = || {
        pieces
            .iter()
            .flatten()
            .flat_map(|p| p.seconds.iter().map(|s| s.epoch_second))
    };
    let first_second = all_seconds().min().unwrap_or(0).min(nearest_second(start));
    let window = Window::checked(
        first_second,
        all_seconds().max().map_or(0, |l| l - first_second + 1),
        start,
        finish,
    )?;
    let layout = Layout::of(
        logs.iter()
            .flat_map(|(_, l)| l.intervals.iter().map(|i| &i.histogram)),
    );
    let rows = names
        .into_iter()
        .zip(&pieces)
        .map(|(name, p)| merge_row(name, p, &layout, &window, &percentiles))
        .collect::<Result<Vec<_>, _>>()?;
    let duration_ms = finish - start;
    let names = logs
        .iter()
        .map(|(n, _)| Json::String(n.to_string()))
        .collect();
    Ok(MergedResult {
        results: Results {
            title: "ALL STATS".to_string(),
            run_number: 1,
            start_epoch_ms: start,
            finish_epoch_ms: finish,
            duration_ms,
            interrupted: false,
            stopped_by: None,
            cluster: false,
            rows,
            servers: Vec::new(),
            visibility: None,
            schedule: None,
            unanswered: None,
        },
        configuration: vec![("merged_from".to_string(), Json::Array(names).to_literal())],
        run_info: RunInfo {
            threads: 0,
            connections_per_thread: 0,
            limit: Limit::Seconds(duration_ms / 1000),
            ramp: None,
        },
        percentiles,
        hide_histogram: false,
        inputs: logs.iter().map(|(n, _)| n.to_string()).collect(),
        steps: Vec::new(),
        sweep: None,
        notes: Vec::new(),
    })
}

/// The row a command's histogram tag names: `SET` -> `Sets`, and `SET_2` (a second line
/// of one command, `--command-stats-breakdown=line`) -> `Sets #2`, as the run named it.
fn row_of_histogram(hist: &str) -> String {
    match split_number(hist, HIST_NUMBER) {
        (base, Some(n)) => format!("{}{ROW_NUMBER}{n}", row_name(base)),
        (_, None) => row_name(hist),
    }
}

#[cfg(test)]
mod row_name_tests {
    use super::row_of_histogram;

    #[test]
    fn numbered_histograms_are_numbered_rows() {
        assert_eq!(row_of_histogram("SET"), "Sets");
        assert_eq!(row_of_histogram("SET_2"), "Sets #2");
        assert_eq!(row_of_histogram("HSET"), "Hsets");
    }
}
