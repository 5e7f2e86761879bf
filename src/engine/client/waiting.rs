//! What the worker asks of a client outside its events: before it sleeps, whether a
//! reply may come at any moment (a busy poll, `--busy-poll`, spins only then, not through
//! a think time or the gap before a scheduled send: redis-cli's latency probes are 10 ms
//! apart, and a spin there burned up to 10 ms of CPU a probe and caught nothing); at the
//! end of an open-loop run, how many requests it still had to send; at the end of a
//! closed-loop one, what it left unanswered.

use std::time::Instant;

use crate::engine::client::Client;
use crate::engine::connection::Phase;

impl Client {
    /// New requests this client may still send of its own share (not counting a shared
    /// budget's); `u64::MAX` when its share is not counted (a time-bound run).
    pub fn left_to_send(&self) -> u64 {
        self.remaining.unwrap_or(u64::MAX)
    }

    /// Requests in flight or not yet written, or a connection opening (its connect or
    /// handshake replies are due).
    pub fn awaits_reply(&self) -> bool {
        self.conns.iter().any(|conn| {
            conn.in_flight() > 0
                || conn.has_output()
                || matches!(conn.phase(), Phase::Connecting | Phase::Handshaking)
        })
    }

    /// Whether a connection with requests in flight has reply bytes waiting unread: the
    /// closed loop's reads after its deadline go on until none has.
    pub fn reply_waiting(&self) -> bool {
        self.conns
            .iter()
            .any(|conn| conn.in_flight() > 0 && conn.reply_waiting())
    }

    /// The workload's requests in flight that were sent at or after `measure_from` (not in
    /// the warm-up), and when the oldest of them was sent: what a closed-loop run leaves
    /// unanswered. A connection with reply bytes waiting was answered (kvbench, held off
    /// the CPU across the end, had not read them): its requests are not counted, unless
    /// every reply come was read after the deadline (`read_at_end`), when any waiting now
    /// came after the end (a server still answering what was in flight).
    pub fn unanswered_since(
        &self,
        measure_from: Instant,
        read_at_end: bool,
    ) -> (u64, Option<Instant>) {
        // A closed loop sends each request when it is intended.
        let sent = self
            .conns
            .iter()
            .filter(|conn| read_at_end || !conn.reply_waiting())
            .flat_map(|conn| conn.intended_in_flight())
            .filter(|&t| t >= measure_from);
        sent.fold((0, None), |(n, oldest), t| {
            (n + 1, Some(oldest.map_or(t, |o: Instant| o.min(t))))
        })
    }
}
