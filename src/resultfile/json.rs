//! Reads a `--json-out-file` document (kvbench's or memtier_benchmark's, format version 2)
//! into the [`JsonResult`] model.
//!
//! Tolerant where writers differ (extra keys, a missing `Time-Serie`, `"true"` or `true`
//! for a boolean, `MOVED/sec` only in cluster mode), strict where a wrong figure would
//! follow: a row's numbers must be numbers, a block must end with `Totals`, a compressed
//! histogram must decode. Errors name the place: `"ALL STATS" > "Sets" > "Count": expected
//! a whole number, found "12"` (the caller puts the file name first).

use crate::results::decode_histogram;
use crate::stats::rows::{HIST_NUMBER, ROW_NUMBER, split_number};

use super::model::{
    Block, BlockKind, ConfigFacts, Distribution, JsonResult, Percentile, RateStep, RateSteps,
    RowData, RunInformation, Runtime, ScheduleData, Second, ServiceData, UnfinishedData,
    VisibilityData,
};
use super::ordered::Json;

/// Where in the document a value sits, for error messages.
#[derive(Clone, Copy)]
struct At<'a> {
    parent: Option<&'a At<'a>>,
    key: &'a str,
}

impl<'a> At<'a> {
    fn root(key: &'a str) -> At<'a> {
        At { parent: None, key }
    }

    fn child(&'a self, key: &'a str) -> At<'a> {
        At {
            parent: Some(self),
            key,
        }
    }

    fn path(&self) -> String {
        let mut keys = vec![self.key];
        let mut at = self.parent;
        while let Some(a) = at {
            keys.push(a.key);
            at = a.parent;
        }
        keys.reverse();
        keys.iter()
            .map(|k| format!("\"{k}\""))
            .collect::<Vec<_>>()
            .join(" > ")
    }

    fn error(&self, what: &str) -> String {
        format!("{}: {what}", self.path())
    }
}

/// A short description of a JSON value for "found ..." messages.
fn describe(v: &Json) -> String {
    let text = v.to_literal();
    if text.chars().count() > 40 {
        let cut: String = text.chars().take(37).collect();
        format!("{cut}...")
    } else {
        text
    }
}

fn f64_at(obj: &Json, parent: &At, key: &str) -> Result<Option<f64>, String> {
    match obj.get(key) {
        None | Some(Json::Null) => Ok(None),
        Some(v) => match v.as_f64() {
            Some(x) if x.is_finite() => Ok(Some(x)),
            _ => Err(parent
                .child(key)
                .error(&format!("expected a number, found {}", describe(v)))),
        },
    }
}

fn u64_at(obj: &Json, parent: &At, key: &str) -> Result<Option<u64>, String> {
    match obj.get(key) {
        None | Some(Json::Null) => Ok(None),
        Some(v) => v.as_u64().map(Some).ok_or_else(|| {
            parent
                .child(key)
                .error(&format!("expected a whole number, found {}", describe(v)))
        }),
    }
}

fn required<T>(value: Option<T>, parent: &At, key: &str) -> Result<T, String> {
    value.ok_or_else(|| parent.child(key).error("missing"))
}

/// A figure a writer always puts in a row; 0 when a writer left it out.
fn figure(obj: &Json, parent: &At, key: &str) -> Result<f64, String> {
    Ok(f64_at(obj, parent, key)?.unwrap_or(0.0))
}

fn bool_at(obj: &Json, parent: &At, key: &str) -> Result<bool, String> {
    match obj.get(key) {
        None | Some(Json::Null) => Ok(false),
        Some(Json::Bool(b)) => Ok(*b),
        Some(Json::String(s)) if s == "true" => Ok(true),
        Some(Json::String(s)) if s == "false" => Ok(false),
        Some(v) => Err(parent.child(key).error(&format!(
            "expected \"true\" or \"false\", found {}",
            describe(v)
        ))),
    }
}

