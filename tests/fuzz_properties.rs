//! Property tests of every parser of outside bytes: the contracts the fuzz targets check
//! (fuzz/src/, included here by path), on generated well-formed input, the same input with
//! one byte changed, and every input the fuzzer ever found a problem with
//! (fuzz/regressions/<target>/).
//!
//! Well-formed input must also be *accepted* (every reply decoded, every item loaded), so a
//! parser that refused everything would fail here, not pass.

#[path = "../fuzz/src/cluster.rs"]
mod cluster;
#[path = "../fuzz/src/config.rs"]
mod config;
#[path = "../fuzz/src/decoder.rs"]
mod decoder;
#[path = "../fuzz/src/import.rs"]
mod import;
#[path = "../fuzz/src/monitor.rs"]
mod monitor;
#[path = "../fuzz/src/resultfile.rs"]
mod resultfile;

use std::path::Path;

use kvbench::engine::cluster::{SLOTS, slot_map};
use kvbench::protocol::resp_value;
use kvbench::protocol::{Decode, Expect, Protocol};
use kvbench::workload::commands::MonitorInput;
use kvbench::workload::import::{ImportOptions, ImportedData, ImportedItem, render_import_file};
use proptest::collection::vec;
use proptest::prelude::*;

/// Cases per decoder property: a few thousand, a few seconds in all.
const DECODER_CASES: u32 = 3000;

// ---- shared pieces ----

/// One byte changed, inserted or removed at a position (taken modulo the length).
#[derive(Clone, Debug)]
enum Mutation {
    None,
    Change(usize, u8),
    Insert(usize, u8),
    Remove(usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        2 => Just(Mutation::None),
        1 => (any::<usize>(), any::<u8>()).prop_map(|(at, b)| Mutation::Change(at, b)),
        1 => (any::<usize>(), any::<u8>()).prop_map(|(at, b)| Mutation::Insert(at, b)),
        1 => any::<usize>().prop_map(Mutation::Remove),
    ]
}

/// `bytes` mutated, or `None` when the mutation is `None` (or had nothing to act on).
fn mutate(bytes: &[u8], m: &Mutation) -> Option<Vec<u8>> {
    let mut out = bytes.to_vec();
    match *m {
        Mutation::None => return None,
        Mutation::Change(at, b) if !out.is_empty() => {
            let at = at % out.len();
            out[at] = b;
        }
        Mutation::Insert(at, b) => out.insert(at % (out.len() + 1), b),
        Mutation::Remove(at) if !out.is_empty() => {
            out.remove(at % bytes.len());
        }
        _ => return None,
    }
    Some(out)
}

/// Cut points as the fuzz input holds them: anywhere, out of range included.
fn cuts() -> impl Strategy<Value = Vec<usize>> {
    vec(0usize..600, 0..6)
}

/// Checks a stream of well-formed replies (and its mutation): each decoded whole as the
/// reply it is, then the contract on the changed bytes.
fn well_formed_stream(
    protocol: Protocol,
    expect: Expect,
    replies: &[Vec<u8>],
    cuts: &[usize],
    m: &Mutation,
) {
    let stream: Vec<u8> = replies.concat();
    let outcomes = decoder::check_stream(protocol, expect, &stream, cuts);
    assert_eq!(outcomes.len(), replies.len(), "{outcomes:?}");
    for (outcome, reply) in outcomes.iter().zip(replies) {
        match outcome {
            Decode::Complete(r) => assert_eq!(r.len, reply.len()),
            other => panic!(
                "{protocol:?} refused a well-formed reply {:?}: {other:?}",
                String::from_utf8_lossy(reply)
            ),
        }
    }
    if let Some(changed) = mutate(&stream, m) {
        decoder::check_stream(protocol, expect, &changed, cuts);
    }
}

fn request_kind() -> impl Strategy<Value = Expect> {
    prop_oneof![
        Just(Expect::Store),
        Just(Expect::Get),
        (0u32..6).prop_map(Expect::MultiGet),
        Just(Expect::Auth),
        Just(Expect::Setup),
        Just(Expect::Probe),
    ]
}

fn text_line() -> impl Strategy<Value = String> {
    "[ -~]{0,24}"
}

// ---- RESP ----

fn resp_length_prefixed(kind: u8, body: &[u8]) -> Vec<u8> {
    let mut out = vec![kind];
    out.extend_from_slice(body.len().to_string().as_bytes());
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(body);
    out.extend_from_slice(b"\r\n");
    out
}

