//! `kvbench latency`: redis-cli's `--latency`, `--latency-history` and `--latency-dist`
//! for Redis and memcached, with microsecond figures and percentiles on request.
//!
//! The probe itself is an engine run (one connection, the probe request every 10 ms);
//! everything else here needs no socket:
//!
//! ```text
//! argv -> flags (clap, validated Options) -> Options::resolve(stdout is a TTY)
//!      -> Session { windows (pure state machine) -> render (redis-cli's text) -> stdout }
//! Options -> probe plan -> engine thread -> every reply's times (a channel) -> Session
//! ```
//!
//! | module | its one job |
//! | --- | --- |
//! | [`askpass`] | `--askpass`: the password as one line from stdin, a `*` per character on a terminal |
//! | [`flags`] | the flags as typed, validated into [`Options`]; `-P` picks PING or `version` |
//! | [`windows`] | when a window ends and what to print: live, one-shot, history, spectrum |
//! | [`window_stats`] | one window's exact min/max/mean and its HdrHistogram (µs) |
//! | [`spectrum`] | `--dist` buckets, shades and legend |
//! | [`render`] | redis-cli's lines in each format, plus `--precision=us` and `--percentiles` |
//! | [`session`] | samples and ticks in, flushed lines out, `--hdr-file` at the end |
//! | [`probe`] | the options into the engine's plan: one connection, the probe request |
//! | [`run`] | `main`: the engine on its own thread, its samples into the session |

pub mod askpass;
pub mod flags;
pub mod probe;
pub mod render;
pub mod run;
pub mod session;
pub mod spectrum;
pub mod window_stats;
pub mod windows;

pub use flags::{Options, Parsed, Probe, Resolved, SAMPLE_PERIOD_US, parse};
pub use run::main;
pub use session::{Flow, Session};
