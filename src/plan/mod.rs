//! The plan: the engine's validated, typed input. A front end builds it from its own
//! flags (every usage error found there, before any socket); the engine only reads it,
//! shared in an `Arc`. No front-end type and no flag spelling lives here: messages the
//! engine prints about a knob name it through [`FlagNames`], which the front end supplies.
//!
//! ```text
//! Plan
//!   server    where and how to connect: endpoint, protocol, credentials, database, TLS,
//!             set-up commands, cluster mode and routing, which of a name's addresses
//!             the engine takes ([`address`])
//!   load      threads x clients, pipeline, runs, when a run stops, the load's shape,
//!             pacing (closed loop, or an open-loop rate), warm-up, rate sweep, what an
//!             error reply does, this process's shard of a workload spread over several,
//!             when it starts
//!   workload  SET:GET ratio, keys, value sizes, seeds, arbitrary commands, a request
//!             template, data set
//!   outputs   what the engine itself must record (percentiles, per-client series, live
//!             progress)
//! ```

pub mod address;
pub mod names;
pub mod pacing;
pub mod pool;
pub mod replies;
pub mod samples;
pub mod setup;
pub mod shape;
pub mod shard;
pub mod stream;
pub mod templated;
pub mod tls;
pub mod visibility;
pub mod workload;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

pub use address::AddressChoice;
pub use names::FlagNames;
pub use pacing::{Arrival, Pacing, Rate, RateSweep, Slo};
pub use pool::{Distribution, Member, Pool};
pub use replies::ErrorReplies;
pub use samples::{Sample, SampleSink};
pub use setup::{ClusterRouting, Setup, SetupStyle};
pub use shape::{LoadShape, Ramp, Reconnect, Refill, WaitConfig};
pub use shard::Shard;
pub use stream::{BatchWrap, RequestStream, Step, StreamFactory, Streamed};
pub use templated::Templated;
pub use tls::TlsSettings;
pub use visibility::VisibilityProbe;
pub use workload::{Arbitrary, DataSet};

use crate::protocol::{Credentials, Protocol};
use crate::stats::RowName;
use crate::workload::keys::KeyConfig;
use crate::workload::values::DataSize;

/// Everything the engine needs to run a benchmark.
#[derive(Clone, Debug)]
pub struct Plan {
    pub server: Server,
    pub load: Load,
    pub workload: Workload,
    pub outputs: Outputs,
    /// How the front end spells the flags the engine's messages point users to.
    pub names: &'static FlagNames,
}

/// Where to connect.
#[derive(Clone, Debug)]
pub enum Endpoint {
    /// Resolved TCP address plus the host name as the user typed it (for messages, SNI).
    Tcp {
        host: String,
        addr: SocketAddr,
    },
    Unix(PathBuf),
}

impl Endpoint {
    /// `host:port` (an IPv6 host in brackets) or the socket path, for messages.
    pub fn name(&self) -> String {
        match self {
            Endpoint::Tcp { host, addr } => {
                if addr.is_ipv6() && host.contains(':') {
                    format!("[{host}]:{}", addr.port())
                } else {
                    format!("{host}:{}", addr.port())
                }
            }
            Endpoint::Unix(path) => path.display().to_string(),
        }
    }
}

/// The server and how to speak to it.
#[derive(Clone, Debug)]
pub struct Server {
    pub endpoint: Endpoint,
    pub protocol: Protocol,
    pub credentials: Option<Credentials>,
    /// The Redis database to SELECT after connecting; `None`: none selected.
    pub select_db: Option<u32>,
    /// TLS for every connection: the rustls configuration built once and the server
    /// name; `None` for plaintext.
    pub tls: Option<Arc<TlsSettings>>,
    /// Redis Cluster: route each key to the master that owns its slot.
    pub cluster_mode: bool,
    /// In cluster mode: one connection per master, or one master per client.
    pub cluster_routing: ClusterRouting,
    /// CLIENT TRACKING, and whether set-up commands wait for their replies.
    pub setup: Setup,
    /// A pool of servers, each key sent to its member (`endpoint` is then the first
    /// member's); `None`: one server.
    pub pool: Option<Arc<Pool>>,
    /// Replica visibility: poll tracked writes on another endpoint.
    pub visibility: Option<VisibilityProbe>,
    /// How a host name the engine meets on its own (a cluster's masters, a redirection's
    /// target) becomes an address: as the front end's tool picks one.
    pub address_choice: AddressChoice,
}

