//! `kvbench report` of runs against more than one server: a memcached pool's per-server
//! rows and a replica's visibility lag, from real runs, shown in the page (tables whose
//! figures are the JSON's and the servers' own counts, the lag's charts), and looked at
//! in headless Chromium (DOM and a screenshot that is not blank).
//!
//! The browser part is skipped, with a printed reason, only where no `chromium` is
//! installed. Set `KVBENCH_KEEP_REPORT=1` to keep the page and its screenshot.

mod common;

use std::fs;
use std::path::Path;
use std::time::Duration;

use kvbench::report::html::numbers::count_text;

use common::browser::{chromium_for, run_chromium, screenshot_not_blank};
use common::{
    Memcached, RedisServer, TestDir, describe, kvbench, kvbench_at, read_json, wait_until,
};

/// The text of the `<section id="ID">` of `page`.
fn section<'a>(page: &'a str, id: &str) -> &'a str {
    let start = page
        .find(&format!("<section id=\"{id}\">"))
        .unwrap_or_else(|| panic!("no section {id}"));
    let rest = &page[start..];
    &rest[..rest.find("</section>").expect("closed section")]
}

fn pool_run(servers: &[Memcached], json: &Path) {
    let list: Vec<String> = servers.iter().map(Memcached::addr).collect();
    kvbench(&[
        "-P",
        "memcache_text",
        &format!("--servers={}", list.join(",")),
        "--ratio=1:1",
        "-t",
        "1",
        "-c",
        "2",
        "-n",
        "400",
        "--hide-histogram",
        &format!("--json-out-file={}", json.display()),
    ])
    .ok();
}

fn replica_run(json: &Path) {
    let primary = RedisServer::start();
    let port = primary.port.to_string();
    let replica = RedisServer::start_with(&["--replicaof", "127.0.0.1", &port]);
    wait_until("the replica's link is up", Duration::from_secs(30), || {
        replica
            .cli(&["INFO", "replication"])
            .contains("master_link_status:up")
    });
    kvbench_at(
        primary.port,
        &[
            "--visibility-from",
            &replica.addr(),
            "--visibility-ratio=4",
            "--ratio=1:0",
            "--distinct-client-seed",
            "-t",
            "1",
            "-c",
            "2",
            "--test-time=3",
            "--hide-histogram",
            &format!("--json-out-file={}", json.display()),
        ],
    )
    .ok();
}

#[test]
fn pool_and_replica_runs_show_per_server_and_visibility() {
    let scratch = TestDir::new("report-servers");
    let dir = scratch.path();
    let servers = [Memcached::start(), Memcached::start()];
    let (pool, vis) = (dir.join("pool.json"), dir.join("replica.json"));
    pool_run(&servers, &pool);
    replica_run(&vis);

    let page_path = dir.join("report.html");
    let run = kvbench(&[
        "report",
        &pool.display().to_string(),
        &vis.display().to_string(),
        "--title",
        "pool and replica",
        "-o",
        &page_path.display().to_string(),
    ])
    .run();
    assert!(run.status.success(), "{}", describe(&run));
    let page = fs::read_to_string(&page_path).expect("the report was written");

    // Per server: each member's row with the count the server itself saw.
    let per_server = section(&page, "servers");
    let pool_json = read_json(&pool);
    let mut total = 0;
    for server in &servers {
        let addr = server.addr();
        let stats = server.stats();
        let saw = stats["cmd_get"] + stats["cmd_set"];
        assert_eq!(
            pool_json["ALL STATS"]["Servers"][&addr]["Count"].as_u64(),
            Some(saw),
            "{addr}"
        );
        let row_start = per_server
            .find(&format!("<td class=\"name\">{addr}</td>"))
            .unwrap_or_else(|| panic!("no row for {addr}:\n{per_server}"));
        let row = &per_server[row_start..];
        let row = &row[..row.find("</tr>").expect("closed row")];
        let shown = count_text(saw as f64);
        assert!(row.ends_with(&format!("<td>{shown}</td>")), "{row}");
        total += saw;
    }
    assert_eq!(total, 2 * 400);

    // Visibility: the table's figures are the JSON's, and its charts are drawn.
    let vis_json = read_json(&vis);
    let v = &vis_json["ALL STATS"]["Replica Visibility"];
    let seen = v["Lag"]["Count"].as_u64().expect("Count");
    assert!(seen > 0);
    let table = section(&page, "visibility");
    let p99 = v["Lag"]["Percentile Latencies"]["p99.00"]
        .as_f64()
        .expect("p99");
    assert!(
        table.contains(&format!(
            "<td>{seen}</td><td>{}</td><td>{}</td>",
            v["Timeouts"], v["Untracked"]
        )),
        "{table}"
    );
    assert!(table.contains(&format!("<td>{p99:.3}</td>")), "{table}");
    let charts = section(&page, "visibility-charts");
    assert_eq!(charts.matches("<svg").count(), 2, "{charts:.600}");

    let Some(chromium) = chromium_for("the per-server and visibility report") else {
        return;
    };
    let dom = run_chromium(
        &chromium,
        dir,
        "dom",
        &["--dump-dom".to_string()],
        &page_path,
    );
    assert!(dom.contains("<h2>Per server</h2>"), "{dom:.2000}");
    assert!(dom.contains("<h2>Replica visibility</h2>"));
    let lag_charts = section(&dom, "visibility-charts");
    for svg in lag_charts.split("<svg ").skip(1) {
        let svg = &svg[..svg.find("</svg>").expect("closed svg")];
        let lines = svg.matches("<path class=\"line\" d=\"M").count();
        assert!(lines >= 1, "a lag chart without a line: {svg:.400}");
    }
    screenshot_not_blank(&chromium, dir, &page_path);
    if std::env::var_os("KVBENCH_KEEP_REPORT").is_some() {
        println!("kept the report and its screenshot in {}", dir.display());
        std::mem::forget(scratch);
    }
}
