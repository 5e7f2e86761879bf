//! Tests of merging against memtier_benchmark's and kvbench's real result files.

use std::time::Duration;

use hdrhistogram::Histogram;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::*;
use crate::report::{Limit, json::render_json};
use crate::resultfile::tests::{
    KV_ARBITRARY, KV_CLUSTER, KV_MEMCACHE, KV_RUNS3, KV_SET_HGRM, KV_SINGLE, MEMTIER_MEMCACHE,
};
use crate::resultfile::{Block, BlockKind, JsonResult, read_str};
use crate::results::test_support::{ARBITRARY_JSON, DEFAULT_JSON, RUNS3_JSON};
use crate::results::{Row, build_row, latency_at_percentile_ms, summarize_interval};
use crate::stats::OpStats;
use crate::stats::RowName;

mod logs;
mod sweeps;

fn file(name: &str, text: &str) -> ResultFile {
    read_str(name, text).unwrap()
}

fn merged(inputs: &[(&str, &str)]) -> MergedResult {
    let files: Vec<ResultFile> = inputs.iter().map(|(n, t)| file(n, t)).collect();
    merge(&files, &MergeOptions::default()).unwrap()
}

fn merge_err(inputs: &[(&str, &str)]) -> String {
    let files: Vec<ResultFile> = inputs.iter().map(|(n, t)| file(n, t)).collect();
    merge(&files, &MergeOptions::default())
        .unwrap_err()
        .message()
        .to_string()
}

fn json_of(name: &str, text: &str) -> JsonResult {
    match file(name, text).content {
        Content::Json(j) => j,
        Content::IntervalLog(_) => panic!("not JSON"),
    }
}

fn block(j: &JsonResult, kind: BlockKind) -> &Block {
    j.blocks.iter().find(|b| b.kind == kind).unwrap()
}

fn row<'a>(r: &'a Results, name: &str) -> &'a Row {
    r.rows.iter().find(|x| x.name.row == name).unwrap()
}

fn pcts_ms(h: &Histogram<u64>) -> Vec<f64> {
    [50.0, 99.0, 99.9]
        .iter()
        .map(|&p| latency_at_percentile_ms(h, p))
        .collect()
}

/// The JSON the existing writer makes of a merge, read back.
fn written(m: &MergedResult) -> String {
    render_json(
        &m.shown(),
        &m.run_info,
        &[&m.results],
        &m.percentiles,
        m.hide_histogram,
    )
}

#[test]
fn memtier_default_alone_keeps_its_figures() {
    let m = merged(&[("default.json", DEFAULT_JSON)]);
    let src = json_of("default.json", DEFAULT_JSON);
    let b = block(&src, BlockKind::AllStats);
    assert_eq!(m.results.title, "ALL STATS");
    assert_eq!(
        (
            m.results.start_epoch_ms,
            m.results.finish_epoch_ms,
            m.results.duration_ms
        ),
        (1_795_979_180_809, 1_795_979_180_826, 17)
    );
    assert_eq!(m.percentiles, [50.0, 99.0, 99.9]);
    assert!(!m.hide_histogram);
    assert_eq!(m.results.rows.len(), 4);
    for (ours, theirs) in m.results.rows.iter().zip(&b.rows) {
        assert_eq!(ours.name.row, theirs.name);
        assert_eq!(ours.name.hist, theirs.hist_name);
        assert_eq!(ours.count, theirs.count);
        assert_eq!(ours.ops_per_sec, theirs.ops_per_sec);
        assert_eq!(ours.kb_per_sec, theirs.kb_per_sec);
        if theirs.count > 0 {
            // memtier's own percentiles come back from its histogram.
            let want: Vec<f64> = theirs.percentiles.iter().map(|p| p.latency_ms).collect();
            assert_eq!(pcts_ms(&ours.histogram), want, "{}", ours.name.row);
            assert_eq!(ours.min_latency_ms, theirs.min_latency_ms);
            assert_eq!(ours.max_latency_ms, theirs.max_latency_ms);
            assert_eq!(&ours.histogram, theirs.histogram.as_ref().unwrap());
        }
        assert_eq!(ours.series.len(), 1);
        assert_eq!(ours.series[0].count, theirs.series[0].count);
        assert_eq!(ours.series[0].bytes_tx, theirs.series[0].bytes_tx);
    }
    assert!(row(&m.results, "Gets").name.has_hits);
    assert_eq!(
        m.configuration[0],
        ("server".to_string(), "\"127.0.0.1\"".to_string())
    );
    assert_eq!(
        m.configuration.last().unwrap(),
        &("merged_from".to_string(), "[\"default.json\"]".to_string())
    );
    assert_eq!(m.run_info.threads, 2);
    assert_eq!(m.run_info.limit, Limit::RequestsPerClient(200));
}