/// When a run stops.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum StopAt {
    /// Each client sends exactly this many requests.
    RequestsPerClient(u64),
    /// One pass over the key range shared by all clients (`key_max - key_min + 1`
    /// requests in all, split as evenly as possible).
    AllKeys,
    /// After this long.
    Time(Duration),
    /// After this many requests in all: one budget every client takes from as it sends
    /// (a request or a pipeline's room at a time), whichever client is free.
    TotalRequests(u64),
    /// When every client's request stream ([`Workload::stream`]) has ended; `total` is
    /// their commands in all (for the share done).
    Stream(u64),
    /// Never by itself: every client connects, sends nothing (no set-up commands with
    /// [`SetupStyle::Prefix`]) and holds its connection until the run is stopped.
    Idle,
}

/// How much load, and its shape.
#[derive(Clone, Debug)]
pub struct Load {
    /// Worker threads.
    pub threads: usize,
    /// Clients (connections, or one per master in cluster mode) per thread; with
    /// `total_clients`, the most any thread has.
    pub clients: usize,
    /// This many clients in all, spread over the threads as evenly as possible (the
    /// first threads take one more), instead of `clients` on every thread.
    pub total_clients: Option<usize>,
    /// Requests in flight per connection.
    pub pipeline: usize,
    /// Benchmark runs one after the other (at least 1).
    pub run_count: u32,
    pub stop: StopAt,
    /// Reconnects, ramp-up, WAIT, expiry, multi-key gets, data offset.
    pub shape: LoadShape,
    /// Closed loop, or an open-loop rate (total or per connection).
    pub pacing: Pacing,
    /// Load sent before the measured part of each run (before `StopAt::Time` starts
    /// counting) and left out of every result.
    pub warmup: Duration,
    /// Run these open-loop rates in turn instead of `run_count` runs. The rates are the
    /// whole workload's: a shard runs its share of each ([`Plan::sweep_rates`]).
    pub sweep: Option<RateSweep>,
    /// Count error replies, or stop at the first one.
    pub error_replies: ErrorReplies,
    /// Which part of a workload spread over several processes this one runs
    /// ([`Shard::WHOLE`] when it runs all of it).
    pub shard: Shard,
    /// When the first run starts sending: every client connects (and authenticates)
    /// first, then waits for this instant, which becomes the run's start. `None`: at once.
    pub start_at: Option<SystemTime>,
    /// Before a worker sleeps in its poll, it polls without waiting for up to this long:
    /// a reply (or a due send) that comes within it is taken at once instead of after
    /// the thread's wake-up from idle. Costs the worker's core while it spins. `None`:
    /// sleep at once.
    pub busy_poll: Option<Duration>,
}

/// How client seeds are chosen.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Seeding {
    /// Each client its own seed (else all share one, so the same flags send the same keys).
    pub distinct_per_client: bool,
    /// Seeded from the clock, so runs differ.
    pub randomize: bool,
    /// The seed clients derive theirs from when not from the clock (`None`: kvbench's
    /// own constant, so the same flags send the same keys).
    pub base: Option<u64>,
    /// A request template's random fields are drawn from the request's place in the run
    /// (under a shared budget), not from the client that happens to send it: a seeded run
    /// sends the same set of values however its requests fall to the clients.
    pub by_request_index: bool,
}

/// What the clients send.
#[derive(Clone, Debug)]
pub struct Workload {
    /// SET:GET ratio, e.g. `(1, 10)`; never `(0, 0)`.
    pub ratio: (u32, u32),
    pub keys: KeyConfig,
    pub data_size: DataSize,
    /// Values are random printable bytes instead of `x` repeated.
    pub random_data: bool,
    pub seeding: Seeding,
    /// Arbitrary commands, replacing SET/GET when present.
    pub arbitrary: Option<Arc<Arbitrary>>,
    /// One request template, replacing SET/GET (and arbitrary commands) when present.
    pub template: Option<Arc<Templated>>,
    /// Every request is the protocol's liveness probe (Redis `PING`, memcached
    /// `version`), replacing everything above; reported in one row, `Probes`.
    pub probe: bool,
    /// A front end's own request streams, replacing all of the above when present.
    pub stream: Option<Arc<Streamed>>,
    /// Imported values and data verification.
    pub dataset: DataSet,
}

/// What the engine records for the front end beyond the run's rows.
#[derive(Clone, Debug, Default)]
pub struct Outputs {
    /// Percentiles of every per-second summary, e.g. `[50.0, 99.0, 99.9]`.
    pub percentiles: Vec<f64>,
    /// Keep each client's own per-second figures (handed over at each run's end).
    pub client_series: bool,
    /// Tell the observer how the run is going this often
    /// ([`crate::engine::RunObserver::progress`]), besides each second.
    pub progress_every: Option<Duration>,
    /// Hand every answered request's times to this channel as the reply is read (warm-up
    /// ones too; an error reply is no sample); `None` costs one branch per reply.
    pub samples: Option<SampleSink>,
    /// Count how many elements each reply has ([`crate::stats::OpStats::reply_sizes`]).
    pub reply_sizes: bool,
}

