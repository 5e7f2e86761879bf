//! Data verification and imported data end to end, against a real redis-server and a real
//! memcached (text and binary protocols) each test starts: `--data-verify` after a write
//! pass, `--verify-only` finding a key the test corrupted, `--data-import` of memtier's
//! CSV format (with `--generate-keys` and `--no-expiry`), and values that are 1 byte,
//! 100 KB, or hold `\r\nEND\r\n`.
//!
//! The server is always asked directly (redis-cli, raw memcached requests) what it holds;
//! kvbench's own verification report is checked separately.

mod common;

use std::path::Path;
use std::process::Output;
use std::time::Duration;

use serde_json::Value;

use common::{
    CONDITION_TIMEOUT, Memcached, RedisServer, Run, TestDir, describe, kvbench_at, read_json,
    wait_until,
};

const TEXT: &str = "memcache_text";
const BINARY: &str = "memcache_binary";

/// A server under test: Redis, or memcached with the protocol kvbench speaks to it.
enum Target {
    Redis(RedisServer),
    Memcached(Memcached, &'static str),
}

impl Target {
    fn redis() -> Target {
        Target::Redis(RedisServer::start())
    }

    fn memcached(protocol: &'static str) -> Target {
        Target::Memcached(Memcached::start(), protocol)
    }

    fn name(&self) -> &'static str {
        match self {
            Target::Redis(_) => "redis",
            Target::Memcached(_, protocol) => protocol,
        }
    }

    /// `kvbench -s 127.0.0.1 -p PORT -P PROTOCOL --hide-histogram EXTRA...`.
    fn run(&self, extra: &[&str]) -> Run {
        let (port, protocol) = match self {
            Target::Redis(s) => (s.port, "redis"),
            Target::Memcached(m, protocol) => (m.port, *protocol),
        };
        kvbench_at(port, &["-P", protocol, "--hide-histogram"])
            .args(extra)
            .run()
    }

    fn run_ok(&self, extra: &[&str]) -> Run {
        let out = self.run(extra);
        assert!(
            out.status.success(),
            "{}: kvbench {extra:?}\n{}",
            self.name(),
            describe(&out)
        );
        out
    }

    /// The value KEY holds, or `None` when it is missing.
    fn get(&self, key: &str) -> Option<Vec<u8>> {
        match self {
            Target::Redis(s) => {
                if s.cli(&["EXISTS", key]) == "0" {
                    return None;
                }
                // `cli` trims blanks at either end: fine for the plain values read back
                // here; `holds` is the binary-safe comparison.
                Some(s.cli(&["GET", key]).into_bytes())
            }
            Target::Memcached(m, _) => m.get(key),
        }
    }

    /// Whether KEY holds exactly `value` (binary safe on both servers).
    fn holds(&self, key: &str, value: &[u8]) -> bool {
        match self {
            Target::Redis(s) => {
                let value = std::str::from_utf8(value).expect("test values are UTF-8");
                s.cli(&[
                    "EVAL",
                    "if redis.call('GET', KEYS[1]) == ARGV[1] then return 1 else return 0 end",
                    "1",
                    key,
                    value,
                ]) == "1"
            }
            Target::Memcached(m, _) => m.get(key).as_deref() == Some(value),
        }
    }

    /// Overwrite KEY behind kvbench's back.
    fn corrupt(&self, key: &str, value: &str) {
        match self {
            Target::Redis(s) => assert_eq!(s.cli(&["SET", key, value]), "OK"),
            Target::Memcached(m, _) => m.set(key, value.as_bytes(), 0),
        }
    }

    /// Remaining TTL of KEY: `Some(-1)` without expiry, `None` when missing.
    fn ttl(&self, key: &str) -> Option<i64> {
        match self {
            Target::Redis(s) => match s.cli(&["TTL", key]).parse::<i64>().unwrap() {
                -2 => None,
                ttl => Some(ttl),
            },
            Target::Memcached(m, _) => m.ttl(key),
        }
    }

    /// Keys (Redis) or items (memcached) stored.
    fn items(&self) -> u64 {
        match self {
            Target::Redis(s) => s.dbsize(),
            Target::Memcached(m, _) => m.stats()["curr_items"],
        }
    }

    /// SETs the server has run so far.
    fn sets(&self) -> u64 {
        match self {
            Target::Redis(s) => s.commandstats().get("set").copied().unwrap_or(0),
            Target::Memcached(m, _) => m.stats()["cmd_set"],
        }
    }
}

