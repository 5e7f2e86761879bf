//! One JSON result file (kvbench's, memtier_benchmark's or a merged one, as
//! `resultfile` read it) into one run of the HTML report's model.
//!
//! What the page needs and where it comes from:
//!
//! | model | from the file |
//! | --- | --- |
//! | rows | the main block's rows ([`main_block`]): `ALL STATS`, else the `-x N` aggregate, else the best run, else the first block |
//! | hits/misses | only for rows the table gives them to (`Gets`, `Totals` of SET/GET) |
//! | average | `Average Latency`; memtier writes 0 in `Totals`: then the histogram's mean |
//! | p50 / p99 / p99.9 | the row's compressed histogram when it holds every request, else `Percentile Latencies` (`p50.00`...) |
//! | per second | `Time-Serie`: count over the second's length (the last second may be partial) |
//! | spectrum | the row's `Compressed Histogram` (µs) |
//! | rate sweep | kvbench's `Rate Steps` (a sweep's file shows the curve, not a table) |
//! | TRYAGAIN | a row's `TRYAGAIN` (kvbench, cluster mode) |
//! | per server | the main block's `Servers` rows (a pool), with their `Errors` |
//! | visibility | the main block's `Replica Visibility`: its lag row, timeouts, untracked |
//! | service time | each row's `Service Latency` (open loop): its histogram, else its percentiles |
//! | schedule | the main block's `Schedule` (open loop): target, achieved, late, lag histogram |
//! | unanswered warning | the main block's `Unfinished` > `Warning` (closed loop: requests a stalled server left unanswered) |
//! | averaged over N runs | the `AGGREGATED AVERAGE RESULTS (N runs)` block shown, or a merged file's `run_count` (with `merged_from`: each file's runs when they differed) |
//! | commands | `configuration`'s `command`, `command-ratio`, `command-key-pattern` (kvbench, `--command`) |
//! | configuration | `configuration` (but the commands), then the run's facts (block, start, duration, run information, SLO) |

use crate::date::civil_from_days;
use crate::plan::Shard;
use crate::report::html::{
    Averaged, RateSweep, Row, Run, Schedule, SecondPoint, SweepStep, Visibility,
};
use crate::resultfile::ordered::Json;
use crate::resultfile::{
    Block, BlockKind, JsonResult, RateSteps, RowData, RunCount, Runtime, ScheduleData, Second,
    ServiceData, find_percentile,
};
use crate::results::latency_at_percentile_ms;

use super::settings;

/// A final partial second shorter than this (seconds) is left out of the per-second
/// series: its rate is a few requests over a few milliseconds, noise that would plot as a
/// plunge or a spike.
const MIN_LAST_SECOND: f64 = 0.5;