#[test]
fn memtier_default_with_itself_doubles_counts_and_keeps_percentiles() {
    let one = merged(&[("default.json", DEFAULT_JSON)]);
    let two = merged(&[("a.json", DEFAULT_JSON), ("b.json", DEFAULT_JSON)]);
    for (a, b) in one.results.rows.iter().zip(&two.results.rows) {
        assert_eq!(b.count, 2 * a.count);
        assert_eq!(b.ops_per_sec, 2.0 * a.ops_per_sec);
        assert_eq!(b.hits_per_sec, 2.0 * a.hits_per_sec);
        assert_eq!(b.kb_per_sec, 2.0 * a.kb_per_sec);
        // The rank rounding can move a percentile of a doubled histogram by one value,
        // so compare with the doubled histogram, not with the single one.
        let mut twice = a.histogram.clone();
        twice.add(&a.histogram).unwrap();
        assert_eq!(b.histogram, twice);
        assert_eq!(pcts_ms(&b.histogram), pcts_ms(&twice));
        assert_eq!(b.avg_latency_ms, a.avg_latency_ms);
        // Both started in the same second: one merged second, counts doubled.
        assert_eq!(b.series.len(), 1);
        assert_eq!(b.series[0].count, 2 * a.series[0].count);
        assert_eq!(b.series[0].bytes_rx, 2 * a.series[0].bytes_rx);
    }
    assert_eq!(two.run_info.threads, 4);
    assert_eq!(two.run_info.connections_per_thread, 2);
    // Every configuration value agrees; the inputs are listed.
    assert_eq!(two.configuration[..53], one.configuration[..53]);
    assert_eq!(
        two.configuration[53].1,
        "[\"a.json\",\"b.json\"]".to_string()
    );
}

