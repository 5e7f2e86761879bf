//! The command line exactly as memtier_benchmark spells it, plus kvbench's `--config` files.
//!
//! This module only reads what the user typed: every value stays a raw string (or a
//! bool / count for switches) so that [`crate::config`] can tell "given" from "default"
//! and refuse bad values with memtier's own wording. Nothing here checks a range or a
//! format; that is `Config::from_cli`'s job.
//!
//! Parsing follows getopt's habits, because scripts written for memtier rely on them:
//! `--flag=value` and `--flag value` both work, a value may start with `-`
//! (`-a -secret`), and a single-value flag given twice keeps the last value.
//!
//! `--config=FILE` (repeatable, anywhere on the line) loads a JSON object whose keys are
//! long flag names without dashes:
//!
//! ```text
//! {"ratio": "3:2", "test-time": 60, "hide-histogram": true,
//!  "command": ["set __key__ __data__", "get __key__"]}
//! ```
//!
//! The file is expanded into flags placed *before* the real command line, so the
//! command line wins. `true` becomes the bare switch, `false` is left out, a number or
//! string becomes `--key=value`, an array repeats the flag. Flags that exclude each other
//! (`--requests` / `--test-time`, the three data-size flags, the endpoint flags) do not
//! clash across sources: when the command line (or a later file) gives one, the earlier
//! file's partners are dropped (see `OVERRIDES`). `config/README.md` documents the
//! format for users.

use std::collections::{HashMap, HashSet};

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::parser::ValueSource;
use clap::{ArgAction, ArgMatches, ColorChoice, CommandFactory, FromArgMatches, Parser};
use serde_json::Value;

use crate::error::Error;

const H_CONNECTION: &str = "Connection and General Options";
const H_OUTPUT: &str = "Results Output Options";
const H_TEST: &str = "Test Options";
const H_ARBITRARY: &str = "Arbitrary command";
const H_OBJECT: &str = "Object Options";
const H_IMPORT: &str = "Imported Data Options";
const H_KEY: &str = "Key Options";
const H_WAIT: &str = "WAIT Options";
const H_KVBENCH: &str = "kvbench Options";

/// One `--command`, with the `--command-ratio` and `--command-key-pattern` given after
/// it (memtier applies those two to the most recent `--command`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CommandSpec {
    /// The command line to send, e.g. `set __key__ __data__`.
    pub command: String,
    /// The raw `--command-ratio` that followed it, if any.
    pub ratio: Option<String>,
    /// The raw `--command-key-pattern` that followed it, if any.
    pub key_pattern: Option<String>,
}

