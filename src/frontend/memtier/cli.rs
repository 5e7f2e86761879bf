//! memtier_benchmark's command line as typed: one clap struct, every flag exactly as
//! memtier spells it (the connection flags flattened from the shared
//! [`ConnectionArgs`] and the Prometheus flags from [`PrometheusArgs`]), plus kvbench's
//! own (`--config`, `--reply-timeout`, `--hdr-log`, `--shard`, `--start-at`).
//!
//! This module only reads what the user typed: every value stays a raw string (or a
//! bool / count for switches) so that [`super::settings`] can tell "given" from
//! "default" and refuse bad values with memtier's own wording. Nothing here checks a
//! range or a format. [`super::parse`] builds it from argv and `--config` files.

use clap::{ArgAction, ColorChoice, Parser};

use crate::frontend::common::pool::PoolArgs;
use crate::frontend::common::prometheus::PrometheusArgs;
use crate::frontend::common::visibility::VisibilityArgs;
use crate::frontend::common::{self, ConnectionArgs};
use crate::frontend::memtier::commands::CommandSpec;

const H_CONNECTION: &str = common::HEADING;
const H_OUTPUT: &str = "Results Output Options";
const H_TEST: &str = "Test Options";
const H_ARBITRARY: &str = "Arbitrary command";
const H_OBJECT: &str = "Object Options";
const H_IMPORT: &str = "Imported Data Options";
const H_KEY: &str = "Key Options";
const H_WAIT: &str = "WAIT Options";
const H_OPEN_LOOP: &str = "Open Loop Options (kvbench)";
const H_KVBENCH: &str = "kvbench Options";

/// Every memtier_benchmark flag, as typed. Build it with [`super::parse::parse_args`], which also
/// expands `--config` files and fills [`Cli::commands`].
#[derive(Parser, Clone, Debug, Default)]
#[command(
    name = "kvbench",
    version,
    about = "A memcache/redis NoSQL traffic generator and performance benchmarking tool \
             (memtier_benchmark-compatible).",
    override_usage = "kvbench [options]",
    // The binary's tools (src/frontend/mod.rs's FRONT_ENDS; a test checks that each is
    // named here), for a user who only knows `kvbench --help`.
    after_help = "Other tools in this binary, each with its own --help: kvbench redis-benchmark \
                  (redis-benchmark's command line), kvbench latency (redis-cli --latency), \
                  kvbench intrinsic-latency (redis-cli --intrinsic-latency), kvbench zbench \
                  (redis-zbench-go), kvbench merge (several shards' results into one), kvbench \
                  report (result files as one HTML page), kvbench completions (shell \
                  completion scripts), kvbench man (the manual page). This command line is \
                  also kvbench memtier_benchmark, by its tool word.",
    disable_help_flag = true,
    disable_version_flag = true,
    args_override_self = true,
    // getopt_long, which memtier parses with, takes any unambiguous prefix of a long
    // option (`--hide-hist`, `--key-max=100`); an exact name still wins over a longer one.
    infer_long_args = true,
    color = ColorChoice::Never,
    max_term_width = 120
)]
pub struct Cli {
    // ---- Connection and General Options ----
    /// Server, socket, credentials, URI and TLS: the flags other front ends share.
    #[command(flatten)]
    pub conn: ConnectionArgs,

