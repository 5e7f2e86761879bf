//! The `--json-out-file` document, laid out byte for byte as memtier writes it.
//!
//! memtier's layout: members one per line, indented by tabs, a comma *leading* every member
//! but the first, `"key":{` with no space before a nested object, `"key": value` for
//! scalars, and each closing bracket indented like the members it closes (like the key
//! when the container is empty). Tabs are shown here as four spaces:
//!
//! ```text
//! {
//!     "configuration":{
//!         "server": "127.0.0.1"
//!         ,"port": 7001
//!         }
//!     ,"ALL STATS":{
//!         "Runtime":{
//! ```

use std::fmt::Write as _;

use crate::report::hdr::{TICKS_PER_HALF_DISTANCE, percentile_ticks};
use crate::report::{ClientRamp, Limit, RunInfo, push_fixed};
use crate::results::sweep::CURVE_PERCENTILES;
use crate::results::{
    IntervalSummary, Results, Row, ScheduleResult, ServiceInterval, ServiceRow, SweepReport,
    compress_histogram, latency_at_percentile_ms,
};

/// A small writer for memtier's JSON layout. Every number goes through [`push_fixed`], so
/// NaN and infinity come out as 0 and the document always parses.
struct JsonWriter {
    out: String,
    /// Members written so far in each open container, outermost first.
    open: Vec<usize>,
}

impl JsonWriter {
    fn new() -> Self {
        JsonWriter {
            out: String::from("{"),
            open: vec![0],
        }
    }

    /// Starts a new member of the innermost container: newline, indent, leading comma.
    fn member(&mut self) {
        let depth = self.open.len();
        let Some(members) = self.open.last_mut() else {
            return;
        };
        self.out.push('\n');
        push_tabs(&mut self.out, depth);
        if *members > 0 {
            self.out.push(',');
        }
        *members += 1;
    }

    fn key(&mut self, key: &str) {
        self.member();
        push_string(&mut self.out, key);
    }

    /// `"key": <literal>`, the literal written as given.
    fn raw(&mut self, key: &str, literal: &str) {
        self.key(key);
        self.out.push_str(": ");
        self.out.push_str(literal);
    }

    fn uint(&mut self, key: &str, value: u64) {
        self.key(key);
        self.out.push_str(": ");
        self.out.push_str(itoa::Buffer::new().format(value));
    }

    fn fixed(&mut self, key: &str, value: f64, decimals: usize) {
        self.key(key);
        self.out.push_str(": ");
        push_fixed(&mut self.out, value, decimals);
    }

    fn string(&mut self, key: &str, value: &str) {
        self.key(key);
        self.out.push_str(": ");
        push_string(&mut self.out, value);
    }

    fn open_object(&mut self, key: &str) {
        self.key(key);
        self.out.push_str(":{");
        self.open.push(0);
    }

    fn open_array(&mut self, key: &str) {
        self.key(key);
        self.out.push_str(":[");
        self.open.push(0);
    }

    /// An object as the next element of an array.
    fn open_element(&mut self) {
        self.member();
        self.out.push('{');
        self.open.push(0);
    }

    fn close(&mut self, bracket: char) {
        let members = self.open.pop().unwrap_or(0);
        let depth = self.open.len() + usize::from(members > 0);
        self.out.push('\n');
        push_tabs(&mut self.out, depth);
        self.out.push(bracket);
    }

    fn finish(mut self) -> String {
        while !self.open.is_empty() {
            self.close('}');
        }
        self.out.push('\n');
        self.out
    }
}

fn push_tabs(out: &mut String, n: usize) {
    out.extend(std::iter::repeat_n('\t', n));
}

/// Appends `s` as a JSON string literal.
fn push_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if u32::from(c) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// `p50.00`, `p99.90`: a percentile's key, as memtier's `%.2f`.
fn percentile_key(p: f64) -> String {
    let mut key = String::from("p");
    push_fixed(&mut key, p, 2);
    key
}

