//! This process's part of a workload spread over several processes (`--shard=I/N`): which
//! clients it plays, its share of the key range and of any whole-workload figure, and the
//! seed it draws with. One process is shard 0 of 1, and then nothing changes.
//!
//! The shards' clients are numbered as one set: shard I's clients are the I-th block of
//! `N × clients` global clients. Key patterns that split the range between clients (S,
//! P) and `-n allkeys` split it over the global clients, so the shards together cover
//! every key exactly once, with the same arithmetic that covers it within one process
//! ([`crate::workload::keys::partition`]). Random patterns (R, G, Z) draw from the whole
//! range; each shard seeds them differently, and reproducibly.

use crate::plan::Rate;
use crate::workload::keys::partition;

/// Most shards of one workload: far beyond any fleet of generators, and small enough
/// that global client numbers stay countable.
pub const MAX_SHARDS: u32 = 1_000_000;

/// Shard `index` of `count` (`index < count`); [`Shard::WHOLE`] is a lone process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub index: u32,
    pub count: u32,
}

impl Default for Shard {
    fn default() -> Self {
        Shard::WHOLE
    }
}

/// Why a text is no shard's `I/N`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BadShard {
    /// Not two runs of digits around one `/`.
    NotIOverN,
    /// N above [`MAX_SHARDS`].
    TooMany,
    /// I or N past what a shard number holds (`u32`).
    NumberTooLarge,
    /// N is 0.
    NoShards,
    /// I is N (`count`) or more.
    IndexNotBelowCount { count: u32 },
}

/// Spreads the bits of a shard number over a seed (the 64-bit golden ratio, as
/// SplitMix64 steps): shard seeds lie far apart, so per-client seeds (`seed + client`)
/// of different shards never meet.
const SEED_STEP: u64 = 0x9e37_79b9_7f4a_7c15;

impl Shard {
    /// The whole workload in one process.
    pub const WHOLE: Shard = Shard { index: 0, count: 1 };

