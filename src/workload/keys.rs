//! Key patterns: which key id a client asks for next, and how a key id becomes key bytes.
//!
//! Five patterns, as memtier's `--key-pattern=SET:GET` spells them:
//!
//! | letter | pattern | next key |
//! | --- | --- | --- |
//! | `R` | [`KeyPattern::Random`] | uniform over `[min, max]` |
//! | `G` | [`KeyPattern::Gaussian`] | normal around the median, redrawn while outside the range |
//! | `Z` | [`KeyPattern::Zipf`] | zipf over the range; rank 1 is `min`, so low ids are hot |
//! | `S` | [`KeyPattern::Sequential`] | in order over the whole range, from `--key-minimum` (see [`Coverage`]) |
//! | `P` | [`KeyPattern::Parallel`] | in order over the client's own slice of the range |
//!
//! `P` splits the range with [`partition`], which is also how the runner splits
//! `-n allkeys` request counts: client `i` of `n` starts at the start of slice `i`
//! and, under `allkeys`, sends exactly that slice's length in requests. `S` walks
//! from `--key-minimum` in every client, as memtier's clients do (5 clients of 10
//! requests touch keys 1..10, each 5 times), except under `allkeys`
//! ([`Coverage::OnePass`]), where it starts at the client's slice like `P`, so
//! together the clients touch every key exactly once.

use rand::RngCore;
use rand::rngs::SmallRng;
use rand_distr::{Distribution, Normal, Zipf};

/// How keys are picked for one kind of request. memtier spells each with one letter
/// (see [`KeyPattern::from_letter`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyPattern {
    /// `R`: uniform random over the key range.
    Random,
    /// `G`: normal distribution around `KeyConfig::median` with `KeyConfig::stddev`,
    /// clamped to the range.
    Gaussian,
    /// `S`: in order over the whole range, wrapping; where each client starts is the
    /// run's [`Coverage`].
    Sequential,
    /// `P`: in order over the client's own slice of the range.
    Parallel,
    /// `Z`: zipf, low key ids are hot, skew set by `KeyConfig::zipf_exp`.
    Zipf,
}

impl KeyPattern {
    /// The pattern a letter names: `R`, `G`, `S`, `P` or `Z` (upper case, as memtier).
    pub fn from_letter(letter: char) -> Option<KeyPattern> {
        Some(match letter {
            'R' => KeyPattern::Random,
            'S' => KeyPattern::Sequential,
            'G' => KeyPattern::Gaussian,
            'P' => KeyPattern::Parallel,
            'Z' => KeyPattern::Zipf,
            _ => return None,
        })
    }

    /// The pattern in a word, for people: `random`, `sequential`, ...
    pub fn name(self) -> &'static str {
        match self {
            KeyPattern::Random => "random",
            KeyPattern::Sequential => "sequential",
            KeyPattern::Gaussian => "gaussian",
            KeyPattern::Parallel => "parallel",
            KeyPattern::Zipf => "zipf",
        }
    }

    /// The letter that names the pattern, the inverse of [`KeyPattern::from_letter`].
    pub fn letter(self) -> char {
        match self {
            KeyPattern::Random => 'R',
            KeyPattern::Sequential => 'S',
            KeyPattern::Gaussian => 'G',
            KeyPattern::Parallel => 'P',
            KeyPattern::Zipf => 'Z',
        }
    }
}

/// The key space and how SETs and GETs pick keys in it.
#[derive(Clone, Debug)]
pub struct KeyConfig {
    /// Written before every key id (`memtier-`).
    pub prefix: String,
    pub min: u64,
    pub max: u64,
    pub set_pattern: KeyPattern,
    pub get_pattern: KeyPattern,
    /// Gaussian standard deviation (default: range / 6).
    pub stddev: f64,
    /// Gaussian median (default: middle of the range).
    pub median: f64,
    /// Zipf exponent, in (0, 5).
    pub zipf_exp: f64,
}

/// memcached's longest key, both protocols.
pub const MEMCACHE_MAX_KEY_LEN: usize = 250;

impl KeyConfig {
    /// Number of keys in `[min, max]` (validation keeps `max` below `u64::MAX`).
    pub fn range_len(&self) -> u64 {
        self.max - self.min + 1
    }

