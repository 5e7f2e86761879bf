//! A kernel timer registered in a worker's `mio::Poll` (Linux `timerfd`): it raises a
//! readable event under a token of the caller's choosing, with the clock's precision
//! rather than the millisecond granularity of a poll timeout.
//!
//! Two users: a TLS handshake's deadline (armed once, relative, under the connection's
//! own token) and the open-loop scheduler (armed at absolute send times, under the
//! worker's timer token). Elsewhere than Linux the timer does nothing and says so
//! ([`TimerFd::is_precise`]): callers then fall back to the poll timeout.
//!
//! Under edge-triggered polling each expiry raises one event; re-arming resets the
//! expiry count, so the descriptor never needs a `read`.
//!
//! Arming is cheap unless it moves the machine's earliest timer: then the kernel
//! reprograms the timer device, which on a virtual machine is a trip to the hypervisor
//! (9.5 µs of CPU per `timerfd_settime` 50 µs ahead against 0.3 µs 3 ms ahead, measured
//! on the 2-core VM of docs/performance.md). The scheduler's [`Alarm`] therefore keeps a
//! few timers armed for the next wake-ups: when one fires, the others already hold the
//! wake-ups after it, and the one that fired is re-armed for a later one, behind the
//! earliest, at the cheap price.

use std::time::Instant;

pub use imp::TimerFd;

#[cfg(target_os = "linux")]
mod imp {
    use std::io;
    use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
    use std::time::{Duration, Instant};

    use mio::unix::SourceFd;
    use mio::{Interest, Registry, Token};

    /// A one-shot `timerfd` on `CLOCK_MONOTONIC` (the clock `Instant` reads), or nothing.
    pub struct TimerFd {
        fd: Option<OwnedFd>,
        /// An `Instant` and the same moment as `CLOCK_MONOTONIC` time, read back to back,
        /// to turn an `Instant` into an absolute expiry.
        base: (Instant, Duration),
    }

    fn monotonic_now() -> Duration {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `ts` is a valid, writable timespec for the duration of the call.
        unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
        Duration::new(
            ts.tv_sec.max(0) as u64,
            ts.tv_nsec.clamp(0, 999_999_999) as u32,
        )
    }

    impl TimerFd {
        pub fn new() -> io::Result<TimerFd> {
            // SAFETY: timerfd_create takes no pointers; the result is checked before use.
            let fd = unsafe {
                libc::timerfd_create(
                    libc::CLOCK_MONOTONIC,
                    libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
                )
            };
            if fd < 0 {
                return Err(io::Error::last_os_error());
            }
            let base = (Instant::now(), monotonic_now());
            Ok(TimerFd {
                // SAFETY: `fd` is a fresh descriptor that nothing else owns.
                fd: Some(unsafe { OwnedFd::from_raw_fd(fd) }),
                base,
            })
        }

        /// No timer: another deadline or the poll timeout covers it.
        pub fn none() -> TimerFd {
            TimerFd {
                fd: None,
                base: (Instant::now(), Duration::ZERO),
            }
        }

        /// Whether arming this timer raises an event at the time asked for.
        pub fn is_precise(&self) -> bool {
            self.fd.is_some()
        }

        pub fn register(&self, registry: &Registry, token: Token) -> io::Result<()> {
            match &self.fd {
                Some(fd) => {
                    registry.register(&mut SourceFd(&fd.as_raw_fd()), token, Interest::READABLE)
                }
                None => Ok(()),
            }
        }

        pub fn deregister(&self, registry: &Registry) {
            if let Some(fd) = &self.fd {
                let _ = registry.deregister(&mut SourceFd(&fd.as_raw_fd()));
            }
        }

        /// Fires once, `after` from now.
        pub fn arm_after(&self, after: Duration) -> io::Result<()> {
            self.set(0, after)
        }

        /// Fires once, at `at` (at once if `at` has passed).
        pub fn arm_at(&self, at: Instant) -> io::Result<()> {
            let (base_instant, base_mono) = self.base;
            let when = match at.checked_duration_since(base_instant) {
                Some(later) => base_mono + later,
                None => base_mono.saturating_sub(base_instant - at),
            };
            self.set(libc::TFD_TIMER_ABSTIME, when)
        }

