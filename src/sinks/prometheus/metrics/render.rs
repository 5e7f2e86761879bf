//! The Prometheus text exposition format (version 0.0.4) of the endpoint's totals.
//!
//! Families come in a fixed order, each with its `# HELP` and `# TYPE` line; names are the
//! ones memtier_benchmark's endpoint uses. Per-command families carry a `command` label
//! first, then the run labels, then (histogram buckets) `le`:
//!
//! ```text
//! # HELP memtier_ops_total Requests completed (replies received), by command, ...
//! # TYPE memtier_ops_total counter
//! memtier_ops_total{command="GET",env="ci"} 1042
//! memtier_latency_seconds_bucket{command="GET",env="ci",le="0.0005"} 977
//! memtier_latency_seconds_bucket{command="GET",env="ci",le="+Inf"} 1042
//! memtier_latency_seconds_sum{command="GET",env="ci"} 0.291337
//! memtier_latency_seconds_count{command="GET",env="ci"} 1042
//! ```
//!
//! Numbers are integers, or seconds written exactly from whole microseconds; no float is
//! formatted, so a value never reads as `1e-05` or `0.30000000000000004`.

use std::time::UNIX_EPOCH;

use super::{CommandTotals, RunInfo, Totals};
use crate::sinks::prometheus::settings::PrometheusSettings;

/// A metric family's type, as the `# TYPE` line spells it.
#[derive(Clone, Copy)]
enum Kind {
    Counter,
    Gauge,
    Histogram,
}

impl Kind {
    fn as_str(self) -> &'static str {
        match self {
            Kind::Counter => "counter",
            Kind::Gauge => "gauge",
            Kind::Histogram => "histogram",
        }
    }
}

/// Everything about the text that is fixed for the process: label blocks built once.
#[derive(Clone, Debug)]
pub(super) struct Layout {
    /// `env="ci",note="x"`: the run labels, escaped, without braces; empty when none.
    run_labels: String,
    /// `{env="ci",version="0.1.0"}`.
    build_info_labels: String,
    start_time_us: u64,
    configured_runs: u32,
    /// The buckets' `le` values, e.g. `0.0005`.
    le: Vec<String>,
}

