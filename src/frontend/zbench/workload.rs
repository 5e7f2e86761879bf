//! What zbench sends: the ZADDs that load sorted sets and the queries that read them, as
//! argument lists the engine encodes. Pure and seeded: no I/O, no clock.
//!
//! # Keys
//! Key id `N` is named `zbench:{TAG}:N`, where `TAG` is the shortest alphanumeric string
//! that Redis Cluster hashes to slot `N mod 16384` (the first in the order `0-9`, `a-z`,
//! `A-Z`, shortest first: slot 0 is `06S`, slot 1 is `Qi`). That is redis-zbench-go's table
//! (the same as redis's `crc16_slottable.h`), computed here instead of stored, so the keys
//! are named exactly as redis-zbench-go names them and key `N` lives in slot `N mod 16384`.
//!
//! # Load
//! One `ZADD key score member [score member ...]` per key id in `-r-start .. -r-start + -r`,
//! each key exactly once: client `i` takes the `i`-th of `-c` contiguous, near-equal ranges.
//! The element count is drawn from `[min, max]` (both ends included) by Zipf (exponent 1,
//! the default) or uniformly; a score is `0.` and six random digits (as Go's `%f` of a
//! float in [0, 1)), a member is `-d` random lowercase letters (so the lexical queries
//! below select a share of each set).
//!
//! ```text
//! ZADD zbench:{5kK}:42 0.318092 qzmfwkdlea 0.902114 bchwpoaxnr
//! ```
//!
//! # Query
//! `-n` queries split among the clients (client `i` gets `n / c`, plus one for the first
//! `n mod c`), in batches of `-pipeline`. A batch picks one random key id offset in the
//! keyspace; each next command of the batch steps the offset by 16384 (wrapping back below
//! 16384 past the end), so a whole batch stays in one hash slot and a MULTI/EXEC around it
//! is legal in a cluster. `c` is a random lowercase letter per command:
//!
//! ```text
//! zrangebylex         ZRANGEBYLEX key - [c
//! zrevrangebylex      ZREVRANGEBYLEX key [c -
//! zrange-byscore      ZRANGE key 0 1 BYSCORE        (Redis 6.2+; every element)
//! zrange-byscore-rev  ZREVRANGEBYSCORE key 1 0      (every element)
//! ```
//!
//! With `-multi` a batch is sent as `MULTI`, its commands, `EXEC` ([`Batch::multi`]).

use std::ops::Range;
use std::sync::OnceLock;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, Zipf};

use super::flags::{ElementRange, Keyspace, Mode, QueryKind, SizeDist, ZbenchSpec};
use crate::engine::cluster::{SLOTS, SlotTag, shortest_slot_tags};

/// Every key starts with this.
pub const KEY_PREFIX: &[u8] = b"zbench:";

/// Members (and the lexical bound of a query) are drawn from these letters.
pub const MEMBER_LETTERS: &[u8; 26] = b"abcdefghijklmnopqrstuvwxyz";

/// Tags are searched in this order (shortest first): it reproduces redis-zbench-go's table.
const TAG_ALPHABET: &[u8; 62] = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

/// Zipf exponent of `-key-elements-dist=zipf`: count `min + k - 1` has weight `1 / k`.
pub const ZIPF_EXPONENT: f64 = 1.0;

/// Scores are `0.` and this many random digits.
const SCORE_DIGITS: usize = 6;

// ---------------------------------------------------------------------------------------
// Keys
// ---------------------------------------------------------------------------------------

/// For every hash slot, the shortest alphanumeric tag that hashes to it.
#[derive(Debug)]
pub struct SlotTags {
    /// Tag bytes, at most 3 (62^3 strings of 3 letters cover all 16384 slots).
    tags: Vec<SlotTag>,
}

impl SlotTags {
    /// Searches all tags of 1, 2 and 3 characters (about 242,000 CRC16s, once).
    fn compute() -> SlotTags {
        SlotTags {
            tags: shortest_slot_tags(TAG_ALPHABET)
                .expect("62^3 alphanumeric tags reach every one of the 16384 slots"),
        }
    }

