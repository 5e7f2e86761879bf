//! The validated, typed run configuration: every user error is caught while building it.
//!
//! `Config` is built once from the parsed command line (`cli::Cli`) by
//! [`Config::from_cli`] and then shared read-only (in an `Arc`) by the runner and
//! every worker. A `Config` cannot hold a bad value: ranges are ordered, ratios
//! parse, addresses resolve.

use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::time::Duration;

use crate::arbitrary::Arbitrary;
use crate::dataset::DataSet;
pub use crate::shape::LoadShape;
use std::sync::Arc;

use crate::cli::Cli;
use crate::engine::tls::{TlsFlags, TlsSettings};
use crate::error::{Error, Result};
pub use crate::protocol::{Credentials, Protocol};
pub use crate::sinks::statsd::StatsdConfig;
pub use crate::workload::keys::{KeyConfig, KeyPattern};
pub use crate::workload::values::DataSize;

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

/// When a run stops.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum StopAt {
    /// `-n N`: each client sends exactly N requests.
    RequestsPerClient(u64),
    /// `-n allkeys`: one pass over the key range shared by all clients
    /// (`key_max - key_min + 1` requests in all, split as evenly as possible).
    AllKeys,
    /// `--test-time=SECS`.
    Time(Duration),
}

/// Output files and report options.
#[derive(Clone, Debug, Default)]
pub struct OutputConfig {
    pub out_file: Option<PathBuf>,
    pub json_out_file: Option<PathBuf>,
    pub hdr_file_prefix: Option<String>,
    pub show_config: bool,
    pub hide_histogram: bool,
    /// Percentiles for the table, JSON and time series, e.g. `[50.0, 99.0, 99.9]`.
    pub print_percentiles: Vec<f64>,
    pub print_all_runs: bool,
    /// `--statsd-host` and its companions; `None` when no StatsD host is given.
    pub statsd: Option<StatsdConfig>,
    /// `--client-stats=PREFIX`: one CSV file per client, `PREFIX-<run>-<thread>-<client>.csv`.
    pub client_stats: Option<String>,
    /// `-D/--debug` level: how many times the flag was given (0 = off).
    pub debug: u8,
}

/// The whole validated configuration of a benchmark.
#[derive(Clone, Debug)]
pub struct Config {
    pub endpoint: Endpoint,
    /// The host and port as given, for messages and the JSON "configuration".
    pub host: String,
    pub port: u16,
    pub protocol: Protocol,
    pub credentials: Option<Credentials>,
    /// `--select-db`, sent as SELECT after connecting (Redis only); `None` when not given.
    pub select_db: Option<u32>,
    pub threads: usize,
    pub clients: usize,
    pub stop: StopAt,
    pub run_count: u32,
    pub pipeline: usize,
    /// SET:GET ratio, e.g. `(1, 10)`; never `(0, 0)`.
    pub ratio: (u32, u32),
    pub keys: KeyConfig,
    pub data_size: DataSize,
    pub random_data: bool,
    pub distinct_client_seed: bool,
    pub randomize: bool,
    pub debug: bool,
    pub output: OutputConfig,
    /// TLS for every connection (`--tls` or a `rediss://` URI): the rustls configuration,
    /// built once from the PEM files, and the server name; `None` for plaintext.
    pub tls: Option<Arc<TlsSettings>>,
    /// Pacing, reconnects, ramp-up, WAIT, expiry, multi-key gets, data offset.
    pub shape: LoadShape,
    /// `--command` workload, replacing SET/GET when given.
    pub arbitrary: Option<Arc<Arbitrary>>,
    /// Imported values and data verification.
    pub dataset: DataSet,
    /// `--cluster-mode`: route each key to the master that owns its slot.
    pub cluster_mode: bool,
    /// Every option with its effective value, in memtier's JSON order, for the JSON
    /// "configuration" object and `--show-config`. Values are already rendered as JSON
    /// literals (`"\"127.0.0.1\""`, `"6379"`, `"null"`, `"\"false\""`).
    pub shown: Vec<(&'static str, String)>,
}

impl Config {
    /// Total number of connections.
    pub fn total_clients(&self) -> usize {
        self.threads * self.clients
    }

