//! redis-zbench-go's flags, validated into a typed [`ZbenchSpec`].
//!
//! The flags are read by Go's `flag` package rules ([`super::goflag`]): `-c 5`, `--c=5`,
//! `-multi`, `-multi=false`, Go's error wording. `-h` is the host, so help is `-help` or
//! `--help`, printed in Go's usage layout. kvbench's connection additions (TLS, `-user`,
//! `-u URI`) are defined, Go-style too, in [`super::connection`].

use std::path::PathBuf;
use std::time::Duration;

use clap::parser::ValueSource;
use clap::{ArgMatches, Command};

use super::connection::{self, ConnSpec};
use super::goflag::{Translated, clap_error, int, string, switch, translate, uint, usage_text};
use crate::error::Error;
use crate::frontend::common::busy_poll::parse_busy_poll;
use crate::plan::pacing::MAX_RATE;

/// What the command line asks for.
#[derive(Clone, Debug, PartialEq)]
pub enum ZbenchCommand {
    /// A benchmark run.
    Run(Box<ZbenchSpec>),
    /// Text to print on stdout before exiting 0 (`-help`, `-v`).
    Print(String),
}

/// A validated zbench run: every value is in range and every combination makes sense.
#[derive(Clone, Debug, PartialEq)]
pub struct ZbenchSpec {
    /// `-h`: the server's host name or address.
    pub host: String,
    /// `-p`: the server's port.
    pub port: u16,
    /// `-a`: the password sent with `AUTH`, if any.
    pub password: Option<String>,
    /// `-c`: the number of clients (connections), at least 1.
    pub clients: u32,
    /// Load sorted sets, or query them.
    pub mode: Mode,
    /// `-n`: queries to send in all (query mode; load sends one ZADD per key).
    pub requests: u64,
    /// `-r` and `-r-start`: the keys `zbench:{tag}:N` the run covers.
    pub keyspace: Keyspace,
    /// `-key-elements-min`, `-key-elements-max`, `-key-elements-dist`: elements per ZADD.
    pub elements: ElementRange,
    /// `-d`: bytes in each member.
    pub member_size: u32,
    /// `-pipeline`: commands per batch, at least 1.
    pub pipeline: u32,
    /// `-multi`: wrap each query batch in MULTI/EXEC.
    pub multi: bool,
    /// `-rps`: total commands per second across all clients; `None` is no limit.
    pub rps: Option<u64>,
    /// `-random-seed`: the run's seed; client `i` (from 1) draws from `seed + i`.
    pub seed: i64,
    /// `-oss-cluster`: route by hash slot across a Redis Cluster.
    pub oss_cluster: bool,
    /// `-print-histogram`: asked for the reply-size histogram (query mode prints it anyway).
    pub print_histogram: bool,
    /// `-debug`: kvbench's debug level (0 = off).
    pub debug: u8,
    /// `-json-out-file`: also write kvbench's JSON results there.
    pub json_out_file: Option<PathBuf>,
    /// `-busy-poll`: how long a worker polls without waiting before it sleeps.
    pub busy_poll: Option<Duration>,
    /// `-reply-timeout` (kvbench's): how long requests may wait with no reply before the
    /// run fails; `None` (`-reply-timeout 0`) waits for ever, as redis-zbench-go does.
    pub reply_timeout: Option<Duration>,
    /// kvbench's connection additions: ACL user, database, TLS.
    pub conn: ConnSpec,
    /// Flags given that this run cannot use (the other mode's, a URI's overridden ones),
    /// each a `warning: ...` line for stderr before the run.
    pub warnings: Vec<String>,
}

/// `-mode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// One ZADD per key of the keyspace.
    Load,
    /// `-n` queries of the given kind over the keyspace.
    Query(QueryKind),
}

