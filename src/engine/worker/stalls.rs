//! Once a second, the worker's look at connections that have gone quiet: servers that
//! stopped answering (each client's watchdog) and connects the server never accepted.

use std::time::{Duration, Instant};

use super::{Slots, Worker};
use crate::engine::connection::Connection;
use crate::engine::error_log::ErrorLog;
use crate::engine::tally::Tally;

/// How long connects may stay pending before the run says so (as long as a silent
/// server is given before it is named).
const STILL_CONNECTING: Duration = Duration::from_secs(10);

impl Worker {
    /// Once a second: fails connections whose server stopped answering, and names
    /// connects still pending.
    pub(super) fn check_stalls(
        &self,
        now: Instant,
        second: u32,
        slots: &mut Slots,
        tally: &mut Tally,
        errors: &mut ErrorLog,
    ) -> Result<(), String> {
        for slot in 0..slots.clients.len() {
            let Some(client) = slots.clients[slot].as_mut() else {
                continue;
            };
            let mut ctx = self.context(tally, errors, second);
            let status = client.check_stalled(now, &self.plan, &mut ctx);
            self.settle(slots, slot, status)?;
        }
        self.name_pending_connects(now, slots, errors);
        Ok(())
    }

    /// Says once that connects are still pending after [`STILL_CONNECTING`]: without
    /// `--connection-timeout` the kernel retries the SYN for about two minutes (a full
    /// listen backlog, a firewall dropping SYNs), and the run would wait in silence.
    fn name_pending_connects(&self, now: Instant, slots: &Slots, errors: &mut ErrorLog) {
        let pending: Vec<&Connection> = slots
            .clients
            .iter()
            .flatten()
            .flat_map(|client| client.connections())
            .filter(|conn| conn.connecting_longer_than(now, STILL_CONNECTING))
            .collect();
        let Some(first) = pending.first() else {
            return;
        };
        let flag = self.plan.names.connection_timeout;
        if self
            .plan
            .load
            .shape
            .connection_timeout
            .is_some_and(|t| t <= STILL_CONNECTING)
        {
            // The connect timeout ends the wait about now, in words of its own.
            return;
        }
        let give_up = match self.plan.load.shape.connection_timeout {
            Some(t) => format!("until {} s ({flag})", t.as_secs()),
            None if flag.starts_with('-') => {
                format!("while the kernel retries (about 2 minutes; {flag} sets a limit)")
            }
            None => "while the kernel retries (about 2 minutes)".to_string(),
        };
        errors.warn_connecting_once(format_args!(
            "warning: {} connection(s) of thread {} to {} still connecting after {} s: the \
             server has not accepted them (a full listen backlog, or SYNs dropped); still \
             waiting {give_up}",
            pending.len(),
            self.thread,
            first.peer(),
            STILL_CONNECTING.as_secs()
        ));
    }
}