impl Layout {
    pub(super) fn new(settings: &PrometheusSettings, info: &RunInfo) -> Layout {
        let mut run_labels = String::new();
        for label in settings.run_labels() {
            if !run_labels.is_empty() {
                run_labels.push(',');
            }
            push_label(&mut run_labels, &label.name, &label.value);
        }
        let mut build_info_labels = String::from("{");
        if !run_labels.is_empty() {
            build_info_labels.push_str(&run_labels);
            build_info_labels.push(',');
        }
        push_label(&mut build_info_labels, "version", &info.version);
        build_info_labels.push('}');
        let start_time_us = info
            .start_time
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX));
        let le = settings
            .buckets_us()
            .iter()
            .map(|&us| {
                let mut s = String::new();
                push_seconds(&mut s, us);
                s
            })
            .collect();
        Layout {
            run_labels,
            build_info_labels,
            start_time_us,
            configured_runs: info.configured_runs,
            le,
        }
    }

    /// The whole exposition text. `size_hint` is the previous text's length, so the
    /// buffer is allocated once.
    pub(super) fn render(&self, t: &Totals, size_hint: usize) -> String {
        let mut text = String::with_capacity(size_hint + 512);
        let out = &mut text;

        family(
            out,
            "memtier_build_info",
            Kind::Gauge,
            "Build information of this kvbench binary (the version label); the value is always 1.",
        );
        out.push_str("memtier_build_info");
        out.push_str(&self.build_info_labels);
        out.push_str(" 1\n");

        family(
            out,
            "memtier_start_time_seconds",
            Kind::Gauge,
            "Unix time, in seconds, at which this kvbench process started.",
        );
        self.series(out, "memtier_start_time_seconds", None, None);
        push_seconds(out, self.start_time_us);
        out.push('\n');

        self.by_command(
            out,
            t,
            "memtier_ops_total",
            "Requests completed (replies received), by command, since the process started, \
             accumulated across runs.",
            |c| c.ops,
        );
        self.single(
            out,
            "memtier_sent_bytes_total",
            Kind::Counter,
            "Bytes written to the server since the process started.",
            t.bytes_sent,
        );
        self.single(
            out,
            "memtier_received_bytes_total",
            Kind::Counter,
            "Bytes read from the server since the process started.",
            t.bytes_received,
        );
        self.by_command(
            out,
            t,
            "memtier_hits_total",
            "Reads that found their key, by command (0 for commands that read nothing).",
            |c| c.hits,
        );
        self.by_command(
            out,
            t,
            "memtier_misses_total",
            "Reads that found nothing, by command.",
            |c| c.misses,
        );
        self.by_command(
            out,
            t,
            "memtier_errors_total",
            "Error replies from the server, by command; connection errors are counted apart.",
            |c| c.errors,
        );
        self.single(
            out,
            "memtier_connection_errors_total",
            Kind::Counter,
            "Connection errors (refused, reset, closed, unreadable reply) since the process started.",
            t.connection_errors,
        );
        self.single(
            out,
            "memtier_connections",
            Kind::Gauge,
            "Client connections open.",
            t.connections,
        );
        self.single(
            out,
            "memtier_threads",
            Kind::Gauge,
            "Worker threads running.",
            t.threads,
        );
        self.single(
            out,
            "memtier_run",
            Kind::Gauge,
            "The run under way, 1-based (--run-count); 0 before the first run starts.",
            u64::from(t.run),
        );
        self.single(
            out,
            "memtier_configured_runs",
            Kind::Gauge,
            "Runs configured (--run-count).",
            u64::from(self.configured_runs),
        );
        self.latency(out, t);
        text
    }

    /// A family of one unlabelled (but for run labels) series.
    fn single(&self, out: &mut String, name: &str, kind: Kind, help: &str, value: u64) {
        family(out, name, kind, help);
        self.series(out, name, None, None);
        push_u64(out, value);
        out.push('\n');
    }

    /// A counter family with one series per command.
    fn by_command(
        &self,
        out: &mut String,
        t: &Totals,
        name: &str,
        help: &str,
        value: fn(&CommandTotals) -> u64,
    ) {
        family(out, name, Kind::Counter, help);
        for c in &t.commands {
            self.series(out, name, Some(&c.command), None);
            push_u64(out, value(c));
            out.push('\n');
        }
    }

    fn latency(&self, out: &mut String, t: &Totals) {
        family(
            out,
            "memtier_latency_seconds",
            Kind::Histogram,
            "Request latency in seconds, by command, of every reply since the process started; \
             a bucket is exact below 2.048 ms and within 0.1% above.",
        );
        for c in &t.commands {
            let mut cumulative = 0;
            for (le, count) in self.le.iter().zip(&c.per_bucket) {
                cumulative += count;
                self.series(
                    out,
                    "memtier_latency_seconds_bucket",
                    Some(&c.command),
                    Some(le),
                );
                push_u64(out, cumulative);
                out.push('\n');
            }
            self.series(
                out,
                "memtier_latency_seconds_bucket",
                Some(&c.command),
                Some("+Inf"),
            );
            push_u64(out, c.latency_count);
            out.push('\n');
            self.series(out, "memtier_latency_seconds_sum", Some(&c.command), None);
            push_seconds(out, c.latency_sum_us);
            out.push('\n');
            self.series(out, "memtier_latency_seconds_count", Some(&c.command), None);
            push_u64(out, c.latency_count);
            out.push('\n');
        }
    }

    /// `name{command="..",<run labels>,le=".."} ` up to the value.
    fn series(&self, out: &mut String, name: &str, command: Option<&str>, le: Option<&str>) {
        out.push_str(name);
        if command.is_none() && le.is_none() && self.run_labels.is_empty() {
            out.push(' ');
            return;
        }
        out.push('{');
        let mut first = true;
        let mut sep = |out: &mut String| {
            if !first {
                out.push(',');
            }
            first = false;
        };
        if let Some(command) = command {
            sep(out);
            push_label(out, "command", command);
        }
        if !self.run_labels.is_empty() {
            sep(out);
            out.push_str(&self.run_labels);
        }
        if let Some(le) = le {
            sep(out);
            push_label(out, "le", le);
        }
        out.push_str("} ");
    }
}

fn family(out: &mut String, name: &str, kind: Kind, help: &str) {
    // HELP texts are constants without `\` or newlines, the two characters HELP escapes.
    out.push_str("# HELP ");
    out.push_str(name);
    out.push(' ');
    out.push_str(help);
    out.push_str("\n# TYPE ");
    out.push_str(name);
    out.push(' ');
    out.push_str(kind.as_str());
    out.push('\n');
}

/// `name="value"`, the value escaped as the format requires (`\\`, `\"`, `\n`).
fn push_label(out: &mut String, name: &str, value: &str) {
    out.push_str(name);
    out.push_str("=\"");
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
    out.push('"');
}

fn push_u64(out: &mut String, v: u64) {
    out.push_str(itoa::Buffer::new().format(v));
}