    /// Number of keys in `[key_min, key_max]`.
    pub fn key_range(&self) -> u64 {
        self.keys.range_len()
    }
}

/// A flag that parses but whose feature is not built yet. Given on the command line (or
/// in a `--config` file) it is refused with `<flag> is not supported yet`, never ignored.
pub struct NotYet {
    /// The `Cli` field (clap id) of the flag, so `--help` can mark it; `None` when only
    /// some values of the flag are refused (e.g. `-P memcache_text`).
    pub id: Option<&'static str>,
    /// How the error message names what was asked for.
    pub flag: &'static str,
    /// Whether the command line asked for it.
    pub given: fn(&Cli) -> bool,
}

/// Everything kvbench parses but cannot do yet. Remove an entry when its feature lands
/// (and teach [`Config::from_cli`] to validate and store it).
pub const NOT_SUPPORTED_YET: &[NotYet] = &[];

/// memtier's defaults, where a flag is not given.
const DEFAULT_HOST: &str = "localhost";
const DEFAULT_PORT: u16 = 6379;
const DEFAULT_THREADS: u32 = 4;
const DEFAULT_CLIENTS: u32 = 50;
const DEFAULT_REQUESTS: u64 = 10_000;
const DEFAULT_RATIO: (u32, u32) = (1, 10);
const DEFAULT_DATA_SIZE: u32 = 32;
const DEFAULT_KEY_PREFIX: &str = "memtier-";
const DEFAULT_KEY_MIN: u64 = 0;
const DEFAULT_KEY_MAX: u64 = 10_000_000;
const DEFAULT_ZIPF_EXP: f64 = 1.0;
const DEFAULT_PERCENTILES: [f64; 3] = [50.0, 99.0, 99.9];

/// Which address families `-4` / `-6` allow when resolving the host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Family {
    Any,
    V4,
    V6,
}

impl Family {
    fn allows(self, addr: &SocketAddr) -> bool {
        match self {
            Family::Any => true,
            Family::V4 => addr.is_ipv4(),
            Family::V6 => addr.is_ipv6(),
        }
    }

    /// The name memtier prints in its "address family" option.
    fn memtier_name(self) -> &'static str {
        match self {
            Family::Any => "Unspecified",
            Family::V4 => "AF_INET",
            Family::V6 => "AF_INET6",
        }
    }
}

/// What a `redis://` URI sets; `None` parts leave the flags' values in place.
#[derive(Debug, Default, PartialEq)]
struct UriParts {
    host: Option<String>,
    port: Option<u16>,
    credentials: Option<Credentials>,
    db: Option<u32>,
    /// The `rediss://` scheme: TLS, as `--tls`.
    tls: bool,
}

