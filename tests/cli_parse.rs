//! memtier's command line and `--config` parsing, and validation into the plan: defaults,
//! every refusal message, override order, URIs, masking and the shipped `config/*.json`
//! files.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

mod common;

use common::TestDir;
use kvbench::error::Error;
use kvbench::frontend::memtier::outputs::OutputConfig;
use kvbench::frontend::memtier::{Cli, Parsed, Settings, parse_args, render_show_config};
use kvbench::plan::{Endpoint, StopAt};
use kvbench::protocol::{Credentials, Protocol};
use kvbench::workload::keys::{KeyConfig, KeyPattern};
use kvbench::workload::values::DataSize;

fn argv(args: &[&str]) -> Vec<String> {
    std::iter::once("kvbench")
        .chain(args.iter().copied())
        .map(String::from)
        .collect()
}

fn cli(args: &[&str]) -> Cli {
    match parse_args(argv(args)) {
        Ok(Parsed::Run(cli)) => *cli,
        Ok(Parsed::Print(text)) => panic!("{args:?}: expected a run, got text:\n{text}"),
        Err(e) => panic!("{args:?}: unexpected parse error: {e}"),
    }
}

/// What these tests read of the validated settings, in one flat view.
struct Config {
    host: String,
    port: u16,
    endpoint: Endpoint,
    protocol: Protocol,
    credentials: Option<Credentials>,
    select_db: Option<u32>,
    threads: usize,
    clients: usize,
    stop: StopAt,
    run_count: u32,
    pipeline: usize,
    ratio: (u32, u32),
    data_size: DataSize,
    keys: KeyConfig,
    random_data: bool,
    randomize: bool,
    distinct_client_seed: bool,
    debug: bool,
    output: OutputConfig,
    shown: Vec<(&'static str, String)>,
    total_clients: usize,
    key_range: u64,
}

impl Config {
    fn total_clients(&self) -> usize {
        self.total_clients
    }

    fn key_range(&self) -> u64 {
        self.key_range
    }
}

fn config(args: &[&str]) -> Config {
    let s = Settings::from_cli(&cli(args))
        .unwrap_or_else(|e| panic!("{args:?}: unexpected error: {e}"));
    let (total_clients, key_range) = (s.plan.total_clients(), s.plan.key_range());
    let (server, load, workload) = (s.plan.server, s.plan.load, s.plan.workload);
    Config {
        host: s.host,
        port: s.port,
        endpoint: server.endpoint,
        protocol: server.protocol,
        credentials: server.credentials,
        select_db: server.select_db,
        threads: load.threads,
        clients: load.clients,
        stop: load.stop,
        run_count: load.run_count,
        pipeline: load.pipeline,
        ratio: workload.ratio,
        data_size: workload.data_size,
        keys: workload.keys,
        random_data: workload.random_data,
        randomize: workload.seeding.randomize,
        distinct_client_seed: workload.seeding.distinct_per_client,
        debug: s.output.debug > 0,
        output: s.output,
        shown: s.shown,
        total_clients,
        key_range,
    }
}

/// The one-line message of whatever refuses `args`, in parsing or validation.
fn refusal(args: &[&str]) -> String {
    let err = match parse_args(argv(args)) {
        Err(e) => e,
        Ok(Parsed::Run(cli)) => match Settings::from_cli(&cli) {
            Err(e) => e,
            Ok(_) => panic!("{args:?}: expected an error, got a valid config"),
        },
        Ok(Parsed::Print(_)) => panic!("{args:?}: expected an error, got help/version text"),
    };
    assert!(
        matches!(err, Error::Usage(_)),
        "{args:?}: not a usage error: {err:?}"
    );
    let msg = err.to_string();
    assert!(
        !msg.contains('\n'),
        "{args:?}: message is not one line: {msg:?}"
    );
    msg
}

fn shown<'a>(config: &'a Config, name: &str) -> &'a str {
    config
        .shown
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, v)| v.as_str())
        .unwrap_or_else(|| panic!("option {name} not shown"))
}

/// A `--config` file holding `text`, in a scratch directory removed when dropped.
struct TempFile(TestDir);

impl TempFile {
    fn new(text: &str) -> TempFile {
        let dir = TestDir::new("cli-config");
        std::fs::write(dir.file("config.json"), text).expect("write temp config");
        TempFile(dir)
    }

    fn flag(&self) -> String {
        format!("--config={}", self.0.file("config.json").display())
    }
}

// ---------------------------------------------------------------- defaults

