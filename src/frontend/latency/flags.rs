//! `kvbench latency`'s own flags, parsed as typed (clap) and validated into [`Options`]
//! that cannot hold a bad value; every usage error is one line found here.
//!
//! The connection flags (host, port, unix socket, `-a`, `-u`, TLS) are the shared
//! [`ConnectionArgs`], flattened in, and respelled as redis-cli spells them: `-s` is the
//! Unix socket (not the host, as in memtier), `--pass` is `-a`. `--user`, `-n DB` and a
//! no-op `--latency` (redis-cli's) are this front end's own.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use clap::error::ErrorKind;
use clap::parser::ValueSource;
use clap::{ArgAction, CommandFactory, FromArgMatches, Parser};

use super::render::{Format, Precision, Style};
use super::spectrum::Palette;
use super::windows::Mode;
use crate::error::Error;
use crate::frontend::common::ConnectionArgs;
use crate::frontend::common::busy_poll::{MAX_BUSY_POLL_US, parse_busy_poll};
use crate::frontend::common::usage::one_line;
use crate::frontend::intrinsic_latency::flags::REDIS_CLI_FLAG as INTRINSIC_FLAG;
use crate::protocol::Protocol;

/// The environment variable redis-cli reads a password from when `-a` is not given.
const REDISCLI_AUTH: &str = "REDISCLI_AUTH";

/// redis-cli's one-shot window and `--latency-dist` window: one second.
const DEFAULT_WINDOW_US: u64 = 1_000_000;
/// redis-cli's `--latency-history` window: 15 seconds.
const DEFAULT_HISTORY_WINDOW_US: u64 = 15_000_000;
/// Longest window accepted: a day (a longer one is a typo, and would overflow nothing but
/// patience).
const MAX_WINDOW_US: u64 = 86_400_000_000;
/// How often the probe sends its request, as redis-cli does: every 10 ms.
pub const SAMPLE_PERIOD_US: u64 = 10_000;

/// The flags as typed.
#[derive(Parser, Debug)]
#[command(
    name = "kvbench latency",
    bin_name = "kvbench latency",
    about = "Measure a server's round-trip latency with one request every 10 ms, as \
             redis-cli --latency does: PING for Redis, version for memcached.",
    long_about = None,
    version = env!("CARGO_PKG_VERSION"),
    // -h is the host, as in every kvbench front end (and redis-cli).
    disable_help_flag = true,
    after_help = "On a terminal the figures are redrawn in place until Ctrl-C. With --raw, \
                  --csv or --json, or when stdout is not a terminal, one window is sampled \
                  (1 s, or -i), one line printed, and the probe ends.\n\
                  Figures are whole milliseconds unless --precision=us (min rounded down, \
                  max up; avg is the exact mean). As redis-cli, the probe waits 10 ms after \
                  each reply; --open-loop sends on a fixed 10 ms schedule instead and times \
                  each request from when it was due.\n\
                  Without -a the password is read from KVBENCH_AUTH, else from redis-cli's \
                  REDISCLI_AUTH (taken whole, colons included, as redis-cli takes it)."
)]
struct Flags {
    /// Server, socket, credentials, URI and TLS, as the other front ends spell them.
    #[command(flatten)]
    conn: ConnectionArgs,

    /// ACL user name for -a PASSWORD (redis-cli's --user).
    #[arg(long, value_name = "USER", allow_hyphen_values = true)]
    user: Option<String>,

    /// Database number to SELECT before probing (redis-cli's -n; Redis only).
    #[arg(short = 'n', value_name = "DB", allow_hyphen_values = true, value_parser = parse_db)]
    db: Option<u32>,

    /// redis-cli's --latency, accepted and ignored: kvbench latency is that mode already.
    #[arg(long)]
    latency: bool,

    /// redis-cli's --no-auth-warning, accepted and ignored: kvbench never warns about -a.
    #[arg(long)]
    no_auth_warning: bool,

    /// Trust every CA certificate file in this directory too (redis-cli's --cacertdir; with
    /// --tls or a rediss:// URI).
    #[arg(long, value_name = "DIR", allow_hyphen_values = true)]
    cacertdir: Option<String>,