fn string_at(obj: &Json, parent: &At, key: &str) -> Result<Option<String>, String> {
    match obj.get(key) {
        None | Some(Json::Null) => Ok(None),
        Some(Json::String(s)) => Ok(Some(s.clone())),
        Some(v) => Err(parent
            .child(key)
            .error(&format!("expected a string, found {}", describe(v)))),
    }
}

/// `p99.90` -> 99.9.
fn percentile_key(key: &str) -> Option<f64> {
    key.strip_prefix('p')?
        .parse::<f64>()
        .ok()
        .filter(|p| (0.0..=100.0).contains(p))
}

fn percentiles(obj: &Json, at: &At) -> Result<Vec<Percentile>, String> {
    let mut out = Vec::new();
    for (key, value) in obj.members().unwrap_or_default() {
        let Some(percent) = percentile_key(key) else {
            continue;
        };
        let latency_ms = value.as_f64().filter(|x| x.is_finite()).ok_or_else(|| {
            at.child(key)
                .error(&format!("expected a number, found {}", describe(value)))
        })?;
        out.push(Percentile {
            percent,
            latency_ms,
        });
    }
    Ok(out)
}

/// The `"Compressed Histogram"` in `obj` or in its `"Histogram log format"` member.
fn histogram(obj: &Json, at: &At) -> Result<Option<hdrhistogram::Histogram<u64>>, String> {
    let (holder, holder_at) = match obj.get("Histogram log format") {
        Some(h) => (h, at.child("Histogram log format")),
        None => (obj, *at),
    };
    match holder.get("Compressed Histogram") {
        None | Some(Json::Null) => Ok(None),
        Some(Json::String(s)) if s.is_empty() => Ok(None),
        Some(Json::String(s)) => decode_histogram(s).map(Some).map_err(|e| {
            holder_at
                .child("Compressed Histogram")
                .error(&format!("the histogram {e}"))
        }),
        Some(v) => Err(holder_at
            .child("Compressed Histogram")
            .error(&format!("expected a string, found {}", describe(v)))),
    }
}

fn second(offset: u64, obj: &Json, at: &At) -> Result<Second, String> {
    Ok(Second {
        offset,
        bytes_rx: u64_at(obj, at, "Bytes RX")?.unwrap_or(0),
        bytes_tx: u64_at(obj, at, "Bytes TX")?.unwrap_or(0),
        count: required(u64_at(obj, at, "Count")?, at, "Count")?,
        average_latency_ms: f64_at(obj, at, "Average Latency")?,
        accumulated_latency_ms: f64_at(obj, at, "Accumulated Latency")?,
        min_latency_ms: f64_at(obj, at, "Min Latency")?,
        max_latency_ms: f64_at(obj, at, "Max Latency")?,
        percentiles: percentiles(obj, at)?,
        histogram: histogram(obj, at)?,
        service: service(obj, at)?,
    })
}

/// The `"Service Latency"` object of a row or a second: the row's latency keys (a row
/// nests its percentiles and histogram in `"Percentile Latencies"`, a second does not).
fn service(obj: &Json, at: &At) -> Result<Option<ServiceData>, String> {
    let Some(s) = obj.get("Service Latency") else {
        return Ok(None);
    };
    let at = at.child("Service Latency");
    let (pcts, hist) = match s.get("Percentile Latencies") {
        Some(p) => {
            let pct_at = at.child("Percentile Latencies");
            (percentiles(p, &pct_at)?, histogram(p, &pct_at)?)
        }
        None => (percentiles(s, &at)?, histogram(s, &at)?),
    };
    Ok(Some(ServiceData {
        average_latency_ms: figure(s, &at, "Average Latency")?,
        min_latency_ms: figure(s, &at, "Min Latency")?,
        max_latency_ms: figure(s, &at, "Max Latency")?,
        percentiles: pcts,
        histogram: hist,
    }))
}

