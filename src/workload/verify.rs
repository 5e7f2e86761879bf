//! Data verification (`--data-verify`), free of I/O: which value a GET of each key must
//! return, the outcome of each check, and the report memtier prints and writes.
//!
//! # What a key must hold
//!
//! memtier verifies only imported data (`use data-verify only with data-import`) by
//! replaying the SET sequence of one connection against a fresh copy of its generator,
//! which matches what the benchmark wrote only for a single connection writing in order.
//! kvbench checks by key instead, so it does not matter which connection wrote a key or
//! when: a [`Verifier`] knows, for any key the run could have written, what the value
//! must be.
//!
//! - **Imported data** ([`Verifier::imported`]): the item's value. A key the file holds
//!   more than once may hold any of its values (which SET landed last is a race).
//!   With `--generate-keys` the keys are `prefix + (key-minimum + item index)`, checked
//!   the same way.
//! - **Generated data** ([`Verifier::generated`]): values are `x` repeated (see
//!   [`crate::workload::values::ValuePool`]), so a value is known from its length. With a
//!   fixed size (`-d`) or sizes spread over the keys (`--data-size-pattern=S`) the length
//!   follows from the key, and the check is exact. With a random size
//!   (`--data-size-range` with pattern R) the size was drawn at SET time, and with
//!   `--data-size-list` it was the writing client's turn in the list's cycle, so the check
//!   is of the value's shape: only `x` bytes, and a length the run could have sent.
//! - **Random data** (`-R`): each SET sends a slice of random bytes at a random offset,
//!   so no value is expected of a key, and recording every value written (and which
//!   connection's write won) would cost more than the benchmark. The front end refuses
//!   `--data-verify` with random data.
//!
//! Which keys to check: every key the run wrote. [`WrittenKeys`] is a shared bitset the
//! clients mark as they SET; without it (`--verify-only`) the verification pass can walk
//! all of [`Verifier::indices`], and keys the run never wrote then count as missing.
//!
//! # Output
//!
//! memtier prints, to the text report, first [`VERIFY_BANNER`] and then (spelling as is):
//!
//! ```text
//! Data verification completed:
//! 998        keys verified successfuly.
//! 2          keys failed.
//! ```
//!
//! and adds to the JSON document, after the results, the object
//! [`JSON_OBJECT`]: `"client verifications results":{"keys verified successfuly": 998 ,
//! "keys failed": 2 }`, each number left-aligned in 10 columns (`%-10llu`, trailing
//! spaces and all). A key fails when its value differs, when it is missing, or when the
//! server answered its GET with an error.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::workload::import::ImportedData;
use crate::workload::keys::KeyConfig;
use crate::workload::keys::write_key;
use crate::workload::values::{DataSize, ValueSizer};

/// Printed to the text report before the verification pass (memtier's own line).
pub const VERIFY_BANNER: &str = "\n\nPerforming data verification...\n";

/// Name of the JSON object holding the results.
pub const JSON_OBJECT: &str = "client verifications results";

/// How many failed keys a [`VerifyReport`] keeps for the error message.
pub const MAX_FIRST_FAILURES: usize = 10;

/// The most keys [`WrittenKeys`] tracks: one bit each, 128 MiB at this bound.
pub const MAX_TRACKED_KEYS: u64 = 1 << 30;

/// Longest key, in bytes, quoted in full in a failure line.
const MAX_SHOWN_KEY: usize = 100;

/// What a GET of one key found, against what it should have.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VerifyOutcome {
    /// The value is what the benchmark wrote.
    Match,
    /// A value, but not what was written (or a key the verifier knows nothing of).
    Mismatch,
    /// No value at all (nil / `END` / key not found).
    Missing,
}

/// Knows what every key the benchmark could have written must hold. Cheap to share
/// (`Send + Sync`): the verification pass may run on several threads.
#[derive(Clone, Debug)]
pub struct Verifier {
    source: Source,
}

#[derive(Clone, Debug)]
enum Source {
    Imported {
        data: Arc<ImportedData>,
        /// Item indices sorted by key (stable, so duplicates stay in file order); a key is
        /// found by binary search without a hash map of millions of small keys.
        by_key: Vec<u32>,
    },
    Generated(Generated),
}

#[derive(Clone, Debug)]
struct Generated {
    prefix: String,
    key_min: u64,
    key_max: u64,
    /// The sizer the run's SETs used: it knows which lengths a key's value can have.
    sizer: ValueSizer,
    /// `x` repeated up to the largest size: every expected value is a prefix of it.
    filler: Vec<u8>,
}