    /// redis-cli's -c (cluster mode), accepted and ignored: it follows -MOVED and -ASK,
    /// which PING never gets, so `redis-cli -c ... --latency` probes any node as it is.
    #[arg(short = 'c')]
    cluster: bool,

    /// Read the password as one line from standard input (on a terminal after the prompt
    /// "Please input password: ", each character shown as *), as redis-cli --askpass; it
    /// wins over -a and the variables.
    #[arg(long)]
    askpass: bool,

    /// Send a probe every 10 ms on a fixed schedule and time each from when it was due,
    /// so a stall shows in every probe it delayed (default: redis-cli's send, reply,
    /// wait 10 ms).
    #[arg(long)]
    open_loop: bool,

    /// Print help.
    #[arg(long, action = ArgAction::Help)]
    help: Option<bool>,

    /// Window length in seconds (decimals allowed): the one-shot window (default 1), each
    /// --history line (default 15) or each --dist line (default 1).
    #[arg(
        short = 'i',
        long = "interval",
        value_name = "SECONDS",
        value_parser = parse_interval,
        allow_negative_numbers = true
    )]
    interval: Option<u64>,

    /// A line per window, figures reset each window (redis-cli --latency-history).
    #[arg(long, visible_alias = "latency-history", conflicts_with = "dist")]
    history: bool,

    /// The latency spectrum per window in xterm-256 colours (redis-cli --latency-dist).
    #[arg(long, visible_alias = "latency-dist")]
    dist: bool,

    /// With --dist: shades of grey only.
    #[arg(long, requires = "dist")]
    mono: bool,

    /// One window, then `min max avg count` and exit.
    #[arg(long, group = "format", conflicts_with = "dist")]
    raw: bool,

    /// The human format (redrawn in place) even when stdout is not a terminal.
    #[arg(long, group = "format", conflicts_with = "dist")]
    no_raw: bool,

    /// One window, then `min,max,avg,count` and exit.
    #[arg(long, group = "format", conflicts_with = "dist")]
    csv: bool,

    /// One window, then {"min": …, "max": …, "avg": …, "count": …} and exit.
    #[arg(long, group = "format", conflicts_with = "dist")]
    json: bool,

    /// Unit of the figures: ms (whole milliseconds, as redis-cli) or us (microseconds).
    #[arg(long, value_name = "ms|us", default_value = "ms", value_parser = ["ms", "us"])]
    precision: String,

    /// Percentiles to append to every line, e.g. 50,99,99.9.
    #[arg(long, value_name = "LIST", value_parser = parse_percentiles)]
    percentiles: Option<PercentileList>,

    /// Write the distribution of all samples to this file when the probe ends
    /// (HdrHistogram percentile text, milliseconds).
    #[arg(long, value_name = "PATH")]
    hdr_file: Option<PathBuf>,

    /// Before sleeping for a reply, poll without waiting for up to USEC microseconds (0:
    /// off, the default): a reply that comes within it is timed at once, not after the
    /// thread wakes up from idle (tens of microseconds on a VM). Costs a core meanwhile.
    #[arg(long, value_name = "USEC", allow_hyphen_values = true, value_parser = parse_busy_poll_flag)]
    busy_poll: Option<BusyPoll>,

    /// Protocol: redis, resp2, resp3 (probe: PING), memcache_text, memcache_binary (probe:
    /// version).
    #[arg(
        short = 'P',
        long,
        value_name = "PROTOCOL",
        default_value = "redis",
        value_parser = parse_protocol
    )]
    protocol: Protocol,

    /// RESP3 (HELLO 3 before the first probe), as redis-cli -3: the same as -P resp3.
    #[arg(short = '3', conflicts_with_all = ["protocol", "resp2"])]
    resp3: bool,

    /// RESP2, as redis-cli -2: the same as -P redis (no HELLO; the server's default).
    #[arg(short = '2', conflicts_with = "protocol")]
    resp2: bool,
}

/// A parsed `--busy-poll` (`None` inside: 0, off).
#[derive(Clone, Copy, Debug)]
struct BusyPoll(Option<Duration>);

