//! Merging HdrHistogram interval logs: per-tag rows with per-second percentiles, service
//! times kept apart from response times, and one run's log given in two formats refused.

use super::*;

#[test]
fn interval_logs_merge_by_tag_with_per_second_percentiles() {
    let b = another_shard(KV_SET_HGRM);
    let m = merged(&[("a.hgrm", KV_SET_HGRM), ("b.hgrm", &b)]);
    let names: Vec<&str> = m.results.rows.iter().map(|r| r.name.row.as_str()).collect();
    assert_eq!(names, ["Sets", "Totals"]);
    let single = json_of("single.json", KV_SINGLE);
    let sets = &single.blocks[0].rows[0];
    let merged_sets = &m.results.rows[0];
    assert_eq!(merged_sets.count, 2 * sets.count);
    let mut twice = sets.histogram.clone().unwrap();
    twice.add(sets.histogram.as_ref().unwrap()).unwrap();
    assert_eq!(pcts_ms(&merged_sets.histogram), pcts_ms(&twice));
    // Totals is the sum of the commands when no log has untagged whole-run lines.
    assert_eq!(m.results.totals().unwrap().count, merged_sets.count);
    // Per-second histograms give per-second percentiles.
    let busy: Vec<_> = merged_sets.series.iter().filter(|s| s.count > 0).collect();
    assert!(!busy.is_empty());
    for s in busy {
        assert_eq!(s.percentiles_ms.len(), 3);
        assert!(!s.compressed_histogram.is_empty());
    }
    assert!(merged_sets.ops_per_sec > 0.0);
}

#[test]
fn service_time_logs_do_not_merge_with_response_times() {
    let service = KV_SET_HGRM.replacen(
        "HDR latency histogram results]",
        "HDR service time histogram results]",
        1,
    );
    assert_eq!(
        merge_err(&[("set.hgrm", KV_SET_HGRM), ("set_service.hgrm", &service)]),
        "set_service.hgrm: its service times cannot be merged with set.hgrm's response times: merge the _service.hgrm files on their own"
    );
    // On their own they merge, as the service times they are.
    let m = merged(&[("a.hgrm", &service), ("b.hgrm", &another_shard(&service))]);
    assert_eq!(m.inputs.len(), 2);
}

/// `log` as another shard's: the same histograms 100 s later.
fn another_shard(log: &str) -> String {
    log.replace("17960324", "17960325")
}

#[test]
fn one_runs_log_given_in_two_formats_is_refused() {
    // The same SET intervals as a --hdr-log command log (format 1.3, times from a base).
    let base = KV_SET_HGRM
        .lines()
        .find_map(|l| l.strip_prefix("#[StartTime: "))
        .and_then(|l| l.split(' ').next())
        .unwrap();
    let base_ms = (base.parse::<f64>().unwrap() * 1000.0).round() as u64;
    let mut hlog = format!(
        "#[SET command HDR latency histogram results]\n#[Histogram log format version 1.3]\n\
         #[StartTime: {base} (seconds since epoch)]\n#[BaseTime: {base} (seconds since epoch)]\n\
         \"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n"
    );
    for line in KV_SET_HGRM.lines().filter(|l| l.starts_with("17")) {
        let f: Vec<&str> = line.split(',').collect();
        let start_ms = (f[0].parse::<f64>().unwrap() * 1000.0).round() as u64;
        let end_ms = (f[1].parse::<f64>().unwrap() * 1000.0).round() as u64;
        hlog.push_str(&format!(
            "{:.3},{:.3},{},{}\n",
            (start_ms - base_ms) as f64 / 1000.0,
            (end_ms - start_ms) as f64 / 1000.0,
            f[2],
            f[3]
        ));
    }
    assert_eq!(
        merge_err(&[
            ("all_SET.hlog", &hlog),
            ("r_SET_command_run_1.hgrm", KV_SET_HGRM)
        ]),
        "r_SET_command_run_1.hgrm: its SET intervals are all_SET.hlog's (the same run written \
         twice, as --hdr-log and --hdr-file-prefix files): its requests would be counted \
         twice; give one of them"
    );
    // Another shard's log of the same command merges.
    let later = another_shard(&hlog);
    assert_eq!(
        merged(&[("a.hlog", &hlog), ("b.hlog", &later)])
            .inputs
            .len(),
        2
    );
}