/// Every memtier_benchmark flag, as typed. Build it with [`parse_args`], which also
/// expands `--config` files and fills [`Cli::commands`].
#[derive(Parser, Clone, Debug, Default)]
#[command(
    name = "kvbench",
    version,
    about = "A memcache/redis NoSQL traffic generator and performance benchmarking tool \
             (memtier_benchmark-compatible).",
    override_usage = "kvbench [options]",
    disable_help_flag = true,
    disable_version_flag = true,
    args_override_self = true,
    color = ColorChoice::Never,
    max_term_width = 120
)]
pub struct Cli {
    // ---- Connection and General Options ----
    /// Server address (default: localhost)
    #[arg(short = 'h', long = "host", visible_short_alias = 's', visible_alias = "server",
          value_name = "ADDR", allow_hyphen_values = true, help_heading = H_CONNECTION)]
    pub host: Option<String>,

    /// Server port (default: 6379)
    #[arg(short = 'p', long, value_name = "PORT", allow_hyphen_values = true,
          help_heading = H_CONNECTION)]
    pub port: Option<String>,

    /// UNIX Domain socket name (default: none)
    #[arg(short = 'S', long, value_name = "SOCKET", allow_hyphen_values = true,
          help_heading = H_CONNECTION)]
    pub unix_socket: Option<String>,

    /// Force IPv4 address resolution.
    #[arg(short = '4', long, overrides_with = "ipv6", help_heading = H_CONNECTION)]
    pub ipv4: bool,

    /// Force IPv6 address resolution.
    #[arg(short = '6', long, overrides_with = "ipv4", help_heading = H_CONNECTION)]
    pub ipv6: bool,

    /// Protocol to use (default: redis).
    /// Other supported protocols are resp2, resp3,
    /// memcache_text and memcache_binary. With resp2 or resp3
    /// the protocol version is set via the HELLO command.
    #[arg(short = 'P', long, value_name = "PROTOCOL", allow_hyphen_values = true,
          help_heading = H_CONNECTION, verbatim_doc_comment)]
    pub protocol: Option<String>,

    /// Authenticate using specified credentials.
    /// A simple password is used for memcache_text
    /// and Redis <= 5.x. <USER>:<PASSWORD> can be
    /// specified for memcache_binary or Redis 6.x
    /// or newer with ACL user support.
    #[arg(short = 'a', long, value_name = "CREDENTIALS", allow_hyphen_values = true,
          help_heading = H_CONNECTION, verbatim_doc_comment)]
    pub authenticate: Option<String>,

    /// Server URI on format
    /// redis://user:password@host:port/dbnum
    /// User, password and dbnum are optional. For
    /// authentication without a username, use username
    /// 'default'. For TLS, use the scheme 'rediss'.
    #[arg(short = 'u', long, value_name = "URI", allow_hyphen_values = true,
          help_heading = H_CONNECTION, verbatim_doc_comment)]
    pub uri: Option<String>,

    /// Enable SSL/TLS transport security (rustls:
    /// TLSv1.2 and TLSv1.3). The server's certificate
    /// is checked against --cacert (default: the
    /// system CA bundle) and the host name (or --sni).
    #[arg(long, help_heading = H_CONNECTION, verbatim_doc_comment)]
    pub tls: bool,

    /// Use specified client certificate for TLS
    /// (PEM, chain allowed; needs --key)
    #[arg(long, value_name = "FILE", allow_hyphen_values = true, help_heading = H_CONNECTION,
          verbatim_doc_comment)]
    pub cert: Option<String>,

    /// Use specified private key for TLS
    /// (PEM: PKCS#8, RSA or EC; not encrypted)
    #[arg(long, value_name = "FILE", allow_hyphen_values = true, help_heading = H_CONNECTION,
          verbatim_doc_comment)]
    pub key: Option<String>,

    /// Use specified CA certs bundle for TLS (PEM;
    /// default: SSL_CERT_FILE or the system bundle,
    /// /etc/ssl/certs/ca-certificates.crt)
    #[arg(long, value_name = "FILE", allow_hyphen_values = true, help_heading = H_CONNECTION,
          verbatim_doc_comment)]
    pub cacert: Option<String>,

    /// Skip verification of server certificate
    /// (issuer, dates and name)
    #[arg(long, help_heading = H_CONNECTION, verbatim_doc_comment)]
    pub tls_skip_verify: bool,

    /// Specify the tls protocol version to use, comma
    /// delimited. Use a combination of 'TLSv1.2' and
    /// 'TLSv1.3' (default: both). 'TLSv1' and 'TLSv1.1'
    /// are refused: rustls does not implement them.
    #[arg(long, value_name = "LIST", allow_hyphen_values = true, help_heading = H_CONNECTION,
          verbatim_doc_comment)]
    pub tls_protocols: Option<String>,

    /// Add an SNI header; also the name the server's
    /// certificate must carry (default: the host)
    #[arg(long, value_name = "STRING", allow_hyphen_values = true, help_heading = H_CONNECTION,
          verbatim_doc_comment)]
    pub sni: Option<String>,

    /// Number of full-test iterations to perform (default: 1)
    #[arg(short = 'x', long, value_name = "NUMBER", allow_hyphen_values = true,
          help_heading = H_CONNECTION)]
    pub run_count: Option<String>,

    /// Print debug output
    #[arg(short = 'D', long, action = ArgAction::Count, help_heading = H_CONNECTION)]
    pub debug: u8,

    /// Run client in cluster mode
    #[arg(long, help_heading = H_CONNECTION)]
    pub cluster_mode: bool,

    /// Display this help
    #[arg(long, action = ArgAction::HelpShort, help_heading = H_CONNECTION)]
    pub help: Option<bool>,

    /// Display version information
    #[arg(short = 'v', long, action = ArgAction::Version, help_heading = H_CONNECTION)]
    pub version: Option<bool>,

    // ---- Results Output Options ----
    /// Name of output file (default: stdout)
    #[arg(short = 'o', long, value_name = "FILE", allow_hyphen_values = true,
          help_heading = H_OUTPUT)]
    pub out_file: Option<String>,

    /// Name of JSON output file, if not set, will not print to json
    #[arg(long, value_name = "FILE", allow_hyphen_values = true, help_heading = H_OUTPUT)]
    pub json_out_file: Option<String>,

    /// Produce per-client stats file
    #[arg(long, value_name = "FILE", allow_hyphen_values = true, help_heading = H_OUTPUT)]
    pub client_stats: Option<String>,

    /// Prefix of HDR Latency Histogram output files, if not set, will not save latency
    /// histogram files
    #[arg(long, value_name = "FILE", allow_hyphen_values = true, help_heading = H_OUTPUT)]
    pub hdr_file_prefix: Option<String>,

    /// Print detailed configuration before running
    #[arg(long, help_heading = H_OUTPUT)]
    pub show_config: bool,

    /// Don't print detailed latency histogram
    #[arg(long, help_heading = H_OUTPUT)]
    pub hide_histogram: bool,

    /// Specify which percentiles info to print on the results table
    /// (default: 50,99,99.9)
    #[arg(long, value_name = "LIST", allow_hyphen_values = true, help_heading = H_OUTPUT,
          verbatim_doc_comment)]
    pub print_percentiles: Option<String>,

    /// When performing multiple test iterations, print and save results for all iterations
    #[arg(long, help_heading = H_OUTPUT)]
    pub print_all_runs: bool,

    /// How to group command statistics in the output (default: command)
    /// command: aggregate by command name (first word, e.g., SET, GET)
    /// line: show each command line separately
    #[arg(long, value_name = "command|line", allow_hyphen_values = true,
          help_heading = H_OUTPUT, verbatim_doc_comment)]
    pub command_stats_breakdown: Option<String>,

    /// StatsD server hostname to send real-time metrics (default: none, disabled)
    #[arg(long, value_name = "HOST", allow_hyphen_values = true, help_heading = H_OUTPUT)]
    pub statsd_host: Option<String>,

    /// StatsD server UDP port (default: 8125)
    #[arg(long, value_name = "PORT", allow_hyphen_values = true, help_heading = H_OUTPUT)]
    pub statsd_port: Option<String>,

    /// Prefix for StatsD metric names (default: memtier)
    #[arg(long, value_name = "PREFIX", allow_hyphen_values = true, help_heading = H_OUTPUT)]
    pub statsd_prefix: Option<String>,

    /// Label for this benchmark run, used to distinguish runs in dashboards
    /// (default: default)
    #[arg(long, value_name = "LABEL", allow_hyphen_values = true, help_heading = H_OUTPUT)]
    pub statsd_run_label: Option<String>,

    /// Graphite HTTP port for event annotations (default: 8080)
    #[arg(long, value_name = "PORT", allow_hyphen_values = true, help_heading = H_OUTPUT)]
    pub graphite_port: Option<String>,

    // ---- Test Options ----
    /// Number of total requests per client (default: 10000)
    /// use 'allkeys' to run on the entire key-range
    #[arg(short = 'n', long, value_name = "NUMBER", allow_hyphen_values = true,
          help_heading = H_TEST, verbatim_doc_comment)]
    pub requests: Option<String>,

    /// The max number of requests to make per second from an individual connection
    /// (default is unlimited rate)
    #[arg(long, value_name = "NUMBER", allow_hyphen_values = true, help_heading = H_TEST)]
    pub rate_limiting: Option<String>,

    /// Number of clients per thread (default: 50)
    #[arg(short = 'c', long, value_name = "NUMBER", allow_hyphen_values = true,
          help_heading = H_TEST)]
    pub clients: Option<String>,

    /// Number of threads (default: 4)
    #[arg(short = 't', long, value_name = "NUMBER", allow_hyphen_values = true,
          help_heading = H_TEST)]
    pub threads: Option<String>,

    /// Number of seconds to run the test
    #[arg(long, value_name = "SECS", allow_hyphen_values = true, help_heading = H_TEST)]
    pub test_time: Option<String>,

    /// Starting number of clients per thread for staircase ramp-up.
    /// Must be less than --clients. Requires --clients-step and --step-duration.
    #[arg(long, value_name = "NUMBER", allow_hyphen_values = true, help_heading = H_TEST,
          verbatim_doc_comment)]
    pub clients_start: Option<String>,

    /// Number of clients to add per step in staircase ramp-up.
    #[arg(long, value_name = "NUMBER", allow_hyphen_values = true, help_heading = H_TEST)]
    pub clients_step: Option<String>,

    /// Duration in seconds of each step before adding more clients.
    #[arg(long, value_name = "SECS", allow_hyphen_values = true, help_heading = H_TEST)]
    pub step_duration: Option<String>,

    /// Set:Get ratio (default: 1:10)
    #[arg(long, value_name = "RATIO", allow_hyphen_values = true, help_heading = H_TEST)]
    pub ratio: Option<String>,

    /// Number of concurrent pipelined requests (default: 1)
    #[arg(long, value_name = "NUMBER", allow_hyphen_values = true, help_heading = H_TEST)]
    pub pipeline: Option<String>,

    /// Number of requests after which re-connection is performed
    #[arg(long, value_name = "NUM", allow_hyphen_values = true, help_heading = H_TEST)]
    pub reconnect_interval: Option<String>,

    /// Enable automatic reconnection on connection errors (default: disabled)
    #[arg(long, help_heading = H_TEST)]
    pub reconnect_on_error: bool,

    /// Maximum number of reconnection attempts (default: 0, unlimited)
    #[arg(long, value_name = "NUM", allow_hyphen_values = true, help_heading = H_TEST)]
    pub max_reconnect_attempts: Option<String>,

    /// Backoff factor for reconnection delays (default: 0, no backoff)
    #[arg(long, value_name = "NUM", allow_hyphen_values = true, help_heading = H_TEST)]
    pub reconnect_backoff_factor: Option<String>,

    /// Connection timeout in seconds, 0 to disable (default: 0)
    #[arg(long, value_name = "SECS", allow_hyphen_values = true, help_heading = H_TEST)]
    pub connection_timeout: Option<String>,

    /// kvbench: a connection whose requests get no reply for this long is an error
    /// (a stalled server ends the run instead of hanging it); 0 to wait for ever
    /// (default: 60)
    #[arg(long, value_name = "SECS", allow_hyphen_values = true, help_heading = H_TEST)]
    pub reply_timeout: Option<String>,

    /// Minimum jitter in microseconds between connection creation (default: 0)
    #[arg(long, value_name = "NUM", allow_hyphen_values = true, help_heading = H_TEST)]
    pub thread_conn_start_min_jitter_micros: Option<String>,

    /// Maximum jitter in microseconds between connection creation (default: 0)
    #[arg(long, value_name = "NUM", allow_hyphen_values = true, help_heading = H_TEST)]
    pub thread_conn_start_max_jitter_micros: Option<String>,

    /// Enable multi-key get commands, up to NUM keys (default: 0)
    #[arg(long, value_name = "NUM", allow_hyphen_values = true, help_heading = H_TEST)]
    pub multi_key_get: Option<String>,

    /// DB number to select, when testing a redis server
    #[arg(long, value_name = "DB", allow_hyphen_values = true, help_heading = H_TEST)]
    pub select_db: Option<String>,

    /// Use a different random seed for each client
    #[arg(long, help_heading = H_TEST)]
    pub distinct_client_seed: bool,

    /// random seed based on timestamp (default is constant value)
    #[arg(long, help_heading = H_TEST)]
    pub randomize: bool,

    // ---- Arbitrary command ----
    /// Specify a command to send in quotes (repeatable).
    /// Each command is run with its own ratio and key-pattern options, e.g.
    /// --command="set __key__ 5" --command-ratio=2 --command-key-pattern=G
    /// __key__: use a key generated from Key Options.
    /// __data__: use data generated from Object Options.
    #[arg(long, value_name = "COMMAND", action = ArgAction::Append, allow_hyphen_values = true,
          help_heading = H_ARBITRARY, verbatim_doc_comment)]
    pub command: Vec<String>,

    /// The number of times the preceding --command is sent in sequence (default: 1)
    #[arg(long, value_name = "NUMBER", action = ArgAction::Append, allow_hyphen_values = true,
          help_heading = H_ARBITRARY)]
    pub command_ratio: Vec<String>,

    /// Key pattern for the preceding --command (default: R):
    /// G for Gaussian distribution.
    /// R for uniform Random.
    /// Z for zipf distribution (will limit keys to positive).
    /// S for Sequential.
    /// P for Parallel (Sequential where each client has a subset
    ///   of the key-range).
    #[arg(long, value_name = "PATTERN", action = ArgAction::Append, allow_hyphen_values = true,
          help_heading = H_ARBITRARY, verbatim_doc_comment)]
    pub command_key_pattern: Vec<String>,

    /// Read commands from Redis MONITOR output file.
    /// Commands can be referenced as __monitor_line1__, __monitor_line2__, etc.
    /// Use __monitor_line@__ to select commands from the file.
    #[arg(long, value_name = "FILE", allow_hyphen_values = true, help_heading = H_ARBITRARY,
          verbatim_doc_comment)]
    pub monitor_input: Option<String>,

    /// Pattern for selecting monitor commands (default: S for Sequential)
    /// S for Sequential selection.
    /// R for Random selection.
    #[arg(long, value_name = "S|R", allow_hyphen_values = true, help_heading = H_ARBITRARY,
          verbatim_doc_comment)]
    pub monitor_pattern: Option<String>,

    /// Enable SCAN cursor iteration mode: follow the cursor returned by each
    /// --command="SCAN 0 ..." reply until it returns 0, then restart.
    /// Requires --pipeline 1.
    #[arg(long, help_heading = H_ARBITRARY, verbatim_doc_comment)]
    pub scan_incremental_iteration: bool,

    /// Maximum number of continuation SCANs per iteration cycle
    /// (default: 0, follow cursor until it returns 0)
    #[arg(long, value_name = "NUMBER", allow_hyphen_values = true, help_heading = H_ARBITRARY,
          verbatim_doc_comment)]
    pub scan_incremental_max_iterations: Option<String>,

    // ---- Object Options ----
    /// Object data size in bytes (default: 32)
    #[arg(short = 'd', long, value_name = "SIZE", allow_hyphen_values = true,
          help_heading = H_OBJECT)]
    pub data_size: Option<String>,

    /// Actual size of value will be data-size + data-offset
    /// Will use SETRANGE / GETRANGE (default: 0)
    #[arg(long, value_name = "OFFSET", allow_hyphen_values = true, help_heading = H_OBJECT,
          verbatim_doc_comment)]
    pub data_offset: Option<String>,

    /// Indicate that data should be randomized
    #[arg(short = 'R', long, help_heading = H_OBJECT)]
    pub random_data: bool,

    /// Use random-sized items in the specified range (min-max)
    #[arg(long, value_name = "RANGE", allow_hyphen_values = true, help_heading = H_OBJECT)]
    pub data_size_range: Option<String>,

    /// Use sizes from weight list (size1:weight1,..sizeN:weightN)
    #[arg(long, value_name = "LIST", allow_hyphen_values = true, help_heading = H_OBJECT)]
    pub data_size_list: Option<String>,

    /// Use together with data-size-range (default: R)
    /// R: a random size from the defined data sizes is used,
    /// S: the data sizes are evenly distributed across the key range
    #[arg(long, value_name = "R|S", allow_hyphen_values = true, help_heading = H_OBJECT,
          verbatim_doc_comment)]
    pub data_size_pattern: Option<String>,

    /// Use random expiry values from the specified range
    #[arg(long, value_name = "RANGE", allow_hyphen_values = true, help_heading = H_OBJECT)]
    pub expiry_range: Option<String>,

    // ---- Imported Data Options ----
    /// Read object data from file
    #[arg(long, value_name = "FILE", allow_hyphen_values = true, help_heading = H_IMPORT)]
    pub data_import: Option<String>,

    /// Enable data verification when test is complete
    #[arg(long, help_heading = H_IMPORT)]
    pub data_verify: bool,

    /// Only perform --data-verify, without any other test
    #[arg(long, help_heading = H_IMPORT)]
    pub verify_only: bool,

    /// Generate keys for imported objects
    #[arg(long, help_heading = H_IMPORT)]
    pub generate_keys: bool,

    /// Ignore expiry information in imported data
    #[arg(long, help_heading = H_IMPORT)]
    pub no_expiry: bool,

    // ---- Key Options ----
    /// Prefix for keys (default: "memtier-")
    #[arg(long, value_name = "PREFIX", allow_hyphen_values = true, help_heading = H_KEY)]
    pub key_prefix: Option<String>,

    /// Key ID minimum value (default: 0)
    #[arg(long, value_name = "NUMBER", allow_hyphen_values = true, help_heading = H_KEY)]
    pub key_minimum: Option<String>,

    /// Key ID maximum value (default: 10000000)
    #[arg(long, value_name = "NUMBER", allow_hyphen_values = true, help_heading = H_KEY)]
    pub key_maximum: Option<String>,

    /// Set:Get pattern (default: R:R)
    /// G for Gaussian distribution.
    /// R for uniform Random.
    /// Z for zipf distribution (will limit keys to positive).
    /// S for Sequential.
    /// P for Parallel (Sequential where each client has a subset
    ///   of the key-range).
    #[arg(long, value_name = "PATTERN", allow_hyphen_values = true, help_heading = H_KEY,
          verbatim_doc_comment)]
    pub key_pattern: Option<String>,

    /// The standard deviation used in the Gaussian distribution
    /// (default is key range / 6)
    #[arg(long, value_name = "NUMBER", allow_hyphen_values = true, help_heading = H_KEY,
          verbatim_doc_comment)]
    pub key_stddev: Option<String>,

    /// The median point used in the Gaussian distribution
    /// (default is the center of the key range)
    #[arg(long, value_name = "NUMBER", allow_hyphen_values = true, help_heading = H_KEY,
          verbatim_doc_comment)]
    pub key_median: Option<String>,

    /// The exponent used in the zipf distribution, limit to (0, 5)
    /// Higher exponents result in higher concentration in top keys
    /// (default: 1)
    #[arg(long, value_name = "NUMBER", allow_hyphen_values = true, help_heading = H_KEY,
          verbatim_doc_comment)]
    pub key_zipf_exp: Option<String>,

    // ---- WAIT Options ----
    /// Set:Wait ratio (default is no WAIT commands - 1:0)
    #[arg(long, value_name = "RATIO", allow_hyphen_values = true, help_heading = H_WAIT)]
    pub wait_ratio: Option<String>,

    /// WAIT for a random number of slaves in the specified range
    #[arg(long, value_name = "RANGE", allow_hyphen_values = true, help_heading = H_WAIT)]
    pub num_slaves: Option<String>,

    /// WAIT for a random number of milliseconds in the specified range
    /// (normal distribution with the center in the middle of the range)
    #[arg(long, value_name = "RANGE", allow_hyphen_values = true, help_heading = H_WAIT,
          verbatim_doc_comment)]
    pub wait_timeout: Option<String>,

    // ---- kvbench's own ----
    /// Load flags from a JSON file: an object whose keys are long flag names without
    /// dashes, e.g. {"ratio": "3:2", "test-time": 60, "hide-histogram": true}.
    /// Flags on the command line override the file. Repeatable; later files override
    /// earlier ones.
    #[arg(long, value_name = "FILE", action = ArgAction::Append, allow_hyphen_values = true,
          help_heading = H_KVBENCH, verbatim_doc_comment)]
    pub config: Vec<String>,

    /// `--command` entries paired with the `--command-ratio` / `--command-key-pattern`
    /// that followed each; filled by [`parse_args`] from the flags' positions.
    #[arg(skip)]
    pub commands: Vec<CommandSpec>,
}