/// Whole milliseconds, as memtier's integer "Accumulated Latency" (truncated).
fn whole_ms(ms: f64) -> u64 {
    crate::report::finite(ms).max(0.0) as u64
}

/// Renders the JSON document: `"configuration"` from `shown` (values are JSON literals
/// already), `"run information"`, then one object per block (see
/// [`crate::report::report_blocks`]), then a rate sweep's `"Rate Steps"`.
///
/// Each block holds `"Runtime"`, one object per row with every key memtier writes, in its
/// order, and unless `hide_histogram` a `{"<=msec", "percent"}` array per command that ran.
/// `Totals` carries its true average latency (memtier writes 0.000 there, a bug). In open
/// loop each row (and each second of it) adds a `"Service Latency"` object and the block
/// a `"Schedule"` object (kvbench's own keys, after memtier's); a closed-loop block whose
/// run ended with requests unanswered adds an `"Unfinished"` object there instead.
pub fn render_json(
    shown: &[(&str, String)],
    info: &RunInfo,
    blocks: &[&Results],
    percentiles: &[f64],
    hide_histogram: bool,
) -> String {
    render_json_with_sweep(shown, info, blocks, percentiles, hide_histogram, None)
}

/// [`render_json`], with a rate sweep's `"Rate Steps"` after the blocks when `sweep` is
/// given.
pub fn render_json_with_sweep(
    shown: &[(&str, String)],
    info: &RunInfo,
    blocks: &[&Results],
    percentiles: &[f64],
    hide_histogram: bool,
    sweep: Option<&SweepReport>,
) -> String {
    let rows = RowKeys {
        hide_histogram,
        errors: false,
    };
    render(shown, info, blocks, percentiles, rows, sweep)
}

/// [`render_json`], with each row's `"Errors"` (its error replies, as a pool member's
/// row has them): for a front end whose own text reports them (zbench's "Total Errors"),
/// so the file says what the screen said. memtier's files have no such key.
pub fn render_json_with_errors(
    shown: &[(&str, String)],
    info: &RunInfo,
    blocks: &[&Results],
    percentiles: &[f64],
) -> String {
    let rows = RowKeys {
        hide_histogram: false,
        errors: true,
    };
    render(shown, info, blocks, percentiles, rows, None)
}

/// What each block's rows carry beyond memtier's keys.
#[derive(Clone, Copy)]
struct RowKeys {
    /// No `{"<=msec", "percent"}` array per command.
    hide_histogram: bool,
    /// Each command row and `Totals` add `"Errors"`.
    errors: bool,
}

fn render(
    shown: &[(&str, String)],
    info: &RunInfo,
    blocks: &[&Results],
    percentiles: &[f64],
    rows: RowKeys,
    sweep: Option<&SweepReport>,
) -> String {
    let mut w = JsonWriter::new();
    w.open_object("configuration");
    for (key, literal) in shown {
        w.raw(key, literal);
    }
    w.close('}');

    w.open_object("run information");
    w.uint("Threads", info.threads as u64);
    w.uint("Connections per thread", info.connections_per_thread as u64);
    match info.limit {
        Limit::RequestsPerClient(n) => w.uint("Requests per client", n),
        Limit::Seconds(s) => w.uint("Seconds", s),
    }
    w.uint("Format version", 2);
    w.close('}');

    for block in blocks {
        push_block(&mut w, block, info, percentiles, rows);
    }
    if let Some(sweep) = sweep {
        push_sweep(&mut w, sweep);
    }
    w.finish()
}

