//! The shape of the load beyond SET:GET: reconnects, ramp-up, WAIT, expiry, multi-key
//! gets and how a pipeline is refilled (pacing is `pacing.rs`'s).

use std::time::Duration;

/// WAIT commands among the SETs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WaitConfig {
    /// SET:WAIT ratio: after `sets` SETs, `waits` WAITs.
    pub sets: u32,
    pub waits: u32,
    /// Replicas to wait for, drawn uniformly from this range.
    pub num_slaves: (u32, u32),
    /// WAIT timeout in milliseconds, drawn from a normal distribution centred in the range.
    pub timeout_ms: (u32, u32),
}

/// Staircase ramp-up of clients.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ramp {
    /// Clients per thread at the start.
    pub start: usize,
    /// Clients per thread added at each step.
    pub step: usize,
    pub step_duration: Duration,
}

/// Reconnect behaviour after a connection error.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Reconnect {
    /// 0: unlimited.
    pub max_attempts: u32,
    /// Delay before attempt n is `factor^(n-1)` seconds when factor > 0 (no delay when 0).
    pub backoff_factor: f64,
}

/// When a connection with a pipeline sends its next requests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Refill {
    /// As soon as a reply frees a place in the pipeline (memtier_benchmark's shape): a
    /// server that answers a batch in pieces gets it back in pieces.
    #[default]
    AsRepliesArrive,
    /// Only when every request in flight is answered, then a whole pipeline at once
    /// (redis-benchmark's `-P`). In open loop, requests that fall due meanwhile wait
    /// (their send lag counts it) and go out together with the next batch. Needs one
    /// connection per client: not with cluster routing by key or a server pool.
    WholeBatch,
}

/// Options that shape each connection's request stream.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LoadShape {
    /// GETs fetch this many keys in one request (0: off).
    pub multi_key_get: u32,
    /// SETs carry a TTL in seconds drawn from this range.
    pub expiry_range: Option<(u32, u32)>,
    /// SETRANGE/GETRANGE at this offset instead of SET/GET (0: off).
    pub data_offset: u64,
    pub wait: Option<WaitConfig>,
    /// Reconnect after this many requests on a connection.
    pub reconnect_interval: Option<u64>,
    pub reconnect: Option<Reconnect>,
    /// A connect (and TLS/auth handshake) must finish within this.
    pub connection_timeout: Option<Duration>,
    /// Requests in flight with no reply for this long fail the connection, so a stalled
    /// server cannot hang a run.
    pub reply_timeout: Option<Duration>,
    /// Jitter between connection starts within a thread, microseconds.
    pub conn_jitter_us: (u64, u64),
    pub ramp: Option<Ramp>,
    /// Closed loop: after each reply the client waits this long before its next request
    /// (redis-cli's latency probe: send, reply, wait 10 ms).
    pub think_time: Option<std::time::Duration>,
    /// When a pipeline is refilled: per reply, or per whole batch.
    pub refill: Refill,
}