    /// The tag of `slot` (taken modulo 16384).
    pub fn tag(&self, slot: usize) -> &[u8] {
        let (bytes, len) = &self.tags[slot % SLOTS];
        &bytes[..usize::from(*len)]
    }
}

/// The process-wide slot tag table, computed on first use.
pub fn slot_tags() -> &'static SlotTags {
    static TAGS: OnceLock<SlotTags> = OnceLock::new();
    TAGS.get_or_init(SlotTags::compute)
}

/// Appends the name of key `id`, `zbench:{TAG}:id`, to `out`.
pub fn write_key(out: &mut Vec<u8>, id: u64) {
    out.extend_from_slice(KEY_PREFIX);
    out.push(b'{');
    out.extend_from_slice(slot_tags().tag((id % SLOTS as u64) as usize));
    out.extend_from_slice(b"}:");
    out.extend_from_slice(itoa::Buffer::new().format(id).as_bytes());
}

// ---------------------------------------------------------------------------------------
// Commands and batches
// ---------------------------------------------------------------------------------------

/// One command's arguments (the engine's reusable argument buffer).
pub use crate::workload::args::Args as Command;

/// One pipeline batch: up to `-pipeline` commands sent together, wrapped in MULTI/EXEC
/// when [`Batch::multi`] is set. Reused from batch to batch.
#[derive(Clone, Debug, Default)]
pub struct Batch {
    commands: Vec<Command>,
    len: usize,
    /// Send `MULTI` before the commands and `EXEC` after them.
    pub multi: bool,
    /// Elements the batch's ZADDs add (0 for queries), for "Average zcard".
    pub elements: u64,
}

impl Batch {
    /// An empty batch.
    pub fn new() -> Self {
        Batch::default()
    }

    /// The batch's commands, in sending order.
    pub fn commands(&self) -> &[Command] {
        &self.commands[..self.len]
    }

    /// Swaps command `n` of the batch with `cmd` (hands it over without copying; the
    /// batch's slot is cleared before it is used again).
    pub fn swap_command(&mut self, n: usize, cmd: &mut Command) {
        if n < self.len {
            std::mem::swap(&mut self.commands[n], cmd);
        }
    }

    /// Number of commands (MULTI and EXEC not counted).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the batch holds no command.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn reset(&mut self, multi: bool) {
        self.len = 0;
        self.multi = multi;
        self.elements = 0;
    }

    /// The next command slot, cleared.
    fn next_slot(&mut self) -> &mut Command {
        if self.len == self.commands.len() {
            self.commands.push(Command::new());
        }
        let cmd = &mut self.commands[self.len];
        self.len += 1;
        cmd.clear();
        cmd
    }
}

// ---------------------------------------------------------------------------------------
// Sizes and shares
// ---------------------------------------------------------------------------------------

/// Draws the element count of each ZADD.
#[derive(Clone, Debug)]
pub struct ElementCounts {
    min: u64,
    max: u64,
    zipf: Option<Zipf<f64>>,
}

impl ElementCounts {
    /// The sampler for a validated range (`1 <= min <= max`).
    pub fn new(range: &ElementRange) -> Self {
        let zipf = match range.dist {
            // Zipf::new refuses only n < 1 and s < 0, which a validated range cannot give.
            SizeDist::Zipf => Zipf::new((range.max - range.min + 1) as f64, ZIPF_EXPONENT).ok(),
            SizeDist::Uniform => None,
        };
        ElementCounts {
            min: range.min,
            max: range.max,
            zipf,
        }
    }

    /// One count in `min..=max`.
    pub fn sample<R: Rng + ?Sized>(&self, rng: &mut R) -> u64 {
        match &self.zipf {
            // Rank k (from 1) is count min + k - 1.
            Some(zipf) => (self.min + zipf.sample(rng) as u64 - 1).min(self.max),
            None => rng.random_range(self.min..=self.max),
        }
    }
}

/// Client `client`'s (from 0) share of `total` split among `clients`: the first
/// `total mod clients` clients take one more.
pub fn share(total: u64, clients: u32, client: u32) -> u64 {
    let clients = u64::from(clients.max(1));
    let client = u64::from(client);
    total / clients + u64::from(client < total % clients)
}

