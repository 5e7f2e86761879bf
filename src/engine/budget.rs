//! A request budget shared by every client of a run (`StopAt::TotalRequests`): a client
//! takes one request at a time, or a pipeline's room at once, whichever client is free,
//! so a slow connection never holds back requests a fast one could send.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use mio::Waker;

/// `total` requests for all clients, handed out one at a time or a batch at a time.
#[derive(Debug)]
pub struct RequestBudget {
    total: u64,
    /// Requests taken so far; may pass `total` (each take past it is a refusal), which a
    /// `u64` cannot overflow in any real run.
    taken: AtomicU64,
    /// The workers' wakers, woken when the last request is taken: in open loop a worker
    /// whose clients wait for their next position would otherwise see the budget spent
    /// only at its next wake-up (a second later at `--rps 1`).
    wake_when_spent: OnceLock<Arc<Vec<Waker>>>,
}

impl RequestBudget {
    /// A budget of `total` requests.
    pub fn new(total: u64) -> Self {
        RequestBudget {
            total,
            taken: AtomicU64::new(0),
            wake_when_spent: OnceLock::new(),
        }
    }

    /// Wakes `wakers` when the last request is taken (set once, when the workers exist).
    pub fn wake_when_spent(&self, wakers: Arc<Vec<Waker>>) {
        let _ = self.wake_when_spent.set(wakers);
    }

    /// Takes one request; `false` once the budget is spent. One atomic add per request,
    /// with no retry loop, so clients on several threads never spin on it.
    #[inline]
    pub fn take(&self) -> bool {
        self.take_up_to(1) == 1
    }

    /// Takes up to `n` requests at once (a pipeline's batch); returns how many it got, 0
    /// once the budget is spent. Still one atomic add: what it takes past the total is
    /// refused, as [`take`](Self::take)'s past it are.
    #[inline]
    pub fn take_up_to(&self, n: u64) -> u64 {
        self.take_numbered(n).1
    }

    /// [`take_up_to`](Self::take_up_to), with the place in the run of the first request
    /// taken (0 for the run's first): the requests taken are that one and the next ones.
    #[inline]
    pub fn take_numbered(&self, n: u64) -> (u64, u64) {
        let before = self.taken.fetch_add(n, Ordering::Relaxed);
        let got = self.total.saturating_sub(before).min(n);
        if got > 0 && before + got == self.total {
            self.spent();
        }
        (before, got)
    }

    /// The last request was just taken: every worker looks again.
    #[cold]
    fn spent(&self) {
        if let Some(wakers) = self.wake_when_spent.get() {
            for waker in wakers.iter() {
                let _ = waker.wake();
            }
        }
    }

    /// Whether any request is left to take.
    #[inline]
    pub fn has_left(&self) -> bool {
        self.taken.load(Ordering::Relaxed) < self.total
    }

    /// Requests not taken yet.
    pub fn left(&self) -> u64 {
        self.total
            .saturating_sub(self.taken.load(Ordering::Relaxed))
    }

    /// The budget's size.
    pub fn total(&self) -> u64 {
        self.total
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn hands_out_exactly_the_total_across_threads() {
        let budget = Arc::new(RequestBudget::new(10_000));
        let taken: u64 = (0..4)
            .map(|_| {
                let budget = Arc::clone(&budget);
                std::thread::spawn(move || {
                    let mut mine = 0;
                    while budget.take() {
                        mine += 1;
                    }
                    mine
                })
            })
            .collect::<Vec<_>>()
            .into_iter()
            .map(|h| h.join().unwrap())
            .sum();
        assert_eq!(taken, 10_000);
        assert!(!budget.has_left());
        assert!(!budget.take());
        assert_eq!(budget.total(), 10_000);
    }

    #[test]
    fn batches_hand_out_exactly_the_total_across_threads() {
        let budget = Arc::new(RequestBudget::new(10_007));
        let taken: u64 = (0..4)
            .map(|_| {
                let budget = Arc::clone(&budget);
                std::thread::spawn(move || {
                    let mut mine = 0;
                    loop {
                        match budget.take_up_to(16) {
                            0 => break mine,
                            got => mine += got,
                        }
                    }
                })
            })
            .collect::<Vec<_>>()
            .into_iter()
            .map(|h| h.join().unwrap())
            .sum();
        assert_eq!(taken, 10_007);
        assert!(!budget.has_left());
        assert_eq!(budget.take_up_to(16), 0);
        assert!(!budget.take());
    }

    #[test]
    fn a_batch_past_the_end_gets_what_is_left() {
        let budget = RequestBudget::new(5);
        assert_eq!(budget.take_up_to(3), 3);
        assert_eq!(budget.take_up_to(3), 2);
        assert_eq!(budget.take_up_to(3), 0);
        assert!(!budget.take());
    }
}
