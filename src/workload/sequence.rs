//! Which kind of request a client sends next: the SET:GET sequence (`--ratio=SETS:GETS`),
//! or which arbitrary command (each `ratio` times in a row).

/// The kind of a generated request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpKind {
    Set,
    Get,
}

/// Cycles through `sets` SETs followed by `gets` GETs, for ever.
///
/// memtier sends its SETs first and then its GETs within each cycle, so a
/// `--ratio=1:10` run starts with one SET and a `-n 5 --ratio=2:3` client sends
/// `SET SET GET GET GET`. Matching that order keeps request counts per command
/// identical to memtier's for any `-n`.
#[derive(Clone, Debug)]
pub struct RatioSequence {
    sets: u32,
    /// `sets + gets`, kept as u64 so `u32::MAX:u32::MAX` cannot overflow; never 0 (`0:0`
    /// is kept as `0:1`, which yields the same), so `next` need not check for it.
    cycle: u64,
    /// Position within the current cycle, in `0..cycle`.
    pos: u64,
}

impl RatioSequence {
    /// A sequence of `sets` SETs then `gets` GETs, repeated.
    ///
    /// `1:0` yields only SETs and `0:1` only GETs. The configuration never holds
    /// `0:0`; if it is passed anyway the sequence yields only GETs rather than
    /// panicking, since a read-only run cannot damage data.
    pub fn new(sets: u32, gets: u32) -> Self {
        RatioSequence {
            sets,
            cycle: (u64::from(sets) + u64::from(gets)).max(1),
            pos: 0,
        }
    }

    /// How many GETs follow in the current cycle after the one just returned (a
    /// multi-key GET takes up to this many more, as memtier's MGET does).
    pub fn gets_left_in_cycle(&self) -> u64 {
        if self.pos == 0 {
            0
        } else {
            self.cycle - self.pos
        }
    }

    /// Skips `n` GETs of the current cycle (they were folded into a multi-key GET).
    pub fn skip(&mut self, n: u64) {
        for _ in 0..n {
            self.next();
        }
    }

    /// The kind of the next request.
    #[allow(clippy::should_implement_trait)] // endless and infallible: not an Iterator
    #[inline]
    pub fn next(&mut self) -> OpKind {
        let kind = if self.pos < u64::from(self.sets) {
            OpKind::Set
        } else {
            OpKind::Get
        };
        self.pos += 1;
        if self.pos == self.cycle {
            self.pos = 0;
        }
        kind
    }
}

/// Which command a client sends next: each command `ratio` times in a row, in order, for
/// ever (ratios 2 and 1 give `0 0 1 0 0 1 ...`), as memtier cycles its `--command` list.
#[derive(Clone, Debug)]
pub struct CommandSequence {
    ratios: Box<[u32]>,
    index: usize,
    sent: u32,
    any: bool,
}

impl CommandSequence {
    /// A sequence over `ratios`. A zero ratio is skipped; if none is positive (the config
    /// never allows it) every call returns 0 rather than panicking.
    pub fn new(ratios: &[u32]) -> Self {
        CommandSequence {
            ratios: ratios.into(),
            index: 0,
            sent: 0,
            any: ratios.iter().any(|&r| r > 0),
        }
    }

    /// Index of the next command.
    #[allow(clippy::should_implement_trait)] // endless and infallible: not an Iterator
    pub fn next(&mut self) -> usize {
        if !self.any {
            return 0;
        }
        while self.sent >= self.ratios[self.index] {
            self.index = (self.index + 1) % self.ratios.len();
            self.sent = 0;
        }
        self.sent += 1;
        self.index
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use OpKind::{Get, Set};

    fn take(seq: &mut RatioSequence, n: usize) -> Vec<OpKind> {
        (0..n).map(|_| seq.next()).collect()
    }

    #[test]
    fn sets_come_first_then_gets_and_the_cycle_repeats() {
        let mut seq = RatioSequence::new(2, 3);
        assert_eq!(
            take(&mut seq, 12),
            vec![Set, Set, Get, Get, Get, Set, Set, Get, Get, Get, Set, Set]
        );
    }

    #[test]
    fn memtier_default_ratio_one_to_ten() {
        let mut seq = RatioSequence::new(1, 10);
        let ops = take(&mut seq, 110);
        assert_eq!(ops.iter().filter(|&&k| k == Set).count(), 10);
        assert_eq!(ops.iter().filter(|&&k| k == Get).count(), 100);
        assert_eq!(ops[0], Set);
        assert_eq!(ops[11], Set);
        assert!(ops[1..11].iter().all(|&k| k == Get));
    }

    #[test]
    fn one_to_one_alternates() {
        let mut seq = RatioSequence::new(1, 1);
        assert_eq!(take(&mut seq, 6), vec![Set, Get, Set, Get, Set, Get]);
    }

    #[test]
    fn only_sets_and_only_gets() {
        let mut seq = RatioSequence::new(1, 0);
        assert!(take(&mut seq, 100).iter().all(|&k| k == Set));
        let mut seq = RatioSequence::new(0, 1);
        assert!(take(&mut seq, 100).iter().all(|&k| k == Get));
        let mut seq = RatioSequence::new(7, 0);
        assert!(take(&mut seq, 100).iter().all(|&k| k == Set));
    }

    #[test]
    fn zero_to_zero_does_not_panic() {
        let mut seq = RatioSequence::new(0, 0);
        assert_eq!(take(&mut seq, 3), vec![Get, Get, Get]);
    }

    #[test]
    fn huge_ratio_does_not_overflow() {
        let mut seq = RatioSequence::new(u32::MAX, u32::MAX);
        assert_eq!(take(&mut seq, 3), vec![Set, Set, Set]);
    }

    #[test]
    fn sequence_follows_ratios() {
        let mut s = CommandSequence::new(&[2, 1]);
        let got: Vec<_> = (0..9).map(|_| s.next()).collect();
        assert_eq!(got, [0, 0, 1, 0, 0, 1, 0, 0, 1]);
        let mut s = CommandSequence::new(&[1, 3, 1]);
        let got: Vec<_> = (0..10).map(|_| s.next()).collect();
        assert_eq!(got, [0, 1, 1, 1, 2, 0, 1, 1, 1, 2]);
        let mut s = CommandSequence::new(&[0, 2, 0]);
        let got: Vec<_> = (0..4).map(|_| s.next()).collect();
        assert_eq!(got, [1, 1, 1, 1]);
        let mut s = CommandSequence::new(&[]);
        assert_eq!(s.next(), 0);
        let mut s = CommandSequence::new(&[0, 0]);
        assert_eq!(s.next(), 0);
    }
}