#[test]
fn memtier_default_with_runs3_aggregate() {
    let m = merged(&[("default.json", DEFAULT_JSON), ("runs3.json", RUNS3_JSON)]);
    let d = json_of("default.json", DEFAULT_JSON);
    let r = json_of("runs3.json", RUNS3_JSON);
    let db = block(&d, BlockKind::AllStats);
    let agg = block(&r, BlockKind::Aggregated(3));
    for (i, merged_row) in m.results.rows.iter().enumerate() {
        let (a, b) = (&db.rows[i], &agg.rows[i]);
        assert_eq!(merged_row.count, a.count + b.count, "{}", a.name);
        assert_eq!(merged_row.ops_per_sec, a.ops_per_sec + b.ops_per_sec);
        let mut sum = a.histogram.clone().unwrap();
        if b.count > 0 {
            sum.add(b.histogram.as_ref().unwrap()).unwrap();
        }
        if merged_row.count > 0 {
            assert_eq!(pcts_ms(&merged_row.histogram), pcts_ms(&sum), "{}", a.name);
            assert_eq!(merged_row.max_latency_ms, sum.max() as f64 / 1000.0);
        }
    }
    // The Totals latency is that of all the requests: between the rows' averages.
    let t = m.results.totals().unwrap();
    let (s, g) = (row(&m.results, "Sets"), row(&m.results, "Gets"));
    assert_eq!(t.histogram.len(), t.count);
    assert!(t.avg_latency_ms < s.avg_latency_ms.max(g.avg_latency_ms));
    assert!(t.avg_latency_ms > s.avg_latency_ms.min(g.avg_latency_ms));
    // memtier's aggregate has a zero runtime: the RUN blocks give it, and their seconds
    // land at their own wall-clock seconds after default.json's.
    assert_eq!(m.results.start_epoch_ms, 1_795_979_180_809);
    assert_eq!(m.results.finish_epoch_ms, 1_795_979_185_821);
    let totals = m.results.totals().unwrap();
    let counts: Vec<u64> = totals.series.iter().map(|s| s.count).collect();
    assert_eq!(counts, [800, 200, 0, 200, 0, 200]);
    assert_eq!(
        totals.series.iter().map(|s| s.count).sum::<u64>(),
        totals.count
    );
    assert_eq!(m.run_info.threads, 3);
    // Different -n: the larger is kept.
    assert_eq!(m.run_info.limit, Limit::RequestsPerClient(200));
    let requests = m
        .configuration
        .iter()
        .find(|(k, _)| k == "requests")
        .unwrap();
    assert_eq!(requests.1, "[200,100]");
    // One run beside an -x 3 aggregate: the figures mix them, and a note says how.
    assert_eq!(
        m.notes,
        [
            "note: inputs of different run counts (default.json: 1 run, runs3.json: 3 runs): \
          the merged counts and latencies are all 4 runs' requests, the merged rates the sum \
          of each input's mean run"
        ]
    );
}

#[test]
fn kvbench_files_merge_with_their_series() {
    let m = merged(&[("a.json", KV_SINGLE), ("b.json", KV_SINGLE)]);
    let one = merged(&[("a.json", KV_SINGLE)]);
    let totals = m.results.totals().unwrap();
    assert_eq!(totals.count, 2 * one.results.totals().unwrap().count);
    assert_eq!(totals.series.len(), 4);
    assert_eq!(
        totals.series.iter().map(|s| s.count).sum::<u64>(),
        totals.count
    );
    // JSON has no per-second histograms: true mean, no percentiles.
    let s = &totals.series[0];
    let src = &one.results.totals().unwrap().series[0];
    assert!((s.avg_latency_ms - src.avg_latency_ms).abs() < 1e-9);
    assert!(s.percentiles_ms.is_empty());
    assert_eq!(m.run_info.limit, Limit::Seconds(3));

    // Inputs that agree need no note: two single runs, or -x 3 files alone.
    assert!(m.notes.is_empty(), "{:?}", m.notes);
    let runs = merged(&[("runs3.json", KV_RUNS3)]);
    assert!(runs.notes.is_empty(), "{:?}", runs.notes);
    let src = json_of("runs3.json", KV_RUNS3);
    let agg = block(&src, BlockKind::Aggregated(3));
    assert_eq!(
        runs.results.totals().unwrap().count,
        agg.totals().unwrap().count
    );
    let series_total: u64 = runs
        .results
        .totals()
        .unwrap()
        .series
        .iter()
        .map(|s| s.count)
        .sum();
    assert_eq!(series_total, agg.totals().unwrap().count);

    let c = merged(&[("c1.json", KV_CLUSTER), ("c2.json", KV_CLUSTER)]);
    assert!(c.results.cluster);
    assert!(!m.results.cluster);

    let arb = merged(&[("kv.json", KV_ARBITRARY), ("memtier.json", ARBITRARY_JSON)]);
    let names: Vec<&str> = arb
        .results
        .rows
        .iter()
        .map(|r| r.name.row.as_str())
        .collect();
    assert_eq!(names, ["Hsets", "Gets", "Totals"]);
    assert!(!arb.results.rows.iter().any(|r| r.name.has_hits));

    // kvbench (3 significant figures) with memtier (2): memtier's coarser layout.
    let mc = merged(&[("kv.json", KV_MEMCACHE), ("memtier.json", MEMTIER_MEMCACHE)]);
    assert_eq!(mc.results.totals().unwrap().histogram.sigfig(), 2);
}

