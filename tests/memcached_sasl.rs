//! memcache_binary SASL PLAIN authentication against a real memcached started with `-S`
//! and a SASL database made by the test (`saslpasswd2`, from Debian's sasl2-bin), and
//! memcache_text authentication against one started with `-Y` and an auth file.

mod common;

use common::{Memcached, Run, TestPki, describe, kvbench_at};

/// A memcached that requires SASL, with one user `bench` / `s3cret`.
fn sasl_server() -> Memcached {
    Memcached::start_sasl("bench", "s3cret")
}

/// 200 binary-protocol requests, authenticating with `auth` when given.
fn load(server: &Memcached, auth: Option<&str>) -> Run {
    let mut args = vec![
        "-P",
        "memcache_binary",
        "-t",
        "1",
        "-c",
        "2",
        "-n",
        "100",
        "--hide-histogram",
    ];
    if let Some(auth) = auth {
        args.extend(["-a", auth]);
    }
    kvbench_at(server.port, &args).run()
}

#[test]
fn sasl_plain_authenticates_and_loads() {
    let server = sasl_server();
    let out = load(&server, Some("bench:s3cret"));
    assert!(out.status.success(), "{}", describe(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("Totals"));
}

#[test]
fn wrong_password_is_one_clear_error() {
    let server = sasl_server();
    let out = load(&server, Some("bench:wrong"));
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    let last = stderr.lines().last().unwrap_or("");
    assert!(
        last.starts_with("error: authentication as user 'bench' failed"),
        "{stderr}"
    );
    assert!(!stderr.contains("wrong"), "the password leaked: {stderr}");
}

#[test]
fn no_credentials_names_the_fix() {
    let server = sasl_server();
    let out = load(&server, None);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("requires authentication"), "{stderr}");
    // The form memcached takes: a bare password is refused for it.
    assert!(stderr.contains("-a USER:PASSWORD"), "{stderr}");
    assert!(!stderr.contains("-a PASSWORD"), "{stderr}");
}

/// The last line of `stderr` says the server hung up and to speak binary with `-a`.
fn assert_names_the_binary_protocol(stderr: &str) {
    let last = stderr.lines().last().unwrap_or("");
    assert!(
        last.contains("closed the connection before any reply")
            && last.contains("requires SASL (memcached -S)")
            && last.contains("(-P memcache_binary) with -a USER:PASSWORD"),
        "{stderr}"
    );
}

/// A memcache_text client against a SASL-only memcached: memcached closes a text
/// connection at its first command, and the error says to speak binary with credentials
/// (it named only TLS before), with or without `-a`.
#[test]
fn text_protocol_against_sasl_names_the_binary_protocol() {
    let server = sasl_server();
    for auth in [None, Some("bench:s3cret")] {
        let mut args = vec!["-P", "memcache_text", "-t", "1", "-c", "1", "-n", "10"];
        if let Some(auth) = auth {
            args.extend(["-a", auth]);
        }
        let out = kvbench_at(server.port, &args).run();
        assert!(!out.status.success(), "{}", describe(&out));
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_names_the_binary_protocol(&stderr);
        assert!(!stderr.contains("s3cret"), "the password leaked: {stderr}");
    }
    // (The server's own counters cannot be read here: it answers no text `stats`.)
}

/// The same over TLS: the hang-up read as the end of the stream, and the error named
/// only "connection closed by server".
#[test]
fn text_protocol_against_sasl_over_tls_names_the_binary_protocol() {
    let pki = TestPki::generate();
    let server = Memcached::start_sasl_tls(&pki, "bench", "s3cret");
    let ca = pki.file("ca.pem");
    let args = [
        "-P",
        "memcache_text",
        "-t",
        "1",
        "-c",
        "1",
        "-n",
        "10",
        "--tls",
        "--cacert",
        &ca,
    ];
    let out = kvbench_at(server.port, &args).run();
    assert!(!out.status.success(), "{}", describe(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_names_the_binary_protocol(&stderr);
    // Binary with the credentials loads over the same TLS port.
    let ok = kvbench_at(server.port, &args[2..])
        .args(&["-P", "memcache_binary", "-a", "bench:s3cret"])
        .run();
    assert!(ok.status.success(), "{}", describe(&ok));
}

// ---------------------------------------------------------------------------------------
// memcache_text: memcached -Y (an auth file), the credentials sent in a `set`.

/// memcache_text with `-a USER:PASSWORD` against memcached -Y loads after authenticating
/// (the server counts kvbench's GETs), a wrong password is one clear error, and against
/// a memcached without -Y the credentials sent are never readable from the cache (they
/// were stored as an ordinary item `kvbench-auth` any client could GET).
#[test]
fn text_protocol_authenticates_and_never_leaves_the_password_in_a_cache() {
    let guarded = Memcached::start_text_auth("bench", "s3cret");
    let text = |server: &Memcached, auth: &str| {
        kvbench_at(
            server.port,
            &[
                "-P",
                "memcache_text",
                "-t",
                "1",
                "-c",
                "2",
                "-n",
                "100",
                "--ratio=1:1",
                "--hide-histogram",
                "-a",
                auth,
            ],
        )
        .run()
    };
    let ok = text(&guarded, "bench:s3cret");
    assert!(ok.status.success(), "{}", ok.describe());
    assert_eq!(guarded.stats().get("cmd_get").copied(), Some(100));
    let bad = text(&guarded, "bench:wrong");
    assert_eq!(bad.status.code(), Some(1), "{}", bad.describe());
    assert!(
        bad.stderr_text()
            .contains("authentication as user 'bench' failed"),
        "{}",
        bad.describe()
    );

    let open = Memcached::start();
    let ran = text(&open, "bench:s3cret");
    assert!(ran.status.success(), "{}", ran.describe());
    assert_eq!(open.stats().get("cmd_get").copied(), Some(100));
    // The harness asks: the item the credentials made is expired, never served.
    assert_eq!(open.get("kvbench-auth"), None);
}

/// Credentials for a memcached without SASL: the refusal names the server and says the
/// server does not use SASL (it read only "failed: Unknown command").
#[test]
fn credentials_for_a_memcached_without_sasl_say_so() {
    let open = Memcached::start();
    let out = kvbench_at(open.port, &["-P", "memcache_binary", "-n", "10"])
        .args(&["-a", "bench:s3cret"])
        .run();
    assert!(!out.status.success(), "{}", describe(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "authentication as user 'bench' failed on 127.0.0.1:{}: Unknown command (the server does not use SASL",
            open.port
        )),
        "{stderr}"
    );
}
