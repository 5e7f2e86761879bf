//! A validated [`BenchmarkSpec`] into the engine's plan: the server part once (host
//! resolved, TLS built), then one plan per test, each sending that test's request
//! template from `-c` connections until `-n` requests in all are answered.
//!
//! ```text
//! -h/-p/-s/-u, -a/--user, --dbnum, -3, --tls...   -> Server (set-up commands written in
//!                                                     front of the first request, CLIENT
//!                                                     TRACKING with --enable-tracking)
//! -c, --threads, -P, -n, -k 0, -I                  -> Load (c clients spread over the
//!                                                     threads, whole batches of P, a shared
//!                                                     budget of n, a new connection per
//!                                                     batch, or idle)
//! --rps, --warmup                                  -> Load (open loop at a total rate;
//!                                                     warm-up on top of the n requests)
//! test (template), -r, --seed, --cluster           -> Workload (template, random range,
//!                                                     slot tags, seeds)
//! ```

use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::Arc;
use std::time::Duration;

use super::flags::{BenchmarkSpec, Endpoint as SpecEndpoint, TlsSpec};
use super::render::OutputMode;
use super::suite::{SlotTags, Test};
use crate::error::Error;
use crate::frontend::common::tls::{self, TlsFlags};
use crate::plan::{
    AddressChoice, Arrival, ClusterRouting, DataSet, Endpoint, ErrorReplies, FlagNames, Load,
    LoadShape, Outputs, Pacing, Plan, Rate, Refill, Seeding, Server, Setup, SetupStyle, Shard,
    StopAt, Templated, TlsSettings, Workload,
};
use crate::protocol::Protocol;
use crate::stats::RowName;
use crate::workload::keys::{KeyConfig, KeyPattern};
use crate::workload::values::DataSize;

/// How redis-benchmark's command line spells the flags the engine's messages point to.
pub static RB_NAMES: FlagNames = FlagNames {
    tls: "--tls",
    tls_any: "--tls (or use a rediss:// URI)",
    cacert: "--cacert",
    cert: "--cert",
    key: "--key",
    sni: "--sni",
    tls_skip_verify: "--insecure",
    tls_protocols: "--tls-ciphers / --tls-ciphersuites",
    connection_timeout: "the connect timeout",
    reply_timeout: "--reply-timeout",
    rate: "--rps",
    authenticate: "-a PASSWORD (with --user USER for an ACL user)",
    cluster_mode: "--cluster",
};

/// How often the live line (and `-I`'s `clients:` status) is rewritten.
pub const LIVE_EVERY: Duration = Duration::from_millis(250);

/// Why [`server`] could not build the server part.
#[derive(Debug)]
pub enum ServerError {
    /// The host name resolves to no address. redis-benchmark treats that as a connection
    /// that failed, not as a bad flag, and so does this front end: the line is its
    /// `Could not connect to Redis at nosuch:6379: Name or service not known`.
    Unresolved(String),
    /// A bad value found only now (a TLS file that cannot be read).
    Invalid(Error),
}

impl From<Error> for ServerError {
    fn from(e: Error) -> Self {
        ServerError::Invalid(e)
    }
}

/// The server part of every plan: `spec`'s endpoint resolved, TLS built (its files read
/// now, so a bad file is a usage error before any connection).
pub fn server(spec: &BenchmarkSpec) -> Result<Server, ServerError> {
    let (endpoint, host) = match &spec.endpoint {
        SpecEndpoint::Unix(path) => (Endpoint::Unix(path.clone()), String::new()),
        SpecEndpoint::Tcp { host, port } => {
            let addr = resolve(host, *port).map_err(|why| {
                // Through `Error`'s display: one line, whatever the host name holds
                // (control characters escaped).
                let line = Error::run(format!(
                    "Could not connect to Redis at {host}:{port}: {why}"
                ));
                ServerError::Unresolved(line.to_string())
            })?;
            (
                Endpoint::Tcp {
                    host: host.clone(),
                    addr,
                },
                host.clone(),
            )
        }
    };
    let tls = match &spec.tls {
        Some(tls) => Some(Arc::new(tls_settings(tls, &host)?)),
        None => None,
    };
    Ok(Server {
        endpoint,
        protocol: if spec.resp3 {
            Protocol::Resp3
        } else {
            Protocol::Redis
        },
        credentials: spec.auth.clone(),
        select_db: (spec.dbnum != 0).then_some(spec.dbnum),
        tls,
        cluster_mode: spec.cluster,
        cluster_routing: ClusterRouting::OneMasterPerClient,
        setup: Setup {
            style: SetupStyle::Prefix,
            client_tracking: spec.enable_tracking,
        },
        pool: None,
        visibility: None,
        // --cluster's masters are reached through hiredis too.
        address_choice: AddressChoice::Ipv4First,
    })
}