#[test]
fn mismatched_inputs_are_clear_errors() {
    assert_eq!(
        merge_err(&[
            ("default.json", DEFAULT_JSON),
            ("arbitrary.json", ARBITRARY_JSON)
        ]),
        "arbitrary.json: different commands from default.json: default.json has Sets, Gets, Waits; arbitrary.json has Hsets, Gets"
    );
    assert_eq!(
        merge_err(&[("redis.json", KV_SINGLE), ("mc.json", KV_MEMCACHE)]),
        "mc.json: protocol memcache_text cannot be merged with redis.json's redis"
    );
    assert_eq!(
        merge_err(&[("a.json", KV_SINGLE), ("set.hgrm", KV_SET_HGRM)]),
        "set.hgrm: an interval log cannot be merged with a JSON result (a.json); give only JSON results or only interval logs"
    );
    assert_eq!(
        merge(&[], &MergeOptions::default()).unwrap_err().message(),
        "merge needs at least one result file"
    );
    assert_eq!(
        merge_err(&[("empty.hgrm", "#[Histogram log format version 1.3]\n")]),
        "empty.hgrm: no intervals, nothing to merge"
    );
    let wrong = DEFAULT_JSON.replacen("\"Count\": 400", "\"Count\": 401", 1);
    assert_eq!(
        merge_err(&[("wrong.json", &wrong)]),
        "wrong.json: \"ALL STATS\" > \"Sets\": its histogram holds 400 requests but its Count is 401, so its latency cannot be merged exactly"
    );
    let no_hist = DEFAULT_JSON.replace("\"Compressed Histogram\"", "\"Something else\"");
    assert_eq!(
        merge_err(&[("old.json", &no_hist)]),
        "old.json: \"ALL STATS\" > \"Sets\" has no compressed histogram, so its latency cannot be merged exactly"
    );
    // -x 3 without --print-all-runs or an aggregate: nothing to take.
    let only_best = RUNS3_JSON.replace("AGGREGATED AVERAGE RESULTS", "SOMETHING");
    let e = merge_err(&[("x.json", &only_best)]);
    assert_eq!(
        e,
        "x.json: 6 results blocks but no \"ALL STATS\" or \"AGGREGATED AVERAGE RESULTS\" block to merge"
    );
    // A rate sweep's steps are merged step by step, never with a run at one rate.
    let end = KV_SINGLE.rfind('}').unwrap();
    let sweep = format!(
        "{},{}}}",
        &KV_SINGLE[..end],
        r#""Rate Steps":{"Planned Steps":1,"Steps":[{"Target Rate":500,"Achieved Rate":500.00,"p50.00":0.1,"p99.00":0.2,"p99.90":0.3,"Late":0,"Unfinished":0}]}"#
    );
    assert_eq!(
        merge_err(&[("a.json", KV_SINGLE), ("sweep.json", &sweep)]),
        "a.json: a run at one rate cannot be merged with a rate sweep (sweep.json); merge the shards of one --rate-sweep together"
    );
    // Both shard 0/2 of their own workloads: the kinds differ, which is what is said.
    let shard0 =
        |json: &str| json.replacen("\"server\": ", "\"shard\": \"0/2\"\n\t\t,\"server\": ", 1);
    assert_eq!(
        merge_err(&[
            ("sweep.json", &shard0(&sweep)),
            ("a.json", &shard0(KV_SINGLE))
        ]),
        "a.json: a run at one rate cannot be merged with a rate sweep (sweep.json); merge the shards of one --rate-sweep together"
    );
    assert_eq!(
        merge_err(&[("sweep.json", &sweep)]),
        "sweep.json: a rate sweep with no \"STEP #n RESULTS\" block: nothing to merge"
    );
    // A damaged second number cannot make the merge allocate for ever.
    let far = DEFAULT_JSON.replacen("\"0\":{", "\"99999999999999999\":{", 1);
    let e = merge_err(&[("far.json", &far)]);
    assert!(e.starts_with("the inputs' seconds span "), "{e}");
    // Two runs eight days apart: the message names the one that starts first and the one
    // that ends last.
    let later = DEFAULT_JSON
        .replace("1795979180809", "1796670380809")
        .replace("1795979180826", "1796670380826");
    let e = merge_err(&[("monday.json", DEFAULT_JSON), ("next-week.json", &later)]);
    assert!(e.starts_with("the inputs' seconds span "), "{e}");
    assert!(
        e.ends_with("; monday.json starts first and next-week.json ends last"),
        "{e}"
    );
    // A missing file is named.
    let e = merge_files(&["/nonexistent-kvbench/a.json"], &MergeOptions::default()).unwrap_err();
    assert!(
        e.message()
            .starts_with("/nonexistent-kvbench/a.json: cannot read")
    );
}