/// What the command line asks for.
#[derive(Debug)]
pub enum Parsed {
    /// Run a benchmark with these flags.
    Run(Box<Cli>),
    /// Print this text to stdout and exit 0 (`--help`, `-v/--version`).
    Print(String),
}

/// Which earlier `--config` values a flag pushes out, by clap id. When a
/// higher-priority source (the command line, or a later file) gives the flag on the
/// left, lower-priority files lose the flags on the right instead of clashing with it:
/// `--config=timed.json -n 500` runs 500 requests rather than failing with
/// "--test-time and --requests are mutually exclusive".
const OVERRIDES: &[(&str, &[&str])] = &[
    ("requests", &["test_time"]),
    ("test_time", &["requests"]),
    ("data_size", &["data_size_range", "data_size_list"]),
    ("data_size_range", &["data_size", "data_size_list"]),
    ("data_size_list", &["data_size", "data_size_range"]),
    ("host", &["unix_socket", "uri"]),
    ("unix_socket", &["host", "port", "uri"]),
    (
        "uri",
        &["host", "port", "authenticate", "select_db", "unix_socket"],
    ),
    ("ipv4", &["ipv6"]),
    ("ipv6", &["ipv4"]),
    // A command list replaces the file's list rather than appending to it.
    (
        "command",
        &["command", "command_ratio", "command_key_pattern"],
    ),
];

