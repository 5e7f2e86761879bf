//! redis-benchmark's command line: every flag as redis-benchmark 7.x spells it, plus
//! kvbench's additions, parsed with clap and validated into a typed [`BenchmarkSpec`].
//!
//! Parsing keeps redis-benchmark's habits: flags come first, the first word that is not a
//! flag starts the command (everything after it belongs to the command, dashes and all),
//! a flag's value may start with `-` (`-a -secret`), a flag given twice keeps the last
//! value, and `-h` is the host (`--help` is the help). Values are validated here with
//! redis-benchmark's defaults and clamps (`-d` at least 1, at most 512 MiB, `-P` at least 1, `-r` at least 0,
//! `--precision` 1..4, `--threads` 0..500); a value redis-benchmark would misread
//! (`-c abc`, `-n 0`, `-p 70000`) is a one-line error instead. Nothing here reads a file,
//! resolves a name or touches a socket, except `-x` reading standard input when asked.

use std::ffi::OsString;
use std::io::Read;
use std::os::unix::ffi::OsStringExt;
use std::path::PathBuf;
use std::time::Duration;

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::{ArgMatches, ColorChoice, CommandFactory, FromArgMatches, Parser};

use super::help::{help_text, version_text};
use super::numbers::{integer, positive, rps_value};
use super::render::OutputMode;
use super::suite::{MAX_KEYSPACE, TestSelection, known_names};
use super::tls_flags::TlsFlags;
pub use super::tls_flags::TlsSpec;
use super::uri::{UriParts, parse_uri};
use crate::error::Error;
use crate::frontend::common::busy_poll::parse_busy_poll;
use crate::frontend::common::open_files;
use crate::protocol::Credentials;

/// Most requests in flight per connection (`-P`), as kvbench's memtier front end allows.
pub const MAX_PIPELINE: u32 = 65_536;
/// `--reply-timeout` unless given: memtier's front end's default.
const DEFAULT_REPLY_TIMEOUT: Duration = Duration::from_secs(60);
/// Most threads redis-benchmark allows; more are clamped with a warning.
pub const MAX_THREADS: u32 = 500;
/// Largest `-d`: 512 MiB, the most a Redis server takes in one value (its default
/// `proto-max-bulk-len`). redis-benchmark clamps to 1 GiB, which every default server
/// refuses after each client has built a gigabyte; kvbench refuses it up front.
pub const MAX_DATA_SIZE: usize = 512 * 1024 * 1024;
/// `--precision` when not given (and redis-benchmark's value for a negative one).
pub const DEFAULT_PRECISION: u8 = 3;
/// Largest `--precision`.
pub const MAX_PRECISION: u8 = 4;

/// The flags as typed. Values stay strings so that validation can use redis-benchmark's
/// clamps and kvbench's own error wording.
#[derive(Parser, Debug, Default)]
#[command(
    name = "redis-benchmark",
    disable_help_flag = true,
    disable_version_flag = true,
    args_override_self = true,
    color = ColorChoice::Never
)]
pub(super) struct RawFlags {
    #[arg(short = 'h', allow_hyphen_values = true)]
    host: Option<String>,
    #[arg(short = 'p', allow_hyphen_values = true)]
    port: Option<String>,
    #[arg(short = 's', allow_hyphen_values = true)]
    socket: Option<PathBuf>,
    #[arg(short = 'a', allow_hyphen_values = true)]
    password: Option<String>,
    #[arg(long = "user", allow_hyphen_values = true)]
    user: Option<String>,
    #[arg(short = 'u', allow_hyphen_values = true)]
    uri: Option<String>,
    #[arg(short = 'c', allow_hyphen_values = true)]
    clients: Option<String>,
    #[arg(short = 'n', allow_hyphen_values = true)]
    requests: Option<String>,
    #[arg(short = 'd', allow_hyphen_values = true)]
    data_size: Option<String>,
    #[arg(long = "dbnum", allow_hyphen_values = true)]
    dbnum: Option<String>,
    #[arg(short = '3')]
    resp3: bool,
    #[arg(long = "threads", allow_hyphen_values = true)]
    threads: Option<String>,
    #[arg(long = "cluster")]
    cluster: bool,
    #[arg(long = "enable-tracking")]
    enable_tracking: bool,
    #[arg(short = 'k', allow_hyphen_values = true)]
    keepalive: Option<String>,
    #[arg(short = 'r', allow_hyphen_values = true)]
    keyspacelen: Option<String>,
    #[arg(short = 'P', allow_hyphen_values = true)]
    pipeline: Option<String>,
    #[arg(short = 'e')]
    show_errors: bool,
    #[arg(short = 'q')]
    quiet: bool,
    #[arg(long = "precision", allow_hyphen_values = true)]
    precision: Option<String>,
    #[arg(long = "csv")]
    csv: bool,
    #[arg(short = 'l')]
    loop_forever: bool,
    #[arg(short = 't', allow_hyphen_values = true)]
    tests: Option<String>,
    #[arg(short = 'I')]
    idle: bool,
    #[arg(short = 'x')]
    stdin_arg: bool,
    #[arg(long = "seed", allow_hyphen_values = true)]
    seed: Option<String>,
    #[command(flatten)]
    tls: TlsFlags,
    #[arg(long = "help")]
    help: bool,
    #[arg(short = 'v', long = "version")]
    version: bool,
    // ---- kvbench's additions ----
    #[arg(long = "rps", allow_hyphen_values = true)]
    rps: Option<String>,
    #[arg(long = "warmup", allow_hyphen_values = true)]
    warmup: Option<String>,
    #[arg(long = "busy-poll", allow_hyphen_values = true)]
    busy_poll: Option<String>,
    #[arg(long = "reply-timeout", allow_hyphen_values = true)]
    reply_timeout: Option<String>,
    #[arg(long = "json-out-file", allow_hyphen_values = true)]
    json_out_file: Option<PathBuf>,
    #[arg(long = "hdr-file-prefix", allow_hyphen_values = true)]
    hdr_file_prefix: Option<String>,
    /// The command to benchmark instead of the default suite: the first word that is
    /// not a flag and everything after it.
    #[arg(trailing_var_arg = true, num_args = 1.., value_parser = clap::value_parser!(OsString))]
    command: Vec<OsString>,
}