#[test]
fn differing_configuration_values_become_arrays() {
    let other = DEFAULT_JSON
        .replacen("\"server\": \"127.0.0.1\"", "\"server\": \"10.0.0.2\"", 1)
        .replacen(
            "\t\t,\"print-all-runs\": \"false\"\n",
            "\t\t,\"print-all-runs\": \"false\"\n\t\t,\"shard\": \"1/2\"\n",
            1,
        );
    let m = merged(&[("a.json", DEFAULT_JSON), ("b.json", &other)]);
    let get = |k: &str| {
        m.configuration
            .iter()
            .find(|(key, _)| key == k)
            .unwrap()
            .1
            .clone()
    };
    assert_eq!(get("server"), "[\"127.0.0.1\",\"10.0.0.2\"]");
    assert_eq!(get("port"), "7001");
    assert_eq!(get("shard"), "[null,\"1/2\"]");
    assert_eq!(get("key_stddev"), "0.0");
}

#[test]
fn merged_json_reads_back_and_merges_to_itself() {
    let m = merged(&[("default.json", DEFAULT_JSON), ("runs3.json", RUNS3_JSON)]);
    let text = written(&m);
    let back = json_of("merged.json", &text);
    let b = block(&back, BlockKind::AllStats);
    for (ours, read) in m.results.rows.iter().zip(&b.rows) {
        assert_eq!(read.name, ours.name.row);
        assert_eq!(read.count, ours.count);
        assert_eq!(read.histogram.as_ref().unwrap(), &ours.histogram);
        assert_eq!(read.series.len(), ours.series.len());
        let want: Vec<f64> = pcts_ms(&ours.histogram)
            .iter()
            .map(|x| (x * 1000.0).round() / 1000.0)
            .collect();
        let got: Vec<f64> = read.percentiles.iter().map(|p| p.latency_ms).collect();
        assert_eq!(got, want);
    }
    assert_eq!(back.run_info.threads, Some(3));
    // Merging the merged file alone changes nothing that matters.
    let again = merged(&[("merged.json", &text)]);
    for (a, b) in again.results.rows.iter().zip(&m.results.rows) {
        assert_eq!((a.count, &a.histogram), (b.count, &b.histogram));
        let counts = |r: &Row| r.series.iter().map(|s| s.count).collect::<Vec<_>>();
        assert_eq!(counts(a), counts(b));
    }
    assert_eq!(again.results.start_epoch_ms, m.results.start_epoch_ms);
    assert_eq!(again.results.duration_ms, m.results.duration_ms);
}