fn resp_aggregate(kind: u8, count: usize, items: Vec<Vec<u8>>) -> Vec<u8> {
    let mut out = format!("{}{count}\r\n", kind as char).into_bytes();
    for item in items {
        out.extend(item);
    }
    out
}

/// Any RESP2 or RESP3 reply, nested up to four levels, attributes included.
fn resp_reply() -> impl Strategy<Value = Vec<u8>> {
    let leaf = prop_oneof![
        text_line().prop_map(|s| format!("+{s}\r\n").into_bytes()),
        text_line().prop_map(|s| format!("-ERR {s}\r\n").into_bytes()),
        any::<i64>().prop_map(|n| format!(":{n}\r\n").into_bytes()),
        vec(any::<u8>(), 0..40).prop_map(|b| resp_length_prefixed(b'$', &b)),
        Just(b"$-1\r\n".to_vec()),
        Just(b"*-1\r\n".to_vec()),
        Just(b"_\r\n".to_vec()),
        any::<f64>().prop_map(|x| format!(",{x:e}\r\n").into_bytes()),
        prop_oneof![Just("inf"), Just("-inf"), Just("nan")]
            .prop_map(|x| format!(",{x}\r\n").into_bytes()),
        any::<bool>().prop_map(|b| format!("#{}\r\n", if b { 't' } else { 'f' }).into_bytes()),
        "[+-]?[0-9]{1,60}".prop_map(|n| format!("({n}\r\n").into_bytes()),
        vec(any::<u8>(), 0..30).prop_map(|b| {
            let mut body = b"txt:".to_vec();
            body.extend(b);
            resp_length_prefixed(b'=', &body)
        }),
        vec(any::<u8>(), 0..30).prop_map(|b| resp_length_prefixed(b'!', &b)),
    ];
    leaf.prop_recursive(4, 48, 5, |inner| {
        prop_oneof![
            vec(inner.clone(), 0..5).prop_map(|v| resp_aggregate(b'*', v.len(), v)),
            vec(inner.clone(), 0..5).prop_map(|v| resp_aggregate(b'~', v.len(), v)),
            vec(inner.clone(), 0..5).prop_map(|v| resp_aggregate(b'>', v.len(), v)),
            vec((inner.clone(), inner.clone()), 0..3).prop_map(|pairs| {
                let n = pairs.len();
                resp_aggregate(
                    b'%',
                    n,
                    pairs.into_iter().flat_map(|(k, v)| [k, v]).collect(),
                )
            }),
            (vec((inner.clone(), inner.clone()), 0..3), inner).prop_map(|(pairs, value)| {
                let n = pairs.len();
                let mut out = resp_aggregate(
                    b'|',
                    n,
                    pairs.into_iter().flat_map(|(k, v)| [k, v]).collect(),
                );
                out.extend(value);
                out
            }),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(DECODER_CASES))]

    #[test]
    fn resp_keeps_the_decoder_contract(
        replies in vec(resp_reply(), 1..4),
        expect in request_kind(),
        resp3 in any::<bool>(),
        cuts in cuts(),
        m in mutation(),
    ) {
        let protocol = if resp3 { Protocol::Resp3 } else { Protocol::Resp2 };
        well_formed_stream(protocol, expect, &replies, &cuts, &m);
    }
}

// ---- memcache text ----

fn memcache_key() -> impl Strategy<Value = String> {
    "[!-~]{1,30}"
}

fn text_value_block() -> impl Strategy<Value = Vec<u8>> {
    (
        memcache_key(),
        any::<u32>(),
        prop_oneof![
            vec(any::<u8>(), 0..40),
            Just(b"\r\nEND\r\nVALUE x 0 1\r\nEND\r\n".to_vec())
        ],
        proptest::option::of(any::<u64>()),
    )
        .prop_map(|(key, flags, data, cas)| {
            let cas = cas.map(|c| format!(" {c}")).unwrap_or_default();
            let mut out = format!("VALUE {key} {flags} {}{cas}\r\n", data.len()).into_bytes();
            out.extend(data);
            out.extend_from_slice(b"\r\n");
            out
        })
}

fn text_error() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        Just(b"ERROR\r\n".to_vec()),
        text_line().prop_map(|s| format!("CLIENT_ERROR {s}\r\n").into_bytes()),
        text_line().prop_map(|s| format!("SERVER_ERROR {s}\r\n").into_bytes()),
    ]
}