/// The address of `host:port` redis-benchmark's hiredis connects to (an IPv4 one first,
/// an IPv6 one only when there is none), or the resolver's reason in its own words
/// (`Name or service not known`, as redis-benchmark quotes it from `gai_strerror`).
fn resolve(host: &str, port: u16) -> Result<SocketAddr, String> {
    match (host, port).to_socket_addrs() {
        Ok(addrs) => AddressChoice::Ipv4First
            .pick(&addrs.collect::<Vec<_>>())
            .ok_or_else(|| "No address found".to_string()),
        // std words the failure `failed to lookup address information: REASON`; the
        // REASON is what the C library said, which is what redis-benchmark prints.
        Err(e) => {
            let text = e.to_string();
            let prefix = "failed to lookup address information: ";
            Err(text.strip_prefix(prefix).unwrap_or(&text).to_string())
        }
    }
}

/// The rustls configuration `--tls` and its options ask for.
fn tls_settings(tls: &TlsSpec, host: &str) -> Result<TlsSettings, Error> {
    let path =
        |p: &Option<std::path::PathBuf>| p.as_ref().map(|p| p.to_string_lossy().into_owned());
    let (cert, key, cacert, cacertdir) = (
        path(&tls.cert),
        path(&tls.key),
        path(&tls.cacert),
        path(&tls.cacertdir),
    );
    let flags = TlsFlags {
        host,
        cert: cert.as_deref(),
        key: key.as_deref(),
        cacert: cacert.as_deref(),
        skip_verify: tls.insecure,
        sni: tls.sni.as_deref(),
        protocols: None,
        cacertdir: cacertdir.as_deref(),
        cipher_suites: tls.cipher_suites.as_deref(),
    };
    tls::build(&flags).map_err(|msg| Error::usage(rb_flag_names(&msg)))
}

/// The shared TLS builder names memtier's flags in a few messages; say redis-benchmark's.
fn rb_flag_names(msg: &str) -> String {
    msg.replace("--tls-skip-verify", "--insecure")
}

/// Threads as redis-benchmark counts them: `--threads`, or in cluster mode the number of
/// masters when not given; 0 is its single event loop (one worker for kvbench).
pub fn rb_threads(spec: &BenchmarkSpec, masters: usize) -> u32 {
    if spec.threads == 0 && spec.cluster {
        masters as u32
    } else {
        spec.threads
    }
}