/// kvbench's `"Schedule"` object of an open-loop block.
fn schedule(obj: &Json, at: &At) -> Result<ScheduleData, String> {
    let lag_at = at.child("Lag");
    let lag = match obj.get("Lag") {
        Some(l) => histogram(l, &lag_at)?,
        None => None,
    };
    let age_at = at.child("Unfinished Age");
    let unfinished_age = match obj.get("Unfinished Age") {
        Some(a) => histogram(a, &age_at)?,
        None => None,
    };
    let count = |key: &str| Ok::<u64, String>(u64_at(obj, at, key)?.unwrap_or(0));
    Ok(ScheduleData {
        target_per_sec: required(u64_at(obj, at, "Target Rate")?, at, "Target Rate")?,
        per_connection: obj.get("Rate Set").and_then(Json::as_str) == Some("per connection"),
        arrival: obj
            .get("Arrival")
            .and_then(Json::as_str)
            .unwrap_or("uniform")
            .to_string(),
        achieved_per_sec: figure(obj, at, "Achieved Rate")?,
        sent: count("Sent")?,
        late: count("Late")?,
        late_blocked: count("Late Waiting For Connection")?,
        unsent_at_end: count("Unsent At End")?,
        in_flight_at_end: count("In Flight At End")?,
        lag,
        unfinished_age,
    })
}

/// kvbench's `"Unfinished"` object of a closed-loop block: the requests the run left
/// unanswered (a count, required) and the oldest one's age in ms.
fn unfinished(obj: &Json, at: &At) -> Result<UnfinishedData, String> {
    let requests = required(u64_at(obj, at, "In Flight At End")?, at, "In Flight At End")?;
    let oldest_ms = figure(obj, at, "Oldest Age")?;
    if oldest_ms < 0.0 {
        return Err(at
            .child("Oldest Age")
            .error(&format!("expected an age in ms, found {oldest_ms}")));
    }
    Ok(UnfinishedData {
        unanswered: crate::results::Unanswered {
            requests,
            // Written to the µs: this gives the µs back.
            oldest_age_us: (oldest_ms * 1000.0).round() as u64,
            ..Default::default()
        },
        warning: string_at(obj, at, "Warning")?,
    })
}

/// The rows of a `"Servers"` object (a pool), one per member.
fn servers(obj: &Json, at: &At) -> Result<Vec<RowData>, String> {
    let mut out = Vec::new();
    for (key, value) in obj.members().unwrap_or_default() {
        if value.get("Count").is_some() {
            let mut r = row(key, value, &at.child(key))?;
            r.hist_name = key.clone();
            out.push(r);
        }
    }
    Ok(out)
}

/// The `"Replica Visibility"` object: its counts and its one lag row.
fn visibility(obj: &Json, at: &At) -> Result<VisibilityData, String> {
    let lag = obj
        .members()
        .unwrap_or_default()
        .iter()
        .find(|(_, v)| v.get("Count").is_some());
    let Some((key, value)) = lag else {
        return Err(at.error("no lag row"));
    };
    let mut lag = row(key, value, &at.child(key))?;
    lag.hist_name = "VISIBILITY".to_string();
    Ok(VisibilityData {
        timeouts: u64_at(obj, at, "Timeouts")?.unwrap_or(0),
        untracked: u64_at(obj, at, "Untracked")?.unwrap_or(0),
        lag,
    })
}

fn series(row: &Json, at: &At) -> Result<Vec<Second>, String> {
    let Some(serie) = row.get("Time-Serie") else {
        return Ok(Vec::new());
    };
    let at = at.child("Time-Serie");
    let Some(members) = serie.members() else {
        return Err(at.error(&format!("expected an object, found {}", describe(serie))));
    };
    let mut out = Vec::with_capacity(members.len());
    for (key, value) in members {
        let entry_at = at.child(key);
        let offset = key
            .parse::<u64>()
            .map_err(|_| entry_at.error("expected a second number as the key"))?;
        out.push(second(offset, value, &entry_at)?);
    }
    out.sort_by_key(|s| s.offset);
    if out.windows(2).any(|w| w[0].offset == w[1].offset) {
        return Err(at.error("a second appears twice"));
    }
    Ok(out)
}

