//! `kvbench report` of an open-loop run against a real redis-server: the page's open-loop
//! section shows the run's schedule (target, achieved, sent) and each row's service time,
//! with the JSON's figures, and a closed-loop run beside it adds no row to it.

mod common;

use std::fs;

use kvbench::report::html::numbers::ms_text;

use common::{RedisServer, TestDir, describe, kvbench, kvbench_at, read_json};

/// The text of the `<section id="ID">` of `page`, if there is one.
fn section<'a>(page: &'a str, id: &str) -> Option<&'a str> {
    let start = page.find(&format!("<section id=\"{id}\">"))?;
    let rest = &page[start..];
    Some(&rest[..rest.find("</section>").expect("closed section")])
}

#[test]
fn an_open_loop_run_shows_its_schedule_and_service_times() {
    let server = RedisServer::start();
    let dir = TestDir::new("report-open-loop");
    let (open, closed) = (dir.file("open.json"), dir.file("closed.json"));
    for (json, pacing) in [(&open, "--rate=2000"), (&closed, "--pipeline=1")] {
        kvbench_at(
            server.port,
            &[
                "-t",
                "1",
                "-c",
                "2",
                pacing,
                "--test-time=1",
                "--ratio=1:1",
                "--hide-histogram",
                &format!("--json-out-file={}", json.display()),
            ],
        )
        .ok();
    }
    let page_path = dir.file("report.html");
    let run = kvbench(&[
        "report",
        &open.display().to_string(),
        &closed.display().to_string(),
        "-o",
        &page_path.display().to_string(),
    ])
    .run();
    assert!(run.status.success(), "{}", describe(&run));
    let page = fs::read_to_string(&page_path).expect("the report was written");
    let body = section(&page, "open-loop").expect("an open-loop section");

    let json = read_json(&open);
    let stats = &json["ALL STATS"];
    let schedule = &stats["Schedule"];
    assert_eq!(schedule["Target Rate"].as_u64(), Some(2000), "{schedule}");
    assert!(body.contains("<td>2000/s (uniform)</td>"), "{body}");
    // One schedule row (the closed-loop run has none) and one service row per command.
    assert_eq!(body.matches("<table class=\"schedule\">").count(), 1);
    let schedule_rows = body
        .split("<table class=\"service\">")
        .next()
        .unwrap_or("")
        .matches("<tr><td class=\"run\">")
        .count();
    assert_eq!(schedule_rows, 1, "{body}");
    for name in ["Sets", "Gets", "Totals"] {
        assert!(
            body.contains(&format!("<td class=\"name\">{name}</td>")),
            "{name}: {body}"
        );
    }
    // The Totals service p50 is the JSON's, as the main table's figures are.
    let p50 = stats["Totals"]["Service Latency"]["Percentile Latencies"]["p50.00"]
        .as_f64()
        .expect("a service p50");
    let totals = &body[body.find("<td class=\"name\">Totals</td>").expect("Totals")..];
    let cells: Vec<&str> = totals
        .split("<td>")
        .skip(1)
        .map(|c| c.split("</td>").next().unwrap_or(""))
        .collect();
    // Ops/sec, Avg., p50, p99, p99.9, Count.
    assert_eq!(cells[2], ms_text(p50), "{totals:.400}");
}