#[test]
fn defaults_are_memtiers() {
    let c = config(&[]);
    assert_eq!(c.host, "localhost");
    assert_eq!(c.port, 6379);
    match &c.endpoint {
        Endpoint::Tcp { host, addr } => {
            assert_eq!(host, "localhost");
            assert_eq!(addr.port(), 6379);
            assert!(addr.ip().is_loopback());
        }
        other => panic!("expected TCP, got {other:?}"),
    }
    assert_eq!(c.protocol, Protocol::Redis);
    assert_eq!(c.credentials, None);
    assert_eq!(c.select_db, None);
    assert_eq!(c.threads, 4);
    assert_eq!(c.clients, 50);
    assert_eq!(c.stop, StopAt::RequestsPerClient(10000));
    assert_eq!(c.run_count, 1);
    assert_eq!(c.pipeline, 1);
    assert_eq!(c.ratio, (1, 10));
    assert_eq!(c.data_size, DataSize::Fixed(32));
    assert_eq!(c.keys.prefix, "memtier-");
    assert_eq!(c.keys.min, 0);
    assert_eq!(c.keys.max, 10_000_000);
    assert_eq!(c.keys.set_pattern, KeyPattern::Random);
    assert_eq!(c.keys.get_pattern, KeyPattern::Random);
    assert!((c.keys.stddev - 10_000_000.0 / 6.0).abs() < 1e-6);
    assert!((c.keys.median - 5_000_000.0).abs() < 1e-6);
    assert_eq!(c.keys.zipf_exp, 1.0);
    assert_eq!(c.output.print_percentiles, vec![50.0, 99.0, 99.9]);
    assert!(!c.output.hide_histogram && !c.output.show_config && !c.output.print_all_runs);
    assert_eq!(c.output.out_file, None);
    assert_eq!(c.output.json_out_file, None);
    assert_eq!(c.output.hdr_file_prefix, None);
    assert!(!c.random_data && !c.randomize && !c.distinct_client_seed && !c.debug);
    assert_eq!(c.total_clients(), 200);
    assert_eq!(c.key_range(), 10_000_001);
}

#[test]
fn gaussian_defaults_follow_the_key_range() {
    let c = config(&[
        "--key-pattern=G:G",
        "--key-minimum=100",
        "--key-maximum=700",
    ]);
    assert_eq!(c.keys.set_pattern, KeyPattern::Gaussian);
    assert!((c.keys.stddev - 100.0).abs() < 1e-9);
    assert!((c.keys.median - 400.0).abs() < 1e-9);
    let c = config(&["--key-pattern=G:G", "--key-stddev=5.5", "--key-median=42"]);
    assert_eq!((c.keys.stddev, c.keys.median), (5.5, 42.0));
}

/// The "configuration" object of `reference/memtier-output/default.json`, produced by
/// `-s 127.0.0.1 -p 7001 -t 2 -c 2 -n 200 --ratio=1:1 -o default.out`, line for line.
const MEMTIER_DEFAULT_CONFIGURATION: &str = r#""server": "127.0.0.1"
"port": 7001
"uri": ""
"unix socket": null
"address family": "Unspecified"
"protocol": "redis"
"out_file": "default.out"
"tls": "false"
"cert": null
"key": null
"cacert": null
"tls_skip_verify": "false"
"sni": null
"client_stats": null
"run_count": 1
"debug": 0
"requests": 200
"rate_limit": 0
"clients": 2
"threads": 2
"test_time": 0
"ratio": "1:1"
"pipeline": 1
"data_size": 32
"data_offset": 0
"random_data": "false"
"data_size_range": "0:0"
"data_size_list": ""
"data_size_pattern": "R"
"expiry_range": "0:0"
"data_import": null
"data_verify": "false"
"verify_only": "false"
"generate_keys": "false"
"key_prefix": "memtier-"
"key_minimum":           0
"key_maximum":    10000000
"key_pattern": "R:R"
"key_stddev": 0.000000
"key_median": 0.000000
"key_zipf_exp": 0.000000
"reconnect_interval": 0
"connection_timeout": 0
"thread_conn_start_min_jitter_micros": 0
"thread_conn_start_max_jitter_micros": 0
"multi_key_get": 0
"authenticate": ""
"select-db": 0
"no-expiry": "false"
"wait-ratio": "0:0"
"num-slaves": "0:0"
"wait-timeout": "0-0"
"print-all-runs": "false""#;

#[test]
fn shown_matches_memtiers_configuration_object() {
    let c = config(&[
        "-s",
        "127.0.0.1",
        "-p",
        "7001",
        "-t",
        "2",
        "-c",
        "2",
        "-n",
        "200",
        "--ratio=1:1",
        "-o",
        "default.out",
    ]);
    let ours: Vec<String> = c
        .shown
        .iter()
        .map(|(k, v)| format!("\"{k}\": {v}"))
        .collect();
    let theirs: Vec<&str> = MEMTIER_DEFAULT_CONFIGURATION.lines().collect();
    assert_eq!(ours, theirs);
}

