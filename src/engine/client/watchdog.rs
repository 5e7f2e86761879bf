//! The stall watchdog: once a second the worker asks each client whether a connection's
//! requests have gone without a reply for longer than `--reply-timeout`; such a
//! connection has failed (reconnected, or the run ends, as for any connection failure).

use std::time::Instant;

use crate::engine::client::{Client, ClientContext, Status};
use crate::engine::connection::Phase;
use crate::engine::failure::Failure;
use crate::plan::Plan;

impl Client {
    /// The stall watchdog, called by the worker once a second: a connection whose
    /// requests got no reply for too long has failed.
    pub fn check_stalled(&mut self, now: Instant, plan: &Plan, ctx: &mut ClientContext) -> Status {
        let Some(timeout) = plan.load.shape.reply_timeout else {
            return Status::Active;
        };
        // The visibility endpoint's polls each have their own deadline (a poll unanswered
        // past `--visibility-timeout` is a timeout in the lag's row): a replica that stops
        // answering does not end the run.
        let probe = self.visibility.as_ref().map(|v| v.conn);
        for i in 0..self.conns.len() {
            let conn = &self.conns[i];
            let live = matches!(conn.phase(), Phase::Ready | Phase::Handshaking);
            if live && probe != Some(i) && conn.is_stalled(now, timeout) {
                // Nothing ever answered here: perhaps the server speaks another protocol.
                let why = match !conn.heard() {
                    true => format!(
                        "the server never answered or does not speak {}",
                        plan.server.protocol.name()
                    ),
                    false => "the server stopped answering".to_string(),
                };
                let (peer, secs) = (conn.peer(), timeout.as_secs());
                let failure = Failure::Broken(format!(
                    "no reply from {peer} in {secs} s: {why} ({})",
                    plan.names.reply_timeout
                ));
                if let Some(status) = self.connection_failed(i, failure, plan, ctx) {
                    return status;
                }
            }
        }
        Status::Active
    }
}
