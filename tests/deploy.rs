//! deploy/: the Kubernetes manifests validate against the Kubernetes schemas
//! (`kubernetes-validate`, installed from PyPI by scripts/ensure-deps.sh), the Dockerfile
//! copies what exists, `deploy/local-job.sh` runs three shards against a real
//! redis-server (password from the environment, as the Job's Secret gives it) and prints
//! one merged table, and `collect.sh` merges the shards that finished beside one that
//! failed or left no result, naming it and exiting 1.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use common::{RedisServer, TestDir, run_with_timeout};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn text(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn manifests_validate_against_the_kubernetes_schemas() {
    let dir = repo().join("deploy/kubernetes");
    let manifests = [dir.join("job.yaml"), dir.join("secret.yaml")];
    // What the Job must say, whatever the validator: an Indexed Job of N shards that
    // start together, the password from the Secret through the environment only.
    let job = text(&manifests[0]);
    // Per index: a failed shard ends no other (a Job-wide backoffLimit: 0 would).
    assert!(
        !job.contains("  backoffLimit:"),
        "job.yaml has a Job-wide backoffLimit"
    );
    for needle in [
        "backoffLimitPerIndex: 0",
        "completionMode: Indexed",
        "completions: 3",
        "parallelism: 3",
        "--shard=$(JOB_COMPLETION_INDEX)/3",
        "--start-at=$(KVBENCH_START_AT)",
        "name: KVBENCH_AUTH",
        "secretKeyRef:",
        "command: [\"kvbench-shard\"]",
        // The Pod Security "restricted" standard's container settings.
        "runAsNonRoot: true",
        "allowPrivilegeEscalation: false",
        "drop: [\"ALL\"]",
        "type: RuntimeDefault",
    ] {
        assert!(job.contains(needle), "job.yaml lacks {needle:?}");
    }
    assert!(!job.contains("- -a") && !job.contains("--authenticate"));
    // Quoted, so that after the documented `sed` the time stays a string: YAML reads a
    // bare `2030-01-01T00:00:00Z` as a timestamp, which an env value cannot be.
    assert!(
        job.contains("value: \"START_AT_PLACEHOLDER\""),
        "job.yaml's start time is not quoted"
    );
    let substituted_dir = TestDir::new("deploy-sed");
    let substituted = substituted_dir.file("job.yaml");
    std::fs::write(
        &substituted,
        job.replace("START_AT_PLACEHOLDER", "2030-01-01T00:00:00Z"),
    )
    .unwrap();

    let version = Command::new("kubernetes-validate")
        .arg("--version")
        .output();
    if !version.is_ok_and(|o| o.status.success()) {
        eprintln!(
            "skipping schema validation: kubernetes-validate is not installed (scripts/ensure-deps.sh installs it from PyPI when a registry is reachable)"
        );
        return;
    }
    let out = Command::new("kubernetes-validate")
        .arg("--strict")
        .args(&manifests)
        .arg(&substituted)
        .output()
        .expect("kubernetes-validate runs");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{said}");
    assert_eq!(said.matches(" passed for resource ").count(), 3, "{said}");
}