fn row(name: &str, obj: &Json, at: &At) -> Result<RowData, String> {
    let pct_at = at.child("Percentile Latencies");
    let (pcts, hist) = match obj.get("Percentile Latencies") {
        Some(p) => (percentiles(p, &pct_at)?, histogram(p, &pct_at)?),
        None => (Vec::new(), None),
    };
    let average = figure(obj, at, "Average Latency")?;
    Ok(RowData {
        name: name.to_string(),
        hist_name: String::new(),
        has_hits: false,
        count: required(u64_at(obj, at, "Count")?, at, "Count")?,
        ops_per_sec: figure(obj, at, "Ops/sec")?,
        hits_per_sec: figure(obj, at, "Hits/sec")?,
        misses_per_sec: figure(obj, at, "Misses/sec")?,
        moved_per_sec: f64_at(obj, at, "MOVED/sec")?,
        ask_per_sec: f64_at(obj, at, "ASK/sec")?,
        connection_errors_per_sec: figure(obj, at, "Connection Errors/sec")?,
        connection_errors: u64_at(obj, at, "Connection Errors")?.unwrap_or(0),
        latency_ms: f64_at(obj, at, "Latency")?.unwrap_or(average),
        average_latency_ms: average,
        accumulated_latency_ms: figure(obj, at, "Accumulated Latency")?,
        min_latency_ms: figure(obj, at, "Min Latency")?,
        max_latency_ms: figure(obj, at, "Max Latency")?,
        kb_per_sec: figure(obj, at, "KB/sec")?,
        kb_rx_per_sec: figure(obj, at, "KB/sec RX")?,
        kb_tx_per_sec: figure(obj, at, "KB/sec TX")?,
        tryagain: u64_at(obj, at, "TRYAGAIN")?.unwrap_or(0),
        tryagain_per_sec: figure(obj, at, "TRYAGAIN/sec")?,
        errors: u64_at(obj, at, "Errors")?.unwrap_or(0),
        service: service(obj, at)?,
        series: series(obj, at)?,
        percentiles: pcts,
        histogram: hist,
    })
}

fn distribution(name: &str, items: &[Json], at: &At) -> Result<Distribution, String> {
    let mut points = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let index = i.to_string();
        let item_at = at.child(&index);
        let msec = required(f64_at(item, &item_at, "<=msec")?, &item_at, "<=msec")?;
        let percent = required(f64_at(item, &item_at, "percent")?, &item_at, "percent")?;
        points.push((msec, percent));
    }
    Ok(Distribution {
        name: name.to_string(),
        points,
    })
}

/// `Sets` -> `SET`, `Hsets` -> `HSET`: the histogram name memtier derives the row from;
/// `Sets #2` (a second line of one command, `--command-stats-breakdown=line`) -> `SET_2`.
fn hist_name_of(row: &str) -> String {
    let (base, number) = split_number(row, ROW_NUMBER);
    let name = base.strip_suffix('s').unwrap_or(base).to_ascii_uppercase();
    match number {
        Some(n) => format!("{name}{HIST_NUMBER}{n}"),
        None => name,
    }
}

/// Names each row's histogram and says which rows have hits, as the writer decided them.
fn name_rows(rows: &mut [RowData], distributions: &[Distribution]) {
    let n = rows.len().saturating_sub(1);
    let builtin =
        n == 3 && rows[0].name == "Sets" && rows[1].name == "Gets" && rows[2].name == "Waits";
    // The writer puts one array per command row, in row order.
    let from_arrays = distributions.len() == n;
    for (i, row) in rows.iter_mut().enumerate() {
        row.hist_name = if i == n {
            "FULL_RUN".to_string()
        } else if from_arrays {
            distributions[i].name.clone()
        } else {
            hist_name_of(&row.name)
        };
        row.has_hits = builtin && (i == 1 || i == n);
    }
}

