//! `kvbench latency`'s options into the engine's plan: one thread, one connection, the
//! protocol's probe request (PING, memcached `version`) every 10 ms, and every reply's
//! times handed back over a channel.
//!
//! ```text
//! -h/-p/-s/-u/-n, -a/--user, TLS, -P -> Server (resolved, IPv4 first as redis-cli's
//!                                      hiredis picks; TLS built, before any socket)
//! default                           -> closed loop, a 10 ms think time after each reply
//!                                      (redis-cli: send, reply, wait 10 ms)
//! --open-loop                       -> 100 probes a second on a fixed schedule
//! the sample sink                   -> Outputs::samples
//! ```

use std::sync::Arc;
use std::time::Duration;

use super::flags::{Options, Resolved, SAMPLE_PERIOD_US};
use super::windows::Mode;
use crate::error::{Error, Result};
use crate::frontend::common::parse_credentials;
use crate::frontend::common::tls::{self, TlsFlags};
use crate::plan::{
    AddressChoice, Arrival, ClusterRouting, DataSet, ErrorReplies, FlagNames, Load, LoadShape,
    Outputs, Pacing, Plan, Rate, SampleSink, Seeding, Server, Setup, Shard, StopAt, Workload,
};
use crate::protocol::Credentials;
use crate::workload::keys::{KeyConfig, KeyPattern};
use crate::workload::values::DataSize;

/// How `kvbench latency` spells the flags the engine's messages point to.
pub static LATENCY_NAMES: FlagNames = FlagNames {
    tls: "--tls",
    tls_any: "--tls (or use a rediss:// URI)",
    cacert: "--cacert",
    cert: "--cert",
    key: "--key",
    sni: "--sni",
    tls_skip_verify: "--tls-skip-verify",
    tls_protocols: "--tls-protocols",
    connection_timeout: "the connect timeout",
    reply_timeout: "the reply timeout",
    rate: "a request rate",
    authenticate: "-a PASSWORD (with --user USER for an ACL user)",
    cluster_mode: "--cluster-mode",
};

/// A probe connects within this (redis-cli gives up at once on a refused connection; a
/// silent host should not hang the probe either).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The plan that probes the server `options` name, handing every reply's times to `sink`.
/// Resolves the host and reads the TLS files: every usage error is found here.
pub fn probe_plan(options: &Options, sink: SampleSink) -> Result<Plan> {
    // redis-cli connects through hiredis, which looks for an IPv4 address first and for
    // an IPv6 one only when there is none.
    let target = options.conn.target()?.preferring(AddressChoice::Ipv4First);
    // `-a`'s text, when the credentials are its (a URI's win over it).
    let password_flag = options
        .conn
        .authenticate
        .as_deref()
        .filter(|raw| parse_credentials(raw).ok() == target.credentials);
    let given = match password_flag {
        // REDISCLI_AUTH's text is a password, as redis-cli reads it.
        Some(raw) if options.whole_password => Some(Credentials {
            user: None,
            password: raw.to_string(),
        }),
        _ => target.credentials.clone(),
    };
    let credentials = credentials(given, options.user.as_deref(), password_flag)?;
    let memcache = options.protocol.is_memcache();
    if memcache && target.uri_db.is_some() {
        return Err(Error::usage(
            "a URI database applies to Redis only: memcached has no numbered databases.",
        ));
    }
    if memcache && options.db.is_some() {
        return Err(Error::usage(
            "-n applies to Redis only: memcached has no numbered databases.",
        ));
    }
    let select_db = match (options.db, target.uri_db) {
        (Some(n), Some(u)) if n != u => {
            return Err(Error::usage(format!(
                "-n {n} and the URI's database {u} disagree: give one."
            )));
        }
        (n, u) => n.or(u),
    };
    if memcache && credentials.as_ref().is_some_and(|c| c.user.is_none()) {
        return Err(Error::usage(
            "memcached authentication needs -a USER:PASSWORD (SASL PLAIN for memcache_binary, \
             memcached -Y for memcache_text).",
        ));
    }
    let mut connect = target.connect(&options.conn)?;
    if let Some(dir) = options.cacertdir.as_deref() {
        // redis-cli's --cacertdir, which the shared connection flags lack: the TLS
        // settings are built again with the directory's CAs trusted beside --cacert's.
        if connect.tls.is_none() {
            return Err(Error::usage(
                "--cacertdir applies to TLS connections: add --tls (or use a rediss:// URI).",
            ));
        }
        let conn = &options.conn;
        let flags = TlsFlags {
            host: &connect.host,
            cert: conn.cert.as_deref(),
            key: conn.key.as_deref(),
            cacert: conn.cacert.as_deref(),
            skip_verify: conn.tls_skip_verify,
            sni: conn.sni.as_deref(),
            protocols: conn.tls_protocols.as_deref(),
            cacertdir: Some(dir),
            cipher_suites: None,
        };
        connect.tls = Some(Arc::new(tls::build(&flags).map_err(Error::usage)?));
    }
    let period = Duration::from_micros(SAMPLE_PERIOD_US);
    let (pacing, think_time) = if options.open_loop {
        let rate = Rate {
            per_sec: 1_000_000 / SAMPLE_PERIOD_US,
            arrival: Arrival::Uniform,
            seed: 0,
            burst: 1,
        };
        (Pacing::PerConnection(rate), None)
    } else {
        (Pacing::Closed, Some(period))
    };
    Ok(Plan {
        server: Server {
            endpoint: connect.endpoint,
            protocol: options.protocol,
            credentials,
            select_db,
            tls: connect.tls,
            cluster_mode: false,
            cluster_routing: ClusterRouting::ByKey,
            setup: Setup::default(),
            pool: None,
            visibility: None,
            address_choice: target.address_choice(),
        },
        load: Load {
            threads: 1,
            clients: 1,
            total_clients: None,
            pipeline: 1,
            run_count: 1,
            // Until the front end has seen enough (or Ctrl-C).
            stop: StopAt::RequestsPerClient(u64::MAX),
            shape: LoadShape {
                connection_timeout: Some(CONNECT_TIMEOUT),
                think_time,
                ..LoadShape::default()
            },
            pacing,
            warmup: Duration::ZERO,
            sweep: None,
            // An error reply is no latency figure: say what the server said and stop.
            error_replies: ErrorReplies::Stop,
            shard: Shard::WHOLE,
            start_at: None,
            busy_poll: options.busy_poll,
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
            seeding: Seeding::default(),
            arbitrary: None,
            template: None,
            probe: true,
            stream: None,
            dataset: DataSet::default(),
        },
        outputs: Outputs {
            samples: Some(sink),
            ..Outputs::default()
        },
        names: &LATENCY_NAMES,
    })
}

