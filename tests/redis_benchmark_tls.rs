//! `kvbench redis-benchmark --tls` against a TLS-only redis-server started by the test
//! (certificates from the test PKI, client certificates required): requests executed
//! as with the real redis-benchmark, `rediss://`, `--cacertdir`, `--insecure`, and
//! `--tls-ciphers` / `--tls-ciphersuites` deciding which servers a handshake succeeds
//! with, the same way OpenSSL's redis-benchmark decides it.

mod common;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{
    KVBENCH_TIMEOUT, RedisServer, TestDir, TestPki, describe, kvbench, run_with_timeout, wait_until,
};

/// `--tls` and the PKI's files: the CA and the client certificate.
fn tls_args(pki: &TestPki) -> Vec<String> {
    vec![
        "--tls".into(),
        "--cacert".into(),
        pki.file("ca.pem"),
        "--cert".into(),
        pki.file("client.pem"),
        "--key".into(),
        pki.file("client.key"),
    ]
}

fn args_for(server: &RedisServer, tls: &[String], rest: &[&str]) -> Vec<String> {
    let mut args = vec![
        "-h".to_string(),
        "127.0.0.1".to_string(),
        "-p".to_string(),
        server.port.to_string(),
    ];
    args.extend(tls.iter().cloned());
    args.extend(rest.iter().map(|s| s.to_string()));
    args
}

fn mine(args: &[String]) -> common::Run {
    kvbench(&["redis-benchmark"]).args(args).run()
}

fn theirs(args: &[String]) -> std::process::Output {
    let mut cmd = Command::new("redis-benchmark");
    cmd.args(args);
    run_with_timeout(cmd, KVBENCH_TIMEOUT)
}

#[test]
fn tls_runs_execute_what_redis_benchmark_executes() {
    let pki = TestPki::generate();
    let server = RedisServer::start_tls(&pki, "server", &[]);
    let args = args_for(
        &server,
        &tls_args(&pki),
        &["-t", "set,get", "-n", "300", "-c", "3", "-q"],
    );
    server.config_resetstat();
    let run = mine(&args);
    assert!(run.status.success(), "{}", run.describe());
    let stats = server.commandstats();
    assert_eq!(
        (stats.get("set"), stats.get("get")),
        (Some(&300), Some(&300))
    );
    server.config_resetstat();
    let out = theirs(&args);
    assert!(out.status.success(), "{}", describe(&out));
    let real = server.commandstats();
    assert_eq!((real.get("set"), real.get("get")), (Some(&300), Some(&300)));

    // rediss:// turns TLS on; --cacertdir trusts a directory's certificates.
    let dir = TestDir::new("rb-cacertdir");
    std::fs::copy(pki.path("ca.pem"), dir.file("ca.pem")).expect("copy the CA");
    let uri = format!("rediss://127.0.0.1:{}", server.port);
    let run = kvbench(&[
        "redis-benchmark",
        "-u",
        &uri,
        "--cacertdir",
        &dir.path().to_string_lossy(),
        "--cert",
        &pki.file("client.pem"),
        "--key",
        &pki.file("client.key"),
        "-t",
        "ping_mbulk",
        "-n",
        "100",
        "-q",
    ])
    .run();
    assert!(run.status.success(), "{}", run.describe());

    // An empty --cacertdir beside --cacert takes nothing away, as with redis-benchmark.
    let empty = TestDir::new("rb-cacertdir-empty");
    let mut tls = tls_args(&pki);
    tls.extend([
        "--cacertdir".to_string(),
        empty.path().to_string_lossy().into_owned(),
    ]);
    let args = args_for(&server, &tls, &["-t", "ping_mbulk", "-n", "100", "-q"]);
    let run = mine(&args);
    assert!(run.status.success(), "{}", run.describe());
    assert!(theirs(&args).status.success());
}

/// A certificate issued for another name (`kvbench.test`), or with its name in the CN
/// only (as Redis's own test certificates), is taken at 127.0.0.1 by both tools: the
/// chain is verified, not the host name.
#[test]
fn a_certificate_for_another_name_connects_as_with_redis_benchmark() {
    let pki = TestPki::generate();
    for cert in ["named", "nosan"] {
        let server = RedisServer::start_tls(&pki, cert, &[]);
        let args = args_for(&server, &tls_args(&pki), &["-t", "set", "-n", "100", "-q"]);
        server.config_resetstat();
        let out = mine(&args);
        assert_eq!(out.status.code(), Some(0), "{cert}: {}", out.describe());
        assert_eq!(server.commandstats().get("set"), Some(&100), "{cert}");
        let real = theirs(&args);
        assert_eq!(real.status.code(), Some(0), "{cert}: {}", describe(&real));
    }
}