/// clap words the flag and the value itself: the reason is what is left to say.
fn parse_busy_poll_flag(raw: &str) -> Result<BusyPoll, String> {
    parse_busy_poll(raw, "--busy-poll")
        .map(BusyPoll)
        .map_err(|_| format!("expected microseconds from 0 to {MAX_BUSY_POLL_US}"))
}

/// A parsed `--percentiles` list (clap keeps a `Vec` field for repeated flags).
#[derive(Clone, Debug)]
struct PercentileList(Vec<f64>);

/// The request the probe sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Probe {
    /// Redis: `PING`, answered `+PONG`.
    Ping,
    /// memcached (text or binary): `version`.
    Version,
}

/// Validated `kvbench latency` options (the connection flags checked when the probe's
/// plan is built).
#[derive(Clone, Debug)]
pub struct Options {
    /// Where to connect, as given.
    pub conn: ConnectionArgs,
    /// `--user`: the ACL user `-a`'s password belongs to.
    pub user: Option<String>,
    /// The password came from `REDISCLI_AUTH` or `--askpass`, which redis-cli takes whole
    /// (colons and all), not as kvbench's `USER:PASSWORD`.
    pub whole_password: bool,
    /// `--askpass`: read the password from standard input before connecting (it then
    /// replaces `-a`'s, whole, as redis-cli takes it).
    pub askpass: bool,
    /// `--cacertdir`: a directory whose CA certificates are trusted too (TLS only).
    pub cacertdir: Option<String>,
    /// `-n`: the database to `SELECT`.
    pub db: Option<u32>,
    /// `--open-loop`: a fixed schedule, latency from each probe's due time.
    pub open_loop: bool,
    /// `-i` in microseconds, if given.
    pub interval_us: Option<u64>,
    pub history: bool,
    pub dist: bool,
    /// `--raw`, `--csv`, `--json` or `--no-raw` (standard), if one was given.
    pub format: Option<Format>,
    pub precision: Precision,
    pub percentiles: Vec<f64>,
    pub palette: Palette,
    pub hdr_file: Option<PathBuf>,
    /// `--busy-poll`: how long the worker polls without waiting before it sleeps.
    pub busy_poll: Option<Duration>,
    pub protocol: Protocol,
}

/// What the probe does, once it is known whether stdout is a terminal.
#[derive(Clone, Debug, PartialEq)]
pub struct Resolved {
    pub mode: Mode,
    /// Window length in microseconds.
    pub interval_us: u64,
    pub style: Style,
}

/// What the command line asks for.
#[derive(Debug)]
pub enum Parsed {
    /// Probe with these options.
    Run(Box<Options>),
    /// Print this text to stdout and exit 0 (`--help`).
    Print(String),
}

impl Options {
    /// The mode, window and style for a stdout that is (or is not) a terminal: as in
    /// redis-cli, a stdout that is not a terminal means raw output unless `--no-raw`.
    pub fn resolve(&self, stdout_is_tty: bool) -> Resolved {
        let default_format = if stdout_is_tty {
            Format::Standard
        } else {
            Format::Raw
        };
        let format = self.format.unwrap_or(default_format);
        let mode = if self.dist {
            Mode::Dist
        } else if self.history {
            Mode::History {
                redraw: format == Format::Standard,
            }
        } else if format == Format::Standard {
            Mode::Live
        } else {
            Mode::Once
        };
        let default_interval = match mode {
            Mode::History { .. } => DEFAULT_HISTORY_WINDOW_US,
            Mode::Live | Mode::Once | Mode::Dist => DEFAULT_WINDOW_US,
        };
        Resolved {
            mode,
            interval_us: self.interval_us.unwrap_or(default_interval),
            style: Style {
                format,
                precision: self.precision,
                percentiles: self.percentiles.clone(),
                palette: self.palette,
            },
        }
    }

    /// The request to send every [`SAMPLE_PERIOD_US`].
    pub fn probe(&self) -> Probe {
        match self.protocol {
            Protocol::Redis | Protocol::Resp2 | Protocol::Resp3 => Probe::Ping,
            Protocol::MemcacheText | Protocol::MemcacheBinary => Probe::Version,
        }
    }
}