/// A memcached text reply to `expect`.
fn text_reply(expect: Expect) -> BoxedStrategy<Vec<u8>> {
    match expect {
        Expect::Get | Expect::MultiGet(_) => {
            let most = match expect {
                Expect::MultiGet(n) => n as usize,
                _ => 1,
            };
            prop_oneof![
                4 => vec(text_value_block(), 0..=most).prop_map(|blocks| {
                    let mut out = blocks.concat();
                    out.extend_from_slice(b"END\r\n");
                    out
                }),
                1 => text_error(),
            ]
            .boxed()
        }
        Expect::Probe => prop_oneof![
            text_line().prop_map(|s| format!("VERSION {s}\r\n").into_bytes()),
            text_error(),
        ]
        .boxed(),
        _ => prop_oneof![
            Just(b"STORED\r\n".to_vec()),
            Just(b"NOT_STORED\r\n".to_vec()),
            Just(b"EXISTS\r\n".to_vec()),
            Just(b"NOT_FOUND\r\n".to_vec()),
            text_error(),
        ]
        .boxed(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(DECODER_CASES))]

    #[test]
    fn memcache_text_keeps_the_decoder_contract(
        (expect, replies) in request_kind().prop_flat_map(|e| (Just(e), vec(text_reply(e), 1..4))),
        cuts in cuts(),
        m in mutation(),
    ) {
        well_formed_stream(Protocol::MemcacheText, expect, &replies, &cuts, &m);
    }
}

// ---- memcache binary ----

fn binary_packet(op: u8, status: u16, extras: &[u8], key: &[u8], value: &[u8]) -> Vec<u8> {
    let mut out = vec![0x81, op];
    out.extend_from_slice(&(key.len() as u16).to_be_bytes());
    out.push(extras.len() as u8);
    out.push(0);
    out.extend_from_slice(&status.to_be_bytes());
    out.extend_from_slice(&((extras.len() + key.len() + value.len()) as u32).to_be_bytes());
    out.extend_from_slice(&7u32.to_be_bytes());
    out.extend_from_slice(&1u64.to_be_bytes());
    out.extend_from_slice(extras);
    out.extend_from_slice(key);
    out.extend_from_slice(value);
    out
}

fn binary_status() -> impl Strategy<Value = u16> {
    prop_oneof![
        4 => Just(0u16),
        1 => Just(1u16),
        1 => prop::sample::select(vec![2u16, 3, 4, 5, 0x20, 0x21, 0x81, 0x82, 0x86]),
    ]
}

/// One response packet with an opcode `expect` accepts.
fn binary_one(ops: Vec<u8>) -> impl Strategy<Value = Vec<u8>> {
    (
        prop::sample::select(ops),
        binary_status(),
        vec(any::<u8>(), 0..5),
        vec(any::<u8>(), 0..12),
        vec(any::<u8>(), 0..40),
    )
        .prop_map(|(op, status, extras, key, value)| {
            binary_packet(op, status, &extras, &key, &value)
        })
}

/// A memcached binary reply to `expect` (a multi-get: GETKQ hits, then the NOOP).
fn binary_reply(expect: Expect) -> BoxedStrategy<Vec<u8>> {
    match expect {
        Expect::Store | Expect::Setup => binary_one(vec![0x01, 0x02, 0x03]).boxed(),
        Expect::Get => binary_one(vec![0x00, 0x0c]).boxed(),
        Expect::Auth => binary_one(vec![0x20, 0x21, 0x22]).boxed(),
        Expect::Probe => binary_one(vec![0x0b]).boxed(),
        Expect::MultiGet(n) => (
            vec(binary_one(vec![0x0d, 0x09]), 0..=n as usize),
            binary_status(),
        )
            .prop_map(|(hits, status)| {
                let mut out = hits.concat();
                out.extend(binary_packet(0x0a, status, &[], &[], &[]));
                out
            })
            .boxed(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(DECODER_CASES))]

    #[test]
    fn memcache_binary_keeps_the_decoder_contract(
        (expect, replies) in request_kind().prop_flat_map(|e| (Just(e), vec(binary_reply(e), 1..4))),
        cuts in cuts(),
        m in mutation(),
    ) {
        well_formed_stream(Protocol::MemcacheBinary, expect, &replies, &cuts, &m);
    }
}

// ---- CLUSTER SLOTS, MOVED/ASK ----