    /// Why these keys cannot go to memcached, if they cannot: the longest (the prefix and
    /// `max`'s digits) above 250 bytes, or, for the text protocol (`text`), a prefix
    /// holding a space or a control character (the command line would split or end
    /// there: a GET of two keys, or a command of the prefix's own).
    pub fn memcache_problem(&self, text: bool) -> Option<String> {
        let longest = self.prefix.len() + self.max.to_string().len();
        if longest > MEMCACHE_MAX_KEY_LEN {
            return Some(format!(
                "memcached keys are at most {MEMCACHE_MAX_KEY_LEN} bytes; --key-prefix and \
                 --key-maximum make them up to {longest}"
            ));
        }
        if text && self.prefix.bytes().any(|b| b <= b' ' || b == 0x7f) {
            return Some(format!(
                "memcache_text keys cannot hold spaces or control characters; --key-prefix \
                 [{}] does",
                self.prefix.escape_default()
            ));
        }
        None
    }
}

/// How many times a Gaussian draw that falls outside the range is redrawn before
/// it is clamped. memtier redraws for ever; with a median near an edge and a huge
/// stddev that can spin, and a load generator must never stall on its own input.
const GAUSSIAN_TRIES: u32 = 64;

/// Zipf exponents this close to 1 (or 0) are treated as exactly 1 (or 0).
const ZIPF_SNAP: f64 = 1e-4;

/// Slice `index` of `parts` equal-as-possible slices of `[range_start, range_start + range_len)`.
///
/// Returns `(start, len)`. Slice `i` begins at `range_start + i * range_len / parts`
/// (rounded down), so consecutive slices meet exactly: they cover the range with
/// no gap and no overlap, and their lengths differ by at most one. When there are
/// more parts than ids some slices are empty (`len == 0`); their `start` is still
/// an id inside the range (for `range_len > 0`).
///
/// `parts == 0` or `index >= parts` yields an empty slice at `range_start + range_len`
/// rather than a panic.
pub fn partition(range_start: u64, range_len: u64, index: usize, parts: usize) -> (u64, u64) {
    if parts == 0 || index >= parts {
        return (range_start.saturating_add(range_len), 0);
    }
    // u128: index * range_len overflows u64 for large ranges and many clients.
    let len = u128::from(range_len);
    let n = parts as u128;
    let lo = (index as u128 * len / n) as u64;
    let hi = ((index as u128 + 1) * len / n) as u64;
    (range_start.saturating_add(lo), hi - lo)
}

/// How the clients of a run cover the key range with `S`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Coverage {
    /// Every client walks the whole range from `--key-minimum`, as memtier's clients do:
    /// N clients of R requests each touch the first R keys N times.
    EachClient,
    /// The clients share one pass over the range (`-n allkeys`): client `i` starts at
    /// slice `i` of [`partition`] and sends that slice's length in requests.
    OnePass,
}

/// Draws key ids for one client and one kind of request (SET or GET).
#[derive(Clone, Debug)]
pub struct KeyGenerator {
    min: u64,
    max: u64,
    kind: Kind,
}

#[derive(Clone, Debug)]
enum Kind {
    Random(UniformIds),
    Gaussian(Normal<f64>),
    Zipf(Zipf<f64>),
    /// Walks `[min, max]`, wrapping; `next` is the id returned next.
    Sequential {
        next: u64,
    },
    /// Walks `[start, start + len)`, wrapping; `next` is the id returned next.
    Parallel {
        start: u64,
        len: u64,
        next: u64,
    },
}