/// The plan that runs `test` (or, with `None`, `-I`'s idle connections) against `server`.
pub fn test_plan(
    spec: &BenchmarkSpec,
    server: &Server,
    threads: u32,
    test: Option<&Test>,
    slot_tags: Option<&Arc<[[u8; 3]]>>,
    live: bool,
) -> Plan {
    let workers = threads.max(1) as usize;
    let clients = spec.clients as usize;
    let pipeline = spec.pipeline as usize;
    let template = test.map(|test| {
        Arc::new(Templated {
            template: test.command.clone(),
            random_below: spec.keyspace.unwrap_or(0),
            slot_tags: slot_tags.cloned(),
            row: test_row(&test.title),
        })
    });
    Plan {
        server: server.clone(),
        load: Load {
            threads: workers,
            clients: clients.div_ceil(workers),
            total_clients: Some(clients),
            pipeline,
            run_count: 1,
            stop: if test.is_some() {
                StopAt::TotalRequests(spec.requests)
            } else {
                StopAt::Idle
            },
            shape: LoadShape {
                // -k 0: a new connection for every request, or every batch with -P.
                reconnect_interval: (!spec.keep_alive).then_some(pipeline as u64),
                // -P: the next batch only when the whole last one is answered, as
                // redis-benchmark does (not as each reply frees a place).
                refill: Refill::WholeBatch,
                reply_timeout: spec.reply_timeout,
                ..LoadShape::default()
            },
            // -I sends nothing: nothing to pace or warm up.
            pacing: match test {
                Some(_) => pacing(spec),
                None => Pacing::Closed,
            },
            warmup: match test {
                Some(_) => spec.warmup.unwrap_or(Duration::ZERO),
                None => Duration::ZERO,
            },
            sweep: None,
            shard: Shard::WHOLE,
            start_at: None,
            busy_poll: spec.busy_poll,
            error_replies: ErrorReplies::Stop,
        },
        workload: Workload {
            ratio: (1, 0),
            keys: KeyConfig {
                prefix: String::new(),
                min: 0,
                max: 0,
                set_pattern: KeyPattern::Random,
                get_pattern: KeyPattern::Random,
                stddev: 1.0,
                median: 0.0,
                zipf_exp: 1.0,
            },
            data_size: DataSize::Fixed(1),
            random_data: false,
            seeding: Seeding {
                distinct_per_client: true,
                randomize: spec.seed.is_none(),
                base: spec.seed,
                // redis-benchmark draws from one generator, so a seed fixes the values
                // sent whichever client sends them.
                by_request_index: spec.seed.is_some(),
            },
            arbitrary: None,
            template,
            probe: false,
            stream: None,
            dataset: DataSet::default(),
        },
        outputs: Outputs {
            percentiles: vec![50.0, 99.0, 99.9],
            client_series: false,
            progress_every: live.then_some(LIVE_EVERY),
            samples: None,
            reply_sizes: false,
        },
        names: &RB_NAMES,
    }
}

/// `--rps`: open loop at that total rate, evenly spaced (the engine's one scheduler;
/// latency from each request's intended send time); closed loop without it.
fn pacing(spec: &BenchmarkSpec) -> Pacing {
    match spec.rps {
        Some(per_sec) => Pacing::Total(Rate {
            per_sec,
            arrival: Arrival::Uniform,
            seed: 0,
            burst: 1,
        }),
        None => Pacing::Closed,
    }
}

/// A test's result row: named by its title; its histogram (the JSON's distribution
/// array and the HDR files) by the title with `_` for blanks and `_latency` after, so
/// the two JSON keys never clash (`SET` and `SET_latency`).
pub fn test_row(title: &str) -> RowName {
    let hist = format!("{}_latency", title.replace([' ', '/'], "_"));
    RowName::new(title, &hist, false)
}

/// The slot-tag table `--cluster` fills `{tag}` fields from, computed once per run.
pub fn slot_tags(spec: &BenchmarkSpec) -> Option<Arc<[[u8; 3]]>> {
    spec.cluster.then(|| {
        let tags = SlotTags::new();
        (0..crate::engine::cluster::SLOTS as u16)
            .map(|slot| *tags.get(slot))
            .collect()
    })
}