/// A kvbench-like single-run JSON document with the given SET and GET latencies, starting
/// at `start_ms`, one second per chunk of `per_second` requests.
fn synthetic_json(start_ms: u64, sets: &[u64], gets: &[u64], per_second: usize) -> String {
    let percentiles = [50.0, 99.0, 99.9];
    let mut rows = Vec::new();
    let mut all = OpStats::new();
    let seconds = sets.len().max(gets.len()).div_ceil(per_second).max(1);
    let mut all_series: Vec<OpStats> = vec![OpStats::new(); seconds];
    for (name, hist, lat) in [
        ("Sets", "SET", sets),
        ("Gets", "GET", gets),
        ("Waits", "WAIT", &[][..]),
    ] {
        let mut stats = OpStats::new();
        let mut series = Vec::new();
        for (i, second) in all_series.iter_mut().enumerate() {
            let mut s = OpStats::new();
            for &l in lat.iter().skip(i * per_second).take(per_second) {
                s.record(l, 30, 5);
            }
            let start = start_ms + i as u64 * 1000;
            series.push(summarize_interval(&s, start, start + 1000, &percentiles));
            stats.merge(&s);
            second.merge(&s);
        }
        all.merge(&stats);
        let duration = Duration::from_millis(seconds as u64 * 1000);
        rows.push(build_row(
            RowName {
                row: name.into(),
                hist: hist.into(),
                has_hits: name == "Gets",
            },
            &stats,
            duration,
            series,
        ));
    }
    let total_series = all_series
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let start = start_ms + i as u64 * 1000;
            summarize_interval(s, start, start + 1000, &percentiles)
        })
        .collect();
    rows.push(build_row(
        RowName {
            row: "Totals".into(),
            hist: "FULL_RUN".into(),
            has_hits: true,
        },
        &all,
        Duration::from_millis(seconds as u64 * 1000),
        total_series,
    ));
    let results = Results {
        title: "ALL STATS".into(),
        run_number: 1,
        start_epoch_ms: start_ms,
        finish_epoch_ms: start_ms + seconds as u64 * 1000,
        duration_ms: seconds as u64 * 1000,
        interrupted: false,
        stopped_by: None,
        cluster: false,
        rows,
        servers: Vec::new(),
        visibility: None,
        schedule: None,
        unanswered: None,
    };
    let info = crate::report::RunInfo {
        threads: 1,
        connections_per_thread: 1,
        limit: Limit::Seconds(seconds as u64),
        ramp: None,
    };
    render_json(
        &[("protocol", "\"redis\"".to_string())],
        &info,
        &[&results],
        &percentiles,
        false,
    )
}

#[test]
fn merged_percentiles_equal_those_of_the_added_histograms() {
    let mut rng = SmallRng::seed_from_u64(7);
    for case in 0..25 {
        let mut draw = |n: usize, scale: f64| -> Vec<u64> {
            (0..n)
                .map(|_| (rng.random::<f64>().powi(3) * scale) as u64 + 1)
                .collect()
        };
        let sizes = [1 + case * 37 % 500, case * 53 % 700, 1 + case * 11 % 90];
        let a_sets = draw(sizes[0], 5_000.0);
        let a_gets = draw(sizes[1], 80_000.0);
        let b_sets = draw(sizes[2], 2_000_000.0);
        let b_gets = draw(sizes[0], 300.0);
        let a = synthetic_json(1_700_000_000_000 + case as u64, &a_sets, &a_gets, 100);
        let b = synthetic_json(1_700_000_000_400, &b_sets, &b_gets, 50);
        let m = merged(&[("a.json", &a), ("b.json", &b)]);
        let ja = json_of("a.json", &a);
        let jb = json_of("b.json", &b);
        let (ba, bb) = (&ja.blocks[0], &jb.blocks[0]);
        for (i, r) in m.results.rows.iter().enumerate() {
            let mut sum = crate::stats::new_histogram();
            for h in [&ba.rows[i].histogram, &bb.rows[i].histogram]
                .into_iter()
                .flatten()
            {
                sum.add(h).unwrap();
            }
            assert_eq!(r.count, sum.len(), "case {case} {}", r.name.row);
            for p in [0.0, 1.0, 25.0, 50.0, 90.0, 99.0, 99.9, 99.99, 100.0] {
                assert_eq!(
                    latency_at_percentile_ms(&r.histogram, p),
                    latency_at_percentile_ms(&sum, p),
                    "case {case} {} p{p}",
                    r.name.row
                );
            }
            if !sum.is_empty() {
                assert_eq!(r.min_latency_ms, sum.min() as f64 / 1000.0);
                assert_eq!(r.max_latency_ms, sum.max() as f64 / 1000.0);
                assert!((r.avg_latency_ms - sum.mean() / 1000.0).abs() < 1e-9);
            }
        }
        // Seconds of a (from :000) and b (from :400) share epoch seconds.
        let totals = m.results.totals().unwrap();
        assert_eq!(
            totals.series.iter().map(|s| s.count).sum::<u64>(),
            totals.count
        );
    }
}