/// The key ids client `client` (from 0) loads: contiguous, sized by [`share`], so the
/// clients together cover the keyspace exactly once.
pub fn load_range(keyspace: &Keyspace, clients: u32, client: u32) -> Range<u64> {
    let clients = clients.max(1);
    let client = client.min(clients);
    // Clients before this one took `len / clients` each, and one more for the first
    // `len mod clients` of them.
    let per_client = keyspace.len / u64::from(clients);
    let extra = keyspace.len % u64::from(clients);
    let before = u64::from(client) * per_client + u64::from(client).min(extra);
    let start = keyspace.start + before;
    start..start + share(keyspace.len, clients, client)
}

/// Client `client`'s (from 0) random seed: the run's seed plus the client's number from 1,
/// as redis-zbench-go seeds its clients.
pub fn client_seed(seed: i64, client: u32) -> u64 {
    (seed as u64).wrapping_add(u64::from(client) + 1)
}

// ---------------------------------------------------------------------------------------
// Per-client generators
// ---------------------------------------------------------------------------------------

/// One client's commands, for either mode.
#[derive(Clone, Debug)]
pub enum ClientWorkload {
    /// ZADDs over the client's key range.
    Load(LoadClient),
    /// Queries over the whole keyspace.
    Query(QueryClient),
}

impl ClientWorkload {
    /// Client `client`'s (from 0) workload for `spec`.
    pub fn new(spec: &ZbenchSpec, client: u32) -> Self {
        match spec.mode {
            Mode::Load => ClientWorkload::Load(LoadClient::new(spec, client)),
            Mode::Query(kind) => ClientWorkload::Query(QueryClient::new(spec, kind, client)),
        }
    }

    /// Fills `batch` with the next batch; false (and an empty batch) when the client is done.
    pub fn next_batch(&mut self, batch: &mut Batch) -> bool {
        match self {
            ClientWorkload::Load(load) => load.next_batch(batch),
            ClientWorkload::Query(query) => query.next_batch(batch),
        }
    }

    /// Commands this client has still to produce.
    pub fn remaining(&self) -> u64 {
        match self {
            ClientWorkload::Load(load) => load.keys.end - load.keys.start,
            ClientWorkload::Query(query) => query.remaining,
        }
    }
}

/// One client's ZADDs: one per key of its range, in order.
#[derive(Clone, Debug)]
pub struct LoadClient {
    keys: Range<u64>,
    pipeline: u32,
    member_size: u32,
    counts: ElementCounts,
    rng: SmallRng,
}

impl LoadClient {
    /// Client `client`'s (from 0) loader.
    pub fn new(spec: &ZbenchSpec, client: u32) -> Self {
        // Build the tag table now, at set-up, not on the first request.
        slot_tags();
        LoadClient {
            keys: load_range(&spec.keyspace, spec.clients, client),
            pipeline: spec.pipeline.max(1),
            member_size: spec.member_size,
            counts: ElementCounts::new(&spec.elements),
            rng: SmallRng::seed_from_u64(client_seed(spec.seed, client)),
        }
    }

    /// Writes the next key's ZADD into `cmd` and returns its element count, or `None`
    /// when every key of the range is done.
    pub fn next_zadd(&mut self, cmd: &mut Command) -> Option<u64> {
        let id = self.keys.next()?;
        let elements = self.counts.sample(&mut self.rng);
        cmd.clear();
        cmd.push(b"ZADD");
        cmd.push_with(|out| write_key(out, id));
        for _ in 0..elements {
            let score: u32 = self.rng.random_range(0..1_000_000);
            cmd.push_with(|out| write_score(out, score));
            let rng = &mut self.rng;
            let size = self.member_size as usize;
            cmd.push_with(|out| {
                out.extend((0..size).map(|_| MEMBER_LETTERS[rng.random_range(0..26)]));
            });
        }
        Some(elements)
    }

