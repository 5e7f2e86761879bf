//! redis-benchmark's tests as data: the default suite in its order, `-t` selection, an
//! arbitrary command as a test, and the placeholders (`__rand_int__`, the cluster
//! `{tag}`) the engine fills in on every request.
//!
//! A test is a title and one [`RequestTemplate`]: the request's bytes, exactly as
//! redis-benchmark sends them, with the offsets of the fields to overwrite per request.
//! Filling a field never changes the request's length, so the engine copies the template
//! into its write buffer and patches it in place: no allocation per request.
//!
//! ```text
//! SET key:__rand_int__ VXK          (-r 1000)  ->  SET key:000000000417 VXK
//!                                   (no -r)    ->  sent as is: one key for every request
//! SET key:{tag}:__rand_int__ VXK    (--cluster) -> SET key:{3Ac}:000000000417 VXK
//!      {tag}: 3 bytes naming a slot of the connection's node ('}'-padded when shorter)
//! ```

use crate::engine::cluster::shortest_slot_tags;
pub use crate::workload::request_template::{RAND_PLACEHOLDER, RequestTemplate, TAG_PLACEHOLDER};

/// Largest `-r`: 12 digits hold numbers below 10^12.
pub const MAX_KEYSPACE: u64 = crate::workload::request_template::RAND_LIMIT;

/// One test of the default suite, as `-t` names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TestId {
    PingInline,
    PingMbulk,
    Set,
    Get,
    Incr,
    Lpush,
    Rpush,
    Lpop,
    Rpop,
    Sadd,
    Hset,
    Spop,
    Zadd,
    Zpopmin,
    LrangeFill,
    Lrange100,
    Lrange300,
    Lrange500,
    Lrange600,
    Mset,
    Xadd,
}

/// A default test: its title and the `-t` names that select it.
struct TestDef {
    id: TestId,
    title: &'static str,
    selected_by: &'static [&'static str],
}

const LRANGE_ANY: &[&str] = &[
    "lrange",
    "lrange_100",
    "lrange_300",
    "lrange_500",
    "lrange_600",
];

/// The default suite in redis-benchmark 7.2's order (7.0 ends at MSET; 7.2 added XADD).
/// `ping_bulk` (the title before Redis 6) is kvbench's alias for `ping_mbulk`.
const SUITE: [TestDef; 21] = [
    TestDef {
        id: TestId::PingInline,
        title: "PING_INLINE",
        selected_by: &["ping_inline", "ping"],
    },
    TestDef {
        id: TestId::PingMbulk,
        title: "PING_MBULK",
        selected_by: &["ping_mbulk", "ping", "ping_bulk"],
    },
    TestDef {
        id: TestId::Set,
        title: "SET",
        selected_by: &["set"],
    },
    TestDef {
        id: TestId::Get,
        title: "GET",
        selected_by: &["get"],
    },
    TestDef {
        id: TestId::Incr,
        title: "INCR",
        selected_by: &["incr"],
    },
    TestDef {
        id: TestId::Lpush,
        title: "LPUSH",
        selected_by: &["lpush"],
    },
    TestDef {
        id: TestId::Rpush,
        title: "RPUSH",
        selected_by: &["rpush"],
    },
    TestDef {
        id: TestId::Lpop,
        title: "LPOP",
        selected_by: &["lpop"],
    },
    TestDef {
        id: TestId::Rpop,
        title: "RPOP",
        selected_by: &["rpop"],
    },
    TestDef {
        id: TestId::Sadd,
        title: "SADD",
        selected_by: &["sadd"],
    },
    TestDef {
        id: TestId::Hset,
        title: "HSET",
        selected_by: &["hset"],
    },
    TestDef {
        id: TestId::Spop,
        title: "SPOP",
        selected_by: &["spop"],
    },
    TestDef {
        id: TestId::Zadd,
        title: "ZADD",
        selected_by: &["zadd"],
    },
    TestDef {
        id: TestId::Zpopmin,
        title: "ZPOPMIN",
        selected_by: &["zpopmin"],
    },
    TestDef {
        id: TestId::LrangeFill,
        title: "LPUSH (needed to benchmark LRANGE)",
        selected_by: LRANGE_ANY,
    },
    TestDef {
        id: TestId::Lrange100,
        title: "LRANGE_100 (first 100 elements)",
        selected_by: &["lrange", "lrange_100"],
    },
    TestDef {
        id: TestId::Lrange300,
        title: "LRANGE_300 (first 300 elements)",
        selected_by: &["lrange", "lrange_300"],
    },
    TestDef {
        id: TestId::Lrange500,
        title: "LRANGE_500 (first 500 elements)",
        selected_by: &["lrange", "lrange_500"],
    },
    TestDef {
        id: TestId::Lrange600,
        title: "LRANGE_600 (first 600 elements)",
        selected_by: &["lrange", "lrange_600"],
    },
    TestDef {
        id: TestId::Mset,
        title: "MSET (10 keys)",
        selected_by: &["mset"],
    },
    TestDef {
        id: TestId::Xadd,
        title: "XADD",
        selected_by: &["xadd"],
    },
];

