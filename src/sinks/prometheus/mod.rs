//! A live Prometheus endpoint: `GET /metrics` while a run lasts, with the metric names
//! memtier_benchmark's endpoint uses (docs/prometheus.md lists them).
//!
//! ```text
//! front end: PrometheusArgs (clap, flattened) --settings()--> PrometheusSettings
//! run side, once a second: SecondSample --PrometheusMetrics::update--> rendered text
//!                          --swap an Arc--> Exposition
//! endpoint thread (PrometheusEndpoint): accept, read the request, write Exposition::body()
//! ```
//!
//! | file | its one job |
//! | --- | --- |
//! | `args.rs` | the `--prometheus-*` flags and their validation |
//! | `metrics.rs` | the input type, running totals, publishing the text |
//! | `render.rs` | the text exposition format 0.0.4 |
//! | `http.rs` | reading one request and choosing the response |
//! | `server.rs` | the listening thread: many clients, timeouts, clean stop |

pub mod args;
pub mod http;
pub mod metrics;
mod render;
pub mod server;

pub use args::{PrometheusArgs, PrometheusSettings, RunLabel};
pub use metrics::{CommandSecond, Exposition, PrometheusMetrics, RunInfo, SecondSample};
pub use server::PrometheusEndpoint;
