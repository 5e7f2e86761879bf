//! memtier's output options: the result files, `--show-config`, the table's percentiles,
//! `--statsd-host` and friends, `--prometheus-port` and friends, `--client-stats`, `-D`.

use std::path::PathBuf;

use crate::error::{Error, Result};
use crate::frontend::common::{parse_port, percentiles};
use crate::frontend::memtier::cli::Cli;
use crate::sinks::prometheus::PrometheusSettings;
use crate::sinks::statsd::StatsdConfig;

const DEFAULT_PERCENTILES: [f64; 3] = [50.0, 99.0, 99.9];

fn usage(msg: impl Into<String>) -> Error {
    Error::usage(msg)
}

/// Output files and report options.
#[derive(Clone, Debug, Default)]
pub struct OutputConfig {
    pub out_file: Option<PathBuf>,
    pub json_out_file: Option<PathBuf>,
    pub hdr_file_prefix: Option<String>,
    /// `--hdr-log=FILE`: every second's histograms as one HdrHistogram interval log.
    pub hdr_log: Option<PathBuf>,
    pub show_config: bool,
    pub hide_histogram: bool,
    /// Percentiles for the JSON, time series and live sinks, e.g. `[50.0, 99.0, 99.9]`:
    /// each once (a repeat would write one JSON key twice).
    pub print_percentiles: Vec<f64>,
    /// The text table's percentile columns: `--print-percentiles` as given, a repeat
    /// kept (`50,50,99` prints two `p50 Latency` columns, as memtier's table does).
    pub percentile_columns: Vec<f64>,
    pub print_all_runs: bool,
    /// `--statsd-host` and its companions; `None` when no StatsD host is given.
    pub statsd: Option<StatsdConfig>,
    /// `--prometheus-port` and its companions; `None` when the endpoint is off.
    pub prometheus: Option<PrometheusSettings>,
    /// `--client-stats=PREFIX`: one CSV file per client, `PREFIX-<run>-<thread>-<client>.csv`.
    pub client_stats: Option<String>,
    /// `-D/--debug` level: how many times the flag was given (0 = off).
    pub debug: u8,
}

/// Validates the output flags.
pub fn parse_outputs(cli: &Cli) -> Result<OutputConfig> {
    let out_file = non_empty_path(cli.out_file.as_deref(), "--out-file")?;
    let json_out_file = non_empty_path(cli.json_out_file.as_deref(), "--json-out-file")?;
    let hdr_log = non_empty_path(cli.hdr_log.as_deref(), "--hdr-log")?;
    // Two outputs in one file: the later write would silently replace the earlier one.
    let named = [
        ("--out-file", &out_file),
        ("--json-out-file", &json_out_file),
        ("--hdr-log", &hdr_log),
    ];
    for (i, (a, first)) in named.iter().enumerate() {
        for (b, second) in &named[i + 1..] {
            if let (Some(first), Some(second)) = (first, second)
                && let (Ok(one), Ok(other)) =
                    (std::path::absolute(first), std::path::absolute(second))
                && one == other
            {
                return Err(usage(format!(
                    "{a} and {b} name the same file '{}': give each its own.",
                    second.display()
                )));
            }
        }
    }
    let percentile_columns = percentile_list(cli.print_percentiles.as_deref())?;
    Ok(OutputConfig {
        out_file,
        json_out_file,
        hdr_file_prefix: non_empty_path(cli.hdr_file_prefix.as_deref(), "--hdr-file-prefix")?
            .map(|p| p.to_string_lossy().into_owned()),
        hdr_log,
        show_config: cli.show_config,
        hide_histogram: cli.hide_histogram,
        print_percentiles: percentiles::distinct(&percentile_columns),
        percentile_columns,
        print_all_runs: cli.print_all_runs,
        statsd: parse_statsd(cli)?,
        prometheus: cli.prometheus.settings()?,
        client_stats: parse_client_stats(cli.client_stats.as_deref())?,
        debug: cli.debug,
    })
}

/// `--print-percentiles` as given (the last one given: getopt keeps one value), else
/// memtier's default.
fn percentile_list(raw: Option<&str>) -> Result<Vec<f64>> {
    raw.map_or(
        Ok(DEFAULT_PERCENTILES.to_vec()),
        percentiles::parse_percentile_list,
    )
}

const DEFAULT_STATSD_PORT: u16 = 8125;
const DEFAULT_STATSD_PREFIX: &str = "memtier";
const DEFAULT_STATSD_RUN_LABEL: &str = "default";
const DEFAULT_GRAPHITE_PORT: u16 = 8080;
/// Longest `--statsd-prefix` and `--statsd-run-label`, in bytes: with the longest metric
/// name and value every line stays far below one datagram.
pub const STATSD_NAME_PART_MAX: usize = 128;

/// The StatsD options. Without `--statsd-host` the others do nothing (as in memtier),
/// which earns a warning rather than an error so memtier command lines keep working.
fn parse_statsd(cli: &Cli) -> Result<Option<StatsdConfig>> {
    let port = |raw: Option<&str>, flag: &str, default: u16| -> Result<u16> {
        raw.map_or(Ok(default), |p| {
            parse_port(p)
                .ok_or_else(|| usage(format!("{flag} must be a number in the range [1-65535].")))
        })
    };
    let statsd_port = port(
        cli.statsd_port.as_deref(),
        "statsd-port",
        DEFAULT_STATSD_PORT,
    )?;
    let graphite_port = port(
        cli.graphite_port.as_deref(),
        "graphite-port",
        DEFAULT_GRAPHITE_PORT,
    )?;
    let part = |raw: Option<&str>, flag: &str, default: &str| -> Result<String> {
        let value = raw.unwrap_or(default);
        if value.len() > STATSD_NAME_PART_MAX {
            return Err(usage(format!(
                "{flag} must be at most {STATSD_NAME_PART_MAX} characters."
            )));
        }
        Ok(value.to_string())
    };
    let prefix = part(
        cli.statsd_prefix.as_deref(),
        "statsd-prefix",
        DEFAULT_STATSD_PREFIX,
    )?;
    let run_label = part(
        cli.statsd_run_label.as_deref(),
        "statsd-run-label",
        DEFAULT_STATSD_RUN_LABEL,
    )?;
    let Some(host) = cli.statsd_host.as_deref() else {
        let companions = [
            (cli.statsd_port.is_some(), "--statsd-port"),
            (cli.statsd_prefix.is_some(), "--statsd-prefix"),
            (cli.statsd_run_label.is_some(), "--statsd-run-label"),
            (cli.graphite_port.is_some(), "--graphite-port"),
        ];
        for (given, flag) in companions {
            if given {
                eprintln_safe!("warning: {flag} has no effect without --statsd-host.");
            }
        }
        return Ok(None);
    };
    if host.is_empty() {
        return Err(usage("--statsd-host needs a host name."));
    }
    Ok(Some(StatsdConfig {
        host: host.to_string(),
        port: statsd_port,
        prefix,
        run_label,
        graphite_port,
    }))
}

/// `--client-stats=PREFIX`: the prefix of every per-client file name.
fn parse_client_stats(raw: Option<&str>) -> Result<Option<String>> {
    match raw {
        Some("") => Err(usage("--client-stats needs a file name prefix.")),
        other => Ok(other.map(str::to_string)),
    }
}

fn non_empty_path(raw: Option<&str>, flag: &str) -> Result<Option<PathBuf>> {
    match raw {
        Some("") => Err(usage(format!("{flag} needs a file name."))),
        other => Ok(other.map(PathBuf::from)),
    }
}