/// Which default tests run: all of them, or those `-t` names.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum TestSelection {
    #[default]
    All,
    /// Lower-case names as `-t` gave them, each a known name.
    Only(Vec<String>),
}

impl TestSelection {
    /// Parse `-t`: comma-separated names, case-insensitive, as redis-benchmark does,
    /// with the names that select no test. redis-benchmark skips those silently, so a
    /// list that still selects something runs (the caller warns about the rest); a list
    /// that selects nothing at all is refused (redis-benchmark silently runs nothing).
    pub fn parse(raw: &str) -> Result<(Self, Vec<String>), String> {
        let names: Vec<String> = raw
            .split(',')
            .map(|n| n.trim().to_ascii_lowercase())
            .filter(|n| !n.is_empty())
            .collect();
        if names.is_empty() {
            return Err(format!(
                "-t '{raw}' names no test; tests: {}",
                known_names()
            ));
        }
        let (known, unknown): (Vec<String>, Vec<String>) =
            names.into_iter().partition(|n| is_known_name(n));
        if known.is_empty() {
            return Err(format!(
                "-t: unknown test '{}'; tests: {}",
                unknown.join("', '"),
                known_names()
            ));
        }
        Ok((TestSelection::Only(known), unknown))
    }

    /// Whether `id` runs under this selection.
    pub fn selects(&self, id: TestId) -> bool {
        match self {
            TestSelection::All => true,
            TestSelection::Only(names) => {
                let def = SUITE
                    .iter()
                    .find(|d| d.id == id)
                    .expect("every TestId has a definition");
                names.iter().any(|n| def.selected_by.contains(&n.as_str()))
            }
        }
    }
}

fn is_known_name(name: &str) -> bool {
    SUITE.iter().any(|d| d.selected_by.contains(&name))
}

/// Every name `-t` accepts, for error messages and `--help`.
pub fn known_names() -> String {
    let mut names: Vec<&str> = Vec::new();
    for def in &SUITE {
        for n in def.selected_by {
            if !names.contains(n) {
                names.push(n);
            }
        }
    }
    names.join(", ")
}

/// One test to run: what the report calls it and what it sends.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Test {
    /// `SET`, `LPUSH (needed to benchmark LRANGE)`, or an arbitrary command's words.
    pub title: String,
    /// The request, sent `-n` times.
    pub command: RequestTemplate,
    /// The "N bytes payload" figure: `-d` for the default suite, the encoded request's
    /// length for an arbitrary command (as redis-benchmark prints them).
    pub payload_bytes: usize,
}

/// What shapes the default suite's requests.
#[derive(Clone, Copy, Debug)]
pub struct SuiteParams<'a> {
    /// `-r` given (`Some(0)` too: then every field becomes `000000000000`).
    pub randomize: bool,
    /// `--cluster`: key names carry a `{tag}` field.
    pub cluster: bool,
    /// `-t`.
    pub selection: &'a TestSelection,
}