/// Keys a config file may not hold: they act on the parser itself.
const NOT_IN_CONFIG_FILE: &[&str] = &["help", "version", "config"];

/// The version text for `-v/--version`.
pub fn version_text() -> String {
    format!(
        "kvbench {}\nA memtier_benchmark-compatible load generator for Redis and memcached \
         (same flags, same output files).\n",
        env!("CARGO_PKG_VERSION")
    )
}

/// Parse a whole argv (the first item is the program name, as from `std::env::args()`).
///
/// `--config` files are loaded and expanded before the rest of the command line, which
/// therefore overrides them. Returns [`Parsed::Print`] for `--help` and `--version`;
/// every other problem is a one-line [`Error::Usage`].
pub fn parse_args<I: IntoIterator<Item = String>>(args: I) -> Result<Parsed, Error> {
    let mut args = args.into_iter();
    let program = args.next().unwrap_or_else(|| "kvbench".to_string());
    let user_args: Vec<String> = args.collect();

    // Pass 1: the command line alone, to learn which --config files it names (clap
    // decides what is a flag and what is a value) and which flags it sets itself.
    let user_argv: Vec<String> = std::iter::once(program.clone())
        .chain(user_args.iter().cloned())
        .collect();
    let user_matches = match try_matches(&user_argv)? {
        Matched::Matches(m) => m,
        Matched::Print(text) => return Ok(Parsed::Print(text)),
    };
    let files: Vec<String> = user_matches
        .get_many::<String>("config")
        .map(|v| v.cloned().collect())
        .unwrap_or_default();
    if files.is_empty() {
        return finish(&user_matches);
    }

    let command = command();
    let keys = KeyTable::new(&command);
    let loaded: Vec<(String, serde_json::Map<String, Value>)> = files
        .iter()
        .map(|f| load_config_file(f).map(|map| (f.clone(), map)))
        .collect::<Result<_, _>>()?;

    // Settle clashes from the highest-priority source down: the command line, then the
    // files from last to first. `pushed_out` holds the ids lower sources must drop.
    let mut pushed_out: HashSet<&'static str> = HashSet::new();
    for arg in command.get_arguments() {
        let id = arg.get_id().as_str();
        if user_matches.value_source(id) == Some(ValueSource::CommandLine) {
            pushed_out.extend(overridden_by(id));
        }
    }
    let mut per_file_tokens: Vec<Vec<String>> = vec![Vec::new(); loaded.len()];
    for (i, (file, map)) in loaded.iter().enumerate().rev() {
        let (tokens, given) = expand_config(file, map, &keys, &pushed_out)?;
        per_file_tokens[i] = tokens;
        for id in &given {
            pushed_out.extend(overridden_by(id));
        }
    }

    // Pass 2: file flags first, then the command line, so later (user) values win.
    let argv: Vec<String> = std::iter::once(program)
        .chain(per_file_tokens.into_iter().flatten())
        .chain(user_args)
        .collect();
    // The command line alone parsed, so a clap error now comes from a file's flags:
    // say which files, as the message alone would point at a flag the user never typed.
    let in_files = |e: Error| {
        Error::usage(format!(
            "config file '{}': {}",
            files.join("', '"),
            e.message()
        ))
    };
    match try_matches(&argv).map_err(in_files)? {
        Matched::Matches(m) => finish(&m).map_err(in_files),
        Matched::Print(text) => Ok(Parsed::Print(text)),
    }
}

