//! The redis-benchmark front end against the real redis-benchmark: the real tool runs
//! against a throwaway redis-server (or a recording fake server), its normal, `-q` and
//! `--csv` outputs are read by the parser in `common/rb_output.rs`, and kvbench's
//! renderer must produce text the same parser reads with the same structure. The suite
//! is checked against what the real tool sends, byte for byte, and against what the
//! server executed (`INFO commandstats`). `--tls-ciphers` is checked against OpenSSL.

mod common;
#[path = "common/rb_output.rs"]
mod rb_output;

use std::collections::HashMap;
use std::process::Command;
use std::time::Duration;

use hdrhistogram::Histogram;
use kvbench::frontend::common::tls_ciphers::{openssl_name, select_suites};
use kvbench::frontend::redis_benchmark::flags::{Parsed, parse};
use kvbench::frontend::redis_benchmark::render::{
    self, CSV_HEADER, HostConfig, OutputMode, RunInfo, ServerInfo, TestResult,
};
use kvbench::frontend::redis_benchmark::suite::{
    PayloadGenerator, SuiteParams, TestSelection, arbitrary_test, default_suite,
};
use kvbench::stats::new_histogram;

use common::{Recorder, RedisServer, describe, first_word, run_with_timeout};
use rb_output::{Block, DistLine, block_shape, parse_csv, parse_normal, parse_quiet};

const RB_TIMEOUT: Duration = Duration::from_secs(120);

/// Run the real redis-benchmark against `port` with `args`; its stdout.
fn real_rb(port: u16, args: &[&str]) -> String {
    let mut cmd = Command::new("redis-benchmark");
    cmd.args(["-h", "127.0.0.1", "-p", &port.to_string()])
        .args(args);
    let out = run_with_timeout(cmd, RB_TIMEOUT);
    assert!(
        out.status.success(),
        "redis-benchmark {args:?}: {}",
        describe(&out)
    );
    String::from_utf8(out.stdout).expect("redis-benchmark prints text")
}

fn kvbench_titles(raw_t: Option<&str>) -> Vec<String> {
    let selection = raw_t.map_or(TestSelection::All, |t| TestSelection::parse(t).unwrap().0);
    let payload = PayloadGenerator::default().next_payload(3);
    default_suite(
        SuiteParams {
            randomize: false,
            cluster: false,
            selection: &selection,
        },
        &payload,
    )
    .into_iter()
    .map(|t| t.title)
    .collect()
}

/// redis-benchmark 7.0 ends the suite at MSET; 7.2 added XADD, which kvbench runs.
fn without_xadd(titles: Vec<String>) -> Vec<String> {
    titles.into_iter().filter(|t| t != "XADD").collect()
}

fn ms_to_us(ms: &str) -> u64 {
    let (int, frac) = ms.split_once('.').expect("three decimals");
    int.parse::<u64>().unwrap() * 1000 + frac.parse::<u64>().unwrap()
}

/// A kvbench histogram holding each line's new requests at the line's value: walking it
/// the way redis-benchmark does must print the same lines again.
fn histogram_from(lines: &[DistLine]) -> Histogram<u64> {
    let mut h = new_histogram();
    let mut before = 0;
    for l in lines {
        if l.cumulative > before {
            h.record_n(ms_to_us(&l.value_ms), l.cumulative - before)
                .unwrap();
            before = l.cumulative;
        }
    }
    h
}

fn run_info(clients: u32) -> RunInfo {
    RunInfo {
        clients,
        keep_alive: true,
        threads: 0,
        // The harness starts redis-server with `--save "" --appendonly no`.
        server: ServerInfo::Single(Some(HostConfig {
            save: String::new(),
            appendonly: "no".into(),
        })),
        precision: 3,
    }
}

fn kvbench_result(real: &Block, latency: Histogram<u64>) -> TestResult {
    TestResult {
        title: real.title.clone(),
        requests: real.requests,
        elapsed: Duration::from_secs_f64(real.seconds.max(0.001)),
        payload_bytes: real.payload_bytes as usize,
        latency,
    }
}