fn push_block(w: &mut JsonWriter, r: &Results, info: &RunInfo, percentiles: &[f64], keys: RowKeys) {
    w.open_object(&r.title);
    w.open_object("Runtime");
    w.uint("Start time", r.start_epoch_ms);
    w.uint("Finish time", r.finish_epoch_ms);
    w.uint("Total duration", r.duration_ms);
    w.string("Time unit", "MILLISECONDS");
    w.string("Interrupted", if r.interrupted { "true" } else { "false" });
    // kvbench's own key, only when an error ended the run: memtier's files never have it.
    if let Some(error) = &r.stopped_by {
        w.string("Stopped by error", error);
    }
    w.close('}');

    for row in &r.rows {
        push_row_with(w, row, r.cluster, percentiles, keys.errors);
    }
    if let Some(ramp) = info.ramp {
        push_active_clients(w, r, info, ramp);
    }
    if let Some(schedule) = &r.schedule {
        push_schedule(w, schedule, percentiles);
    }
    if let Some(unanswered) = &r.unanswered {
        // Closed loop: the requests no figure counts (open loop has them in "Schedule").
        w.open_object("Unfinished");
        w.uint("In Flight At End", unanswered.requests);
        w.fixed("Oldest Age", unanswered.oldest_age_us as f64 / 1000.0, 3);
        if let Some(warning) = r.unanswered_warning() {
            w.string("Warning", &warning);
        }
        w.close('}');
    }
    if let Some(vis) = r.visibility.as_deref() {
        // Nested, so readers that take every object with a "Count" as a command row
        // do not take the lag for one.
        w.open_object("Replica Visibility");
        w.uint("Timeouts", vis.timeouts);
        w.uint("Untracked", vis.untracked);
        push_row_with(w, &vis.lag, false, percentiles, false);
        w.close('}');
    }
    if !r.servers.is_empty() {
        // A pool: each member's row, keyed by host:port, with its error counts.
        w.open_object("Servers");
        for row in &r.servers {
            push_row_with(w, row, r.cluster, percentiles, true);
        }
        w.close('}');
    }

    if !keys.hide_histogram {
        for row in r.command_rows() {
            w.open_array(&row.name.hist);
            if row.count == 0 {
                // memtier writes one point for a command that never ran (its "WAIT"
                // array); dashboards that read the key find it.
                w.open_element();
                w.fixed("<=msec", 0.0, 3);
                w.fixed("percent", 100.0, 3);
                w.close('}');
            }
            for t in percentile_ticks(&row.histogram, TICKS_PER_HALF_DISTANCE) {
                w.open_element();
                w.fixed("<=msec", t.value as f64 / 1000.0, 3);
                w.fixed("percent", t.percentile, 3);
                w.close('}');
            }
            w.close(']');
        }
    }
    w.close('}');
}

/// Staircase ramp-up: the clients the schedule had running in each second, as memtier
/// writes them (from the schedule, so runs with the same flags compare exactly).
fn push_active_clients(w: &mut JsonWriter, r: &Results, info: &RunInfo, ramp: ClientRamp) {
    let seconds = r.totals().map_or(0, |t| t.series.len());
    let step_secs = ramp.step_duration.as_secs().max(1) as usize;
    w.open_object("Active Clients");
    for second in 0..seconds {
        let per_thread =
            (ramp.start + second / step_secs * ramp.step).min(info.connections_per_thread);
        w.open_object(&second.to_string());
        w.uint("Clients per thread", per_thread as u64);
        w.uint("Total clients", (per_thread * info.threads) as u64);
        w.close('}');
    }
    w.close('}');
}

