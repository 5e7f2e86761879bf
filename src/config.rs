//! The validated, typed run configuration: every user error is caught while building it.
//!
//! `Config` is built once from the parsed command line (`cli::Cli`) by
//! [`Config::from_cli`] and then shared read-only (in an `Arc`) by the runner and
//! every worker. A `Config` cannot hold a bad value: ranges are ordered, ratios
//! parse, addresses resolve.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

/// Wire protocol spoken to the server (`-P`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    /// RESP2 without a HELLO (works with every Redis version).
    Redis,
    /// RESP2, announced with `HELLO 2`.
    Resp2,
    /// RESP3, announced with `HELLO 3`.
    Resp3,
    MemcacheText,
    MemcacheBinary,
}

/// How keys are picked for one kind of request (`--key-pattern=S:G`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyPattern {
    /// Uniform random over the key range.
    Random,
    /// Normal distribution around `key_median` with `key_stddev`, clamped to the range.
    Gaussian,
    /// In order over the whole range; each client starts at its own offset.
    Sequential,
    /// In order over the client's own slice of the range.
    Parallel,
    /// Zipf: low key ids are hot, skew set by `key_zipf_exp`.
    Zipf,
}

/// How value sizes are chosen (`-d`, `--data-size-range`, `--data-size-list`).
#[derive(Clone, Debug, PartialEq)]
pub enum DataSize {
    Fixed(usize),
    /// `--data-size-range=MIN-MAX` with `--data-size-pattern` R (random) or S (spread over keys).
    Range { min: usize, max: usize, spread_over_keys: bool },
    /// `--data-size-list=size:weight,...`.
    List(Vec<(usize, u32)>),
}

/// Where to connect.
#[derive(Clone, Debug)]
pub enum Endpoint {
    /// Resolved TCP address plus the host name as the user typed it (for messages, SNI).
    Tcp { host: String, addr: SocketAddr },
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

/// Credentials for `-a`: a bare password or `user:password`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Credentials {
    pub user: Option<String>,
    pub password: String,
}

/// Key space and key selection.
#[derive(Clone, Debug)]
pub struct KeyConfig {
    pub prefix: String,
    pub min: u64,
    pub max: u64,
    pub set_pattern: KeyPattern,
    pub get_pattern: KeyPattern,
    /// Gaussian standard deviation (default: range / 6).
    pub stddev: f64,
    /// Gaussian median (default: middle of the range).
    pub median: f64,
    /// Zipf exponent, in (0, 5).
    pub zipf_exp: f64,
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
        self.keys.max - self.keys.min + 1
    }
}