enum Matched {
    Matches(ArgMatches),
    Print(String),
}

/// The clap command for [`Cli`], with every flag of
/// [`NOT_SUPPORTED_YET`](crate::config::NOT_SUPPORTED_YET) marked in its help, so `--help`
/// tells the truth about what works today.
pub fn command() -> clap::Command {
    let mut cmd = Cli::command();
    for not_yet in crate::config::NOT_SUPPORTED_YET {
        let Some(id) = not_yet.id else { continue };
        // mut_arg panics on an unknown id; a stale table entry must not crash --help.
        if !cmd.get_arguments().any(|a| a.get_id() == id) {
            continue;
        }
        cmd = cmd.mut_arg(id, |arg| {
            let help = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
            arg.help(format!("{help} [not supported yet]"))
        });
    }
    cmd
}

fn try_matches(argv: &[String]) -> Result<Matched, Error> {
    match command().try_get_matches_from(argv) {
        Ok(m) => Ok(Matched::Matches(m)),
        Err(e) => match e.kind() {
            ErrorKind::DisplayHelp => Ok(Matched::Print(e.to_string())),
            ErrorKind::DisplayVersion => Ok(Matched::Print(version_text())),
            _ => Err(one_line(&e)),
        },
    }
}

/// Build the typed `Cli` and pair each `--command` with the options that followed it.
fn finish(matches: &ArgMatches) -> Result<Parsed, Error> {
    let mut cli = Cli::from_arg_matches(matches).map_err(|e| one_line(&e))?;
    cli.commands = pair_commands(matches)?;
    Ok(Parsed::Run(Box::new(cli)))
}

