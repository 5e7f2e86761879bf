//! Live sinks: where each merged second goes besides the front end's own live line.
//! Each sink is a [`crate::engine::RunObserver`] a front end adds to its observers.
//!
//! - [`statsd`]: StatsD gauges over UDP and Graphite event annotations (`--statsd-host`).
//! - [`prometheus`]: a `GET /metrics` endpoint on its own thread
//!   ([`prometheus::PrometheusObserver`], `--prometheus-port`).

pub mod prometheus;
pub mod statsd;
