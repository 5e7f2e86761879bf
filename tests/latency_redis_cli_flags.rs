//! redis-cli's own spellings and habits in `kvbench latency` and `kvbench
//! intrinsic-latency`, checked against real servers started here: `-3` and `-2` (what
//! the server saw: HELLO 3, or no HELLO) and `--insecure` on TLS.

mod common;

use std::time::Duration;

use common::{RedisServer, TestPki, kvbench};

const TIMEOUT: Duration = Duration::from_secs(60);

#[test]
fn dash_3_says_hello_3_and_dash_2_says_no_hello_as_redis_cli() {
    let server = RedisServer::start();
    let port = server.port.to_string();
    for (flag, hellos) in [("-3", 1), ("-2", 0)] {
        server.config_resetstat();
        let run = kvbench(&["latency", "-p", &port, flag, "--raw", "-i", "0.2"])
            .timeout(TIMEOUT)
            .ok();
        let count: u64 = run
            .stdout_text()
            .split(' ')
            .nth(3)
            .and_then(|c| c.trim().parse().ok())
            .unwrap_or_else(|| panic!("{flag}: a raw line: {}", run.describe()));
        let stats = server.commandstats();
        assert_eq!(
            stats.get("hello").copied().unwrap_or(0),
            hellos,
            "{flag}: {stats:?}"
        );
        assert!(
            stats.get("ping").copied().unwrap_or(0) >= count,
            "{flag}: {stats:?}"
        );
    }
    // Two protocols at once is a usage error, as -P twice would be.
    let run = kvbench(&["latency", "-p", &port, "-3", "-P", "memcache_text"])
        .timeout(TIMEOUT)
        .run();
    assert_eq!(run.status.code(), Some(1), "{}", run.describe());
    assert_eq!(run.stderr_text().lines().count(), 1, "{}", run.describe());
}

#[test]
fn insecure_skips_certificate_verification_as_redis_cli() {
    let pki = TestPki::generate();
    let tls = RedisServer::start_tls(&pki, "server", &["--tls-auth-clients", "no"]);
    let port = tls.port.to_string();
    let argv = [
        "latency",
        "-h",
        "127.0.0.1",
        "-p",
        &port,
        "--tls",
        "--raw",
        "-i",
        "0.2",
    ];
    // No CA given: the server's certificate cannot be verified...
    let refused = kvbench(&argv).timeout(TIMEOUT).run();
    assert_eq!(refused.status.code(), Some(1), "{}", refused.describe());
    // ...unless redis-cli's --insecure says not to.
    let run = kvbench(&argv).args(&["--insecure"]).timeout(TIMEOUT).ok();
    assert_eq!(
        run.stdout_text().split(' ').count(),
        4,
        "{}",
        run.describe()
    );
    assert!(tls.commandstats().get("ping").copied().unwrap_or(0) >= 1);
}