/// memtier applies `--command-ratio` and `--command-key-pattern` to the most recent
/// `--command`; clap keeps each flag's values apart, so rebuild the pairing from the
/// argv positions clap recorded.
fn pair_commands(matches: &ArgMatches) -> Result<Vec<CommandSpec>, Error> {
    let positioned = |id: &str| -> Vec<(usize, String)> {
        match (matches.indices_of(id), matches.get_many::<String>(id)) {
            (Some(idx), Some(vals)) => idx.zip(vals.cloned()).collect(),
            _ => Vec::new(),
        }
    };
    let commands = positioned("command");
    let mut specs: Vec<CommandSpec> = commands
        .iter()
        .map(|(_, c)| CommandSpec {
            command: c.clone(),
            ..CommandSpec::default()
        })
        .collect();
    for (id, flag) in [
        ("command_ratio", "--command-ratio"),
        ("command_key_pattern", "--command-key-pattern"),
    ] {
        for (at, value) in positioned(id) {
            let owner = commands.iter().rposition(|(cmd_at, _)| *cmd_at < at);
            let Some(owner) = owner else {
                return Err(Error::usage(format!(
                    "{flag}={value} must follow the --command it applies to (no arbitrary command found)."
                )));
            };
            let spec = &mut specs[owner];
            // A second ratio for the same command replaces the first, as in memtier.
            if id == "command_ratio" {
                spec.ratio = Some(value);
            } else {
                spec.key_pattern = Some(value);
            }
        }
    }
    Ok(specs)
}