/// memtier_benchmark writes an empty histogram for the `Totals` of its AGGREGATED block;
/// when the command rows' histograms hold exactly the `Totals` count, their sum is put
/// there instead, so every reader sees the aggregate's true latency.
fn repair_totals_histogram(rows: &mut [RowData]) {
    let Some((totals, commands)) = rows.split_last_mut() else {
        return;
    };
    if totals.histogram.as_ref().map_or(0, |h| h.len()) == totals.count {
        return;
    }
    let mut parts = commands
        .iter()
        .filter_map(|r| r.histogram.as_ref())
        .filter(|h| !h.is_empty());
    let Some(first) = parts.next() else {
        return;
    };
    let mut sum = first.clone();
    sum.auto(true);
    for h in parts {
        if sum.add(h).is_err() {
            return;
        }
    }
    if sum.len() == totals.count {
        totals.histogram = Some(sum);
    }
}

fn block(title: &str, obj: &Json) -> Result<Block, String> {
    let at = At::root(title);
    let runtime_at = at.child("Runtime");
    let runtime_obj = obj.get("Runtime").unwrap_or(&Json::Null);
    let runtime = Runtime {
        start_epoch_ms: u64_at(runtime_obj, &runtime_at, "Start time")?.unwrap_or(0),
        finish_epoch_ms: u64_at(runtime_obj, &runtime_at, "Finish time")?.unwrap_or(0),
        duration_ms: u64_at(runtime_obj, &runtime_at, "Total duration")?.unwrap_or(0),
        interrupted: bool_at(runtime_obj, &runtime_at, "Interrupted")?,
        stopped_by: string_at(runtime_obj, &runtime_at, "Stopped by error")?,
    };
    if let Some(unit) = runtime_obj.get("Time unit").and_then(Json::as_str)
        && unit != "MILLISECONDS"
    {
        return Err(runtime_at
            .child("Time unit")
            .error(&format!("{unit} is not supported (only MILLISECONDS)")));
    }
    let mut rows = Vec::new();
    let mut distributions = Vec::new();
    let mut schedule_data = None;
    let mut server_rows = Vec::new();
    let mut visibility_data = None;
    let mut unfinished_data = None;
    for (key, value) in obj.members().unwrap_or_default() {
        match value {
            Json::Object(_) if value.get("Count").is_some() => {
                rows.push(row(key, value, &at.child(key))?)
            }
            Json::Object(_) if key == "Schedule" => {
                schedule_data = Some(schedule(value, &at.child(key))?)
            }
            Json::Object(_) if key == "Servers" => server_rows = servers(value, &at.child(key))?,
            Json::Object(_) if key == "Replica Visibility" => {
                visibility_data = Some(visibility(value, &at.child(key))?)
            }
            Json::Object(_) if key == "Unfinished" => {
                unfinished_data = Some(unfinished(value, &at.child(key))?)
            }
            Json::Array(items) => distributions.push(distribution(key, items, &at.child(key))?),
            _ => {}
        }
    }
    match rows.last() {
        Some(last) if last.name == "Totals" => {}
        Some(_) => return Err(at.error("the last row is not \"Totals\"")),
        None => return Err(at.error("no rows")),
    }
    name_rows(&mut rows, &distributions);
    repair_totals_histogram(&mut rows);
    Ok(Block {
        title: title.to_string(),
        kind: BlockKind::from_title(title),
        runtime,
        rows,
        distributions,
        schedule: schedule_data,
        servers: server_rows,
        visibility: visibility_data,
        unfinished: unfinished_data,
    })
}