#[test]
fn shown_reflects_the_options() {
    let c = config(&[
        "--test-time=5",
        "--data-size-range=10-20",
        "--data-size-pattern=S",
        "--key-pattern=Z:Z",
        "--key-zipf-exp=1.5",
        "-R",
        "-x",
        "3",
        "--print-all-runs",
        "--key-prefix=a\"b",
        "-4",
    ]);
    assert_eq!(shown(&c, "requests"), "0");
    assert_eq!(shown(&c, "test_time"), "5");
    assert_eq!(shown(&c, "data_size"), "0");
    assert_eq!(shown(&c, "data_size_range"), "\"10:20\"");
    assert_eq!(shown(&c, "data_size_pattern"), "\"S\"");
    assert_eq!(shown(&c, "key_pattern"), "\"Z:Z\"");
    assert_eq!(shown(&c, "key_zipf_exp"), "1.500000");
    assert_eq!(shown(&c, "random_data"), "\"true\"");
    assert_eq!(shown(&c, "run_count"), "3");
    assert_eq!(shown(&c, "print-all-runs"), "\"true\"");
    assert_eq!(shown(&c, "key_prefix"), r#""a\"b""#);
    assert_eq!(shown(&c, "address family"), "\"AF_INET\"");
    assert_eq!(shown(&c, "out_file"), "null");

    let c = config(&["--data-size-list=10:1,200:3"]);
    assert_eq!(shown(&c, "data_size_list"), "\"10:1,200:3\"");
    assert_eq!(shown(&c, "data_size"), "0");
}

/// memtier 2.2's `config_print` for `-p 7001 --json-out-file=run.json` (its format
/// string, in order: its text differs from its JSON in `out_file`'s place, `yes`/`no`,
/// `MIN-MAX` ranges, `(null)` for what is unset, no `key_zipf_exp`, and `json-out-file`).
const MEMTIER_SHOW_CONFIG: [&str; 53] = [
    "server = localhost",
    "port = 7001",
    "uri = ",
    "unix socket = (null)",
    "address family = Unspecified",
    "protocol = redis",
    "tls = no",
    "cert = (null)",
    "key = (null)",
    "cacert = (null)",
    "tls_skip_verify = no",
    "sni = (null)",
    "out_file = (null)",
    "client_stats = (null)",
    "run_count = 1",
    "debug = 0",
    "requests = 10000",
    "rate_limit = 0",
    "clients = 50",
    "threads = 4",
    "test_time = 0",
    "ratio = 1:10",
    "pipeline = 1",
    "data_size = 32",
    "data_offset = 0",
    "random_data = no",
    "data_size_range = 0-0",
    "data_size_list = ",
    "data_size_pattern = R",
    "expiry_range = 0-0",
    "data_import = (null)",
    "data_verify = no",
    "verify_only = no",
    "generate_keys = no",
    "key_prefix = memtier-",
    "key_minimum = 0",
    "key_maximum = 10000000",
    "key_pattern = R:R",
    "key_stddev = 0.000000",
    "key_median = 0.000000",
    "reconnect_interval = 0",
    "connection_timeout = 0",
    "thread_conn_start_min_jitter_micros = 0",
    "thread_conn_start_max_jitter_micros = 0",
    "multi_key_get = 0",
    "authenticate = ",
    "select-db = 0",
    "no-expiry = no",
    "wait-ratio = 0:0",
    "num-slaves = 0-0",
    "wait-timeout = 0-0",
    "json-out-file = run.json",
    "print-all-runs = no",
];

#[test]
fn show_config_prints_memtiers_lines() {
    let c = config(&["-p", "7001", "--json-out-file=run.json"]);
    let json = c.output.json_out_file.as_deref();
    let text = render_show_config(&c.shown, json);
    assert_eq!(
        text.lines().collect::<Vec<_>>(),
        MEMTIER_SHOW_CONFIG,
        "{text}"
    );
    assert!(text.ends_with("print-all-runs = no\n"), "{text}");
    let c = config(&["--key-prefix=k\"p", "-o", "run.txt", "--expiry-range=5-9"]);
    let text = render_show_config(&c.shown, None);
    for line in [
        "key_prefix = k\"p",
        "out_file = run.txt",
        "expiry_range = 5-9",
        "json-out-file = (null)",
    ] {
        assert!(text.lines().any(|l| l == line), "no {line:?} in\n{text}");
    }
}

// ---------------------------------------------------------------- flag syntax

#[test]
fn ratio_with_space_or_equals() {
    assert_eq!(config(&["--ratio", "3:2"]).ratio, (3, 2));
    assert_eq!(config(&["--ratio=3:2"]).ratio, (3, 2));
    assert_eq!(config(&["--ratio=0:1"]).ratio, (0, 1));
}

#[test]
fn repeated_single_value_flags_keep_the_last() {
    let c = config(&[
        "--ratio",
        "1:1",
        "--ratio=3:2",
        "-t",
        "1",
        "--threads=3",
        "-h",
        "a",
        "-s",
        "127.0.0.1",
    ]);
    assert_eq!(c.ratio, (3, 2));
    assert_eq!(c.threads, 3);
    assert_eq!(c.host, "127.0.0.1");
    // Repeating a switch is not an error either.
    assert!(
        config(&["--hide-histogram", "--hide-histogram"])
            .output
            .hide_histogram
    );
    // -4 then -6: the last family wins.
    let c = cli(&["-4", "-6"]);
    assert!(c.conn.ipv6 && !c.conn.ipv4);
}

#[test]
fn values_may_start_with_a_dash_like_getopt() {
    let c = config(&["-a", "-secret", "--key-prefix", "-k-"]);
    assert_eq!(
        c.credentials.map(|c| c.password),
        Some("-secret".to_string())
    );
    assert_eq!(c.keys.prefix, "-k-");
}

#[test]
fn short_flags_match_memtier() {
    let c = cli(&[
        "-s",
        "h1",
        "-p",
        "1",
        "-S",
        "/x",
        "-P",
        "resp3",
        "-a",
        "pw",
        "-u",
        "redis://h",
        "-x",
        "2",
        "-o",
        "out",
        "-n",
        "5",
        "-c",
        "6",
        "-t",
        "7",
        "-d",
        "8",
        "-R",
        "-D",
    ]);
    assert_eq!(c.conn.host.last().map(String::as_str), Some("h1"));
    assert_eq!(c.conn.port.as_deref(), Some("1"));
    assert_eq!(c.conn.unix_socket.as_deref(), Some("/x"));
    assert_eq!(c.protocol.as_deref(), Some("resp3"));
    assert_eq!(c.conn.authenticate.as_deref(), Some("pw"));
    assert_eq!(c.conn.uri.as_deref(), Some("redis://h"));
    assert_eq!(c.run_count.as_deref(), Some("2"));
    assert_eq!(c.out_file.as_deref(), Some("out"));
    assert_eq!(c.requests.as_deref(), Some("5"));
    assert_eq!(c.clients.as_deref(), Some("6"));
    assert_eq!(c.threads.as_deref(), Some("7"));
    assert_eq!(c.data_size.as_deref(), Some("8"));
    assert!(c.random_data);
    assert_eq!(c.debug, 1);
    assert_eq!(
        cli(&["-h", "h2"]).conn.host.last().map(String::as_str),
        Some("h2")
    );
    assert_eq!(
        cli(&["--server=h3"]).conn.host.last().map(String::as_str),
        Some("h3")
    );
}

#[test]
fn help_and_version_are_text_to_print() {
    let Ok(Parsed::Print(help)) = parse_args(argv(&["--help"])) else {
        panic!("--help")
    };
    for needle in [
        "Usage: kvbench [options]",
        "Connection and General Options:",
        "Results Output Options:",
        "Test Options:",
        "Arbitrary command:",
        "Object Options:",
        "Imported Data Options:",
        "Key Options:",
        "WAIT Options:",
        "-h, --host <ADDR>",
        "--ratio <RATIO>",
        "Set:Get ratio (default: 1:10)",
        "--config <FILE>",
    ] {
        assert!(help.contains(needle), "help lacks {needle:?}:\n{help}");
    }
    assert!(!help.contains("\x1b["), "help must not carry colour codes");
    // The other tools are named, so that `kvbench --help` leads to them.
    for tool in [
        "redis-benchmark",
        "latency",
        "intrinsic-latency",
        "zbench",
        "merge",
        "report",
        "completions",
        "man",
    ] {
        assert!(
            help.contains(&format!("kvbench {tool} (")),
            "help lacks {tool}:\n{help}"
        );
    }
    // -h is the host, not help.
    assert_eq!(
        cli(&["-h", "example"]).conn.host.last().map(String::as_str),
        Some("example")
    );

    for flag in ["-v", "--version"] {
        let Ok(Parsed::Print(v)) = parse_args(argv(&[flag])) else {
            panic!("{flag}")
        };
        assert!(
            v.starts_with(&format!("kvbench {}\n", env!("CARGO_PKG_VERSION"))),
            "{v}"
        );
        assert!(v.contains("memtier_benchmark-compatible"));
    }
}

#[test]
fn long_flags_may_be_abbreviated_as_getopt_allows() {
    // getopt_long (memtier's parser) takes any unambiguous prefix of a long option.
    let c = config(&["--key-max=100", "--rati=3:2", "--pipe", "4", "--hide-hist"]);
    assert_eq!(c.keys.max, 100);
    assert_eq!(c.ratio, (3, 2));
    assert_eq!(c.pipeline, 4);
    assert!(c.output.hide_histogram);
    // An exact name wins over the longer names it starts (--rate, --rate-limiting).
    assert_eq!(cli(&["--rate=500"]).rate.as_deref(), Some("500"));
    // A prefix of several options is refused, as getopt refuses it.
    let ambiguous = refusal(&["--key-m=5"]);
    assert!(ambiguous.contains("--key-m"), "{ambiguous}");
    assert!(ambiguous.ends_with("; see --help"), "{ambiguous}");
}

#[test]
fn clap_errors_are_one_line() {
    assert_eq!(
        refusal(&["--foo"]),
        "unexpected argument '--foo'; see --help"
    );
    assert_eq!(
        refusal(&["--rato=3:2"]),
        "unexpected argument '--rato' (did you mean '--ratio'?); see --help"
    );
    assert!(refusal(&["--ratio"]).starts_with("a value is required for '--ratio <RATIO>'"));
    assert!(refusal(&["positional"]).contains("'positional'"));
    assert!(refusal(&["--hide-histogram=yes"]).ends_with("; see --help"));
}

// ---------------------------------------------------------------- stop conditions

#[test]
fn requests_allkeys_and_test_time() {
    assert_eq!(config(&["-n", "7"]).stop, StopAt::RequestsPerClient(7));
    let c = config(&["-n", "allkeys", "--key-maximum=999", "-t", "2", "-c", "5"]);
    assert_eq!(c.stop, StopAt::AllKeys);
    assert_eq!(shown(&c, "requests"), "100"); // 1000 keys over 10 clients
    assert_eq!(
        config(&["--test-time=3"]).stop,
        StopAt::Time(Duration::from_secs(3))
    );
}

// ---------------------------------------------------------------- refusals

#[test]
fn bad_values_are_refused_with_memtiers_words() {
    let cases: &[(&[&str], &str)] = &[
        (
            &["-n", "10", "--test-time=5"],
            "--test-time and --requests are mutually exclusive.",
        ),
        (&["-n", "0"], "requests must be greater than zero."),
        (
            &["-o", "run.json", "--json-out-file=./run.json"],
            "--out-file and --json-out-file name the same file './run.json': give each its own.",
        ),
        (
            &["--json-out-file=a", "--hdr-log=a"],
            "--json-out-file and --hdr-log name the same file 'a': give each its own.",
        ),
        (
            &["--data-verify", "-R"],
            "--data-verify cannot check --random-data values: each SET sends a slice of random \
             bytes at a random offset, so no one value is expected of a key. Drop \
             -R/--random-data, or verify imported data (--data-import)",
        ),
        (
            &["--data-verify", "--key-maximum=2000000000"],
            "--data-verify tracks the keys a run writes with one bit per key, and supports at \
             most 1073741824 keys; this key range has 2000000001. Narrow \
             --key-minimum/--key-maximum",
        ),
        (&["-n", "lots"], "requests must be greater than zero."),
        (&["--test-time=0"], "test time must be greater than zero."),
        (&["-t", "0"], "threads must be greater than zero."),
        (&["-t", "x"], "threads must be greater than zero."),
        (&["-c", "0"], "clients must be greater than zero."),
        (&["--pipeline=0"], "pipeline must be greater than zero."),
        (&["-x", "0"], "run count must be greater than zero."),
        (&["--ratio=0:0"], "ratio must be expressed as [0-n]:[0-n]."),
        (&["--ratio=1"], "ratio must be expressed as [0-n]:[0-n]."),
        (&["--ratio=1:-2"], "ratio must be expressed as [0-n]:[0-n]."),
        (
            &["--key-minimum=10", "--key-maximum=5"],
            "key-maximum (5) must be greater than or equal to key-minimum (10).",
        ),
        (
            &["--key-maximum=0"],
            "key-maximum must be greater than zero.",
        ),
        (
            &["--key-minimum=-1"],
            "key-minimum must be zero or greater.",
        ),
        (
            &["--key-maximum=18446744073709551616"],
            "key-maximum must be below 18446744073709551615.",
        ),
        (
            &["--key-pattern=R"],
            "key-pattern must be in the format of [S/R/G/P/Z]:[S/R/G/P/Z].",
        ),
        (
            &["--key-pattern=X:R"],
            "key-pattern must be in the format of [S/R/G/P/Z]:[S/R/G/P/Z].",
        ),
        (
            &["--key-pattern=P:R"],
            "parallel key-pattern must be configured for both SET and GET commands.",
        ),
        (
            &["--key-zipf-exp=0"],
            "key-zipf-exp must be within interval (0, 5).",
        ),
        (
            &["--key-zipf-exp=5"],
            "key-zipf-exp must be within interval (0, 5).",
        ),
        (
            &["--key-zipf-exp=nan"],
            "key-zipf-exp must be within interval (0, 5).",
        ),
        (&["--key-stddev=0"], "key-stddev must be greater than zero."),
        (&["--key-median=-3"], "key-median must be zero or greater."),
        // memtier's rules for the Gaussian pattern's flags.
        (
            &["--key-stddev=5"],
            "key-stddev and key-median are only allowed together with key-pattern set to G.",
        ),
        (
            &["--key-pattern=S:S", "--key-median=5"],
            "key-stddev and key-median are only allowed together with key-pattern set to G.",
        ),
        (
            &[
                "--key-pattern=G:G",
                "--key-median=5000",
                "--key-maximum=100",
            ],
            "key-median must be between key-minimum and key-maximum.",
        ),
        (
            &["--key-pattern=G:G", "--key-median=5", "--key-minimum=10"],
            "key-median must be between key-minimum and key-maximum.",
        ),
        (&["--rate-limiting=0"], "rate must be greater than zero."),
        (&["--data-offset=536870912"], "data-offset too long"),
        (&["-d", "0"], "data-size must be greater than zero."),
        (
            &["--data-size-range=0-10"],
            "data-size-range must be expressed as [1-n]-[1-n].",
        ),
        (
            &["--data-size-range=10"],
            "data-size-range must be expressed as [1-n]-[1-n].",
        ),
        (
            &["--data-size-range=20-10"],
            "data-size-range minimum (20) must not be greater than its maximum (10).",
        ),
        (
            &["--data-size-list=10"],
            "data-size-list must be expressed as [size1:weight1],...[sizeN:weightN].",
        ),
        (
            &["--data-size-list=10:1,"],
            "data-size-list must be expressed as [size1:weight1],...[sizeN:weightN].",
        ),
        (
            &["--data-size-list=0:1"],
            "data-size-list item '0:1': size and weight must both be greater than zero.",
        ),
        (
            &["-d", "8", "--data-size-range=1-2"],
            "--data-size and --data-size-range cannot be used together: choose one way to size values.",
        ),
        (
            &["--data-size-range=1-2", "--data-size-list=1:1"],
            "--data-size-range and --data-size-list cannot be used together: choose one way to size values.",
        ),
        (
            &["--data-size-pattern=X"],
            "data-size-pattern must be either R or S.",
        ),
        (
            &["--data-size-pattern=S"],
            "--data-size-pattern=S needs --data-size-range.",
        ),
        (
            &["--print-percentiles=50,101"],
            "quantiles must be expressed as [0.0-100.0],[0.0-100.0](,...).",
        ),
        (
            &["--print-percentiles=abc"],
            "quantiles must be expressed as [0.0-100.0],[0.0-100.0](,...).",
        ),
        (
            &["--print-percentiles="],
            "quantiles must be expressed as [0.0-100.0],[0.0-100.0](,...).",
        ),
        (
            &["-P", "http"],
            "supported protocols are 'memcache_text', 'memcache_binary', 'redis', 'resp2' and 'resp3'.",
        ),
        (
            &["-p", "0"],
            "port must be a number in the range [1-65535].",
        ),
        (
            &["-p", "65536"],
            "port must be a number in the range [1-65535].",
        ),
        (
            &["-p", "http"],
            "port must be a number in the range [1-65535].",
        ),
        (
            &["--select-db=-1"],
            "select-db must be greater or equal zero.",
        ),
        (
            &["-a", ""],
            "authenticate needs a password or user:password.",
        ),
        (&["-u", ""], "empty URI provided."),
        (
            &["-u", "localhost:6379"],
            "invalid URI format, missing scheme.",
        ),
        (
            &["-u", "http://localhost"],
            "unsupported URI scheme 'http'. Use 'redis' or 'rediss'.",
        ),
        (
            &["-u", "redis://localhost:99999"],
            "invalid port number '99999'.",
        ),
        (
            &["-u", "redis://localhost:6379/x"],
            "invalid database number 'x'.",
        ),
        (
            &["-S", "/tmp/r.sock", "-h", "localhost"],
            "--unix-socket cannot be combined with --host/--server or --uri: choose one server.",
        ),
        (
            &["-h", "no-such-host.invalid"],
            "cannot resolve host 'no-such-host.invalid'",
        ),
        (
            &["-6", "-h", "127.0.0.1"],
            "cannot resolve host '127.0.0.1' to an IPv6 address (-6)",
        ),
        (
            &["-4", "-h", "::1"],
            "cannot resolve host '::1' to an IPv4 address (-4)",
        ),
        (&["-o", ""], "--out-file needs a file name."),
        (
            &["--command-ratio=2"],
            "--command-ratio=2 must follow the --command it applies to (no arbitrary command found).",
        ),
    ];
    for (args, want) in cases {
        assert_eq!(refusal(args), *want, "args {args:?}");
    }
}

#[test]
fn false_switches_in_a_config_file_are_not_given() {
    // A `false` switch in a config file is "not given", so it is not refused.
    let f = TempFile::new(r#"{"tls": false, "cluster-mode": false}"#);
    config(&[&f.flag()]);
}

// ---------------------------------------------------------------- endpoints and secrets

#[test]
fn uri_sets_host_port_credentials_and_db() {
    let c = config(&["-u", "redis://alice:s3cr:et@127.0.0.1:6390/3"]);
    assert_eq!(c.host, "127.0.0.1");
    assert_eq!(c.port, 6390);
    let creds = c.credentials.clone().expect("credentials");
    assert_eq!(creds.user.as_deref(), Some("alice"));
    assert_eq!(creds.password, "s3cr:et");
    assert_eq!(c.select_db, Some(3));
    match c.endpoint {
        Endpoint::Tcp { addr, .. } => {
            assert_eq!(addr, "127.0.0.1:6390".parse::<SocketAddr>().expect("addr"))
        }
        other => panic!("expected TCP, got {other:?}"),
    }
    assert_eq!(shown(&c, "uri"), "\"redis://alice:***@127.0.0.1:6390/3\"");
    assert_eq!(shown(&c, "authenticate"), "\"alice:***\"");
    assert_eq!(shown(&c, "select-db"), "3");

    // Password only, no port, no db: the flags' values and defaults fill in.
    let c = config(&["-u", "redis://pw@127.0.0.1", "-p", "7000"]);
    assert_eq!((c.host.as_str(), c.port), ("127.0.0.1", 7000));
    assert_eq!(
        c.credentials.clone().map(|c| (c.user, c.password)),
        Some((None, "pw".to_string()))
    );
    assert_eq!(c.select_db, None);
    assert_eq!(shown(&c, "uri"), "\"redis://***@127.0.0.1\"");

    // Host only; bracketed IPv6 literal. Database 0 is where a connection starts, so
    // `/0` selects nothing, as memtier sends no SELECT for it.
    assert_eq!(config(&["-u", "redis://127.0.0.1"]).port, 6379);
    let c = config(&["-u", "redis://[::1]:6381/0"]);
    assert_eq!((c.host.as_str(), c.port, c.select_db), ("::1", 6381, None));

    // -s takes the bracketed form the URI and --servers take.
    let c = config(&["-s", "[::1]", "-p", "6382"]);
    assert_eq!((c.host.as_str(), c.port), ("::1", 6382));
    match c.endpoint {
        Endpoint::Tcp { addr, .. } => {
            assert_eq!(addr, "[::1]:6382".parse::<SocketAddr>().expect("addr"))
        }
        other => panic!("expected TCP, got {other:?}"),
    }

    // The URI wins over -h/-p/-a/--select-db.
    let c = config(&[
        "-h",
        "localhost",
        "-a",
        "other",
        "--select-db=1",
        "-u",
        "redis://u:p@127.0.0.1:6391/2",
    ]);
    assert_eq!(
        (c.host.as_str(), c.port, c.select_db),
        ("127.0.0.1", 6391, Some(2))
    );
    assert_eq!(c.credentials.map(|c| c.password), Some("p".to_string()));
}

#[test]
fn passwords_are_masked_everywhere_they_are_shown() {
    let c = config(&["-a", "hunter2"]);
    assert_eq!(
        c.credentials.clone().map(|c| (c.user, c.password)),
        Some((None, "hunter2".to_string()))
    );
    assert_eq!(shown(&c, "authenticate"), "\"***\"");
    let c = config(&["-a", "bob:hunter2"]);
    assert_eq!(
        c.credentials.clone().and_then(|c| c.user),
        Some("bob".to_string())
    );
    assert_eq!(shown(&c, "authenticate"), "\"bob:***\"");
    let c = config(&["-u", "redis://bob:hunter2@localhost:6379"]);
    for text in [render_show_config(&c.shown, None), format!("{:?}", c.shown)] {
        assert!(!text.contains("hunter2"), "password leaked: {text}");
    }
    assert!(render_show_config(&c.shown, None).contains("uri = redis://bob:***@localhost:6379\n"));
}

#[test]
fn select_db_family_and_unix_socket() {
    assert_eq!(config(&["--select-db=5"]).select_db, Some(5));
    match config(&["-4", "-h", "localhost"]).endpoint {
        Endpoint::Tcp { addr, .. } => assert!(addr.is_ipv4()),
        other => panic!("expected TCP, got {other:?}"),
    }
    let c = config(&["-S", "/tmp/redis.sock"]);
    match &c.endpoint {
        Endpoint::Unix(p) => assert_eq!(p, &PathBuf::from("/tmp/redis.sock")),
        other => panic!("expected Unix, got {other:?}"),
    }
    assert_eq!(shown(&c, "server"), "null");
    assert_eq!(shown(&c, "port"), "0");
    assert_eq!(shown(&c, "unix socket"), "\"/tmp/redis.sock\"");
    assert_eq!(config(&["-P", "resp3"]).protocol, Protocol::Resp3);
    assert_eq!(config(&["-P", "resp2"]).protocol, Protocol::Resp2);
}

#[test]
fn data_size_shapes() {
    assert_eq!(config(&["-d", "100"]).data_size, DataSize::Fixed(100));
    assert_eq!(
        config(&["--data-size-range=5-9"]).data_size,
        DataSize::Range {
            min: 5,
            max: 9,
            spread_over_keys: false
        }
    );
    assert_eq!(
        config(&["--data-size-range=5-9", "--data-size-pattern=S"]).data_size,
        DataSize::Range {
            min: 5,
            max: 9,
            spread_over_keys: true
        }
    );
    assert_eq!(
        config(&["--data-size-list=10:1,20:3"]).data_size,
        DataSize::List(vec![(10, 1), (20, 3)])
    );
    assert_eq!(
        config(&["--print-percentiles=90,99.99"])
            .output
            .print_percentiles,
        vec![90.0, 99.99]
    );
    // memtier keeps a repeat in its list (a table column each); the JSON's keys name it
    // once. Given twice, the last list wins.
    let c = config(&["--print-percentiles=10", "--print-percentiles=50,50,99,50"]);
    assert_eq!(c.output.percentile_columns, vec![50.0, 50.0, 99.0, 50.0]);
    assert_eq!(c.output.print_percentiles, vec![50.0, 99.0]);
}

// ---------------------------------------------------------------- --config files

#[test]
fn config_file_expands_before_the_command_line() {
    let f = TempFile::new(
        r#"{"ratio": "3:2", "test-time": 60, "hide-histogram": true, "random-data": false,
            "threads": 2, "server": "127.0.0.1", "json-out-file": "out.json"}"#,
    );
    let c = config(&[&f.flag()]);
    assert_eq!(c.ratio, (3, 2));
    assert_eq!(c.stop, StopAt::Time(Duration::from_secs(60)));
    assert!(c.output.hide_histogram);
    assert!(!c.random_data);
    assert_eq!(c.threads, 2);
    assert_eq!(c.host, "127.0.0.1");
    assert_eq!(c.output.json_out_file, Some(PathBuf::from("out.json")));

    // The command line overrides the file, wherever --config sits.
    let c = config(&["--ratio=1:1", &f.flag(), "-t", "8"]);
    assert_eq!(c.ratio, (1, 1));
    assert_eq!(c.threads, 8);
    // An exclusive flag on the command line pushes the file's partner out.
    assert_eq!(
        config(&[&f.flag(), "-n", "500"]).stop,
        StopAt::RequestsPerClient(500)
    );
    assert_eq!(
        config(&["-S", "/tmp/s.sock", &f.flag()]).host,
        "/tmp/s.sock"
    );

    // A later file overrides an earlier one.
    let g = TempFile::new(r#"{"ratio": "5:5", "requests": 9}"#);
    let c = config(&[&f.flag(), &g.flag()]);
    assert_eq!(c.ratio, (5, 5));
    assert_eq!(c.stop, StopAt::RequestsPerClient(9));
    assert_eq!(cli(&[&f.flag(), &g.flag()]).config.len(), 2);
}

#[test]
fn config_file_arrays_repeat_the_flag_and_pair_commands() {
    let f = TempFile::new(
        r#"{"command": ["set __key__ __data__", "get __key__"], "command-ratio": [2, 3],
            "command-key-pattern": ["G"]}"#,
    );
    let c = cli(&[&f.flag()]);
    assert_eq!(c.command, vec!["set __key__ __data__", "get __key__"]);
    assert_eq!(c.commands.len(), 2);
    assert_eq!(c.commands[0].ratio.as_deref(), Some("2"));
    assert_eq!(c.commands[0].key_pattern.as_deref(), Some("G"));
    assert_eq!(c.commands[1].ratio.as_deref(), Some("3"));
    assert_eq!(c.commands[1].key_pattern, None);
    // A command list on the command line replaces the file's.
    let c = cli(&[&f.flag(), "--command=ping"]);
    assert_eq!(c.command, vec!["ping"]);
}

#[test]
fn bad_config_files_are_refused_in_one_line() {
    let missing = std::env::temp_dir().join("kvbench-no-such-config.json");
    let msg = refusal(&[&format!("--config={}", missing.display())]);
    assert!(
        msg.starts_with(&format!(
            "config file '{}': cannot read it:",
            missing.display()
        )),
        "{msg}"
    );

    let cases: &[(&str, &str)] = &[
        (
            r#"{"ratoi": "1:1"}"#,
            "key 'ratoi' is not a kvbench/memtier flag (see --help)",
        ),
        (
            r#"{"--ratio": "1:1"}"#,
            "key '--ratio' is not a flag name (write long flag names without the leading dashes)",
        ),
        (r#"["ratio"]"#, "must hold one JSON object of flags"),
        (r#"{"ratio": "1:1""#, "not valid JSON: "),
        (
            r#"{"hide-histogram": "yes"}"#,
            "key 'hide-histogram' is a switch: its value must be true or false",
        ),
        (
            r#"{"ratio": true}"#,
            "key 'ratio' takes a value (a string or a number), not true/false",
        ),
        (
            r#"{"ratio": ["1:1", "2:2"]}"#,
            "key 'ratio' takes one value, not a list",
        ),
        (
            r#"{"ratio": null}"#,
            "key 'ratio' must be a string or a number",
        ),
        (
            r#"{"config": "other.json"}"#,
            "key 'config' cannot be used inside a config file",
        ),
        (
            r#"{"command": ["get __key__"], "command-ratio": [1, 2]}"#,
            "key 'command-ratio' has 2 entries but there are 1 commands",
        ),
    ];
    for (text, want) in cases {
        let f = TempFile::new(text);
        let msg = refusal(&[&f.flag()]);
        let prefix = format!("config file '{}': ", f.0.file("config.json").display());
        assert!(msg.starts_with(&prefix), "{text}: {msg}");
        assert!(msg.contains(want), "{text}: got {msg:?}, want {want:?}");
    }
    // A value the file gives is validated like a command-line one.
    let f = TempFile::new(r#"{"threads": 0}"#);
    assert_eq!(refusal(&[&f.flag()]), "threads must be greater than zero.");
}

#[test]
fn shipped_workloads_load_and_validate() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("config");
    let load = |name: &str| {
        let path = dir.join(name);
        assert!(path.is_file(), "{} is missing", path.display());
        config(&[&format!("--config={}", path.display())])
    };
    let c = load("redis-default.json");
    assert_eq!(
        (c.host.as_str(), c.port, c.threads, c.clients),
        ("localhost", 6379, 4, 50)
    );
    assert_eq!(c.ratio, (1, 10));
    assert!(matches!(c.stop, StopAt::Time(_)));
    assert_eq!(c.data_size, DataSize::Fixed(32));

    let c = load("mixed-3-2-json.json");
    assert_eq!(c.ratio, (3, 2));
    assert_eq!(c.stop, StopAt::Time(Duration::from_secs(60)));
    assert!(c.output.json_out_file.is_some());

    let c = load("zipf-hot-keys.json");
    assert_eq!(
        (c.keys.set_pattern, c.keys.get_pattern),
        (KeyPattern::Zipf, KeyPattern::Zipf)
    );
    assert_eq!(c.keys.zipf_exp, 1.2);

    let c = load("large-values.json");
    assert_eq!(
        c.data_size,
        DataSize::Range {
            min: 4096,
            max: 65536,
            spread_over_keys: false
        }
    );
    assert_eq!(c.pipeline, 4);

    // Every JSON file in config/ is a valid workload, not only the four above.
    for entry in std::fs::read_dir(&dir).expect("read config/") {
        let path = entry.expect("dir entry").path();
        if path.extension().is_some_and(|e| e == "json") {
            config(&[&format!("--config={}", path.display())]);
        }
    }
}

/// KVBENCH_AUTH set to nothing (an empty secret in a pipeline) is named, where the
/// refusal read as if `-a ''` had been typed.
#[test]
fn an_empty_kvbench_auth_is_named() {
    let mut cmd = common::kvbench_command();
    cmd.args(["-s", "127.0.0.1", "-p", "1", "-n", "1"])
        .env("KVBENCH_AUTH", "");
    let out = common::run_with_timeout(cmd, common::KVBENCH_TIMEOUT);
    assert_eq!(out.status.code(), Some(1), "{}", common::describe(&out));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "error: authenticate needs a password or user:password: KVBENCH_AUTH is set but \
         empty (unset it, or give the password).\n"
    );
}

/// Values too small for `--visibility-from`'s stamp name the flag that set them.
#[test]
fn visibility_names_the_size_flag_given() {
    for (size, flag) in [
        ("--data-size=8", "raise --data-size."),
        (
            "--data-size-range=8-100",
            "raise --data-size-range's minimum.",
        ),
        (
            "--data-size-list=8:1,100:1",
            "raise --data-size-list's smallest size.",
        ),
    ] {
        let msg = refusal(&["--visibility-from=127.0.0.1:6380", size]);
        assert!(msg.ends_with(flag), "{size}: {msg}");
    }
}