/// Turn a clap error into one line: no usage block, no colour, a pointer to `--help`.
fn one_line(e: &clap::Error) -> Error {
    let rendered = e.to_string();
    let first = rendered
        .lines()
        .next()
        .unwrap_or("invalid arguments")
        .trim()
        .trim_start_matches("error: ")
        .to_string();
    let mut msg = match (e.kind(), e.get(ContextKind::InvalidArg)) {
        (ErrorKind::UnknownArgument, Some(ContextValue::String(arg))) => {
            format!("unexpected argument '{arg}'")
        }
        _ => first,
    };
    match e.get(ContextKind::SuggestedArg) {
        Some(ContextValue::String(s)) => msg.push_str(&format!(" (did you mean '{s}'?)")),
        Some(ContextValue::Strings(v)) if !v.is_empty() => {
            msg.push_str(&format!(" (did you mean '{}'?)", v.join("' or '")))
        }
        _ => {}
    }
    Error::usage(format!("{msg}; see --help"))
}

/// How a config-file key maps to a flag of `Cli`.
struct KeyInfo {
    /// The clap id (field name), used for the exclusive groups.
    id: String,
    /// The canonical long name, used to build `--long=value` tokens.
    long: String,
    /// A switch (`true`/`false` in the file) rather than a flag with a value.
    switch: bool,
    /// The flag may be repeated, so an array value is allowed.
    repeatable: bool,
}

/// Every long name and long alias of `Cli`, asked of clap so it can never drift from
/// the struct.
struct KeyTable(HashMap<String, KeyInfo>);

impl KeyTable {
    fn new(command: &clap::Command) -> Self {
        let mut map = HashMap::new();
        for arg in command.get_arguments() {
            let Some(long) = arg.get_long() else { continue };
            let action = arg.get_action();
            let info = || KeyInfo {
                id: arg.get_id().as_str().to_string(),
                long: long.to_string(),
                switch: !action.takes_values(),
                repeatable: matches!(action, ArgAction::Append),
            };
            map.insert(long.to_string(), info());
            for alias in arg.get_all_aliases().unwrap_or_default() {
                map.insert(alias.to_string(), info());
            }
        }
        KeyTable(map)
    }
}

fn overridden_by(id: &str) -> impl Iterator<Item = &'static str> {
    OVERRIDES
        .iter()
        .filter(move |(by, _)| *by == id)
        .flat_map(|(_, lost)| lost.iter().copied())
}

fn load_config_file(file: &str) -> Result<serde_json::Map<String, Value>, Error> {
    let text = std::fs::read_to_string(file)
        .map_err(|e| Error::usage(format!("config file '{file}': cannot read it: {e}")))?;
    let value: Value = serde_json::from_str(&text)
        .map_err(|e| Error::usage(format!("config file '{file}': not valid JSON: {e}")))?;
    match value {
        Value::Object(map) => Ok(map),
        _ => Err(Error::usage(format!(
            "config file '{file}': must hold one JSON object of flags, e.g. {{\"ratio\": \"1:1\"}}"
        ))),
    }
}