/// The selected default tests in redis-benchmark's order, each value being `payload`
/// (`-d` bytes from [`PayloadGenerator`]).
pub fn default_suite(params: SuiteParams, payload: &[u8]) -> Vec<Test> {
    let tag: &[u8] = if params.cluster { b":{tag}" } else { b"" };
    let key = |base: &str| -> Vec<u8> { [base.as_bytes(), tag].concat() };
    let rand_key = |base: &str| -> Vec<u8> { [base.as_bytes(), tag, b":__rand_int__"].concat() };
    let element = b"element:__rand_int__".to_vec();
    let data = payload.to_vec();
    let mut tests = Vec::new();
    for def in SUITE.iter().filter(|d| params.selection.selects(d.id)) {
        let args: Vec<Vec<u8>> = match def.id {
            TestId::PingInline => {
                tests.push(Test {
                    title: def.title.to_string(),
                    command: RequestTemplate::inline(b"PING"),
                    payload_bytes: payload.len(),
                });
                continue;
            }
            TestId::PingMbulk => vec![b"PING".to_vec()],
            TestId::Set => vec![b"SET".to_vec(), rand_key("key"), data.clone()],
            TestId::Get => vec![b"GET".to_vec(), rand_key("key")],
            TestId::Incr => vec![b"INCR".to_vec(), rand_key("counter")],
            TestId::Lpush | TestId::LrangeFill => {
                vec![b"LPUSH".to_vec(), key("mylist"), data.clone()]
            }
            TestId::Rpush => vec![b"RPUSH".to_vec(), key("mylist"), data.clone()],
            TestId::Lpop => vec![b"LPOP".to_vec(), key("mylist")],
            TestId::Rpop => vec![b"RPOP".to_vec(), key("mylist")],
            TestId::Sadd => vec![b"SADD".to_vec(), key("myset"), element.clone()],
            TestId::Hset => vec![
                b"HSET".to_vec(),
                key("myhash"),
                element.clone(),
                data.clone(),
            ],
            TestId::Spop => vec![b"SPOP".to_vec(), key("myset")],
            TestId::Zadd => {
                // The score is random too, but only when -r asks for randomness.
                let score = if params.randomize {
                    RAND_PLACEHOLDER.to_vec()
                } else {
                    b"0".to_vec()
                };
                vec![b"ZADD".to_vec(), key("myzset"), score, element.clone()]
            }
            TestId::Zpopmin => vec![b"ZPOPMIN".to_vec(), key("myzset")],
            TestId::Lrange100 => lrange(key("mylist"), 99),
            TestId::Lrange300 => lrange(key("mylist"), 299),
            TestId::Lrange500 => lrange(key("mylist"), 499),
            TestId::Lrange600 => lrange(key("mylist"), 599),
            TestId::Mset => {
                let mut args = vec![b"MSET".to_vec()];
                for _ in 0..10 {
                    args.push(rand_key("key"));
                    args.push(data.clone());
                }
                args
            }
            TestId::Xadd => vec![
                b"XADD".to_vec(),
                key("mystream"),
                b"*".to_vec(),
                b"myfield".to_vec(),
                data.clone(),
            ],
        };
        tests.push(Test {
            title: def.title.to_string(),
            command: RequestTemplate::from_args(&args, params.randomize, params.cluster),
            payload_bytes: payload.len(),
        });
    }
    tests
}

fn lrange(key: Vec<u8>, last: u32) -> Vec<Vec<u8>> {
    vec![
        b"LRANGE".to_vec(),
        key,
        b"0".to_vec(),
        last.to_string().into_bytes(),
    ]
}

/// An arbitrary command (the words after the flags) as a test. `title_words` is how many
/// leading arguments the title shows: all of them, or all but the last when `-x` read the
/// last one from standard input (redis-benchmark leaves it out of the title).
pub fn arbitrary_test(
    args: &[Vec<u8>],
    title_words: usize,
    randomize: bool,
    cluster: bool,
) -> Test {
    let title = args[..title_words.min(args.len())]
        .iter()
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect::<Vec<_>>()
        .join(" ");
    let command = RequestTemplate::from_args(args, randomize, cluster);
    Test {
        title,
        payload_bytes: command.bytes().len(),
        command,
    }
}