/// The run `json` describes, named `label`.
pub fn run_from_json(label: String, json: &JsonResult) -> Run {
    let block = main_block(json);
    let (commands, command_keys) = settings::commands(&json.configuration);
    let mut config: Vec<(String, String)> = json
        .configuration
        .iter()
        // Listed as commands, not again as settings.
        .filter(|(key, _)| !command_keys.contains(&key.as_str()))
        .map(|(key, value)| (key.clone(), setting_text(key, value)))
        .collect();
    let swept = json.rate_steps.is_some();
    if swept {
        config.extend(sweep_span(&json.blocks));
    } else if let Some(block) = block {
        config.extend(block_facts(block));
    }
    config.extend(run_information(json, swept));

    let sweep = json.rate_steps.as_ref().map(|steps| {
        // The objective once: as the setting (`slo`) when the file has it.
        let facts = sweep_facts(steps).into_iter().filter(|(key, value)| {
            key != "SLO" || !config.iter().any(|(k, v)| k == "slo" && v == value)
        });
        config.extend(facts.collect::<Vec<_>>());
        rate_sweep(steps, split_shard(json))
    });
    // A sweep's file is its curve: its steps are separate runs at different rates, and no
    // one of them stands for the file in a table.
    let mut rows: Vec<Row> = match (block, &sweep) {
        (Some(block), None) => block.rows.iter().map(|r| row(r, &block.runtime)).collect(),
        _ => Vec::new(),
    };
    // redis-benchmark's tests run one after another, each counting seconds from its own
    // start (with a partial last one): its file's seconds are per test, not one timeline,
    // and drawn on one they would read as rates they never had.
    let per_test_seconds = json
        .configuration
        .iter()
        .any(|(key, value)| key == "tool" && value_text(value) == "redis-benchmark");
    if per_test_seconds {
        rows.iter_mut().for_each(|r| r.per_second.clear());
    }
    let (servers, visibility) = match (block, &sweep) {
        (Some(block), None) => (
            block
                .servers
                .iter()
                .map(|r| row(r, &block.runtime))
                .collect(),
            block.visibility.as_ref().map(|v| Visibility {
                lag: row(&v.lag, &block.runtime),
                timeouts: v.timeouts,
                untracked: v.untracked,
            }),
        ),
        _ => (Vec::new(), None),
    };
    let (service, schedule) = match (block, &sweep) {
        (Some(block), None) => (
            block
                .rows
                .iter()
                .filter_map(|r| r.service.as_ref().map(|s| service_row(r, s)))
                .collect(),
            block.schedule.as_ref().map(schedule),
        ),
        _ => (Vec::new(), None),
    };
    Run {
        label,
        config,
        commands,
        interrupted: json.blocks.iter().any(|b| b.runtime.interrupted),
        stopped_by: json
            .blocks
            .iter()
            .rev()
            .find_map(|b| b.runtime.stopped_by.clone()),
        // The writer judged whether they hide a stall (a sweep's steps are open loop).
        unanswered_warning: block
            .filter(|_| sweep.is_none())
            .and_then(|b| b.unfinished.as_ref())
            .and_then(|u| u.warning.clone()),
        rows,
        averaged_over_runs: averaged_over_runs(json, block),
        sweep,
        servers,
        visibility,
        service,
        schedule,
    }
}

/// How many runs the block's figures stand for, when more than one: `-x N`'s aggregate,
/// or a merge of `-x N` files (each input's aggregate, so its counts are every run's and
/// its rates a run's mean, shards added), each file's runs when they differed.
fn averaged_over_runs(json: &JsonResult, block: Option<&Block>) -> Option<Averaged> {
    let runs = |n: u64| u32::try_from(n).unwrap_or(u32::MAX);
    match json.runs_behind(block?) {
        RunCount::Runs(n) => (n > 1).then(|| Averaged::Runs(runs(n))),
        RunCount::PerInput(inputs) => Some(Averaged::Mixed(
            inputs
                .into_iter()
                .map(|(name, n)| (name, runs(n)))
                .collect(),
        )),
    }
}

/// A row's open-loop service time as a row of its own: the same name, count and rate.
fn service_row(data: &RowData, service: &ServiceData) -> Row {
    let ran = data.count > 0;
    let histogram = service.histogram.as_ref().filter(|h| !h.is_empty());
    let percentile = |p: f64| {
        histogram
            .map(|h| latency_at_percentile_ms(h, p))
            .or_else(|| find_percentile(&service.percentiles, p))
            .filter(|_| ran)
    };
    let mut row = Row::named(&data.name);
    row.count = data.count;
    row.ops_per_sec = data.ops_per_sec;
    row.avg_ms = ran.then_some(service.average_latency_ms);
    row.p50_ms = percentile(50.0);
    row.p99_ms = percentile(99.0);
    row.p999_ms = percentile(99.9);
    row.histogram = histogram.cloned();
    row
}

/// The `"Schedule"` as the page shows it: lag percentiles from its histogram.
fn schedule(data: &ScheduleData) -> Schedule {
    let lag = data.lag.as_ref().filter(|h| !h.is_empty());
    let at = |p: f64| lag.map(|h| latency_at_percentile_ms(h, p));
    Schedule {
        target_per_sec: data.target_per_sec,
        per_connection: data.per_connection,
        arrival: data.arrival.clone(),
        achieved_per_sec: data.achieved_per_sec,
        sent: data.sent,
        late: data.late,
        late_waiting_for_connection: data.late_blocked,
        unsent_at_end: data.unsent_at_end,
        in_flight_at_end: data.in_flight_at_end,
        lag_p50_ms: at(50.0),
        lag_p99_ms: at(99.0),
        lag_p999_ms: at(99.9),
    }
}