/// Expand one file's object into argv tokens, skipping the flags a higher-priority
/// source pushed out. Returns the tokens and the ids of the flags the file gives.
fn expand_config(
    file: &str,
    map: &serde_json::Map<String, Value>,
    keys: &KeyTable,
    pushed_out: &HashSet<&'static str>,
) -> Result<(Vec<String>, Vec<String>), Error> {
    let bad = |key: &str, problem: &str| {
        Error::usage(format!("config file '{file}': key '{key}' {problem}"))
    };
    let mut tokens = Vec::new();
    let mut given = Vec::new();
    // --command and its per-command options are interleaved by index below: the
    // pairing is positional on a command line, and a JSON object has no key order.
    let mut per_command: Vec<(&KeyInfo, Vec<String>)> = Vec::new();

    for (key, value) in map {
        let Some(info) = keys.0.get(key.as_str()) else {
            let hint = if key.starts_with('-') {
                "is not a flag name (write long flag names without the leading dashes)"
            } else {
                "is not a kvbench/memtier flag (see --help)"
            };
            return Err(bad(key, hint));
        };
        if NOT_IN_CONFIG_FILE.contains(&info.long.as_str()) {
            return Err(bad(key, "cannot be used inside a config file"));
        }
        if pushed_out.contains(info.id.as_str()) {
            continue;
        }
        let values: Vec<String> = if info.switch {
            match value {
                Value::Bool(true) => vec![String::new()],
                Value::Bool(false) => Vec::new(),
                _ => return Err(bad(key, "is a switch: its value must be true or false")),
            }
        } else {
            match value {
                Value::String(s) => vec![s.clone()],
                Value::Number(n) => vec![n.to_string()],
                Value::Array(items) if info.repeatable => items
                    .iter()
                    .map(|item| match item {
                        Value::String(s) => Ok(s.clone()),
                        Value::Number(n) => Ok(n.to_string()),
                        _ => Err(bad(key, "must be a list of strings or numbers")),
                    })
                    .collect::<Result<_, _>>()?,
                Value::Array(_) => return Err(bad(key, "takes one value, not a list")),
                Value::Bool(_) => {
                    return Err(bad(
                        key,
                        "takes a value (a string or a number), not true/false",
                    ));
                }
                Value::Null | Value::Object(_) => {
                    return Err(bad(key, "must be a string or a number"));
                }
            }
        };
        if values.is_empty() {
            continue;
        }
        given.push(info.id.clone());
        if matches!(
            info.id.as_str(),
            "command" | "command_ratio" | "command_key_pattern"
        ) {
            per_command.push((info, values));
            continue;
        }
        for v in values {
            tokens.push(if info.switch {
                format!("--{}", info.long)
            } else {
                format!("--{}={v}", info.long)
            });
        }
    }

    if !per_command.is_empty() {
        let count = |id: &str| {
            per_command
                .iter()
                .find(|(i, _)| i.id == id)
                .map_or(0, |(_, v)| v.len())
        };
        let commands = count("command");
        for (info, values) in &per_command {
            if info.id != "command" && values.len() > commands {
                return Err(bad(
                    &info.long,
                    &format!(
                        "has {} entries but there are {commands} commands: give one per \"command\"",
                        values.len()
                    ),
                ));
            }
        }
        for i in 0..commands {
            for id in ["command", "command_ratio", "command_key_pattern"] {
                if let Some((info, values)) = per_command.iter().find(|(inf, _)| inf.id == id)
                    && let Some(v) = values.get(i)
                {
                    tokens.push(format!("--{}={v}", info.long));
                }
            }
        }
    }
    Ok((tokens, given))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(args: &[&str]) -> Vec<String> {
        std::iter::once("kvbench")
            .chain(args.iter().copied())
            .map(String::from)
            .collect()
    }

    #[test]
    fn every_long_flag_is_a_config_key() {
        let keys = KeyTable::new(&command());
        for name in [
            "ratio",
            "test-time",
            "server",
            "host",
            "command",
            "key-zipf-exp",
            "ipv6",
        ] {
            assert!(keys.0.contains_key(name), "{name} missing");
        }
        assert!(keys.0["hide-histogram"].switch);
        assert!(!keys.0["ratio"].switch);
        assert!(keys.0["command"].repeatable);
        assert!(!keys.0["ratio"].repeatable);
        assert_eq!(keys.0["server"].long, "host");
    }

    #[test]
    fn clap_definition_is_consistent() {
        command().debug_assert();
    }

    #[test]
    fn every_not_yet_id_is_a_flag() {
        let cmd = Cli::command();
        for not_yet in crate::config::NOT_SUPPORTED_YET {
            if let Some(id) = not_yet.id {
                assert!(
                    cmd.get_arguments().any(|a| a.get_id() == id),
                    "unknown id {id}"
                );
            }
        }
    }

    #[test]
    fn command_options_pair_with_the_preceding_command() {
        let m = match try_matches(&argv(&[
            "--command=set __key__ __data__",
            "--command-ratio=2",
            "--command",
            "get __key__",
            "--command-key-pattern=G",
            "--command-ratio",
            "5",
        ])) {
            Ok(Matched::Matches(m)) => m,
            _ => panic!("parse failed"),
        };
        let specs = pair_commands(&m).expect("paired");
        assert_eq!(specs.len(), 2);
        assert_eq!(specs[0].ratio.as_deref(), Some("2"));
        assert_eq!(specs[0].key_pattern, None);
        assert_eq!(specs[1].ratio.as_deref(), Some("5"));
        assert_eq!(specs[1].key_pattern.as_deref(), Some("G"));
    }
}
