//! Value sizes (`-d`, `--data-size-range`, `--data-size-list`) and value bytes (`-R`).
//!
//! [`ValueSizer`] picks how long the next value is; [`ValuePool`] hands out a
//! slice of that length from one buffer filled at start-up, so producing a value
//! on the hot path is a bounds check, never a copy or an allocation.

use rand::Rng;
use rand::SeedableRng;
use rand::rngs::SmallRng;

use crate::workload::keys::KeyConfig;

/// How value sizes are chosen: memtier's `-d`, `--data-size-range` (with
/// `--data-size-pattern`) and `--data-size-list`.
#[derive(Clone, Debug, PartialEq)]
pub enum DataSize {
    /// Every value this many bytes.
    Fixed(usize),
    /// Between `min` and `max` bytes: random per SET, or (`spread_over_keys`) linear in
    /// the key id across the key range.
    Range {
        min: usize,
        max: usize,
        spread_over_keys: bool,
    },
    /// `(size, weight)` pairs, walked as memtier walks them: the first size for `weight`
    /// SETs in a row, then the next size, round and round (each client from the first).
    List(Vec<(usize, u32)>),
}

/// Chooses value sizes for one client.
#[derive(Clone, Debug)]
pub struct ValueSizer {
    kind: SizeKind,
    max: usize,
}

#[derive(Clone, Debug)]
enum SizeKind {
    Fixed(usize),
    /// Uniform in `[min, max]`.
    Random {
        min: usize,
        max: usize,
    },
    /// Linear in the key id: `min` at `key_min`, `max` at `key_max`.
    SpreadOverKeys {
        min: usize,
        max: usize,
        key_min: u64,
        key_max: u64,
    },
    /// Weighted round: `items[at]` has been sent `sent` times of its weight (every weight
    /// above zero). memtier's weight list is a fixed cycle, not a draw, so a memtier user
    /// sees the same sizes on the same keys (`10:1,100:2` with `S:S`: 10, 100, 100, 10...).
    List {
        items: Vec<(usize, u32)>,
        at: usize,
        sent: u32,
    },
}

impl ValueSizer {
    /// A sizer for `size`, with `keys` giving the key range that
    /// `--data-size-pattern=S` spreads sizes over.
    ///
    /// The configuration is validated before this runs; anything odd left is
    /// handled without panicking: a reversed range is reordered, a list whose
    /// weights are all 0 is treated as equally weighted, an empty list gives
    /// empty values.
    pub fn new(size: &DataSize, keys: &KeyConfig) -> Self {
        let kind = match size {
            DataSize::Fixed(n) => SizeKind::Fixed(*n),
            DataSize::Range {
                min,
                max,
                spread_over_keys,
            } => {
                let (min, max) = ((*min).min(*max), (*min).max(*max));
                if *spread_over_keys {
                    SizeKind::SpreadOverKeys {
                        min,
                        max,
                        key_min: keys.min.min(keys.max),
                        key_max: keys.max.max(keys.min),
                    }
                } else {
                    SizeKind::Random { min, max }
                }
            }
            DataSize::List(list) => {
                let all_zero = list.iter().all(|&(_, w)| w == 0);
                // A zero weight never gets a turn, so it gets no entry.
                let items: Vec<(usize, u32)> = list
                    .iter()
                    .map(|&(size, weight)| (size, if all_zero { 1 } else { weight }))
                    .filter(|&(_, weight)| weight > 0)
                    .collect();
                if items.is_empty() {
                    SizeKind::Fixed(0)
                } else {
                    SizeKind::List {
                        items,
                        at: 0,
                        sent: 0,
                    }
                }
            }
        };
        let max = match &kind {
            SizeKind::Fixed(n) => *n,
            SizeKind::Random { max, .. } | SizeKind::SpreadOverKeys { max, .. } => *max,
            SizeKind::List { items, .. } => items.iter().map(|&(size, _)| size).max().unwrap_or(0),
        };
        ValueSizer { kind, max }
    }

    /// Size of the value to SET for `key_id`.
    pub fn next(&mut self, key_id: u64, rng: &mut SmallRng) -> usize {
        match &mut self.kind {
            SizeKind::Fixed(n) => *n,
            SizeKind::Random { min, max } => rng.random_range(*min..=*max),
            SizeKind::SpreadOverKeys { .. } => self.exact_size(key_id).unwrap_or(self.max),
            SizeKind::List { items, at, sent } => {
                // `items` is never empty (an all-zero list is `Fixed(0)`).
                if *sent >= items[*at].1 {
                    *at = (*at + 1) % items.len();
                    *sent = 0;
                }
                *sent += 1;
                items[*at].0
            }
        }
    }

    /// The size of every value, when it is fixed ([`next`](Self::next) then draws
    /// nothing).
    pub fn fixed(&self) -> Option<usize> {
        match self.kind {
            SizeKind::Fixed(n) => Some(n),
            _ => None,
        }
    }

    /// The largest size this sizer can return (what a [`ValuePool`] must hold).
    pub fn max_size(&self) -> usize {
        self.max
    }

