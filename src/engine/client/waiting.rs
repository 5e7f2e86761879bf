//! What the worker asks of a client before it sleeps: whether a reply may come at any
//! moment. A busy poll (`--busy-poll`) spins only then, not through a think time or the
//! gap before a scheduled send (redis-cli's latency probes are 10 ms apart: a spin there
//! burned up to 10 ms of CPU a probe and caught nothing).

use crate::engine::client::Client;
use crate::engine::connection::Phase;

impl Client {
    /// Requests in flight or not yet written, or a connection opening (its connect or
    /// handshake replies are due).
    pub fn awaits_reply(&self) -> bool {
        self.conns.iter().any(|conn| {
            conn.in_flight() > 0
                || conn.has_output()
                || matches!(conn.phase(), Phase::Connecting | Phase::Handshaking)
        })
    }
}