#[test]
fn an_unknown_ca_fails_unless_insecure() {
    let pki = TestPki::generate();
    let server = RedisServer::start_tls(&pki, "server", &[]);
    let client = [
        "--tls".to_string(),
        "--cert".to_string(),
        pki.file("client.pem"),
        "--key".to_string(),
        pki.file("client.key"),
    ];
    let mut other_ca = client.to_vec();
    other_ca.extend(["--cacert".to_string(), pki.file("other-ca.pem")]);
    let run = mine(&args_for(
        &server,
        &other_ca,
        &["-t", "ping_mbulk", "-n", "50", "-q"],
    ));
    assert_eq!(run.status.code(), Some(1), "{}", run.describe());
    let err = run.stderr_text();
    assert!(
        err.contains("certificate") && err.contains("--insecure"),
        "{err}"
    );
    let mut insecure = client.to_vec();
    insecure.push("--insecure".to_string());
    let run = mine(&args_for(
        &server,
        &insecure,
        &["-t", "ping_mbulk", "-n", "50", "-q"],
    ));
    assert!(run.status.success(), "{}", run.describe());
}

/// Whether a run with `extra` TLS flags against `server` gets through, for both tools.
fn handshakes(server: &RedisServer, pki: &TestPki, extra: &[&str]) -> (bool, bool) {
    let mut tls = tls_args(pki);
    tls.extend(extra.iter().map(|s| s.to_string()));
    let args = args_for(
        server,
        &tls,
        &["-t", "ping_mbulk", "-n", "20", "-c", "1", "-q"],
    );
    let run = mine(&args);
    if !run.status.success() {
        assert!(
            run.stderr_text().contains("TLS"),
            "a failed handshake says so: {}",
            run.describe()
        );
    }
    (run.status.success(), theirs_succeeds(&args))
}

/// Whether the real redis-benchmark completes with `args`. After a failed handshake it
/// keeps retrying instead of exiting: a run still going after 10 s has failed (and is
/// killed, by its PID).
fn theirs_succeeds(args: &[String]) -> bool {
    let mut child = Command::new("redis-benchmark")
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("redis-benchmark starts");
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut status = None;
    wait_until(
        "redis-benchmark to end or give up",
        Duration::from_secs(30),
        || {
            status = child.try_wait().ok().flatten();
            status.is_some() || Instant::now() >= deadline
        },
    );
    match status {
        Some(status) => status.success(),
        None => {
            let _ = child.kill();
            let _ = child.wait();
            false
        }
    }
}

#[test]
fn tls13_suites_choose_the_servers_a_handshake_works_with() {
    let pki = TestPki::generate();
    let server = RedisServer::start_tls(
        &pki,
        "server",
        &[
            "--tls-protocols",
            "TLSv1.3",
            "--tls-ciphersuites",
            "TLS_AES_256_GCM_SHA384",
        ],
    );
    assert_eq!(
        handshakes(
            &server,
            &pki,
            &["--tls-ciphersuites", "TLS_AES_256_GCM_SHA384"]
        ),
        (true, true)
    );
    assert_eq!(
        handshakes(
            &server,
            &pki,
            &["--tls-ciphersuites", "TLS_AES_128_GCM_SHA256"]
        ),
        (false, false)
    );
    assert_eq!(
        handshakes(
            &server,
            &pki,
            &[
                "--tls-ciphersuites",
                "TLS_CHACHA20_POLY1305_SHA256:TLS_AES_256_GCM_SHA384"
            ]
        ),
        (true, true)
    );
}

#[test]
fn tls12_ciphers_choose_the_servers_a_handshake_works_with() {
    let pki = TestPki::generate();
    let server = RedisServer::start_tls(
        &pki,
        "server",
        &[
            "--tls-protocols",
            "TLSv1.2",
            "--tls-ciphers",
            "ECDHE-ECDSA-AES256-GCM-SHA384",
        ],
    );
    assert_eq!(
        handshakes(&server, &pki, &["--tls-ciphers", "HIGH:!AES128"]),
        (true, true)
    );
    assert_eq!(
        handshakes(&server, &pki, &["--tls-ciphers", "DEFAULT:-AES256"]),
        (false, false)
    );
    assert_eq!(
        handshakes(
            &server,
            &pki,
            &["--tls-ciphers", "ECDHE-ECDSA-AES256-GCM-SHA384"]
        ),
        (true, true)
    );
    // A list that leaves nothing rustls offers is a usage error before any connection.
    let mut tls = tls_args(&pki);
    tls.extend(["--tls-ciphers".to_string(), "AES128-SHA256".to_string()]);
    let run = mine(&args_for(&server, &tls, &["-n", "10"]));
    assert_eq!(run.status.code(), Some(1));
    assert!(
        run.stderr_text()
            .starts_with("error: --tls-ciphers 'AES128-SHA256' leaves no TLS 1.2 cipher"),
        "{}",
        run.describe()
    );
}