/// `(verified, failed)` from the text report's verification block, which must be there.
fn report_counts(out: &Output) -> (u64, u64) {
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("Data verification completed"),
        "no verification block:\n{}",
        describe(out)
    );
    let number_before = |suffix: &str| -> u64 {
        let line = text
            .lines()
            .find(|l| l.trim_end().ends_with(suffix))
            .unwrap_or_else(|| panic!("no line ending {suffix:?}:\n{text}"));
        line.split_whitespace()
            .next()
            .unwrap()
            .parse()
            .unwrap_or_else(|_| panic!("no count in {line:?}"))
    };
    (
        number_before("keys verified successfuly."),
        number_before("keys failed."),
    )
}

/// `(verified, failed)` from the JSON's `client verifications results`.
fn json_counts(json: &Value) -> (u64, u64) {
    let results = &json["client verifications results"];
    let get = |name: &str| {
        results[name]
            .as_u64()
            .unwrap_or_else(|| panic!("{name} missing in {results:#} of {json:#}"))
    };
    (get("keys verified successfuly"), get("keys failed"))
}

const FILL_500: [&str; 7] = [
    "--key-pattern=S:S",
    "-n",
    "allkeys",
    "--key-minimum=1",
    "--key-maximum=500",
    "-t",
    "2",
];

// ---------------------------------------------------------------------------------------
// Write, verify, corrupt, verify again