impl Config {
    /// Validate the parsed command line into a `Config`, refusing every bad value (and
    /// every flag whose feature is not built yet, see [`NOT_SUPPORTED_YET`]) with one
    /// clear [`Error::Usage`] before anything is sent. Resolves the server's host name.
    ///
    /// A URI (`-u`) overrides `-h`, `-p`, `-a` and `--select-db`, with a warning on
    /// stderr when both are given, as memtier does.
    pub fn from_cli(cli: &Cli) -> Result<Config> {
        if let Some(not_yet) = NOT_SUPPORTED_YET.iter().find(|n| (n.given)(cli)) {
            return Err(Error::usage(format!(
                "{} is not supported yet",
                not_yet.flag
            )));
        }

        // ---- where and how to connect ----
        let protocol = parse_protocol(cli.protocol.as_deref())?;
        let family = if cli.ipv6 {
            Family::V6
        } else if cli.ipv4 {
            Family::V4
        } else {
            Family::Any
        };
        let flag_port = cli
            .port
            .as_deref()
            .map(|p| {
                parse_port(p).ok_or_else(|| usage("port must be a number in the range [1-65535]."))
            })
            .transpose()?;
        let flag_credentials = cli
            .authenticate
            .as_deref()
            .map(parse_credentials)
            .transpose()?;
        let flag_db = cli
            .select_db
            .as_deref()
            .map(|d| {
                d.parse::<u32>()
                    .map_err(|_| usage("select-db must be greater or equal zero."))
            })
            .transpose()?;
        let uri = cli
            .uri
            .as_deref()
            .map(parse_uri)
            .transpose()?
            .unwrap_or_default();
        if cli.uri.is_some() {
            warn_uri_precedence(cli, &uri);
        }
        let credentials = uri.credentials.clone().or(flag_credentials);
        let select_db = uri.db.or(flag_db);
        let memcache = matches!(protocol, Protocol::MemcacheText | Protocol::MemcacheBinary);
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

        let (endpoint, host, port) = match cli.unix_socket.as_deref() {
            Some(path) => {
                if cli.host.is_some() || cli.uri.is_some() {
                    return Err(usage(
                        "--unix-socket cannot be combined with --host/--server or --uri: choose one server.",
                    ));
                }
                if path.is_empty() {
                    return Err(usage("unix-socket needs a socket path."));
                }
                // No host or port for a Unix socket: `host` carries the path for messages.
                (Endpoint::Unix(PathBuf::from(path)), path.to_string(), 0)
            }
            None => {
                let host = uri
                    .host
                    .clone()
                    .or_else(|| cli.host.clone())
                    .unwrap_or_else(|| DEFAULT_HOST.to_string());
                let port = uri.port.or(flag_port).unwrap_or(DEFAULT_PORT);
                let addr = resolve(&host, port, family)?;
                (
                    Endpoint::Tcp {
                        host: host.clone(),
                        addr,
                    },
                    host,
                    port,
                )
            }
        };

        // ---- TLS: files are read and checked now, before any connection ----
        let tls = tls_settings(cli, &endpoint, uri.tls)?;

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
        let stop = parse_stop(cli.requests.as_deref(), cli.test_time.as_deref())?;
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
            Some(raw) => raw
                .parse::<u64>()
                .map_err(|_| usage("key-minimum must be zero or greater."))?,
        };
        let key_max = match cli.key_maximum.as_deref() {
            None => DEFAULT_KEY_MAX,
            Some(raw) => match raw.parse::<u64>() {
                Ok(n) if n > 0 => n,
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

        // ---- values ----
        let data_size = parse_data_size(cli)?;
        let output = OutputConfig {
            out_file: non_empty_path(cli.out_file.as_deref(), "--out-file")?,
            json_out_file: non_empty_path(cli.json_out_file.as_deref(), "--json-out-file")?,
            hdr_file_prefix: non_empty_path(cli.hdr_file_prefix.as_deref(), "--hdr-file-prefix")?
                .map(|p| p.to_string_lossy().into_owned()),
            show_config: cli.show_config,
            hide_histogram: cli.hide_histogram,
            print_percentiles: parse_percentiles(cli.print_percentiles.as_deref())?,
            print_all_runs: cli.print_all_runs,
            statsd: parse_statsd(cli)?,
            client_stats: parse_client_stats(cli.client_stats.as_deref())?,
            debug: cli.debug,
        };

        let dataset = DataSet::from_cli(cli, &mut keys, &data_size, protocol)?;
        let mut config = Config {
            endpoint,
            host,
            port,
            protocol,
            credentials,
            select_db,
            threads: threads as usize,
            clients: clients as usize,
            stop,
            run_count,
            pipeline: pipeline as usize,
            ratio,
            keys,
            data_size,
            random_data: cli.random_data,
            distinct_client_seed: cli.distinct_client_seed,
            randomize: cli.randomize,
            debug: cli.debug > 0,
            output,
            tls,
            shape: LoadShape::from_cli(cli, clients as usize, memcache)?,
            arbitrary: Arbitrary::from_cli(cli, protocol, pipeline as usize)?,
            dataset,
            cluster_mode: cli.cluster_mode,
            shown: Vec::new(),
        };
        check_cluster_mode(&config)?;
        config.shown = shown_options(
            &config,
            cli,
            family,
            &pattern_text,
            [given_stddev, given_median, given_zipf],
        );
        Ok(config)
    }
}

/// What `--cluster-mode` cannot be combined with, as in memtier.
fn check_cluster_mode(config: &Config) -> Result<()> {
    if !config.cluster_mode {
        return Ok(());
    }
    let refuse = |what: &str| Err(usage(format!("--cluster-mode cannot be used with {what}.")));
    if matches!(
        config.protocol,
        Protocol::MemcacheText | Protocol::MemcacheBinary
    ) {
        return refuse("the memcache protocols");
    }
    if matches!(config.endpoint, Endpoint::Unix(_)) {
        return refuse("--unix-socket (cluster nodes are reached over TCP)");
    }
    if config.shape.multi_key_get > 1 {
        return refuse("--multi-key-get (the keys of one MGET may live on different masters)");
    }
    if config.shape.wait.is_some() {
        return refuse("--wait-ratio");
    }
    if config.select_db.is_some_and(|db| db != 0) {
        return refuse("--select-db (cluster nodes have only database 0)");
    }
    if config.shape.reconnect_interval.is_some() {
        return refuse("--reconnect-interval");
    }
    Ok(())
}

/// Most requests in flight per connection: beyond it the per-connection queues alone
/// would take gigabytes.
const MAX_PIPELINE: u32 = 65_536;
/// Longest `--test-time`: a year (larger values overflow clock arithmetic).
const MAX_TEST_TIME_SECS: u64 = 365 * 86_400;

fn usage(msg: impl Into<String>) -> Error {
    Error::usage(msg)
}

/// `--tls` (or `rediss://`) with its options, validated and built into the one rustls
/// configuration all connections share. TLS options without TLS are refused, not ignored.
fn tls_settings(
    cli: &Cli,
    endpoint: &Endpoint,
    from_uri: bool,
) -> Result<Option<Arc<TlsSettings>>> {
    if !cli.tls && !from_uri {
        let given = [
            (cli.cert.is_some(), "--cert"),
            (cli.key.is_some(), "--key"),
            (cli.cacert.is_some(), "--cacert"),
            (cli.tls_skip_verify, "--tls-skip-verify"),
            (cli.sni.is_some(), "--sni"),
            (cli.tls_protocols.is_some(), "--tls-protocols"),
        ];
        if let Some((_, flag)) = given.iter().find(|(given, _)| *given) {
            return Err(usage(format!(
                "{flag} applies to TLS connections: add --tls (or use a rediss:// URI)."
            )));
        }
        return Ok(None);
    }
    let Endpoint::Tcp { host, .. } = endpoint else {
        return Err(usage(
            "--tls works over TCP only: it cannot be combined with --unix-socket.",
        ));
    };
    let flags = TlsFlags {
        host,
        cert: cli.cert.as_deref(),
        key: cli.key.as_deref(),
        cacert: cli.cacert.as_deref(),
        skip_verify: cli.tls_skip_verify,
        sni: cli.sni.as_deref(),
        protocols: cli.tls_protocols.as_deref(),
    };
    TlsSettings::build(&flags)
        .map(|settings| Some(Arc::new(settings)))
        .map_err(usage)
}

fn parse_protocol(raw: Option<&str>) -> Result<Protocol> {
    Ok(match raw {
        None | Some("redis") => Protocol::Redis,
        Some("resp2") => Protocol::Resp2,
        Some("resp3") => Protocol::Resp3,
        Some("memcache_text") => Protocol::MemcacheText,
        Some("memcache_binary") => Protocol::MemcacheBinary,
        Some(_) => {
            return Err(usage(
                "supported protocols are 'memcache_text', 'memcache_binary', 'redis', 'resp2' and 'resp3'.",
            ));
        }
    })
}

fn protocol_name(p: Protocol) -> &'static str {
    match p {
        Protocol::Redis => "redis",
        Protocol::Resp2 => "resp2",
        Protocol::Resp3 => "resp3",
        Protocol::MemcacheText => "memcache_text",
        Protocol::MemcacheBinary => "memcache_binary",
    }
}