/// How many probes a one-shot window (`Mode::Once`) of `--open-loop` counts: the bound
/// the run gets in place of "until the session stops it".
///
/// Probes go out every sample period from the first, which starts the window, and the
/// window closes (by due time) at the first probe due strictly after its length, which it
/// counts: probe `floor(W / period) + 1`, so the run sends probes 0 to that one. Without
/// the bound, a stall that spans the window's end (the process stopped, a VM held off the
/// CPU) left a backlog of later probes that the engine sent, as soon as it ran again,
/// before the session saw the late reply and stopped it: 34 probes the window never
/// counted. The closed loop (the default) has no backlog to send.
pub fn one_window_probes(options: &Options, resolved: &Resolved) -> Option<u64> {
    (options.open_loop && resolved.mode == Mode::Once)
        .then(|| resolved.interval_us / SAMPLE_PERIOD_US + 2)
}

/// `-a` (or the URI's) credentials with `--user` applied: redis-cli's `--user USER -a
/// PASSWORD`, where `-a`'s whole text (`password_flag`, when the credentials are its) is
/// the password, colons and all, as redis-cli takes it.
fn credentials(
    given: Option<Credentials>,
    user: Option<&str>,
    password_flag: Option<&str>,
) -> Result<Option<Credentials>> {
    let Some(user) = user else {
        return Ok(given);
    };
    match (given, password_flag) {
        (None, _) => Err(Error::usage("--user needs a password: add -a PASSWORD.")),
        (Some(_), Some(raw)) => Ok(Some(Credentials {
            user: Some(user.to_string()),
            password: raw.to_string(),
        })),
        (Some(c), None) if c.user.is_some() => Err(Error::usage(
            "--user and a user in the URI name the user twice: give one.",
        )),
        (Some(c), None) => Ok(Some(Credentials {
            user: Some(user.to_string()),
            password: c.password,
        })),
    }
}

#[cfg(test)]
mod tests {
    use super::super::flags::parsed_options;
    use super::*;
    use crate::plan::Endpoint;
    use crate::protocol::Protocol;

    fn plan(args: &[&str]) -> Result<Plan> {
        let (tx, _rx) = crossbeam_channel::unbounded();
        probe_plan(&parsed_options(args), tx)
    }

    #[test]
    fn busy_poll_reaches_the_plan() {
        let p = plan(&["-p", "7000", "--busy-poll", "120"]).expect("plan");
        assert_eq!(p.load.busy_poll, Some(Duration::from_micros(120)));
        let p = plan(&["-p", "7000"]).expect("plan");
        assert_eq!(p.load.busy_poll, None);
    }