impl Plan {
    /// Total number of clients, all threads.
    pub fn total_clients(&self) -> usize {
        self.load
            .total_clients
            .unwrap_or(self.load.threads * self.load.clients)
    }

    /// Number of clients thread `thread` runs.
    pub fn clients_on_thread(&self, thread: usize) -> usize {
        match self.load.total_clients {
            Some(total) => {
                let threads = self.load.threads.max(1);
                total / threads + usize::from(thread < total % threads)
            }
            None => self.load.clients,
        }
    }

    /// Commands thread `thread`'s clients will send in all, when a request stream
    /// ([`Workload::stream`]) sets each client's share; `None` otherwise.
    pub fn stream_commands_on_thread(&self, thread: usize) -> Option<u64> {
        let stream = self.workload.stream.as_ref()?;
        let first = self.first_client_of_thread(thread);
        let total = self.total_clients();
        Some(
            (first..first + self.clients_on_thread(thread))
                .map(|index| stream.factory.commands(index, total))
                .sum(),
        )
    }

    /// Index (over all threads) of the first client of thread `thread`.
    pub fn first_client_of_thread(&self, thread: usize) -> usize {
        (0..thread).map(|t| self.clients_on_thread(t)).sum()
    }

    /// Stats rows kept per pool member (after the command rows): one each, or none
    /// without a pool.
    pub fn server_rows(&self) -> usize {
        self.server.pool.as_ref().map_or(0, |p| p.members.len())
    }

    /// Stats rows after the command rows: the pool members', then the visibility lag's
    /// (one, with `--visibility-from`), then, last, one for the connection errors no
    /// request can be blamed for (a connection lost or refused with nothing of the
    /// workload in flight), which only Totals counts.
    pub fn extra_rows(&self) -> usize {
        self.server_rows() + usize::from(self.server.visibility.is_some()) + 1
    }

    /// Number of keys in the key range.
    pub fn key_range(&self) -> u64 {
        self.workload.keys.range_len()
    }

    /// Client `client_index` of this process as one of the clients of every shard:
    /// `(index, count)`; key patterns and `-n allkeys` split the range over these.
    pub fn client_of_all_shards(&self, client_index: usize) -> (usize, usize) {
        self.load
            .shard
            .global_client(client_index, self.total_clients())
    }

    /// The keys this process writes under `-n allkeys`: the whole range, or its shard's
    /// slice of it.
    pub fn shard_key_count(&self) -> u64 {
        self.load
            .shard
            .key_slice(self.workload.keys.min, self.key_range())
            .1
    }

    /// The rows a run reports, in table order: SET/GET/WAIT, or one per command row.
    pub fn row_names(&self) -> Vec<RowName> {
        if self.workload.probe {
            return vec![RowName::new("Probes", "PROBE", false)];
        }
        if let Some(stream) = &self.workload.stream {
            return vec![stream.row.clone()];
        }
        if let Some(templated) = &self.workload.template {
            return vec![templated.row.clone()];
        }
        match &self.workload.arbitrary {
            Some(arbitrary) => arbitrary.list.rows.clone(),
            None => RowName::builtin(),
        }
    }

    /// The plan of the verification pass that follows the runs: the same servers,
    /// protocol, keys and sizes, every key read once as fast as the server allows (no
    /// pacing, warm-up, ramp-up or reconnect schedule), no arbitrary commands.
    pub fn verification_plan(&self) -> Plan {
        let shape = &self.load.shape;
        let mut plan = self.clone();
        plan.load.shape = LoadShape {
            data_offset: shape.data_offset,
            connection_timeout: shape.connection_timeout,
            reply_timeout: shape.reply_timeout,
            ..LoadShape::default()
        };
        plan.load.stop = StopAt::RequestsPerClient(u64::MAX);
        plan.load.pacing = Pacing::Closed;
        plan.load.warmup = Duration::ZERO;
        plan.load.sweep = None;
        plan.workload.arbitrary = None;
        plan.workload.template = None;
        plan.workload.probe = false;
        plan.workload.stream = None;
        plan
    }

    /// The plan of step `index` (0-based) of the rate sweep, at `rate` requests per
    /// second: open loop for the step's duration; only the first step warms up.
    pub fn sweep_step(&self, index: usize, rate: u64) -> Plan {
        let mut plan = self.clone();
        if let Some(sweep) = self.load.sweep {
            plan.load.stop = StopAt::Time(sweep.step_duration);
        }
        plan.load.pacing = self.load.pacing.with_total(rate);
        if index > 0 {
            plan.load.warmup = Duration::ZERO;
        }
        plan.load.sweep = None;
        plan.load.run_count = 1;
        plan
    }

