//! `kvbench zbench` when the server answers with errors: keys of the wrong type, and a
//! password server run without `-a`. A redis-server started by each test says what it
//! refused (`INFO commandstats`: `failed_calls`, `rejected_calls`) and what it holds; the
//! run must report the errors in its text and JSON, never count one as a success, and
//! exit 1 when nothing but errors came back.

mod common;

use std::collections::HashMap;

use common::{RedisServer, Run, kvbench};
use kvbench::frontend::zbench::workload::write_key;

/// zbench's key for id `id`.
fn key(id: u64) -> String {
    let mut out = Vec::new();
    write_key(&mut out, id);
    String::from_utf8(out).expect("keys are ASCII")
}

/// Makes key ids `ids` strings, so a sorted-set command on them fails with WRONGTYPE.
fn strings_at(server: &RedisServer, ids: std::ops::Range<u64>) {
    let mut args = vec!["MSET".to_string()];
    for id in ids {
        args.push(key(id));
        args.push("not a zset".to_string());
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    assert_eq!(server.cli(&args), "OK");
}

/// `INFO commandstats` as command -> field -> value (`calls`, `failed_calls`, ...).
fn command_fields(server: &RedisServer) -> HashMap<String, HashMap<String, u64>> {
    let info = server.cli(&["INFO", "commandstats"]);
    let mut map = HashMap::new();
    for line in info.lines() {
        let Some((name, fields)) = line
            .trim()
            .strip_prefix("cmdstat_")
            .and_then(|rest| rest.split_once(':'))
        else {
            continue;
        };
        let fields = fields
            .split(',')
            .filter_map(|f| f.split_once('='))
            .filter_map(|(k, v)| Some((k.to_string(), v.parse().ok()?)))
            .collect();
        map.insert(name.to_string(), fields);
    }
    map
}

/// `field` of `command` in the server's command statistics (0 when absent).
fn stat(server: &RedisServer, command: &str, field: &str) -> u64 {
    command_fields(server)
        .get(command)
        .and_then(|fields| fields.get(field).copied())
        .unwrap_or(0)
}

/// The number after `label` on its summary line (`Total Errors 100`).
fn summary_number(run: &Run, label: &str) -> Option<f64> {
    run.stdout_text().lines().find_map(|line| {
        line.strip_prefix(label)?
            .split_whitespace()
            .next()?
            .parse()
            .ok()
    })
}

/// The lines of stderr that start with `error:`.
fn error_lines(run: &Run) -> Vec<String> {
    run.stderr_text()
        .lines()
        .filter(|l| l.starts_with("error:"))
        .map(str::to_string)
        .collect()
}

/// `kvbench zbench -p PORT ARGS...` with a JSON file, run to its end.
fn zbench(server: &RedisServer, args: &[&str]) -> Run {
    let port = server.port.to_string();
    kvbench(&["zbench", "-p", &port])
        .args(args)
        .with_json()
        .run()
}

#[test]
fn queries_that_all_fail_end_in_an_error() {
    let server = RedisServer::start();
    strings_at(&server, 0..10);
    let run = zbench(
        &server,
        &["-mode", "query", "-r", "10", "-c", "2", "-n", "100"],
    );
    // The server refused every query.
    assert_eq!(stat(&server, "zrangebylex", "calls"), 100);
    assert_eq!(stat(&server, "zrangebylex", "failed_calls"), 100);
    assert_eq!(run.status.code(), Some(1), "{}", run.describe());
    assert_eq!(
        error_lines(&run),
        vec![
            "error: every one of the 100 replies was an error (see the messages above): \
             nothing was benchmarked"
                .to_string()
        ],
        "{}",
        run.describe()
    );
    // What was measured is still shown and written.
    assert_eq!(summary_number(&run, "Total Errors"), Some(100.0));
    let json = run.json();
    assert_eq!(json["ALL STATS"]["Queries"]["Count"], 100);
    assert_eq!(json["ALL STATS"]["Queries"]["Errors"], 100);
    assert_eq!(json["ALL STATS"]["Totals"]["Errors"], 100);
}

#[test]
fn a_load_onto_keys_of_another_type_ends_in_an_error() {
    let server = RedisServer::start();
    strings_at(&server, 0..10);
    let run = zbench(&server, &["-mode", "load", "-r", "10", "-c", "2"]);
    assert_eq!(stat(&server, "zadd", "calls"), 10);
    assert_eq!(stat(&server, "zadd", "failed_calls"), 10);
    assert_eq!(server.cli(&["TYPE", &key(3)]), "string");
    assert_eq!(run.status.code(), Some(1), "{}", run.describe());
    let errors = error_lines(&run);
    assert_eq!(errors.len(), 1, "{}", run.describe());
    assert!(
        errors[0].contains("every one of the 10 replies was an error"),
        "{}",
        run.describe()
    );
    assert_eq!(summary_number(&run, "Total Errors"), Some(10.0));
    // No ZADD added anything: there is no average set size to show.
    assert_eq!(
        summary_number(&run, "Average zcard"),
        None,
        "{}",
        run.stdout_text()
    );
    assert_eq!(run.json()["ALL STATS"]["Zadds"]["Errors"], 10);
}

#[test]
fn some_errors_are_counted_in_the_text_and_the_json() {
    let server = RedisServer::start();
    // Ids 0..5 are strings; 5..20 are loaded.
    strings_at(&server, 0..5);
    let load = zbench(&server, &["-mode", "load", "-r", "20", "-c", "3"]);
    assert_eq!(load.status.code(), Some(0), "{}", load.describe());
    let failed = stat(&server, "zadd", "failed_calls");
    assert_eq!(failed, 5);
    assert_eq!(server.dbsize(), 20);
    assert_eq!(summary_number(&load, "Total Errors"), Some(5.0));
    assert_eq!(load.json()["ALL STATS"]["Zadds"]["Errors"], 5);
    // The average is of sets sent, so within the element range whatever failed.
    let zcard = summary_number(&load, "Average zcard").expect("Average zcard");
    assert!((1.0..=10.0).contains(&zcard), "{zcard}");

    server.config_resetstat();
    let query = zbench(
        &server,
        &["-mode", "query", "-r", "20", "-c", "2", "-n", "300"],
    );
    assert_eq!(query.status.code(), Some(0), "{}", query.describe());
    let failed = stat(&server, "zrangebylex", "failed_calls");
    assert_eq!(stat(&server, "zrangebylex", "calls"), 300);
    // A quarter of the keys are strings: some queries fail, most do not.
    assert!((1..300).contains(&failed), "{failed}");
    assert_eq!(summary_number(&query, "Total Errors"), Some(failed as f64));
    let json = query.json();
    assert_eq!(json["ALL STATS"]["Queries"]["Errors"], failed);
    assert_eq!(json["ALL STATS"]["Totals"]["Errors"], failed);
    assert_eq!(json["ALL STATS"]["Queries"]["Count"], 300);

    // In transactions the errors come inside EXEC's reply: counted, and shown on
    // stderr as outside one (they were counted and never shown).
    server.config_resetstat();
    let query = zbench(
        &server,
        &[
            "-mode",
            "query",
            "-r",
            "20",
            "-c",
            "2",
            "-n",
            "300",
            "-multi",
            "-pipeline",
            "5",
        ],
    );
    assert_eq!(query.status.code(), Some(0), "{}", query.describe());
    let failed = stat(&server, "zrangebylex", "failed_calls");
    assert!((1..300).contains(&failed), "{failed}");
    assert_eq!(summary_number(&query, "Total Errors"), Some(failed as f64));
    assert!(
        query
            .stderr_text()
            .contains("replied with an error: WRONGTYPE"),
        "{}",
        query.describe()
    );
}

#[test]
fn no_password_is_an_error_and_no_summary() {
    let server = RedisServer::start_with(&["--requirepass", "secret"]);
    for args in [
        &["-mode", "load", "-r", "100", "-c", "2"][..],
        &[
            "-mode",
            "load",
            "-r",
            "100",
            "-c",
            "2",
            "-multi",
            "-pipeline",
            "5",
        ],
        &[
            "-mode",
            "query",
            "-r",
            "10",
            "-c",
            "2",
            "-n",
            "50",
            "-multi",
            "-pipeline",
            "5",
        ],
    ] {
        let run = zbench(&server, args);
        assert_eq!(run.status.code(), Some(1), "{args:?}: {}", run.describe());
        let errors = error_lines(&run);
        assert_eq!(errors.len(), 1, "{args:?}: {}", run.describe());
        // Redis answers NOAUTH, or closes on a long unauthenticated ZADD.
        assert!(
            errors[0].contains("-a PASSWORD") || errors[0].contains("unauthenticated"),
            "{args:?}: {}",
            run.describe()
        );
        // A refused reply is no command issued: no summary, no average set size.
        let text = run.stdout_text();
        assert!(!text.contains("Total Issued commands"), "{args:?}: {text}");
        assert!(!text.contains("Average zcard"), "{args:?}: {text}");
        assert!(text.ends_with('\n'), "{args:?}: {text:?}");
        // The JSON file says why it has no figures.
        let json = run.json();
        let stopped = json["ALL STATS"]["Runtime"]["Stopped by error"]
            .as_str()
            .unwrap_or_default();
        assert!(!stopped.is_empty(), "{args:?}: {json}");
    }
    // The server ran nothing it was sent.
    for command in ["zadd", "zrangebylex", "multi", "exec"] {
        assert_eq!(stat(&server, command, "calls"), 0, "{command}");
    }
    assert!(stat(&server, "zadd", "rejected_calls") > 0);
    assert!(stat(&server, "multi", "rejected_calls") > 0);
    assert_eq!(server.dbsize(), 0);
}