/// `-query`: which read each query sends (see `workload` for the exact arguments).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueryKind {
    /// `zrangebylex` (kvbench's default): `ZRANGEBYLEX key - [c`.
    RangeByLex,
    /// `zrevrangebylex`: `ZREVRANGEBYLEX key [c -`.
    RevRangeByLex,
    /// `zrange-byscore` (alias `zrangebyscore`): `ZRANGE key 0 1 BYSCORE`.
    RangeByScore,
    /// `zrange-byscore-rev`: `ZREVRANGEBYSCORE key 1 0`.
    RevRangeByScore,
}

impl QueryKind {
    /// The `-query` names, with the kind each selects.
    pub const NAMES: &'static [(&'static str, QueryKind)] = &[
        ("zrangebylex", QueryKind::RangeByLex),
        ("zrevrangebylex", QueryKind::RevRangeByLex),
        ("zrange-byscore", QueryKind::RangeByScore),
        ("zrange-byscore-rev", QueryKind::RevRangeByScore),
        // redis-zbench-go's default name, which selects nothing there; its user meant this.
        ("zrangebyscore", QueryKind::RangeByScore),
    ];

    /// The kind `-query name` selects.
    pub fn from_name(name: &str) -> Option<QueryKind> {
        Self::NAMES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|&(_, kind)| kind)
    }
}

/// The keys a run covers: ids `start .. start + len`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Keyspace {
    /// `-r-start`: the first key id.
    pub start: u64,
    /// `-r`: how many keys, at least 1.
    pub len: u64,
}

impl Keyspace {
    /// One past the last key id (validation refuses a keyspace that would overflow).
    pub fn end(&self) -> u64 {
        self.start.saturating_add(self.len)
    }
}

/// How many elements each ZADD adds: from `min` to `max` inclusive, drawn by `dist`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ElementRange {
    /// At least 1 (a ZADD needs one element).
    pub min: u64,
    /// At least `min`.
    pub max: u64,
    /// `-key-elements-dist`.
    pub dist: SizeDist,
}

/// `-key-elements-dist`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SizeDist {
    /// Zipf over the ranks `min..=max` (exponent 1): small sets are the common ones.
    Zipf,
    /// Every count in `min..=max` equally likely (what redis-zbench-go's code does).
    Uniform,
}

/// Redis refuses a request larger than this (`client-query-buffer-limit`, 1 GB by default),
/// so one ZADD may not be planned larger.
const MAX_ZADD_BYTES: u64 = 1 << 30;

/// Most clients: each is a connection and its buffers, allocated before the run.
pub const MAX_CLIENTS: u32 = 100_000;
/// Most commands per batch, as kvbench's other front ends bound their pipelines.
pub const MAX_PIPELINE: u32 = 65_536;
/// Most seconds `-reply-timeout` takes (a day), as the other front ends' `--reply-timeout`.
const MAX_REPLY_TIMEOUT_SECS: u64 = 86_400;

/// Text printed for `-v`.
pub fn version_text() -> String {
    format!("kvbench zbench (version {})\n", env!("CARGO_PKG_VERSION"))
}