    /// Protocol to use (default: redis).
    /// Other supported protocols are resp2, resp3,
    /// memcache_text and memcache_binary. With resp2 or resp3
    /// the protocol version is set via the HELLO command.
    // Listed after -6 in --help, as memtier does: the shared connection flags come first,
    // so this takes -6's display order and sorts after it.
    #[arg(short = 'P', long, value_name = "PROTOCOL", allow_hyphen_values = true,
          help_heading = H_CONNECTION, verbatim_doc_comment, display_order = 4)]
    pub protocol: Option<String>,

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

    /// Duration in seconds of each step before adding more clients (or, with
    /// --rate-sweep, of each rate step).
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

    // ---- Open loop (kvbench's own) ----
    /// Send OPS requests per second in all (every thread and connection together), each
    /// at its scheduled time whatever the replies do; latency counts from that time
    /// (no coordinated omission). --rate-limiting sets a rate per connection instead
    #[arg(long, value_name = "OPS", allow_hyphen_values = true, help_heading = H_OPEN_LOOP)]
    pub rate: Option<String>,

    /// How --rate, --rate-limiting and --rate-sweep spread send times: uniform (evenly)
    /// or poisson (exponential gaps, seeded; --randomize seeds from the clock)
    /// (default: uniform)
    #[arg(long, value_name = "uniform|poisson", allow_hyphen_values = true,
          help_heading = H_OPEN_LOOP)]
    pub arrival: Option<String>,

    /// Send load for SECS before --test-time starts (the run lasts SECS + test time);
    /// the warm-up is left out of every result and file (default: 0)
    #[arg(long, value_name = "SECS", allow_hyphen_values = true, help_heading = H_OPEN_LOOP)]
    pub warmup: Option<String>,

    /// Run open-loop rates START, START+STEP, ... up to END in turn, each for
    /// --step-duration seconds, and print the latency-throughput curve
    #[arg(long, value_name = "START:END:STEP", allow_hyphen_values = true,
          help_heading = H_OPEN_LOOP)]
    pub rate_sweep: Option<String>,

    /// With --rate-sweep: stop at the first step whose response time at the percentile
    /// exceeds MS milliseconds, and report the highest rate that held it (e.g. p99:5)
    #[arg(long, value_name = "pPCT:MS", allow_hyphen_values = true, help_heading = H_OPEN_LOOP)]
    pub slo: Option<String>,

    // ---- kvbench's own ----
    /// Load flags from a JSON file: an object whose keys are long flag names without
    /// dashes, e.g. {"ratio": "3:2", "test-time": 60, "hide-histogram": true}.
    /// Flags on the command line override the file. Repeatable; later files override
    /// earlier ones.
    #[arg(long, value_name = "FILE", action = ArgAction::Append, allow_hyphen_values = true,
          help_heading = H_KVBENCH)]
    pub config: Vec<String>,

    /// Write every second's latency histograms as HdrHistogram interval logs: all
    /// commands to FILE, each command to FILE_<CMD> (all_SET.hlog), readable by
    /// HdrHistogram's log tools and `kvbench merge`.
    #[arg(long, value_name = "FILE", allow_hyphen_values = true, help_heading = H_KVBENCH)]
    pub hdr_log: Option<String>,

    /// Run as shard I of N (I from 0) of one workload spread over N processes: S and P
    /// key patterns and -n allkeys split the key range so the shards cover every key
    /// once; R, G and Z draw from the whole range with a seed of the shard's own. Merge
    /// the shards' results with `kvbench merge`.
    #[arg(long, value_name = "I/N", allow_hyphen_values = true, help_heading = H_KVBENCH)]
    pub shard: Option<String>,

    /// Connect and authenticate first, then start sending at TIME: seconds since the Unix
    /// epoch (1767225600) or RFC 3339 (2026-01-01T00:00:00Z), so that shards on several
    /// machines start together.
    #[arg(long, value_name = "TIME", allow_hyphen_values = true, help_heading = H_KVBENCH)]
    pub start_at: Option<String>,

    /// Before sleeping for replies, poll without waiting for up to USEC microseconds
    /// (0: off, the default): replies that come within it are taken at once, not after
    /// the thread wakes up from idle (tens of microseconds on a VM, most of what a
    /// latency at a few connections is). Costs each thread's core while it polls.
    #[arg(long, value_name = "USEC", allow_hyphen_values = true, help_heading = H_KVBENCH)]
    pub busy_poll: Option<String>,

    /// When a connection's pipeline gets its next requests: reply (the default, as
    /// memtier_benchmark: each reply's place is refilled at once, so a server that answers
    /// a batch in pieces gets one write per piece) or batch (the next --pipeline requests
    /// go out together once the whole batch is answered, as redis-benchmark -P: fewer
    /// writes for the client and the server; not with --cluster-mode or --servers)
    #[arg(long, value_name = "reply|batch", allow_hyphen_values = true,
          help_heading = H_KVBENCH)]
    pub refill: Option<String>,

    /// `--command` entries paired with the `--command-ratio` / `--command-key-pattern`
    /// that followed each; filled by [`super::parse::parse_args`] from the flags' positions.
    #[arg(skip)]
    pub commands: Vec<CommandSpec>,

    /// `--servers` and `--distribution`: a pool of servers.
    #[command(flatten)]
    pub pool: PoolArgs,

    /// `--visibility-from` and its companions: replica visibility lag.
    #[command(flatten)]
    pub visibility: VisibilityArgs,

    // ---- Prometheus (memtier's flags, shared with other front ends) ----
    /// `--prometheus-port` and its companions: the live `/metrics` endpoint.
    #[command(flatten)]
    pub prometheus: PrometheusArgs,
}

/// What the command line asks for.
#[derive(Debug)]
pub enum Parsed {
    /// Run a benchmark with these flags.
    Run(Box<Cli>),
    /// Print this text to stdout and exit 0 (`--help`, `-v/--version`).
    Print(String),
}

/// The version text for `-v/--version`.
pub fn version_text() -> String {
    format!(
        "kvbench {}\nA memtier_benchmark-compatible load generator for Redis and memcached \
         (same flags, same output files).\n",
        env!("CARGO_PKG_VERSION")
    )
}