fn parse_port(raw: &str) -> Option<u16> {
    raw.parse::<u16>().ok().filter(|&p| p > 0)
}

/// `-a user:password` or a bare password. Only the first `:` splits, so a password may
/// hold colons; an empty user (`:password`) means the default user.
fn parse_credentials(raw: &str) -> Result<Credentials> {
    if raw.is_empty() {
        return Err(usage("authenticate needs a password or user:password."));
    }
    Ok(match raw.split_once(':') {
        Some((user, password)) => Credentials {
            user: (!user.is_empty()).then(|| user.to_string()),
            password: password.to_string(),
        },
        None => Credentials {
            user: None,
            password: raw.to_string(),
        },
    })
}

/// `redis://[user[:password]@]host[:port][/db]`, or `rediss://` for TLS. `[v6addr]`
/// brackets are accepted for IPv6 literals.
fn parse_uri(raw: &str) -> Result<UriParts> {
    if raw.is_empty() {
        return Err(usage("empty URI provided."));
    }
    let Some((scheme, rest)) = raw.split_once("://") else {
        return Err(usage("invalid URI format, missing scheme."));
    };
    if scheme != "redis" && scheme != "rediss" {
        return Err(usage(format!(
            "unsupported URI scheme '{scheme}'. Use 'redis' or 'rediss'."
        )));
    }
    let mut parts = UriParts {
        tls: scheme == "rediss",
        ..UriParts::default()
    };
    // The last '@' ends the user info: a password may contain '@', a host cannot.
    let host_part = match rest.rfind('@') {
        Some(at) => {
            parts.credentials = Some(parse_credentials(&rest[..at]).map_err(|_| {
                usage("invalid URI: nothing between '://' and '@' (expected user:password@ or password@).")
            })?);
            &rest[at + 1..]
        }
        None => rest,
    };
    let (host_port, db) = match host_part.split_once('/') {
        Some((hp, db)) => (hp, db),
        None => (host_part, ""),
    };
    if !db.is_empty() {
        parts.db = Some(
            db.parse::<u32>()
                .map_err(|_| usage(format!("invalid database number '{db}'.")))?,
        );
    }
    let (host, port) = if let Some(bracketed) = host_port.strip_prefix('[') {
        let Some((h, after)) = bracketed.split_once(']') else {
            return Err(usage(format!(
                "invalid URI host '{host_port}': missing ']'."
            )));
        };
        match after.strip_prefix(':') {
            Some(p) => (h, Some(p)),
            None if after.is_empty() => (h, None),
            None => return Err(usage(format!("invalid URI host '{host_port}'."))),
        }
    } else {
        match host_port.split_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (host_port, None),
        }
    };
    if let Some(p) = port {
        parts.port =
            Some(parse_port(p).ok_or_else(|| usage(format!("invalid port number '{p}'.")))?);
    }
    if !host.is_empty() {
        parts.host = Some(host.to_string());
    }
    Ok(parts)
}

