//! Busy polling (`Load::busy_poll`): a worker polls without waiting for a while before it
//! sleeps. A thread put to sleep in `epoll_wait` is woken by its reply's arrival and
//! must then be scheduled again, which on a virtual machine takes tens of microseconds:
//! at a few connections, most of a round trip. Polling first takes a reply (or a timer)
//! that comes within the spin at once; the thread's core is busy meanwhile.

use std::time::{Duration, Instant};

use mio::{Events, Poll};

/// `--busy-poll`: polls without waiting until an event comes or `spin` has passed (from
/// now: the spin is whole however long the pass before it took), and only then sleeps,
/// until `deadline`. Returns with no event when the spin reached the deadline (the loop
/// then does what was due).
pub fn poll_spinning(
    poll: &mut Poll,
    events: &mut Events,
    spin: Duration,
    deadline: Instant,
) -> std::io::Result<()> {
    let spin_until = (Instant::now() + spin).min(deadline);
    loop {
        poll.poll(events, Some(Duration::ZERO))?;
        if !events.is_empty() {
            return Ok(());
        }
        let at = Instant::now();
        if at >= spin_until {
            let rest = deadline.saturating_duration_since(at);
            if rest.is_zero() {
                return Ok(());
            }
            return poll.poll(events, Some(rest));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mio::{Token, Waker};

    #[test]
    fn an_event_ends_the_spin_at_once() {
        let mut poll = Poll::new().unwrap();
        let waker = Waker::new(poll.registry(), Token(7)).unwrap();
        waker.wake().unwrap();
        let mut events = Events::with_capacity(8);
        let start = Instant::now();
        // A spin and a deadline far longer than the event needs: the event ends it.
        let long = Duration::from_secs(10);
        poll_spinning(&mut poll, &mut events, long, start + long).unwrap();
        assert_eq!(
            events.iter().map(|e| e.token()).collect::<Vec<_>>(),
            [Token(7)]
        );
    }

    #[test]
    fn with_nothing_to_take_it_spins_then_sleeps_out_the_timeout() {
        let mut poll = Poll::new().unwrap();
        let mut events = Events::with_capacity(8);
        let start = Instant::now();
        let (spin, timeout) = (Duration::from_millis(2), Duration::from_millis(20));
        poll_spinning(&mut poll, &mut events, spin, start + timeout).unwrap();
        assert!(events.is_empty());
        assert!(start.elapsed() >= timeout, "{:?}", start.elapsed());
    }

    #[test]
    fn a_spin_longer_than_the_timeout_ends_at_the_timeout() {
        let mut poll = Poll::new().unwrap();
        let mut events = Events::with_capacity(8);
        let start = Instant::now();
        let (spin, timeout) = (Duration::from_secs(600), Duration::from_millis(5));
        poll_spinning(&mut poll, &mut events, spin, start + timeout).unwrap();
        assert!(events.is_empty());
        let took = start.elapsed();
        // Ended by the timeout, not the spin (a loaded machine may add a little).
        assert!(
            took >= timeout && took < Duration::from_secs(60),
            "{took:?}"
        );
    }
}