/// Whole microseconds as exact decimal seconds: 1500 -> `0.0015`, 2_000_000 -> `2`.
fn push_seconds(out: &mut String, us: u64) {
    push_u64(out, us / 1_000_000);
    let frac = us % 1_000_000;
    if frac != 0 {
        let mut digits = [b'0'; 6];
        let mut rest = frac;
        for d in digits.iter_mut().rev() {
            *d = b'0' + (rest % 10) as u8;
            rest /= 10;
        }
        let len = 6 - digits.iter().rev().take_while(|&&d| d == b'0').count();
        out.push('.');
        for &d in &digits[..len] {
            out.push(char::from(d));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sinks::prometheus::metrics::{CommandSecond, PrometheusMetrics, SecondSample};
    use crate::sinks::prometheus::settings::RunLabel;
    use hdrhistogram::Histogram;
    use std::time::Duration;

    fn seconds(us: u64) -> String {
        let mut s = String::new();
        push_seconds(&mut s, us);
        s
    }

    #[test]
    fn seconds_are_exact_decimals() {
        assert_eq!(seconds(0), "0");
        assert_eq!(seconds(1), "0.000001");
        assert_eq!(seconds(100), "0.0001");
        assert_eq!(seconds(1_500), "0.0015");
        assert_eq!(seconds(2_000_000), "2");
        assert_eq!(seconds(2_500_000), "2.5");
        assert_eq!(seconds(1_700_000_000_250_000), "1700000000.25");
        assert_eq!(seconds(u64::MAX), "18446744073709.551615");
    }

    #[test]
    fn label_values_are_escaped() {
        let mut s = String::new();
        push_label(&mut s, "k", "a\\b\"c\nd é");
        assert_eq!(s, r#"k="a\\b\"c\nd é""#);
    }

    fn hist(values: &[u64]) -> Histogram<u64> {
        let mut h = Histogram::new_with_bounds(1, 3_600_000_000, 3).unwrap();
        for &v in values {
            h.record(v).unwrap();
        }
        h
    }

    /// The golden scrape: two seconds of three commands, run labels that need escaping.
    pub(crate) fn golden_metrics() -> PrometheusMetrics {
        let settings = PrometheusSettings::new(
            "127.0.0.1:0".parse().unwrap(),
            vec![
                RunLabel {
                    name: "env".into(),
                    value: "ci".into(),
                },
                RunLabel {
                    name: "note".into(),
                    value: "say \"hi\"\\\nbye".into(),
                },
            ],
            vec![100, 1_000, 2_500_000],
        )
        .unwrap();
        let info = RunInfo {
            version: "1.2.3".into(),
            start_time: UNIX_EPOCH + Duration::from_micros(1_700_000_000_250_000),
            configured_runs: 3,
        };
        let mut m = PrometheusMetrics::new(&settings, info);
        let (get1, set1, line1) = (hist(&[50, 800, 3_000_000]), hist(&[90, 90]), hist(&[]));
        let (get2, set2, line2) = (hist(&[100]), hist(&[]), hist(&[1_000, 1_001]));
        let cmd = |command, ops, hits, misses, errors, latency_sum_us, latency_us| CommandSecond {
            command,
            ops,
            hits,
            misses,
            errors,
            connection_errors: 0,
            bytes_sent: 10 * ops,
            bytes_received: 20 * ops,
            latency_sum_us,
            latency_us,
        };
        let line = "SET __key__ \"a b\"";
        m.update(&SecondSample {
            commands: &[
                cmd("SET", 2, 0, 0, 0, 180, &set1),
                cmd("GET", 3, 2, 1, 0, 3_000_850, &get1),
                cmd(line, 0, 0, 0, 0, 0, &line1),
            ],
            other_connection_errors: 0,
            connections: 8,
            threads: 2,
            run: 1,
        });
        let mut failed = cmd("SET", 0, 0, 0, 0, 0, &set2);
        failed.connection_errors = 1;
        m.update(&SecondSample {
            commands: &[
                failed,
                cmd("GET", 1, 1, 0, 1, 100, &get2),
                cmd(line, 2, 0, 0, 0, 2_001, &line2),
            ],
            // Refused reconnects with nothing in flight: in the total, on no command.
            other_connection_errors: 2,
            connections: 6,
            threads: 2,
            run: 2,
        });
        m
    }

    #[test]
    fn golden_text() {
        let text = golden_metrics().exposition().body();
        let expected = include_str!("../testdata/golden.prom");
        if text.as_str() != expected {
            panic!("rendered text differs from testdata/golden.prom:\n{text}");
        }
    }

    #[test]
    fn no_labels_means_no_braces() {
        let settings =
            PrometheusSettings::new("127.0.0.1:0".parse().unwrap(), Vec::new(), vec![1]).unwrap();
        let text = PrometheusMetrics::new(&settings, RunInfo::new(1))
            .exposition()
            .body();
        assert!(text.contains("\nmemtier_connections 0\n"), "{text}");
        assert!(text.contains("\nmemtier_build_info{version=\""), "{text}");
        assert!(!text.contains("{}"), "{text}");
    }
}