/// memtier's rule: the URI wins over the separate flags, and says so.
fn warn_uri_precedence(cli: &Cli, uri: &UriParts) {
    let clashes = [
        (cli.host.is_some() && uri.host.is_some(), "--host/--server"),
        (cli.port.is_some() && uri.port.is_some(), "--port"),
        (
            cli.authenticate.is_some() && uri.credentials.is_some(),
            "--authenticate",
        ),
        (cli.select_db.is_some() && uri.db.is_some(), "--select-db"),
    ];
    for (clash, flag) in clashes {
        if clash {
            eprintln!("warning: both URI and {flag} specified, URI takes precedence.");
        }
    }
}

/// Resolve once, up front, so a typo in the host name is a usage error and not a
/// connection error in every client.
fn resolve(host: &str, port: u16, family: Family) -> Result<SocketAddr> {
    let cannot = |why: &str| usage(format!("cannot resolve host '{host}'{why}"));
    let addrs = (host, port).to_socket_addrs().map_err(|_| cannot(""))?;
    let mut any = false;
    for addr in addrs {
        any = true;
        if family.allows(&addr) {
            return Ok(addr);
        }
    }
    Err(match (any, family) {
        (true, Family::V4) => cannot(" to an IPv4 address (-4)"),
        (true, Family::V6) => cannot(" to an IPv6 address (-6)"),
        _ => cannot(""),
    })
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
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit());
    if !digits(a) || !digits(b) {
        return None;
    }
    Some((a.parse().ok()?, b.parse().ok()?))
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
            list.push((size as usize, weight));
        }
        return Ok(DataSize::List(list));
    }
    let size = positive_u32(
        cli.data_size.as_deref(),
        DEFAULT_DATA_SIZE,
        "data-size must be greater than zero.",
    )?;
    Ok(DataSize::Fixed(size as usize))
}

