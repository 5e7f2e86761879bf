//! A live Prometheus endpoint: `GET /metrics` while a run lasts, with the metric names
//! memtier_benchmark's endpoint uses (docs/prometheus.md lists them).
//!
//! ```text
//! front end: frontend::common::prometheus::PrometheusArgs (clap, flattened)
//!            --settings()--> PrometheusSettings
//! run side, once a second: SecondSample --PrometheusMetrics::update--> rendered text
//!                          --swap an Arc--> Exposition
//! endpoint thread (PrometheusEndpoint): accept, read the request, write Exposition::body()
//! engine's RunObserver: PrometheusObserver turns each merged second into a SecondSample
//! ```
//!
//! | file | its one job |
//! | --- | --- |
//! | `settings.rs` | the validated settings (address, run labels, buckets) and their rules |
//! | `metrics.rs` | the input type, running totals, publishing the text |
//! | `metrics/render.rs` | the text exposition format 0.0.4 (the totals' private renderer) |
//! | `http.rs` | reading one request and choosing the response |
//! | `server.rs` | the listening thread: many clients, timeouts, clean stop |
//! | `observer.rs` | the run observer that feeds the metrics and owns the endpoint |

pub mod http;
pub mod metrics;
pub mod observer;
pub mod server;
pub mod settings;

pub use metrics::{CommandSecond, Exposition, PrometheusMetrics, RunInfo, SecondSample};
pub use observer::PrometheusObserver;
pub use server::PrometheusEndpoint;
pub use settings::{PrometheusSettings, RunLabel};
