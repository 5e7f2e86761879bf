//! One worker thread: a `mio::Poll` driving many clients, with its own stats and clock ticks.
//!
//! The worker records into per-second stats and, at each second boundary of the run's
//! clock, sends them to the runner as a [`WorkerMsg::Snapshot`]. The poll timeout is the
//! time to the next boundary (or the run's deadline), so no timer thread is needed.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crossbeam_channel::Sender;
use mio::{Events, Poll, Token};

use crate::client::{Client, ClientContext, ErrorLog, Status};
use crate::config::Config;
use crate::stats::{OpStats, rows};
use crate::transport::Transport;
use crate::workload::generator::OpGenerator;
use crate::workload::values::ValuePool;

/// The token of the runner's waker; client tokens are their index.
pub const WAKE_TOKEN: Token = Token(usize::MAX);

/// What a worker tells the runner.
pub enum WorkerMsg {
    /// Stats of second `second` of the run (0-based) for this thread.
    Snapshot {
        thread: usize,
        second: u32,
        stats: Vec<OpStats>,
    },
    /// A connection failed; the run cannot be trusted any more.
    Failed { thread: usize, message: String },
    /// The thread is done; its last snapshot was sent before this.
    Finished { thread: usize, at: Instant },
}

/// One client a worker is to run.
#[derive(Clone, Copy, Debug)]
pub struct ClientPlan {
    /// Index over all threads' clients.
    pub index: usize,
    /// Requests to send, `None` when the run is time-bound.
    pub requests: Option<u64>,
    pub seed: u64,
}

/// Everything a worker thread owns.
pub struct Worker {
    pub thread: usize,
    pub poll: Poll,
    pub config: Arc<Config>,
    pub values: Arc<ValuePool>,
    pub clients: Vec<ClientPlan>,
    pub run_start: Instant,
    pub deadline: Option<Instant>,
    pub stop: Arc<AtomicBool>,
    pub tx: Sender<WorkerMsg>,
    /// `host:port` or socket path, for messages.
    pub peer: String,
}

impl Worker {
    /// Runs the thread's clients to completion, deadline or stop; always ends with `Finished`.
    pub fn run(mut self) {
        let mut stats: Vec<OpStats> = (0..rows::COUNT).map(|_| OpStats::new()).collect();
        let mut second: u32 = 0;
        if let Err(message) = self.drive(&mut stats, &mut second) {
            let _ = self.tx.send(WorkerMsg::Failed {
                thread: self.thread,
                message,
            });
        }
        let _ = self.tx.send(WorkerMsg::Snapshot {
            thread: self.thread,
            second,
            stats,
        });
        let _ = self.tx.send(WorkerMsg::Finished {
            thread: self.thread,
            at: Instant::now(),
        });
    }

    fn drive(&mut self, stats: &mut [OpStats], second: &mut u32) -> Result<(), String> {
        let mut clients = self.connect_all()?;
        let mut active = clients.len();
        let mut events = Events::with_capacity(1024);
        let mut errors = ErrorLog::default();
        let mut next_tick = self.run_start + Duration::from_secs(1);
        loop {
            let now = Instant::now();
            while now >= next_tick {
                self.send_snapshot(stats, *second);
                *second += 1;
                next_tick += Duration::from_secs(1);
            }
            if active == 0 || self.stop.load(Ordering::Relaxed) {
                return Ok(());
            }
            let wake_at = match self.deadline {
                Some(deadline) if now >= deadline => return Ok(()),
                Some(deadline) => deadline.min(next_tick),
                None => next_tick,
            };
            if let Err(err) = self.poll.poll(&mut events, Some(wake_at - now)) {
                if err.kind() == std::io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(format!("event loop failed: {err}"));
            }
            for event in events.iter() {
                if event.token() == WAKE_TOKEN {
                    continue;
                }
                let index = event.token().0;
                let Some(client) = clients.get_mut(index).and_then(Option::as_mut) else {
                    continue;
                };
                let mut ctx = ClientContext {
                    stats,
                    values: &self.values,
                    errors: &mut errors,
                    peer: &self.peer,
                };
                match client.handle_event(event, &self.config, &mut ctx) {
                    Status::Active => {}
                    Status::Finished => {
                        self.close(&mut clients[index]);
                        active -= 1;
                    }
                    Status::Failed(message) => {
                        stats[client.oldest_pending_row()].connection_errors += 1;
                        self.close(&mut clients[index]);
                        return Err(message);
                    }
                }
            }
        }
    }

    /// Starts every client's non-blocking connect and registers it with the poll.
    fn connect_all(&mut self) -> Result<Vec<Option<Client>>, String> {
        let mut clients = Vec::with_capacity(self.clients.len());
        for (slot, plan) in self.clients.iter().enumerate() {
            let ops = OpGenerator::new(&self.config, plan.index, plan.seed)?;
            let mut transport = Transport::connect(&self.config.endpoint)
                .map_err(|err| format!("cannot connect to {}: {err}", self.peer))?;
            transport
                .register(self.poll.registry(), Token(slot))
                .map_err(|err| format!("cannot register connection: {err}"))?;
            clients.push(Some(Client::new(
                transport,
                ops,
                plan.requests,
                &self.config,
            )));
        }
        Ok(clients)
    }

    fn close(&self, slot: &mut Option<Client>) {
        if let Some(mut client) = slot.take() {
            let _ = client.transport_mut().deregister(self.poll.registry());
            client.transport_mut().shutdown();
        }
    }

    /// Hands the current second's stats to the runner and starts a fresh second.
    fn send_snapshot(&self, stats: &mut [OpStats], second: u32) {
        let snapshot = stats.to_vec();
        for row in stats.iter_mut() {
            row.reset();
        }
        let _ = self.tx.send(WorkerMsg::Snapshot {
            thread: self.thread,
            second,
            stats: snapshot,
        });
    }
}