/// The flags, as clap knows them. Every flag's long name is its Go name; its value name is
/// Go's type name (`uint`, `int`, `string`), which the usage text shows; booleans are
/// switches. [`parse`] turns Go-style argv into this command's `--name=value` form.
pub fn command() -> Command {
    let cmd = Command::new("zbench")
        .no_binary_name(true)
        .disable_help_flag(true)
        .disable_version_flag(true)
        .args_override_self(true)
        .arg(string("a", "", "Password for Redis Auth."))
        .arg(string(
            "busy-poll",
            "0",
            "Microseconds to poll without waiting before sleeping for replies (0: off).",
        ))
        .arg(uint("c", "50", "number of clients."))
        .arg(uint("d", "10", "Data size of each sorted set element."))
        .arg(int("debug", "0", "Client debug level."))
        .arg(string("h", "127.0.0.1", "Server hostname."))
        .arg(string(
            "json-out-file",
            "",
            "Also write the results in kvbench's JSON format to this file.",
        ))
        .arg(string(
            "key-elements-dist",
            "zipf",
            "Distribution of the per-key element count over the range: zipf or uniform.",
        ))
        .arg(uint(
            "key-elements-max",
            "10",
            "Use zipfian random-sized items in the specified range (min-max).",
        ))
        .arg(uint(
            "key-elements-min",
            "1",
            "Use zipfian random-sized items in the specified range (min-max).",
        ))
        .arg(string(
            "mode",
            "",
            "Benchmark mode. One of [load,query]. load populates the db with sorted sets; \
             query runs the command given by -query.",
        ))
        .arg(switch(
            "multi",
            "Run each pipeline of commands in multi-exec.",
        ))
        .arg(uint(
            "n",
            "10000000",
            "Total number of requests. Only used in case of -mode=query",
        ))
        .arg(switch("oss-cluster", "Enable OSS cluster mode."))
        .arg(int("p", "12000", "Server port."))
        .arg(uint("pipeline", "1", "Redis pipeline value."))
        // redis-zbench-go's words ("Print reply histogram") read as opt-in; a query here
        // prints it always.
        .arg(switch(
            "print-histogram",
            "Accepted, no effect: a query run always prints the reply histogram (load mode has none).",
        ))
        .arg(string(
            "query",
            "zrangebylex",
            "Query type. One of [zrangebylex,zrevrangebylex,zrange-byscore,zrange-byscore-rev].",
        ))
        .arg(uint("r", "1000000", "keyspace length."))
        // redis-zbench-go waits for ever on a server that stops answering; kvbench ends
        // the run instead, by default after the memtier front end's 60 s.
        .arg(uint(
            "reply-timeout",
            "60",
            "kvbench: seconds requests may wait with no reply before the run fails (0: wait for ever).",
        ))
        .arg(uint("r-start", "0", "keyspace start."))
        .arg(int("random-seed", "12345", "random seed to be used."))
        .arg(int(
            "rps",
            "0",
            "Max rps. If 0 no limit is applied and the DB is stressed up to maximum.",
        ))
        .arg(switch("v", "Output version and exit"));
    connection::add_args(cmd)
}

/// Parses the zbench command line: `args` are the words after the front end's name
/// (`kvbench zbench -mode load ...` passes `["-mode", "load", ...]`).
///
/// Returns [`ZbenchCommand::Print`] for `-help`/`--help` and `-v`; every problem is a
/// one-line [`Error::Usage`].
pub fn parse<I: IntoIterator<Item = String>>(args: I) -> Result<ZbenchCommand, Error> {
    let cmd = command();
    let args: Vec<String> = args.into_iter().collect();
    let tokens = match translate(&cmd, &args)? {
        Translated::Help => return Ok(ZbenchCommand::Print(usage_text(&cmd))),
        Translated::Tokens(tokens) => tokens,
    };
    let matches = cmd
        .try_get_matches_from(tokens)
        .map_err(|e| clap_error(&e))?;
    if matches.get_flag("v") {
        return Ok(ZbenchCommand::Print(version_text()));
    }
    validate(&matches).map(|spec| ZbenchCommand::Run(Box::new(spec)))
}