impl Verifier {
    /// A verifier for imported data: each key must hold its item's value.
    pub fn imported(data: Arc<ImportedData>) -> Verifier {
        // `ImportedData` holds at most u32::MAX items, so every index fits.
        let mut by_key: Vec<u32> = (0..data.len())
            .filter_map(|i| u32::try_from(i).ok())
            .collect();
        by_key.sort_by(|&a, &b| data.item(a as usize).key.cmp(data.item(b as usize).key));
        Verifier {
            source: Source::Imported { data, by_key },
        }
    }

    /// A verifier for generated data: keys `prefix + id` over the key range, values `x`
    /// repeated, sized by `size` as [`crate::workload::values::ValueSizer`] sizes them.
    ///
    /// Not for random data: no value is expected of a key then (see the module docs).
    pub fn generated(size: &DataSize, keys: &KeyConfig) -> Verifier {
        let (key_min, key_max) = (keys.min.min(keys.max), keys.max.max(keys.min));
        let sizer = ValueSizer::new(size, keys);
        Verifier {
            source: Source::Generated(Generated {
                prefix: keys.prefix.clone(),
                key_min,
                key_max,
                filler: vec![b'x'; sizer.max_size()],
                sizer,
            }),
        }
    }

    /// The indices [`expected`](Self::expected), [`write_key`](Self::write_key) and
    /// [`WrittenKeys`] take: item indices `0..=len-1` for imported data, key ids
    /// `key_min..=key_max` for generated data (what the client has at hand in each case).
    pub fn indices(&self) -> std::ops::RangeInclusive<u64> {
        match &self.source {
            // Imported data holds at least one item.
            Source::Imported { data, .. } => 0..=(data.len() as u64).saturating_sub(1),
            Source::Generated(g) => g.key_min..=g.key_max,
        }
    }

    /// How many [`indices`](Self::indices) there are (saturating at `u64::MAX`).
    pub fn index_count(&self) -> u64 {
        let range = self.indices();
        (range.end() - range.start()).saturating_add(1)
    }

    /// A tracker for the keys a run writes, sized for [`indices`](Self::indices); `None`
    /// when there are more than [`MAX_TRACKED_KEYS`].
    pub fn new_written_keys(&self) -> Option<WrittenKeys> {
        WrittenKeys::new(*self.indices().start(), self.index_count())
    }

    /// The key at `index` (see [`indices`](Self::indices)), written into `out` (cleared
    /// first). False, with `out` empty, for an index outside them.
    pub fn write_key(&self, index: u64, out: &mut Vec<u8>) -> bool {
        out.clear();
        if !self.indices().contains(&index) {
            return false;
        }
        match &self.source {
            Source::Imported { data, .. } => {
                out.extend_from_slice(data.item(index as usize).key);
            }
            Source::Generated(g) => write_key(out, &g.prefix, index),
        }
        true
    }

    /// The exact value the key at `index` must hold, when there is one: `None` outside
    /// [`indices`](Self::indices), and for generated data of random size (where only the
    /// shape is known; [`check`](Self::check) still checks it).
    pub fn expected(&self, index: u64) -> Option<&[u8]> {
        if !self.indices().contains(&index) {
            return None;
        }
        match &self.source {
            Source::Imported { data, .. } => Some(data.item(index as usize).value),
            Source::Generated(g) => g.sizer.exact_size(index).map(|n| &g.filler[..n]),
        }
    }

    /// Judges what a GET of `key` returned (`None`: no value). A key this verifier
    /// knows nothing of is a [`VerifyOutcome::Mismatch`]: nothing was expected of it,
    /// so nothing can match.
    pub fn check(&self, key: &[u8], got: Option<&[u8]>) -> VerifyOutcome {
        match &self.source {
            Source::Imported { data, by_key } => {
                let first = by_key.partition_point(|&i| data.item(i as usize).key < key);
                let same = by_key[first..].partition_point(|&i| data.item(i as usize).key == key);
                if same == 0 {
                    return VerifyOutcome::Mismatch;
                }
                let Some(got) = got else {
                    return VerifyOutcome::Missing;
                };
                let candidates = &by_key[first..first + same];
                if candidates
                    .iter()
                    .any(|&i| data.item(i as usize).value == got)
                {
                    VerifyOutcome::Match
                } else {
                    VerifyOutcome::Mismatch
                }
            }
            Source::Generated(g) => {
                let Some(id) = g.key_id(key) else {
                    return VerifyOutcome::Mismatch;
                };
                let Some(got) = got else {
                    return VerifyOutcome::Missing;
                };
                if g.sizer.allows(id, got.len()) && g.filler.get(..got.len()) == Some(got) {
                    VerifyOutcome::Match
                } else {
                    VerifyOutcome::Mismatch
                }
            }
        }
    }
}