/// A set-only pass over keys 1..500 with `--data-verify` checks all 500 and passes; then
/// the test corrupts one key (same length, other bytes) and `--verify-only` over the same
/// range names it, counts it and fails, without writing anything.
fn write_verify_corrupt_verify(target: Target) {
    let dir = TestDir::new(&format!("verify-{}", target.name()));
    let json_path = dir.file("write.json");
    let json_arg = format!("--json-out-file={}", json_path.display());
    let mut args = vec!["--ratio=1:0", "-c", "5", "--data-verify", &json_arg];
    args.extend(FILL_500);
    let out = target.run_ok(&args);
    assert_eq!(report_counts(&out), (500, 0), "{}", describe(&out));
    assert_eq!(json_counts(&read_json(&json_path)), (500, 0));
    assert_eq!(target.items(), 500);
    let value = target.get("memtier-123").expect("memtier-123 written");
    assert_eq!(value, vec![b'x'; 32], "default -d 32 value");

    target.corrupt("memtier-123", &"y".repeat(32));
    let sets_before = target.sets();
    let json_path = dir.file("verify.json");
    let json_arg = format!("--json-out-file={}", json_path.display());
    let mut args = vec!["--verify-only", "-c", "1", &json_arg];
    args.extend(FILL_500);
    let out = target.run(&args);
    assert_eq!(
        out.status.code(),
        Some(1),
        "a failed key must fail the run with status 1\n{}",
        describe(&out)
    );
    assert_eq!(report_counts(&out), (499, 1), "{}", describe(&out));
    assert_eq!(json_counts(&read_json(&json_path)), (499, 1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("memtier-123"),
        "the failed key is not named:\n{err}"
    );
    assert!(
        !err.contains("memtier-124"),
        "a good key is named as failed:\n{err}"
    );
    assert_eq!(
        target.sets(),
        sets_before,
        "--verify-only wrote to the server"
    );
    assert!(target.holds("memtier-123", "y".repeat(32).as_bytes()));
}

#[test]
fn redis_write_verify_then_verify_only_finds_the_corrupted_key() {
    write_verify_corrupt_verify(Target::redis());
}

#[test]
fn memcache_text_write_verify_then_verify_only_finds_the_corrupted_key() {
    write_verify_corrupt_verify(Target::memcached(TEXT));
}

#[test]
fn memcache_binary_write_verify_then_verify_only_finds_the_corrupted_key() {
    write_verify_corrupt_verify(Target::memcached(BINARY));
}

/// A key missing from the server counts as failed too.
#[test]
fn redis_verify_only_counts_a_missing_key() {
    let target = Target::redis();
    let mut args = vec!["--ratio=1:0", "-c", "5"];
    args.extend(FILL_500);
    target.run_ok(&args);
    let Target::Redis(server) = &target else {
        unreachable!()
    };
    assert_eq!(server.cli(&["DEL", "memtier-500"]), "1");
    let mut args = vec!["--verify-only", "-c", "1"];
    args.extend(FILL_500);
    let out = target.run(&args);
    assert!(!out.status.success(), "{}", describe(&out));
    assert_eq!(report_counts(&out), (499, 1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("memtier-500"));
}

// ---------------------------------------------------------------------------------------
// Imported data

/// One row of memtier's import file.
struct Item {
    key: Vec<u8>,
    value: Vec<u8>,
    exptime: u32,
}

/// Write memtier's import format: the header, then `0, 0, exptime, nbytes, 0, 0, 0,
/// nkey, key, data` per item, `nbytes` being the value's length + 2. `quoted` writes key
/// and data in double quotes (needed for values holding CR, LF, commas or quotes).
fn write_import(path: &Path, items: &[Item], quoted: bool) {
    let mut file =
        b"dumpflags, time, exptime, nbytes, nsuffix, it_flags, clsid, nkey, key, data\n".to_vec();
    let column = |bytes: &[u8]| -> Vec<u8> {
        if !quoted {
            return bytes.to_vec();
        }
        let mut out = vec![b'"'];
        for &b in bytes {
            if b == b'"' {
                out.push(b'"');
            }
            out.push(b);
        }
        out.push(b'"');
        out
    };
    for item in items {
        file.extend_from_slice(
            format!(
                "0, 0, {}, {}, 0, 0, 0, {}, ",
                item.exptime,
                item.value.len() + 2,
                item.key.len()
            )
            .as_bytes(),
        );
        file.extend(column(&item.key));
        file.extend_from_slice(b", ");
        file.extend(column(&item.value));
        file.push(b'\n');
    }
    std::fs::write(path, file).unwrap();
}

/// 30 items `imp:<i>` -> `value-<i>-zzz...` (i z's); every fifth expires in 3600 s.
fn import_items() -> Vec<Item> {
    (1..=30)
        .map(|i| Item {
            key: format!("imp:{i}").into_bytes(),
            value: format!("value-{i}-{}", "z".repeat(i)).into_bytes(),
            exptime: if i % 5 == 0 { 3600 } else { 0 },
        })
        .collect()
}

const IMPORT_PASS: [&str; 7] = [
    "--ratio=1:0",
    "--key-pattern=S:S",
    "-n",
    "allkeys",
    "--data-verify",
    "-t",
    "1",
];

/// Import 30 items: each key holds its value, rows with an exptime carry a TTL (none
/// with `--no-expiry`), and `--generate-keys` stores the same values under
/// `<prefix><key-minimum + i>` instead.
fn import_round_trip(make: fn() -> Target) {
    let items = import_items();
    let target = make();
    let dir = TestDir::new(&format!("import-{}", target.name()));
    let file = dir.file("import.csv");
    write_import(&file, &items, false);
    let import_arg = format!("--data-import={}", file.display());
    let json_path = dir.file("run.json");
    let json_arg = format!("--json-out-file={}", json_path.display());

    let mut args = vec![import_arg.as_str(), "-c", "2", &json_arg];
    args.extend(IMPORT_PASS);
    let out = target.run_ok(&args);
    assert_eq!(report_counts(&out), (30, 0));
    assert_eq!(json_counts(&read_json(&json_path)), (30, 0));
    assert_eq!(target.items(), 30, "{}", target.name());
    for item in &items {
        let key = String::from_utf8(item.key.clone()).unwrap();
        assert_eq!(
            target.get(&key).as_deref(),
            Some(item.value.as_slice()),
            "{}: {key}",
            target.name()
        );
        let ttl = target.ttl(&key).expect("key present");
        if item.exptime > 0 {
            assert!(
                (3500..=3600).contains(&ttl),
                "{key}: TTL {ttl}, exptime 3600"
            );
        } else {
            assert_eq!(ttl, -1, "{key} has exptime 0 but TTL {ttl}");
        }
    }

    // --no-expiry: the same file, no TTL anywhere.
    let target = make();
    let mut args = vec![import_arg.as_str(), "-c", "2", "--no-expiry"];
    args.extend(IMPORT_PASS);
    target.run_ok(&args);
    assert_eq!(target.items(), 30);
    for i in [5, 10, 30] {
        assert_eq!(
            target.ttl(&format!("imp:{i}")),
            Some(-1),
            "imp:{i} with --no-expiry"
        );
    }

    // --generate-keys: item i (0-based) under gen-<1 + i>; the file's keys are unused.
    let target = make();
    let mut args = vec![
        import_arg.as_str(),
        "-c",
        "2",
        "--generate-keys",
        "--key-prefix=gen-",
        "--key-minimum=1",
    ];
    args.extend(IMPORT_PASS);
    let out = target.run_ok(&args);
    assert_eq!(report_counts(&out), (30, 0));
    assert_eq!(target.items(), 30);
    for (i, item) in items.iter().enumerate() {
        let key = format!("gen-{}", i + 1);
        assert_eq!(
            target.get(&key).as_deref(),
            Some(item.value.as_slice()),
            "{}: {key}",
            target.name()
        );
    }
    assert_eq!(target.get("imp:1"), None, "file keys are replaced");
    assert_eq!(target.get("gen-31"), None);
    assert_eq!(target.get("gen-0"), None);
}

#[test]
fn redis_data_import_round_trip() {
    import_round_trip(Target::redis);
}

#[test]
fn memcache_text_data_import_round_trip() {
    import_round_trip(|| Target::memcached(TEXT));
}

#[test]
fn memcache_binary_data_import_round_trip() {
    import_round_trip(|| Target::memcached(BINARY));
}

/// Values that look like protocol: a reply decoder that searched for `END` or split on
/// CRLF would cut them short. Imported (quoted), written and verified.
fn protocol_lookalike_values_round_trip(target: Target) {
    let values: [&[u8]; 6] = [
        b"a\r\nEND\r\nb",
        b"\r\nEND\r\n",
        b"VALUE other 0 3\r\nabc\r\nEND\r\n",
        b"$5\r\nhello\r\n+OK\r\n",
        b"with, comma and \"quotes\"",
        b"plain",
    ];
    let items: Vec<Item> = values
        .iter()
        .enumerate()
        .map(|(i, v)| Item {
            key: format!("crlf:{i}").into_bytes(),
            value: v.to_vec(),
            exptime: 0,
        })
        .collect();
    let dir = TestDir::new(&format!("crlf-{}", target.name()));
    let file = dir.file("import.csv");
    write_import(&file, &items, true);
    let import_arg = format!("--data-import={}", file.display());
    let mut args = vec![import_arg.as_str(), "-c", "1"];
    args.extend(IMPORT_PASS);
    let out = target.run_ok(&args);
    assert_eq!(report_counts(&out), (values.len() as u64, 0));
    for item in &items {
        let key = String::from_utf8(item.key.clone()).unwrap();
        assert!(
            target.holds(&key, &item.value),
            "{}: {key} does not hold {:?} but {:?}",
            target.name(),
            String::from_utf8_lossy(&item.value),
            target
                .get(&key)
                .map(|v| String::from_utf8_lossy(&v).into_owned())
        );
    }

    // A read pass over them: every GET is a hit, nothing is left unread.
    let json_path = dir.file("read.json");
    let json_arg = format!("--json-out-file={}", json_path.display());
    let out = target.run_ok(&[
        &import_arg,
        "--ratio=0:1",
        "--key-pattern=S:S",
        "-n",
        "12",
        "-t",
        "1",
        "-c",
        "1",
        "--pipeline=4",
        &json_arg,
    ]);
    let json = read_json(&json_path);
    assert_eq!(
        json["ALL STATS"]["Gets"]["Count"].as_u64(),
        Some(12),
        "{}",
        describe(&out)
    );
    assert_eq!(json["ALL STATS"]["Gets"]["Misses/sec"].as_f64(), Some(0.0));
}

#[test]
fn memcache_text_protocol_lookalike_values_round_trip() {
    protocol_lookalike_values_round_trip(Target::memcached(TEXT));
}

#[test]
fn memcache_binary_protocol_lookalike_values_round_trip() {
    protocol_lookalike_values_round_trip(Target::memcached(BINARY));
}

#[test]
fn redis_protocol_lookalike_values_round_trip() {
    protocol_lookalike_values_round_trip(Target::redis());
}

// ---------------------------------------------------------------------------------------
// Value sizes on memcached

/// `-d SIZE` values over `keys` keys are written and verified by kvbench, and the server
/// holds exactly SIZE bytes of `x` for a few of them.
fn sized_values_verify(target: Target, size: usize, keys: u64) {
    let size_arg = size.to_string();
    let max_arg = format!("--key-maximum={keys}");
    let out = target.run_ok(&[
        "--ratio=1:0",
        "--key-pattern=S:S",
        "-n",
        "allkeys",
        "--key-minimum=1",
        &max_arg,
        "-d",
        &size_arg,
        "-t",
        "1",
        "-c",
        "2",
        "--data-verify",
    ]);
    assert_eq!(report_counts(&out), (keys, 0), "{}", describe(&out));
    assert_eq!(target.items(), keys);
    for id in [1, keys / 2, keys] {
        let key = format!("memtier-{id}");
        let value = target.get(&key).unwrap_or_else(|| panic!("{key} missing"));
        assert_eq!(value.len(), size, "{key}");
        assert!(value.iter().all(|&b| b == b'x'), "{key} holds other bytes");
    }
}

#[test]
fn memcache_text_one_byte_values_verify() {
    sized_values_verify(Target::memcached(TEXT), 1, 500);
}

#[test]
fn memcache_binary_one_byte_values_verify() {
    sized_values_verify(Target::memcached(BINARY), 1, 500);
}

#[test]
fn memcache_text_100k_values_verify() {
    sized_values_verify(Target::memcached(TEXT), 100 * 1024, 50);
}

#[test]
fn memcache_binary_100k_values_verify() {
    sized_values_verify(Target::memcached(BINARY), 100 * 1024, 50);
}

/// `--data-verify`, `--verify-only` and `--data-import` with `--command` are refused
/// before any connection: the commands write keys and values of their own, so the
/// verifier found none of its keys ("0 keys verified") and the import was ignored, both
/// with exit status 0.
#[test]
fn dataset_flags_with_arbitrary_commands_are_refused() {
    let server = RedisServer::start();
    let dir = TestDir::new("verify-command");
    let import = dir.file("import.csv");
    write_import(&import, &import_items(), false);
    let import_arg = format!("--data-import={}", import.display());
    for flag in ["--data-verify", "--verify-only", import_arg.as_str()] {
        let run = kvbench_at(
            server.port,
            &["-n", "20", "--command=set __key__ __data__", flag],
        )
        .run();
        assert_eq!(run.status.code(), Some(1), "{flag}: {}", run.describe());
        assert_eq!(
            run.stderr_text().trim(),
            "error: --data-import, --data-verify and --verify-only apply to kvbench's own SETs \
             and GETs, not to --command: drop one or the other",
            "{flag}"
        );
    }
    assert_eq!(server.dbsize(), 0);
    assert!(!server.commandstats().contains_key("set"));
}

/// Ctrl-C during the verification pass: the report says the pass was interrupted and
/// after how many keys, where it used to say "Data verification completed" (memtier's
/// line, kept for a pass that did complete).
#[test]
fn ctrl_c_during_verification_says_it_was_interrupted() {
    let server = RedisServer::start();
    // An empty server: every key is missing, and five million take far longer to check
    // than the test waits.
    let run = kvbench_at(
        server.port,
        &[
            "-t",
            "1",
            "-c",
            "1",
            "--key-pattern=P:P",
            "--key-maximum=5000000",
            "--verify-only",
            "--hide-histogram",
        ],
    )
    .spawn();
    wait_until("verification GETs", CONDITION_TIMEOUT, || {
        server.commandstats().get("get").copied().unwrap_or(0) > 1000
    });
    // SAFETY: kill(2) on the PID of a child this test spawned and has not reaped.
    unsafe { libc::kill(run.pid() as libc::pid_t, libc::SIGINT) };
    let out = run.wait(Duration::from_secs(60));
    // Exit 1, not 130: the keys checked were missing, and a failed verification is an
    // error whether or not the pass was cut short.
    assert_eq!(out.status.code(), Some(1), "{}", out.describe());
    assert!(
        out.stderr_text().contains("Interrupted by user (Ctrl+C)"),
        "{}",
        out.describe()
    );
    let text = out.stdout_text();
    assert!(!text.contains("Data verification completed"), "{text}");
    let line = text
        .lines()
        .find(|l| l.starts_with("Data verification interrupted after "))
        .unwrap_or_else(|| panic!("no interrupted line: {}", out.describe()));
    let keys: u64 = line
        .trim_start_matches("Data verification interrupted after ")
        .trim_end_matches(" keys:")
        .parse()
        .unwrap_or_else(|_| panic!("{line:?}"));
    assert!((1000..5_000_000).contains(&keys), "{line}");
}