/// `--tls` against a plaintext port: redis-benchmark's "Could not connect" line, saying
/// what to change, once the server-configuration query's handshake has waited its 5 s;
/// no test starts (it would wait again). Before, the query's failure was only a warning
/// and the first test's handshake waited another 10 s.
#[test]
fn a_plaintext_port_ends_the_run_at_the_first_handshake() {
    let server = RedisServer::start();
    server.config_resetstat();
    let started = Instant::now();
    let run = mine(&args_for(
        &server,
        &["--tls".to_string(), "--insecure".to_string()],
        &["-t", "get", "-n", "100", "-q"],
    ));
    let took = started.elapsed();
    assert_eq!(run.status.code(), Some(1), "{}", run.describe());
    let err = run.stderr_text();
    let expected = format!(
        "Could not connect to Redis at 127.0.0.1:{}: TLS handshake failed: no TLS answer \
         within 5 s; is this a plaintext port? drop --tls",
        server.port
    );
    assert_eq!(err.trim(), expected, "{}", run.describe());
    // One handshake's wait, not two (15 s before).
    assert!(took < Duration::from_secs(12), "took {took:?}");
    let stats = server.commandstats();
    assert_eq!(stats.get("get"), None, "{stats:?}");
}

/// A port nothing listens on: redis-benchmark's line and status 1 at once (the real
/// redis-benchmark 7.0 prints the line, then spins on the refused connection forever).
#[test]
fn a_refused_connection_is_one_line() {
    let port = common::free_port();
    let run = mine(&[
        "-h".to_string(),
        "127.0.0.1".to_string(),
        "-p".to_string(),
        port.to_string(),
        "-t".to_string(),
        "get".to_string(),
        "-n".to_string(),
        "10".to_string(),
    ]);
    assert_eq!(run.status.code(), Some(1), "{}", run.describe());
    assert_eq!(
        run.stderr_text().trim(),
        format!("Could not connect to Redis at 127.0.0.1:{port}: Connection refused"),
        "{}",
        run.describe()
    );
    assert!(run.stdout_text().is_empty(), "{}", run.describe());
}

/// A TLS port refusing the connection before any reply gives redis-benchmark's
/// "Could not connect" line saying what to change, at the CONFIG query, before any
/// test: TLS 1.3's refusal of a missing client certificate (an alert after the client's
/// side of the handshake is done). Before, it was a "Could not fetch server CONFIG"
/// warning and then an `error: connection ...`. A plaintext client the port resets
/// gets the warning (a proxy may close on CONFIG alone), then the first test's
/// connection says to add --tls.
#[test]
fn a_refusal_before_any_reply_says_what_to_change() {
    let pki = TestPki::generate();
    let server = RedisServer::start_tls(&pki, "server", &[]);
    let no_cert = vec![
        "--tls".to_string(),
        "--cacert".to_string(),
        pki.file("ca.pem"),
    ];
    let run = mine(&args_for(
        &server,
        &no_cert,
        &["-t", "get", "-n", "10", "-q"],
    ));
    assert_eq!(run.status.code(), Some(1), "{}", run.describe());
    assert_eq!(
        run.stderr_text(),
        format!(
            "Could not connect to Redis at 127.0.0.1:{}: TLS handshake failed: the server \
             requires a client certificate; pass --cert and --key\n",
            server.port
        )
    );
    let plain = mine(&args_for(&server, &[], &["-t", "get", "-n", "10", "-q"]));
    assert_eq!(plain.status.code(), Some(1), "{}", plain.describe());
    let stderr = plain.stderr_text();
    assert!(
        stderr.starts_with("WARNING: Could not fetch server CONFIG\n"),
        "{stderr}"
    );
    assert!(
        stderr
            .trim_end()
            .ends_with("if this port expects TLS, add --tls"),
        "{stderr}"
    );
}
