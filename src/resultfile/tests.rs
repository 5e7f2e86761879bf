//! Tests of the result-file reader against real memtier_benchmark and kvbench outputs.

use super::*;
use crate::results::test_support::{ARBITRARY_JSON, DEFAULT_JSON, RUNS3_JSON, sample_histogram};

pub(crate) const KV_SINGLE: &str = include_str!("testdata/kvbench_single.json");
pub(crate) const KV_RUNS3: &str = include_str!("testdata/kvbench_runs3.json");
pub(crate) const KV_ARBITRARY: &str = include_str!("testdata/kvbench_arbitrary.json");
pub(crate) const KV_CLUSTER: &str = include_str!("testdata/kvbench_cluster.json");
pub(crate) const KV_MEMCACHE: &str = include_str!("testdata/kvbench_memcache.json");
pub(crate) const KV_SET_HGRM: &str = include_str!("testdata/kvbench_single_SET_command_run_1.hgrm");
pub(crate) const MEMTIER_MEMCACHE: &str = include_str!("testdata/memtier_memcache_text.json");

fn json(name: &str, text: &str) -> JsonResult {
    match read_str(name, text).unwrap().content {
        Content::Json(j) => j,
        Content::IntervalLog(_) => panic!("{name} read as an interval log"),
    }
}

fn err(name: &str, text: &str) -> String {
    read_str(name, text).unwrap_err().message().to_string()
}

fn row<'a>(block: &'a Block, name: &str) -> &'a RowData {
    block.rows.iter().find(|r| r.name == name).unwrap()
}

#[test]
fn memtier_default_json_reads_every_figure() {
    let r = json("default.json", DEFAULT_JSON);
    assert_eq!(r.configuration.len(), 53);
    assert_eq!(r.configuration[0].0, "server");
    assert_eq!(
        r.configuration[1],
        ("port".to_string(), ordered::Json::Uint(7001))
    );
    assert_eq!(r.configuration.last().unwrap().0, "print-all-runs");
    assert_eq!(r.config.protocol.as_deref(), Some("redis"));
    assert_eq!((r.config.threads, r.config.clients), (Some(2), Some(2)));
    assert_eq!(
        r.run_info,
        RunInformation {
            threads: Some(2),
            connections_per_thread: Some(2),
            requests_per_client: Some(200),
            seconds: None,
            format_version: Some(2),
        }
    );
    assert_eq!(r.blocks.len(), 1);
    let b = &r.blocks[0];
    assert_eq!(
        (b.title.as_str(), b.kind),
        ("ALL STATS", BlockKind::AllStats)
    );
    assert_eq!(
        b.runtime,
        Runtime {
            start_epoch_ms: 1_795_979_180_809,
            finish_epoch_ms: 1_795_979_180_826,
            duration_ms: 17,
            interrupted: false,
            stopped_by: None,
        }
    );
    let names: Vec<(&str, &str, bool)> = b
        .rows
        .iter()
        .map(|r| (r.name.as_str(), r.hist_name.as_str(), r.has_hits))
        .collect();
    assert_eq!(
        names,
        [
            ("Sets", "SET", false),
            ("Gets", "GET", true),
            ("Waits", "WAIT", false),
            ("Totals", "FULL_RUN", true)
        ]
    );
    let gets = row(b, "Gets");
    assert_eq!(gets.count, 400);
    assert_eq!(
        (gets.ops_per_sec, gets.hits_per_sec, gets.misses_per_sec),
        (22362.61, 2012.63, 20349.97)
    );
    assert_eq!((gets.moved_per_sec, gets.ask_per_sec), (None, None));
    assert_eq!(
        (
            gets.latency_ms,
            gets.average_latency_ms,
            gets.accumulated_latency_ms
        ),
        (0.084, 0.084, 33.0)
    );
    assert_eq!((gets.min_latency_ms, gets.max_latency_ms), (0.016, 0.255));
    assert_eq!(
        (gets.kb_per_sec, gets.kb_rx_per_sec, gets.kb_tx_per_sec),
        (937.09, 176.02, 761.07)
    );
    assert_eq!(gets.series.len(), 1);
    let s = &gets.series[0];
    assert_eq!(
        (s.offset, s.bytes_rx, s.bytes_tx, s.count),
        (0, 3224, 13940, 400)
    );
    assert_eq!(s.accumulated_latency_ms, Some(33.0));
    assert_eq!(
        s.percentiles[2],
        Percentile {
            percent: 99.9,
            latency_ms: 0.255
        }
    );
    assert!(s.histogram.is_none());
    let pcts: Vec<f64> = gets.percentiles.iter().map(|p| p.percent).collect();
    assert_eq!(pcts, [50.0, 99.0, 99.9]);
    assert_eq!(
        gets.histogram.as_ref().unwrap(),
        &sample_histogram(DEFAULT_JSON, "ALL STATS", "Gets")
    );
    // memtier's Totals latency bug is read as written.
    let totals = b.totals().unwrap();
    assert_eq!((totals.latency_ms, totals.count), (0.0, 800));
    // Waits never ran: no latency figures in its second.
    let waits = &row(b, "Waits").series[0];
    assert_eq!((waits.count, waits.average_latency_ms), (0, None));
    let names: Vec<&str> = b.distributions.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["SET", "GET", "WAIT"]);
    assert_eq!(b.distributions[0].points[0], (0.015, 0.0));
}