/// `-n DB`: a database number, said so when it is not one (not Rust's "invalid digit").
fn parse_db(raw: &str) -> Result<u32, String> {
    raw.trim()
        .parse()
        .map_err(|_| "expected a database number (0 or more)".to_string())
}

/// The clap command, for `--help`, completions, the man page and the flag-walk test.
pub fn command() -> clap::Command {
    Flags::command()
        // redis-cli's -s is the Unix socket; the shared arguments make it the host
        // (memtier's spelling), so move it.
        .mut_arg("host", |a| {
            // One server: no pool here, so not the shared text's --distribution sentence.
            a.visible_short_alias(None)
                .help("Server address (default: localhost)")
        })
        .mut_arg("unix_socket", |a| a.visible_short_alias('s'))
        .mut_arg("authenticate", |a| a.visible_alias("pass"))
        // redis-cli's spelling of the same switch.
        .mut_arg("tls_skip_verify", |a| a.visible_alias("insecure"))
}

/// Whether the command line holds redis-cli's `--intrinsic-latency SECONDS` as a flag (not
/// as the value of another, such as `-a`'s password): redis-cli runs that test for the
/// line `redis-cli --intrinsic-latency 30`, so `kvbench latency --intrinsic-latency 30`
/// hands its argv to `kvbench intrinsic-latency`, whose own flags then apply.
pub fn asks_intrinsic_latency(args: &[OsString]) -> bool {
    let command = command();
    let mut words = args.iter().skip(1);
    while let Some(word) = words.next() {
        let Some(word) = word.to_str() else { continue };
        if word == "--" {
            return false;
        }
        if word == INTRINSIC_FLAG || word.starts_with(&format!("{INTRINSIC_FLAG}=")) {
            return true;
        }
        if takes_next_word(&command, word) {
            words.next();
        }
    }
    false
}

/// Whether `word` is a flag of `command` whose value is the next word (`-a PASSWORD`, not
/// `-aPASSWORD` or `--pass=PASSWORD`).
fn takes_next_word(command: &clap::Command, word: &str) -> bool {
    let found = if let Some(long) = word.strip_prefix("--") {
        command.get_arguments().find(|a| {
            a.get_long() == Some(long) || a.get_all_aliases().is_some_and(|all| all.contains(&long))
        })
    } else if let Some(short) = word.strip_prefix('-') {
        let mut chars = short.chars();
        match (chars.next(), chars.next()) {
            (Some(c), None) => command.get_arguments().find(|a| {
                a.get_short() == Some(c)
                    || a.get_all_short_aliases()
                        .is_some_and(|all| all.contains(&c))
            }),
            _ => None,
        }
    } else {
        None
    };
    found.is_some_and(|a| a.get_action().takes_values())
}