#[test]
fn dockerfile_is_multi_stage_and_copies_what_exists() {
    let dockerfile = text(&repo().join("deploy/Dockerfile"));
    let froms: Vec<&str> = dockerfile
        .lines()
        .filter(|l| l.starts_with("FROM "))
        .collect();
    assert_eq!(froms.len(), 2, "{froms:?}");
    assert!(froms[0].starts_with("FROM rust:") && froms[0].ends_with(" AS build"));
    assert!(froms[1].starts_with("FROM debian:") && froms[1].contains("-slim"));
    let ignore = text(&repo().join("deploy/Dockerfile.dockerignore"));
    for line in dockerfile.lines().filter(|l| l.starts_with("COPY ")) {
        if line.contains("--from=") {
            continue;
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        for source in &words[1..words.len() - 1] {
            let source = source.trim_end_matches('/');
            assert!(repo().join(source).exists(), "COPY of a missing {source}");
            assert!(
                ignore
                    .lines()
                    .any(|l| l.trim_start_matches('!').trim_end_matches('/') == source),
                "{source} is left out of the build context by Dockerfile.dockerignore"
            );
        }
    }
}

#[test]
fn local_job_runs_three_shards_and_prints_one_merged_table() {
    let server = RedisServer::start_with(&["--requirepass", "s3cret"]);
    let dir = TestDir::new("local-job");
    let merged = dir.file("all.json");
    let port = server.port.to_string();
    let mut cmd = Command::new("bash");
    cmd.arg(repo().join("deploy/local-job.sh"))
        .args(["3", &format!("--json-out-file={}", merged.display()), "--"])
        .args(["-s", "127.0.0.1", "-p", &port, "-t", "1", "-c", "2"])
        .args(["-n", "allkeys", "--key-pattern=S:S", "--ratio=1:0"])
        .args(["--key-minimum=1", "--key-maximum=3000", "--hide-histogram"])
        .env("KVBENCH", env!("CARGO_BIN_EXE_kvbench"))
        .env("KVBENCH_AUTH", "s3cret")
        // Room for three shards to start on a loaded machine, where a start already
        // past is refused.
        .env("LOCAL_JOB_START_IN", "5")
        .env("LOCAL_JOB_DIR", dir.path());
    let out = run_with_timeout(cmd, Duration::from_secs(120));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", common::describe(&out));
    assert_eq!(stdout.matches("ALL STATS").count(), 1, "{stdout}");
    assert!(stdout.contains("3         Threads"), "{stdout}");
    assert!(stdout.lines().any(|l| l.starts_with("Totals")), "{stdout}");

    // What the server saw: every key of 1..3000 written once, across the three shards.
    assert_eq!(server.dbsize(), 3000);
    assert_eq!(server.commandstats().get("set").copied(), Some(3000));
    let json = common::read_json(&merged);
    assert_eq!(json["ALL STATS"]["Totals"]["Count"].as_u64(), Some(3000));
    // Each shard's log holds its result between the markers, as a pod's would.
    for i in 0..3 {
        let log = text(&dir.file(&format!("pod-{i}.log")));
        assert!(log.contains(&format!("-----BEGIN KVBENCH RESULT {i}/3-----")));
        assert!(log.contains("-----END KVBENCH RESULT-----"));
        assert!(dir.file(&format!("results/shard-{i}.json")).exists());
    }
}

/// The shard script's result goes to stdout through its own `--json-out-file`, which it
/// adds last: a user's own would be overridden and never written, so it is refused, and
/// kvbench is never started.
#[test]
fn kvbench_shard_refuses_a_json_out_file_of_the_users() {
    for flag in [
        &["--json-out-file=mine.json"][..],
        &["--json-out-file", "mine.json"],
    ] {
        let mut cmd = Command::new("sh");
        cmd.arg(repo().join("deploy/kvbench-shard"))
            .args(["--shard=0/2", "-p", "1"])
            .args(flag)
            // Would exit 0 if the script ran it.
            .env("KVBENCH", "true");
        let out = run_with_timeout(cmd, Duration::from_secs(30));
        assert_eq!(out.status.code(), Some(1), "{}", common::describe(&out));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("--json-out-file is this script's own"),
            "{stderr}"
        );
        assert!(out.stdout.is_empty());
    }
}

/// Runs collect.sh for job `kvbench` of 3 shards through a stand-in kubectl (in `dir`)
/// that reports the Job's `status` (`succeeded/failed[/Failed condition]`) and prints
/// `logs` (shell words, globs allowed) as the pods' logs; the merge writes its JSON to
/// the returned path.
fn collect(dir: &TestDir, status: &str, logs: &str) -> (std::process::Output, PathBuf) {
    let kubectl = dir.file("kubectl");
    std::fs::write(
        &kubectl,
        format!("#!/bin/sh\ncase $1 in get) echo {status} ;; logs) cat {logs} ;; esac\n"),
    )
    .expect("write stand-in");
    let merged = dir.file("all.json");
    let mut cmd = Command::new("bash");
    cmd.arg(repo().join("deploy/kubernetes/collect.sh"))
        .args([
            "kvbench",
            "3",
            &format!("--json-out-file={}", merged.display()),
        ])
        .env("KUBECTL", format!("sh {}", kubectl.display()))
        .env("KVBENCH", env!("CARGO_BIN_EXE_kvbench"))
        .env("COLLECT_DIR", dir.file("results"));
    (run_with_timeout(cmd, Duration::from_secs(60)), merged)
}