impl KeyGenerator {
    /// A generator for `pattern` over `keys.min..=keys.max`, for client
    /// `client_index` of `total_clients` (counted over all threads); `coverage` says
    /// where an `S` walk starts.
    ///
    /// Errors (for a configuration that slipped past validation): an empty or
    /// unrepresentable range, a client index out of bounds, a negative or non-finite
    /// Gaussian stddev or median, a negative or non-finite zipf exponent.
    pub fn new(
        pattern: KeyPattern,
        keys: &KeyConfig,
        client_index: usize,
        total_clients: usize,
        coverage: Coverage,
    ) -> Result<Self, &'static str> {
        if keys.min > keys.max {
            return Err("key minimum is above key maximum");
        }
        let range = (keys.max - keys.min)
            .checked_add(1)
            .ok_or("key range is too large")?;
        if client_index >= total_clients {
            return Err("client index is out of range");
        }
        let kind = match pattern {
            KeyPattern::Random => Kind::Random(UniformIds::new(keys.min, keys.max)),
            KeyPattern::Gaussian => {
                if !keys.median.is_finite() {
                    return Err("key median must be a finite number");
                }
                // `Normal` itself accepts a negative stddev (it mirrors the curve).
                if !(keys.stddev.is_finite() && keys.stddev >= 0.0) {
                    return Err("key stddev must be a finite number >= 0");
                }
                Kind::Gaussian(
                    Normal::new(keys.median, keys.stddev)
                        .map_err(|_| "key stddev must be a finite number >= 0")?,
                )
            }
            KeyPattern::Zipf => {
                if !(keys.zipf_exp.is_finite() && keys.zipf_exp >= 0.0) {
                    return Err("key zipf exponent must be a finite number >= 0");
                }
                // As memtier: an exponent within 1e-4 of 1 is 1 (the sampler's
                // formulas divide by 1 - s), and one within 1e-4 of 0 is uniform.
                let exp = if (keys.zipf_exp - 1.0).abs() < ZIPF_SNAP {
                    1.0
                } else if keys.zipf_exp < ZIPF_SNAP {
                    0.0
                } else {
                    keys.zipf_exp
                };
                // f64 holds every rank exactly up to 2^53 keys, far beyond any real range.
                Kind::Zipf(
                    Zipf::new(range as f64, exp)
                        .map_err(|_| "key zipf exponent must be a finite number >= 0")?,
                )
            }
            KeyPattern::Sequential => Kind::Sequential {
                next: match coverage {
                    Coverage::EachClient => keys.min,
                    Coverage::OnePass => partition(keys.min, range, client_index, total_clients).0,
                },
            },
            KeyPattern::Parallel => {
                let (start, len) = partition(keys.min, range, client_index, total_clients);
                // More clients than keys leaves some slices empty. Such a client still
                // has to send its `-n` requests, so it takes the single key where its
                // slice would start (shared with the neighbour that owns it). Under
                // `allkeys` its share is 0 requests, so coverage stays exact.
                let len = len.max(1);
                Kind::Parallel {
                    start,
                    len,
                    next: start,
                }
            }
        };
        Ok(KeyGenerator {
            min: keys.min,
            max: keys.max,
            kind,
        })
    }

    /// The next key id, always in `[keys.min, keys.max]`.
    #[inline]
    pub fn next(&mut self, rng: &mut SmallRng) -> u64 {
        // The default pattern first, inline; the others behind a call.
        match &self.kind {
            Kind::Random(ids) => ids.sample(rng),
            _ => self.next_other(rng),
        }
    }

    /// The uniform ids of the default pattern `R`, which [`next`](Self::next) draws
    /// from; `None` for any other pattern.
    pub fn uniform(&self) -> Option<UniformIds> {
        match self.kind {
            Kind::Random(ids) => Some(ids),
            _ => None,
        }
    }

    /// [`next`](Self::next) for every pattern but `R`.
    #[inline(never)]
    fn next_other(&mut self, rng: &mut SmallRng) -> u64 {
        match &mut self.kind {
            Kind::Random(ids) => ids.sample(rng),
            Kind::Gaussian(normal) => {
                // Like memtier: accept draws in [min, max + 1) and round down, so
                // each id owns a unit-wide interval and the edge ids are not halved.
                let lo = self.min as f64;
                let hi = self.max as f64 + 1.0;
                let mut x = normal.sample(rng);
                let mut tries = 1;
                while !(lo..hi).contains(&x) && tries < GAUSSIAN_TRIES {
                    x = normal.sample(rng);
                    tries += 1;
                }
                // `as` saturates (NaN -> 0), and the clamp restores the range.
                (x.floor() as u64).clamp(self.min, self.max)
            }
            Kind::Zipf(zipf) => {
                let rank = zipf.sample(rng) as u64; // in 1..=range
                self.min
                    .saturating_add(rank.saturating_sub(1))
                    .min(self.max)
            }
            Kind::Sequential { next } => {
                let id = *next;
                *next = if id >= self.max { self.min } else { id + 1 };
                id
            }
            Kind::Parallel { start, len, next } => {
                let id = *next;
                // `id - start < len` always, so `id + 1` cannot overflow past max.
                *next = if id - *start + 1 >= *len {
                    *start
                } else {
                    id + 1
                };
                id
            }
        }
    }
}