/// The typed, checked run from clap's matches.
fn validate(m: &ArgMatches) -> Result<ZbenchSpec, Error> {
    let text = |id: &str| m.get_one::<String>(id).cloned().unwrap_or_default();
    let uint = |id: &str| m.get_one::<u64>(id).copied().unwrap_or_default();
    let int = |id: &str| m.get_one::<i64>(id).copied().unwrap_or_default();

    let query_name = text("query");
    let query = QueryKind::from_name(&query_name).ok_or_else(|| {
        Error::usage(format!(
            "invalid -query {query_name:?}: use zrangebylex, zrevrangebylex, zrange-byscore \
             or zrange-byscore-rev"
        ))
    })?;
    let mode = match text("mode").as_str() {
        "load" => Mode::Load,
        "query" => Mode::Query(query),
        "" => {
            return Err(Error::usage(
                "please specify a valid -mode option: either `load` or `query`",
            ));
        }
        other => {
            return Err(Error::usage(format!(
                "invalid -mode {other:?}: please specify either `load` or `query`"
            )));
        }
    };

    let port = u16::try_from(int("p"))
        .ok()
        .filter(|&p| p != 0)
        .ok_or_else(|| Error::usage(format!("-p {} is not a port (1-65535)", int("p"))))?;
    let clients = positive_u32(uint("c"), "-c", "client")?;
    if clients > MAX_CLIENTS {
        return Err(Error::usage(format!(
            "-c {clients}: at most {MAX_CLIENTS} clients (each is a connection)"
        )));
    }
    let pipeline = positive_u32(uint("pipeline"), "-pipeline", "command per batch")?;
    if pipeline > MAX_PIPELINE {
        return Err(Error::usage(format!(
            "-pipeline {pipeline}: at most {MAX_PIPELINE} commands per batch"
        )));
    }

    let requests = uint("n");
    if mode != Mode::Load && requests == 0 {
        return Err(Error::usage("-n must be at least 1 in query mode"));
    }
    let keyspace = Keyspace {
        start: uint("r-start"),
        len: uint("r"),
    };
    if keyspace.len == 0 {
        return Err(Error::usage("-r must be at least 1 key"));
    }
    if keyspace.start.checked_add(keyspace.len).is_none() {
        return Err(Error::usage(format!(
            "-r-start {} plus -r {} is past the largest key id",
            keyspace.start, keyspace.len
        )));
    }

    let dist = match text("key-elements-dist").as_str() {
        "zipf" => SizeDist::Zipf,
        "uniform" => SizeDist::Uniform,
        other => {
            return Err(Error::usage(format!(
                "invalid -key-elements-dist {other:?}: use zipf or uniform"
            )));
        }
    };
    let elements = ElementRange {
        min: uint("key-elements-min"),
        max: uint("key-elements-max"),
        dist,
    };
    if elements.min == 0 {
        return Err(Error::usage(
            "-key-elements-min must be at least 1 (a ZADD needs one element)",
        ));
    }
    if elements.min > elements.max {
        return Err(Error::usage(format!(
            "-key-elements-min {} is greater than -key-elements-max {}",
            elements.min, elements.max
        )));
    }
    let member_size = u32::try_from(uint("d"))
        .map_err(|_| Error::usage(format!("-d {} is too large", uint("d"))))?;
    // Each element is a score ("0.123456", 8 bytes) and a member, each with its RESP
    // framing (at most 16 bytes more).
    let per_element = u64::from(member_size) + 8 + 2 * 16;
    if elements.max.saturating_mul(per_element) > MAX_ZADD_BYTES {
        return Err(Error::usage(format!(
            "-key-elements-max {} with -d {member_size} makes a ZADD larger than the 1 GB a \
             Redis server accepts in one request",
            elements.max
        )));
    }

    let rps = match int("rps") {
        0 => None,
        r if r < 0 => {
            return Err(Error::usage(format!("-rps {r} must not be negative")));
        }
        r if r.unsigned_abs() > MAX_RATE => {
            return Err(Error::usage(format!(
                "-rps {r} must be at most {MAX_RATE} commands per second"
            )));
        }
        r => Some(r.unsigned_abs()),
    };
    let password = Some(text("a")).filter(|p| !p.is_empty());
    let given = |id: &str| m.value_source(id) == Some(ValueSource::CommandLine);
    let json_out_file = Some(text("json-out-file"))
        .filter(|p| !p.is_empty())
        .map(PathBuf::from);
    if given("json-out-file") && json_out_file.is_none() {
        return Err(Error::usage("-json-out-file needs a file name"));
    }
    let mut warnings = Vec::new();
    let debug = match int("debug") {
        level @ 0..=2 => level as u8,
        level => {
            let used = if level < 0 { 0 } else { 2 };
            warnings.push(format!(
                "warning: -debug {level}: the levels are 0 to 2; using {used}"
            ));
            used
        }
    };
    // A flag of the other mode does nothing here: said, not dropped in silence.
    let (unused, why): (&[&str], &str) = match mode {
        Mode::Load => (
            &["n", "query", "multi", "print-histogram"],
            "it sends one ZADD per key of -r",
        ),
        Mode::Query(_) => (
            &[
                "d",
                "key-elements-min",
                "key-elements-max",
                "key-elements-dist",
            ],
            "the flag shapes -mode load's ZADDs",
        ),
    };
    for id in unused.iter().filter(|id| given(id)) {
        let mode_name = if mode == Mode::Load { "load" } else { "query" };
        warnings.push(format!(
            "warning: -{id} has no effect with -mode {mode_name} ({why}); ignored"
        ));
    }
    let busy_poll = parse_busy_poll(&text("busy-poll"), "-busy-poll").map_err(Error::usage)?;
    let reply_timeout = match uint("reply-timeout") {
        0 => None,
        secs if secs <= MAX_REPLY_TIMEOUT_SECS => Some(Duration::from_secs(secs)),
        secs => {
            return Err(Error::usage(format!(
                "-reply-timeout {secs}: at most {MAX_REPLY_TIMEOUT_SECS} seconds (0 waits for ever)"
            )));
        }
    };

    let applied = connection::validate(m, text("h"), port, password)?;
    warnings.extend(applied.warnings);
    Ok(ZbenchSpec {
        host: applied.host,
        port: applied.port,
        password: applied.password,
        clients,
        mode,
        requests,
        keyspace,
        elements,
        member_size,
        pipeline,
        multi: m.get_flag("multi"),
        rps,
        seed: int("random-seed"),
        oss_cluster: m.get_flag("oss-cluster"),
        print_histogram: m.get_flag("print-histogram"),
        debug,
        json_out_file,
        busy_poll,
        reply_timeout,
        conn: applied.conn,
        warnings,
    })
}