impl Generated {
    /// The id in a key this run could have written: the prefix, then the id in decimal
    /// as [`write_key`] spells it (no sign, no leading zeros), within the key range.
    fn key_id(&self, key: &[u8]) -> Option<u64> {
        let digits = key.strip_prefix(self.prefix.as_bytes())?;
        if digits.is_empty() || (digits.len() > 1 && digits[0] == b'0') {
            return None;
        }
        let mut id: u64 = 0;
        for &d in digits {
            if !d.is_ascii_digit() {
                return None;
            }
            id = id.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
        }
        (self.key_min..=self.key_max).contains(&id).then_some(id)
    }
}

/// The keys a run has written: one bit per index (see [`Verifier::indices`]), shared by
/// every client of every thread (`Arc<WrittenKeys>`) and marked without locks.
#[derive(Debug)]
pub struct WrittenKeys {
    first: u64,
    count: u64,
    words: Box<[AtomicU64]>,
}

impl WrittenKeys {
    /// Tracks indices `first..first + count`; `None` for more than [`MAX_TRACKED_KEYS`].
    pub fn new(first: u64, count: u64) -> Option<WrittenKeys> {
        if count > MAX_TRACKED_KEYS || first.checked_add(count).is_none() {
            return None;
        }
        let words = (0..count.div_ceil(64)).map(|_| AtomicU64::new(0)).collect();
        Some(WrittenKeys {
            first,
            count,
            words,
        })
    }

    /// Where `index`'s bit lives, if it is tracked.
    fn slot(&self, index: u64) -> Option<(usize, u64)> {
        let offset = index.checked_sub(self.first).filter(|&o| o < self.count)?;
        Some(((offset / 64) as usize, 1u64 << (offset % 64)))
    }

    /// Records that `index` was written. An index outside the range is ignored.
    pub fn mark(&self, index: u64) {
        if let Some((word, bit)) = self.slot(index) {
            // Relaxed is enough: the pass that reads the bits runs after the writers'
            // threads are joined, which orders everything they did before it.
            self.words[word].fetch_or(bit, Ordering::Relaxed);
        }
    }

    /// Whether `index` was marked.
    pub fn contains(&self, index: u64) -> bool {
        self.slot(index)
            .is_some_and(|(word, bit)| self.words[word].load(Ordering::Relaxed) & bit != 0)
    }

    /// How many distinct indices were marked.
    pub fn len(&self) -> u64 {
        self.words
            .iter()
            .map(|w| u64::from(w.load(Ordering::Relaxed).count_ones()))
            .sum()
    }

    /// Whether nothing was marked.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The marked indices, in increasing order.
    pub fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        self.words.iter().enumerate().flat_map(move |(i, w)| {
            let mut bits = w.load(Ordering::Relaxed);
            let base = self.first + i as u64 * 64;
            std::iter::from_fn(move || {
                if bits == 0 {
                    return None;
                }
                let bit = bits.trailing_zeros();
                bits &= bits - 1;
                Some(base + u64::from(bit))
            })
        })
    }
}

/// Counts of one verification pass (or of several, merged), and the first few keys that
/// failed. `checked` counts every key judged; the others count the failures by kind.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VerifyReport {
    pub checked: u64,
    pub mismatches: u64,
    pub missing: u64,
    /// GETs the server answered with an error (memtier counts them as failed keys too).
    pub errors: u64,
    /// Up to [`MAX_FIRST_FAILURES`] failures, oldest first, each `<key>: <what>` with the
    /// key's bytes escaped (`memtier-17: missing`, `k\x00: value differs`).
    pub first_failures: Vec<String>,
    /// A stop signal cut the pass short: the counts are of the keys checked before it.
    pub interrupted: bool,
}

impl VerifyReport {
    /// An empty report.
    pub fn new() -> Self {
        VerifyReport::default()
    }