/// Whether the live line is shown: on a terminal, and not with `--csv`.
pub fn shows_live(mode: OutputMode, stdout_is_tty: bool) -> bool {
    stdout_is_tty && super::render::shows_live_line(mode)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontend::redis_benchmark::flags::{Parsed, parse};
    use crate::frontend::redis_benchmark::suite::{PayloadGenerator, arbitrary_test};

    fn spec(args: &[&str]) -> BenchmarkSpec {
        match parse(std::iter::once("redis-benchmark").chain(args.iter().copied())) {
            Ok(Parsed::Run(spec)) => *spec,
            other => panic!("{args:?}: {other:?}"),
        }
    }

    #[test]
    fn busy_poll_reaches_every_test_plan() {
        let test = arbitrary_test(&[b"ping".to_vec()], 1, true, false);
        for (args, want) in [
            (
                &["--busy-poll", "250"][..],
                Some(Duration::from_micros(250)),
            ),
            (&["--busy-poll", "0"][..], None),
            (&[][..], None),
        ] {
            let s = spec(args);
            let server = server(&s).unwrap();
            let plan = test_plan(&s, &server, 1, Some(&test), None, false);
            assert_eq!(plan.load.busy_poll, want, "{args:?}");
        }
    }

    #[test]
    fn a_test_becomes_a_shared_budget_over_spread_clients() {
        let s = spec(&[
            "-c",
            "50",
            "-n",
            "1000",
            "--threads",
            "3",
            "-P",
            "4",
            "-k",
            "0",
            "-r",
            "9",
        ]);
        let server = server(&s).unwrap();
        assert_eq!(server.setup.style, SetupStyle::Prefix);
        let test = arbitrary_test(
            &[b"get".to_vec(), b"k__rand_int__".to_vec()],
            2,
            true,
            false,
        );
        let plan = test_plan(&s, &server, 3, Some(&test), None, false);
        assert_eq!(plan.load.stop, StopAt::TotalRequests(1000));
        assert_eq!(plan.total_clients(), 50);
        assert_eq!(
            (0..3)
                .map(|t| plan.clients_on_thread(t))
                .collect::<Vec<_>>(),
            [17, 17, 16]
        );
        assert_eq!(plan.first_client_of_thread(2), 34);
        assert_eq!(plan.load.shape.reconnect_interval, Some(4));
        let templated = plan.workload.template.as_ref().unwrap();
        assert_eq!(templated.random_below, 9);
        assert_eq!(plan.row_names()[0].row, "get k__rand_int__");
        assert_eq!(plan.row_names()[0].hist, "get_k__rand_int___latency");
        assert_eq!(plan.outputs.progress_every, None);
        assert_eq!(
            (plan.load.pacing, plan.load.warmup),
            (Pacing::Closed, Duration::ZERO)
        );
        let s = spec(&["--rps", "2000", "--warmup", "1.5"]);
        let plan = test_plan(&s, &server, 0, Some(&test), None, false);
        assert_eq!(plan.load.pacing.target_total(50), Some(2000));
        assert_eq!(plan.load.warmup, Duration::from_millis(1500));
        let idle = test_plan(&s, &server, 0, None, None, false);
        assert_eq!(
            (idle.load.pacing, idle.load.warmup),
            (Pacing::Closed, Duration::ZERO)
        );
        // --threads 0 (the default) is one worker.
        let s = spec(&["-I"]);
        let plan = test_plan(&s, &server, 0, None, None, true);
        assert_eq!((plan.load.threads, plan.load.stop), (1, StopAt::Idle));
        assert_eq!(plan.outputs.progress_every, Some(LIVE_EVERY));
    }

    #[test]
    fn server_part() {
        let s = spec(&[
            "-a",
            "pw",
            "--user",
            "u",
            "--dbnum",
            "3",
            "-3",
            "--enable-tracking",
        ]);
        let server = server(&s).unwrap();
        assert_eq!(server.protocol, Protocol::Resp3);
        assert_eq!(server.select_db, Some(3));
        assert!(server.setup.client_tracking);
        assert_eq!(server.credentials.unwrap().user.as_deref(), Some("u"));
        match super::server(&spec(&["-h", "no-such-host.invalid", "-p", "7001"])) {
            Err(ServerError::Unresolved(line)) => assert!(
                line.starts_with("Could not connect to Redis at no-such-host.invalid:7001: "),
                "{line}"
            ),
            other => panic!("{other:?}"),
        }
        match super::server(&spec(&["-h", "a\nb"])) {
            Err(ServerError::Unresolved(line)) => {
                assert!(
                    line.starts_with("Could not connect to Redis at a\\nb:6379: "),
                    "{line}"
                )
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(rb_threads(&spec(&["--cluster"]), 3), 3);
        assert_eq!(rb_threads(&spec(&["--cluster", "--threads", "2"]), 3), 2);
        assert_eq!(rb_threads(&spec(&[]), 3), 0);
        let tags = slot_tags(&spec(&["--cluster"])).unwrap();
        assert_eq!(tags.len(), 16384);
        let mut payload = PayloadGenerator::default();
        assert_eq!(payload.next_payload(3), b"VXK");
    }
}