/// The block that stands for the whole file: `ALL STATS` (one run, or a merged result);
/// for `-x N` the aggregate of the runs, else the best run; else the first block.
pub fn main_block(json: &JsonResult) -> Option<&Block> {
    let find = |wanted: fn(BlockKind) -> bool| json.blocks.iter().find(|b| wanted(b.kind));
    find(|k| k == BlockKind::AllStats)
        .or_else(|| find(|k| matches!(k, BlockKind::Aggregated(_))))
        .or_else(|| find(|k| k == BlockKind::Best))
        .or_else(|| json.blocks.first())
}

/// A configuration value as the page shows it: strings without their quotes, anything
/// else (numbers, `null`, the arrays a merge writes where its inputs differ) as JSON.
fn value_text(value: &Json) -> String {
    match value {
        Json::String(s) => s.clone(),
        other => other.to_literal(),
    }
}

/// A setting as a person reads it: the values a merge gathered from its inputs (an array,
/// arrays within it for a merge of merges) listed plainly, an unset one (`null`) as a
/// dash, and `--start-at`'s epoch seconds as a UTC time.
fn setting_text(key: &str, value: &Json) -> String {
    fn listed(value: &Json, out: &mut Vec<String>) {
        match value {
            Json::Array(items) => items.iter().for_each(|item| listed(item, out)),
            Json::Null => out.push("—".to_string()),
            other => out.push(value_text(other)),
        }
    }
    match value.as_f64() {
        Some(seconds) if key == "start_at" && seconds.is_finite() && seconds > 0.0 => {
            let ms = (seconds * 1000.0).round() as u64;
            match ms % 1000 {
                0 => utc_text(ms),
                frac => utc_text(ms).replace(" UTC", &format!(".{frac:03} UTC")),
            }
        }
        _ => {
            let mut items = Vec::new();
            listed(value, &mut items);
            items.join(", ")
        }
    }
}

/// The block's title (when the file has several), when it started (UTC) and how long it
/// took.
fn block_facts(block: &Block) -> Vec<(String, String)> {
    let mut facts = Vec::new();
    if block.kind != BlockKind::AllStats {
        facts.push(("results".to_string(), block.title.clone()));
    }
    if block.runtime.start_epoch_ms > 0 {
        facts.push((
            "start time".to_string(),
            utc_text(block.runtime.start_epoch_ms),
        ));
    }
    if block.runtime.duration_ms > 0 {
        facts.push((
            "duration".to_string(),
            format!("{:.3} s", block.runtime.duration_ms as f64 / 1000.0),
        ));
    }
    facts
}

/// A rate sweep's steps as one span: how many, when the first started and how long from
/// its start to the last one's finish (no one step's title, start or duration stands for
/// the sweep).
fn sweep_span(blocks: &[Block]) -> Vec<(String, String)> {
    let mut facts = vec![(
        "results".to_string(),
        format!("{} rate steps", blocks.len()),
    )];
    let start = blocks
        .iter()
        .map(|b| b.runtime.start_epoch_ms)
        .filter(|&ms| ms > 0)
        .min();
    let finish = blocks.iter().map(|b| b.runtime.finish_epoch_ms).max();
    if let Some(start) = start {
        facts.push(("start time".to_string(), utc_text(start)));
        if let Some(finish) = finish.filter(|&f| f > start) {
            let secs = (finish - start) as f64 / 1000.0;
            facts.push(("duration".to_string(), format!("{secs:.3} s")));
        }
    }
    facts
}

/// `2026-11-30 12:10:58 UTC` for milliseconds since the epoch.
fn utc_text(epoch_ms: u64) -> String {
    let secs = epoch_ms / 1000;
    let (year, month, day) = civil_from_days((secs / 86_400) as i64);
    let of_day = secs % 86_400;
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02} UTC",
        of_day / 3600,
        of_day / 60 % 60,
        of_day % 60
    )
}

/// The `"run information"` object's facts, named as the file names them.
fn run_information(json: &JsonResult, swept: bool) -> Vec<(String, String)> {
    let info = &json.run_info;
    [
        ("Threads", info.threads),
        ("Connections per thread", info.connections_per_thread),
        ("Requests per client", info.requests_per_client),
        // A sweep's seconds are each step's (`--step-duration`).
        (
            if swept { "Seconds per step" } else { "Seconds" },
            info.seconds,
        ),
    ]
    .into_iter()
    .filter_map(|(key, value)| value.map(|v| (key.to_string(), v.to_string())))
    .collect()
}

