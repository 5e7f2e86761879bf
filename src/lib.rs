//! kvbench: one load generator for Redis and memcached that speaks several command lines
//! (memtier_benchmark's, and redis-cli's --intrinsic-latency), over one engine.
//!
//! # Layout
//! Data flows one way: **front end → plan → engine → results → reports**.
//!
//! ```text
//! argv -> main: frontend::pick (first word, else program name, else memtier)
//! front end (frontend/<tool>/): its clap flags -> plan::Plan (validated; usage errors here)
//! engine::run(plan, observer): runner -> N worker threads (one mio Poll each) -> clients
//!   client -> generator (next op) -> protocol (encode into the write buffer)
//!   socket -> read buffer -> protocol (decode against the in-flight op) -> stats (record)
//!   workers -> per-second snapshots over crossbeam-channel -> gather -> RunObserver::second
//! engine -> results (rows, series) -> front end: its own text, report (table, JSON, HDR,
//!   client-stats files); live sinks (StatsD) watch through the observer
//! ```
//!
//! Each module below imports only its own layer and those listed before it
//! (`scripts/check-layers.pl` checks it, and that no two modules import each other).
//!
//! | module | its one job |
//! | --- | --- |
//! | [`console`] | messages on stderr that a closed pipe cannot turn into a panic |
//! | [`error`] | the setup/user error type and exit codes |
//! | [`date`] | days since the epoch to a calendar date |
//! | [`debug`] | `-D`: leveled `file:line: message` lines on stderr |
//! | [`signals`] | Ctrl-C / SIGTERM to a flag the runner polls |
//! | [`stats`] | per-row counters and histograms, row names, per-client series |
//! | [`protocol`] | wire formats: encode requests, decode replies; no I/O |
//! | [`workload`] | key patterns, value sizes, sequences, arbitrary commands, imported data, verification |
//! | [`results`] | rows and series of finished runs, best/worst/aggregate |
//! | [`resultfile`] | reads a result file (kvbench or memtier JSON, interval log) into a typed model |
//! | [`plan`] | the engine's validated, typed input |
//! | [`engine`] | runs a plan: threads, clients, connections, TLS, cluster; the run observer |
//! | [`report`] | renders results: text table, JSON, HDR, `--hdr-log`, client-stats and HTML files; no sockets |
//! | [`merge`] | several result files into one `Results`, exactly (summed histograms, aligned seconds) |
//! | [`sinks`] | live sinks fed by the run observer: StatsD/Graphite and the Prometheus endpoint |
//! | [`frontend`] | the command lines, one folder each: memtier's (the default), redis-benchmark, latency, intrinsic-latency, zbench, merge, report, completions and man; and what front ends share |

#[macro_use]
pub mod console;
pub mod date;
pub mod debug;
pub mod engine;
pub mod error;
pub mod frontend;
pub mod merge;
pub mod plan;
pub mod protocol;
pub mod report;
pub mod resultfile;
pub mod results;
pub mod signals;
pub mod sinks;
pub mod stats;
pub mod workload;
