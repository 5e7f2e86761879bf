//! Random numbers keyed by a request's place in the run rather than by the client that
//! sends it: request `i`'s draws are a SplitMix64 stream started from the seed and `i`.
//! Under a shared budget the requests fall to whichever client is free, so per-client
//! streams make a seeded run's values depend on that; these do not (redis-benchmark
//! draws every `__rand_int__` from one generator, so its seed fixes the values sent).

/// The odd constant SplitMix64 steps by (2^64 / golden ratio).
const GOLDEN: u64 = 0x9e37_79b9_7f4a_7c15;

/// SplitMix64's output function: a bijection that spreads every input bit.
#[inline]
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The draws of one request at a time, for one run's seed.
#[derive(Clone, Debug)]
pub struct IndexedDraws {
    seed: u64,
    state: u64,
}

impl IndexedDraws {
    pub fn new(seed: u64) -> Self {
        IndexedDraws { seed, state: 0 }
    }

    /// Starts the draws of the request at place `index` in the run (0 for its first).
    #[inline]
    pub fn start_request(&mut self, index: u64) {
        self.state = mix(self.seed ^ index.wrapping_mul(GOLDEN));
    }

    /// The request's next number below `n` (`n` > 0), by a widening multiply: the bias
    /// is below `n` / 2^64.
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        self.state = self.state.wrapping_add(GOLDEN);
        ((u128::from(mix(self.state)) * u128::from(n)) >> 64) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_draws_the_same_whoever_sends_it() {
        let draws = |index| {
            let mut d = IndexedDraws::new(7);
            d.start_request(index);
            [d.below(1_000_000), d.below(1_000_000)]
        };
        assert_eq!(draws(41), draws(41));
        assert_ne!(draws(41), draws(42));
        assert_ne!(draws(41)[0], draws(41)[1]);
        let mut d = IndexedDraws::new(7);
        d.start_request(3);
        assert!((0..1000).all(|_| d.below(10) < 10));
    }
}