fn positive_u32(value: u64, flag: &str, what: &str) -> Result<u32, Error> {
    match u32::try_from(value) {
        Ok(0) => Err(Error::usage(format!("{flag} must be at least 1 {what}"))),
        Ok(v) => Ok(v),
        Err(_) => Err(Error::usage(format!("{flag} {value} is too large"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(args: &[&str]) -> Vec<String> {
        args.iter().map(|s| s.to_string()).collect()
    }

    fn spec(args: &[&str]) -> ZbenchSpec {
        match parse(words(args)) {
            Ok(ZbenchCommand::Run(spec)) => *spec,
            other => panic!("{args:?}: expected a run, got {other:?}"),
        }
    }

    fn printed(args: &[&str]) -> String {
        match parse(words(args)) {
            Ok(ZbenchCommand::Print(text)) => text,
            other => panic!("{args:?}: expected text, got {other:?}"),
        }
    }

    /// The one-line usage error `args` get.
    fn refusal(args: &[&str]) -> String {
        match parse(words(args)) {
            Err(Error::Usage(msg)) => {
                assert!(!msg.contains('\n'), "{args:?}: not one line: {msg:?}");
                msg
            }
            other => panic!("{args:?}: expected a usage error, got {other:?}"),
        }
    }

    #[test]
    fn clap_definition_is_consistent() {
        command().debug_assert();
    }

    #[test]
    fn defaults_are_redis_zbench_go_s() {
        let s = spec(&["-mode", "load"]);
        assert_eq!(s.host, "127.0.0.1");
        assert_eq!(s.port, 12000);
        assert_eq!(s.password, None);
        assert_eq!(s.clients, 50);
        assert_eq!(s.mode, Mode::Load);
        assert_eq!(s.requests, 10_000_000);
        assert_eq!(s.member_size, 10);
        assert_eq!(
            s.keyspace,
            Keyspace {
                start: 0,
                len: 1_000_000
            }
        );
        assert_eq!(
            s.elements,
            ElementRange {
                min: 1,
                max: 10,
                dist: SizeDist::Zipf
            }
        );
        assert_eq!(s.pipeline, 1);
        assert!(!s.multi && !s.oss_cluster && !s.print_histogram);
        assert_eq!(s.rps, None);
        assert_eq!(s.seed, 12345);
        assert_eq!(s.debug, 0);
        assert_eq!(s.json_out_file, None);
        assert_eq!(
            spec(&["-mode", "query"]).mode,
            Mode::Query(QueryKind::RangeByLex)
        );
    }

    #[test]
    fn every_go_spelling_of_a_valued_flag() {
        for args in [
            &["-c", "7"][..],
            &["--c", "7"],
            &["-c=7"],
            &["--c=7"],
            &["-c", "5", "-c=7"],
        ] {
            let mut all = vec!["-mode", "load"];
            all.extend_from_slice(args);
            assert_eq!(spec(&all).clients, 7, "{args:?}");
        }
    }

    #[test]
    fn every_flag_sets_its_field() {
        let s = spec(&[
            "-h",
            "::1",
            "-p",
            "6380",
            "-a",
            "secret",
            "-c",
            "3",
            "-n",
            "2000",
            "-d",
            "4",
            "-r",
            "500",
            "-r-start",
            "100",
            "-key-elements-min",
            "2",
            "-key-elements-max",
            "5",
            "-key-elements-dist",
            "uniform",
            "-mode",
            "query",
            "-query",
            "zrange-byscore-rev",
            "-multi",
            "-pipeline",
            "10",
            "-rps",
            "1000",
            "-random-seed",
            "-7",
            "-oss-cluster",
            "-print-histogram",
            "-debug",
            "2",
            "-json-out-file",
            "out.json",
        ]);
        assert_eq!(s.host, "::1");
        assert_eq!(s.port, 6380);
        assert_eq!(s.password.as_deref(), Some("secret"));
        assert_eq!(s.clients, 3);
        assert_eq!(s.requests, 2000);
        assert_eq!(s.member_size, 4);
        assert_eq!(
            s.keyspace,
            Keyspace {
                start: 100,
                len: 500
            }
        );
        assert_eq!(s.keyspace.end(), 600);
        assert_eq!(
            s.elements,
            ElementRange {
                min: 2,
                max: 5,
                dist: SizeDist::Uniform
            }
        );
        assert_eq!(s.mode, Mode::Query(QueryKind::RevRangeByScore));
        assert!(s.multi && s.oss_cluster && s.print_histogram);
        assert_eq!(s.pipeline, 10);
        assert_eq!(s.rps, Some(1000));
        assert_eq!(s.seed, -7);
        assert_eq!(s.debug, 2);
        assert_eq!(s.json_out_file, Some(PathBuf::from("out.json")));
    }

    #[test]
    fn switches_as_go_reads_them() {
        let multi = |args: &[&str]| {
            let mut all = vec!["-mode", "query"];
            all.extend_from_slice(args);
            spec(&all).multi
        };
        assert!(multi(&["-multi"]));
        assert!(multi(&["--multi"]));
        for on in ["1", "t", "T", "TRUE", "true", "True"] {
            assert!(multi(&[&format!("-multi={on}")]), "{on}");
        }
        for off in ["0", "f", "F", "FALSE", "false", "False"] {
            assert!(!multi(&[&format!("-multi={off}")]), "{off}");
        }
        // The last occurrence wins, either way.
        assert!(!multi(&["-multi", "-multi=false"]));
        assert!(multi(&["-multi=false", "-multi"]));
        assert_eq!(
            refusal(&["-mode", "load", "-multi=yes"]),
            "invalid boolean value \"yes\" for -multi: parse error"
        );
        // A switch takes no separate value: "true" is an argument, which Go would stop at.
        assert!(refusal(&["-mode", "load", "-multi", "true"]).contains("\"true\" is not a flag"));
    }

    #[test]
    fn a_value_is_the_next_word_whatever_it_looks_like() {
        let s = spec(&["-mode", "load", "-a", "-secret"]);
        assert_eq!(s.password.as_deref(), Some("-secret"));
        let s = spec(&["-mode", "load", "-a="]);
        assert_eq!(s.password, None);
        let s = spec(&["-mode", "load", "-a=x=y"]);
        assert_eq!(s.password.as_deref(), Some("x=y"));
    }

    #[test]
    fn go_flag_package_errors() {
        assert_eq!(
            refusal(&["-mode", "load", "-x"]),
            "flag provided but not defined: -x"
        );
        assert_eq!(
            refusal(&["--threads=4", "-mode", "load"]),
            "flag provided but not defined: -threads"
        );
        assert_eq!(
            refusal(&["-mode", "load", "-c"]),
            "flag needs an argument: -c"
        );
        assert_eq!(
            refusal(&["-mode", "load", "-c", "abc"]),
            "invalid value \"abc\" for flag -c: parse error"
        );
        assert_eq!(
            refusal(&["-mode", "load", "-c", "-5"]),
            "invalid value \"-5\" for flag -c: parse error"
        );
        assert_eq!(
            refusal(&["-mode", "load", "-r=99999999999999999999"]),
            "invalid value \"99999999999999999999\" for flag -r: value out of range"
        );
        assert_eq!(
            refusal(&["-mode", "load", "-p", "1.5"]),
            "invalid value \"1.5\" for flag -p: parse error"
        );
        assert_eq!(refusal(&["---c", "5"]), "bad flag syntax: ---c");
        assert_eq!(refusal(&["-=5"]), "bad flag syntax: -=5");
        assert!(refusal(&["-mode", "load", "extra"]).contains("\"extra\" is not a flag"));
        assert!(refusal(&["-mode", "load", "-"]).contains("\"-\" is not a flag"));
        assert!(refusal(&["-mode", "load", "--", "-c", "5"]).contains("\"-c\" is not a flag"));
        // A lone "--" ends the flags, as in Go.
        assert_eq!(spec(&["-mode", "load", "--"]).clients, 50);
    }

    #[test]
    fn validation_errors() {
        let cases: &[(&[&str], &str)] = &[
            (&[], "-mode"),
            (&["-mode", "bench"], "\"bench\""),
            (
                &[
                    "-mode",
                    "load",
                    "-key-elements-min",
                    "5",
                    "-key-elements-max",
                    "4",
                ],
                "greater",
            ),
            (&["-mode", "load", "-key-elements-min", "0"], "at least 1"),
            (&["-mode", "load", "-r", "0"], "-r must be at least 1 key"),
            (&["-mode", "load", "-c", "0"], "-c must be at least 1"),
            (
                &["-mode", "load", "-c", "4294967296"],
                "-c 4294967296 is too large",
            ),
            (
                &["-mode", "load", "-pipeline", "0"],
                "-pipeline must be at least 1",
            ),
            (&["-mode", "query", "-n", "0"], "-n must be at least 1"),
            (&["-mode", "load", "-p", "0"], "not a port"),
            (&["-mode", "load", "-p", "65536"], "not a port"),
            (&["-mode", "load", "-rps", "-1"], "negative"),
            (
                &["-mode", "load", "-rps", "100000001"],
                "-rps 100000001 must be at most 100000000",
            ),
            (
                &["-mode", "query", "-query", "zscan"],
                "invalid -query \"zscan\"",
            ),
            (
                &["-mode", "load", "-key-elements-dist", "pareto"],
                "zipf or uniform",
            ),
            (
                &[
                    "-mode",
                    "load",
                    "-r-start",
                    "18446744073709551615",
                    "-r",
                    "2",
                ],
                "past",
            ),
            (&["-mode", "load", "-key-elements-max", "100000000"], "1 GB"),
        ];
        for (args, expected) in cases {
            let msg = refusal(args);
            assert!(
                msg.contains(expected),
                "{args:?}: {msg:?} lacks {expected:?}"
            );
        }
        // -n is a query setting: a load ignores it, as redis-zbench-go does.
        assert_eq!(spec(&["-mode", "load", "-n", "0"]).requests, 0);
        // One element per key is a valid range (redis-zbench-go panics on it).
        let s = spec(&[
            "-mode",
            "load",
            "-key-elements-min",
            "3",
            "-key-elements-max",
            "3",
        ]);
        assert_eq!((s.elements.min, s.elements.max), (3, 3));
    }

    #[test]
    fn query_names() {
        for (name, kind) in [
            ("zrangebylex", QueryKind::RangeByLex),
            ("zrevrangebylex", QueryKind::RevRangeByLex),
            ("zrange-byscore", QueryKind::RangeByScore),
            ("zrange-byscore-rev", QueryKind::RevRangeByScore),
            ("zrangebyscore", QueryKind::RangeByScore),
        ] {
            assert_eq!(
                spec(&["-mode", "query", "-query", name]).mode,
                Mode::Query(kind)
            );
        }
    }

    #[test]
    fn debug_level_is_clamped_with_a_warning() {
        let debug = |v: &str| spec(&["-mode", "load", "-debug", v]);
        assert_eq!(debug("2").debug, 2);
        assert!(debug("2").warnings.is_empty());
        assert_eq!(debug("3").debug, 2);
        assert_eq!(debug("-1").debug, 0);
        assert_eq!(
            debug("1000").warnings,
            ["warning: -debug 1000: the levels are 0 to 2; using 2"]
        );
    }

    #[test]
    fn reply_timeout_is_kvbench_s_sixty_seconds_unless_given() {
        let timeout = |args: &[&str]| spec(&[&["-mode", "query"][..], args].concat()).reply_timeout;
        assert_eq!(timeout(&[]), Some(Duration::from_secs(60)));
        assert_eq!(
            timeout(&["-reply-timeout", "5"]),
            Some(Duration::from_secs(5))
        );
        assert_eq!(
            timeout(&["--reply-timeout=86400"]),
            Some(Duration::from_secs(86_400))
        );
        // 0 waits for ever, as redis-zbench-go does.
        assert_eq!(timeout(&["-reply-timeout", "0"]), None);
        assert_eq!(
            refusal(&["-mode", "load", "-reply-timeout", "86401"]),
            "-reply-timeout 86401: at most 86400 seconds (0 waits for ever)"
        );
        assert!(refusal(&["-mode", "load", "-reply-timeout", "-1"]).contains("-reply-timeout"));
        let help = printed(&["-help"]);
        assert!(
            help.contains("\n  -reply-timeout uint\n    \tkvbench: seconds requests may wait")
                && help.contains("(0: wait for ever). (default 60)\n"),
            "{help}"
        );
    }

    #[test]
    fn help_in_go_usage_layout() {
        let text = printed(&["-help"]);
        assert_eq!(printed(&["--help"]), text);
        assert_eq!(printed(&["-mode", "load", "-help=1"]), text);
        assert!(text.starts_with(
            "Usage of kvbench zbench:\n  -a string\n    \tPassword for Redis Auth.\n"
        ));
        assert!(!text.contains("(default )"));
        assert!(text.contains("\n  -c uint\n    \tnumber of clients. (default 50)\n"));
        assert!(text.contains("\n  -h string\n    \tServer hostname. (default \"127.0.0.1\")\n"));
        assert!(text.contains("\n  -multi\n    \tRun each pipeline"));
        assert!(text.contains("\n  -v\tOutput version and exit\n"));
        assert!(text.contains("\n  -rps int\n    \tMax rps. If 0 no limit is applied and the DB is stressed up to maximum.\n"));
        assert!(text.contains("\n  -r-start uint\n    \tkeyspace start.\n"));
        assert!(text.contains("(default \"zrangebylex\")"));
        // Every flag clap knows is listed, in Go's (sorted) order.
        let listed: Vec<&str> = text
            .lines()
            .filter_map(|l| l.strip_prefix("  -"))
            .map(|l| l.split(['\t', ' ']).next().unwrap_or_default())
            .collect();
        let mut names: Vec<String> = command()
            .get_arguments()
            .filter_map(|a| a.get_long().map(str::to_string))
            .collect();
        names.sort();
        assert_eq!(listed, names);
    }

    #[test]
    fn version_needs_no_mode() {
        assert_eq!(printed(&["-v"]), version_text());
        assert!(version_text().starts_with("kvbench zbench (version "));
    }
}