/// A row; `errors` adds the count of error replies (a pool member's row, and every row
/// of [`render_json_with_errors`]).
fn push_row_with(w: &mut JsonWriter, row: &Row, cluster: bool, percentiles: &[f64], errors: bool) {
    w.open_object(&row.name.row);
    w.uint("Count", row.count);
    w.fixed("Ops/sec", row.ops_per_sec, 2);
    w.fixed("Hits/sec", row.hits_per_sec, 2);
    w.fixed("Misses/sec", row.misses_per_sec, 2);
    if cluster {
        w.fixed("MOVED/sec", row.moved_per_sec, 2);
        w.fixed("ASK/sec", row.ask_per_sec, 2);
        w.fixed("TRYAGAIN/sec", row.tryagain_per_sec, 2);
        w.uint("TRYAGAIN", row.tryagain);
    }
    w.fixed("Connection Errors/sec", row.connection_errors_per_sec, 2);
    w.uint("Connection Errors", row.connection_errors);
    if errors {
        w.uint("Errors", row.errors);
    }
    w.fixed("Latency", row.avg_latency_ms, 3);
    w.fixed("Average Latency", row.avg_latency_ms, 3);
    w.uint("Accumulated Latency", whole_ms(row.accumulated_latency_ms));
    w.fixed("Min Latency", row.min_latency_ms, 3);
    w.fixed("Max Latency", row.max_latency_ms, 3);
    w.fixed("KB/sec", row.kb_per_sec, 2);
    w.fixed("KB/sec RX/TX", row.kb_per_sec, 2);
    w.fixed("KB/sec RX", row.kb_rx_per_sec, 2);
    w.fixed("KB/sec TX", row.kb_tx_per_sec, 2);

    w.open_object("Time-Serie");
    for (i, second) in row.series.iter().enumerate() {
        push_interval(w, i, second, percentiles);
    }
    w.close('}');

    w.open_object("Percentile Latencies");
    for &p in percentiles {
        w.fixed(
            &percentile_key(p),
            latency_at_percentile_ms(&row.histogram, p),
            3,
        );
    }
    w.open_object("Histogram log format");
    w.string("Compressed Histogram", &compress_histogram(&row.histogram));
    w.close('}');
    w.close('}');
    if let Some(service) = row.service.as_deref() {
        push_service_row(w, service, percentiles);
    }
    w.close('}');
}

/// A row's service times (open loop): the row's latency keys, over actual send → reply.
fn push_service_row(w: &mut JsonWriter, s: &ServiceRow, percentiles: &[f64]) {
    w.open_object("Service Latency");
    w.fixed("Average Latency", s.avg_latency_ms, 3);
    w.uint("Accumulated Latency", whole_ms(s.accumulated_latency_ms));
    w.fixed("Min Latency", s.min_latency_ms, 3);
    w.fixed("Max Latency", s.max_latency_ms, 3);
    w.open_object("Percentile Latencies");
    for &p in percentiles {
        w.fixed(
            &percentile_key(p),
            latency_at_percentile_ms(&s.histogram, p),
            3,
        );
    }
    w.open_object("Histogram log format");
    w.string("Compressed Histogram", &compress_histogram(&s.histogram));
    w.close('}');
    w.close('}');
    w.close('}');
}

/// One second's service times (open loop), with the second's own keys.
fn push_service_interval(w: &mut JsonWriter, s: &ServiceInterval, percentiles: &[f64]) {
    w.open_object("Service Latency");
    w.fixed("Average Latency", s.avg_latency_ms, 3);
    w.uint("Accumulated Latency", whole_ms(s.accumulated_latency_ms));
    w.fixed("Min Latency", s.min_latency_ms, 3);
    w.fixed("Max Latency", s.max_latency_ms, 3);
    for (&p, &ms) in percentiles.iter().zip(&s.percentiles_ms) {
        w.fixed(&percentile_key(p), ms, 3);
    }
    // As the second's response times: its own histogram, for exact merges.
    if !s.compressed_histogram.is_empty() {
        w.string("Compressed Histogram", &s.compressed_histogram);
    }
    w.close('}');
}