/// A Job of the older shape (a Job-wide `backoffLimit: 0`): one failure ends it, its
/// other shards' pods go, and they count neither as succeeded nor as failed. collect.sh
/// stops waiting at the Failed condition, names the shard with no result, merges the
/// others (the table on stdout) and exits 1.
#[test]
fn collect_merges_what_a_failed_job_left_and_names_the_missing_shard() {
    let dir = TestDir::new("collect");
    let data = repo().join("tests/testdata");
    // Shards 0 and 2 of 3 in the "pods' logs" (two runs: a copy of one run would be
    // refused as counted twice); shard 1 printed nothing.
    let mut log = String::new();
    for (i, file) in [(0, "memtier_default.json"), (2, "memtier_runs3.json")] {
        log.push_str(&format!(
            "progress...\n-----BEGIN KVBENCH RESULT {i}/3-----\n"
        ));
        log.push_str(&text(&data.join(file)));
        log.push_str("-----END KVBENCH RESULT-----\n");
    }
    std::fs::write(dir.file("pods.txt"), log).expect("write log");
    let logs = format!("'{}'", dir.file("pods.txt").display());
    let (out, merged) = collect(&dir, "2/0/True", &logs);
    assert_eq!(out.status.code(), Some(1), "{}", common::describe(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    for said in [
        "collect: job/kvbench failed with 2 of 3 shards done",
        "collect: no result for shard 1/3 in the logs of job/kvbench",
        "collect: merging the 2 of 3 shard results",
    ] {
        assert!(stderr.contains(said), "{said:?} not in {stderr}");
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(stdout.matches("ALL STATS").count(), 1, "{stdout}");
    // The two shards' 800 and 600 requests.
    let json = common::read_json(&merged);
    assert_eq!(json["ALL STATS"]["Totals"]["Count"].as_u64(), Some(1400));
}

/// Three real shards against a real redis-server, the middle one pointed at a port
/// nothing listens on: it fails (kvbench-shard still prints its result, with the error
/// and nothing counted), the Job (backoffLimitPerIndex: 0) lets the others finish, and
/// collect.sh merges what they measured: the keys the server holds, exit status 1.
#[test]
fn collect_merges_the_shards_that_finished_beside_a_failed_one() {
    let server = RedisServer::start();
    let dir = TestDir::new("collect-failed");
    let closed = common::closed_port();
    let mut statuses = Vec::new();
    for i in 0..3 {
        let port = if i == 1 { closed } else { server.port };
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg(r#"log=$1; shift; exec "$@" >"$log" 2>&1"#)
            .arg("sh")
            .arg(dir.file(&format!("pod-{i}.log")))
            .arg(repo().join("deploy/kvbench-shard"))
            .arg(format!("--shard={i}/3"))
            .args([
                "-s",
                "127.0.0.1",
                "-p",
                &port.to_string(),
                "-t",
                "1",
                "-c",
                "2",
            ])
            .args(["-n", "allkeys", "--key-pattern=S:S", "--ratio=1:0"])
            .args(["--key-minimum=1", "--key-maximum=3000", "--hide-histogram"])
            .env("KVBENCH", env!("CARGO_BIN_EXE_kvbench"));
        statuses.push(
            run_with_timeout(cmd, Duration::from_secs(120))
                .status
                .success(),
        );
    }
    assert_eq!(statuses, [true, false, true]);
    let logs = format!("'{}'/pod-*.log", dir.path().display());
    let (out, merged) = collect(&dir, "2/1", &logs);
    assert_eq!(out.status.code(), Some(1), "{}", common::describe(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("collect: job/kvbench has 1 failed shard(s)"),
        "{stderr}"
    );
    assert!(stderr.contains("the run is incomplete"), "{stderr}");
    // What the server holds: shards 0 and 2's thousand keys each.
    assert_eq!(server.dbsize(), 2000);
    let json = common::read_json(&merged);
    assert_eq!(json["ALL STATS"]["Sets"]["Count"].as_u64(), Some(2000));
    // The failed shard's error travels into the merged result.
    let stopped = json["ALL STATS"]["Runtime"]["Stopped by error"]
        .as_str()
        .unwrap_or_default();
    assert!(stopped.contains("cannot connect"), "{json}");
}

/// A stop reaches kvbench through kvbench-shard: SIGTERM to the script (as Kubernetes
/// sends the container's PID 1 on `kubectl delete job`) stops kvbench at once, and the
/// partial result still comes out between the markers. The script ran kvbench in the
/// foreground, so as PID 1 it ignored SIGTERM (and elsewhere it died at once, leaving
/// kvbench running and printing nothing).
#[test]
fn kvbench_shard_passes_a_stop_on_and_prints_the_partial_result() {
    use std::io::Read;
    use std::process::Stdio;
    let server = RedisServer::start();
    let mut child = Command::new("sh")
        .arg(repo().join("deploy/kvbench-shard"))
        .args([
            "--shard=0/1",
            "-s",
            "127.0.0.1",
            "-p",
            &server.port.to_string(),
        ])
        .args(["-t", "1", "-c", "1", "--test-time=60", "--hide-histogram"])
        .env("KVBENCH", env!("CARGO_BIN_EXE_kvbench"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("kvbench-shard starts");
    common::wait_until("load on the server", common::CONDITION_TIMEOUT, || {
        server.calls() > 100
    });
    let started = std::time::Instant::now();
    // SAFETY: kill(2) on the PID of the shell this test spawned and has not reaped.
    assert_eq!(
        unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) },
        0
    );
    let mut stdout = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    let status = child.wait().expect("the script ends");
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "the stop waited for the 60 s run"
    );
    assert_eq!(
        status.code(),
        Some(143),
        "kvbench's status for SIGTERM: {stdout}"
    );
    assert!(
        stdout.starts_with("-----BEGIN KVBENCH RESULT 0/1-----\n"),
        "{stdout}"
    );
    let json = stdout
        .trim_start_matches("-----BEGIN KVBENCH RESULT 0/1-----\n")
        .trim_end()
        .trim_end_matches("-----END KVBENCH RESULT-----");
    let doc: serde_json::Value = serde_json::from_str(json).expect("the result is JSON");
    let runtime = &doc["ALL STATS"]["Runtime"];
    assert_eq!(runtime["Interrupted"], "true", "{runtime}");
    let count = doc["ALL STATS"]["Totals"]["Count"].as_u64().unwrap_or(0);
    assert!(count > 0 && server.calls() >= count);
}
