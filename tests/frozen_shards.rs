//! `kvbench merge` of two shards of one closed-loop run whose redis-server froze
//! (SIGSTOP) part way through: each shard's JSON holds the requests it left unanswered
//! (`"Unfinished"`), and the merged JSON holds them all, the oldest age the oldest of the
//! two, with the warning memtier's front end prints, on the merge's stderr too; `kvbench
//! report` shows each file's warning under its run.

mod common;

use std::path::PathBuf;
use std::time::Duration;

use common::{CONDITION_TIMEOUT, RedisServer, TestDir, kvbench, kvbench_at, wait_until};

/// The SETs and GETs the server has executed.
fn sets_and_gets(server: &RedisServer) -> u64 {
    let stats = server.commandstats();
    ["set", "get"].iter().filter_map(|c| stats.get(*c)).sum()
}

/// Two 5 s shards against `server`, frozen once they have had 500 answers; their JSON
/// files in `dir` once both have ended (at their `--test-time`, status 0).
fn frozen_shards(server: &RedisServer, dir: &TestDir) -> Vec<PathBuf> {
    let paths: Vec<PathBuf> = (0..2)
        .map(|i| dir.file(&format!("shard{i}.json")))
        .collect();
    let running: Vec<_> = paths
        .iter()
        .map(|path| {
            kvbench_at(server.port, &["-t", "1", "-c", "5", "--test-time=5"])
                .args(&[
                    "--hide-histogram".to_string(),
                    format!("--json-out-file={}", path.display()),
                ])
                .spawn()
        })
        .collect();
    wait_until("500 requests answered", CONDITION_TIMEOUT, || {
        sets_and_gets(server) >= 500
    });
    server.signal(libc::SIGSTOP);
    let mut running = running;
    // Frozen before either run's end (else this proves nothing).
    for run in &mut running {
        assert!(
            !run.exited_within(Duration::ZERO),
            "a run ended before the freeze"
        );
    }
    let runs: Vec<_> = running
        .into_iter()
        .map(|run| run.wait(Duration::from_secs(60)))
        .collect();
    server.signal(libc::SIGCONT);
    for run in &runs {
        assert!(run.status.success(), "{}", run.describe());
    }
    paths
}

#[test]
fn merging_shards_of_a_frozen_run_keeps_what_they_left_unanswered() {
    let server = RedisServer::start();
    let dir = TestDir::new("merge-unanswered");
    let shards = frozen_shards(&server, &dir);
    let unfinished: Vec<serde_json::Value> = shards
        .iter()
        .map(|p| common::read_json(p)["ALL STATS"]["Unfinished"].clone())
        .collect();
    let count = |u: &serde_json::Value| u["In Flight At End"].as_u64().unwrap_or(0);
    let age = |u: &serde_json::Value| u["Oldest Age"].as_f64().unwrap_or(0.0);
    // Five connections each, one request each, none answered.
    assert!(
        unfinished.iter().all(|u| count(u) == 5 && age(u) >= 100.0),
        "{unfinished:?}"
    );

    let merged_path = dir.file("merged.json");
    let run = kvbench(&["merge", "--json-out-file"])
        .args(&[merged_path.display().to_string()])
        .args(
            &shards
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>(),
        )
        .ok();
    let merged = common::read_json(&merged_path);
    let all = &merged["ALL STATS"];
    let got = &all["Unfinished"];
    assert_eq!(got["In Flight At End"].as_u64(), Some(10), "{got}");
    let oldest = unfinished.iter().map(age).fold(0.0, f64::max);
    assert_eq!(got["Oldest Age"].as_f64(), Some(oldest), "{got}");
    let max_ms = all["Totals"]["Max Latency"].as_f64().unwrap_or(f64::MAX);
    assert!(oldest > max_ms, "{got} vs a max latency of {max_ms} ms");
    let warning = got["Warning"].as_str().unwrap_or_default();
    assert!(
        warning.starts_with("10 requests were still unanswered when the run ended")
            && warning.ends_with("(--rate measures stalls)"),
        "{got}"
    );
    let stderr = run.stderr_text();
    assert_eq!(
        stderr
            .lines()
            .filter(|l| *l == format!("warning: {warning}"))
            .count(),
        1,
        "{}",
        run.describe()
    );
    // The table on stdout is memtier's: the warning is not there.
    assert!(
        !run.stdout_text().contains("unanswered"),
        "{}",
        run.describe()
    );

    // `kvbench report` shows each file's warning in full under the run list.
    let page = dir.file("report.html");
    kvbench(&["report", "--label", "shard 0", "--label", "merged", "-o"])
        .args(&[
            page.display().to_string(),
            shards[0].display().to_string(),
            merged_path.display().to_string(),
        ])
        .ok();
    let html = std::fs::read_to_string(&page).expect("the report was written");
    let shard_warning = unfinished[0]["Warning"].as_str().unwrap_or_default();
    assert!(!shard_warning.is_empty(), "{unfinished:?}");
    for (label, warning) in [("shard 0", shard_warning), ("merged", warning)] {
        let shown =
            format!("<p class=\"warning\"><strong>{label}: warning:</strong> {warning}</p>");
        assert!(html.contains(&shown), "no {shown:?} in the page");
    }
    assert_eq!(
        html.matches("stalled: requests unanswered</span>").count(),
        2
    );
}