/// Uniform ids over `[low, low + range)`, the range prepared once: the same draws, from
/// the same random numbers, as `rng.random_range(low..=high)` (rand 0.9's single-sample
/// method: one 64x64-bit multiply, a second random number only when the first's low half
/// falls in the last `range` values), without its per-call checks and set-up.
#[derive(Clone, Copy, Debug)]
pub struct UniformIds {
    low: u64,
    /// `high - low + 1`; 0 stands for all 2^64 values.
    range: u64,
}

impl UniformIds {
    fn new(low: u64, high: u64) -> UniformIds {
        UniformIds {
            low,
            range: high.wrapping_sub(low).wrapping_add(1),
        }
    }

    /// The next id, drawn from `rng`.
    #[inline(always)]
    pub fn sample(self, rng: &mut SmallRng) -> u64 {
        if self.range == 0 {
            return rng.next_u64();
        }
        let wide = u128::from(rng.next_u64()) * u128::from(self.range);
        let (mut id, low_half) = ((wide >> 64) as u64, wide as u64);
        if low_half > self.range.wrapping_neg() {
            let next = (u128::from(rng.next_u64()) * u128::from(self.range)) >> 64;
            id += u64::from(low_half.checked_add(next as u64).is_none());
        }
        self.low.wrapping_add(id)
    }
}