        fn set(&self, flags: libc::c_int, value: Duration) -> io::Result<()> {
            let Some(fd) = &self.fd else {
                return Ok(());
            };
            // An all-zero value would disarm the timer instead of firing it.
            let value = value.max(Duration::from_nanos(1));
            let spec = libc::itimerspec {
                it_interval: libc::timespec {
                    tv_sec: 0,
                    tv_nsec: 0,
                },
                it_value: libc::timespec {
                    tv_sec: value.as_secs() as libc::time_t,
                    tv_nsec: value.subsec_nanos() as libc::c_long,
                },
            };
            // SAFETY: `fd` is an open timerfd and `spec` outlives the call.
            let rc = unsafe {
                libc::timerfd_settime(fd.as_raw_fd(), flags, &spec, std::ptr::null_mut())
            };
            if rc < 0 {
                return Err(io::Error::last_os_error());
            }
            Ok(())
        }

        /// Closes the timer (closing also removes it from the poll).
        pub fn close(&mut self) {
            self.fd = None;
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    use std::io;
    use std::time::{Duration, Instant};

    use mio::{Registry, Token};

    /// No kernel timer here: a TLS handshake deadline is checked on the connection's own
    /// events, and the scheduler wakes through the poll timeout (millisecond steps).
    pub struct TimerFd;

    impl TimerFd {
        pub fn new() -> io::Result<TimerFd> {
            Ok(TimerFd)
        }
        pub fn none() -> TimerFd {
            TimerFd
        }
        pub fn is_precise(&self) -> bool {
            false
        }
        pub fn register(&self, _registry: &Registry, _token: Token) -> io::Result<()> {
            Ok(())
        }
        pub fn deregister(&self, _registry: &Registry) {}
        pub fn arm_after(&self, _after: Duration) -> io::Result<()> {
            Ok(())
        }
        pub fn arm_at(&self, _at: Instant) -> io::Result<()> {
            Ok(())
        }
        pub fn close(&mut self) {}
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    use mio::{Events, Poll, Token};

    /// The timer fires at the absolute time asked for, not a millisecond step later.
    #[test]
    fn absolute_arming_fires_on_time() {
        let mut poll = Poll::new().unwrap();
        let timer = TimerFd::new().unwrap();
        timer.register(poll.registry(), Token(7)).unwrap();
        let mut events = Events::with_capacity(4);
        let mut worst = Duration::ZERO;
        for _ in 0..20 {
            let at = Instant::now() + Duration::from_micros(300);
            timer.arm_at(at).unwrap();
            loop {
                poll.poll(&mut events, Some(Duration::from_secs(5)))
                    .unwrap();
                if events.iter().any(|e| e.token() == Token(7)) {
                    break;
                }
            }
            let now = Instant::now();
            assert!(now >= at, "fired early");
            worst = worst.max(now - at);
        }
        // A loaded machine delays wake-ups, but not by whole poll-timeout milliseconds
        // on every one of 20 tries.
        assert!(
            worst < Duration::from_millis(50),
            "worst lateness {worst:?}"
        );
    }

    #[test]
    fn a_passed_time_fires_at_once() {
        let mut poll = Poll::new().unwrap();
        let timer = TimerFd::new().unwrap();
        timer.register(poll.registry(), Token(1)).unwrap();
        timer
            .arm_at(Instant::now() - Duration::from_millis(5))
            .unwrap();
        let mut events = Events::with_capacity(4);
        poll.poll(&mut events, Some(Duration::from_secs(5)))
            .unwrap();
        assert!(events.iter().any(|e| e.token() == Token(1)));
    }
}
/// How many wake-ups an [`Alarm`] keeps armed ahead. A wake-up from idle on the VM of
/// docs/performance.md takes 25-35 µs at the median and often over 50 µs (two positions
/// at 20 000/s): with a few wake-ups armed ahead, those that fall due while the worker is
/// late are held already, and only the timers that fired are re-armed, behind them.
pub const AHEAD: usize = 4;

/// [`AHEAD`] [`TimerFd`]s, each with the instant it is armed for: the next wake-ups, so a
/// wake-up already armed costs no syscall (a worker re-computes its next wake-up on every
/// loop) and re-arming a spent timer never moves the earliest expiry.
pub struct Alarm {
    timers: [TimerFd; AHEAD],
    armed: [Option<Instant>; AHEAD],
}

impl Alarm {
    /// Timers registered in `poll` under `token` when `wanted` and the platform has them;
    /// otherwise ones that do nothing ([`is_precise`](Self::is_precise) says so).
    pub fn new(poll: &mio::Poll, token: mio::Token, wanted: bool) -> Alarm {
        let make = |_| {
            if !wanted {
                return TimerFd::none();
            }
            match TimerFd::new() {
                Ok(timer) if timer.register(poll.registry(), token).is_ok() => timer,
                // Without it the poll timeout wakes the caller, in millisecond steps.
                _ => TimerFd::none(),
            }
        };
        let timers: [TimerFd; AHEAD] = std::array::from_fn(make);
        let timers = if timers.iter().all(TimerFd::is_precise) {
            timers
        } else {
            std::array::from_fn(|_| TimerFd::none())
        };
        Alarm {
            timers,
            armed: [None; AHEAD],
        }
    }

    /// Whether arming wakes the caller at the clock's precision.
    pub fn is_precise(&self) -> bool {
        self.timers[0].is_precise()
    }

    /// Makes sure the caller wakes at each of the first [`AHEAD`] distinct times of
    /// `wanted` (sorted: the next wake-up first; one that has passed by `now` fires at once);
    /// only timers not armed for them already are set. A timer armed for a wanted time
    /// that passed since `now` has fired, and its event wakes the caller's next poll.
    pub fn arm(&mut self, wanted: &[Instant], now: Instant) -> Result<(), String> {
        let mut kept = [false; AHEAD];
        // Which timers have fired: by the clock now, not at the caller's `now`.
        let mut fresh = None;
        let mut previous = None;
        let mut taken = 0;
        for &at in wanted {
            // Two wanted at the same instant share a timer.
            if previous == Some(at) {
                continue;
            }
            if taken == AHEAD {
                break;
            }
            taken += 1;
            previous = Some(at);
            if let Some(held) = (0..AHEAD).find(|&i| self.armed[i] == Some(at) && at > now) {
                kept[held] = true;
                continue;
            }
            let slot = pick(&self.armed, &kept, *fresh.get_or_insert_with(Instant::now));
            self.timers[slot]
                .arm_at(at)
                .map_err(|err| format!("cannot arm the open-loop timer: {err}"))?;
            self.armed[slot] = Some(at);
            kept[slot] = true;
        }
        Ok(())
    }
}

/// Which timer to re-arm: not one `kept` for an earlier wanted time; one that has fired
/// (or was never armed) first, else the one armed for the latest time, so earlier expiries
/// stay where they are.
fn pick(armed: &[Option<Instant>; AHEAD], kept: &[bool; AHEAD], now: Instant) -> usize {
    let free = || (0..AHEAD).filter(|&i| !kept[i]);
    free()
        .find(|&i| armed[i].is_none_or(|t| t <= now))
        .or_else(|| free().max_by_key(|&i| armed[i]))
        .unwrap_or(0)
}

#[cfg(test)]
mod alarm_tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn the_timer_re_armed_is_spent_or_the_latest() {
        let t0 = Instant::now();
        let us = |n| Some(t0 + Duration::from_micros(n));
        let none = [false; AHEAD];
        let armed = [us(50), us(100), us(150), us(200)];
        // At t0 + 60 the first has fired: it takes the next wake-up to arm.
        assert_eq!(pick(&armed, &none, t0 + Duration::from_micros(60)), 0);
        // None has fired: the latest moves, the earlier expiries stay.
        assert_eq!(pick(&armed, &none, t0), 3);
        assert_eq!(pick(&[us(50), None, us(150), us(200)], &none, t0), 1);
        // Timers kept for earlier wanted times are never taken.
        assert_eq!(pick(&armed, &[true, false, false, true], t0), 2);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn wake_ups_armed_ahead_cost_no_re_arming() {
        let poll = mio::Poll::new().unwrap();
        let mut alarm = Alarm::new(&poll, mio::Token(3), true);
        assert!(alarm.is_precise());
        let t0 = Instant::now() + Duration::from_secs(60);
        let at = |k: u64| t0 + Duration::from_micros(50 * k);
        alarm
            .arm(&[at(0), at(1), at(2), at(3)], Instant::now())
            .unwrap();
        assert_eq!(
            alarm.armed,
            [Some(at(0)), Some(at(1)), Some(at(2)), Some(at(3))]
        );
        // Two positions on: the timers of the two still wanted stay, the other two go
        // ahead (which of them takes which does not matter).
        alarm
            .arm(
                &[at(2), at(3), at(4), at(5)],
                at(1) + Duration::from_micros(1),
            )
            .unwrap();
        let mut moved = [alarm.armed[0], alarm.armed[1]];
        moved.sort();
        assert_eq!(moved, [Some(at(4)), Some(at(5))]);
        assert_eq!(alarm.armed[2..], [Some(at(2)), Some(at(3))]);
        // Nothing new wanted: nothing changes.
        let before = alarm.armed;
        alarm.arm(&[at(2), at(3)], at(1)).unwrap();
        assert_eq!(alarm.armed, before);
    }
}