/// Where the server is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Endpoint {
    /// `-h` / `-p` (or `-u`).
    Tcp { host: String, port: u16 },
    /// `-s`.
    Unix(PathBuf),
}

/// Everything a redis-benchmark run needs, validated.
#[derive(Clone, Debug, PartialEq)]
pub struct BenchmarkSpec {
    /// The server (in cluster mode: the node to discover the cluster from).
    pub endpoint: Endpoint,
    /// `-a` / `--user` (or the URI's user info): sent as `AUTH [user] password` before
    /// anything else.
    pub auth: Option<Credentials>,
    /// `--dbnum` (or the URI's `/db`): `SELECT`ed on every connection when not 0.
    pub dbnum: u32,
    /// `-3`: `HELLO 3` on every connection.
    pub resp3: bool,
    /// TLS, when asked for.
    pub tls: Option<TlsSpec>,
    /// `-c`: connections.
    pub clients: u32,
    /// `-n`: requests per test, over all clients.
    pub requests: u64,
    /// `-d`: value size of the default tests.
    pub data_size: usize,
    /// `-k`: false means a new connection for every request.
    pub keep_alive: bool,
    /// `-r`: replace `__rand_int__` with a number below this (0: always 0). `None`: the
    /// placeholders are sent as they are.
    pub keyspace: Option<u64>,
    /// `-P`: requests each client sends before waiting for replies.
    pub pipeline: u32,
    /// `--threads`: 0 is redis-benchmark's default single event loop.
    pub threads: u32,
    /// `--cluster`.
    pub cluster: bool,
    /// `--enable-tracking`: `CLIENT TRACKING on` on every connection.
    pub enable_tracking: bool,
    /// `-q` / `--csv` / neither.
    pub output: OutputMode,
    /// `--precision`: significant figures of the latency histogram.
    pub precision: u8,
    /// `-l`: run the tests again and again until stopped.
    pub loop_forever: bool,
    /// `-I`: open the connections and wait.
    pub idle: bool,
    /// `-t`: which default tests run (unused with a command).
    pub tests: TestSelection,
    /// The command to benchmark instead of the default suite, one entry per argument
    /// (with `-x`, the last one is standard input's content).
    pub command: Option<Vec<Vec<u8>>>,
    /// `-x`: the last argument of [`command`](Self::command) came from standard input and
    /// stays out of the title.
    pub last_arg_from_stdin: bool,
    /// `--seed`: the random generator's seed; `None` seeds from the clock.
    pub seed: Option<u64>,
    /// `--rps`: the total request rate, spread over the clients.
    pub rps: Option<u64>,
    /// `--warmup`: unmeasured traffic before each test.
    pub warmup: Option<Duration>,
    /// `--busy-poll`: how long a worker polls without waiting before it sleeps.
    pub busy_poll: Option<Duration>,
    /// `--reply-timeout`: how long requests may wait with no reply before the run fails
    /// (`None`: for ever).
    pub reply_timeout: Option<Duration>,
    /// `--json-out-file`.
    pub json_out_file: Option<PathBuf>,
    /// `--hdr-file-prefix`.
    pub hdr_file_prefix: Option<String>,
    /// Messages to show on standard error before the run (a clamped value, `-e`, a
    /// cipher kvbench does not offer).
    pub warnings: Vec<String>,
}

/// The outcome of parsing: text to print and exit 0 (`--help`, `--version`), or a run.
#[derive(Debug)]
pub enum Parsed {
    /// Print this on standard output and exit 0.
    Print(String),
    /// Run the benchmark. `-x` is still to be applied with
    /// [`BenchmarkSpec::read_last_arg`].
    Run(Box<BenchmarkSpec>),
}

/// The clap command (flag names only: `--help` prints [`super::help::help_text`]), for
/// completions, the man page and the flag-walk test.
pub fn command() -> clap::Command {
    RawFlags::command()
}