#[test]
fn tryagain_counts_and_rates_are_summed() {
    // kvbench writes TRYAGAIN/sec and TRYAGAIN after ASK/sec in cluster mode.
    let with = |n: u64| {
        KV_CLUSTER.replace(
            "\t\t\t,\"ASK/sec\": 0.00\n",
            &format!("\t\t\t,\"ASK/sec\": 0.00\n\t\t\t,\"TRYAGAIN/sec\": {n}.50\n\t\t\t,\"TRYAGAIN\": {n}\n"),
        )
    };
    let (a, b) = (with(3), with(4));
    let m = merged(&[("a.json", &a), ("b.json", &b)]);
    let totals = m.results.totals().unwrap();
    assert_eq!(totals.tryagain, 7);
    assert_eq!(totals.tryagain_per_sec, 8.0);
    let text = written(&m);
    assert!(text.contains("\t\t\t,\"TRYAGAIN\": 7\n"), "{text}");
    // Files without the keys (older ones) add nothing.
    let old = merged(&[("c1.json", KV_CLUSTER), ("c2.json", KV_CLUSTER)]);
    assert_eq!(old.results.totals().unwrap().tryagain, 0);
}

#[test]
fn a_shard_given_twice_or_shards_of_different_splits_are_refused() {
    let shard = |i: &str| {
        DEFAULT_JSON.replacen(
            "\t\t,\"print-all-runs\": \"false\"\n",
            &format!("\t\t,\"print-all-runs\": \"false\"\n\t\t,\"shard\": \"{i}\"\n"),
            1,
        )
    };
    let (a, b, c) = (shard("0/2"), shard("1/2"), shard("1/3"));
    assert_eq!(merged(&[("a.json", &a), ("b.json", &b)]).inputs.len(), 2);
    assert_eq!(
        merge_err(&[("a.json", &a), ("a2.json", &a)]),
        "a2.json: shard 0/2 is also a.json's: the same shard twice would count its requests twice"
    );
    // A merged file names its inputs' shards: merged again with one of them, or with a
    // copy of itself, that shard would count twice.
    let both = a.replacen("\"shard\": \"0/2\"", "\"shard\": [\"0/2\",\"1/2\"]", 1);
    assert_eq!(
        merge_err(&[("m.json", &both), ("b.json", &b)]),
        "b.json: shard 1/2 is also m.json's: the same shard twice would count its requests twice"
    );
    let nested = a.replacen(
        "\"shard\": \"0/2\"",
        "\"shard\": [[\"0/2\",null],\"1/2\"]",
        1,
    );
    assert_eq!(
        merge_err(&[("m.json", &both), ("mm.json", &nested)]),
        "mm.json: shard 0/2 is also m.json's: the same shard twice would count its requests twice"
    );
    assert_eq!(
        merge_err(&[("a.json", &a), ("c.json", &c)]),
        "c.json: shard 1/3 and a.json's 0/2 are parts of different splits: not shards of one workload"
    );
}