/// Parses `kvbench latency`'s argv (the first item is the program name, ignored).
pub fn parse(args: Vec<OsString>) -> Result<Parsed, Error> {
    let matches = match command().try_get_matches_from(args) {
        Ok(m) => m,
        Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => {
            return Ok(Parsed::Print(e.to_string()));
        }
        Err(e) => return Err(one_line(&e)),
    };
    let mut flags = Flags::from_arg_matches(&matches).map_err(|e| one_line(&e))?;
    // clap leaves `requires` unchecked beside an argument that conflicts with it
    // (`--mono --raw`): a flag that would do nothing is refused here too.
    if flags.mono && !flags.dist {
        return Err(Error::usage(
            "the following required arguments were not provided: --dist; see --help",
        ));
    }
    // The spectrum has its own scale: the unit only shows in --percentiles' figures.
    let precision_given = matches.value_source("precision") == Some(ValueSource::CommandLine);
    if flags.dist && precision_given && flags.percentiles.is_none() {
        return Err(Error::usage(
            "--precision has no effect with --dist unless --percentiles is given (the \
             spectrum has its own scale); drop it; see --help",
        ));
    }
    let mut whole_password = false;
    if flags.conn.authenticate.is_none() {
        // redis-cli's own variable for the password, after -a and KVBENCH_AUTH.
        flags.conn.authenticate = std::env::var(REDISCLI_AUTH).ok().filter(|a| !a.is_empty());
        whole_password = flags.conn.authenticate.is_some();
    }
    let format = if flags.raw {
        Some(Format::Raw)
    } else if flags.csv {
        Some(Format::Csv)
    } else if flags.json {
        Some(Format::Json)
    } else if flags.no_raw {
        Some(Format::Standard)
    } else {
        None
    };
    if format == Some(Format::Standard) && flags.interval.is_some() && !flags.history && !flags.dist
    {
        // The live view's figures run from the start until Ctrl-C: no window to set.
        return Err(Error::usage(
            "-i sets a window, and --no-raw without --history or --dist has none (its \
             figures run from the start until Ctrl-C); drop -i, or add --history; see --help",
        ));
    }
    Ok(Parsed::Run(Box::new(Options {
        conn: flags.conn,
        user: flags.user,
        whole_password,
        askpass: flags.askpass,
        cacertdir: flags.cacertdir,
        db: flags.db,
        open_loop: flags.open_loop,
        interval_us: flags.interval,
        history: flags.history,
        dist: flags.dist,
        format,
        precision: if flags.precision == "us" {
            Precision::Us
        } else {
            Precision::Ms
        },
        percentiles: flags.percentiles.map(|p| p.0).unwrap_or_default(),
        palette: if flags.mono {
            Palette::Mono
        } else {
            Palette::Colour
        },
        hdr_file: flags.hdr_file,
        busy_poll: flags.busy_poll.and_then(|b| b.0),
        // redis-cli's -2 sends no HELLO, as -P redis; -P resp2 would send HELLO 2.
        protocol: if flags.resp3 {
            Protocol::Resp3
        } else if flags.resp2 {
            Protocol::Redis
        } else {
            flags.protocol
        },
    })))
}

/// `-i SECONDS` (decimals allowed) into microseconds.
fn parse_interval(raw: &str) -> Result<u64, String> {
    let seconds: f64 = raw
        .trim()
        .parse()
        .map_err(|_| "not a number of seconds".to_string())?;
    // Infinity (`inf`, `1e999`) is past the day below and is refused as such.
    if seconds.is_nan() || seconds <= 0.0 {
        return Err("the window must be longer than 0 seconds".to_string());
    }
    let us = (seconds * 1e6).round();
    if us < 1.0 {
        return Err("the window must be at least 1 microsecond".to_string());
    }
    if us > MAX_WINDOW_US as f64 {
        return Err("the window may be at most a day (86400 seconds)".to_string());
    }
    Ok(us as u64)
}

/// `--percentiles=50,99,99.9` into numbers in (0, 100].
fn parse_percentiles(raw: &str) -> Result<PercentileList, String> {
    let mut list = Vec::new();
    for item in raw.split(',') {
        let item = item.trim();
        let p: f64 = item
            .parse()
            .map_err(|_| format!("'{item}' is not a percentile (use e.g. 50,99,99.9)"))?;
        if !(p > 0.0 && p <= 100.0) {
            return Err(format!(
                "'{item}' is not a percentile above 0 and at most 100"
            ));
        }
        // A repeat (`50,50.0`) would name one figure twice: a JSON key given twice.
        if !list.contains(&p) {
            list.push(p);
        }
    }
    Ok(PercentileList(list))
}

/// `-P` as memtier spells it.
fn parse_protocol(raw: &str) -> Result<Protocol, String> {
    Protocol::from_name(raw)
        .ok_or_else(|| "use redis, resp2, resp3, memcache_text or memcache_binary".to_string())
}