/// redis-benchmark's value bytes: a linear congruential sequence of characters from '0'
/// to 'o' that carries on from one suite iteration (`-l`) to the next.
#[derive(Clone, Debug)]
pub struct PayloadGenerator {
    state: u32,
}

impl Default for PayloadGenerator {
    fn default() -> Self {
        PayloadGenerator { state: 1234 }
    }
}

impl PayloadGenerator {
    /// The next `size` bytes of the sequence.
    pub fn next_payload(&mut self, size: usize) -> Vec<u8> {
        (0..size)
            .map(|_| {
                self.state = self.state.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                b'0' + ((self.state >> 16) & 63) as u8
            })
            .collect()
    }
}

/// For every cluster slot, the 3 bytes that put a key holding `{` + them + `}` in that
/// slot: the shortest printable hash tag for the slot, padded with `}` (the hash tag ends
/// at the first `}`). redis-benchmark keeps a fixed table of alphanumeric tags of its
/// own instead: each key lands in the same slot, under another name.
#[derive(Clone, Debug)]
pub struct SlotTags {
    tags: Vec<[u8; 3]>,
}

impl Default for SlotTags {
    fn default() -> Self {
        Self::new()
    }
}

impl SlotTags {
    /// Compute the table (up to 92^3 CRC16 rounds, once per run).
    pub fn new() -> Self {
        let alphabet: Vec<u8> = (0x21u8..=0x7e)
            .filter(|&b| b != b'{' && b != b'}')
            .collect();
        let tags = shortest_slot_tags(&alphabet)
            .expect("three printable characters reach every one of the 16384 slots")
            .into_iter()
            .map(|(bytes, len)| {
                // '}'-padded: the hash tag ends at the first '}'.
                let mut tag = [b'}'; 3];
                tag[..usize::from(len)].copy_from_slice(&bytes[..usize::from(len)]);
                tag
            })
            .collect();
        SlotTags { tags }
    }

