//! The redis-benchmark front end: redis-benchmark 7.x's command line and output, over
//! kvbench's engine.
//!
//! ```text
//! argv -> flags (clap, validated) -> BenchmarkSpec
//! BenchmarkSpec -> suite (tests as command templates with __rand_int__ / {tag} fields)
//! engine results per test -> render (normal block, -q, --csv, live line)
//!                              latency (redis-benchmark's histogram walks and rounding)
//! ```
//!
//! | module | its one job |
//! | --- | --- |
//! | [`flags`] | every redis-benchmark flag (and kvbench's additions) into a [`flags::BenchmarkSpec`] |
//! | [`uri`] | the `-u redis://` / `rediss://` URI |
//! | [`help`] | the `--help` and `--version` texts |
//! | [`suite`] | the default suite, `-t`, arbitrary commands, placeholders and cluster slot tags |
//! | [`latency`] | redis-benchmark's histogram layout, walks and summary figures |
//! | [`render`] | redis-benchmark's text: blocks, `-q` lines, CSV, live line, banners |

pub mod flags;
pub mod help;
pub mod latency;
pub mod render;
pub mod suite;
pub mod uri;
