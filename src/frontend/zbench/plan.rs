//! A validated [`ZbenchSpec`] into the engine's plan: every client's commands come from
//! a request stream over zbench's workload (one ZADD per key, or `-n` queries in batches
//! kept in one hash slot), MULTI/EXEC around each query batch with `-multi`, `-rps` as
//! one total rate, reply sizes counted for a query.
//!
//! ```text
//! -h -p -a (--user, -u, TLS)      -> Server (cluster routing by key with -oss-cluster;
//!                                    the host's addresses tried in Go's order)
//! -c -pipeline -rps               -> Load (c clients over the threads, StopAt::Stream,
//!                                    Pacing::Total for -rps)
//! -reply-timeout                  -> LoadShape::reply_timeout (the stall watchdog)
//! -mode -query -r ... -multi      -> Workload::stream (ZbenchStreams), BatchWrap
//! ```

use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use super::flags::{Mode, ZbenchSpec};
use super::render::total_commands;
use super::workload::{Batch, ClientWorkload, Command, share};
use crate::engine::deadline_stream;
use crate::error::Error;
use crate::plan::{
    AddressChoice, Arrival, BatchWrap, ClusterRouting, DataSet, Endpoint, ErrorReplies, FlagNames,
    Load, LoadShape, Outputs, Pacing, Plan, Rate, RequestStream, Seeding, Server, Setup, Shard,
    Step, StopAt, StreamFactory, Streamed, TlsSettings, Workload,
};
use crate::protocol::{Credentials, Protocol};
use crate::stats::RowName;
use crate::workload::args::Args;
use crate::workload::keys::{KeyConfig, KeyPattern};
use crate::workload::values::DataSize;

/// How zbench's command line spells the flags the engine's messages point to.
pub static ZB_NAMES: FlagNames = FlagNames {
    tls: "-tls",
    tls_any: "-tls",
    cacert: "-cacert",
    cert: "-cert",
    key: "-key",
    sni: "-sni",
    tls_skip_verify: "-tls-skip-verify",
    tls_protocols: "-tls",
    connection_timeout: "the connect timeout",
    reply_timeout: "-reply-timeout",
    rate: "-rps",
    authenticate: "-a PASSWORD (with -user USER for an ACL user)",
    cluster_mode: "-oss-cluster",
};

/// Percentiles the engine summarizes each second with (and the JSON file reports).
pub const PERCENTILES: [f64; 3] = [50.0, 95.0, 99.0];

/// How long [`go_dial`] waits on one address before it tries the next.
const DIAL_ATTEMPT: Duration = Duration::from_secs(2);

/// Where the server is and how to reach it: resolved now, so a bad host is an error
/// before any connection.
pub fn server(
    spec: &ZbenchSpec,
    credentials: Option<Credentials>,
    tls: Option<TlsSettings>,
) -> Result<Server, Error> {
    let resolved: Vec<SocketAddr> = (spec.host.as_str(), spec.port)
        .to_socket_addrs()
        .map(Iterator::collect)
        .unwrap_or_default();
    let addr = go_dial(&AddressChoice::AsResolved.order(&resolved))
        .ok_or_else(|| Error::usage(format!("cannot resolve host '{}'", spec.host)))?;
    Ok(Server {
        endpoint: Endpoint::Tcp {
            host: spec.host.clone(),
            addr,
        },
        protocol: Protocol::Redis,
        credentials,
        select_db: spec.conn.db,
        tls: tls.map(Arc::new),
        cluster_mode: spec.oss_cluster,
        cluster_routing: ClusterRouting::ByKey,
        setup: Setup::default(),
        pool: None,
        visibility: None,
        // -oss-cluster's nodes: radix dials them with net.Dial too.
        address_choice: AddressChoice::AsResolved,
    })
}

/// The address redis-zbench-go's connections end up on. Go's net.Dial tries a name's
/// addresses in `order` until one connects; every connection of a run here goes to one
/// address, so with several the first that accepts a TCP connection now (closed at once)
/// is the one, and with one, or none accepting, the first (whose failure the run then
/// reports as usual). An address silent for [`DIAL_ATTEMPT`] is passed over, so one
/// that drops packets costs seconds here, not the kernel's minutes.
fn go_dial(order: &[SocketAddr]) -> Option<SocketAddr> {
    if order.len() > 1 {
        // A stop signal fails every attempt at once: the first is then taken, and the
        // run it starts ends as any stopped run.
        if let Some(reached) = order
            .iter()
            .find(|addr| deadline_stream::connect(addr, DIAL_ATTEMPT).is_ok())
        {
            return Some(*reached);
        }
    }
    order.first().copied()
}

/// Worker threads for `clients` clients: one per core, at most one per client.
pub fn threads(clients: u32) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    cores.min(clients as usize).max(1)
}