    /// Fills `batch` with up to `-pipeline` ZADDs (never MULTI: redis-zbench-go loads
    /// without transactions, and consecutive keys lie in different slots).
    pub fn next_batch(&mut self, batch: &mut Batch) -> bool {
        batch.reset(false);
        while batch.len() < self.pipeline as usize && !self.keys.is_empty() {
            let mut elements = 0;
            let cmd = batch.next_slot();
            if let Some(n) = self.next_zadd(cmd) {
                elements = n;
            }
            batch.elements += elements;
        }
        !batch.is_empty()
    }
}

/// Writes `micros / 1e6` as `0.dddddd` (`micros` below 1,000,000).
fn write_score(out: &mut Vec<u8>, micros: u32) {
    out.extend_from_slice(b"0.");
    let mut digits = [b'0'; SCORE_DIGITS];
    let mut rest = micros;
    for d in digits.iter_mut().rev() {
        *d = b'0' + (rest % 10) as u8;
        rest /= 10;
    }
    out.extend_from_slice(&digits);
}

/// One client's queries: its share of `-n`, in batches that each stay in one hash slot.
#[derive(Clone, Debug)]
pub struct QueryClient {
    kind: QueryKind,
    keyspace: Keyspace,
    pipeline: u32,
    multi: bool,
    remaining: u64,
    rng: SmallRng,
}

impl QueryClient {
    /// Client `client`'s (from 0) querier.
    pub fn new(spec: &ZbenchSpec, kind: QueryKind, client: u32) -> Self {
        // Build the tag table now, at set-up, not on the first request.
        slot_tags();
        QueryClient {
            kind,
            keyspace: spec.keyspace,
            pipeline: spec.pipeline.max(1),
            multi: spec.multi,
            remaining: share(spec.requests, spec.clients, client),
            rng: SmallRng::seed_from_u64(client_seed(spec.seed, client)),
        }
    }

    /// Fills `batch` with up to `-pipeline` queries; false when the client's share is done.
    pub fn next_batch(&mut self, batch: &mut Batch) -> bool {
        batch.reset(self.multi);
        let count = self.remaining.min(u64::from(self.pipeline));
        if count == 0 {
            return false;
        }
        self.remaining -= count;
        let len = self.keyspace.len.max(1);
        let step = SLOTS as u64;
        let mut offset = self.rng.random_range(0..len);
        for _ in 0..count {
            let letter = MEMBER_LETTERS[self.rng.random_range(0..26)];
            let id = self.keyspace.start + offset;
            write_query(batch.next_slot(), self.kind, id, letter);
            // Same residue mod 16384, so the same slot; redis-zbench-go wraps only past
            // `len` (not at it) and so may query one key outside the keyspace.
            if len - offset > step {
                offset += step;
            } else {
                offset %= step;
            }
        }
        true
    }
}