    /// Counts one [`Verifier::check`] outcome for `key`.
    pub fn record(&mut self, key: &[u8], outcome: VerifyOutcome) {
        self.checked += 1;
        match outcome {
            VerifyOutcome::Match => {}
            VerifyOutcome::Mismatch => {
                self.mismatches += 1;
                self.note(key, "value differs");
            }
            VerifyOutcome::Missing => {
                self.missing += 1;
                self.note(key, "missing");
            }
        }
    }

    /// Counts a GET of `key` that the server answered with an error.
    pub fn record_error(&mut self, key: &[u8], message: &str) {
        self.checked += 1;
        self.errors += 1;
        self.note(key, &format!("error reply: {message}"));
    }

    fn note(&mut self, key: &[u8], what: &str) {
        if self.first_failures.len() < MAX_FIRST_FAILURES {
            self.first_failures
                .push(format!("{}: {what}", show_key(key)));
        }
    }

    /// Adds `other`'s counts to these; its failures follow ours, up to the limit.
    pub fn merge(&mut self, other: &VerifyReport) {
        self.checked += other.checked;
        self.mismatches += other.mismatches;
        self.missing += other.missing;
        self.errors += other.errors;
        self.interrupted |= other.interrupted;
        let room = MAX_FIRST_FAILURES.saturating_sub(self.first_failures.len());
        self.first_failures
            .extend(other.first_failures.iter().take(room).cloned());
    }

    /// Keys that held what was written (memtier's "keys verified successfuly").
    pub fn verified(&self) -> u64 {
        self.checked.saturating_sub(self.failed())
    }

    /// Keys that differed, were missing or drew an error (memtier's "keys failed").
    pub fn failed(&self) -> u64 {
        self.mismatches + self.missing + self.errors
    }

    /// memtier's closing lines for the text report (after [`VERIFY_BANNER`]); a pass a
    /// stop signal cut short says so in the first line rather than claim it completed.
    pub fn render_text(&self) -> String {
        let head = match self.interrupted {
            true => format!("Data verification interrupted after {} keys:", self.checked),
            false => "Data verification completed:".to_string(),
        };
        format!(
            "{head}\n{:<10} keys verified successfuly.\n{:<10} keys failed.\n",
            self.verified(),
            self.failed()
        )
    }