    /// The rates of the sweep's steps that this process runs: each step's rate, or with
    /// a split workload this shard's share of it (the shards' rates add up to it).
    pub fn sweep_rates(&self) -> Vec<u64> {
        self.load.sweep.map_or_else(Vec::new, |sweep| {
            sweep
                .rates()
                .map(|rate| self.load.shard.share(rate).max(1))
                .collect()
        })
    }

    /// Whether the load's refill shape fits its clients: [`Refill::WholeBatch`] counts
    /// one connection's batch, so a client spread over several (cluster routing by key, a
    /// server pool) is refused with a message saying why.
    pub fn check_refill(&self) -> Result<(), String> {
        if self.load.shape.refill != Refill::WholeBatch {
            return Ok(());
        }
        if self.server.cluster_mode && self.server.cluster_routing == ClusterRouting::ByKey {
            return Err("whole-batch pipelining needs one connection per client: \
                        not with cluster routing by key (each client pinned to one master \
                        works)"
                .to_string());
        }
        if self.server.pool.is_some() {
            return Err(
                "whole-batch pipelining needs one connection per client: not with a server pool"
                    .to_string(),
            );
        }
        Ok(())
    }

    /// Requests the run sends in all when a count bounds it (`None` for a run bounded by
    /// time, or none at all).
    pub fn planned_requests(&self) -> Option<u64> {
        match self.load.stop {
            StopAt::RequestsPerClient(n) => Some(n.saturating_mul(self.total_clients() as u64)),
            StopAt::AllKeys => Some(self.shard_key_count()),
            StopAt::TotalRequests(n) | StopAt::Stream(n) => Some(n),
            StopAt::Time(_) | StopAt::Idle => None,
        }
    }

    /// Requests per second the run aims at in open loop, all connections together.
    pub fn target_rate(&self) -> Option<u64> {
        self.load.pacing.target_total(self.total_clients())
    }
}

#[cfg(test)]
impl Plan {
    /// A small valid plan for unit tests: one thread, one client, 127.0.0.1:6379, SET:GET
    /// 1:10 over keys 0..=100, 32-byte values; tests change what they exercise.
    pub(crate) fn example() -> Plan {
        use crate::workload::keys::KeyPattern;
        static NAMES: FlagNames = FlagNames {
            tls: "--tls",
            tls_any: "--tls",
            cacert: "--cacert",
            cert: "--cert",
            key: "--key",
            sni: "--sni",
            tls_skip_verify: "--tls-skip-verify",
            tls_protocols: "--tls-protocols",
            connection_timeout: "--connection-timeout",
            reply_timeout: "--reply-timeout",
            rate: "--rate",
            authenticate: "-a",
            cluster_mode: "--cluster-mode",
        };
        Plan {
            server: Server {
                endpoint: Endpoint::Tcp {
                    host: "127.0.0.1".to_string(),
                    addr: SocketAddr::from(([127, 0, 0, 1], 6379)),
                },
                protocol: Protocol::Redis,
                credentials: None,
                select_db: None,
                tls: None,
                cluster_mode: false,
                cluster_routing: ClusterRouting::ByKey,
                setup: Setup::default(),
                pool: None,
                visibility: None,
                address_choice: AddressChoice::AsResolved,
            },
            load: Load {
                threads: 1,
                clients: 1,
                pipeline: 1,
                run_count: 1,
                total_clients: None,
                stop: StopAt::RequestsPerClient(100),
                shape: LoadShape::default(),
                pacing: Pacing::Closed,
                warmup: Duration::ZERO,
                sweep: None,
                error_replies: ErrorReplies::Count,
                shard: Shard::WHOLE,
                start_at: None,
                busy_poll: None,
            },
            workload: Workload {
                ratio: (1, 10),
                keys: KeyConfig {
                    prefix: "memtier-".to_string(),
                    min: 0,
                    max: 100,
                    set_pattern: KeyPattern::Random,
                    get_pattern: KeyPattern::Random,
                    stddev: 100.0 / 6.0,
                    median: 50.0,
                    zipf_exp: 1.0,
                },
                data_size: DataSize::Fixed(32),
                random_data: false,
                seeding: Seeding::default(),
                arbitrary: None,
                template: None,
                probe: false,
                stream: None,
                dataset: DataSet::default(),
            },
            outputs: Outputs::default(),
            names: &NAMES,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_batch_refill_needs_one_connection_per_client() {
        let mut plan = Plan::example();
        plan.server.cluster_mode = true;
        assert_eq!(plan.check_refill(), Ok(()));
        plan.load.shape.refill = Refill::WholeBatch;
        let err = plan.check_refill().unwrap_err();
        assert!(err.contains("cluster routing by key"), "{err}");
        plan.server.cluster_routing = ClusterRouting::OneMasterPerClient;
        assert_eq!(plan.check_refill(), Ok(()));
        plan.server.cluster_mode = false;
        assert_eq!(plan.check_refill(), Ok(()));
    }
}