/// Writes one query of `kind` on key `id` into `cmd`; `letter` bounds the lexical kinds.
pub fn write_query(cmd: &mut Command, kind: QueryKind, id: u64, letter: u8) {
    let bound = [b'[', letter];
    let name: &[u8] = match kind {
        QueryKind::RangeByLex => b"ZRANGEBYLEX",
        QueryKind::RevRangeByLex => b"ZREVRANGEBYLEX",
        QueryKind::RangeByScore => b"ZRANGE",
        QueryKind::RevRangeByScore => b"ZREVRANGEBYSCORE",
    };
    cmd.clear();
    cmd.push(name);
    cmd.push_with(|out| write_key(out, id));
    match kind {
        QueryKind::RangeByLex => {
            cmd.push(b"-");
            cmd.push(&bound);
        }
        QueryKind::RevRangeByLex => {
            cmd.push(&bound);
            cmd.push(b"-");
        }
        QueryKind::RangeByScore => {
            cmd.push(b"0");
            cmd.push(b"1");
            cmd.push(b"BYSCORE");
        }
        QueryKind::RevRangeByScore => {
            cmd.push(b"1");
            cmd.push(b"0");
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;
    use crate::engine::cluster::key_slot;
    use crate::frontend::zbench::flags::{ZbenchCommand, parse};

    fn spec(args: &[&str]) -> ZbenchSpec {
        match parse(args.iter().map(|s| s.to_string())) {
            Ok(ZbenchCommand::Run(spec)) => *spec,
            other => panic!("{args:?}: {other:?}"),
        }
    }

    fn text(arg: &[u8]) -> &str {
        std::str::from_utf8(arg).expect("ascii")
    }

    fn key(id: u64) -> String {
        let mut out = Vec::new();
        write_key(&mut out, id);
        String::from_utf8(out).expect("ascii")
    }

    #[test]
    fn slot_tags_are_redis_zbench_go_s_table() {
        let tags = slot_tags();
        // Entries of redis-zbench-go's crc16_slottable.go (and redis's crc16_slottable.h).
        for (slot, tag) in [
            (0, "06S"),
            (1, "Qi"),
            (2, "5L5"),
            (42, "5kK"),
            (80, "avs"),
            (88, "aUo"),
            (1584, "3"),
            (1716, "7"),
            (16378, "L8"),
            (16380, "wu"),
            (16383, "6ZJ"),
        ] {
            assert_eq!(text(tags.tag(slot)), tag, "slot {slot}");
        }
        for slot in 0..SLOTS {
            let tag = tags.tag(slot);
            assert!((1..=3).contains(&tag.len()), "slot {slot}");
            assert_eq!(usize::from(key_slot(tag)), slot, "slot {slot}");
        }
    }

    #[test]
    fn keys_are_named_and_slotted_as_redis_zbench_go_s() {
        assert_eq!(key(0), "zbench:{06S}:0");
        assert_eq!(key(42), "zbench:{5kK}:42");
        assert_eq!(key(16384), "zbench:{06S}:16384");
        assert_eq!(key(16385 + 1583), "zbench:{3}:17968");
        for id in [0, 1, 999, 16383, 16384, 1_000_000, u64::MAX] {
            assert_eq!(
                u64::from(key_slot(key(id).as_bytes())),
                id % SLOTS as u64,
                "{id}"
            );
        }
    }

    #[test]
    fn zipf_sizes_favour_the_small_and_stay_in_range() {
        let counts = ElementCounts::new(&ElementRange {
            min: 1,
            max: 10,
            dist: SizeDist::Zipf,
        });
        let mut rng = SmallRng::seed_from_u64(12345);
        let mut seen = [0u64; 11];
        for _ in 0..20_000 {
            let n = counts.sample(&mut rng);
            assert!((1..=10).contains(&n), "{n}");
            seen[n as usize] += 1;
        }
        assert!(seen[1] >= 2 * seen[10], "{seen:?}");
        // Weights 1/k: the mass falls with the count all the way.
        assert!(
            seen[1] > seen[2] && seen[2] > seen[4] && seen[4] > seen[10],
            "{seen:?}"
        );
        assert!(seen[10] > 0, "the top of the range is reachable: {seen:?}");
    }

    #[test]
    fn uniform_sizes_cover_both_ends() {
        let counts = ElementCounts::new(&ElementRange {
            min: 5,
            max: 8,
            dist: SizeDist::Uniform,
        });
        let mut rng = SmallRng::seed_from_u64(1);
        let mut seen = [0u64; 9];
        for _ in 0..4000 {
            seen[counts.sample(&mut rng) as usize] += 1;
        }
        assert_eq!(seen[..5].iter().sum::<u64>(), 0);
        for n in 5..=8 {
            assert!((800..1200).contains(&seen[n]), "{seen:?}");
        }
    }

    #[test]
    fn a_single_size_range_always_gives_it() {
        for dist in [SizeDist::Zipf, SizeDist::Uniform] {
            let counts = ElementCounts::new(&ElementRange {
                min: 3,
                max: 3,
                dist,
            });
            let mut rng = SmallRng::seed_from_u64(9);
            assert!((0..100).all(|_| counts.sample(&mut rng) == 3));
        }
    }

    #[test]
    fn load_ranges_cover_the_keyspace_once() {
        for (start, len, clients) in [(0, 2000, 50), (7, 1000, 3), (100, 5, 8), (0, 1, 1)] {
            let keyspace = Keyspace { start, len };
            let mut next = start;
            for client in 0..clients {
                let range = load_range(&keyspace, clients, client);
                assert_eq!(range.start, next, "{start} {len} {clients} {client}");
                let size = range.end - range.start;
                assert!(size == len / u64::from(clients) || size == len / u64::from(clients) + 1);
                next = range.end;
            }
            assert_eq!(next, start + len);
        }
        let total: u64 = (0..7).map(|c| share(100, 7, c)).sum();
        assert_eq!(total, 100);
    }

    #[test]
    fn load_sends_one_zadd_per_key_with_scored_members() {
        let s = spec(&[
            "-mode",
            "load",
            "-r",
            "1000",
            "-r-start",
            "10",
            "-c",
            "3",
            "-pipeline",
            "7",
            "-d",
            "6",
            "-key-elements-min",
            "2",
            "-key-elements-max",
            "9",
        ]);
        let mut keys = HashSet::new();
        let mut batch = Batch::new();
        let mut elements = 0;
        for client in 0..s.clients {
            let mut load = ClientWorkload::new(&s, client);
            let mut expected = load.remaining();
            while load.next_batch(&mut batch) {
                assert!(!batch.multi);
                assert!((1..=7).contains(&batch.len()));
                let mut in_batch = 0;
                for cmd in batch.commands() {
                    assert_eq!(cmd.arg(0), Some(&b"ZADD"[..]));
                    assert!(keys.insert(text(cmd.key()).to_string()));
                    let pairs = (cmd.len() - 2) / 2;
                    assert_eq!(cmd.len(), 2 + 2 * pairs);
                    assert!((2..=9).contains(&pairs), "{pairs}");
                    in_batch += pairs as u64;
                    for pair in cmd.args().skip(2).collect::<Vec<_>>().chunks(2) {
                        let score = text(pair[0]);
                        assert_eq!(score.len(), 8, "{score}");
                        assert!(
                            score.starts_with("0.")
                                && score[2..].bytes().all(|b| b.is_ascii_digit())
                        );
                        assert_eq!(pair[1].len(), 6);
                        assert!(pair[1].iter().all(u8::is_ascii_lowercase));
                    }
                }
                assert_eq!(batch.elements, in_batch);
                elements += in_batch;
                expected -= batch.len() as u64;
            }
            assert_eq!(expected, 0);
            assert!(batch.is_empty());
        }
        let wanted: HashSet<String> = (10..1010).map(key).collect();
        assert_eq!(keys, wanted);
        assert!((2000..=9000).contains(&elements));
    }

    #[test]
    fn load_is_seeded_per_client() {
        let s = spec(&["-mode", "load", "-r", "100", "-c", "2"]);
        let run = |s: &ZbenchSpec, client| {
            let mut load = LoadClient::new(s, client);
            let mut cmd = Command::new();
            let mut out = Vec::new();
            while load.next_zadd(&mut cmd).is_some() {
                out.extend(cmd.args().skip(2).map(<[u8]>::to_vec));
            }
            out
        };
        assert_eq!(run(&s, 0), run(&s, 0));
        assert_ne!(run(&s, 0), run(&s, 1));
        let other = spec(&["-mode", "load", "-r", "100", "-c", "2", "-random-seed", "1"]);
        assert_ne!(run(&s, 0), run(&other, 0));
    }

    #[test]
    fn query_batches_split_n_and_stay_in_one_slot() {
        let s = spec(&[
            "-mode",
            "query",
            "-n",
            "2000",
            "-c",
            "50",
            "-pipeline",
            "10",
            "-multi",
            "-r",
            "100000",
            "-r-start",
            "5",
        ]);
        let mut batch = Batch::new();
        let (mut batches, mut commands) = (0, 0);
        for client in 0..s.clients {
            let mut query = ClientWorkload::new(&s, client);
            while query.next_batch(&mut batch) {
                batches += 1;
                assert!(batch.multi);
                assert_eq!(batch.elements, 0);
                let slots: HashSet<u16> =
                    batch.commands().iter().map(|c| key_slot(c.key())).collect();
                assert_eq!(slots.len(), 1, "one slot per batch");
                for cmd in batch.commands() {
                    commands += 1;
                    let key = text(cmd.key());
                    let id: u64 = key
                        .rsplit(':')
                        .next()
                        .and_then(|n| n.parse().ok())
                        .expect("id");
                    assert!((5..100_005).contains(&id), "{key}");
                    assert_eq!(key, self::key(id));
                }
            }
        }
        assert_eq!((batches, commands), (200, 2000));
    }

    #[test]
    fn query_shares_end_with_a_short_batch() {
        let s = spec(&[
            "-mode",
            "query",
            "-n",
            "23",
            "-c",
            "2",
            "-pipeline",
            "5",
            "-r",
            "10",
        ]);
        let mut batch = Batch::new();
        let mut query = ClientWorkload::new(&s, 0);
        assert_eq!(query.remaining(), 12);
        let mut sizes = Vec::new();
        while query.next_batch(&mut batch) {
            assert!(!batch.multi);
            sizes.push(batch.len());
        }
        assert_eq!(sizes, [5, 5, 2]);
        assert_eq!(query.remaining(), 0);
        // A keyspace smaller than a slot table: every command of a batch reads one key.
        let mut query = ClientWorkload::new(&s, 1);
        assert!(query.next_batch(&mut batch));
        let keys: HashSet<&[u8]> = batch.commands().iter().map(Command::key).collect();
        assert_eq!(keys.len(), 1);
    }

    #[test]
    fn the_largest_keyspace_steps_without_overflow() {
        let s = spec(&[
            "-mode",
            "query",
            "-n",
            "1000",
            "-c",
            "1",
            "-pipeline",
            "50",
            "-r",
            "18446744073709551615",
        ]);
        let mut query = ClientWorkload::new(&s, 0);
        let mut batch = Batch::new();
        while query.next_batch(&mut batch) {
            let slots: HashSet<u16> = batch.commands().iter().map(|c| key_slot(c.key())).collect();
            assert_eq!(slots.len(), 1);
        }
    }

    #[test]
    fn query_kinds_send_their_exact_arguments() {
        let mut cmd = Command::new();
        let cases: [(QueryKind, &[&str]); 4] = [
            (
                QueryKind::RangeByLex,
                &["ZRANGEBYLEX", "zbench:{5kK}:42", "-", "[q"],
            ),
            (
                QueryKind::RevRangeByLex,
                &["ZREVRANGEBYLEX", "zbench:{5kK}:42", "[q", "-"],
            ),
            (
                QueryKind::RangeByScore,
                &["ZRANGE", "zbench:{5kK}:42", "0", "1", "BYSCORE"],
            ),
            (
                QueryKind::RevRangeByScore,
                &["ZREVRANGEBYSCORE", "zbench:{5kK}:42", "1", "0"],
            ),
        ];
        for (kind, expected) in cases {
            write_query(&mut cmd, kind, 42, b'q');
            let args: Vec<&str> = cmd.args().map(text).collect();
            assert_eq!(args, expected, "{kind:?}");
        }
    }

    #[test]
    fn query_letters_and_keys_vary() {
        let s = spec(&[
            "-mode",
            "query",
            "-n",
            "500",
            "-c",
            "1",
            "-query",
            "zrevrangebylex",
        ]);
        let mut query = ClientWorkload::new(&s, 0);
        let mut batch = Batch::new();
        let (mut letters, mut keys) = (HashSet::new(), HashSet::new());
        while query.next_batch(&mut batch) {
            let cmd = &batch.commands()[0];
            letters.insert(cmd.arg(2).map(<[u8]>::to_vec));
            keys.insert(cmd.key().to_vec());
        }
        assert_eq!(letters.len(), 26);
        assert!(keys.len() > 450, "{}", keys.len());
    }

    #[test]
    fn scores_have_six_digits() {
        let mut out = Vec::new();
        write_score(&mut out, 0);
        write_score(&mut out, 42);
        write_score(&mut out, 999_999);
        assert_eq!(out, b"0.0000000.0000420.999999");
    }

    #[test]
    fn commands_reuse_their_buffers() {
        let mut cmd = Command::new();
        cmd.push(b"ZADD");
        cmd.push(b"k");
        assert_eq!((cmd.len(), cmd.payload_len()), (2, 5));
        cmd.clear();
        assert!(cmd.is_empty());
        assert_eq!(cmd.key(), b"");
        assert_eq!(cmd.arg(0), None);
    }
}