/// Reads a parsed document. `Err` is a message without the file name.
pub fn read(doc: &Json) -> Result<JsonResult, String> {
    let Some(top) = doc.members() else {
        return Err("not a kvbench or memtier_benchmark result file (not a JSON object)".into());
    };
    let mut configuration = Vec::new();
    let mut run_info = RunInformation::default();
    let mut blocks = Vec::new();
    let mut rate_steps = None;
    for (key, value) in top {
        match key.as_str() {
            "Rate Steps" => rate_steps = Some(read_rate_steps(value, &At::root(key))?),
            "configuration" => {
                configuration = value.members().map(<[_]>::to_vec).unwrap_or_default();
            }
            "run information" => {
                let at = At::root(key);
                run_info = RunInformation {
                    threads: u64_at(value, &at, "Threads")?,
                    connections_per_thread: u64_at(value, &at, "Connections per thread")?,
                    requests_per_client: u64_at(value, &at, "Requests per client")?,
                    seconds: u64_at(value, &at, "Seconds")?,
                    format_version: u64_at(value, &at, "Format version")?,
                };
            }
            _ if value.get("Runtime").is_some() => blocks.push(block(key, value)?),
            _ => {}
        }
    }
    if blocks.is_empty() {
        return Err(
            "not a kvbench or memtier_benchmark result file (no \"ALL STATS\" or run results)"
                .into(),
        );
    }
    if let Some(v) = run_info.format_version
        && v != 2
    {
        return Err(format!(
            "\"run information\" > \"Format version\": {v} is not supported (only 2)"
        ));
    }
    let config = config_facts(&configuration);
    Ok(JsonResult {
        configuration,
        config,
        run_info,
        blocks,
        rate_steps,
    })
}

/// The `"Rate Steps"` object of a rate sweep.
fn read_rate_steps(obj: &Json, at: &At) -> Result<RateSteps, String> {
    if obj.members().is_none() {
        return Err(at.error(&format!("expected an object, found {}", describe(obj))));
    }
    let slo = match obj.get("SLO") {
        None | Some(Json::Null) => None,
        Some(Json::String(s)) => Some(s.clone()),
        Some(v) => {
            return Err(at
                .child("SLO")
                .error(&format!("expected a string, found {}", describe(v))));
        }
    };
    let steps_at = at.child("Steps");
    let items = match obj.get("Steps") {
        None | Some(Json::Null) => &[][..],
        Some(Json::Array(items)) => &items[..],
        Some(v) => {
            return Err(steps_at.error(&format!("expected an array, found {}", describe(v))));
        }
    };
    let mut steps = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let index = i.to_string();
        let item_at = steps_at.child(&index);
        if item.members().is_none() {
            return Err(item_at.error(&format!("expected an object, found {}", describe(item))));
        }
        steps.push(RateStep {
            target_per_sec: required(
                f64_at(item, &item_at, "Target Rate")?,
                &item_at,
                "Target Rate",
            )?,
            achieved_per_sec: required(
                f64_at(item, &item_at, "Achieved Rate")?,
                &item_at,
                "Achieved Rate",
            )?,
            percentiles: percentiles(item, &item_at)?,
            late: u64_at(item, &item_at, "Late")?,
            unfinished: u64_at(item, &item_at, "Unfinished")?,
            slo_value_ms: f64_at(item, &item_at, "SLO Value")?,
            held: match item.get("Held") {
                None | Some(Json::Null) => None,
                Some(_) => Some(bool_at(item, &item_at, "Held")?),
            },
        });
    }
    Ok(RateSteps {
        slo,
        highest_rate_held: u64_at(obj, at, "Highest Rate Held")?,
        planned_steps: u64_at(obj, at, "Planned Steps")?,
        interrupted: bool_at(obj, at, "Interrupted")?,
        steps,
    })
}

fn config_facts(configuration: &[(String, Json)]) -> ConfigFacts {
    let get = |key: &str| configuration.iter().find(|(k, _)| k == key).map(|(_, v)| v);
    ConfigFacts {
        protocol: get("protocol").and_then(Json::as_str).map(str::to_string),
        run_count: get("run_count").and_then(Json::as_u64),
        threads: get("threads").and_then(Json::as_u64),
        clients: get("clients").and_then(Json::as_u64),
    }
}

#[cfg(test)]
mod tests {
    use super::hist_name_of;

    #[test]
    fn histogram_names_follow_the_row_names() {
        assert_eq!(hist_name_of("Sets"), "SET");
        assert_eq!(hist_name_of("Hsets"), "HSET");
        // A second line of one command under --command-stats-breakdown=line.
        assert_eq!(hist_name_of("Sets #2"), "SET_2");
        assert_eq!(hist_name_of("Sets #"), "SETS #");
    }
}