#[test]
fn normal_output_block_for_block() {
    let server = RedisServer::start();
    let raw = real_rb(
        server.port,
        &["-n", "2000", "-c", "5", "-t", "set,get,lrange_100"],
    );
    let real = parse_normal(&raw).unwrap_or_else(|e| panic!("{e}\n{raw}"));
    let titles: Vec<String> = real.blocks.iter().map(|b| b.title.clone()).collect();
    assert_eq!(titles, kvbench_titles(Some("set,get,lrange_100")));
    assert!(real.trailing_empty_line);

    let mut ours = String::new();
    for block in &real.blocks {
        assert_eq!(block.requests, 2000);
        assert_eq!(
            (block.clients, block.payload_bytes, block.keep_alive),
            (5, 3, 1)
        );
        // Re-walking the percentile lines must print them again, and the same for the
        // cumulative lines: the walks and their rounding are redis-benchmark's.
        let from_percentiles = kvbench_result(block, histogram_from(&block.percentiles));
        let text = render::render_test(
            &run_info(block.clients),
            &from_percentiles,
            OutputMode::Normal,
        );
        let again = parse_normal(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(again.blocks[0].percentiles, block.percentiles, "{text}");
        assert_eq!(block_shape(&again.blocks[0]), block_shape(block));
        assert_eq!(again.blocks[0].summary[5], block.summary[5], "max");
        let from_cumulative = kvbench_result(block, histogram_from(&block.cumulative));
        let text = render::render_test(
            &run_info(block.clients),
            &from_cumulative,
            OutputMode::Normal,
        );
        let again = parse_normal(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(again.blocks[0].cumulative, block.cumulative, "{text}");
        ours.push_str(&text);
    }
    ours.push_str(render::suite_footer(OutputMode::Normal));
    let ours = parse_normal(&ours).unwrap();
    assert_eq!(ours.blocks.len(), real.blocks.len());
    assert!(ours.trailing_empty_line);
    for (a, b) in ours.blocks.iter().zip(&real.blocks) {
        assert_eq!(block_shape(a), block_shape(b));
        assert_eq!(
            (
                &a.title,
                a.requests,
                a.clients,
                a.payload_bytes,
                a.keep_alive,
                &a.server
            ),
            (
                &b.title,
                b.requests,
                b.clients,
                b.payload_bytes,
                b.keep_alive,
                &b.server
            )
        );
    }
}

#[test]
fn quiet_output_lists_the_same_tests() {
    let server = RedisServer::start();
    let raw = real_rb(server.port, &["-n", "200", "-c", "5", "-q"]);
    let real = parse_quiet(&raw).unwrap_or_else(|e| panic!("{e}\n{raw}"));
    assert!(raw.ends_with("\n\n"), "the suite ends with an empty line");
    let real_titles: Vec<String> = real.iter().map(|q| q.title.clone()).collect();
    let ours = kvbench_titles(None);
    if real_titles.contains(&"XADD".to_string()) {
        assert_eq!(real_titles, ours);
    } else {
        assert_eq!(real_titles, without_xadd(ours.clone()));
    }

    let mut text = String::new();
    for q in &real {
        let mut h = new_histogram();
        h.record_n(ms_to_us(&format!("{:.3}", q.p50_ms)), 200)
            .unwrap();
        let result = TestResult {
            title: q.title.clone(),
            requests: 200,
            elapsed: Duration::from_secs_f64(200.0 / q.rps),
            payload_bytes: 3,
            latency: h,
        };
        text.push_str(&render::render_test(
            &run_info(5),
            &result,
            OutputMode::Quiet,
        ));
    }
    text.push_str(render::suite_footer(OutputMode::Quiet));
    let again = parse_quiet(&text).unwrap();
    assert!(text.ends_with("\n\n"));
    for (a, b) in again.iter().zip(&real) {
        assert_eq!(a.title, b.title);
        assert_eq!(a.p50_ms, b.p50_ms, "{}", a.title);
        // `inf` (a test shorter than redis-benchmark's millisecond tick) must stay `inf`.
        let same = a.rps == b.rps || (a.rps - b.rps).abs() <= 0.01 * b.rps;
        assert!(same, "{a:?} vs {b:?}");
    }
}

#[test]
fn csv_output_header_and_rows() {
    let server = RedisServer::start();
    let raw = real_rb(server.port, &["-t", "ping,set,get", "-n", "1000", "--csv"]);
    assert!(raw.starts_with(CSV_HEADER), "{raw}");
    let real = parse_csv(&raw).unwrap_or_else(|e| panic!("{e}\n{raw}"));
    let titles: Vec<&str> = real.iter().map(|r| r.title.as_str()).collect();
    assert_eq!(titles, kvbench_titles(Some("ping,set,get")));
    assert!(!raw.ends_with("\n\n"), "no empty line after CSV");

    // An arbitrary command with quotes in its title.
    let raw = real_rb(
        server.port,
        &[
            "-n",
            "100",
            "--csv",
            "eval",
            "return redis.call(\"ping\")",
            "0",
        ],
    );
    let real_eval = parse_csv(&raw).unwrap_or_else(|e| panic!("{e}\n{raw}"));
    let args: Vec<Vec<u8>> = ["eval", "return redis.call(\"ping\")", "0"]
        .iter()
        .map(|s| s.as_bytes().to_vec())
        .collect();
    let eval = arbitrary_test(&args, 3, false, false);
    assert_eq!(real_eval[0].title, eval.title);

    let mut text = CSV_HEADER.to_string();
    for (title, row) in titles
        .iter()
        .map(|t| t.to_string())
        .chain([eval.title.clone()])
        .zip(real.iter().chain(&real_eval))
    {
        let mut h = new_histogram();
        h.record_n(ms_to_us(&format!("{:.3}", row.latencies[4])), 10)
            .unwrap();
        let result = TestResult {
            title,
            requests: 1000,
            elapsed: Duration::from_millis(20),
            payload_bytes: 3,
            latency: h,
        };
        text.push_str(&render::render_test(
            &run_info(50),
            &result,
            OutputMode::Csv,
        ));
    }
    let ours = parse_csv(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let our_titles: Vec<&str> = ours.iter().map(|r| r.title.as_str()).collect();
    let mut want = titles.clone();
    want.push(&eval.title);
    assert_eq!(our_titles, want);
    assert_eq!(ours[4].latencies[4], real_eval[0].latencies[4]);
}

#[test]
fn arbitrary_command_titles_and_payload() {
    let server = RedisServer::start();
    let raw = real_rb(server.port, &["-n", "100", "-c", "2", "set", "foo", "bar"]);
    let real = parse_normal(&raw).unwrap_or_else(|e| panic!("{e}\n{raw}"));
    assert_eq!(real.blocks.len(), 1);
    assert!(
        !real.trailing_empty_line,
        "no empty line after a command's block"
    );
    let args: Vec<Vec<u8>> = ["set", "foo", "bar"]
        .iter()
        .map(|s| s.as_bytes().to_vec())
        .collect();
    let ours = arbitrary_test(&args, 3, false, false);
    assert_eq!(real.blocks[0].title, ours.title);
    assert_eq!(real.blocks[0].payload_bytes, ours.payload_bytes as u64);

    // -x: the last argument comes from standard input (empty here) and is not in the title.
    let raw = real_rb(server.port, &["-n", "100", "-q", "-x", "set", "foo"]);
    let real = parse_quiet(&raw).unwrap_or_else(|e| panic!("{e}\n{raw}"));
    let Ok(Parsed::Run(mut spec)) =
        parse(["redis-benchmark", "-n", "100", "-q", "-x", "set", "foo"])
    else {
        panic!("-x set foo does not parse")
    };
    spec.read_last_arg(&b""[..]).unwrap();
    let command = spec.command.unwrap();
    let ours = arbitrary_test(&command, command.len() - 1, false, false);
    assert_eq!(real[0].title, ours.title);
    assert_eq!(command.len(), 3);
}

#[test]
fn each_test_sends_exactly_what_redis_benchmark_sends() {
    let recorder = Recorder::start();
    real_rb(recorder.port, &["-n", "1", "-c", "1", "-q"]);
    let sent: Vec<Vec<u8>> = recorder
        .requests()
        .into_iter()
        .filter(|r| first_word(r) != "CONFIG")
        .collect();
    let selection = TestSelection::All;
    let payload = PayloadGenerator::default().next_payload(3);
    let ours: Vec<Vec<u8>> = default_suite(
        SuiteParams {
            randomize: false,
            cluster: false,
            selection: &selection,
        },
        &payload,
    )
    .into_iter()
    .map(|t| t.command.bytes().to_vec())
    .collect();
    let ours = if sent.iter().any(|r| first_word(r) == "XADD") {
        ours
    } else {
        ours[..ours.len() - 1].to_vec()
    };
    let show = |v: &[Vec<u8>]| -> Vec<String> {
        v.iter()
            .map(|r| String::from_utf8_lossy(r).into_owned())
            .collect()
    };
    assert_eq!(show(&sent), show(&ours));

    // With -r every __rand_int__ becomes 12 digits, in the places the templates mark.
    let recorder = Recorder::start();
    real_rb(
        recorder.port,
        &["-n", "1", "-c", "1", "-q", "-r", "1000", "-t", "zadd,mset"],
    );
    let sent: Vec<Vec<u8>> = recorder
        .requests()
        .into_iter()
        .filter(|r| first_word(r) != "CONFIG")
        .collect();
    let selection = TestSelection::parse("zadd,mset").unwrap().0;
    let tests = default_suite(
        SuiteParams {
            randomize: true,
            cluster: false,
            selection: &selection,
        },
        &payload,
    );
    assert_eq!(sent.len(), tests.len());
    for (request, test) in sent.iter().zip(&tests) {
        let mut masked = request.clone();
        for &at in test.command.rand_positions() {
            let field = &mut masked[at..at + 12];
            assert!(
                field.iter().all(u8::is_ascii_digit),
                "{}",
                String::from_utf8_lossy(request)
            );
            field.copy_from_slice(b"__rand_int__");
        }
        assert_eq!(
            String::from_utf8_lossy(&masked),
            String::from_utf8_lossy(test.command.bytes())
        );
    }
}

#[test]
fn connection_setup_commands_come_first_in_redis_benchmarks_order() {
    // A fact the engine must reproduce: before its first request each connection sends
    // AUTH, CLIENT TRACKING on, SELECT, HELLO 3, in this order, pipelined with it.
    let recorder = Recorder::start();
    real_rb(
        recorder.port,
        &[
            "-n",
            "1",
            "-c",
            "1",
            "-q",
            "-a",
            "pw",
            "--user",
            "bob",
            "--enable-tracking",
            "--dbnum",
            "2",
            "-3",
            "-t",
            "ping_mbulk",
        ],
    );
    let words: Vec<String> = recorder
        .requests()
        .iter()
        .map(|r| first_word(r))
        .filter(|w| w != "CONFIG")
        .collect();
    let tail = &words[words.len() - 5..];
    assert_eq!(
        tail,
        ["AUTH", "CLIENT", "SELECT", "HELLO", "PING"],
        "{words:?}"
    );
}

#[test]
fn the_server_sees_what_the_suite_sends() {
    let server = RedisServer::start();
    server.config_resetstat();
    real_rb(server.port, &["-n", "100", "-c", "5", "-q"]);
    let mut seen = server.commandstats();
    seen.remove("config|get");
    seen.remove("config|resetstat");
    let ran_xadd = seen.contains_key("xadd");
    let mut predicted: HashMap<String, u64> = HashMap::new();
    let selection = TestSelection::All;
    let payload = PayloadGenerator::default().next_payload(3);
    for t in default_suite(
        SuiteParams {
            randomize: false,
            cluster: false,
            selection: &selection,
        },
        &payload,
    ) {
        let word = if t.title == "PING_INLINE" {
            "ping".to_string()
        } else {
            first_word(t.command.bytes()).to_lowercase()
        };
        if word == "xadd" && !ran_xadd {
            continue;
        }
        *predicted.entry(word).or_default() += 100;
    }
    assert_eq!(seen, predicted);
    assert_eq!(
        (seen["ping"], seen["lpush"], seen["lrange"], seen["set"]),
        (200, 200, 400, 100)
    );
}

#[test]
fn tls_ciphers_select_what_openssl_selects() {
    let offered = [
        "ECDHE-ECDSA-AES256-GCM-SHA384",
        "ECDHE-RSA-AES256-GCM-SHA384",
        "ECDHE-ECDSA-CHACHA20-POLY1305",
        "ECDHE-RSA-CHACHA20-POLY1305",
        "ECDHE-ECDSA-AES128-GCM-SHA256",
        "ECDHE-RSA-AES128-GCM-SHA256",
    ];
    for cipher_string in [
        "DEFAULT",
        "DEFAULT:-AES128-SHA256",
        "ALL",
        "HIGH:!aNULL:!MD5",
        "ECDHE+AESGCM",
        "EECDH+AESGCM:EDH+AESGCM",
        "kEECDH+AESGCM:kEECDH+CHACHA20",
        "aRSA:!AES256",
        "aECDSA",
        "ALL:+AES256",
        "AES128:CHACHA20:@STRENGTH",
        "!CHACHA20:ALL",
        "ECDHE-RSA-AES256-GCM-SHA384:ECDHE-RSA-AES128-GCM-SHA256",
        "ECDHE-RSA-AES128-GCM-SHA256:ECDHE-RSA-AES256-GCM-SHA384",
        "ALL:-ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-ECDSA-AES256-GCM-SHA384",
        "ALL:-AES256:AES256",
        "AESGCM:-aRSA",
        "DEFAULT:@SECLEVEL=1",
    ] {
        let out = Command::new("openssl")
            .args(["ciphers", "-s", "-tls1_2", cipher_string])
            .output()
            .expect("openssl runs (make test installs it)");
        assert!(out.status.success(), "openssl ciphers {cipher_string}");
        let openssl: Vec<String> = String::from_utf8_lossy(&out.stdout)
            .trim()
            .split(':')
            .filter(|c| offered.contains(c))
            .map(str::to_string)
            .collect();
        let ours: Vec<String> = select_suites(Some(cipher_string), None)
            .unwrap()
            .unwrap()
            .suites
            .iter()
            .filter_map(openssl_name)
            .filter(|n| !n.starts_with("TLS_"))
            .map(str::to_string)
            .collect();
        assert_eq!(ours, openssl, "--tls-ciphers {cipher_string}");
    }
}

/// The real tool's cluster output, captured from a 3-master cluster, parses, and
/// kvbench's banner and cluster lines have the same shape.
#[test]
fn cluster_output_shape() {
    let real = include_str!("testdata/redis-benchmark-cluster.out");
    let parsed = parse_normal(real).unwrap_or_else(|e| panic!("{e}"));
    let masters = parsed.masters.clone().unwrap();
    assert_eq!(masters.len(), 3);
    let ours_banner = render::cluster_masters(
        &masters
            .iter()
            .map(|(name, addr)| {
                let (host, port) = addr.rsplit_once(':').unwrap();
                render::MasterInfo {
                    name: name.clone(),
                    host: host.to_string(),
                    port: port.parse().unwrap(),
                }
            })
            .collect::<Vec<_>>(),
    );
    let block = &parsed.blocks[0];
    let info = RunInfo {
        clients: block.clients,
        keep_alive: true,
        threads: block.threads.unwrap(),
        server: ServerInfo::Cluster(vec![
            Some(HostConfig {
                save: String::new(),
                appendonly: "no".into()
            });
            3
        ]),
        precision: 3,
    };
    let result = kvbench_result(block, histogram_from(&block.percentiles));
    let text = format!(
        "{ours_banner}{}",
        render::render_test(&info, &result, OutputMode::Normal)
    );
    let ours = parse_normal(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(ours.masters, parsed.masters);
    assert_eq!(block_shape(&ours.blocks[0]), block_shape(block));
    assert_eq!(ours.blocks[0].server, block.server);
}