    /// The one size a value for `key_id` can have, when the sizes leave no choice (a fixed
    /// size, or sizes spread over the keys); `None` when each SET draws its size.
    pub fn exact_size(&self, key_id: u64) -> Option<usize> {
        match &self.kind {
            SizeKind::Fixed(n) => Some(*n),
            SizeKind::SpreadOverKeys {
                min,
                max,
                key_min,
                key_max,
            } => {
                if key_max == key_min {
                    return Some(*min);
                }
                // As memtier: size = min + (max - min) * (key - key_min) / (key_max - key_min),
                // rounded down; done in u128 so it is exact and cannot overflow.
                let key = key_id.clamp(*key_min, *key_max);
                let step = u128::from(key - key_min) * (*max - *min) as u128
                    / u128::from(key_max - key_min);
                Some(*min + step as usize)
            }
            SizeKind::Random { .. } | SizeKind::List { .. } => None,
        }
    }

    /// Whether [`next`](Self::next) could have returned `len` for `key_id`: what a
    /// verification of generated values checks when it cannot know the exact size.
    pub fn allows(&self, key_id: u64, len: usize) -> bool {
        match &self.kind {
            SizeKind::Fixed(_) | SizeKind::SpreadOverKeys { .. } => {
                self.exact_size(key_id) == Some(len)
            }
            SizeKind::Random { min, max } => (*min..=*max).contains(&len),
            SizeKind::List { items, .. } => items.iter().any(|&(size, _)| size == len),
        }
    }
}

/// Printable ASCII without the space: `!` to `~`.
const PRINTABLE_FIRST: u8 = b'!';
const PRINTABLE_LAST: u8 = b'~';

/// Value bytes for every request, made once.
#[derive(Clone, Debug)]
pub struct ValuePool {
    buf: Vec<u8>,
    max_size: usize,
    random: bool,
}

impl ValuePool {
    /// A pool able to serve values of up to `max_size` bytes.
    ///
    /// Without `random` every value is `x` repeated, as memtier sends. With
    /// `random` (`-R`/`--random-data`) the buffer holds random printable bytes
    /// (seeded by `seed`, so runs repeat) and is twice as long as the largest
    /// value, so that values taken at random offsets differ from one another.
    pub fn new(max_size: usize, random: bool, seed: u64) -> Self {
        let buf = if random {
            let mut rng = SmallRng::seed_from_u64(seed);
            (0..max_size.saturating_mul(2))
                .map(|_| rng.random_range(PRINTABLE_FIRST..=PRINTABLE_LAST))
                .collect()
        } else {
            vec![b'x'; max_size]
        };
        ValuePool {
            buf,
            max_size,
            random,
        }
    }

    /// A value of `size` bytes: a slice of the pool's buffer, never a copy.
    /// `size` above the pool's `max_size` is cut to it.
    ///
    /// `rng` is drawn from only with random data (for the offset), so a seeded
    /// run without `-R` picks the same keys whether or not it sends values.
    pub fn value(&self, size: usize, rng: &mut SmallRng) -> &[u8] {
        let size = size.min(self.max_size);
        let start = if self.random {
            rng.random_range(0..=self.buf.len() - size)
        } else {
            0
        };
        &self.buf[start..start + size]
    }

    /// Whether [`value`](Self::value) draws from its `rng` (random data).
    pub fn draws(&self) -> bool {
        self.random
    }

    /// What [`value`](Self::value) gives for `size` from a pool that does not
    /// [`draw`](Self::draws): the start of the buffer.
    #[inline]
    pub fn undrawn_value(&self, size: usize) -> &[u8] {
        debug_assert!(!self.random);
        &self.buf[..size.min(self.max_size)]
    }