/// How the open-loop schedule was kept (see `docs/output.md`).
fn push_schedule(w: &mut JsonWriter, s: &ScheduleResult, percentiles: &[f64]) {
    let h = &s.health;
    w.open_object("Schedule");
    w.uint("Target Rate", s.target_per_sec);
    w.string(
        "Rate Set",
        if s.per_connection {
            "per connection"
        } else {
            "in all"
        },
    );
    w.string("Arrival", s.arrival);
    w.fixed("Achieved Rate", s.achieved_per_sec, 2);
    w.fixed("Achieved Percent", s.achieved_percent(), 2);
    w.uint("Sent", h.sent);
    w.uint("Late", h.late);
    w.fixed("Late Percent", s.late_percent(), 2);
    w.uint("Late Waiting For Connection", h.late_blocked);
    w.uint("Late Waiting For Generator", h.late_generator());
    w.uint("Unsent At End", h.unsent_at_end);
    w.uint("In Flight At End", h.in_flight_at_end);
    w.open_object("Lag");
    for &p in percentiles {
        w.fixed(&percentile_key(p), latency_at_percentile_ms(&h.lag, p), 3);
    }
    let max = if h.lag.is_empty() { 0 } else { h.lag.max() };
    w.fixed("Max", max as f64 / 1000.0, 3);
    w.open_object("Histogram log format");
    w.string("Compressed Histogram", &compress_histogram(&h.lag));
    w.close('}');
    w.close('}');
    // The ages the unfinished requests had at the end (a rate sweep counts them in its
    // step's percentiles), so a merge of sweeps recomputes those exactly.
    w.open_object("Unfinished Age");
    let max = if h.unfinished_age.is_empty() {
        0
    } else {
        h.unfinished_age.max()
    };
    w.fixed("Max", max as f64 / 1000.0, 3);
    w.open_object("Histogram log format");
    w.string(
        "Compressed Histogram",
        &compress_histogram(&h.unfinished_age),
    );
    w.close('}');
    w.close('}');
    if let Some(behind) = &s.behind {
        w.string("Behind", &behind.reason());
    }
    w.close('}');
}

/// A rate sweep's curve: the objective, the highest rate that held it, one object per step.
fn push_sweep(w: &mut JsonWriter, sweep: &SweepReport) {
    w.open_object("Rate Steps");
    if let Some((p, ms)) = sweep.slo {
        let mut text = String::from("p");
        let _ = write!(text, "{p}:{ms}");
        w.string("SLO", &text);
        match sweep.highest_held() {
            Some(rate) => w.uint("Highest Rate Held", rate),
            None => w.raw("Highest Rate Held", "null"),
        }
    }
    w.uint(
        "Planned Steps",
        sweep.steps.len().max(sweep.planned_steps) as u64,
    );
    if sweep.interrupted {
        // Only then: the highest rate held is so far, not the sweep's verdict.
        w.string("Interrupted", "true");
    }
    w.open_array("Steps");
    for (i, step) in sweep.steps.iter().enumerate() {
        w.open_element();
        w.uint("Target Rate", step.target_per_sec);
        if let Some(whole) = sweep.whole_rate(i) {
            // Under --shard: the rate of the whole workload, of which this is a share.
            w.uint("Whole Rate", whole);
        }
        w.fixed("Achieved Rate", step.achieved_per_sec, 2);
        for (p, ms) in CURVE_PERCENTILES.iter().zip(step.percentiles_ms) {
            w.fixed(&percentile_key(*p), ms, 3);
        }
        w.uint("Late", step.late);
        w.uint("Unfinished", step.unfinished);
        if let (Some(value), Some(held)) = (step.slo_value_ms, step.held) {
            w.fixed("SLO Value", value, 3);
            w.string("Held", if held { "true" } else { "false" });
        }
        w.close('}');
    }
    w.close(']');
    w.close('}');
}

