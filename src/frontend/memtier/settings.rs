//! memtier's flags validated into the engine's [`Plan`], plus what only memtier's own
//! outputs need (files, `--show-config`, the JSON "configuration" list). Every user
//! error is found here, before anything is sent, in memtier's own words.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use crate::error::{Error, Result};
use crate::frontend::common::busy_poll::parse_busy_poll;
use crate::frontend::common::distributed::{parse_shard, parse_start_at, shard_pacing};
use crate::frontend::common::open_files;
use crate::frontend::memtier::cli::Cli;
use crate::frontend::memtier::outputs::{OutputConfig, parse_outputs};
use crate::frontend::memtier::show_config::shown_options;
use crate::frontend::memtier::{arbitrary, dataset, open_loop, shape};
use crate::plan::workload::Arbitrary;
use crate::plan::{
    AddressChoice, ClusterRouting, Endpoint, ErrorReplies, FlagNames, Load, Outputs, Plan, Refill,
    Seeding, Server, Setup, Shard, StopAt, Workload,
};
use crate::protocol::Protocol;
use crate::workload::keys::{KeyConfig, KeyPattern};
use crate::workload::values::DataSize;

/// memtier's command line, validated: the engine's plan and memtier's own outputs.
#[derive(Clone, Debug)]
pub struct Settings {
    pub plan: Plan,
    pub output: OutputConfig,
    /// Every option with its effective value, in memtier's JSON order, for the JSON
    /// "configuration" object and `--show-config`. Values are already rendered as JSON
    /// literals (`"\"127.0.0.1\""`, `"6379"`, `"null"`, `"\"false\""`).
    pub shown: Vec<(&'static str, String)>,
    /// The host as given (the socket path for a Unix socket), for messages.
    pub host: String,
    /// The port as given (0 for a Unix socket).
    pub port: u16,
}

/// How memtier spells the flags the engine's messages point to.
pub const MEMTIER_NAMES: FlagNames = FlagNames {
    tls: "--tls",
    tls_any: "--tls (or use a rediss:// URI)",
    cacert: "--cacert",
    cert: "--cert",
    key: "--key",
    sni: "--sni",
    tls_skip_verify: "--tls-skip-verify",
    tls_protocols: "--tls-protocols",
    connection_timeout: "--connection-timeout",
    reply_timeout: "--reply-timeout",
    rate: "--rate",
    authenticate: "-a PASSWORD or -a USER:PASSWORD",
    cluster_mode: "--cluster-mode",
};

/// memtier's flag names against memcached, which takes a user and a password only.
pub const MEMTIER_MEMCACHE_NAMES: FlagNames = FlagNames {
    authenticate: "-a USER:PASSWORD",
    ..MEMTIER_NAMES
};

/// memtier's defaults, where a flag is not given.
const DEFAULT_THREADS: u32 = 4;
const DEFAULT_CLIENTS: u32 = 50;
const DEFAULT_REQUESTS: u64 = 10_000;
const DEFAULT_RATIO: (u32, u32) = (1, 10);
const DEFAULT_DATA_SIZE: u32 = 32;
const DEFAULT_KEY_PREFIX: &str = "memtier-";
const DEFAULT_KEY_MIN: u64 = 0;
const DEFAULT_KEY_MAX: u64 = 10_000_000;
const DEFAULT_ZIPF_EXP: f64 = 1.0;

impl Settings {
    /// Validates the parsed command line into the plan and memtier's outputs, refusing
    /// every bad value with one clear [`Error::Usage`] before anything is sent. Resolves
    /// the server's host name and reads the TLS files.
    ///
    /// A URI (`-u`) overrides `-h`, `-p`, `-a` and `--select-db`, with a warning on
    /// stderr when both are given, as memtier does.
    pub fn from_cli(cli: &Cli) -> Result<Settings> {
        // ---- where and how to connect ----
        let protocol = parse_protocol(cli.protocol.as_deref())?;
        let flag_db = cli
            .select_db
            .as_deref()
            .map(|d| {
                d.parse::<u32>()
                    .map_err(|_| usage("select-db must be greater or equal zero."))
            })
            .transpose()?;
        let target = cli.conn.target()?;
        if cli.conn.uri.is_some() && cli.select_db.is_some() && target.uri_db.is_some() {
            eprintln_safe!("warning: both URI and --select-db specified, URI takes precedence.");
        }
        let credentials = target.credentials.clone();
        // memtier selects a database only when it is not 0, the one every connection
        // starts in: `--select-db=0` (or a URI's `/0`) sends no SELECT, and memcached,
        // which has no databases, refuses only a non-zero one.
        let select_db = target.uri_db.or(flag_db).filter(|&db| db != 0);
        let memcache = protocol.is_memcache();
        if memcache && select_db.is_some() {
            return Err(usage(
                "--select-db applies to Redis only: memcached has no numbered databases.",
            ));
        }
        if memcache && credentials.as_ref().is_some_and(|c| c.user.is_none()) {
            return Err(usage(
                "memcached authentication needs -a USER:PASSWORD (SASL PLAIN for memcache_binary, \
                 memcached -Y for memcache_text).",
            ));
        }
        // The host resolved and the TLS files read and checked, before any connection.
        let pool = cli.pool.pool(&cli.conn, &target)?.map(Arc::new);
        let first_member = pool.as_ref().and_then(|p| p.members.first());
        let connect = match first_member.map(|m| &m.endpoint) {
            // A pool: messages, TLS names and the "configuration" list take the first
            // member's host (each member is reached at its own address).
            Some(Endpoint::Tcp { host, addr }) => {
                let mut conn = cli.conn.clone();
                conn.host = vec![host.clone()];
                let mut connect = target.connect(&conn)?;
                connect.endpoint = Endpoint::Tcp {
                    host: host.clone(),
                    addr: *addr,
                };
                connect.port = addr.port();
                connect
            }
            _ => target.connect(&cli.conn)?,
        };
        let visibility = cli.visibility.probe(&target)?;
        let members =
            pool.as_ref().map_or(1, |p| p.members.len() as u64) + u64::from(visibility.is_some());

        // ---- how much load ----
        let threads = positive_u32(
            cli.threads.as_deref(),
            DEFAULT_THREADS,
            "threads must be greater than zero.",
        )?;
        let clients = positive_u32(
            cli.clients.as_deref(),
            DEFAULT_CLIENTS,
            "clients must be greater than zero.",
        )?;
        if threads > MAX_THREADS {
            return Err(usage(format!("threads must be at most {MAX_THREADS}.")));
        }
        // Every connection needs an open file: a count no limit allows is refused here,
        // before a client is built for it (cluster mode multiplies it by the masters,
        // which are only known once the run asks; the engine reports running out then).
        let per_connection = if connect.tls.is_some() { 2 } else { 1 };
        let connections = u64::from(threads) * u64::from(clients) * members;
        open_files::ensure(
            open_files::needed(connections, u64::from(threads), per_connection),
            &format!("--threads={threads} x --clients={clients}"),
        )?;
        let pipeline = positive_u32(
            cli.pipeline.as_deref(),
            1,
            "pipeline must be greater than zero.",
        )?;
        if pipeline > MAX_PIPELINE {
            return Err(usage(format!(
                "pipeline must be at most {MAX_PIPELINE} requests in flight per connection."
            )));
        }
        let run_count = positive_u32(
            cli.run_count.as_deref(),
            1,
            "run count must be greater than zero.",
        )?;
        let mut stop = parse_stop(cli.requests.as_deref(), cli.test_time.as_deref())?;
        let shard = cli.shard.as_deref().map_or(Ok(Shard::WHOLE), parse_shard)?;
        // Clients of all shards are numbered together; the numbers must be countable.
        if (threads as usize)
            .checked_mul(clients as usize)
            .and_then(|c| c.checked_mul(shard.count as usize))
            .is_none()
        {
            return Err(usage(
                "--shard: threads × clients × shards is too many clients to number.",
            ));
        }
        let start_at = cli
            .start_at
            .as_deref()
            .map(|raw| parse_start_at(raw, SystemTime::now()))
            .transpose()?;
        let busy_poll = match cli.busy_poll.as_deref() {
            Some(raw) => parse_busy_poll(raw, "--busy-poll").map_err(usage)?,
            None => None,
        };
        let ratio = match cli.ratio.as_deref() {
            None => DEFAULT_RATIO,
            Some(raw) => match parse_pair(raw, ':') {
                Some((a, b)) if a > 0 || b > 0 => (a, b),
                _ => return Err(usage("ratio must be expressed as [0-n]:[0-n].")),
            },
        };

        // ---- keys ----
        let key_min = match cli.key_minimum.as_deref() {
            None => DEFAULT_KEY_MIN,
            Some(raw) => raw.parse::<u64>().map_err(|_| match all_digits(raw) {
                true => usage(format!("key-minimum must be below {}.", u64::MAX)),
                false => usage("key-minimum must be zero or greater."),
            })?,
        };
        let key_max = match cli.key_maximum.as_deref() {
            None => DEFAULT_KEY_MAX,
            Some(raw) => match raw.parse::<u64>() {
                Ok(n) if n > 0 => n,
                Err(_) if all_digits(raw) => {
                    return Err(usage(format!("key-maximum must be below {}.", u64::MAX)));
                }
                _ => return Err(usage("key-maximum must be greater than zero.")),
            },
        };
        if key_max < key_min {
            return Err(usage(format!(
                "key-maximum ({key_max}) must be greater than or equal to key-minimum ({key_min})."
            )));
        }
        if key_max == u64::MAX {
            // key_max - key_min + 1 keys must be countable.
            return Err(usage(format!("key-maximum must be below {}.", u64::MAX)));
        }
        let (set_pattern, get_pattern, pattern_text) =
            parse_key_pattern(cli.key_pattern.as_deref())?;
        let given_stddev = parse_float(
            cli.key_stddev.as_deref(),
            |x| x > 0.0,
            "key-stddev must be greater than zero.",
        )?;
        let given_median = parse_float(
            cli.key_median.as_deref(),
            |x| x >= 0.0,
            "key-median must be zero or greater.",
        )?;
        let given_zipf = parse_float(
            cli.key_zipf_exp.as_deref(),
            |x| x > 0.0 && x < 5.0,
            "key-zipf-exp must be within interval (0, 5).",
        )?;
        let spread = (key_max - key_min) as f64;
        let mut keys = KeyConfig {
            prefix: cli
                .key_prefix
                .clone()
                .unwrap_or_else(|| DEFAULT_KEY_PREFIX.to_string()),
            min: key_min,
            max: key_max,
            set_pattern,
            get_pattern,
            stddev: given_stddev.unwrap_or(spread / 6.0),
            median: given_median.unwrap_or(key_min as f64 + spread / 2.0),
            zipf_exp: given_zipf.unwrap_or(DEFAULT_ZIPF_EXP),
        };
        if memcache && let Some(problem) = keys.memcache_problem(protocol == Protocol::MemcacheText)
        {
            return Err(usage(problem));
        }

        // ---- values ----
        let data_size = parse_data_size(cli)?;
        let output = parse_outputs(cli)?;

        let dataset = dataset::from_cli(cli, &mut keys, &data_size, protocol)?;
        let shape = shape::from_cli(cli, clients as usize, memcache)?;
        let open = open_loop::from_cli(cli)?;
        if let Some(sweep) = open.sweep {
            // Each step is a timed run.
            stop = StopAt::Time(sweep.step_duration);
        }
        let arbitrary = arbitrary::from_cli(cli, protocol, pipeline as usize)?;
        if arbitrary.is_some() && (dataset.import.is_some() || dataset.verifier.is_some()) {
            // They would be silently ignored: the commands write keys and values of
            // their own, and the verifier would find none of kvbench's writes.
            return Err(Error::usage(
                "--data-import, --data-verify and --verify-only apply to kvbench's own SETs \
                 and GETs, not to --command: drop one or the other",
            ));
        }
        check_gaussian_flags(&keys, given_stddev, given_median, arbitrary.as_deref())?;
        let plan = Plan {
            server: Server {
                endpoint: connect.endpoint,
                protocol,
                credentials,
                select_db,
                tls: connect.tls,
                cluster_mode: cli.cluster_mode,
                cluster_routing: ClusterRouting::ByKey,
                setup: Setup::default(),
                pool,
                visibility,
                // memtier connects to a cluster's nodes by getaddrinfo's first address
                // (AF_UNSPEC), -4 / -6 or not.
                address_choice: AddressChoice::AsResolved,
            },
            load: Load {
                threads: threads as usize,
                clients: clients as usize,
                pipeline: pipeline as usize,
                total_clients: None,
                run_count,
                stop,
                shape,
                pacing: open.pacing,
                warmup: open.warmup,
                sweep: open.sweep,
                error_replies: ErrorReplies::Count,
                shard,
                start_at,
                busy_poll,
            },
            workload: Workload {
                ratio,
                keys,
                data_size,
                random_data: cli.random_data,
                seeding: Seeding {
                    distinct_per_client: cli.distinct_client_seed,
                    randomize: cli.randomize,
                    base: None,
                    by_request_index: false,
                },
                arbitrary,
                template: None,
                probe: false,
                stream: None,
                dataset,
            },
            outputs: Outputs {
                percentiles: output.print_percentiles.clone(),
                client_series: output.client_stats.is_some(),
                progress_every: None,
                samples: None,
                reply_sizes: false,
            },
            names: if memcache {
                &MEMTIER_MEMCACHE_NAMES
            } else {
                &MEMTIER_NAMES
            },
        };
        check_cluster_mode(&plan)?;
        check_pool(&plan)?;
        check_visibility(&plan)?;
        let shown = shown_options(
            &plan,
            &output,
            connect.port,
            cli,
            target.family,
            &pattern_text,
            [given_stddev, given_median, given_zipf],
        );
        // The configuration shows the rates as given (the whole workload's); the plan
        // holds this shard's.
        let mut plan = plan;
        plan.load.pacing = shard_pacing(plan.load.pacing, plan.load.sweep.as_ref(), shard)?;
        Ok(Settings {
            plan,
            output,
            shown,
            host: connect.host,
            port: connect.port,
        })
    }
}

/// What `--visibility-from` cannot be combined with: tracked writes carry a stamp at
/// the start of their value, so values must hold it and nothing else may check them.
fn check_visibility(plan: &Plan) -> Result<()> {
    if plan.server.visibility.is_none() {
        return Ok(());
    }
    let refuse = |what: &str| {
        Err(usage(format!(
            "--visibility-from cannot be used with {what}."
        )))
    };
    if plan.server.cluster_mode || plan.server.pool.is_some() {
        return refuse("--cluster-mode or a pool of servers (one primary, one other endpoint)");
    }
    let dataset = &plan.workload.dataset;
    if dataset.import.is_some() || dataset.verifier.is_some() {
        return refuse("--data-import or --data-verify (tracked values carry a stamp)");
    }
    if plan.load.shape.data_offset > 0 {
        return refuse("--data-offset");
    }
    if plan.workload.arbitrary.is_some() {
        return refuse("--command (it tracks kvbench's own SETs)");
    }
    let (smallest, flag) = match &plan.workload.data_size {
        DataSize::Fixed(n) => (*n, "--data-size"),
        DataSize::Range { min, .. } => (*min, "--data-size-range's minimum"),
        DataSize::List(sizes) => (
            sizes.iter().map(|(n, _)| *n).min().unwrap_or(0),
            "--data-size-list's smallest size",
        ),
    };
    if smallest < crate::plan::visibility::STAMP_LEN {
        return Err(usage(format!(
            "--visibility-from needs values of at least {} bytes (they carry a stamp): raise {flag}.",
            crate::plan::visibility::STAMP_LEN
        )));
    }
    Ok(())
}

/// What a pool of servers cannot be combined with.
fn check_pool(plan: &Plan) -> Result<()> {
    if plan.server.pool.is_none() {
        return Ok(());
    }
    let refuse = |what: &str| {
        Err(usage(format!(
            "a pool of servers cannot be used with {what}."
        )))
    };
    if plan.server.cluster_mode {
        return refuse("--cluster-mode (a cluster routes by its own slot map)");
    }
    if plan.load.shape.refill == Refill::WholeBatch {
        return refuse("--refill=batch (a client's batch would span several servers)");
    }
    if plan.load.shape.multi_key_get > 1 {
        return refuse("--multi-key-get (the keys of one multi-get may live on different servers)");
    }
    if plan.load.shape.wait.is_some() {
        return refuse("--wait-ratio");
    }
    Ok(())
}

/// Whether `prefix` holds a Redis Cluster hash tag (`{...}`, non-empty), so every key
/// made from it hashes to one slot.
fn has_hash_tag(prefix: &str) -> bool {
    prefix
        .split_once('{')
        .and_then(|(_, rest)| rest.find('}'))
        .is_some_and(|len| len > 0)
}

/// What `--cluster-mode` cannot be combined with, as in memtier.
fn check_cluster_mode(plan: &Plan) -> Result<()> {
    if !plan.server.cluster_mode {
        return Ok(());
    }
    let refuse = |what: &str| Err(usage(format!("--cluster-mode cannot be used with {what}.")));
    if plan.server.protocol.is_memcache() {
        return refuse("the memcache protocols");
    }
    if matches!(plan.server.endpoint, Endpoint::Unix(_)) {
        return refuse("--unix-socket (cluster nodes are reached over TCP)");
    }
    if plan.load.shape.multi_key_get > 1 && !has_hash_tag(&plan.workload.keys.prefix) {
        return refuse(
            "--multi-key-get unless --key-prefix holds a {hash tag} (the keys of one MGET may live on different masters)",
        );
    }
    if plan.load.shape.wait.is_some() {
        return refuse("--wait-ratio");
    }
    if plan.server.select_db.is_some_and(|db| db != 0) {
        return refuse("--select-db (cluster nodes have only database 0)");
    }
    if plan.load.shape.refill == Refill::WholeBatch {
        return refuse("--refill=batch (a client's batch would span several masters)");
    }
    if plan.load.shape.reconnect_interval.is_some() {
        return refuse("--reconnect-interval");
    }
    Ok(())
}

/// Most requests in flight per connection: beyond it the per-connection queues alone
/// would take gigabytes.
const MAX_PIPELINE: u32 = 65_536;
/// Most worker threads: one per core is the useful most, and no machine has this many.
const MAX_THREADS: u32 = 1024;
/// Largest value: the largest bulk string Redis accepts (its `proto-max-bulk-len` at most),
/// and the largest the RESP decoder reads back. Values are cut from one buffer this big.
const MAX_DATA_SIZE: u32 = crate::protocol::resp::MAX_BULK_LEN as u32;
/// Longest `--test-time`: a year (larger values overflow clock arithmetic).
const MAX_TEST_TIME_SECS: u64 = 365 * 86_400;

fn usage(msg: impl Into<String>) -> Error {
    Error::usage(msg)
}

fn parse_protocol(raw: Option<&str>) -> Result<Protocol> {
    match raw {
        None => Ok(Protocol::Redis),
        Some(name) => Protocol::from_name(name).ok_or_else(|| {
            usage(
                "supported protocols are 'memcache_text', 'memcache_binary', 'redis', 'resp2' and 'resp3'.",
            )
        }),
    }
}

fn positive_u32(raw: Option<&str>, default: u32, msg: &str) -> Result<u32> {
    match raw {
        None => Ok(default),
        Some(raw) => match raw.parse::<u32>() {
            Ok(n) if n > 0 => Ok(n),
            _ => Err(usage(msg)),
        },
    }
}

fn parse_stop(requests: Option<&str>, test_time: Option<&str>) -> Result<StopAt> {
    let stop = match (requests, test_time) {
        (Some(_), Some(_)) => {
            return Err(usage("--test-time and --requests are mutually exclusive."));
        }
        (Some("allkeys"), None) => StopAt::AllKeys,
        (Some(n), None) => match n.parse::<u64>() {
            Ok(n) if n > 0 => StopAt::RequestsPerClient(n),
            _ => return Err(usage("requests must be greater than zero.")),
        },
        (None, Some(t)) => match t.parse::<u64>() {
            Ok(t) if t > MAX_TEST_TIME_SECS => {
                return Err(usage(format!(
                    "test time must be at most {MAX_TEST_TIME_SECS} seconds (a year)."
                )));
            }
            Ok(t) if t > 0 => StopAt::Time(Duration::from_secs(t)),
            _ => return Err(usage("test time must be greater than zero.")),
        },
        (None, None) => StopAt::RequestsPerClient(DEFAULT_REQUESTS),
    };
    Ok(stop)
}

/// `A<sep>B` with two unsigned numbers (ratios `1:10`, ranges `4096-65536`).
fn parse_pair(raw: &str, sep: char) -> Option<(u32, u32)> {
    let (a, b) = raw.split_once(sep)?;
    if !all_digits(a) || !all_digits(b) {
        return None;
    }
    Some((a.parse().ok()?, b.parse().ok()?))
}

/// memtier's rules for the Gaussian pattern's flags, so that a typo cannot turn the run
/// into another workload unnoticed: `--key-stddev` and `--key-median` only with a `G`
/// pattern (of SETs, GETs or a `--command`), and a given median inside the key range
/// (outside it every key piles up at one end of the range).
fn check_gaussian_flags(
    keys: &KeyConfig,
    given_stddev: Option<f64>,
    given_median: Option<f64>,
    arbitrary: Option<&Arbitrary>,
) -> Result<()> {
    let gaussian = [keys.set_pattern, keys.get_pattern].contains(&KeyPattern::Gaussian)
        || arbitrary.is_some_and(|a| {
            a.list
                .commands
                .iter()
                .any(|c| c.key_pattern == KeyPattern::Gaussian)
        });
    if !gaussian && (given_stddev.is_some() || given_median.is_some()) {
        return Err(usage(
            "key-stddev and key-median are only allowed together with key-pattern set to G.",
        ));
    }
    if given_median.is_some_and(|m| m < keys.min as f64 || m > keys.max as f64) {
        return Err(usage(
            "key-median must be between key-minimum and key-maximum.",
        ));
    }
    Ok(())
}

/// `--key-pattern=X:Y`; returns the SET and GET patterns and the text memtier shows.
fn parse_key_pattern(raw: Option<&str>) -> Result<(KeyPattern, KeyPattern, String)> {
    let raw = raw.unwrap_or("R:R");
    let bad = || usage("key-pattern must be in the format of [S/R/G/P/Z]:[S/R/G/P/Z].");
    let chars: Vec<char> = raw.chars().collect();
    let [set, ':', get] = chars[..] else {
        return Err(bad());
    };
    let (Some(set_p), Some(get_p)) = (KeyPattern::from_letter(set), KeyPattern::from_letter(get))
    else {
        return Err(bad());
    };
    // Parallel splits the key range between clients; SETs and GETs must agree on it.
    if (set == 'P' || get == 'P') && set != get {
        return Err(usage(
            "parallel key-pattern must be configured for both SET and GET commands.",
        ));
    }
    Ok((set_p, get_p, raw.to_string()))
}

fn parse_float(raw: Option<&str>, ok: impl Fn(f64) -> bool, msg: &str) -> Result<Option<f64>> {
    match raw {
        None => Ok(None),
        Some(raw) => match raw.parse::<f64>() {
            Ok(x) if x.is_finite() && ok(x) => Ok(Some(x)),
            _ => Err(usage(msg)),
        },
    }
}

fn parse_data_size(cli: &Cli) -> Result<DataSize> {
    let given: Vec<&str> = [
        (cli.data_size.is_some(), "--data-size"),
        (cli.data_size_range.is_some(), "--data-size-range"),
        (cli.data_size_list.is_some(), "--data-size-list"),
    ]
    .into_iter()
    .filter_map(|(g, name)| g.then_some(name))
    .collect();
    if given.len() > 1 {
        return Err(usage(format!(
            "{} cannot be used together: choose one way to size values.",
            given.join(" and ")
        )));
    }
    let spread_over_keys = match cli.data_size_pattern.as_deref() {
        None | Some("R") => false,
        Some("S") => true,
        Some(_) => return Err(usage("data-size-pattern must be either R or S.")),
    };
    if spread_over_keys && cli.data_size_range.is_none() {
        return Err(usage("--data-size-pattern=S needs --data-size-range."));
    }
    if let Some(raw) = cli.data_size_range.as_deref() {
        let bad = || usage("data-size-range must be expressed as [1-n]-[1-n].");
        let (min, max) = parse_pair(raw, '-').ok_or_else(bad)?;
        if min < 1 {
            return Err(bad());
        }
        if min > max {
            return Err(usage(format!(
                "data-size-range minimum ({min}) must not be greater than its maximum ({max})."
            )));
        }
        if max > MAX_DATA_SIZE {
            return Err(usage(format!(
                "data-size-range maximum ({max}) must be at most {MAX_DATA_SIZE} bytes (512 MB, \
                 the largest value Redis accepts)."
            )));
        }
        return Ok(DataSize::Range {
            min: min as usize,
            max: max as usize,
            spread_over_keys,
        });
    }
    if let Some(raw) = cli.data_size_list.as_deref() {
        let bad =
            || usage("data-size-list must be expressed as [size1:weight1],...[sizeN:weightN].");
        let mut list = Vec::new();
        for item in raw.split(',') {
            let (size, weight) = parse_pair(item, ':').ok_or_else(bad)?;
            if size < 1 || weight < 1 {
                return Err(usage(format!(
                    "data-size-list item '{item}': size and weight must both be greater than zero."
                )));
            }
            if size > MAX_DATA_SIZE {
                return Err(usage(format!(
                    "data-size-list item '{item}': size must be at most {MAX_DATA_SIZE} bytes \
                     (512 MB, the largest value Redis accepts)."
                )));
            }
            list.push((size as usize, weight));
        }
        return Ok(DataSize::List(list));
    }
    let size = positive_u32(
        cli.data_size.as_deref(),
        DEFAULT_DATA_SIZE,
        "data-size must be greater than zero.",
    )?;
    if size > MAX_DATA_SIZE {
        return Err(usage(format!(
            "data-size must be at most {MAX_DATA_SIZE} bytes (512 MB, the largest value Redis accepts)."
        )));
    }
    Ok(DataSize::Fixed(size as usize))
}

/// Whether `raw` is a non-empty run of decimal digits (an unsigned number; one that did
/// not parse as u64 is then too large, not a negative or a word).
fn all_digits(raw: &str) -> bool {
    !raw.is_empty() && raw.bytes().all(|b| b.is_ascii_digit())
}
