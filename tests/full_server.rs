//! A server with no room for the run's connections (Redis at its `maxclients`,
//! memcached at its `-c`) ends the run with one message in the server's words, whichever
//! way its refusal reached the client: as the reply to a first request, as a reply to
//! nothing, as bytes a binary client cannot decode, or lost to the reset that met the
//! client's write (it used to end with any of "connection reset by peer", "connection
//! closed by server", "bad magic byte", depending on timing). Real servers with low
//! limits; each case runs several times, since which way the refusal comes is a race.

mod common;

use common::{Memcached, RedisServer, Run, kvbench, kvbench_at};

/// Runs of each case: the four ways come in different proportions on each machine.
const TRIES: usize = 4;

/// The last `error: ` line of a run's stderr.
fn error_line(stderr: &str) -> &str {
    stderr
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix("error: "))
        .unwrap_or_else(|| panic!("no error line in {stderr}"))
}

/// The run failed with `refused` as its one error line.
fn assert_refused(run: &Run, refused: &str) {
    assert_eq!(run.status.code(), Some(1), "{}", run.describe());
    assert_eq!(
        error_line(&run.stderr_text()),
        refused,
        "{}",
        run.describe()
    );
}

#[test]
fn a_redis_at_its_maxclients_is_named_by_every_front_end() {
    let server = RedisServer::start_with(&["--maxclients", "3"]);
    let refused = format!(
        "server 127.0.0.1:{} refused the connection: ERR max number of clients reached (it \
         has no room for more connections: raise the server's maxclients or open fewer)",
        server.port
    );
    for _ in 0..TRIES {
        let run = kvbench_at(
            server.port,
            &["-t", "1", "-c", "8", "-n", "200", "--hide-histogram"],
        )
        .with_json()
        .run();
        assert_refused(&run, &refused);
        // Results so far are still written, valid, with the refusal as the run's end.
        assert_eq!(
            run.json()["ALL STATS"]["Runtime"]["Stopped by error"].as_str(),
            Some(refused.as_str())
        );
    }
    let port = server.port.to_string();
    let run = kvbench(&[
        "redis-benchmark",
        "-p",
        &port,
        "-c",
        "8",
        "-n",
        "200",
        "-t",
        "set",
        "-q",
    ])
    .run();
    // redis-benchmark's own line when the refusal came as a reply (it stops at an error
    // reply), kvbench's when the reset lost it to the write.
    assert_eq!(run.status.code(), Some(1), "{}", run.describe());
    let stderr = run.stderr_text();
    assert!(
        stderr.ends_with("Error from server: ERR max number of clients reached\n")
            || error_line(&stderr) == refused,
        "{}",
        run.describe()
    );
    // The server refused them: its count of rejected connections says so.
    let stats = server.cli(&["INFO", "stats"]);
    let rejected: u64 = stats
        .lines()
        .find_map(|l| l.trim().strip_prefix("rejected_connections:"))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no rejected_connections in {stats}"));
    assert!(rejected >= (TRIES * 5) as u64, "{stats}");
    // Within the limit the same run is an ordinary one.
    kvbench_at(
        server.port,
        &["-t", "1", "-c", "2", "-n", "200", "--hide-histogram"],
    )
    .ok();
}

#[test]
fn a_memcached_at_its_connection_limit_is_named_in_both_protocols() {
    // One worker thread, so that a low -c leaves room for memcached's own descriptors.
    let server = Memcached::start_with(&["-c", "48", "-t", "1"]);
    let port = server.port.to_string();
    let refused = format!(
        "server 127.0.0.1:{port} refused the connection: ERROR Too many open connections (it \
         has no room for more connections: raise memcached's -c or open fewer)"
    );
    for protocol in ["memcache_text", "memcache_binary"] {
        for _ in 0..TRIES {
            let run = kvbench(&[
                "-P",
                protocol,
                "-s",
                "127.0.0.1",
                "-p",
                &port,
                "-t",
                "1",
                "-c",
                "80",
                "-n",
                "100",
                "--hide-histogram",
            ])
            .run();
            assert_refused(&run, &refused);
        }
    }
    let stats = server.stats_raw();
    let rejected: u64 = stats["rejected_connections"].parse().expect("a count");
    assert!(rejected >= (TRIES * 2) as u64, "{stats:?}");
}