/// The options of a `kvbench latency` command line (without the program name) that must
/// parse: for the tests of this front end's modules.
#[cfg(test)]
pub(super) fn parsed_options(args: &[&str]) -> Options {
    let argv = std::iter::once("kvbench latency")
        .chain(args.iter().copied())
        .map(OsString::from)
        .collect();
    match parse(argv) {
        Ok(Parsed::Run(o)) => *o,
        other => panic!("{args:?}: {other:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::parsed_options as options;
    use super::*;

    fn error(args: &[&str]) -> String {
        let argv = std::iter::once("kvbench latency")
            .chain(args.iter().copied())
            .map(OsString::from)
            .collect();
        match parse(argv) {
            Err(e) => e.to_string(),
            other => panic!("{args:?} should fail: {other:?}"),
        }
    }

    #[test]
    fn intrinsic_latency_is_found_as_a_flag_only() {
        let asks = |args: &[&str]| {
            let argv: Vec<OsString> = std::iter::once("kvbench latency")
                .chain(args.iter().copied())
                .map(OsString::from)
                .collect();
            asks_intrinsic_latency(&argv)
        };
        assert!(asks(&["--intrinsic-latency", "30"]));
        assert!(asks(&["--intrinsic-latency=30"]));
        assert!(asks(&["-p", "6379", "--intrinsic-latency", "30"]));
        // The value of another flag, or past `--`, is not the flag.
        assert!(!asks(&["-a", "--intrinsic-latency"]));
        assert!(!asks(&["--pass", "--intrinsic-latency"]));
        assert!(!asks(&["--", "--intrinsic-latency"]));
        assert!(!asks(&["--latency", "-i", "1"]));
    }

    #[test]
    fn defaults_follow_redis_cli() {
        let o = options(&[]);
        assert_eq!(o.probe(), Probe::Ping);
        let tty = o.resolve(true);
        assert_eq!(tty.mode, Mode::Live);
        assert_eq!(tty.style.format, Format::Standard);
        assert_eq!(tty.style.precision, Precision::Ms);
        let piped = o.resolve(false);
        assert_eq!(piped.mode, Mode::Once);
        assert_eq!(piped.style.format, Format::Raw);
        assert_eq!(piped.interval_us, 1_000_000);
    }

    #[test]
    fn machine_formats_sample_one_window_even_on_a_terminal() {
        for (flag, format) in [
            ("--raw", Format::Raw),
            ("--csv", Format::Csv),
            ("--json", Format::Json),
        ] {
            let r = options(&[flag, "-i", "0.5"]).resolve(true);
            assert_eq!(
                (r.mode, r.style.format, r.interval_us),
                (Mode::Once, format, 500_000)
            );
        }
        let r = options(&["--no-raw"]).resolve(false);
        assert_eq!((r.mode, r.style.format), (Mode::Live, Format::Standard));
    }

    #[test]
    fn redis_cli_spellings() {
        let o = options(&[
            "--latency",
            "-s",
            "/tmp/redis.sock",
            "-n",
            "3",
            "--pass",
            "pw",
        ]);
        assert_eq!(o.conn.unix_socket.as_deref(), Some("/tmp/redis.sock"));
        assert!(o.conn.host.is_empty());
        assert_eq!(o.db, Some(3));
        assert_eq!(o.conn.authenticate.as_deref(), Some("pw"));
        assert_eq!(
            options(&["-S", "/tmp/r.sock"]).conn.unix_socket.as_deref(),
            Some("/tmp/r.sock")
        );
        assert_eq!(options(&["-h", "db1"]).conn.host, vec!["db1".to_string()]);
        assert!(!options(&["--no-auth-warning"]).open_loop);
        assert!(!options(&["-c"]).open_loop);
        assert!(error(&["-n", "abc"]).contains("-n <DB>"));
        assert!(error(&["-n", "-1"]).contains("-n"));
    }

    #[test]
    fn history_and_dist_windows() {
        let r = options(&["--history"]).resolve(true);
        assert_eq!(r.mode, Mode::History { redraw: true });
        assert_eq!(r.interval_us, 15_000_000);
        let r = options(&["--latency-history", "-i", "1"]).resolve(false);
        assert_eq!(r.mode, Mode::History { redraw: false });
        assert_eq!(r.interval_us, 1_000_000);
        let r = options(&["--dist", "--mono"]).resolve(false);
        assert_eq!(r.mode, Mode::Dist);
        assert_eq!(r.interval_us, 1_000_000);
        assert_eq!(r.style.palette, Palette::Mono);
    }

    #[test]
    fn kvbench_additions() {
        let o = options(&[
            "--precision=us",
            "--percentiles=50,99.90,100,050",
            "--hdr-file",
            "all.txt",
            "-P",
            "memcache_binary",
        ]);
        assert_eq!(o.precision, Precision::Us);
        assert_eq!(o.percentiles, vec![50.0, 99.9, 100.0]);
        assert_eq!(o.hdr_file, Some(PathBuf::from("all.txt")));
        assert_eq!(o.protocol, Protocol::MemcacheBinary);
        assert_eq!(o.probe(), Probe::Version);
        assert_eq!(options(&["-P", "memcache_text"]).probe(), Probe::Version);
        assert_eq!(options(&["--protocol=resp3"]).probe(), Probe::Ping);
    }

    #[test]
    fn redis_cli_protocol_and_tls_switches() {
        assert_eq!(options(&["-3"]).protocol, Protocol::Resp3);
        assert_eq!(options(&["-2"]).protocol, Protocol::Redis);
        assert!(options(&["--tls", "--insecure"]).conn.tls_skip_verify);
        for args in [
            &["-3", "-2"][..],
            &["-3", "-P", "resp2"],
            &["-2", "-P", "memcache_text"],
        ] {
            assert!(error(args).contains("cannot be used with"), "{args:?}");
        }
    }

    #[test]
    fn bad_values_are_one_line_errors() {
        for (args, needle) in [
            (&["-i", "abc"][..], "not a number of seconds"),
            (&["-i", "0"][..], "longer than 0"),
            (&["-i", "-1"][..], "longer than 0"),
            (&["-i", "nan"][..], "longer than 0"),
            (&["-i", "100000"][..], "at most a day"),
            (&["-i", "inf"][..], "at most a day (86400 seconds)"),
            (&["-i", "1e999"][..], "at most a day (86400 seconds)"),
            (&["--interval=-inf"][..], "longer than 0"),
            (&["--percentiles=50,abc"][..], "'abc' is not a percentile"),
            (&["--percentiles=0"][..], "above 0 and at most 100"),
            (&["--percentiles=101"][..], "above 0 and at most 100"),
            (&["--precision=ns"][..], "--precision"),
            (&["-P", "http"][..], "use redis, resp2"),
            (&["--mono"][..], "--dist"),
            (&["--mono", "--raw"][..], "--dist"),
            (&["--no-raw", "-i", "0.5"][..], "has none"),
            (&["--dist", "--no-raw"][..], "cannot be used with"),
            (&["--dist", "--precision=us"][..], "no effect with --dist"),
            (&["--dist", "--history"][..], "cannot be used with"),
            (&["--dist", "--json"][..], "cannot be used with"),
            (&["--raw", "--csv"][..], "cannot be used with"),
            (&["--bogus"][..], "--bogus"),
        ] {
            let msg = error(args);
            assert!(msg.contains(needle), "{args:?}: {msg}");
            assert!(!msg.contains('\n'), "{args:?}: one line: {msg:?}");
            assert!(msg.ends_with("; see --help"), "{args:?}: {msg}");
        }
    }

    #[test]
    fn error_messages_name_the_flag_and_the_value() {
        assert_eq!(
            error(&["-i", "abc"]),
            "invalid value 'abc' for '--interval <SECONDS>': not a number of seconds; see --help"
        );
        assert_eq!(
            error(&["--percentiles=50,abc"]),
            "invalid value '50,abc' for '--percentiles <LIST>': 'abc' is not a percentile \
             (use e.g. 50,99,99.9); see --help"
        );
    }

    #[test]
    fn help_is_printed_not_an_error() {
        let argv = vec![OsString::from("kvbench latency"), OsString::from("--help")];
        match parse(argv) {
            Ok(Parsed::Print(text)) => {
                assert!(text.contains("--history"));
                assert!(text.contains("--percentiles"));
                assert!(text.contains("Usage: kvbench latency"));
            }
            other => panic!("{other:?}"),
        }
    }
}