/// Parse a redis-benchmark command line. `args` starts with the program name (ignored),
/// as `std::env::args_os` does.
pub fn parse<I, T>(args: I) -> Result<Parsed, Error>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    // Run through a link named redis-benchmark, the help's examples are that command;
    // as `kvbench redis-benchmark`, they are that (a bare `redis-benchmark` would be the
    // real tool, where it is installed).
    let linked = args
        .first()
        .and_then(|p| std::path::Path::new(p).file_name())
        .is_some_and(|name| name == "redis-benchmark");
    let program = if linked {
        "redis-benchmark"
    } else {
        "kvbench redis-benchmark"
    };
    super::whole_words::whole_words(&args)?;
    let matches = match RawFlags::command().try_get_matches_from(args) {
        Ok(m) => m,
        Err(e) => return Err(clap_error(&e)),
    };
    let raw = RawFlags::from_arg_matches(&matches).map_err(|e| clap_error(&e))?;
    if raw.help {
        return Ok(Parsed::Print(help_text(program)));
    }
    if raw.version {
        return Ok(Parsed::Print(version_text()));
    }
    validate(raw, &matches).map(|spec| Parsed::Run(Box::new(spec)))
}

impl BenchmarkSpec {
    /// With `-x`, append standard input's whole content (as is) as the command's last
    /// argument; without it, do nothing.
    pub fn read_last_arg(&mut self, mut input: impl Read) -> Result<(), Error> {
        if !self.last_arg_from_stdin {
            return Ok(());
        }
        let mut arg = Vec::new();
        input
            .read_to_end(&mut arg)
            .map_err(|e| Error::usage(format!("-x: cannot read standard input: {e}")))?;
        if let Some(command) = &mut self.command {
            command.push(arg);
        }
        Ok(())
    }
}

/// A clap error as one line, in redis-benchmark's words where it has them.
fn clap_error(e: &clap::Error) -> Error {
    let arg = match e.get(ContextKind::InvalidArg) {
        Some(ContextValue::String(s)) => s.split_whitespace().next().unwrap_or(s).to_string(),
        _ => String::new(),
    };
    let empty_value = matches!(
        e.get(ContextKind::InvalidValue),
        Some(ContextValue::String(v)) if v.is_empty()
    );
    match e.kind() {
        // Given, but empty (`-s ''`): not a missing argument.
        ErrorKind::InvalidValue if !arg.is_empty() && empty_value => {
            Error::usage(format!("{arg}: the value is empty (see --help)"))
        }
        ErrorKind::UnknownArgument | ErrorKind::InvalidValue | ErrorKind::NoEquals
            if !arg.is_empty() =>
        {
            Error::usage(format!(
                "Invalid option \"{arg}\" or option argument missing (see --help)"
            ))
        }
        _ => {
            let text = e.to_string();
            let first = text.lines().next().unwrap_or("invalid arguments");
            Error::usage(format!(
                "{} (see --help)",
                first.trim().trim_start_matches("error: ")
            ))
        }
    }
}

fn usage(msg: impl Into<String>) -> Error {
    Error::usage(msg)
}

/// The position of a flag's last occurrence, to let the later of `-u` and a separate
/// flag win, as redis-benchmark's left-to-right parsing does.
fn position(matches: &ArgMatches, id: &str) -> Option<usize> {
    matches.indices_of(id).and_then(|i| i.max())
}

/// The URI's value for a setting unless a separate flag came after the URI.
fn from_uri<T>(
    matches: &ArgMatches,
    uri_at: Option<usize>,
    id: &str,
    uri_value: Option<T>,
) -> Option<T> {
    match (uri_at, position(matches, id)) {
        (Some(u), Some(f)) if f > u => None,
        _ => uri_value,
    }
}