fn bulk(text: &str) -> Vec<u8> {
    resp_length_prefixed(b'$', text.as_bytes())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(DECODER_CASES))]

    /// A `CLUSTER SLOTS` reply of disjoint ranges reads back as exactly those owners; with
    /// one byte changed it keeps the cluster contract.
    #[test]
    fn cluster_slots_read_back(
        cut_points in vec(0usize..SLOTS, 1..6),
        hosts in vec(prop_oneof![Just(String::new()), "[a-z0-9.]{1,12}"], 6),
        ports in vec(1u16..=u16::MAX, 6),
        m in mutation(),
    ) {
        let mut bounds = cut_points;
        bounds.sort_unstable();
        bounds.dedup();
        let mut ranges = Vec::new();
        let mut start = 0;
        for (i, &end) in bounds.iter().enumerate() {
            if end >= start {
                ranges.push((start, end, i));
                start = end + 1;
            }
        }
        let mut reply = format!("*{}\r\n", ranges.len()).into_bytes();
        for &(start, end, node) in &ranges {
            reply.extend(format!("*3\r\n:{start}\r\n:{end}\r\n*3\r\n").into_bytes());
            reply.extend(bulk(&hosts[node]));
            reply.extend(format!(":{}\r\n", ports[node]).into_bytes());
            reply.extend(bulk("0123456789abcdef"));
        }
        cluster::check(&reply);
        let Some((value, _)) = resp_value::value(&reply) else {
            panic!("a CLUSTER SLOTS reply did not decode");
        };
        let map = slot_map(&value, "seed").expect("a well-formed slot map");
        for &(start, end, node) in &ranges {
            let host = if hosts[node].is_empty() { "seed" } else { hosts[node].as_str() };
            for slot in [start, end, (start + end) / 2] {
                let owner = &map.nodes[usize::from(map.slot_owner[slot])];
                prop_assert_eq!(owner, &(host.to_string(), ports[node]));
            }
        }
        for (i, &slot) in bounds.iter().enumerate() {
            let moved = format!("MOVED {slot} {}:{}", hosts[i], ports[i]);
            cluster::check(moved.as_bytes());
            prop_assert!(kvbench::engine::cluster::parse_redirect(moved.as_bytes()).is_some());
        }
        if let Some(changed) = mutate(&reply, &m) {
            cluster::check(&changed);
        }
    }
}

// ---- --data-import ----

fn import_item() -> impl Strategy<Value = (Vec<u8>, Vec<u8>, u32)> {
    (
        vec(any::<u8>(), 0..20),
        vec(any::<u8>(), 0..50),
        any::<u32>(),
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(DECODER_CASES))]

    /// Items written in memtier's format load as the same items, under every option; with
    /// one byte changed the file keeps the parser's contract.
    #[test]
    fn import_files_read_back(
        items in vec(import_item(), 1..6),
        generate_keys in any::<bool>(),
        no_expiry in any::<bool>(),
        m in mutation(),
    ) {
        let items: Vec<ImportedItem> = items
            .iter()
            .map(|(key, value, expiry_secs)| ImportedItem { key, value, expiry_secs: *expiry_secs })
            .collect();
        let file = render_import_file(items.iter().copied());
        let options = ImportOptions { generate_keys, no_expiry, key_prefix: "k-", key_min: 7 };
        import::check_file(&file, &options);
        let plain = ImportOptions { generate_keys: false, no_expiry: false, key_prefix: "", key_min: 0 };
        let loaded = ImportedData::parse("items.csv", &file, &plain).expect("a written file loads");
        let again: Vec<ImportedItem> = (0..loaded.len()).map(|i| loaded.item(i)).collect();
        prop_assert_eq!(again, items);
        if let Some(changed) = mutate(&file, &m) {
            import::check_file(&changed, &options);
        }
    }
}

// ---- --monitor-input ----

fn monitor_command() -> impl Strategy<Value = Vec<Vec<u8>>> {
    ("[a-zA-Z]{1,8}", vec(vec(any::<u8>(), 0..12), 0..4)).prop_filter_map(
        "HELLO is never replayed",
        |(word, args)| {
            (!word.eq_ignore_ascii_case("hello"))
                .then(|| std::iter::once(word.into_bytes()).chain(args).collect())
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(DECODER_CASES))]

    /// Commands written as `MONITOR` lines load as the same commands; with one byte
    /// changed the capture keeps the parser's contract.
    #[test]
    fn monitor_captures_read_back(commands in vec(monitor_command(), 1..5), m in mutation()) {
        let capture = monitor::render_capture(&commands);
        monitor::check(&capture);
        let input = MonitorInput::parse_bytes(&capture).expect("a written capture loads");
        prop_assert_eq!(monitor::commands_of(&input), commands);
        if let Some(changed) = mutate(&capture, &m) {
            monitor::check(&changed);
        }
    }
}

// ---- --config ----

