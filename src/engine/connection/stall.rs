//! A connection as the stall watchdog and the end of an open-loop run see it: whether
//! replies are owed and for how long none came, whether the server ever answered, and
//! what is still in flight.

use std::time::{Duration, Instant};

use crate::engine::connection::Connection;
use crate::engine::in_flight::Purpose;

impl Connection {
    /// The intended send times of the workload's requests in flight (for what a run
    /// leaves unfinished).
    pub fn intended_in_flight(&self) -> impl Iterator<Item = Instant> + '_ {
        self.inflight
            .iter()
            .filter(|p| matches!(p.purpose, Purpose::Work(_)))
            .map(|p| p.intended)
    }

    /// Whether reply bytes are waiting to be read: received and not parsed yet, or in the
    /// socket. The server answered; kvbench had not read it when the run ended (a worker
    /// held off the CPU across the end leaves every connection so).
    pub fn reply_waiting(&self) -> bool {
        self.rend > self.rstart || self.transport.as_ref().is_some_and(|t| t.has_unread())
    }

    /// Whether requests have waited longer than `timeout` with no reply at all.
    pub fn is_stalled(&self, now: Instant, timeout: Duration) -> bool {
        self.waiting() && now.saturating_duration_since(self.last_progress) > timeout
    }

    /// Whether more replies are expected (requests or setup steps outstanding).
    pub fn waiting(&self) -> bool {
        !self.inflight.is_empty() || !self.setup.is_empty()
    }

    /// Whether the server has ever sent anything on this connection (any of its
    /// sockets): a stall on one that never answered may be a server of another protocol.
    pub fn heard(&self) -> bool {
        self.heard
    }
}