#[test]
fn a_split_merged_in_part_says_which_shards_are_missing() {
    let shard = |i: &str| {
        DEFAULT_JSON.replacen(
            "\t\t,\"print-all-runs\": \"false\"\n",
            &format!("\t\t,\"print-all-runs\": \"false\"\n\t\t,\"shard\": \"{i}\"\n"),
            1,
        )
    };
    let (a, b, c) = (shard("0/3"), shard("1/3"), shard("2/3"));
    let part = merged(&[("a.json", &a), ("c.json", &c)]);
    assert_eq!(
        part.notes,
        [
            "note: 2 of the 3 shards merged; not given: 1/3 (the merged rates and counts are the given shards' only)"
        ]
    );
    let whole = merged(&[("a.json", &a), ("b.json", &b), ("c.json", &c)]);
    assert!(whole.notes.is_empty(), "{:?}", whole.notes);
    // A merged file counts for the shards it holds.
    let ab = a.replacen("\"shard\": \"0/3\"", "\"shard\": [\"0/3\",\"1/3\"]", 1);
    assert!(merged(&[("ab.json", &ab), ("c.json", &c)]).notes.is_empty());
    // A run of its own beside a shard: merged, and said.
    let own = merged(&[("a.json", &a), ("x.json", DEFAULT_JSON)]);
    assert_eq!(
        own.notes,
        [
            "note: x.json is no shard, a.json is shard 0/3: merged as given, the sum of what each sent, not one split's whole"
        ]
    );
    // A shard that is no I/N below N is refused.
    for bad in ["5/3", "a/3", "1/0", "3"] {
        let text = shard(bad);
        let err = merge_err(&[("a.json", &a), ("bad.json", &text)]);
        assert!(err.contains("is not I/N with I below N"), "{bad}: {err}");
    }
}

/// `text` with an `"Unfinished"` object (what a closed-loop run left unanswered) first in
/// its `"ALL STATS"` block.
fn with_unfinished(text: &str, requests: u64, oldest_ms: &str) -> String {
    text.replacen(
        "\"ALL STATS\":{",
        &format!(
            "\"ALL STATS\":{{\"Unfinished\":{{\"In Flight At End\": {requests},\"Oldest Age\": {oldest_ms}}},"
        ),
        1,
    )
}

#[test]
fn the_shards_unanswered_requests_add_up_and_keep_the_oldest() {
    let frozen = with_unfinished(KV_SINGLE, 10, "3512.250");
    let young = with_unfinished(KV_SINGLE, 4, "0.412");
    let m = merged(&[
        ("a.json", &frozen),
        ("b.json", &young),
        ("c.json", KV_SINGLE),
    ]);
    let unanswered = m.results.unanswered.unwrap();
    assert_eq!(
        (unanswered.requests, unanswered.oldest_age_us),
        (14, 3_512_250)
    );
    // The warning is judged on the merged figures, and the merged JSON carries it all.
    let warning = m.results.unanswered_warning().unwrap();
    assert!(
        warning.starts_with(
            "14 requests were still unanswered when the run ended, the oldest sent 3.5 s before"
        ),
        "{warning}"
    );
    let back = json_of("merged.json", &written(&m));
    let all = block(&back, BlockKind::AllStats);
    let read = all.unfinished.as_ref().unwrap();
    assert_eq!(read.unanswered, unanswered);
    assert_eq!(read.warning.as_deref(), Some(warning.as_str()));
    // Young ones alone hide no stall: the count is kept, without a warning.
    let m = merged(&[("b.json", &young), ("c.json", KV_SINGLE)]);
    assert_eq!(m.results.unanswered.map(|u| u.requests), Some(4));
    assert_eq!(m.results.unanswered_warning(), None);
    // Files without it merge to what they merged to before: no "Unfinished" at all.
    let plain = merged(&[("a.json", KV_SINGLE), ("c.json", KV_SINGLE)]);
    assert_eq!(plain.results.unanswered, None);
    assert!(!written(&plain).contains("Unfinished"));
}