    #[test]
    fn one_connection_probing_with_redis_cli_pause() {
        let p = plan(&["-h", "127.0.0.1", "-p", "7000"]).expect("plan");
        assert!(p.workload.probe);
        assert_eq!(
            (p.load.threads, p.total_clients(), p.load.pipeline),
            (1, 1, 1)
        );
        assert_eq!(p.load.pacing, Pacing::Closed);
        assert_eq!(p.load.shape.think_time, Some(Duration::from_millis(10)));
        assert!(p.outputs.samples.is_some());
        assert_eq!(p.server.endpoint.name(), "127.0.0.1:7000");
        assert_eq!(p.row_names().len(), 1);
    }

    #[test]
    fn a_one_shot_open_loop_window_bounds_the_probes() {
        let options = parsed_options;
        // Not a terminal: raw output, one window. 0.3 s at 10 ms: probes 0..=30 are due
        // within it (30 at its end), 31 is the first due after it and closes it.
        let o = options(&["--open-loop", "-i", "0.3", "--raw"]);
        assert_eq!(one_window_probes(&o, &o.resolve(false)), Some(32));
        // 0.305 s: 31 (due at 310 ms) closes it too.
        let o = options(&["--open-loop", "-i", "0.305", "--raw"]);
        assert_eq!(one_window_probes(&o, &o.resolve(false)), Some(32));
        let o = options(&["--open-loop", "-i", "0.31", "--raw"]);
        assert_eq!(one_window_probes(&o, &o.resolve(false)), Some(33));
        // The closed loop, a terminal's live figures and a history of windows: no bound.
        let o = options(&["-i", "0.3", "--raw"]);
        assert_eq!(one_window_probes(&o, &o.resolve(false)), None);
        let o = options(&["--open-loop", "-i", "0.3"]);
        assert_eq!(one_window_probes(&o, &o.resolve(true)), None);
        let o = options(&["--open-loop", "--history", "-i", "1", "--raw"]);
        assert_eq!(one_window_probes(&o, &o.resolve(false)), None);
    }

    #[test]
    fn open_loop_is_a_rate_of_100_per_second() {
        let p = plan(&["--open-loop", "-P", "memcache_text", "-p", "11211"]).expect("plan");
        assert_eq!(p.load.pacing.target_total(1), Some(100));
        assert_eq!(p.load.shape.think_time, None);
        assert_eq!(p.server.protocol, Protocol::MemcacheText);
    }

    #[test]
    fn user_password_uri_and_socket() {
        let p = plan(&["--user", "bob", "-a", "secret"]).expect("plan");
        let c = p.server.credentials.expect("credentials");
        assert_eq!(
            (c.user.as_deref(), c.password.as_str()),
            (Some("bob"), "secret")
        );
        let p = plan(&["-u", "redis://:pw@127.0.0.1:7001/3"]).expect("plan");
        assert_eq!(p.server.select_db, Some(3));
        let p = plan(&["-S", "/tmp/redis.sock"]).expect("plan");
        assert!(matches!(p.server.endpoint, Endpoint::Unix(_)));
        // redis-cli's spellings: -s is the socket, -n the database.
        let p = plan(&["-s", "/tmp/redis.sock", "-n", "5"]).expect("plan");
        assert!(matches!(p.server.endpoint, Endpoint::Unix(_)));
        assert_eq!(p.server.select_db, Some(5));
        let p = plan(&["-u", "redis://127.0.0.1:7001/3", "-n", "3"]).expect("plan");
        assert_eq!(p.server.select_db, Some(3));
    }

    #[test]
    fn with_user_the_whole_of_a_is_the_password() {
        // redis-cli's `--user USER -a PASSWORD`: a colon in the password is the password's.
        let p = plan(&["--user", "bob", "-a", "pa:ss"]).expect("plan");
        let c = p.server.credentials.expect("credentials");
        assert_eq!(
            (c.user.as_deref(), c.password.as_str()),
            (Some("bob"), "pa:ss")
        );
    }

    #[test]
    fn bad_connection_flags_are_usage_errors() {
        for (args, needle) in [
            (&["--user", "bob"][..], "--user needs a password"),
            (
                &["--user", "bob", "-u", "redis://al:pw@127.0.0.1:7001"][..],
                "name the user twice",
            ),
            (&["-p", "0"][..], "port must be"),
            (&["-P", "memcache_binary", "-a", "pw"][..], "USER:PASSWORD"),
            (
                &["-P", "memcache_text", "-n", "1"][..],
                "-n applies to Redis only",
            ),
            (
                &["-u", "redis://127.0.0.1:7001/3", "-n", "4"][..],
                "disagree",
            ),
            (&["--cacert", "x.pem"][..], "add --tls"),
            (&["-h", "no-such-host.invalid"][..], "cannot resolve host"),
        ] {
            let err = plan(args).map(|_| ()).expect_err("refused");
            assert_eq!(err.exit_code(), 1, "{args:?}");
            assert!(err.to_string().contains(needle), "{args:?}: {err}");
        }
    }
}
