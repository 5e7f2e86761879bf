//! The endpoint's validated settings: the address, the run labels and the latency buckets,
//! with every rule they must keep. The flags that spell them are a front end's
//! (`frontend::common::prometheus`).

use std::net::SocketAddr;

use crate::error::Error;
use crate::stats::LATENCY_MAX_US;

/// Bucket upper bounds used without `--prometheus-latency-buckets`, in microseconds:
/// memtier_benchmark's 26 defaults (0.1 ms to 60 s), so heatmaps built for memtier's
/// endpoint see the same `le` values.
pub const DEFAULT_BUCKETS_US: &[u64] = &[
    100, 250, 500, 750, 1_000, 1_500, 2_000, 3_000, 4_000, 5_000, 7_500, 10_000, 15_000, 20_000,
    30_000, 50_000, 75_000, 100_000, 250_000, 500_000, 1_000_000, 2_500_000, 5_000_000, 10_000_000,
    30_000_000, 60_000_000,
];

/// Most finite buckets a histogram may have: each is one series per command per scrape.
pub const MAX_BUCKETS: usize = 64;

/// Largest bucket bound, in microseconds (one hour): kvbench's latency histograms hold
/// nothing longer, so a larger bound could only ever equal `+Inf`.
pub const MAX_BUCKET_US: u64 = LATENCY_MAX_US;

/// Most `--prometheus-run-label`s: every label is repeated on every series.
pub const MAX_RUN_LABELS: usize = 16;

/// Label names kvbench itself puts on some series; a run label may not shadow them.
const RESERVED_LABELS: &[&str] = &["command", "le", "quantile", "version"];

/// One `--prometheus-run-label`: a valid Prometheus label name and its value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunLabel {
    pub name: String,
    pub value: String,
}

/// The endpoint's validated settings: an address to bind, run labels that are valid and
/// distinct, and bucket bounds that are ascending whole microseconds. Built only through
/// [`PrometheusSettings::new`] (a front end's flags reach it through
/// `frontend::common::prometheus::PrometheusArgs::settings`), so it never holds a bad value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrometheusSettings {
    addr: SocketAddr,
    run_labels: Vec<RunLabel>,
    buckets_us: Vec<u64>,
    /// `--prometheus-linger`: how long the endpoint may stay up after the last run for a
    /// scrape of the final figures (zero: it closes at once).
    pub linger: std::time::Duration,
}

impl PrometheusSettings {
    /// Checks every rule the flags have: label names valid, not reserved, not repeated, at
    /// most [`MAX_RUN_LABELS`]; 1 to [`MAX_BUCKETS`] bounds, each 1 µs to
    /// [`MAX_BUCKET_US`], strictly ascending.
    pub fn new(
        addr: SocketAddr,
        run_labels: Vec<RunLabel>,
        buckets_us: Vec<u64>,
    ) -> Result<Self, Error> {
        if run_labels.len() > MAX_RUN_LABELS {
            return Err(Error::usage(format!(
                "--prometheus-run-label: at most {MAX_RUN_LABELS} labels."
            )));
        }
        for (i, label) in run_labels.iter().enumerate() {
            check_label_name(&label.name)?;
            if run_labels[..i].iter().any(|l| l.name == label.name) {
                return Err(Error::usage(format!(
                    "--prometheus-run-label: label '{}' is given twice.",
                    label.name
                )));
            }
        }
        if buckets_us.is_empty() || buckets_us.len() > MAX_BUCKETS {
            return Err(bucket_error(format!(
                "give 1 to {MAX_BUCKETS} bounds, not {}",
                buckets_us.len()
            )));
        }
        for (i, &b) in buckets_us.iter().enumerate() {
            if b == 0 || b > MAX_BUCKET_US {
                return Err(bucket_error(format!(
                    "each bound must be between 0.000001 and {} seconds",
                    MAX_BUCKET_US / 1_000_000
                )));
            }
            if i > 0 && b <= buckets_us[i - 1] {
                return Err(bucket_error(
                    "bounds must be strictly ascending (after rounding to whole microseconds)"
                        .to_string(),
                ));
            }
        }
        Ok(PrometheusSettings {
            linger: std::time::Duration::ZERO,
            addr,
            run_labels,
            buckets_us,
        })
    }

    /// The address to listen on; port 0 means any free port.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Labels added to every series, in the order given.
    pub fn run_labels(&self) -> &[RunLabel] {
        &self.run_labels
    }

    /// Finite bucket upper bounds in microseconds, strictly ascending.
    pub fn buckets_us(&self) -> &[u64] {
        &self.buckets_us
    }
}

fn check_label_name(name: &str) -> Result<(), Error> {
    let mut chars = name.chars();
    let valid = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !valid {
        return Err(Error::usage(format!(
            "--prometheus-run-label: '{name}' is not a label name (letters, digits and _, not starting with a digit)."
        )));
    }
    if name.starts_with("__") {
        return Err(Error::usage(format!(
            "--prometheus-run-label: '{name}': names starting with __ are reserved by Prometheus."
        )));
    }
    if RESERVED_LABELS.contains(&name) {
        return Err(Error::usage(format!(
            "--prometheus-run-label: '{name}' is a label kvbench sets itself."
        )));
    }
    Ok(())
}

/// A `--prometheus-latency-buckets` refusal, saying why and what is expected.
pub(crate) fn bucket_error(why: String) -> Error {
    Error::usage(format!(
        "--prometheus-latency-buckets: {why} (expected ascending seconds, e.g. 0.001,0.005,0.05)."
    ))
}
