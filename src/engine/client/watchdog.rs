//! The stall watchdog: once a second the worker asks each client whether a connection's
//! requests have gone without a reply for longer than `--reply-timeout`; such a
//! connection has failed (reconnected, or the run ends, as for any connection failure).
//! Before that (or without a reply timeout), a connection whose requests got no reply for
//! [`SILENT_SERVER`] is named once for the whole run: a server of another protocol
//! (memcache_binary sent to a Redis port waits for a line end that never comes) or a
//! stalled one (a stopped process, a frozen host) would otherwise leave the run waiting
//! in silence, its progress rows at zero.

use std::time::{Duration, Instant};

use crate::engine::client::{Client, ClientContext, Status};
use crate::engine::connection::Phase;
use crate::engine::failure::Failure;
use crate::plan::Plan;

/// How long a connection's requests may wait with no reply before the run says so.
const SILENT_SERVER: Duration = Duration::from_secs(10);

impl Client {
    /// The stall watchdog, called by the worker once a second: a connection whose
    /// requests got no reply for too long has failed.
    pub fn check_stalled(&mut self, now: Instant, plan: &Plan, ctx: &mut ClientContext) -> Status {
        let timeout = plan.load.shape.reply_timeout;
        if timeout.is_none_or(|t| t > SILENT_SERVER) {
            self.name_a_silent_server(now, timeout, plan, ctx);
        }
        let Some(timeout) = timeout else {
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

    /// Says once (for the run) that a connection's requests got no reply in
    /// [`SILENT_SERVER`], and how long the run waits on (`timeout`, the reply timeout;
    /// `None`: for ever).
    fn name_a_silent_server(
        &self,
        now: Instant,
        timeout: Option<Duration>,
        plan: &Plan,
        ctx: &mut ClientContext,
    ) {
        let probe = self.visibility.as_ref().map(|v| v.conn);
        let silent = self.conns.iter().enumerate().find(|(i, conn)| {
            matches!(conn.phase(), Phase::Ready | Phase::Handshaking)
                && probe != Some(*i)
                && conn.is_stalled(now, SILENT_SERVER)
        });
        if let Some((_, conn)) = silent {
            // A front end with a reply-timeout flag names it; the others have none.
            let flag = plan.names.reply_timeout;
            let give_up = match (timeout, flag.starts_with('-')) {
                (Some(t), _) => format!(" until {} s ({flag})", t.as_secs()),
                (None, true) => format!(" ({flag} gives up)"),
                (None, false) => String::new(),
            };
            // One that answered before has stalled; one that never did may not speak the
            // protocol at all.
            let why = match conn.heard() {
                true => "the server stopped answering".to_string(),
                false => format!(
                    "the server never answered or does not speak {}",
                    plan.server.protocol.name()
                ),
            };
            ctx.errors.warn_once(format_args!(
                "warning: no reply from {} in {} s: {why}; still waiting{give_up}",
                conn.peer(),
                SILENT_SERVER.as_secs(),
            ));
        }
    }
}