fn validate(raw: RawFlags, matches: &ArgMatches) -> Result<BenchmarkSpec, Error> {
    let mut warnings = Vec::new();
    let uri = match &raw.uri {
        Some(u) => Some(parse_uri(u).map_err(usage)?),
        None => None,
    };
    let uri_at = position(matches, "uri");
    let UriParts {
        tls: uri_tls,
        user: uri_user,
        password: uri_password,
        host: uri_host,
        port: uri_port,
        dbnum: uri_dbnum,
    } = uri.unwrap_or_default();

    // Connection.
    let host = match from_uri(matches, uri_at, "host", uri_host) {
        Some(h) => h,
        None => raw.host.clone().unwrap_or_else(|| "127.0.0.1".to_string()),
    };
    if host.is_empty() {
        return Err(usage("-h: the host name is empty"));
    }
    let port = match from_uri(matches, uri_at, "port", uri_port) {
        Some(p) => p,
        None => match &raw.port {
            Some(p) => integer(p, "-p")
                .ok()
                .and_then(|n| u16::try_from(n).ok())
                .filter(|&n| n > 0)
                .ok_or_else(|| {
                    usage(format!(
                        "invalid value '{p}' for -p: expected a port number (1-65535)"
                    ))
                })?,
            None => 6379,
        },
    };
    let endpoint = match &raw.socket {
        Some(path) => Endpoint::Unix(path.clone()),
        None => Endpoint::Tcp { host, port },
    };
    let password = from_uri(matches, uri_at, "password", uri_password).or(raw.password.clone());
    let user = from_uri(matches, uri_at, "user", uri_user).or(raw.user.clone());
    let auth = match (user, password) {
        (user, Some(password)) => Some(Credentials { user, password }),
        (Some(_), None) => {
            return Err(usage("--user needs -a (the password to authenticate with)"));
        }
        (None, None) => None,
    };
    let dbnum = match from_uri(matches, uri_at, "dbnum", uri_dbnum) {
        Some(db) => db,
        None => match &raw.dbnum {
            Some(d) => {
                let n = integer(d, "--dbnum")?;
                u32::try_from(n).map_err(|_| {
                    let why = if n < 0 {
                        "cannot be negative"
                    } else {
                        "is too large"
                    };
                    usage(format!("--dbnum {d}: a database number {why}"))
                })?
            }
            None => 0,
        },
    };
    if raw.cluster && dbnum != 0 {
        return Err(usage(format!(
            "--dbnum {dbnum} cannot be used with --cluster: a cluster has only database 0"
        )));
    }

    // Load.
    let clients = match &raw.clients {
        Some(c) => u32::try_from(positive(c, "-c", "the number of clients")?)
            .map_err(|_| usage(format!("-c {c}: too many clients")))?,
        None => 50,
    };
    let requests = match &raw.requests {
        Some(n) => positive(n, "-n", "the number of requests")?,
        None => 100_000,
    };
    let data_size = match &raw.data_size {
        // redis-benchmark raises -d to at least 1 byte.
        Some(d) => match integer(d, "-d")? {
            n if n > MAX_DATA_SIZE as i64 => {
                return Err(usage(format!(
                    "-d {d}: a value can be at most {MAX_DATA_SIZE} bytes (512 MiB, the \
                     largest value a Redis server accepts)"
                )));
            }
            n => n.max(1) as usize,
        },
        None => 3,
    };
    let keep_alive = match raw.keepalive.as_deref() {
        None => true,
        Some(k) => match integer(k, "-k")? {
            1 => true,
            0 => false,
            _ => {
                return Err(usage(format!(
                    "-k {k}: use 1 (keep alive) or 0 (reconnect)"
                )));
            }
        },
    };
    let keyspace = match &raw.keyspacelen {
        None => None,
        Some(r) => {
            // redis-benchmark turns a negative -r into 0.
            let n = integer(r, "-r")?.max(0) as u64;
            if n > MAX_KEYSPACE {
                return Err(usage(format!(
                    "-r {r}: __rand_int__ has 12 digits, so -r can be at most {MAX_KEYSPACE}"
                )));
            }
            Some(n)
        }
    };
    let pipeline = match &raw.pipeline {
        // redis-benchmark raises -P to at least 1; past MAX_PIPELINE each connection
        // would set aside room for more requests than any server answers in one go.
        Some(p) => match integer(p, "-P")? {
            n if n > i64::from(MAX_PIPELINE) => {
                return Err(usage(format!(
                    "-P {p}: at most {MAX_PIPELINE} requests can be pipelined per connection"
                )));
            }
            n => n.max(1) as u32,
        },
        None => 1,
    };
    let threads = match &raw.threads {
        None => 0,
        Some(t) => {
            let n = integer(t, "--threads")?;
            if n > i64::from(MAX_THREADS) {
                warnings.push(format!(
                    "WARNING: Too many threads, limiting threads to {MAX_THREADS}."
                ));
            }
            n.clamp(0, i64::from(MAX_THREADS)) as u32
        }
    };
    // One descriptor per connection (two under TLS, for the handshake's timer); refused
    // here, before any socket, if the open-file limit cannot be raised to fit.
    let per_connection = if raw.tls.tls || uri_tls { 2 } else { 1 };
    open_files::ensure(
        open_files::needed(
            u64::from(clients),
            u64::from(threads.max(1)),
            per_connection,
        ),
        &format!("-c {clients}"),
    )?;
    let precision = match &raw.precision {
        None => DEFAULT_PRECISION,
        Some(p) => match integer(p, "--precision")? {
            n if n < 0 => DEFAULT_PRECISION,
            // redis-benchmark crashes on 0 significant figures.
            0 => {
                return Err(usage(
                    "--precision 0: the latency histogram needs 1 to 4 significant figures",
                ));
            }
            n => n.min(i64::from(MAX_PRECISION)) as u8,
        },
    };
    let output = if raw.csv {
        OutputMode::Csv
    } else if raw.quiet {
        OutputMode::Quiet
    } else {
        OutputMode::Normal
    };
    let seed =
        match &raw.seed {
            Some(s) => Some(s.trim().parse::<u64>().map_err(|_| {
                usage(format!("invalid value '{s}' for --seed: expected a number"))
            })?),
            None => None,
        };
    if raw.show_errors {
        warnings.push(
            "WARNING: -e option has no effect. We now immediately exit on error to avoid false results."
                .to_string(),
        );
    }

    // What to run.
    let command: Option<Vec<Vec<u8>>> = if raw.command.is_empty() {
        None
    } else {
        Some(
            raw.command
                .iter()
                .cloned()
                .map(OsStringExt::into_vec)
                .collect(),
        )
    };
    if raw.stdin_arg && command.is_none() {
        return Err(usage(
            "-x reads the command's last argument from standard input: give a command",
        ));
    }
    let tests = match &raw.tests {
        // A command replaces the suite: redis-benchmark neither reads nor checks -t then.
        Some(_) if command.is_some() => {
            warnings.push("WARNING: Option -t is ignored.".to_string());
            TestSelection::All
        }
        Some(t) => {
            let (selection, unknown) = TestSelection::parse(t).map_err(usage)?;
            if !unknown.is_empty() {
                warnings.push(format!(
                    "WARNING: -t: no test named '{}', left out; tests: {}",
                    unknown.join("', '"),
                    known_names()
                ));
            }
            selection
        }
        None => TestSelection::All,
    };

    // kvbench's additions.
    let rps = raw.rps.as_deref().map(rps_value).transpose()?;
    let busy_poll = match &raw.busy_poll {
        Some(b) => parse_busy_poll(b, "--busy-poll").map_err(usage)?,
        None => None,
    };
    // A server that accepts and never answers must not hang the run (redis-benchmark
    // waits for ever); memtier's default, 0 for ever.
    let reply_timeout = match raw.reply_timeout.as_deref() {
        Some(t) => match t.trim().parse::<u64>() {
            Ok(secs) if secs <= 86_400 => (secs > 0).then(|| Duration::from_secs(secs)),
            _ => {
                return Err(usage(format!(
                    "invalid value '{t}' for --reply-timeout: expected whole seconds (0 to 86400)"
                )));
            }
        },
        None => Some(DEFAULT_REPLY_TIMEOUT),
    };
    let warmup = match &raw.warmup {
        Some(w) => {
            let secs: f64 = w
                .trim()
                .parse()
                .ok()
                .filter(|s: &f64| s.is_finite() && *s >= 0.0 && *s <= 86_400.0)
                .ok_or_else(|| {
                    usage(format!(
                        "invalid value '{w}' for --warmup: expected seconds (0 to 86400)"
                    ))
                })?;
            (secs > 0.0).then(|| Duration::from_secs_f64(secs))
        }
        None => None,
    };
    if raw.hdr_file_prefix.as_deref() == Some("") {
        return Err(usage("--hdr-file-prefix is empty"));
    }
    if raw
        .json_out_file
        .as_deref()
        .is_some_and(|p| p.as_os_str().is_empty())
    {
        return Err(usage("--json-out-file is empty"));
    }

    // redis-benchmark -I passes over its own load flags; kvbench's additions pace or
    // record requests, and idle connections make none: said, not silently dropped.
    if raw.idle {
        let given = [
            ("--rps", raw.rps.is_some()),
            ("--warmup", raw.warmup.is_some()),
            ("--busy-poll", raw.busy_poll.is_some()),
            ("--json-out-file", raw.json_out_file.is_some()),
            ("--hdr-file-prefix", raw.hdr_file_prefix.is_some()),
        ];
        if let Some((flag, _)) = given.iter().find(|(_, given)| *given) {
            return Err(usage(format!(
                "{flag} cannot be used with -I: idle connections send no requests to pace or record"
            )));
        }
    }

    let unix_socket = matches!(endpoint, Endpoint::Unix(_));
    let tls = raw.tls.spec(uri_tls, unix_socket, &mut warnings)?;

    Ok(BenchmarkSpec {
        endpoint,
        auth,
        dbnum,
        resp3: raw.resp3,
        tls,
        clients,
        requests,
        data_size,
        keep_alive,
        keyspace,
        pipeline,
        threads,
        cluster: raw.cluster,
        enable_tracking: raw.enable_tracking,
        output,
        precision,
        loop_forever: raw.loop_forever,
        idle: raw.idle,
        tests,
        command,
        last_arg_from_stdin: raw.stdin_arg,
        seed,
        rps,
        warmup,
        busy_poll,
        reply_timeout,
        json_out_file: raw.json_out_file,
        hdr_file_prefix: raw.hdr_file_prefix,
        warnings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(args: &[&str]) -> BenchmarkSpec {
        let argv = std::iter::once("redis-benchmark").chain(args.iter().copied());
        match parse(argv) {
            Ok(Parsed::Run(spec)) => *spec,
            Ok(Parsed::Print(text)) => panic!("{args:?} printed {text}"),
            Err(e) => panic!("{args:?}: {e}"),
        }
    }

    fn error(args: &[&str]) -> String {
        let argv = std::iter::once("redis-benchmark").chain(args.iter().copied());
        match parse(argv) {
            Err(e) => {
                let msg = e.message().to_string();
                assert!(!msg.contains('\n'), "{args:?}: not one line: {msg}");
                assert_eq!(e.exit_code(), 1);
                msg
            }
            Ok(other) => panic!("{args:?} was accepted: {other:?}"),
        }
    }

    #[test]
    fn defaults_are_redis_benchmarks() {
        let s = spec(&[]);
        assert_eq!(
            s.endpoint,
            Endpoint::Tcp {
                host: "127.0.0.1".into(),
                port: 6379
            }
        );
        assert_eq!(s.clients, 50);
        assert_eq!(s.requests, 100_000);
        assert_eq!(s.data_size, 3);
        assert_eq!(s.pipeline, 1);
        assert_eq!(s.threads, 0);
        assert_eq!(s.precision, 3);
        assert!(s.keep_alive && s.auth.is_none() && s.tls.is_none() && s.keyspace.is_none());
        assert_eq!(s.output, OutputMode::Normal);
        assert_eq!(s.tests, TestSelection::All);
        assert_eq!(s.command, None);
        assert!(s.warnings.is_empty());
    }

    #[test]
    fn every_tutorial_command_line_parses() {
        let s = spec(&["-t", "set,get", "-q", "-c", "1000"]);
        assert_eq!((s.clients, s.output), (1000, OutputMode::Quiet));
        assert_eq!(
            s.tests,
            TestSelection::Only(vec!["set".into(), "get".into()])
        );
        let s = spec(&["-t", "set", "-c", "100", "-n", "1000000"]);
        assert_eq!(s.requests, 1_000_000);
        let s = spec(&["-t", "set,get", "-d", "1000000", "-n", "1000", "-q"]);
        assert_eq!(s.data_size, 1_000_000);
        let s = spec(&["-t", "get,set", "-q", "-P", "8"]);
        assert_eq!(s.pipeline, 8);
        let s = spec(&["-t", "ping,set,get", "-n", "100000", "--csv"]);
        assert_eq!(s.output, OutputMode::Csv);
        let s = spec(&["-t", "set", "-n", "1000000", "-r", "100000000"]);
        assert_eq!(s.keyspace, Some(100_000_000));
        let s = spec(&[
            "-r",
            "10000",
            "-n",
            "10000",
            "eval",
            "return redis.call(\"ping\")",
            "0",
        ]);
        assert_eq!(
            s.command,
            Some(vec![
                b"eval".to_vec(),
                b"return redis.call(\"ping\")".to_vec(),
                b"0".to_vec()
            ])
        );
        let s = spec(&[
            "-r",
            "10000",
            "-n",
            "10000",
            "lpush",
            "mylist",
            "__rand_int__",
        ]);
        assert_eq!(s.command.unwrap().len(), 3);
        let s = spec(&["-q", "-p", "6379", "-h", "192.168.56.105", "-d", "1024"]);
        assert_eq!(
            s.endpoint,
            Endpoint::Tcp {
                host: "192.168.56.105".into(),
                port: 6379
            }
        );
        let s = spec(&[
            "-q",
            "-p",
            "17001",
            "-h",
            "192.168.56.105",
            "-d",
            "1024",
            "--cluster",
        ]);
        assert!(s.cluster);
        let s = spec(&[
            "-h",
            "192.168.1.1",
            "-p",
            "6379",
            "-n",
            "100000",
            "-c",
            "20",
        ]);
        assert_eq!(s.clients, 20);
        let s = spec(&["-n", "150", "INCRBYFLOAT", "mykey", "10.0"]);
        assert_eq!(s.command.unwrap()[0], b"INCRBYFLOAT");
    }

    #[test]
    fn the_command_takes_everything_after_its_first_word() {
        let s = spec(&["-n", "10", "set", "foo", "-1", "-q", "--csv"]);
        assert_eq!(
            s.command.unwrap(),
            [&b"set"[..], b"foo", b"-1", b"-q", b"--csv"].map(<[u8]>::to_vec)
        );
        assert_eq!(s.output, OutputMode::Normal);
    }

    #[test]
    fn values_may_start_with_a_dash_and_the_last_one_wins() {
        let s = spec(&["-a", "-secret", "-c", "5", "-c", "7"]);
        assert_eq!(s.auth.unwrap().password, "-secret");
        assert_eq!(s.clients, 7);
    }

    #[test]
    fn redis_benchmark_clamps() {
        assert_eq!(spec(&["-d", "0"]).data_size, 1);
        assert_eq!(spec(&["-d", "-7"]).data_size, 1);
        assert_eq!(spec(&["-d", "536870912"]).data_size, MAX_DATA_SIZE);
        assert!(error(&["-d", "536870913"]).contains("at most 536870912 bytes"));
        assert_eq!(spec(&["-P", "0"]).pipeline, 1);
        assert_eq!(spec(&["-P", "-3"]).pipeline, 1);
        assert!(error(&["-P", "65537"]).contains("at most 65536"));
        assert_eq!(spec(&["-r", "-1"]).keyspace, Some(0));
        assert_eq!(spec(&["--precision", "-1"]).precision, 3);
        assert_eq!(spec(&["--precision", "9"]).precision, 4);
        assert_eq!(spec(&["--threads", "-2"]).threads, 0);
        let s = spec(&["--threads", "600"]);
        assert_eq!(s.threads, 500);
        assert_eq!(
            s.warnings,
            ["WARNING: Too many threads, limiting threads to 500."]
        );
        let s = spec(&["-e"]);
        assert!(s.warnings[0].starts_with("WARNING: -e option has no effect"));
        // -t: a name beside known ones is left out with a warning (redis-benchmark skips
        // it silently); with a command -t is not even read.
        let s = spec(&["-t", "set,hmset"]);
        assert!(s.warnings[0].starts_with("WARNING: -t: no test named 'hmset', left out"));
        let s = spec(&["-t", "nosuch", "set", "k", "v"]);
        assert_eq!(s.warnings, ["WARNING: Option -t is ignored."]);
    }

    #[test]
    fn output_mode_csv_wins_over_quiet() {
        assert_eq!(spec(&["-q", "--csv"]).output, OutputMode::Csv);
    }

    #[test]
    fn switches() {
        let s = spec(&[
            "-3",
            "--cluster",
            "--enable-tracking",
            "-l",
            "-I",
            "-k",
            "0",
            "--seed",
            "42",
        ]);
        assert!(s.resp3 && s.cluster && s.enable_tracking && s.loop_forever && s.idle);
        assert!(!s.keep_alive);
        assert_eq!(s.seed, Some(42));
        let s = spec(&["-s", "/tmp/redis.sock", "--dbnum", "2"]);
        assert_eq!(s.endpoint, Endpoint::Unix("/tmp/redis.sock".into()));
        assert_eq!(s.dbnum, 2);
    }

    #[test]
    fn uri_and_flags_later_one_wins() {
        let s = spec(&["-u", "redis://bob:pw@10.0.0.1:7000/3"]);
        assert_eq!(
            s.endpoint,
            Endpoint::Tcp {
                host: "10.0.0.1".into(),
                port: 7000
            }
        );
        let auth = s.auth.unwrap();
        assert_eq!(
            (auth.user.as_deref(), auth.password.as_str()),
            (Some("bob"), "pw")
        );
        assert_eq!(s.dbnum, 3);
        let s = spec(&["-u", "redis://10.0.0.1:7000", "-p", "7001"]);
        assert_eq!(
            s.endpoint,
            Endpoint::Tcp {
                host: "10.0.0.1".into(),
                port: 7001
            }
        );
        let s = spec(&["-p", "7001", "-u", "redis://10.0.0.1:7000"]);
        assert_eq!(
            s.endpoint,
            Endpoint::Tcp {
                host: "10.0.0.1".into(),
                port: 7000
            }
        );
        let s = spec(&["-a", "flagpw", "-u", "redis://10.0.0.1"]);
        assert_eq!(s.auth.unwrap().password, "flagpw");
        let s = spec(&["-u", "rediss://h:6380", "--insecure"]);
        assert!(s.tls.unwrap().insecure);
    }

    #[test]
    fn user_needs_a_password() {
        assert!(error(&["--user", "bob"]).contains("--user needs -a"));
        let s = spec(&["--user", "bob", "-a", "pw"]);
        assert_eq!(s.auth.unwrap().user.as_deref(), Some("bob"));
    }

    #[test]
    fn bad_values_are_one_line_errors() {
        for (args, says) in [
            (
                &["-c"][..],
                "Invalid option \"-c\" or option argument missing",
            ),
            (
                &["--foo"][..],
                "Invalid option \"--foo\" or option argument missing",
            ),
            (&["-Z"][..], "Invalid option \"-Z\""),
            // Whole words, as redis-benchmark matches them: no grouping, no `-x=v`.
            (&["-q=1"][..], "Invalid option \"-q=1\""),
            (&["-qn", "5"][..], "Invalid option \"-qn\""),
            (&["-n5"][..], "Invalid option \"-n5\""),
            (&["-I3"][..], "Invalid option \"-I3\""),
            (&["-s", ""][..], "-s: the value is empty"),
            (&["--csv=1"][..], "Invalid option \"--csv=1\""),
            (&["-c", "abc"][..], "invalid value 'abc' for -c"),
            (
                &["-c", "0"][..],
                "-c 0: the number of clients must be at least 1",
            ),
            (
                &["-n", "0"][..],
                "-n 0: the number of requests must be at least 1",
            ),
            (&["-n", "-5"][..], "must be at least 1"),
            (
                &["-n", "99999999999999999999"][..],
                "invalid value '99999999999999999999' for -n: an integer too large to use",
            ),
            (&["-p", "70000"][..], "expected a port number"),
            (&["-p", "abc"][..], "expected a port number"),
            (
                &["-k", "5"][..],
                "-k 5: use 1 (keep alive) or 0 (reconnect)",
            ),
            (&["-r", "x"][..], "invalid value 'x' for -r"),
            (&["-r", "10000000000000"][..], "at most 1000000000000"),
            (&["--precision", "0"][..], "--precision 0"),
            (&["--dbnum", "-1"][..], "cannot be negative"),
            (
                &["--dbnum", "4294967296"][..],
                "a database number is too large",
            ),
            (
                &["--cluster", "--dbnum", "2"][..],
                "cannot be used with --cluster",
            ),
            (&["-t", "foo"][..], "-t: unknown test 'foo'"),
            (&["-t", ","][..], "names no test"),
            (&["-x"][..], "-x reads the command's last argument"),
            (&["-u", "http://h"][..], "Invalid URI scheme"),
            (&["--seed", "x"][..], "--seed"),
            (&["--rps", "0"][..], "--rps 0"),
            (
                &["--rps", "100000001"][..],
                "--rps 100000001: the request rate must be at most 100000000 per second",
            ),
            (&["--warmup", "-1"][..], "--warmup"),
            (&["--hdr-file-prefix", ""][..], "--hdr-file-prefix is empty"),
            (&["-I", "--rps", "10"][..], "--rps cannot be used with -I"),
            (
                &["-I", "--warmup", "1"][..],
                "--warmup cannot be used with -I",
            ),
            (
                &["-I", "--busy-poll=0"][..],
                "--busy-poll cannot be used with -I",
            ),
            (
                &["-I", "--json-out-file", "i.json"][..],
                "--json-out-file cannot",
            ),
            (
                &["-I", "--hdr-file-prefix", "ih"][..],
                "--hdr-file-prefix cannot",
            ),
            (
                &["--cacert", "ca.pem"][..],
                "--cacert applies to TLS connections",
            ),
            (&["--tls", "-s", "/tmp/s"][..], "TCP only"),
            (&["--tls", "--cert", "c.pem"][..], "--cert needs --key"),
            (
                &["--tls", "--tls-ciphers", "AES128-SHA256"][..],
                "leaves no TLS 1.2 cipher",
            ),
            (
                &["--tls", "--tls-ciphersuites", "TLS_AES_128_CCM_SHA256"][..],
                "leaves no TLS 1.3 suite",
            ),
        ] {
            let msg = error(args);
            assert!(msg.contains(says), "{args:?}: {msg}");
        }
    }

    #[test]
    fn tls_options() {
        let s = spec(&[
            "--tls",
            "--sni",
            "cache.example",
            "--cacert",
            "ca.pem",
            "--cacertdir",
            "/etc/ssl/certs",
            "--cert",
            "c.pem",
            "--key",
            "c.key",
            "--tls-ciphers",
            "DEFAULT:-AES128-SHA256",
            "--tls-ciphersuites",
            "TLS_AES_128_GCM_SHA256",
        ]);
        let tls = s.tls.unwrap();
        assert_eq!(tls.sni.as_deref(), Some("cache.example"));
        assert_eq!(tls.cert, Some(PathBuf::from("c.pem")));
        let suites = tls.cipher_suites.unwrap();
        assert_eq!(suites.len(), 7, "one TLS 1.3 suite and six TLS 1.2 ones");
        assert!(s.warnings.is_empty(), "{:?}", s.warnings);
        assert_eq!(spec(&["--tls"]).tls.unwrap().cipher_suites, None);
    }

    #[test]
    fn stdin_argument() {
        let mut s = spec(&["-x", "set", "foo"]);
        assert!(s.last_arg_from_stdin);
        s.read_last_arg(&b"hello\nworld\n"[..]).unwrap();
        assert_eq!(s.command.unwrap()[2], b"hello\nworld\n");
        let mut s = spec(&["set", "foo", "bar"]);
        s.read_last_arg(&b"ignored"[..]).unwrap();
        assert_eq!(s.command.unwrap().len(), 3);
    }

    #[test]
    fn kvbench_additions() {
        let s = spec(&[
            "--rps",
            "5000",
            "--warmup",
            "1.5",
            "--json-out-file",
            "r.json",
            "--hdr-file-prefix",
            "lat",
        ]);
        assert_eq!(s.rps, Some(5000));
        assert_eq!(s.warmup, Some(Duration::from_millis(1500)));
        assert_eq!(s.json_out_file, Some(PathBuf::from("r.json")));
        assert_eq!(s.hdr_file_prefix.as_deref(), Some("lat"));
        assert_eq!(spec(&["--warmup", "0"]).warmup, None);
    }

    #[test]
    fn help_and_version_print() {
        let print = |args: &[&str]| match parse(
            std::iter::once("redis-benchmark").chain(args.iter().copied()),
        ) {
            Ok(Parsed::Print(text)) => text,
            other => panic!("{args:?}: {other:?}"),
        };
        let help = print(&["--help"]);
        assert!(help.starts_with("Usage: redis-benchmark [OPTIONS] [COMMAND ARGS...]\n"));
        assert!(help.contains("\n   $ redis-benchmark -t set -n 1000000"));
        // As `kvbench redis-benchmark` (the program name is kvbench's), the help says so.
        let Ok(Parsed::Print(ours)) = parse(["/usr/bin/kvbench", "--help"]) else {
            panic!("--help")
        };
        assert!(ours.starts_with("Usage: kvbench redis-benchmark [OPTIONS] [COMMAND ARGS...]\n"));
        assert!(ours.contains("\n   $ kvbench redis-benchmark -t set -n 1000000"));
        assert!(print(&["-n", "5", "--help"]).starts_with("Usage:"));
        assert!(print(&["--version"]).contains("kvbench"));
        assert!(print(&["-v"]).contains("redis-benchmark"));
    }

    #[test]
    fn help_lists_every_flag() {
        let help = help_text("redis-benchmark");
        for arg in RawFlags::command().get_arguments() {
            if arg.is_positional() {
                continue;
            }
            let spelled = match (arg.get_long(), arg.get_short()) {
                (Some(long), _) => format!(" --{long}"),
                (None, Some(short)) => format!(" -{short} "),
                (None, None) => unreachable!("every flag has a spelling"),
            };
            assert!(help.contains(&spelled), "--help does not list {spelled}");
        }
    }

    #[test]
    fn arguments_need_not_be_utf8() {
        use std::os::unix::ffi::OsStringExt;
        let argv = vec![
            OsString::from("redis-benchmark"),
            OsString::from("set"),
            OsString::from_vec(vec![0xff, 0xfe]),
        ];
        let Ok(Parsed::Run(s)) = parse(argv) else {
            panic!("not parsed")
        };
        assert_eq!(s.command.unwrap()[1], [0xff, 0xfe]);
    }
}