    /// The tag bytes for `slot` (below 16384).
    pub fn get(&self, slot: u16) -> &[u8; 3] {
        &self.tags[usize::from(slot)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::cluster::{SLOTS, key_slot};

    fn suite(selection: &TestSelection, randomize: bool, cluster: bool) -> Vec<Test> {
        let payload = PayloadGenerator::default().next_payload(3);
        default_suite(
            SuiteParams {
                randomize,
                cluster,
                selection,
            },
            &payload,
        )
    }

    fn titles(selection: &TestSelection) -> Vec<String> {
        suite(selection, false, false)
            .into_iter()
            .map(|t| t.title)
            .collect()
    }

    /// A request's arguments, decoded from its RESP bytes.
    fn words(bytes: &[u8]) -> Vec<String> {
        let text = String::from_utf8_lossy(bytes);
        let lines: Vec<&str> = text.split("\r\n").collect();
        lines
            .iter()
            .skip(2)
            .step_by(2)
            .map(|s| s.to_string())
            .filter(|s| !s.is_empty())
            .collect()
    }

    #[test]
    fn default_suite_in_redis_benchmark_order() {
        assert_eq!(
            titles(&TestSelection::All),
            [
                "PING_INLINE",
                "PING_MBULK",
                "SET",
                "GET",
                "INCR",
                "LPUSH",
                "RPUSH",
                "LPOP",
                "RPOP",
                "SADD",
                "HSET",
                "SPOP",
                "ZADD",
                "ZPOPMIN",
                "LPUSH (needed to benchmark LRANGE)",
                "LRANGE_100 (first 100 elements)",
                "LRANGE_300 (first 300 elements)",
                "LRANGE_500 (first 500 elements)",
                "LRANGE_600 (first 600 elements)",
                "MSET (10 keys)",
                "XADD",
            ]
        );
    }

    #[test]
    fn each_test_sends_what_redis_benchmark_sends() {
        let tests = suite(&TestSelection::All, false, false);
        let sent: Vec<String> = tests
            .iter()
            .skip(1)
            .map(|t| words(t.command.bytes()).join(" "))
            .collect();
        assert_eq!(tests[0].command.bytes(), b"PING\r\n");
        assert_eq!(
            sent,
            [
                "PING",
                "SET key:__rand_int__ VXK",
                "GET key:__rand_int__",
                "INCR counter:__rand_int__",
                "LPUSH mylist VXK",
                "RPUSH mylist VXK",
                "LPOP mylist",
                "RPOP mylist",
                "SADD myset element:__rand_int__",
                "HSET myhash element:__rand_int__ VXK",
                "SPOP myset",
                "ZADD myzset 0 element:__rand_int__",
                "ZPOPMIN myzset",
                "LPUSH mylist VXK",
                "LRANGE mylist 0 99",
                "LRANGE mylist 0 299",
                "LRANGE mylist 0 499",
                "LRANGE mylist 0 599",
                &["MSET"]
                    .into_iter()
                    .chain(std::iter::repeat_n("key:__rand_int__ VXK", 10))
                    .collect::<Vec<_>>()
                    .join(" "),
                "XADD mystream * myfield VXK",
            ]
        );
        assert_eq!(
            tests[2].command.bytes(),
            b"*3\r\n$3\r\nSET\r\n$16\r\nkey:__rand_int__\r\n$3\r\nVXK\r\n"
        );
        // Without -r nothing is filled in: every request uses the same key.
        assert!(tests.iter().all(|t| t.command.rand_positions().is_empty()));
        assert!(tests.iter().all(|t| t.payload_bytes == 3));
    }

    #[test]
    fn random_fields_with_r() {
        let tests = suite(&TestSelection::All, true, false);
        let zadd = tests.iter().find(|t| t.title == "ZADD").unwrap();
        assert_eq!(
            words(zadd.command.bytes()).join(" "),
            "ZADD myzset __rand_int__ element:__rand_int__"
        );
        assert_eq!(zadd.command.rand_positions().len(), 2);
        let mset = tests.iter().find(|t| t.title.starts_with("MSET")).unwrap();
        assert_eq!(mset.command.rand_positions().len(), 10);
        let ping = tests.iter().find(|t| t.title == "PING_MBULK").unwrap();
        assert!(ping.command.rand_positions().is_empty());

        // Each field gets its own number, 12 zero-padded digits.
        let mut out = Vec::new();
        let mut next = 0u64;
        zadd.command.write_request(
            &mut out,
            || {
                next += 7;
                next
            },
            None,
        );
        assert_eq!(
            words(&out).join(" "),
            "ZADD myzset 000000000007 element:000000000014"
        );
        assert_eq!(out.len(), zadd.command.bytes().len());
        // A second request appends, fields filled afresh.
        zadd.command
            .write_request(&mut out, || 999_999_999_999, None);
        assert!(out.ends_with(b"$12\r\n999999999999\r\n$20\r\nelement:999999999999\r\n"));
    }

    #[test]
    fn cluster_keys_carry_a_tag() {
        let tests = suite(&TestSelection::All, true, true);
        let get = tests.iter().find(|t| t.title == "GET").unwrap();
        assert_eq!(
            words(get.command.bytes()).join(" "),
            "GET key:{tag}:__rand_int__"
        );
        let lpush = tests.iter().find(|t| t.title == "LPUSH").unwrap();
        assert_eq!(
            words(lpush.command.bytes()).join(" "),
            "LPUSH mylist:{tag} VXK"
        );
        let sadd = tests.iter().find(|t| t.title == "SADD").unwrap();
        assert_eq!(
            words(sadd.command.bytes()).join(" "),
            "SADD myset:{tag} element:__rand_int__"
        );
        let mset = tests.iter().find(|t| t.title.starts_with("MSET")).unwrap();
        assert_eq!(mset.command.tag_positions().len(), 10);
        assert!(
            tests[0].command.tag_positions().is_empty()
                && tests[1].command.tag_positions().is_empty()
        );

        // Every key of a request gets the same tag, so MSET stays in one slot.
        let tags = SlotTags::new();
        let mut out = Vec::new();
        mset.command
            .write_request(&mut out, || 5, Some(tags.get(1234)));
        let keys: Vec<String> = words(&out).into_iter().skip(1).step_by(2).collect();
        assert_eq!(keys.len(), 10);
        assert!(
            keys.iter().all(|k| key_slot(k.as_bytes()) == 1234),
            "{keys:?}"
        );
    }

    #[test]
    fn slot_tags_reach_every_slot() {
        let tags = SlotTags::new();
        for slot in 0..SLOTS as u16 {
            let tag = tags.get(slot);
            let key = [b'k', b'{', tag[0], tag[1], tag[2], b'}', b'x'];
            assert_eq!(key_slot(&key), slot, "{:?}", String::from_utf8_lossy(tag));
            assert!(tag[0] != b'}');
        }
    }

    #[test]
    fn selection_rules() {
        let only = |raw: &str| TestSelection::parse(raw).unwrap().0;
        assert_eq!(titles(&only("ping")), ["PING_INLINE", "PING_MBULK"]);
        assert_eq!(titles(&only("PING_MBULK")), ["PING_MBULK"]);
        assert_eq!(titles(&only("ping_bulk")), ["PING_MBULK"]);
        assert_eq!(titles(&only("get,set")), ["SET", "GET"]);
        assert_eq!(titles(&only("Set, GET")), ["SET", "GET"]);
        assert_eq!(titles(&only("lpush")), ["LPUSH"]);
        assert_eq!(
            titles(&only("lrange")),
            [
                "LPUSH (needed to benchmark LRANGE)",
                "LRANGE_100 (first 100 elements)",
                "LRANGE_300 (first 300 elements)",
                "LRANGE_500 (first 500 elements)",
                "LRANGE_600 (first 600 elements)",
            ]
        );
        assert_eq!(
            titles(&only("lrange_300")),
            [
                "LPUSH (needed to benchmark LRANGE)",
                "LRANGE_300 (first 300 elements)"
            ]
        );
        assert_eq!(
            titles(&only("mset,xadd,zpopmin")),
            ["ZPOPMIN", "MSET (10 keys)", "XADD"]
        );
        assert!(
            TestSelection::parse("sett,GETT")
                .unwrap_err()
                .contains("unknown test 'sett', 'gett'")
        );
        // Unknown names beside known ones are left out, for the caller to warn about.
        let (mixed, unknown) = TestSelection::parse("set,hmset,Get").unwrap();
        assert_eq!(titles(&mixed), ["SET", "GET"]);
        assert_eq!(unknown, ["hmset"]);
        assert!(TestSelection::parse("").is_err());
    }

    #[test]
    fn arbitrary_commands() {
        let args: Vec<Vec<u8>> = ["set", "foo", "bar"]
            .iter()
            .map(|s| s.as_bytes().to_vec())
            .collect();
        let t = arbitrary_test(&args, 3, false, false);
        assert_eq!(t.title, "set foo bar");
        assert_eq!(
            t.payload_bytes, 31,
            "redis-benchmark prints the encoded length"
        );
        // -x: the argument read from standard input is sent but not shown.
        let t = arbitrary_test(&args, 2, true, false);
        assert_eq!(t.title, "set foo");
        let args: Vec<Vec<u8>> = ["lpush", "mylist", "__rand_int__"]
            .iter()
            .map(|s| s.as_bytes().to_vec())
            .collect();
        let t = arbitrary_test(&args, 3, true, false);
        assert_eq!(t.command.rand_positions().len(), 1);
        assert_eq!(
            arbitrary_test(&args, 3, false, false)
                .command
                .rand_positions()
                .len(),
            0
        );
        let args: Vec<Vec<u8>> = ["get", "k:{tag}:__rand_int____rand_int__"]
            .iter()
            .map(|s| s.as_bytes().to_vec())
            .collect();
        let t = arbitrary_test(&args, 2, true, true);
        assert_eq!(
            (
                t.command.rand_positions().len(),
                t.command.tag_positions().len()
            ),
            (2, 1)
        );
    }

    #[test]
    fn payload_is_redis_benchmarks_sequence() {
        let mut generator = PayloadGenerator::default();
        assert_eq!(generator.next_payload(3), b"VXK");
        let more = generator.next_payload(1000);
        assert!(more.iter().all(|b| (b'0'..=b'o').contains(b)));
        assert_ne!(&more[..3], b"VXK", "the sequence carries on");
    }
}