    /// The largest value this pool serves.
    pub fn max_size(&self) -> usize {
        self.max_size
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::keys::KeyPattern;

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

    fn rng() -> SmallRng {
        SmallRng::seed_from_u64(17)
    }

    #[test]
    fn fixed_size() {
        let mut s = ValueSizer::new(&DataSize::Fixed(32), &keys(1, 100));
        let mut r = rng();
        assert!((0..100).all(|k| s.next(k, &mut r) == 32));
        assert_eq!(s.max_size(), 32);
    }

    #[test]
    fn random_range_covers_min_to_max_uniformly() {
        let mut s = ValueSizer::new(
            &DataSize::Range {
                min: 10,
                max: 19,
                spread_over_keys: false,
            },
            &keys(1, 100),
        );
        assert_eq!(s.max_size(), 19);
        let mut r = rng();
        let mut freq = [0u32; 20];
        for _ in 0..100_000 {
            freq[s.next(1, &mut r)] += 1;
        }
        assert!(freq[..10].iter().all(|&c| c == 0));
        // Each of the 10 sizes expects 10 000; 5 sigma is 475.
        assert!(
            freq[10..].iter().all(|&c| c.abs_diff(10_000) < 500),
            "{freq:?}"
        );
    }

    #[test]
    fn spread_over_keys_maps_key_min_to_min_and_key_max_to_max() {
        let mut s = ValueSizer::new(
            &DataSize::Range {
                min: 100,
                max: 1000,
                spread_over_keys: true,
            },
            &keys(1, 10_000),
        );
        let mut r = rng();
        assert_eq!(s.next(1, &mut r), 100);
        assert_eq!(s.next(10_000, &mut r), 1000);
        // Halfway key (5000.5) gets about halfway size.
        assert!((549..=551).contains(&s.next(5_000, &mut r)));
        let sizes: Vec<usize> = (1..=10_000).map(|k| s.next(k, &mut r)).collect();
        assert!(sizes.windows(2).all(|w| w[0] <= w[1]), "not monotonic");
        assert!(sizes.iter().all(|&n| (100..=1000).contains(&n)));
        // Keys outside the range are held to its ends.
        assert_eq!(s.next(0, &mut r), 100);
        assert_eq!(s.next(u64::MAX, &mut r), 1000);
    }

    #[test]
    fn spread_over_a_single_key_is_min() {
        let mut s = ValueSizer::new(
            &DataSize::Range {
                min: 5,
                max: 50,
                spread_over_keys: true,
            },
            &keys(3, 3),
        );
        assert_eq!(s.next(3, &mut rng()), 5);
    }

    #[test]
    fn size_list_cycles_through_the_weights_as_memtier_does() {
        let list = vec![(10, 1), (100, 3), (1000, 0), (5000, 2)];
        let mut s = ValueSizer::new(&DataSize::List(list), &keys(1, 100));
        assert_eq!(s.max_size(), 5000);
        let mut r = rng();
        let sizes: Vec<usize> = (0..12).map(|_| s.next(1, &mut r)).collect();
        // Each size for its weight in a row, a zero weight skipped, then round again.
        assert_eq!(
            sizes,
            [10, 100, 100, 100, 5000, 5000, 10, 100, 100, 100, 5000, 5000]
        );
        // A copy (another client's sizer) starts from the first size.
        let fresh = ValueSizer::new(&DataSize::List(vec![(7, 2), (9, 1)]), &keys(1, 2));
        let mut copy = fresh.clone();
        assert_eq!(copy.next(1, &mut r), 7);
    }

    #[test]
    fn degenerate_lists_do_not_panic() {
        let mut r = rng();
        let mut s = ValueSizer::new(&DataSize::List(vec![(7, 0), (9, 0)]), &keys(1, 2));
        let sizes: Vec<usize> = (0..1000).map(|_| s.next(1, &mut r)).collect();
        assert!(sizes.contains(&7) && sizes.contains(&9));
        let mut s = ValueSizer::new(&DataSize::List(vec![]), &keys(1, 2));
        assert_eq!(s.next(1, &mut r), 0);
        assert_eq!(s.max_size(), 0);
    }

    #[test]
    fn fixed_pattern_values_are_x_of_the_asked_length() {
        let pool = ValuePool::new(4096, false, 1);
        let mut r = rng();
        for size in [0, 1, 32, 4096] {
            let v = pool.value(size, &mut r);
            assert_eq!(v.len(), size);
            assert!(v.iter().all(|&b| b == b'x'));
        }
        // Oversized requests are cut rather than panicking.
        assert_eq!(pool.value(5000, &mut r).len(), 4096);
    }

    #[test]
    fn random_values_are_printable_vary_and_have_the_asked_length() {
        let pool = ValuePool::new(1024, true, 1);
        let mut r = rng();
        let mut distinct = std::collections::HashSet::new();
        for size in [0, 1, 16, 1000, 1024] {
            for _ in 0..50 {
                let v = pool.value(size, &mut r);
                assert_eq!(v.len(), size);
                assert!(v.iter().all(|&b| (b'!'..=b'~').contains(&b)));
                if size == 16 {
                    distinct.insert(v.to_vec());
                }
            }
        }
        assert!(
            distinct.len() > 40,
            "random offsets should give different values"
        );
        // The bytes really are varied, not one repeated character.
        let v = pool.value(1024, &mut r);
        let kinds: std::collections::HashSet<u8> = v.iter().copied().collect();
        assert!(kinds.len() > 50);
    }

    #[test]
    fn same_seed_same_random_buffer() {
        let a = ValuePool::new(256, true, 5);
        let b = ValuePool::new(256, true, 5);
        let c = ValuePool::new(256, true, 6);
        let (mut ra, mut rb, mut rc) = (rng(), rng(), rng());
        assert_eq!(a.value(200, &mut ra), b.value(200, &mut rb));
        assert_ne!(a.value(200, &mut ra), c.value(200, &mut rc));
    }

    #[test]
    fn empty_pool() {
        let mut r = rng();
        assert_eq!(ValuePool::new(0, true, 1).value(0, &mut r), b"");
        assert_eq!(ValuePool::new(0, false, 1).value(10, &mut r), b"");
    }

    #[test]
    fn sizer_and_pool_agree_on_max() {
        let s = ValueSizer::new(&DataSize::List(vec![(64, 1), (4096, 1)]), &keys(1, 2));
        let pool = ValuePool::new(s.max_size(), true, 3);
        assert_eq!(pool.value(4096, &mut rng()).len(), 4096);
    }
}