fn json_value() -> impl Strategy<Value = serde_json::Value> {
    use serde_json::Value;
    let scalar = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        prop::sample::select(vec![
            "",
            "1",
            "-1",
            "0",
            "1:1",
            "3:2",
            "99999999999999999999",
            "1.5",
            "abc",
            "set __key__ __data__",
            "R",
            "G:G",
            "a\nb"
        ])
        .prop_map(Value::from),
    ];
    scalar.prop_recursive(2, 8, 3, |inner| vec(inner, 0..3).prop_map(Value::Array))
}

proptest! {
    // Each case builds memtier's whole clap command a few times: fewer cases.
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// A config file of real and unknown keys with any values, and any of a few words
    /// after it: parsed without a panic, refused on one line.
    #[test]
    fn config_files_parse_or_refuse_on_one_line(
        entries in vec((prop::sample::select(vec![
            "ratio", "test-time", "requests", "threads", "clients", "pipeline", "data-size",
            "data-size-range", "key-prefix", "key-pattern", "hide-histogram", "command",
            "command-ratio", "command-key-pattern", "server", "port", "uri", "help", "config",
            "-n", "no-such-flag",
        ]), json_value()), 0..6),
        words in vec(prop::sample::select(vec!["-n", "5", "--test-time=1", "--ratio", "x", "--", "--command=get __key__"]), 0..3),
    ) {
        let object: serde_json::Map<String, serde_json::Value> =
            entries.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
        let file = serde_json::to_vec(&serde_json::Value::Object(object)).expect("JSON out");
        let words: Vec<String> = words.into_iter().map(String::from).collect();
        config::check_parse(&file, &words);
    }
}

// ---- result files (merge, the HTML report) ----

/// Real result files: kvbench's JSON (one run, three runs, cluster, memcached, arbitrary
/// commands), memtier_benchmark's, and interval logs.
const RESULT_FILES: &[&str] = &[
    include_str!("../src/resultfile/testdata/kvbench_single.json"),
    include_str!("../src/resultfile/testdata/kvbench_cluster.json"),
    include_str!("../src/resultfile/testdata/kvbench_memcache.json"),
    include_str!("../src/resultfile/testdata/kvbench_arbitrary.json"),
    include_str!("../src/resultfile/testdata/memtier_memcache_text.json"),
    include_str!("../src/resultfile/testdata/kvbench_single_SET_command_run_1.hgrm"),
    include_str!("../src/results/testdata/default.json"),
    include_str!("../src/results/testdata/runs3.json"),
    include_str!("../src/results/testdata/default_FULL_RUN_1.hgrm"),
];

#[test]
fn real_result_files_merge_and_read_back() {
    for text in RESULT_FILES {
        let file = kvbench::resultfile::read_str("real", text).expect("a real result file reads");
        kvbench::merge::merge(&[file], &Default::default()).expect("and merges");
        resultfile::check_text(text);
    }
}

proptest! {
    // Each case reads, merges and writes a whole result file a few times: fewer cases.
    #![proptest_config(ProptestConfig::with_cases(500))]

    /// A real result file with one byte changed keeps the readers' contract.
    #[test]
    fn result_files_keep_the_contract(which in 0..RESULT_FILES.len(), m in mutation()) {
        let text = RESULT_FILES[which].as_bytes();
        if let Some(changed) = mutate(text, &m) {
            resultfile::check(&changed);
        }
    }
}

// ---- what the fuzzer found ----

/// Every input a fuzz target ever failed on (fuzz/regressions/<target>/<file>), replayed
/// through that target's check: each once crashed; none may again.
#[test]
fn fuzz_findings_stay_fixed() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/regressions");
    let mut replayed = 0;
    let Ok(targets) = std::fs::read_dir(&root) else {
        panic!("no {}", root.display());
    };
    for target in targets {
        let target = target.expect("a directory entry");
        let name = target.file_name().to_string_lossy().into_owned();
        let check: fn(&[u8]) = match name.as_str() {
            "resp" => |d| decoder::check(Protocol::Resp3, d),
            "memcache_text" => |d| decoder::check(Protocol::MemcacheText, d),
            "memcache_binary" => |d| decoder::check(Protocol::MemcacheBinary, d),
            "cluster" => cluster::check,
            "import" => import::check,
            "monitor" => monitor::check,
            "config" => config::check,
            "resultfile" => resultfile::check,
            other => panic!("fuzz/regressions/{other}: no such fuzz target"),
        };
        for file in std::fs::read_dir(target.path()).expect("a regressions folder") {
            let path = file.expect("a directory entry").path();
            let data = std::fs::read(&path).expect("a regression input");
            check(&data);
            replayed += 1;
        }
    }
    assert!(replayed > 0, "fuzz/regressions holds no inputs");
}