fn push_interval(w: &mut JsonWriter, index: usize, s: &IntervalSummary, percentiles: &[f64]) {
    w.open_object(itoa::Buffer::new().format(index));
    w.uint("Bytes RX", s.bytes_rx);
    w.uint("Bytes TX", s.bytes_tx);
    w.uint("Count", s.count);
    if s.count > 0 {
        w.fixed("Average Latency", s.avg_latency_ms, 3);
        w.uint("Accumulated Latency", whole_ms(s.accumulated_latency_ms));
        w.fixed("Min Latency", s.min_latency_ms, 3);
        w.fixed("Max Latency", s.max_latency_ms, 3);
        for (&p, &ms) in percentiles.iter().zip(&s.percentiles_ms) {
            w.fixed(&percentile_key(p), ms, 3);
        }
        if let Some(service) = s.service.as_deref() {
            push_service_interval(w, service, percentiles);
        }
        // kvbench's addition, after memtier's keys (its readers skip unknown keys): the
        // second's own histogram, so a merge of several files has exact percentiles
        // for every second, not only for the whole run.
        if !s.compressed_histogram.is_empty() {
            w.string("Compressed Histogram", &s.compressed_histogram);
        }
    }
    w.close('}');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::report_blocks;
    use crate::results::test_support::*;

    const PCTS: [f64; 3] = [50.0, 99.0, 99.9];

    /// Each line with its value replaced: indentation, commas, keys and brackets remain.
    fn skeleton(json: &str) -> Vec<String> {
        json.lines()
            .map(|l| match l.split_once("\": ") {
                Some((k, _)) => format!("{k}\": <v>"),
                None => l.to_string(),
            })
            .collect()
    }

    fn default_json() -> String {
        let run = default_results();
        let info = RunInfo {
            threads: 2,
            connections_per_thread: 2,
            limit: Limit::RequestsPerClient(200),
            ramp: None,
        };
        render_json(
            &sample_configuration(DEFAULT_JSON),
            &info,
            &[&run],
            &PCTS,
            false,
        )
    }

    /// The skeleton without kvbench's per-second `"Compressed Histogram"` lines.
    fn memtier_skeleton(json: &str) -> Vec<String> {
        skeleton(json)
            .into_iter()
            .filter(|l| l != "\t\t\t\t\t,\"Compressed Histogram\": <v>")
            .collect()
    }

    #[test]
    fn default_json_has_memtier_keys_order_and_layout() {
        // Including the one-point WAIT array of the command that never ran.
        assert_eq!(memtier_skeleton(&default_json()), skeleton(DEFAULT_JSON));
    }

    #[test]
    fn unanswered_requests_follow_memtiers_rows_and_change_none_of_them() {
        let mut run = default_results();
        run.unanswered = Some(crate::results::Unanswered {
            requests: 20,
            oldest_age_us: 3_512_000,
            ..Default::default()
        });
        let info = RunInfo {
            threads: 2,
            connections_per_thread: 2,
            limit: Limit::RequestsPerClient(200),
            ramp: None,
        };
        let config = sample_configuration(DEFAULT_JSON);
        let ours = render_json(&config, &info, &[&run], &PCTS, false);
        let lines: Vec<&str> = ours.lines().collect();
        let start = lines
            .iter()
            .position(|l| l.contains("\"Unfinished\":{"))
            .unwrap();
        let end = start + lines[start..].iter().position(|&l| l == "\t\t\t}").unwrap();
        // After memtier's rows, before its distribution arrays; without it, memtier's
        // layout whole.
        assert!(lines[..start].iter().any(|l| l.contains("\"Totals\":{")));
        let mut without: Vec<&str> = lines[..start].to_vec();
        without.extend(&lines[end + 1..]);
        assert_eq!(
            memtier_skeleton(&without.join("\n")),
            skeleton(DEFAULT_JSON)
        );
        let v: serde_json::Value = serde_json::from_str(&ours).unwrap();
        let unfinished = &v["ALL STATS"]["Unfinished"];
        assert_eq!(unfinished["In Flight At End"], 20);
        assert_eq!(unfinished["Oldest Age"].as_f64(), Some(3512.0));
        // Older than the slowest answer (0.311 ms): the warning's text.
        let warning = unfinished["Warning"].as_str().unwrap();
        assert!(
            warning.starts_with("20 requests were still unanswered"),
            "{warning}"
        );
    }

    #[test]
    fn each_second_carries_its_histogram_last() {
        let ours = default_json();
        let v: serde_json::Value = serde_json::from_str(&ours).unwrap();
        let row = &v["ALL STATS"]["Sets"];
        let series = row["Time-Serie"].as_object().unwrap();
        let mut with_requests = 0;
        for second in series.values() {
            let count = second["Count"].as_u64().unwrap();
            let encoded = second.get("Compressed Histogram");
            if count == 0 {
                assert!(encoded.is_none(), "an empty second has no histogram");
                continue;
            }
            with_requests += 1;
            let h = decode(encoded.and_then(|e| e.as_str()).unwrap());
            assert_eq!(h.len(), count, "the second's histogram holds its requests");
        }
        assert!(with_requests > 0);
        // Last in the entry: memtier's keys keep their order.
        let at = ours.find("\t\t\t\t\t,\"Compressed Histogram\"").unwrap();
        let before = &ours[..at];
        assert!(
            before
                .trim_end()
                .rsplit('\n')
                .next()
                .unwrap()
                .contains("\"p99.90\"")
        );
    }

    #[test]
    fn default_json_lines_match_where_figures_are_memtiers() {
        let ours = default_json();
        // Configuration and run information: identical.
        let head = |s: &str| s[..s.find("\t,\"ALL STATS\"").unwrap()].to_string();
        assert_eq!(head(&ours), head(DEFAULT_JSON));
        // The distribution arrays: identical.
        let tail = |s: &str| s[s.find("\t\t,\"SET\":[").unwrap()..].to_string();
        assert_eq!(tail(&ours), tail(DEFAULT_JSON));
        for line in [
            "\t\t\t\"Count\": 400\n\t\t\t,\"Ops/sec\": 22362.61\n\t\t\t,\"Hits/sec\": 2012.63\n\t\t\t,\"Misses/sec\": 20349.97\n",
            "\t\t\t,\"Min Latency\": 0.008\n\t\t\t,\"Max Latency\": 0.311\n\t\t\t,\"KB/sec\": 1723.71\n\t\t\t,\"KB/sec RX/TX\": 1723.71\n",
            "\t\t\t\t\"p50.00\": 0.087\n\t\t\t\t,\"p99.00\": 0.231\n\t\t\t\t,\"p99.90\": 0.311\n",
            "\t\t\t\t\"p50.00\": 0.087\n\t\t\t\t,\"p99.00\": 0.223\n\t\t\t\t,\"p99.90\": 0.303\n",
            "\t\t\t\t\t\"Bytes RX\": 5224\n\t\t\t\t\t,\"Bytes TX\": 43512\n\t\t\t\t\t,\"Count\": 800\n",
            "\t\t\t\t\t\"Bytes RX\": 0\n\t\t\t\t\t,\"Bytes TX\": 0\n\t\t\t\t\t,\"Count\": 0\n\t\t\t\t\t}\n",
        ] {
            assert!(ours.contains(line), "missing:\n{line}");
            assert!(DEFAULT_JSON.contains(line), "sample lacks:\n{line}");
        }
    }

    #[test]
    fn json_parses_and_totals_carry_the_true_average() {
        let v: serde_json::Value = serde_json::from_str(&default_json()).unwrap();
        let totals = &v["ALL STATS"]["Totals"];
        assert_eq!(totals["Latency"].as_f64(), Some(0.089));
        assert_eq!(totals["Average Latency"].as_f64(), Some(0.089));
        assert_eq!(v["run information"]["Format version"].as_u64(), Some(2));
        let h = decode(
            totals["Percentile Latencies"]["Histogram log format"]["Compressed Histogram"]
                .as_str()
                .unwrap(),
        );
        assert_eq!(h.len(), 800);
    }

    #[test]
    fn three_runs_json_has_memtier_layout() {
        let runs = runs3_results();
        let blocks = report_blocks(&runs, true);
        let refs: Vec<&Results> = blocks.iter().map(|b| b.as_ref()).collect();
        let info = RunInfo {
            threads: 1,
            connections_per_thread: 2,
            limit: Limit::RequestsPerClient(100),
            ramp: None,
        };
        let ours = render_json(&sample_configuration(RUNS3_JSON), &info, &refs, &PCTS, true);
        // The hand-built runs have no time series; drop the sample's to compare the rest.
        let drop_series = |s: &str| -> Vec<String> {
            let mut out = Vec::new();
            let mut skipping = false;
            for l in skeleton(s) {
                if l.ends_with("\"Time-Serie\":{") {
                    skipping = true;
                    out.push(l);
                } else if skipping {
                    if l.starts_with("\t\t\t,\"Percentile Latencies\"") {
                        skipping = false;
                        out.push(l);
                    }
                } else {
                    out.push(l);
                }
            }
            out
        };
        assert_eq!(drop_series(&ours), drop_series(RUNS3_JSON));
        // The aggregate's empty Time-Serie closes on the key's indent, as memtier's does.
        assert!(ours.contains("\t\t\t,\"Time-Serie\":{\n\t\t\t}\n"));
        let v: serde_json::Value = serde_json::from_str(&ours).unwrap();
        let agg = &v["AGGREGATED AVERAGE RESULTS (3 runs)"]["Totals"];
        assert_eq!(agg["Count"].as_u64(), Some(600));
        assert_eq!(agg["Ops/sec"].as_f64(), Some(60549.10));
        assert_eq!(
            v["WORST RUN RESULTS"]["Totals"]["Ops/sec"].as_f64(),
            Some(51400.67)
        );
    }

    #[test]
    fn zero_count_rows_and_zero_durations_stay_finite() {
        let mut run = default_results();
        for row in &mut run.rows {
            row.count = 0;
            row.ops_per_sec = f64::NAN;
            row.avg_latency_ms = f64::INFINITY;
            row.accumulated_latency_ms = f64::NAN;
            row.kb_per_sec = f64::NEG_INFINITY;
            row.histogram = crate::stats::new_histogram();
            for s in &mut row.series {
                s.avg_latency_ms = f64::NAN;
                s.percentiles_ms = vec![f64::NAN; 3];
            }
        }
        run.duration_ms = 0;
        let info = RunInfo {
            threads: 1,
            connections_per_thread: 1,
            limit: Limit::Seconds(0),
            ramp: None,
        };
        let out = render_json(&[], &info, &[&run], &PCTS, false);
        for line in out.lines() {
            let value = line
                .split_once("\": ")
                .map_or("", |(_, v)| v)
                .to_lowercase();
            assert!(!value.contains("nan") && !value.contains("inf"), "{line}");
        }
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["ALL STATS"]["Sets"]["Ops/sec"].as_f64(), Some(0.0));
        assert_eq!(v["run information"]["Seconds"].as_u64(), Some(0));
        // Nothing ran: memtier's single point, 100% at 0 ms.
        assert_eq!(v["ALL STATS"]["SET"][0]["percent"].as_f64(), Some(100.0));
        assert_eq!(v["ALL STATS"]["SET"].as_array().map(Vec::len), Some(1));
    }

    #[test]
    fn strings_are_escaped() {
        let mut run = arbitrary_results();
        run.rows[0].name.row = "Quo\"te\\s\n\u{1}".into();
        run.title = "tab\there".into();
        let info = RunInfo {
            threads: 1,
            connections_per_thread: 1,
            limit: Limit::RequestsPerClient(1),
            ramp: None,
        };
        let shown = [("key \"x\"", "\"v\"".to_string())];
        let out = render_json(&shown, &info, &[&run], &PCTS, true);
        assert!(out.contains(r#""Quo\"te\\s\n\u0001":{"#), "{out}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert!(v["tab\there"]["Quo\"te\\s\n\u{1}"]["Count"].is_u64());
        assert_eq!(v["configuration"]["key \"x\""], "v");
    }

    #[test]
    fn errors_are_written_only_when_asked_for() {
        let mut run = arbitrary_results();
        for row in &mut run.rows {
            row.errors = 7;
        }
        let info = RunInfo {
            threads: 1,
            connections_per_thread: 1,
            limit: Limit::RequestsPerClient(1),
            ramp: None,
        };
        let plain: serde_json::Value =
            serde_json::from_str(&render_json(&[], &info, &[&run], &PCTS, false)).unwrap();
        let counted: serde_json::Value =
            serde_json::from_str(&render_json_with_errors(&[], &info, &[&run], &PCTS)).unwrap();
        for row in &run.rows {
            let name = row.name.row.as_str();
            assert!(plain["ALL STATS"][name].get("Errors").is_none(), "{name}");
            assert_eq!(counted["ALL STATS"][name]["Errors"], 7, "{name}");
            assert_eq!(counted["ALL STATS"][name]["Count"], row.count, "{name}");
        }
    }
}