fn parse_percentiles(raw: Option<&str>) -> Result<Vec<f64>> {
    let Some(raw) = raw else {
        return Ok(DEFAULT_PERCENTILES.to_vec());
    };
    raw.split(',')
        .map(|p| match p.trim().parse::<f64>() {
            Ok(x) if (0.0..=100.0).contains(&x) => Ok(x),
            _ => Err(usage(
                "quantiles must be expressed as [0.0-100.0],[0.0-100.0](,...).",
            )),
        })
        .collect()
}

const DEFAULT_STATSD_PORT: u16 = 8125;
const DEFAULT_STATSD_PREFIX: &str = "memtier";
const DEFAULT_STATSD_RUN_LABEL: &str = "default";
const DEFAULT_GRAPHITE_PORT: u16 = 8080;
/// Longest `--statsd-prefix` and `--statsd-run-label`, in bytes: with the longest metric
/// name and value every line stays far below one datagram.
pub const STATSD_NAME_PART_MAX: usize = 128;

/// The StatsD options. Without `--statsd-host` the others do nothing (as in memtier),
/// which earns a warning rather than an error so memtier command lines keep working.
fn parse_statsd(cli: &Cli) -> Result<Option<StatsdConfig>> {
    let port = |raw: Option<&str>, flag: &str, default: u16| -> Result<u16> {
        raw.map_or(Ok(default), |p| {
            parse_port(p)
                .ok_or_else(|| usage(format!("{flag} must be a number in the range [1-65535].")))
        })
    };
    let statsd_port = port(
        cli.statsd_port.as_deref(),
        "statsd-port",
        DEFAULT_STATSD_PORT,
    )?;
    let graphite_port = port(
        cli.graphite_port.as_deref(),
        "graphite-port",
        DEFAULT_GRAPHITE_PORT,
    )?;
    let part = |raw: Option<&str>, flag: &str, default: &str| -> Result<String> {
        let value = raw.unwrap_or(default);
        if value.len() > STATSD_NAME_PART_MAX {
            return Err(usage(format!(
                "{flag} must be at most {STATSD_NAME_PART_MAX} characters."
            )));
        }
        Ok(value.to_string())
    };
    let prefix = part(
        cli.statsd_prefix.as_deref(),
        "statsd-prefix",
        DEFAULT_STATSD_PREFIX,
    )?;
    let run_label = part(
        cli.statsd_run_label.as_deref(),
        "statsd-run-label",
        DEFAULT_STATSD_RUN_LABEL,
    )?;
    let Some(host) = cli.statsd_host.as_deref() else {
        let companions = [
            (cli.statsd_port.is_some(), "--statsd-port"),
            (cli.statsd_prefix.is_some(), "--statsd-prefix"),
            (cli.statsd_run_label.is_some(), "--statsd-run-label"),
            (cli.graphite_port.is_some(), "--graphite-port"),
        ];
        for (given, flag) in companions {
            if given {
                eprintln!("warning: {flag} has no effect without --statsd-host.");
            }
        }
        return Ok(None);
    };
    if host.is_empty() {
        return Err(usage("--statsd-host needs a host name."));
    }
    Ok(Some(StatsdConfig {
        host: host.to_string(),
        port: statsd_port,
        prefix,
        run_label,
        graphite_port,
    }))
}

/// `--client-stats=PREFIX`: the prefix of every per-client file name.
fn parse_client_stats(raw: Option<&str>) -> Result<Option<String>> {
    match raw {
        Some("") => Err(usage("--client-stats needs a file name prefix.")),
        other => Ok(other.map(str::to_string)),
    }
}

fn non_empty_path(raw: Option<&str>, flag: &str) -> Result<Option<PathBuf>> {
    match raw {
        Some("") => Err(usage(format!("{flag} needs a file name."))),
        other => Ok(other.map(PathBuf::from)),
    }
}

