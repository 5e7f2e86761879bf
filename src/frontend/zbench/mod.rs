//! `kvbench zbench`: redis-zbench-go's command line, sorted-set workload and output.
//!
//! ```text
//! argv -> flags (Go-style flags -> clap -> ZbenchSpec) -> workload (ZADD / query batches)
//! results (per-second counts, µs HdrHistogram, reply sizes) -> render (its text layout)
//! ```
//!
//! See `docs/zbench.md` for every flag, the output and the faults of redis-zbench-go that
//! kvbench fixes.

pub mod connection;
pub mod flags;
pub mod goflag;
pub mod plan;
pub mod render;
pub mod run;
pub mod workload;

pub use run::main;