#[test]
fn memtier_runs3_json_has_every_block() {
    let r = json("runs3.json", RUNS3_JSON);
    let kinds: Vec<BlockKind> = r.blocks.iter().map(|b| b.kind).collect();
    assert_eq!(
        kinds,
        [
            BlockKind::Run(1),
            BlockKind::Run(2),
            BlockKind::Run(3),
            BlockKind::Best,
            BlockKind::Worst,
            BlockKind::Aggregated(3)
        ]
    );
    let agg = &r.blocks[5];
    assert_eq!(
        agg.runtime,
        Runtime::default(),
        "memtier writes zeros there"
    );
    assert_eq!(agg.totals().unwrap().count, 600);
    // memtier wrote an empty histogram there; the reader puts the rows' sum in its place.
    let mut sum = row(agg, "Sets").histogram.clone().unwrap();
    sum.add(row(agg, "Gets").histogram.as_ref().unwrap())
        .unwrap();
    assert_eq!(agg.totals().unwrap().histogram.as_ref(), Some(&sum));
    assert!(RUNS3_JSON.contains(
        "\"Compressed Histogram\": \"HISTFAAAACF4nJNpmSzMwMDAyAABTFCaC0QoH3ZjsP8AEWAEAEsrA7A=\""
    ));
    assert!(agg.distributions.is_empty(), "--hide-histogram");
    assert_eq!(row(agg, "Gets").hist_name, "GET");
    assert!(row(agg, "Sets").series.is_empty());
}

#[test]
fn arbitrary_command_rows_have_no_hits() {
    for (name, text) in [
        ("arbitrary.json", ARBITRARY_JSON),
        ("kv.json", KV_ARBITRARY),
    ] {
        let r = json(name, text);
        let b = &r.blocks[0];
        let names: Vec<(&str, &str, bool)> = b
            .rows
            .iter()
            .map(|r| (r.name.as_str(), r.hist_name.as_str(), r.has_hits))
            .collect();
        assert_eq!(
            names,
            [
                ("Hsets", "HSET", false),
                ("Gets", "GET", false),
                ("Totals", "FULL_RUN", false)
            ],
            "{name}"
        );
    }
}

#[test]
fn kvbench_files_read_with_series_and_cluster_columns() {
    let r = json("single.json", KV_SINGLE);
    assert_eq!(r.run_info.seconds, Some(3));
    let b = &r.blocks[0];
    let totals = b.totals().unwrap();
    assert_eq!(totals.series.len(), 4);
    assert_eq!(
        totals.series.iter().map(|s| s.count).sum::<u64>(),
        totals.count
    );
    assert_eq!(totals.histogram.as_ref().unwrap().len(), totals.count);
    assert!(
        totals.latency_ms > 0.0,
        "kvbench writes the true Totals latency"
    );

    let c = json("cluster.json", KV_CLUSTER);
    let sets = row(&c.blocks[0], "Sets");
    assert_eq!(
        (sets.moved_per_sec, sets.ask_per_sec),
        (Some(0.0), Some(0.0))
    );

    let m = json("memcache.json", KV_MEMCACHE);
    assert_eq!(m.config.protocol.as_deref(), Some("memcache_text"));
    let m = json("memtier_memcache.json", MEMTIER_MEMCACHE);
    assert_eq!(m.config.protocol.as_deref(), Some("memcache_text"));

    let runs = json("runs3.json", KV_RUNS3);
    assert_eq!(runs.blocks.len(), 6);
    assert_eq!(
        runs.blocks[5].runtime.duration_ms,
        runs.blocks[..3]
            .iter()
            .map(|b| b.runtime.duration_ms)
            .sum::<u64>()
    );
}

