//! kvbench: a memtier_benchmark-compatible load generator for Redis and memcached.
//!
//! # Layout
//! Data flows one way:
//!
//! ```text
//! argv -> cli (clap, as typed) -> config (validated, typed, Arc) -> runner
//! runner -> N worker threads (one mio Poll each) -> clients (one state machine per connection)
//! client -> workload (next op: key, value) -> protocol (encode into the write buffer)
//! socket -> client read buffer -> protocol (decode against the in-flight op) -> stats (record)
//! workers -> per-second snapshots over crossbeam-channel -> runner (progress line, time series)
//! runner -> results (rows, series) -> report (text table, JSON, HDR files)
//! ```
//!
//! | module | its one job |
//! | --- | --- |
//! | [`cli`] | the flags exactly as memtier spells them, plus `--config` files |
//! | [`config`] | validated, typed configuration; every user error is found here |
//! | [`arbitrary`] | `--command` workloads, MONITOR replay, SCAN iteration (validated) |
//! | [`dataset`] | imported values (`--data-import`) and `--data-verify` settings |
//! | [`shape`] | load-shape options: pacing, reconnects, ramp-up, WAIT, expiry, multi-get |
//! | [`debug`] | `-D/--debug`: leveled `file:line: message` lines on stderr |
//! | [`error`] | the setup/user error type and exit codes |
//! | [`runner`] | spawn workers, tick once a second, stop, merge, hand to reports |
//! | [`worker`] | one thread: a `mio::Poll` driving many clients |
//! | [`client`] | one client: what to send next, routing, recording, reconnect policy |
//! | [`connection`] | one socket's state machine, buffers and in-flight queue |
//! | [`cluster`] | Redis Cluster slots, topology discovery, MOVED/ASK |
//! | [`transport`] | TCP, Unix socket or TLS (rustls) behind one read/write interface |
//! | [`tls`] | TLS flags and PEM files into one rustls client configuration; TLS error messages |
//! | [`protocol`] | wire formats: encode requests, decode replies; no I/O |
//! | [`workload`] | key patterns, value sizes and contents, the SET:GET sequence |
//! | [`stats`] | per-command counters and histograms |
//! | [`results`] | rows and series of finished runs, best/worst/aggregate |
//! | [`report`] | text table, JSON and HDR files |
//! | [`signals`] | Ctrl-C / SIGTERM to a flag the runner polls |

pub mod arbitrary;
pub mod cli;
pub mod client;
pub mod cluster;
pub mod config;
pub mod connection;
pub mod dataset;
pub mod debug;
pub mod error;
pub mod frontend;
pub mod protocol;
pub mod report;
pub mod results;
pub mod runner;
pub mod shape;
pub mod signals;
pub mod stats;
pub mod tls;
pub mod transport;
pub mod worker;
pub mod workload;