    /// The shard that `I/N` names (shard I, from 0, of N), or why the text names none:
    /// the one rule for `--shard` on a command line and a result file's `"shard"`.
    pub fn parse(text: &str) -> Result<Shard, BadShard> {
        let number = |s: &str| -> Result<u32, BadShard> {
            if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
                return Err(BadShard::NotIOverN);
            }
            s.parse::<u32>().map_err(|_| BadShard::NumberTooLarge)
        };
        let (index, count) = text.split_once('/').ok_or(BadShard::NotIOverN)?;
        let (index, count) = (number(index)?, number(count)?);
        if count == 0 {
            Err(BadShard::NoShards)
        } else if count > MAX_SHARDS {
            Err(BadShard::TooMany)
        } else if index >= count {
            Err(BadShard::IndexNotBelowCount { count })
        } else {
            Ok(Shard { index, count })
        }
    }

    /// Whether the workload is split (more than one shard).
    pub fn is_split(&self) -> bool {
        self.count > 1
    }

    /// Client `client` of this shard's `clients` as a client of all shards together:
    /// `(global index, global count)`.
    pub fn global_client(&self, client: usize, clients: usize) -> (usize, usize) {
        let count = self.count as usize;
        (self.index as usize * clients + client, count * clients)
    }

    /// This shard's part of `[start, start + len)` of the key range: `(first, len)`.
    /// Slices of consecutive shards meet exactly, as the clients' slices do.
    pub fn key_slice(&self, start: u64, len: u64) -> (u64, u64) {
        partition(start, len, self.index as usize, self.count as usize)
    }

    /// This shard's share of a whole-workload figure (a total request rate): the shares
    /// differ by at most one and add up to `total` exactly.
    pub fn share(&self, total: u64) -> u64 {
        self.key_slice(0, total).1
    }

    /// This shard's part of a total rate: its [`share`](Self::share) of the requests
    /// per second (the shards' rates add up to the total), with a Poisson seed of its
    /// own so the shards' arrivals do not fall in lock step. `None` when the total is
    /// below the number of shards (a shard would get no rate at all).
    pub fn rate(&self, total: Rate) -> Option<Rate> {
        let per_sec = self.share(total.per_sec);
        (per_sec > 0).then(|| Rate {
            per_sec,
            seed: self.seed(total.seed),
            ..total
        })
    }

    /// The base seed of this shard: `base` itself for a lone process, else a seed of the
    /// shard's own derived from it (the same for the same shard every time).
    pub fn seed(&self, base: u64) -> u64 {
        if self.is_split() {
            base.wrapping_add(
                u64::from(self.index)
                    .wrapping_add(1)
                    .wrapping_mul(SEED_STEP),
            )
        } else {
            base
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_text_is_i_over_n_with_i_below_n() {
        assert_eq!(Shard::parse("2/3"), Ok(Shard { index: 2, count: 3 }));
        assert_eq!(Shard::parse("0/1"), Ok(Shard::WHOLE));
        for (text, why) in [
            ("3/3", BadShard::IndexNotBelowCount { count: 3 }),
            ("0/0", BadShard::NoShards),
            ("0/1000001", BadShard::TooMany),
            ("0/99999999999", BadShard::NumberTooLarge),
            ("1", BadShard::NotIOverN),
            ("-1/3", BadShard::NotIOverN),
            ("+1/3", BadShard::NotIOverN),
            ("1/3/4", BadShard::NotIOverN),
            ("/3", BadShard::NotIOverN),
        ] {
            assert_eq!(Shard::parse(text), Err(why), "{text}");
        }
    }

    #[test]
    fn shards_cover_a_range_exactly_once() {
        for count in 1..=7u32 {
            let mut next = 10;
            for index in 0..count {
                let (first, len) = Shard { index, count }.key_slice(10, 3000);
                assert_eq!(
                    first, next,
                    "shard {index}/{count} starts where the last ended"
                );
                next = first + len;
            }
            assert_eq!(next, 3010);
        }
    }

    #[test]
    fn shard_rates_add_up_to_the_total() {
        use crate::plan::Arrival;
        let total = Rate {
            per_sec: 2001,
            arrival: Arrival::Poisson,
            seed: 7,
            burst: 1,
        };
        let rates: Vec<Rate> = (0..2)
            .map(|index| Shard { index, count: 2 }.rate(total).unwrap())
            .collect();
        assert_eq!(rates[0].per_sec + rates[1].per_sec, 2001);
        assert!(rates[0].per_sec.abs_diff(rates[1].per_sec) <= 1);
        assert_ne!(rates[0].seed, rates[1].seed, "arrivals not in lock step");
        assert_eq!(rates[0].arrival, Arrival::Poisson);
        assert_eq!(Shard::WHOLE.rate(total), Some(total));
        let small = Rate {
            per_sec: 2,
            ..total
        };
        assert_eq!(Shard { index: 0, count: 3 }.rate(small), None);
    }

    #[test]
    fn global_clients_of_a_shard_are_its_block() {
        let s = Shard { index: 2, count: 3 };
        assert_eq!(s.global_client(0, 4), (8, 12));
        assert_eq!(s.global_client(3, 4), (11, 12));
        assert_eq!(Shard::WHOLE.global_client(3, 4), (3, 4));
        // The clients of shard I together own shard I's key slice, to the key.
        let (len, clients) = (3000u64, 4usize);
        for index in 0..3 {
            let shard = Shard { index, count: 3 };
            let (first, total) = shard.key_slice(1, len);
            let owned: u64 = (0..clients)
                .map(|c| {
                    let (g, n) = shard.global_client(c, clients);
                    partition(1, len, g, n).1
                })
                .sum();
            let (g0, n) = shard.global_client(0, clients);
            assert_eq!(partition(1, len, g0, n).0, first);
            assert_eq!(owned, total);
        }
    }

    #[test]
    fn shares_add_up_and_seeds_differ() {
        let total: u64 = (0..3)
            .map(|index| Shard { index, count: 3 }.share(1000))
            .sum();
        assert_eq!(total, 1000);
        assert_eq!(Shard::WHOLE.share(1000), 1000);
        assert_eq!(Shard::WHOLE.seed(42), 42);
        let seeds: Vec<u64> = (0..3)
            .map(|index| Shard { index, count: 3 }.seed(42))
            .collect();
        assert!(seeds[0] != seeds[1] && seeds[1] != seeds[2] && seeds[0] != 42);
        assert_eq!(
            Shard { index: 1, count: 3 }.seed(42),
            seeds[1],
            "reproducible"
        );
    }
}