    /// The members of the [`JSON_OBJECT`] object, in order, as `(name, JSON literal)`,
    /// the literals padded to 10 columns as memtier's `%-10llu` writes them.
    pub fn json_members(&self) -> [(&'static str, String); 2] {
        [
            (
                "keys verified successfuly",
                format!("{:<10}", self.verified()),
            ),
            ("keys failed", format!("{:<10}", self.failed())),
        ]
    }

    /// The JSON object as a member of the top-level object, in memtier's layout (tabs,
    /// leading commas; see `report/json.rs`), to append after the last results object
    /// and before the document's closing `\n\t}`. With tabs shown as `\t` and each
    /// number followed by spaces up to 10 columns:
    ///
    /// ```text
    /// \n\t,"client verifications results":{
    /// \n\t\t"keys verified successfuly": 998
    /// \n\t\t,"keys failed": 2
    /// \n\t\t}
    /// ```
    pub fn render_json_member(&self) -> String {
        let mut out = format!("\n\t,\"{JSON_OBJECT}\":{{");
        for (i, (name, literal)) in self.json_members().iter().enumerate() {
            out.push_str("\n\t\t");
            if i > 0 {
                out.push(',');
            }
            out.push('"');
            out.push_str(name);
            out.push_str("\": ");
            out.push_str(literal);
        }
        out.push_str("\n\t\t}");
        out
    }

    /// One line per kept failure, for stderr (memtier prints one `error: key [...]` line
    /// per failed key; this keeps the first few and counts the rest). Empty when no key
    /// failed.
    pub fn render_failures(&self) -> String {
        let mut out = String::new();
        for failure in &self.first_failures {
            out.push_str("data verification: ");
            out.push_str(failure);
            out.push('\n');
        }
        let more = self
            .failed()
            .saturating_sub(self.first_failures.len() as u64);
        if more > 0 {
            out.push_str(&format!(
                "data verification: ... and {more} more failed keys\n"
            ));
        }
        out
    }
}

/// A key for a message: bytes escaped, cut at [`MAX_SHOWN_KEY`] bytes.
fn show_key(key: &[u8]) -> String {
    if key.len() > MAX_SHOWN_KEY {
        format!(
            "{}... ({} bytes)",
            key[..MAX_SHOWN_KEY].escape_ascii(),
            key.len()
        )
    } else {
        key.escape_ascii().to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::import::{ImportOptions, ImportedItem, render_import_file};
    use crate::workload::keys::KeyPattern;
    use crate::workload::values::{ValuePool, ValueSizer};
    use rand::SeedableRng;
    use rand::rngs::SmallRng;

    fn keys(min: u64, max: u64) -> KeyConfig {
        KeyConfig {
            prefix: "memtier-".to_string(),
            min,
            max,
            set_pattern: KeyPattern::Random,
            get_pattern: KeyPattern::Random,
            stddev: 1.0,
            median: 1.0,
            zipf_exp: 1.0,
        }
    }

    fn import(rows: &[(&[u8], &[u8])], generate_keys: bool) -> Arc<ImportedData> {
        let src = render_import_file(rows.iter().map(|&(key, value)| ImportedItem {
            key,
            value,
            expiry_secs: 0,
        }));
        let options = ImportOptions {
            generate_keys,
            no_expiry: false,
            key_prefix: "g-",
            key_min: 10,
        };
        Arc::new(ImportedData::parse("t.csv", &src, &options).unwrap())
    }

    fn generated(size: DataSize, min: u64, max: u64) -> Verifier {
        Verifier::generated(&size, &keys(min, max))
    }

    use VerifyOutcome::{Match, Mismatch, Missing};

    #[test]
    fn imported_outcomes() {
        let data = import(
            &[
                (b"b", b"two"),
                (b"a", b"one"),
                (b"c", b"\r\nEND\r\n"),
                (b"", b"empty key"),
            ],
            false,
        );
        let v = Verifier::imported(data);
        assert_eq!(v.check(b"a", Some(b"one")), Match);
        assert_eq!(v.check(b"b", Some(b"two")), Match);
        assert_eq!(v.check(b"c", Some(b"\r\nEND\r\n")), Match);
        assert_eq!(v.check(b"", Some(b"empty key")), Match);
        assert_eq!(v.check(b"a", Some(b"two")), Mismatch);
        assert_eq!(v.check(b"a", Some(b"on")), Mismatch);
        assert_eq!(v.check(b"a", Some(b"one ")), Mismatch);
        assert_eq!(v.check(b"a", Some(b"")), Mismatch);
        assert_eq!(v.check(b"a", None), Missing);
        // A key that was never imported cannot match, present or not.
        assert_eq!(v.check(b"d", Some(b"one")), Mismatch);
        assert_eq!(v.check(b"d", None), Mismatch);
        assert_eq!(v.check(b"aa", Some(b"one")), Mismatch);
    }

    #[test]
    fn imported_expected_indices_and_keys() {
        let v = Verifier::imported(import(&[(b"k1", b"v1"), (b"k2", b"v2\0")], false));
        assert_eq!(v.indices(), 0..=1);
        assert_eq!(v.expected(0), Some(&b"v1"[..]));
        assert_eq!(v.expected(1), Some(&b"v2\0"[..]));
        assert_eq!(v.expected(2), None);
        let mut key = b"junk".to_vec();
        assert!(v.write_key(1, &mut key));
        assert_eq!(key, b"k2");
        assert!(!v.write_key(2, &mut key));
        assert!(key.is_empty());
    }

    #[test]
    fn a_key_imported_twice_may_hold_either_value() {
        let v = Verifier::imported(import(
            &[(b"k", b"first"), (b"x", b"other"), (b"k", b"second")],
            false,
        ));
        assert_eq!(v.check(b"k", Some(b"first")), Match);
        assert_eq!(v.check(b"k", Some(b"second")), Match);
        assert_eq!(v.check(b"k", Some(b"other")), Mismatch);
        assert_eq!(v.expected(2), Some(&b"second"[..]));
    }

    #[test]
    fn imported_with_generated_keys() {
        let v = Verifier::imported(import(&[(b"file-a", b"A"), (b"file-b", b"B")], true));
        assert_eq!(v.check(b"g-10", Some(b"A")), Match);
        assert_eq!(v.check(b"g-11", Some(b"B")), Match);
        assert_eq!(v.check(b"g-11", Some(b"A")), Mismatch);
        assert_eq!(v.check(b"file-a", Some(b"A")), Mismatch);
        let mut key = Vec::new();
        assert!(v.write_key(0, &mut key));
        assert_eq!(key, b"g-10");
    }

    #[test]
    fn imported_lookup_over_many_keys() {
        let owned: Vec<(Vec<u8>, Vec<u8>)> = (0..2000u32)
            .map(|i| {
                (
                    format!("key:{}", (i * 7919) % 2000).into_bytes(),
                    i.to_le_bytes().to_vec(),
                )
            })
            .collect();
        let rows: Vec<(&[u8], &[u8])> = owned
            .iter()
            .map(|(k, v)| (k.as_slice(), v.as_slice()))
            .collect();
        let v = Verifier::imported(import(&rows, false));
        for (k, val) in &owned {
            assert_eq!(v.check(k, Some(val)), Match);
            assert_eq!(v.check(k, Some(b"nope")), Mismatch);
        }
    }

    #[test]
    fn generated_fixed_size() {
        let v = generated(DataSize::Fixed(4), 1, 100);
        assert_eq!(v.indices(), 1..=100);
        assert_eq!(v.expected(1), Some(&b"xxxx"[..]));
        assert_eq!(v.expected(100), Some(&b"xxxx"[..]));
        assert_eq!(v.expected(0), None);
        assert_eq!(v.expected(101), None);
        assert_eq!(v.check(b"memtier-1", Some(b"xxxx")), Match);
        assert_eq!(v.check(b"memtier-100", Some(b"xxxx")), Match);
        assert_eq!(v.check(b"memtier-1", Some(b"xxx")), Mismatch);
        assert_eq!(v.check(b"memtier-1", Some(b"xxxxx")), Mismatch);
        assert_eq!(v.check(b"memtier-1", Some(b"xxyx")), Mismatch);
        assert_eq!(v.check(b"memtier-1", None), Missing);
        // Keys this run could not have written.
        for key in [
            &b"memtier-0"[..],
            b"memtier-101",
            b"memtier-01",
            b"memtier-+1",
            b"memtier-",
            b"memtier-1x",
            b"other-1",
            b"memtier-99999999999999999999999",
        ] {
            assert_eq!(v.check(key, Some(b"xxxx")), Mismatch, "{key:?}");
        }
        let mut key = Vec::new();
        assert!(v.write_key(42, &mut key));
        assert_eq!(key, b"memtier-42");
        assert!(!v.write_key(101, &mut key));
    }

    #[test]
    fn generated_key_zero_and_empty_prefix() {
        let mut k = keys(0, 10);
        k.prefix = String::new();
        let v = Verifier::generated(&DataSize::Fixed(1), &k);
        assert_eq!(v.check(b"0", Some(b"x")), Match);
        assert_eq!(v.check(b"10", Some(b"x")), Match);
        assert_eq!(v.check(b"00", Some(b"x")), Mismatch);
    }

    #[test]
    fn generated_spread_sizes_match_the_value_sizer() {
        let size = DataSize::Range {
            min: 10,
            max: 1000,
            spread_over_keys: true,
        };
        let k = keys(5, 2_000);
        let v = Verifier::generated(&size, &k);
        let mut sizer = ValueSizer::new(&size, &k);
        let pool = ValuePool::new(sizer.max_size(), false, 1);
        let mut rng = SmallRng::seed_from_u64(1);
        let mut key = Vec::new();
        for id in 5..=2_000 {
            let len = sizer.next(id, &mut rng);
            let sent = pool.value(len, &mut rng);
            assert_eq!(v.expected(id), Some(sent), "key {id}");
            assert!(v.write_key(id, &mut key));
            assert_eq!(v.check(&key, Some(sent)), Match);
            assert_eq!(v.check(&key, Some(&sent[1..])), Mismatch);
        }
        // A single-key range takes the minimum, as the sizer does.
        let one = Verifier::generated(&size, &keys(7, 7));
        assert_eq!(one.expected(7).map(<[u8]>::len), Some(10));
    }

    #[test]
    fn generated_random_sizes_check_the_shape() {
        let v = generated(
            DataSize::Range {
                min: 3,
                max: 6,
                spread_over_keys: false,
            },
            1,
            10,
        );
        assert_eq!(v.expected(1), None);
        assert_eq!(v.check(b"memtier-1", Some(b"xxx")), Match);
        assert_eq!(v.check(b"memtier-1", Some(b"xxxxxx")), Match);
        assert_eq!(v.check(b"memtier-1", Some(b"xx")), Mismatch);
        assert_eq!(v.check(b"memtier-1", Some(b"xxxxxxx")), Mismatch);
        assert_eq!(v.check(b"memtier-1", Some(b"xxyx")), Mismatch);
        assert_eq!(v.check(b"memtier-1", None), Missing);

        let v = generated(DataSize::List(vec![(8, 1), (2, 5), (4, 0)]), 1, 10);
        assert_eq!(v.expected(3), None);
        assert_eq!(v.check(b"memtier-3", Some(b"xx")), Match);
        assert_eq!(v.check(b"memtier-3", Some(b"xxxxxxxx")), Match);
        // Weight 0 is never sent, so a 4-byte value is wrong.
        assert_eq!(v.check(b"memtier-3", Some(b"xxxx")), Mismatch);
        // ... unless every weight is 0, which the sizer treats as equal weights.
        let v = generated(DataSize::List(vec![(4, 0), (5, 0)]), 1, 10);
        assert_eq!(v.check(b"memtier-3", Some(b"xxxx")), Match);
        assert_eq!(v.check(b"memtier-3", Some(b"xxxxx")), Match);
        let v = generated(DataSize::List(vec![]), 1, 10);
        assert_eq!(v.check(b"memtier-3", Some(b"")), Match);
    }

    #[test]
    fn verifier_is_send_and_sync() {
        fn both<T: Send + Sync>() {}
        both::<Verifier>();
        both::<WrittenKeys>();
    }

    #[test]
    fn written_keys_mark_and_iterate() {
        let w = WrittenKeys::new(100, 200).unwrap();
        assert!(w.is_empty());
        for i in [100, 163, 164, 227, 299, 163] {
            w.mark(i);
        }
        // Outside the range: ignored, not a panic.
        w.mark(99);
        w.mark(300);
        w.mark(u64::MAX);
        assert_eq!(w.len(), 5);
        assert!(w.contains(100) && w.contains(299) && !w.contains(101));
        assert!(!w.contains(99) && !w.contains(300));
        assert_eq!(w.iter().collect::<Vec<_>>(), vec![100, 163, 164, 227, 299]);
    }

    #[test]
    fn written_keys_from_a_verifier_and_across_threads() {
        let v = generated(DataSize::Fixed(1), 1, 10_000);
        let w = Arc::new(v.new_written_keys().unwrap());
        std::thread::scope(|s| {
            for t in 0..4u64 {
                let w = Arc::clone(&w);
                s.spawn(move || {
                    for id in (1 + t..=10_000).step_by(4) {
                        if id % 3 == 0 {
                            w.mark(id);
                        }
                    }
                });
            }
        });
        let marked: Vec<u64> = w.iter().collect();
        let expect: Vec<u64> = (1..=10_000).filter(|id| id % 3 == 0).collect();
        assert_eq!(marked, expect);
        assert_eq!(w.len(), expect.len() as u64);

        let imported = Verifier::imported(import(&[(b"a", b"1"), (b"b", b"2")], false));
        let w = imported.new_written_keys().unwrap();
        w.mark(1);
        assert_eq!(w.iter().collect::<Vec<_>>(), vec![1]);
    }

    #[test]
    fn written_keys_refuse_huge_ranges() {
        assert!(WrittenKeys::new(0, MAX_TRACKED_KEYS).is_some());
        assert!(WrittenKeys::new(0, MAX_TRACKED_KEYS + 1).is_none());
        assert!(WrittenKeys::new(u64::MAX, 2).is_none());
        let v = generated(DataSize::Fixed(1), 0, 10_000_000_000);
        assert_eq!(v.index_count(), 10_000_000_001);
        assert!(v.new_written_keys().is_none());
        let full = generated(DataSize::Fixed(1), 0, u64::MAX);
        assert_eq!(full.index_count(), u64::MAX);
        assert!(full.new_written_keys().is_none());
    }

    #[test]
    fn report_counts_and_keeps_the_first_ten_failures() {
        let mut r = VerifyReport::new();
        r.record(b"ok", Match);
        r.record(b"memtier-17", Missing);
        r.record(b"k\0\"", Mismatch);
        r.record_error(b"e", "WRONGTYPE Operation against a key");
        assert_eq!((r.checked, r.mismatches, r.missing, r.errors), (4, 1, 1, 1));
        assert_eq!((r.verified(), r.failed()), (1, 3));
        assert_eq!(
            r.first_failures,
            vec![
                "memtier-17: missing".to_string(),
                "k\\x00\\\": value differs".to_string(),
                "e: error reply: WRONGTYPE Operation against a key".to_string(),
            ]
        );
        for i in 0..20 {
            r.record(format!("m{i}").as_bytes(), Missing);
        }
        assert_eq!(r.first_failures.len(), MAX_FIRST_FAILURES);
        assert_eq!(r.first_failures[9], "m6: missing");
        assert_eq!(r.failed(), 23);
    }

    #[test]
    fn report_shortens_long_keys() {
        let mut r = VerifyReport::new();
        r.record(&[b'a'; 300], Mismatch);
        assert_eq!(
            r.first_failures[0],
            format!("{}... (300 bytes): value differs", "a".repeat(100))
        );
    }

    #[test]
    fn report_merge() {
        let mut a = VerifyReport::new();
        a.record(b"a1", Match);
        for i in 0..7 {
            a.record(format!("a{i}").as_bytes(), Mismatch);
        }
        let mut b = VerifyReport::new();
        b.record(b"b0", Match);
        b.record(b"b1", Missing);
        b.record_error(b"b2", "ERR");
        b.record(b"b3", Missing);
        b.record(b"b4", Missing);
        let mut merged = a.clone();
        merged.merge(&b);
        assert_eq!(merged.checked, 13);
        assert_eq!(merged.mismatches, 7);
        assert_eq!(merged.missing, 3);
        assert_eq!(merged.errors, 1);
        assert_eq!(merged.verified(), 2);
        assert_eq!(merged.first_failures.len(), 10);
        assert_eq!(merged.first_failures[6], "a6: value differs");
        assert_eq!(merged.first_failures[7], "b1: missing");
        assert_eq!(merged.first_failures[9], "b3: missing");
        // Merging into an empty report gives the other; merging an empty one changes nothing.
        let mut empty = VerifyReport::new();
        empty.merge(&b);
        assert_eq!(empty, b);
        let before = merged.clone();
        merged.merge(&VerifyReport::new());
        assert_eq!(merged, before);
    }

    #[test]
    fn text_rendering_matches_memtier() {
        let mut r = VerifyReport::new();
        for _ in 0..998 {
            r.record(b"k", Match);
        }
        r.record(b"x", Missing);
        r.record(b"y", Mismatch);
        assert_eq!(VERIFY_BANNER, "\n\nPerforming data verification...\n");
        assert_eq!(
            r.render_text(),
            "Data verification completed:\n\
             998        keys verified successfuly.\n\
             2          keys failed.\n"
        );
        r.interrupted = true;
        assert_eq!(
            r.render_text(),
            "Data verification interrupted after 1000 keys:\n\
             998        keys verified successfuly.\n\
             2          keys failed.\n"
        );
        assert_eq!(
            r.render_failures(),
            "data verification: x: missing\ndata verification: y: value differs\n"
        );
        assert_eq!(VerifyReport::new().render_failures(), "");
        let mut many = VerifyReport::new();
        for i in 0..12 {
            many.record(format!("{i}").as_bytes(), Missing);
        }
        assert!(many.render_failures().ends_with(
            "data verification: 9: missing\ndata verification: ... and 2 more failed keys\n"
        ));
    }

    #[test]
    fn json_rendering_matches_memtier_and_parses() {
        let mut r = VerifyReport::new();
        for _ in 0..998 {
            r.record(b"k", Match);
        }
        r.record(b"x", Missing);
        r.record_error(b"y", "ERR");
        assert_eq!(
            r.json_members(),
            [
                ("keys verified successfuly", "998       ".to_string()),
                ("keys failed", "2         ".to_string()),
            ]
        );
        let member = r.render_json_member();
        assert_eq!(
            member,
            "\n\t,\"client verifications results\":{\
             \n\t\t\"keys verified successfuly\": 998       \
             \n\t\t,\"keys failed\": 2         \
             \n\t\t}"
        );
        // In a document laid out as report/json.rs lays it out, it parses as JSON.
        let doc = format!("{{\n\t\"configuration\":{{\n\t\t\"port\": 6379\n\t\t}}{member}\n\t}}\n");
        let value: serde_json::Value = serde_json::from_str(&doc).unwrap();
        let got = &value[JSON_OBJECT];
        assert_eq!(got["keys verified successfuly"], 998);
        assert_eq!(got["keys failed"], 2);
        // Counts wider than the padding are written in full.
        let big = VerifyReport {
            checked: 12_345_678_901,
            ..VerifyReport::new()
        };
        assert_eq!(big.json_members()[0].1, "12345678901");
    }
}