/// Writes the key for `id` into `out`: `prefix` followed by `id` in decimal
/// (`memtier-` and 42 give `memtier-42`, as memtier's `%s%llu`).
///
/// `out` is cleared first; once its capacity has reached prefix + 20 digits this
/// never allocates.
pub fn write_key(out: &mut Vec<u8>, prefix: &str, id: u64) {
    let mut digits = itoa::Buffer::new();
    let digits = digits.format(id).as_bytes();
    out.clear();
    out.reserve(prefix.len() + digits.len());
    out.extend_from_slice(prefix.as_bytes());
    out.extend_from_slice(digits);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_pattern_is_named_by_the_letter_that_parses_to_it() {
        for letter in ['R', 'S', 'G', 'P', 'Z'] {
            let pattern = KeyPattern::from_letter(letter).expect("a pattern's letter");
            assert_eq!(pattern.letter(), letter);
        }
    }

    #[test]
    fn memcache_keys_are_checked_for_length_and_spaces() {
        let keys = |prefix: &str, max: u64| KeyConfig {
            prefix: prefix.to_string(),
            min: 0,
            max,
            set_pattern: KeyPattern::Random,
            get_pattern: KeyPattern::Random,
            stddev: 1.0,
            median: 0.0,
            zipf_exp: 1.0,
        };
        assert_eq!(keys("memtier-", 10_000_000).memcache_problem(true), None);
        let spaced = keys("a b", 9).memcache_problem(true).unwrap();
        assert!(spaced.contains("[a b]"), "{spaced}");
        assert_eq!(
            keys("a b", 9).memcache_problem(false),
            None,
            "binary keys are bytes"
        );
        let crlf = keys("a\r\nversion", 9).memcache_problem(true).unwrap();
        assert!(crlf.contains("[a\\r\\nversion]"), "{crlf}");
        let long = "k".repeat(245);
        assert_eq!(
            keys(&long, 99_999).memcache_problem(false),
            None,
            "250 bytes"
        );
        let over = keys(&long, 999_999).memcache_problem(false).unwrap();
        assert!(over.contains("up to 251"), "{over}");
    }
    use rand::SeedableRng;

    fn keys(min: u64, max: u64) -> KeyConfig {
        let range = (max - min + 1) as f64;
        KeyConfig {
            prefix: "memtier-".to_string(),
            min,
            max,
            set_pattern: KeyPattern::Random,
            get_pattern: KeyPattern::Random,
            stddev: range / 6.0,
            median: min as f64 + range / 2.0,
            zipf_exp: 1.0,
        }
    }

    fn rng(seed: u64) -> SmallRng {
        SmallRng::seed_from_u64(seed)
    }

    fn draw(pattern: KeyPattern, k: &KeyConfig, n: usize, seed: u64) -> Vec<u64> {
        let mut g = KeyGenerator::new(pattern, k, 0, 1, Coverage::EachClient).unwrap();
        let mut r = rng(seed);
        (0..n).map(|_| g.next(&mut r)).collect()
    }

    fn mean_and_stddev(xs: &[u64]) -> (f64, f64) {
        let n = xs.len() as f64;
        let mean = xs.iter().map(|&x| x as f64).sum::<f64>() / n;
        let var = xs.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / n;
        (mean, var.sqrt())
    }

    const ALL: [KeyPattern; 5] = [
        KeyPattern::Random,
        KeyPattern::Gaussian,
        KeyPattern::Sequential,
        KeyPattern::Parallel,
        KeyPattern::Zipf,
    ];

    #[test]
    fn write_key_prefix_and_decimal() {
        let mut out = Vec::new();
        write_key(&mut out, "memtier-", 42);
        assert_eq!(out, b"memtier-42");
        write_key(&mut out, "", 0);
        assert_eq!(out, b"0");
        write_key(&mut out, "k:", u64::MAX);
        assert_eq!(out, b"k:18446744073709551615");
    }

    #[test]
    fn write_key_does_not_reallocate_once_warm() {
        let mut out = Vec::with_capacity(8 + 20);
        let ptr = out.as_ptr();
        for id in [1, 10_000_000, u64::MAX, 7] {
            write_key(&mut out, "memtier-", id);
            assert_eq!(out.as_ptr(), ptr);
        }
    }

    #[test]
    fn partition_covers_the_range_without_gaps_or_overlap() {
        for (len, parts) in [
            (1000u64, 1usize),
            (1000, 3),
            (1000, 7),
            (10, 10),
            (3, 5),
            (0, 4),
        ] {
            let mut expect_start = 1;
            let mut total = 0;
            for i in 0..parts {
                let (s, l) = partition(1, len, i, parts);
                assert_eq!(s, expect_start, "len {len} parts {parts} slice {i}");
                expect_start = s + l;
                total += l;
                // Even split: lengths differ by at most one.
                assert!(l == len / parts as u64 || l == len / parts as u64 + 1);
            }
            assert_eq!(total, len);
            assert_eq!(expect_start, 1 + len);
        }
    }

    #[test]
    fn partition_examples() {
        assert_eq!(partition(1, 1000, 0, 4), (1, 250));
        assert_eq!(partition(1, 1000, 3, 4), (751, 250));
        assert_eq!(partition(0, 10, 1, 3), (3, 3));
        assert_eq!(partition(0, 10, 2, 3), (6, 4));
        // Huge range times many parts does not overflow.
        assert_eq!(
            partition(0, u64::MAX, 999, 1000).0 + partition(0, u64::MAX, 999, 1000).1,
            u64::MAX
        );
        // Degenerate arguments give an empty slice instead of a panic.
        assert_eq!(partition(5, 10, 0, 0), (15, 0));
        assert_eq!(partition(5, 10, 3, 3), (15, 0));
    }

    #[test]
    fn uniform_ids_draw_what_random_range_draws() {
        use rand::Rng;
        // Small, default-sized, huge (the second draw fires often) and full ranges.
        for (low, high) in [
            (0u64, 0u64),
            (1, 100),
            (1, 10_000_000),
            (5, u64::MAX / 2 + 7),
            (0, u64::MAX - 1),
            (0, u64::MAX),
            (u64::MAX, u64::MAX),
        ] {
            let ids = UniformIds::new(low, high);
            for seed in 0..4 {
                let (mut a, mut b) = (rng(seed), rng(seed));
                for _ in 0..2000 {
                    assert_eq!(
                        ids.sample(&mut a),
                        b.random_range(low..=high),
                        "{low}..={high}"
                    );
                }
            }
        }
    }

    #[test]
    fn sequential_goes_in_order_and_wraps() {
        let k = keys(1, 5);
        let ids = draw(KeyPattern::Sequential, &k, 12, 1);
        assert_eq!(ids, vec![1, 2, 3, 4, 5, 1, 2, 3, 4, 5, 1, 2]);
    }

    /// memtier's S: every client walks from the minimum, so 5 clients of 10 requests
    /// over 1..1000 touch keys 1..10, each 5 times.
    #[test]
    fn sequential_clients_each_walk_from_the_minimum() {
        let k = keys(1, 1000);
        let mut seen = vec![0u32; 1001];
        let mut r = rng(1);
        for client in 0..5 {
            let mut g =
                KeyGenerator::new(KeyPattern::Sequential, &k, client, 5, Coverage::EachClient)
                    .unwrap();
            for _ in 0..10 {
                seen[g.next(&mut r) as usize] += 1;
            }
        }
        assert!(seen[1..=10].iter().all(|&c| c == 5), "{:?}", &seen[..12]);
        assert_eq!(seen.iter().sum::<u32>(), 50);
    }

    #[test]
    fn sequential_one_pass_client_starts_at_its_slice_and_wraps_over_the_whole_range() {
        let k = keys(1, 10);
        let mut g = KeyGenerator::new(KeyPattern::Sequential, &k, 1, 2, Coverage::OnePass).unwrap();
        let mut r = rng(1);
        let ids: Vec<u64> = (0..12).map(|_| g.next(&mut r)).collect();
        assert_eq!(ids, vec![6, 7, 8, 9, 10, 1, 2, 3, 4, 5, 6, 7]);
    }

    #[test]
    fn sequential_reaches_u64_max_without_overflow() {
        let k = keys(u64::MAX - 2, u64::MAX - 1);
        let mut k = k;
        k.max = u64::MAX - 1;
        let ids = draw(KeyPattern::Sequential, &k, 4, 1);
        assert_eq!(
            ids,
            vec![u64::MAX - 2, u64::MAX - 1, u64::MAX - 2, u64::MAX - 1]
        );
    }

    #[test]
    fn parallel_walks_own_slice_and_wraps_within_it() {
        let k = keys(1, 10);
        let mut r = rng(1);
        let mut g0 =
            KeyGenerator::new(KeyPattern::Parallel, &k, 0, 3, Coverage::EachClient).unwrap();
        let mut g2 =
            KeyGenerator::new(KeyPattern::Parallel, &k, 2, 3, Coverage::EachClient).unwrap();
        let a: Vec<u64> = (0..7).map(|_| g0.next(&mut r)).collect();
        let b: Vec<u64> = (0..9).map(|_| g2.next(&mut r)).collect();
        assert_eq!(a, vec![1, 2, 3, 1, 2, 3, 1]); // slice [1, 3]
        assert_eq!(b, vec![7, 8, 9, 10, 7, 8, 9, 10, 7]); // slice [7, 10]
    }

    /// With `-n allkeys` each client sends its partition's length in requests; for
    /// both S and P the clients together must touch every key exactly once.
    #[test]
    fn allkeys_share_covers_every_key_exactly_once() {
        let k = keys(1, 1000);
        for pattern in [KeyPattern::Sequential, KeyPattern::Parallel] {
            for clients in [1usize, 2, 3, 7, 8, 64, 999, 1000] {
                let mut seen = vec![0u32; 1001];
                let mut r = rng(9);
                for i in 0..clients {
                    let mut g =
                        KeyGenerator::new(pattern, &k, i, clients, Coverage::OnePass).unwrap();
                    let (_, share) = partition(1, 1000, i, clients);
                    for _ in 0..share {
                        seen[g.next(&mut r) as usize] += 1;
                    }
                }
                assert_eq!(seen[0], 0);
                assert!(
                    seen[1..].iter().all(|&c| c == 1),
                    "{pattern:?} with {clients} clients"
                );
            }
        }
    }

    #[test]
    fn parallel_with_more_clients_than_keys_stays_in_range() {
        let k = keys(1, 3);
        let mut r = rng(3);
        let mut used = [0u32; 4];
        for i in 0..8 {
            let mut g =
                KeyGenerator::new(KeyPattern::Parallel, &k, i, 8, Coverage::EachClient).unwrap();
            for _ in 0..5 {
                let id = g.next(&mut r);
                assert!((1..=3).contains(&id));
                used[id as usize] += 1;
            }
        }
        assert!(used[1..].iter().all(|&c| c > 0));
    }

    #[test]
    fn gaussian_mean_and_spread_follow_median_and_stddev() {
        let mut k = keys(1, 100_000);
        k.median = 40_000.0;
        k.stddev = 5_000.0;
        let ids = draw(KeyPattern::Gaussian, &k, 100_000, 7);
        let (mean, sd) = mean_and_stddev(&ids);
        // floor() shifts the mean down by 0.5; sampling error of the mean is ~16.
        assert!((mean - 39_999.5).abs() < 100.0, "mean {mean}");
        assert!((sd - 5_000.0).abs() < 150.0, "stddev {sd}");
    }

    #[test]
    fn gaussian_never_leaves_the_range_even_when_mostly_outside() {
        // Median at the edge with a stddev far wider than the range: most draws
        // fall outside, so this exercises redraw and the bounded clamp.
        let mut k = keys(100, 110);
        k.median = 100.0;
        k.stddev = 1e9;
        let ids = draw(KeyPattern::Gaussian, &k, 10_000, 2);
        assert!(ids.iter().all(|&id| (100..=110).contains(&id)));
    }

    #[test]
    fn gaussian_with_zero_stddev_is_the_median() {
        let mut k = keys(1, 100);
        k.median = 42.0;
        k.stddev = 0.0;
        assert!(
            draw(KeyPattern::Gaussian, &k, 100, 1)
                .iter()
                .all(|&id| id == 42)
        );
    }

    #[test]
    fn zipf_is_skewed_towards_key_min() {
        let k = keys(1, 1000);
        let ids = draw(KeyPattern::Zipf, &k, 100_000, 11);
        let mut freq = vec![0u32; 1001];
        for &id in &ids {
            freq[id as usize] += 1;
        }
        // Rank 1 expects ~100000 / H(1000) = ~13 360 hits; rank 1000 expects ~13.
        assert!(freq[1] > 10_000, "key min {}", freq[1]);
        assert!(freq[1000] < 100, "key max {}", freq[1000]);
        // Top ranks strictly decrease (expected 13 360, 6 680, 4 453, 3 340).
        assert!(freq[1] > freq[2] && freq[2] > freq[3] && freq[3] > freq[4]);
        // And so do deciles of the range.
        let deciles: Vec<u32> = freq[1..].chunks(100).map(|c| c.iter().sum()).collect();
        assert!(deciles.windows(2).all(|w| w[0] > w[1]), "{deciles:?}");
    }

    #[test]
    fn zipf_exponents_near_one_and_zero_behave() {
        let mut k = keys(1, 1000);
        for exp in [0.0, 0.00001, 0.99999, 1.00001, 0.5, 2.0, 4.9] {
            k.zipf_exp = exp;
            let ids = draw(KeyPattern::Zipf, &k, 20_000, 8);
            assert!(ids.iter().all(|&id| (1..=1000).contains(&id)), "exp {exp}");
            let (mean, _) = mean_and_stddev(&ids);
            if exp < 1e-4 {
                // Uniform.
                assert!((mean - 500.5).abs() < 15.0, "exp {exp} mean {mean}");
            } else {
                assert!(mean < 400.0, "exp {exp} mean {mean}");
            }
        }
        // Steeper exponent, hotter key min.
        k.zipf_exp = 0.5;
        let mild = draw(KeyPattern::Zipf, &k, 20_000, 8)
            .iter()
            .filter(|&&id| id == 1)
            .count();
        k.zipf_exp = 2.0;
        let steep = draw(KeyPattern::Zipf, &k, 20_000, 8)
            .iter()
            .filter(|&&id| id == 1)
            .count();
        assert!(steep > 5 * mild, "mild {mild} steep {steep}");
    }

    #[test]
    fn zipf_hot_keys_start_at_key_min_not_one() {
        let k = keys(5_000, 5_999);
        let ids = draw(KeyPattern::Zipf, &k, 20_000, 4);
        assert!(ids.iter().all(|&id| (5_000..=5_999).contains(&id)));
        let at_min = ids.iter().filter(|&&id| id == 5_000).count();
        let at_max = ids.iter().filter(|&&id| id == 5_999).count();
        assert!(at_min > 50 * (at_max + 1), "min {at_min} max {at_max}");
    }

    #[test]
    fn random_is_uniform_over_the_range() {
        let k = keys(1, 100);
        let n = 100_000;
        let ids = draw(KeyPattern::Random, &k, n, 5);
        let mut freq = [0u32; 101];
        for &id in &ids {
            freq[id as usize] += 1;
        }
        assert_eq!(freq[0], 0);
        assert!(freq[1] > 0 && freq[100] > 0);
        // Chi-square with 99 degrees of freedom: mean 99, stddev ~14; 170 is ~5 sigma.
        let expected = n as f64 / 100.0;
        let chi2: f64 = freq[1..]
            .iter()
            .map(|&c| (c as f64 - expected).powi(2) / expected)
            .sum();
        assert!(chi2 < 170.0, "chi-square {chi2}");
        let (mean, _) = mean_and_stddev(&ids);
        assert!((mean - 50.5).abs() < 0.5, "mean {mean}");
    }

    #[test]
    fn every_pattern_stays_within_range() {
        let k = keys(17, 29);
        for pattern in ALL {
            for client in 0..4 {
                let mut g =
                    KeyGenerator::new(pattern, &k, client, 4, Coverage::EachClient).unwrap();
                let mut r = rng(client as u64);
                for _ in 0..5_000 {
                    let id = g.next(&mut r);
                    assert!((17..=29).contains(&id), "{pattern:?} gave {id}");
                }
            }
        }
    }

    #[test]
    fn single_key_range() {
        let k = keys(7, 7);
        for pattern in ALL {
            assert!(
                draw(pattern, &k, 100, 1).iter().all(|&id| id == 7),
                "{pattern:?}"
            );
        }
    }

    #[test]
    fn same_seed_same_keys() {
        let k = keys(1, 1_000_000);
        for pattern in ALL {
            assert_eq!(
                draw(pattern, &k, 1000, 99),
                draw(pattern, &k, 1000, 99),
                "{pattern:?}"
            );
        }
        assert_ne!(
            draw(KeyPattern::Random, &k, 1000, 1),
            draw(KeyPattern::Random, &k, 1000, 2)
        );
    }

    #[test]
    fn bad_configuration_is_an_error_not_a_panic() {
        let k = keys(1, 10);
        let mut bad = k.clone();
        bad.min = 11;
        assert!(KeyGenerator::new(KeyPattern::Random, &bad, 0, 1, Coverage::EachClient).is_err());
        let mut bad = k.clone();
        bad.min = 0;
        bad.max = u64::MAX;
        assert!(KeyGenerator::new(KeyPattern::Random, &bad, 0, 1, Coverage::EachClient).is_err());
        assert!(KeyGenerator::new(KeyPattern::Random, &k, 1, 1, Coverage::EachClient).is_err());
        assert!(KeyGenerator::new(KeyPattern::Random, &k, 0, 0, Coverage::EachClient).is_err());
        let mut bad = k.clone();
        bad.stddev = -1.0;
        assert!(KeyGenerator::new(KeyPattern::Gaussian, &bad, 0, 1, Coverage::EachClient).is_err());
        let mut bad = k.clone();
        bad.median = f64::NAN;
        assert!(KeyGenerator::new(KeyPattern::Gaussian, &bad, 0, 1, Coverage::EachClient).is_err());
        let mut bad = k.clone();
        bad.zipf_exp = -0.5;
        assert!(KeyGenerator::new(KeyPattern::Zipf, &bad, 0, 1, Coverage::EachClient).is_err());
        bad.zipf_exp = f64::INFINITY;
        assert!(KeyGenerator::new(KeyPattern::Zipf, &bad, 0, 1, Coverage::EachClient).is_err());
    }
}