/// The sweep's objective and verdict.
fn sweep_facts(steps: &RateSteps) -> Vec<(String, String)> {
    let mut facts = Vec::new();
    if let Some(slo) = &steps.slo {
        facts.push(("SLO".to_string(), slo.clone()));
        let held = steps
            .highest_rate_held
            .map_or_else(|| "none".to_string(), |r| r.to_string());
        facts.push((
            "Highest Rate Held".to_string(),
            match steps.interrupted {
                true => format!("{held} so far (interrupted)"),
                false => held,
            },
        ));
    }
    if steps.interrupted {
        facts.push((
            "Interrupted".to_string(),
            format!("in step {} (Ctrl-C)", steps.steps.len()),
        ));
    }
    if let Some(planned) = steps.planned_steps {
        facts.push(("Planned Steps".to_string(), planned.to_string()));
    }
    facts
}

/// `I/N` when the file is one shard of a split run (`--shard=I/N`, N above 1).
fn split_shard(json: &JsonResult) -> Option<String> {
    let (_, value) = json.configuration.iter().find(|(key, _)| key == "shard")?;
    let text = value.as_str()?;
    Shard::parse(text)
        .is_ok_and(|shard| shard.is_split())
        .then(|| text.to_string())
}

fn rate_sweep(steps: &RateSteps, shard: Option<String>) -> RateSweep {
    RateSweep {
        shard,
        steps: steps
            .steps
            .iter()
            .map(|s| SweepStep {
                target_ops_per_sec: s.target_per_sec,
                achieved_ops_per_sec: s.achieved_per_sec,
                p50_ms: s.percentile_ms(50.0).unwrap_or(0.0),
                p99_ms: s.percentile_ms(99.0).unwrap_or(0.0),
                p999_ms: s.percentile_ms(99.9).unwrap_or(0.0),
                late: s.late,
                unfinished: s.unfinished,
                held: s.held,
            })
            .collect(),
        slo: steps.slo.clone(),
        highest_rate_held: steps.highest_rate_held,
        planned_steps: steps.planned_steps,
    }
}

fn row(data: &RowData, runtime: &Runtime) -> Row {
    let ran = data.count > 0;
    let histogram = data.histogram.as_ref().filter(|h| !h.is_empty());
    // A histogram that holds every request gives the table's figures with the table's
    // rank rule; it also stands in where memtier wrote nonsense (the Totals percentiles
    // of its AGGREGATED block, computed from an empty histogram).
    let complete = histogram.filter(|h| h.len() == data.count);
    let percentile = |p: f64| {
        complete
            .map(|h| latency_at_percentile_ms(h, p))
            .or_else(|| find_percentile(&data.percentiles, p))
            .or_else(|| histogram.map(|h| latency_at_percentile_ms(h, p)))
            .filter(|_| ran)
    };
    let mut row = Row::named(&data.name);
    row.count = data.count;
    row.ops_per_sec = data.ops_per_sec;
    if data.has_hits {
        row.hits_per_sec = Some(data.hits_per_sec);
        row.misses_per_sec = Some(data.misses_per_sec);
    }
    row.avg_ms = ran.then(|| average_ms(data)).flatten();
    row.p50_ms = percentile(50.0);
    row.p99_ms = percentile(99.0);
    row.p999_ms = percentile(99.9);
    row.kb_per_sec = data.kb_per_sec;
    row.per_second = per_second(&data.series, runtime.duration_ms);
    row.histogram = histogram.cloned();
    row.errors = data.errors;
    row.connection_errors = data.connection_errors;
    row.tryagain = data.tryagain;
    row
}

/// The row's mean latency: as written, except memtier's 0 in `Totals` (a bug of its
/// writer), for which the histogram's mean stands in, or else the accumulated latency
/// over the count.
fn average_ms(data: &RowData) -> Option<f64> {
    if data.average_latency_ms > 0.0 {
        return Some(data.average_latency_ms);
    }
    if let Some(h) = data.histogram.as_ref().filter(|h| !h.is_empty()) {
        return Some(h.mean() / 1000.0);
    }
    if data.accumulated_latency_ms > 0.0 {
        return Some(data.accumulated_latency_ms / data.count as f64);
    }
    Some(data.average_latency_ms)
}