/// `***` in place of the password, so configurations can be shared and logged.
fn masked_credentials(c: &Credentials) -> String {
    match &c.user {
        Some(user) => format!("{user}:***"),
        None => "***".to_string(),
    }
}

/// The URI as typed with its password replaced by `***`.
fn masked_uri(raw: &str) -> String {
    let Some((scheme, rest)) = raw.split_once("://") else {
        return raw.to_string();
    };
    let Some(at) = rest.rfind('@') else {
        return raw.to_string();
    };
    let user_info = match rest[..at].split_once(':') {
        Some((user, _)) => format!("{user}:***"),
        None => "***".to_string(),
    };
    format!("{scheme}://{user_info}@{}", &rest[at + 1..])
}

fn json_str(s: &str) -> String {
    serde_json::Value::String(s.to_string()).to_string()
}

fn json_bool(b: bool) -> String {
    json_str(if b { "true" } else { "false" })
}

fn json_opt(s: Option<&str>) -> String {
    s.map_or_else(|| "null".to_string(), json_str)
}

fn json_path(p: Option<&PathBuf>) -> String {
    p.map_or_else(|| "null".to_string(), |p| json_str(&p.to_string_lossy()))
}

/// memtier's "configuration" object, in its order and spelling (see
/// `reference/memtier-output/default.json`). Values follow memtier's conventions so
/// dashboards read the same thing: options that do nothing here show their "off" value,
/// `key_stddev`/`key_median`/`key_zipf_exp` show what was given (0 = the default
/// applies), `data_size` is 0 when a range or list sizes values, and `requests` is 0
/// with `--test-time`. Secrets are masked.
fn shown_options(
    config: &Config,
    cli: &Cli,
    family: Family,
    key_pattern: &str,
    given_key_floats: [Option<f64>; 3],
) -> Vec<(&'static str, String)> {
    let (server, unix_socket) = match &config.endpoint {
        Endpoint::Tcp { host, .. } => (json_str(host), "null".to_string()),
        Endpoint::Unix(path) => ("null".to_string(), json_path(Some(path))),
    };
    let requests = match config.stop {
        StopAt::RequestsPerClient(n) => n,
        // kvbench shares one pass over the keys between all clients: show one client's share.
        StopAt::AllKeys => config.key_range().div_ceil(config.total_clients() as u64),
        StopAt::Time(_) => 0,
    };
    let test_time = match config.stop {
        StopAt::Time(d) => d.as_secs(),
        _ => 0,
    };
    let (data_size, range, list, pattern) = match &config.data_size {
        DataSize::Fixed(n) => (*n, (0, 0), String::new(), "R"),
        DataSize::Range {
            min,
            max,
            spread_over_keys,
        } => (
            0,
            (*min, *max),
            String::new(),
            if *spread_over_keys { "S" } else { "R" },
        ),
        DataSize::List(items) => {
            let text: Vec<String> = items.iter().map(|(s, w)| format!("{s}:{w}")).collect();
            (0, (0, 0), text.join(","), "R")
        }
    };
    let f = |x: Option<f64>| format!("{:.6}", x.unwrap_or(0.0));
    let [stddev, median, zipf] = given_key_floats;
    vec![
        ("server", server),
        ("port", config.port.to_string()),
        (
            "uri",
            json_str(&cli.uri.as_deref().map(masked_uri).unwrap_or_default()),
        ),
        ("unix socket", unix_socket),
        ("address family", json_str(family.memtier_name())),
        ("protocol", json_str(protocol_name(config.protocol))),
        ("out_file", json_path(config.output.out_file.as_ref())),
        ("tls", json_bool(config.tls.is_some())),
        ("cert", json_opt(cli.cert.as_deref())),
        ("key", json_opt(cli.key.as_deref())),
        ("cacert", json_opt(cli.cacert.as_deref())),
        ("tls_skip_verify", json_bool(cli.tls_skip_verify)),
        ("sni", json_opt(cli.sni.as_deref())),
        (
            "client_stats",
            config
                .output
                .client_stats
                .as_deref()
                .map_or_else(|| "null".to_string(), json_str),
        ),
        ("run_count", config.run_count.to_string()),
        ("debug", cli.debug.to_string()),
        ("requests", requests.to_string()),
        (
            "rate_limit",
            config.shape.rate_limit.unwrap_or(0).to_string(),
        ),
        ("clients", config.clients.to_string()),
        ("threads", config.threads.to_string()),
        ("test_time", test_time.to_string()),
        (
            "ratio",
            json_str(&format!("{}:{}", config.ratio.0, config.ratio.1)),
        ),
        ("pipeline", config.pipeline.to_string()),
        ("data_size", data_size.to_string()),
        ("data_offset", config.shape.data_offset.to_string()),
        ("random_data", json_bool(config.random_data)),
        (
            "data_size_range",
            json_str(&format!("{}:{}", range.0, range.1)),
        ),
        ("data_size_list", json_str(&list)),
        ("data_size_pattern", json_str(pattern)),
        (
            "expiry_range",
            json_str(&{
                let (a, b) = config.shape.expiry_range.unwrap_or((0, 0));
                format!("{a}:{b}")
            }),
        ),
        (
            "data_import",
            json_path(cli.data_import.as_ref().map(PathBuf::from).as_ref()),
        ),
        ("data_verify", json_bool(cli.data_verify || cli.verify_only)),
        ("verify_only", json_bool(cli.verify_only)),
        ("generate_keys", json_bool(cli.generate_keys)),
        ("key_prefix", json_str(&config.keys.prefix)),
        // memtier pads these two to 11 columns; kept so the files match byte for byte.
        ("key_minimum", format!("{:11}", config.keys.min)),
        ("key_maximum", format!("{:11}", config.keys.max)),
        ("key_pattern", json_str(key_pattern)),
        ("key_stddev", f(stddev)),
        ("key_median", f(median)),
        ("key_zipf_exp", f(zipf)),
        (
            "reconnect_interval",
            config.shape.reconnect_interval.unwrap_or(0).to_string(),
        ),
        (
            "connection_timeout",
            config
                .shape
                .connection_timeout
                .map_or(0, |d| d.as_secs())
                .to_string(),
        ),
        (
            "thread_conn_start_min_jitter_micros",
            config.shape.conn_jitter_us.0.to_string(),
        ),
        (
            "thread_conn_start_max_jitter_micros",
            config.shape.conn_jitter_us.1.to_string(),
        ),
        ("multi_key_get", config.shape.multi_key_get.to_string()),
        (
            "authenticate",
            json_str(
                &config
                    .credentials
                    .as_ref()
                    .map(masked_credentials)
                    .unwrap_or_default(),
            ),
        ),
        ("select-db", config.select_db.unwrap_or(0).to_string()),
        ("no-expiry", json_bool(cli.no_expiry)),
        (
            "wait-ratio",
            json_str(
                &config
                    .shape
                    .wait
                    .map_or_else(|| "0:0".to_string(), |w| format!("{}:{}", w.sets, w.waits)),
            ),
        ),
        (
            "num-slaves",
            json_str(&config.shape.wait.map_or_else(
                || "0:0".to_string(),
                |w| format!("{}:{}", w.num_slaves.0, w.num_slaves.1),
            )),
        ),
        (
            "wait-timeout",
            json_str(&config.shape.wait.map_or_else(
                || "0-0".to_string(),
                |w| format!("{}-{}", w.timeout_ms.0, w.timeout_ms.1),
            )),
        ),
        ("print-all-runs", json_bool(config.output.print_all_runs)),
    ]
}

/// The `--show-config` text: one `name = value` line per option of [`Config::shown`],
/// strings without their JSON quotes and escapes.
pub fn render_show_config(config: &Config) -> String {
    let mut out = String::new();
    for (name, value) in &config.shown {
        let text = if value.starts_with('"') {
            serde_json::from_str::<String>(value).unwrap_or_else(|_| value.clone())
        } else {
            value.trim().to_string()
        };
        out.push_str(name);
        out.push_str(" = ");
        out.push_str(&text);
        out.push('\n');
    }
    out
}
