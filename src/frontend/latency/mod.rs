//! `kvbench latency`: redis-cli's `--latency`, `--latency-history` and `--latency-dist`
//! for Redis and memcached, with microsecond figures and percentiles on request.
//!
//! This front end owns everything that needs no socket:
//!
//! ```text
//! argv -> flags (clap, validated Options) -> Options::resolve(stdout is a TTY)
//!      -> Session { windows (pure state machine) -> render (redis-cli's text) -> stdout }
//! samples (µs) and clock ticks from the engine's probe connection -> Session
//! ```
//!
//! | module | its one job |
//! | --- | --- |
//! | [`flags`] | the flags as typed, validated into [`Options`]; `-P` picks PING or `version` |
//! | [`windows`] | when a window ends and what to print: live, one-shot, history, spectrum |
//! | [`window_stats`] | one window's exact min/max/mean and its HdrHistogram (µs) |
//! | [`spectrum`] | `--dist` buckets, shades and legend |
//! | [`render`] | redis-cli's lines in each format, plus `--precision=us` and `--percentiles` |
//! | [`session`] | samples and ticks in, flushed lines out, `--hdr-file` at the end |

pub mod flags;
pub mod render;
pub mod session;
pub mod spectrum;
pub mod window_stats;
pub mod windows;

pub use flags::{Options, Parsed, Probe, Resolved, SAMPLE_PERIOD_US, parse};
pub use session::{Flow, Session};