#[test]
fn kvbench_hgrm_reads_as_a_log_of_its_command() {
    let f = read_str("p_SET_command_run_1.hgrm", KV_SET_HGRM).unwrap();
    let Content::IntervalLog(log) = f.content else {
        panic!("not a log");
    };
    assert_eq!(log.title_command(), Some("SET"));
    let single = json("single.json", KV_SINGLE);
    let sets = row(&single.blocks[0], "Sets");
    // One line per second that saw requests.
    let busy = sets.series.iter().filter(|s| s.count > 0).count();
    assert_eq!(log.intervals.len(), busy);
    let mut sum = crate::stats::new_histogram();
    for iv in &log.intervals {
        sum.add(&iv.histogram).unwrap();
        assert!(iv.end_epoch_ms - iv.start_epoch_ms <= 1000);
    }
    assert_eq!(&sum, sets.histogram.as_ref().unwrap());
}

#[test]
fn not_a_result_file_is_a_clear_error() {
    assert_eq!(
        err("run.json", r#"{"configuration": {"server": "x"}}"#),
        "run.json: not a kvbench or memtier_benchmark result file (no \"ALL STATS\" or run results)"
    );
    assert_eq!(
        err("run.json", "[1, 2]"),
        "run.json: not a kvbench or memtier_benchmark result file (not a JSON object)"
    );
    assert_eq!(
        err("e.json", "  \n"),
        "e.json: empty file, not a result file"
    );
    assert_eq!(
        err("x.txt", "hello"),
        "x.txt: not a kvbench or memtier_benchmark result file, nor an HdrHistogram interval log"
    );
    let cut = &DEFAULT_JSON[..DEFAULT_JSON.len() / 2];
    let e = err("cut.json", cut);
    assert!(e.starts_with("cut.json: invalid JSON at line "), "{e}");
    assert!(e.contains(", column "), "{e}");
}

#[test]
fn bad_figures_are_named_by_their_place() {
    let bad = DEFAULT_JSON.replacen("\"Count\": 400", "\"Count\": \"400\"", 1);
    assert_eq!(
        err("run.json", &bad),
        "run.json: \"ALL STATS\" > \"Sets\" > \"Count\": expected a whole number, found \"400\""
    );
    let bad = DEFAULT_JSON.replacen("HISTFAAAAD94", "HISTFAAAAD9!", 1);
    let e = err("run.json", &bad);
    assert!(
        e.starts_with("run.json: \"ALL STATS\" > \"Sets\" > \"Percentile Latencies\" > \"Histogram log format\" > \"Compressed Histogram\": the histogram is not valid base64"),
        "{e}"
    );
    let bad = DEFAULT_JSON.replacen("HISTFAAAAD94", "AAAAAAAAAAAA", 1);
    let e = err("run.json", &bad);
    assert!(
        e.contains("the histogram does not decode as an HdrHistogram"),
        "{e}"
    );
    let bad = DEFAULT_JSON.replacen("\"Totals\":{", "\"Everything\":{", 1);
    assert_eq!(
        err("run.json", &bad),
        "run.json: \"ALL STATS\": the last row is not \"Totals\""
    );
    let bad = DEFAULT_JSON.replacen(
        "\"Interrupted\": \"false\"",
        "\"Interrupted\": \"maybe\"",
        1,
    );
    assert_eq!(
        err("run.json", &bad),
        "run.json: \"ALL STATS\" > \"Runtime\" > \"Interrupted\": expected \"true\" or \"false\", found \"maybe\""
    );
    let bad = DEFAULT_JSON.replacen("\"Format version\": 2", "\"Format version\": 3", 1);
    assert_eq!(
        err("run.json", &bad),
        "run.json: \"run information\" > \"Format version\": 3 is not supported (only 2)"
    );
    let bad = DEFAULT_JSON.replacen("\"0\":{", "\"first\":{", 1);
    assert_eq!(
        err("run.json", &bad),
        "run.json: \"ALL STATS\" > \"Sets\" > \"Time-Serie\" > \"first\": expected a second number as the key"
    );
}

#[test]
fn stopped_by_error_reads_back_and_must_be_text() {
    let stopped = DEFAULT_JSON.replacen(
        "\"Interrupted\": \"false\"",
        "\"Interrupted\": \"false\", \"Stopped by error\": \"connection closed by server h:1\"",
        1,
    );
    let r = json("run.json", &stopped);
    assert_eq!(
        r.blocks[0].runtime.stopped_by.as_deref(),
        Some("connection closed by server h:1")
    );
    assert_eq!(
        json("run.json", DEFAULT_JSON).blocks[0].runtime.stopped_by,
        None
    );
    let bad = DEFAULT_JSON.replacen(
        "\"Interrupted\": \"false\"",
        "\"Interrupted\": \"false\", \"Stopped by error\": 3",
        1,
    );
    assert_eq!(
        err("run.json", &bad),
        "run.json: \"ALL STATS\" > \"Runtime\" > \"Stopped by error\": expected a string, found 3"
    );
}

/// `text` (a result document) with `member` added as the root's last member.
fn with_member(text: &str, member: &str) -> String {
    let end = text.rfind('}').unwrap();
    format!("{},{member}}}", &text[..end])
}

const RATE_STEPS: &str = r#""Rate Steps":{"SLO":"p99:5","Highest Rate Held":2000,"Planned Steps":3,"Steps":[{"Target Rate":1000,"Achieved Rate":999.50,"p50.00":0.120,"p99.00":0.410,"p99.90":0.950,"Late":0,"Unfinished":0,"SLO Value":0.410,"Held":"true"},{"Target Rate":2000,"Achieved Rate":1990.25,"p50.00":0.180,"p99.00":4.100,"p99.90":9.500,"Late":3,"Unfinished":1,"SLO Value":4.100,"Held":"true"},{"Target Rate":3000,"Achieved Rate":2400.00,"p50.00":7.000,"p99.00":55.000,"p99.90":80.000,"Late":900,"Unfinished":40,"SLO Value":55.000,"Held":"false"}]}"#;

#[test]
fn a_rate_sweep_reads_its_steps() {
    assert_eq!(json("single.json", KV_SINGLE).rate_steps, None);
    let r = json("sweep.json", &with_member(KV_SINGLE, RATE_STEPS));
    let sweep = r.rate_steps.expect("Rate Steps read");
    assert_eq!(sweep.slo.as_deref(), Some("p99:5"));
    assert_eq!(sweep.highest_rate_held, Some(2000));
    assert_eq!(sweep.planned_steps, Some(3));
    assert_eq!(sweep.steps.len(), 3);
    let last = &sweep.steps[2];
    assert_eq!(
        (last.target_per_sec, last.achieved_per_sec),
        (3000.0, 2400.0)
    );
    assert_eq!(last.percentile_ms(50.0), Some(7.0));
    assert_eq!(last.percentile_ms(99.9), Some(80.0));
    assert_eq!(last.percentile_ms(90.0), None);
    assert_eq!((last.late, last.unfinished), (Some(900), Some(40)));
    assert_eq!((last.slo_value_ms, last.held), (Some(55.0), Some(false)));
    // The results blocks are still read beside it.
    assert_eq!(r.blocks.len(), 1);

    // Without an objective: no SLO, a null highest rate, no verdicts.
    let plain = r#""Rate Steps":{"Highest Rate Held":null,"Planned Steps":1,"Steps":[{"Target Rate":500,"Achieved Rate":500.00,"p50.00":0.1,"p99.00":0.2,"p99.90":0.3,"Late":0,"Unfinished":0}]}"#;
    let sweep = json("plain.json", &with_member(KV_SINGLE, plain))
        .rate_steps
        .unwrap();
    assert_eq!((sweep.slo, sweep.highest_rate_held), (None, None));
    assert_eq!(sweep.steps[0].held, None);

    let bad = with_member(KV_SINGLE, &RATE_STEPS.replacen("999.50", "\"fast\"", 1));
    assert_eq!(
        err("sweep.json", &bad),
        "sweep.json: \"Rate Steps\" > \"Steps\" > \"0\" > \"Achieved Rate\": expected a number, found \"fast\""
    );
    let bad = with_member(
        KV_SINGLE,
        &RATE_STEPS.replacen("\"Target Rate\":1000,", "", 1),
    );
    assert_eq!(
        err("sweep.json", &bad),
        "sweep.json: \"Rate Steps\" > \"Steps\" > \"0\" > \"Target Rate\": missing"
    );
    assert_eq!(
        err("sweep.json", &with_member(KV_SINGLE, r#""Rate Steps":[1]"#)),
        "sweep.json: \"Rate Steps\": expected an object, found [1]"
    );
}

#[test]
fn a_missing_file_is_named() {
    let e = read_file(Path::new("/nonexistent-kvbench/run.json")).unwrap_err();
    assert!(
        e.message()
            .starts_with("/nonexistent-kvbench/run.json: cannot read: "),
        "{}",
        e.message()
    );
}

#[test]
fn truncating_a_document_anywhere_is_an_error_never_a_panic() {
    for text in [DEFAULT_JSON, KV_CLUSTER, KV_SET_HGRM] {
        for cut in (0..text.len()).step_by(97) {
            if text.is_char_boundary(cut) {
                let _ = read_str("cut", &text[..cut]);
            }
        }
    }
}

/// `text` with `member` added first in its `"ALL STATS"` block.
fn with_all_stats_member(text: &str, member: &str) -> String {
    text.replacen("\"ALL STATS\":{", &format!("\"ALL STATS\":{{{member},"), 1)
}

#[test]
fn a_closed_loops_unfinished_object_reads_back_and_is_checked() {
    assert_eq!(json("single.json", KV_SINGLE).blocks[0].unfinished, None);
    let frozen = with_all_stats_member(
        KV_SINGLE,
        r#""Unfinished":{"In Flight At End": 10,"Oldest Age": 3512.250,"Warning": "10 requests were still unanswered"}"#,
    );
    let r = json("run.json", &frozen);
    let all = r.blocks.iter().find(|b| b.title == "ALL STATS").unwrap();
    let unfinished = all.unfinished.as_ref().unwrap();
    assert_eq!(unfinished.unanswered.requests, 10);
    assert_eq!(unfinished.unanswered.oldest_age_us, 3_512_250);
    assert_eq!(
        unfinished.warning.as_deref(),
        Some("10 requests were still unanswered")
    );
    // Without a warning (the requests hid no stall), and the rows are still all read.
    let young = with_all_stats_member(
        KV_SINGLE,
        r#""Unfinished":{"In Flight At End": 2,"Oldest Age": 0.412}"#,
    );
    let r = json("run.json", &young);
    let all = r.blocks.iter().find(|b| b.title == "ALL STATS").unwrap();
    let unfinished = all.unfinished.as_ref().unwrap();
    assert_eq!(
        (unfinished.unanswered.oldest_age_us, &unfinished.warning),
        (412, &None)
    );
    let plain = json("single.json", KV_SINGLE);
    assert_eq!(all.rows.len(), plain.blocks[0].rows.len());
    // Bad figures are one-line errors naming their place.
    let cases = [
        (
            r#""Unfinished":{"Oldest Age": 1.0}"#,
            "\"ALL STATS\" > \"Unfinished\" > \"In Flight At End\": missing",
        ),
        (
            r#""Unfinished":{"In Flight At End": -1,"Oldest Age": 1.0}"#,
            "\"ALL STATS\" > \"Unfinished\" > \"In Flight At End\": expected a whole number, found -1",
        ),
        (
            r#""Unfinished":{"In Flight At End": 1,"Oldest Age": -5}"#,
            "\"ALL STATS\" > \"Unfinished\" > \"Oldest Age\": expected an age in ms, found -5",
        ),
        (
            r#""Unfinished":{"In Flight At End": 1,"Oldest Age": "5"}"#,
            "\"ALL STATS\" > \"Unfinished\" > \"Oldest Age\": expected a number, found \"5\"",
        ),
        (
            r#""Unfinished":{"In Flight At End": 1,"Oldest Age": 5,"Warning": 7}"#,
            "\"ALL STATS\" > \"Unfinished\" > \"Warning\": expected a string, found 7",
        ),
    ];
    for (member, message) in cases {
        assert_eq!(
            err("run.json", &with_all_stats_member(KV_SINGLE, member)),
            format!("run.json: {message}"),
            "{member}"
        );
    }
}