/// The per-second series: each second's count over its length (1 s, the last one what is
/// left of the run's duration), a final sliver shorter than [`MIN_LAST_SECOND`] left out.
fn per_second(series: &[Second], duration_ms: u64) -> Vec<SecondPoint> {
    let run_secs = duration_ms as f64 / 1000.0;
    let mut points = Vec::with_capacity(series.len());
    for (i, second) in series.iter().enumerate() {
        let last = i + 1 == series.len();
        let left = run_secs - second.offset as f64;
        let length = if last && duration_ms > 0 && left > 0.0 && left < 1.0 {
            left
        } else {
            1.0
        };
        if last && length < MIN_LAST_SECOND && !points.is_empty() {
            continue;
        }
        let percentile = |p: f64| {
            find_percentile(&second.percentiles, p)
                .or_else(|| {
                    second
                        .histogram
                        .as_ref()
                        .filter(|h| !h.is_empty())
                        .map(|h| latency_at_percentile_ms(h, p))
                })
                .filter(|_| second.count > 0)
        };
        points.push(SecondPoint {
            second: second.offset,
            ops_per_sec: second.count as f64 / length,
            p50_ms: percentile(50.0),
            p99_ms: percentile(99.0),
        });
    }
    points
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resultfile::{Content, read_str};

    const MEMTIER_DEFAULT: &str = include_str!("../../results/testdata/default.json");
    const MEMTIER_RUNS3: &str = include_str!("../../results/testdata/runs3.json");
    const KV_SINGLE: &str = include_str!("../../resultfile/testdata/kvbench_single.json");

    fn json(text: &str) -> JsonResult {
        match read_str("t.json", text).unwrap().content {
            Content::Json(j) => j,
            Content::IntervalLog(_) => panic!("not JSON"),
        }
    }

    #[test]
    fn a_redis_benchmark_file_has_no_per_second_series() {
        let text = KV_SINGLE.replacen(
            "\"configuration\":{",
            "\"configuration\":{\"tool\": \"redis-benchmark\",",
            1,
        );
        let plain = run_from_json("k".into(), &json(KV_SINGLE));
        assert!(plain.rows.iter().any(|r| !r.per_second.is_empty()));
        let rb = run_from_json("rb".into(), &json(&text));
        assert!(!rb.rows.is_empty());
        assert!(rb.rows.iter().all(|r| r.per_second.is_empty()));
        let totals = |run: &Run| row(run, "Totals").count;
        assert_eq!(totals(&rb), totals(&plain));
    }

    fn row<'a>(run: &'a Run, name: &str) -> &'a Row {
        run.rows.iter().find(|r| r.name == name).unwrap()
    }

    #[test]
    fn the_warning_of_unanswered_requests_is_the_files() {
        let with = |unfinished: &str| {
            KV_SINGLE.replacen(
                "\"ALL STATS\":{",
                &format!("\"ALL STATS\":{{\"Unfinished\":{unfinished},"),
                1,
            )
        };
        let warned = with(
            r#"{"In Flight At End": 10,"Oldest Age": 3512.250,"Warning": "10 requests were still unanswered"}"#,
        );
        let run = run_from_json("k".into(), &json(&warned));
        assert_eq!(
            run.unanswered_warning.as_deref(),
            Some("10 requests were still unanswered")
        );
        // Requests cut off young hid no stall: the writer wrote no warning.
        let young = with(r#"{"In Flight At End": 2,"Oldest Age": 0.400}"#);
        assert_eq!(
            run_from_json("k".into(), &json(&young)).unanswered_warning,
            None
        );
        assert_eq!(
            run_from_json("k".into(), &json(KV_SINGLE)).unanswered_warning,
            None
        );
    }

    #[test]
    fn memtier_json_fills_every_row_and_the_totals_average() {
        let run = run_from_json("m".into(), &json(MEMTIER_DEFAULT));
        let names: Vec<&str> = run.rows.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["Sets", "Gets", "Waits", "Totals"]);
        let sets = row(&run, "Sets");
        assert_eq!(sets.count, 400);
        assert_eq!((sets.hits_per_sec, sets.misses_per_sec), (None, None));
        assert_eq!(sets.p99_ms, Some(0.231));
        let gets = row(&run, "Gets");
        assert_eq!(gets.hits_per_sec, Some(2012.63));
        // memtier writes 0 for Totals' average: the histogram's mean stands in.
        let totals = row(&run, "Totals");
        let avg = totals.avg_ms.unwrap();
        assert!((avg - 0.0886).abs() < 0.002, "{avg}");
        assert_eq!(totals.histogram.as_ref().map(|h| h.len()), Some(800));
        // A row that never ran has no latency at all.
        let waits = row(&run, "Waits");
        assert_eq!(
            (waits.avg_ms, waits.p50_ms, waits.p999_ms),
            (None, None, None)
        );
        // A 17 ms run: its one (partial) second is kept, at its true rate.
        assert_eq!(sets.per_second.len(), 1);
        let rate = sets.per_second[0].ops_per_sec;
        assert!((rate - 400.0 / 0.017).abs() < 1.0, "{rate}");
        assert_eq!(sets.per_second[0].p50_ms, Some(0.095));
        // Configuration in file order, strings unquoted, nulls as a dash, then the facts.
        assert_eq!(run.config[0], ("server".into(), "127.0.0.1".into()));
        assert!(run.config.contains(&("unix socket".into(), "—".into())));
        assert!(run.config.contains(&("Threads".into(), "2".into())));
        assert!(
            run.config
                .contains(&("start time".into(), "2026-11-29 19:06:20 UTC".into())),
            "{:?}",
            run.config
        );
        assert!(!run.interrupted);
        assert!(run.sweep.is_none());
        assert_eq!(run.averaged_over_runs, None);
    }

    #[test]
    fn a_merge_of_run_count_files_is_averaged_over_their_runs() {
        let merged = |run_count: &str| {
            let text = KV_SINGLE.replacen(
                "\"run_count\": 1",
                &format!("\"run_count\": {run_count}, \"merged_from\": [\"a.json\", \"b.json\"]"),
                1,
            );
            run_from_json("m".into(), &json(&text)).averaged_over_runs
        };
        assert_eq!(merged("3"), Some(Averaged::Runs(3)));
        assert_eq!(merged("1"), None);
        // Inputs of different run counts: each file's, named as merged_from lists them.
        assert_eq!(
            merged("[3, 2]"),
            Some(Averaged::Mixed(vec![
                ("a.json".to_string(), 3),
                ("b.json".to_string(), 2)
            ]))
        );
        // Not merged: ALL STATS is one run whatever the configuration says.
        let text = KV_SINGLE.replacen("\"run_count\": 1", "\"run_count\": 3", 1);
        assert_eq!(
            run_from_json("s".into(), &json(&text)).averaged_over_runs,
            None
        );
    }

    #[test]
    fn a_run_count_file_shows_its_aggregate() {
        let j = json(MEMTIER_RUNS3);
        let block = main_block(&j).unwrap();
        assert!(
            matches!(block.kind, BlockKind::Aggregated(3)),
            "{}",
            block.title
        );
        let run = run_from_json("x3".into(), &j);
        assert_eq!(run.averaged_over_runs, Some(Averaged::Runs(3)));
        assert!(
            run.config
                .iter()
                .any(|(k, v)| k == "results" && v.starts_with("AGGREGATED")),
            "{:?}",
            run.config
        );
        // memtier's text table, not the nonsense its JSON holds for the aggregate's Totals
        // (0.007 for every percentile, from an empty histogram).
        let totals = row(&run, "Totals");
        assert!(totals.histogram.is_some());
        assert_eq!(
            (totals.p50_ms, totals.p99_ms, totals.p999_ms),
            (Some(0.039), Some(0.175), Some(0.231))
        );
        let avg = totals.avg_ms.unwrap();
        assert!((avg - 0.03413).abs() < 0.001, "{avg}");
    }

    #[test]
    fn the_last_sliver_of_a_second_is_left_out() {
        let j = json(KV_SINGLE);
        let block = main_block(&j).unwrap();
        let series = &block.rows.last().unwrap().series;
        let duration = series.len() as u64 * 1000 - 900; // the last second lasts 0.1 s
        let points = per_second(series, duration);
        if series.len() > 1 {
            assert_eq!(points.len(), series.len() - 1);
        }
        // Without a duration (an aggregate) every second is whole.
        assert_eq!(per_second(series, 0).len(), series.len());
        let whole = per_second(series, series.len() as u64 * 1000);
        assert_eq!(whole.len(), series.len());
        assert_eq!(whole[0].ops_per_sec, series[0].count as f64);
    }

    #[test]
    fn a_sweep_is_its_curve() {
        let text = KV_SINGLE;
        let end = text.rfind('}').unwrap();
        let doc = format!(
            "{},\"Rate Steps\":{{\"SLO\":\"p99:5\",\"Highest Rate Held\":null,\"Planned Steps\":2,\"Steps\":[{{\"Target Rate\":1000,\"Achieved Rate\":990.5,\"p50.00\":0.1,\"p99.00\":6.0,\"p99.90\":9.0,\"Late\":0,\"Unfinished\":0,\"SLO Value\":6.0,\"Held\":\"false\"}}]}}}}",
            &text[..end]
        );
        let run = run_from_json("sweep".into(), &json(&doc));
        assert!(run.rows.is_empty());
        let sweep = run.sweep.unwrap();
        assert_eq!(
            sweep.steps,
            [SweepStep {
                target_ops_per_sec: 1000.0,
                achieved_ops_per_sec: 990.5,
                p50_ms: 0.1,
                p99_ms: 6.0,
                p999_ms: 9.0,
                late: Some(0),
                unfinished: Some(0),
                held: Some(false),
            }]
        );
        assert_eq!(
            (
                sweep.slo.as_deref(),
                sweep.highest_rate_held,
                sweep.planned_steps
            ),
            (Some("p99:5"), None, Some(2))
        );
        assert!(run.config.contains(&("SLO".into(), "p99:5".into())));
        assert!(
            run.config
                .contains(&("Highest Rate Held".into(), "none".into()))
        );
    }

    #[test]
    fn settings_read_as_text_not_json() {
        let merged = Json::Array(vec![
            Json::Array(vec![Json::String("0/3".into()), Json::String("1/3".into())]),
            Json::String("2/3".into()),
        ]);
        assert_eq!(setting_text("shard", &merged), "0/3, 1/3, 2/3");
        assert_eq!(setting_text("authenticate", &Json::Null), "—");
        assert_eq!(
            setting_text("start_at", &Json::Float(1_796_350_241.101)),
            "2026-12-04 02:10:41.101 UTC"
        );
        assert_eq!(
            setting_text("start_at", &Json::Uint(1_796_350_241)),
            "2026-12-04 02:10:41 UTC"
        );
        assert_eq!(setting_text("threads", &Json::Uint(4)), "4");
    }

    #[test]
    fn tryagain_counts_reach_the_page_where_any() {
        const KV_CLUSTER: &str = include_str!("../../resultfile/testdata/kvbench_cluster.json");
        let plain = run_from_json("c".into(), &json(KV_CLUSTER));
        assert!(plain.rows.iter().all(|r| r.tryagain == 0));
        let page = crate::report::html::render_page(&crate::report::html::Report {
            title: String::new(),
            runs: vec![plain],
        });
        assert!(!page.contains("<th>TRYAGAIN</th>"));
        let with = KV_CLUSTER.replace(
            "\t\t\t,\"ASK/sec\": 0.00\n",
            "\t\t\t,\"ASK/sec\": 0.00\n\t\t\t,\"TRYAGAIN/sec\": 1.00\n\t\t\t,\"TRYAGAIN\": 12\n",
        );
        let run = run_from_json("c".into(), &json(&with));
        assert_eq!(row(&run, "Totals").tryagain, 12);
        let page = crate::report::html::render_page(&crate::report::html::Report {
            title: String::new(),
            runs: vec![run],
        });
        assert!(page.contains("<th>TRYAGAIN</th>"), "{page:.3000}");
        assert!(page.contains("<td>12</td>"));
    }

    #[test]
    fn utc_dates() {
        assert_eq!(utc_text(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(utc_text(1_795_979_180_809), "2026-11-29 19:06:20 UTC");
    }
}