/// The plan of the run `spec` asks for; `added` counts the sets its ZADDs carry.
pub fn plan(spec: &ZbenchSpec, server: Server, added: Arc<Added>) -> Plan {
    let clients = spec.clients as usize;
    let threads = threads(spec.clients);
    let query = matches!(spec.mode, Mode::Query(_));
    let (row, hist) = match spec.mode {
        Mode::Load => ("Zadds", "ZADD"),
        Mode::Query(_) => ("Queries", "QUERY"),
    };
    let pacing = match spec.rps {
        Some(per_sec) => Pacing::Total(Rate {
            per_sec,
            arrival: Arrival::Uniform,
            seed: spec.seed as u64,
            // redis-zbench-go's limiter hands out a whole pipeline at a time: the batch
            // goes out together, every command of it due when the batch is.
            burst: u64::from(spec.pipeline),
        }),
        None => Pacing::Closed,
    };
    Plan {
        server,
        load: Load {
            threads,
            clients: clients.div_ceil(threads),
            total_clients: Some(clients),
            pipeline: spec.pipeline as usize,
            run_count: 1,
            stop: StopAt::Stream(total_commands(spec)),
            shape: LoadShape {
                reply_timeout: spec.reply_timeout,
                ..LoadShape::default()
            },
            pacing,
            warmup: Duration::ZERO,
            sweep: None,
            error_replies: ErrorReplies::Count,
            shard: Shard::WHOLE,
            start_at: None,
            busy_poll: spec.busy_poll,
        },
        workload: Workload {
            ratio: (1, 0),
            keys: KeyConfig {
                prefix: "zbench:".to_string(),
                min: 0,
                max: 0,
                set_pattern: KeyPattern::Sequential,
                get_pattern: KeyPattern::Sequential,
                stddev: 0.0,
                median: 0.0,
                zipf_exp: 1.0,
            },
            data_size: DataSize::Fixed(1),
            random_data: false,
            seeding: Seeding::default(),
            arbitrary: None,
            template: None,
            probe: false,
            stream: Some(Arc::new(Streamed {
                factory: Arc::new(ZbenchStreams {
                    spec: Arc::new(spec.clone()),
                    added,
                }),
                // redis-zbench-go ignores -multi when loading (a load batch spans slots).
                wrap: if spec.multi && query {
                    BatchWrap::MultiExec
                } else {
                    BatchWrap::Plain
                },
                row: RowName::new(row, hist, false),
            })),
            dataset: DataSet::default(),
        },
        outputs: Outputs {
            percentiles: PERCENTILES.to_vec(),
            client_series: false,
            progress_every: None,
            reply_sizes: query,
            samples: None,
        },
        names: &ZB_NAMES,
    }
}

/// The sorted sets the load's ZADDs carried so far, all clients: "Average zcard".
///
/// Counted as each batch is generated, since a reply does not say which ZADD it
/// answers: the average is of the sets sent, so an error reply (whose ZADD added
/// nothing) never pulls it outside the element range.
#[derive(Debug, Default)]
pub struct Added {
    /// Elements in all.
    elements: AtomicU64,
    /// ZADDs (one set each).
    sets: AtomicU64,
}

impl Added {
    /// Elements per ZADD generated so far; `None` before the first.
    pub fn average(&self) -> Option<f64> {
        let sets = self.sets.load(Ordering::Relaxed);
        (sets > 0).then(|| self.elements.load(Ordering::Relaxed) as f64 / sets as f64)
    }
}

/// Makes each client's stream of zbench commands.
#[derive(Debug)]
pub struct ZbenchStreams {
    spec: Arc<ZbenchSpec>,
    added: Arc<Added>,
}

impl StreamFactory for ZbenchStreams {
    fn client(&self, index: usize, _clients: usize) -> Box<dyn RequestStream> {
        let client = u32::try_from(index).unwrap_or(u32::MAX);
        Box::new(ClientStream {
            work: ClientWorkload::new(&self.spec, client),
            batch: Batch::new(),
            next: 0,
            added: Arc::clone(&self.added),
        })
    }

    fn commands(&self, index: usize, clients: usize) -> u64 {
        let clients = u32::try_from(clients).unwrap_or(u32::MAX);
        let client = u32::try_from(index).unwrap_or(u32::MAX);
        share(total_commands(&self.spec), clients, client)
    }
}

/// One client's zbench commands, a batch at a time.
struct ClientStream {
    work: ClientWorkload,
    batch: Batch,
    /// The batch's next command to hand out.
    next: usize,
    added: Arc<Added>,
}

impl RequestStream for ClientStream {
    fn next(&mut self, cmd: &mut Args) -> Option<Step> {
        if self.next >= self.batch.len() {
            if !self.work.next_batch(&mut self.batch) {
                return None;
            }
            self.next = 0;
            if self.batch.elements > 0 {
                // A load (a query carries no elements); one atomic add per batch, not
                // per command.
                let added = &self.added;
                added
                    .elements
                    .fetch_add(self.batch.elements, Ordering::Relaxed);
                added
                    .sets
                    .fetch_add(self.batch.len() as u64, Ordering::Relaxed);
            }
        }
        let slot: &mut Command = cmd;
        self.batch.swap_command(self.next, slot);
        self.next += 1;
        Some(Step {
            ends_batch: self.next == self.batch.len(),
        })
    }

    fn remaining(&self) -> u64 {
        self.work.remaining() + (self.batch.len() - self.next.min(self.batch.len())) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    /// An address that accepts connections (the kernel completes them in the listener's
    /// backlog, accepted or not), kept open while the listener lives.
    fn listening() -> (TcpListener, SocketAddr) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        (listener, addr)
    }

    /// An address that refuses connections: a port just closed.
    fn refusing() -> SocketAddr {
        listening().1
    }

    #[test]
    fn go_dial_passes_over_an_address_that_refuses() {
        let (_open, open) = listening();
        let closed = refusing();
        assert_eq!(go_dial(&[closed, open]), Some(open));
        assert_eq!(go_dial(&[open, closed]), Some(open));
    }

    #[test]
    fn go_dial_keeps_the_first_when_none_or_only_one_answers() {
        let (closed, other) = (refusing(), refusing());
        assert_eq!(go_dial(&[closed, other]), Some(closed));
        // One address: taken without a connection of its own.
        assert_eq!(go_dial(&[closed]), Some(closed));
        assert_eq!(go_dial(&[]), None);
    }
}
