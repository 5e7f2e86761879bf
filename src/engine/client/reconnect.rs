//! Opening a client's connections, and what a connection failure means for it: the end
//! of the run, or (with a reconnect policy, and always in cluster mode) a count, a
//! back-off and a reconnect.

use std::time::{Duration, Instant};

use crate::debug_log;
use crate::engine::client::{Client, ClientContext, Status, token_of};
use crate::engine::connection::Failure;
use crate::engine::tls;
use crate::plan::{Plan, Reconnect};

/// Pause between reconnect attempts without a back-off factor (memtier's).
const BASE_RECONNECT_DELAY: Duration = Duration::from_secs(1);
/// Longest pause between reconnect attempts, whatever the back-off factor (memtier's).
const MAX_RECONNECT_DELAY: Duration = Duration::from_secs(60);

/// The pause before attempt `attempt` (1-based): memtier's schedule, 1 s between
/// attempts, or factor^attempt seconds with a back-off factor, at most a minute.
fn delay(policy: Reconnect, attempt: u32) -> Duration {
    if policy.backoff_factor > 0.0 {
        let secs = policy.backoff_factor.powi(attempt as i32);
        Duration::from_secs_f64(secs.min(MAX_RECONNECT_DELAY.as_secs_f64()))
    } else {
        BASE_RECONNECT_DELAY
    }
}

impl Client {
    /// Opens connection `i`.
    pub(super) fn open(
        &mut self,
        i: usize,
        plan: &Plan,
        ctx: &mut ClientContext,
    ) -> Result<(), Failure> {
        let token = token_of(self.slot, i);
        let timeout = self.connection_timeout;
        let conn = &mut self.conns[i];
        debug_log!(1, "connecting to {} (token {})", conn.peer(), token.0);
        conn.open(plan, ctx.registry, token, timeout)
    }

    /// Connection `i` failed: the failure is counted against its oldest request. Without
    /// a reconnect policy (and outside cluster mode), or for a failure no reconnect can
    /// fix, the client fails; otherwise the connection backs off and reopens later.
    /// Returns the status to report when the client cannot go on.
    pub(super) fn connection_failed(
        &mut self,
        i: usize,
        failure: Failure,
        plan: &Plan,
        ctx: &mut ClientContext,
    ) -> Option<Status> {
        let cluster = self.router.is_cluster();
        self.count_server_connection_error(i, ctx);
        if self.txn.conn == i {
            // The batch went with the connection.
            self.txn.reset();
        }
        let conn = &mut self.conns[i];
        // With nothing of the workload in flight no command is to blame: the last
        // stats slot, which only Totals counts (see `Plan::extra_rows`).
        let row = conn
            .oldest_row()
            .unwrap_or(ctx.stats.len().saturating_sub(1));
        if let Some(stats) = ctx.stats.get_mut(row) {
            stats.connection_errors += 1;
        }
        conn.close(ctx.registry);
        // Requests lost with the connection are sent again on the next one, so `-n N`
        // still means N answered requests (resends were counted once already).
        let lost = conn.first_sends_in_flight();
        let policy = match (self.reconnect, cluster) {
            (Some(policy), _) => policy,
            // A cluster run goes on without a node that died, retrying it once a second
            // (its slots may come back through a failover).
            (None, true) => Reconnect {
                max_attempts: 0,
                backoff_factor: 0.0,
            },
            (None, false) => return Some(Status::Failed(failure.message().to_string())),
        };
        let message = match failure {
            Failure::Fatal(message) => return Some(Status::Failed(message)),
            Failure::Broken(message) => message,
        };
        let attempt = conn.count_attempt();
        if policy.max_attempts > 0 && attempt > policy.max_attempts {
            return Some(Status::Failed(format!(
                "{message} (gave up after {} reconnect attempts)",
                policy.max_attempts
            )));
        }
        let pause = delay(policy, attempt);
        ctx.errors.report(format_args!(
            "{message}; reconnecting in {:.1} s (attempt {attempt})",
            pause.as_secs_f64()
        ));
        conn.back_off(plan, Instant::now() + pause);
        if ctx.verify.is_none()
            && let Some(left) = self.remaining.as_mut()
        {
            *left += lost;
        }
        // A master that died may have been replaced by its replica: ask a live node for
        // the slot map (at most once a second), which routes its slots to the new
        // master once the failover is done.
        if cluster && let Some(live) = (0..self.conns.len()).find(|&j| self.conns[j].is_ready()) {
            self.refresh_topology(live);
        }
        None
    }

    /// Connection `i` did not become ready within the connect timeout: a TLS handshake
    /// the server never answered is named as such (a plaintext port, most likely).
    pub(super) fn timed_out(&self, i: usize, plan: &Plan) -> Failure {
        let conn = &self.conns[i];
        let waited = self.connection_timeout.unwrap_or_default();
        if conn.awaits_tls_answer() {
            return Failure::Broken(format!(
                "TLS handshake with {} failed: {}",
                conn.peer(),
                tls::no_answer(waited, plan.names)
            ));
        }
        Failure::Broken(format!(
            "connection to {} timed out after {} s ({})",
            conn.peer(),
            waited.as_secs(),
            plan.names.connection_timeout
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_follow_memtiers_schedule() {
        let flat = Reconnect {
            max_attempts: 0,
            backoff_factor: 0.0,
        };
        assert_eq!(delay(flat, 1), Duration::from_secs(1));
        assert_eq!(delay(flat, 9), Duration::from_secs(1));
        let doubling = Reconnect {
            max_attempts: 0,
            backoff_factor: 2.0,
        };
        assert_eq!(delay(doubling, 1), Duration::from_secs(2));
        assert_eq!(delay(doubling, 3), Duration::from_secs(8));
        assert_eq!(delay(doubling, 10), MAX_RECONNECT_DELAY);
    }
}
