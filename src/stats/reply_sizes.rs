//! How many replies had each number of elements (an array reply's length): the reply
//! histogram, recorded only when the plan asks for it.

/// Sizes below this are counted without growing the table (grown, rarely, past it).
const INITIAL_SIZES: usize = 128;

/// `counts[n]` replies had `n` elements.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReplySizes {
    counts: Vec<u64>,
}

impl ReplySizes {
    /// No replies yet, with room for the usual sizes.
    pub fn new() -> Self {
        Self::with_max(INITIAL_SIZES - 1)
    }

    /// No replies yet, with room for sizes up to `max` before growing.
    pub fn with_max(max: usize) -> Self {
        ReplySizes {
            counts: vec![0; max + 1],
        }
    }

    /// From per-size counts (`counts[n]` replies had `n` elements).
    pub fn from_counts(counts: Vec<u64>) -> Self {
        ReplySizes { counts }
    }

    /// Counts `n` more replies of `size` elements.
    #[inline]
    pub fn record(&mut self, size: usize, n: u64) {
        if size >= self.counts.len() {
            self.counts.resize(size + 1, 0);
        }
        self.counts[size] += n;
    }

    /// Adds another histogram's counts.
    pub fn merge(&mut self, other: &ReplySizes) {
        for (size, &n) in other.counts.iter().enumerate() {
            if n > 0 {
                self.record(size, n);
            }
        }
    }

    /// Forgets every count, keeping the memory.
    pub fn reset(&mut self) {
        self.counts.iter_mut().for_each(|n| *n = 0);
    }

    /// Replies counted.
    pub fn total(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// `(size, count)` for every size seen, smallest first.
    pub fn iter(&self) -> impl Iterator<Item = (usize, u64)> + '_ {
        self.counts
            .iter()
            .enumerate()
            .filter(|&(_, &n)| n > 0)
            .map(|(size, &n)| (size, n))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_grow_merge_and_reset() {
        let mut a = ReplySizes::with_max(2);
        a.record(1, 2);
        a.record(7, 1);
        let mut b = ReplySizes::new();
        b.record(1, 1);
        b.merge(&a);
        assert_eq!(b.iter().collect::<Vec<_>>(), [(1, 3), (7, 1)]);
        assert_eq!(b.total(), 4);
        b.reset();
        assert_eq!(b.total(), 0);
    }
}
