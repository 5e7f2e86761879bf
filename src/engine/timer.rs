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
/// A [`TimerFd`] and the instant it is armed for, so arming it again for the same
/// instant costs no syscall (a worker re-computes its next wake-up on every loop).
pub struct Alarm {
    timer: TimerFd,
    armed: Option<Instant>,
}

impl Alarm {
    /// A timer registered in `poll` under `token` when `wanted` and the platform has one;
    /// otherwise one that does nothing ([`is_precise`](Self::is_precise) says so).
    pub fn new(poll: &mio::Poll, token: mio::Token, wanted: bool) -> Alarm {
        let timer = if wanted {
            match TimerFd::new() {
                Ok(timer) if timer.register(poll.registry(), token).is_ok() => timer,
                // Without it the poll timeout wakes the caller, in millisecond steps.
                _ => TimerFd::none(),
            }
        } else {
            TimerFd::none()
        };
        Alarm { timer, armed: None }
    }

    /// Whether arming wakes the caller at the clock's precision.
    pub fn is_precise(&self) -> bool {
        self.timer.is_precise()
    }

    /// Arms the timer for `at` unless it is armed for that already.
    pub fn arm(&mut self, at: Instant, now: Instant) -> Result<(), String> {
        if self.armed.is_some_and(|armed| armed == at && armed > now) {
            return Ok(());
        }
        self.timer
            .arm_at(at)
            .map_err(|err| format!("cannot arm the open-loop timer: {err}"))?;
        self.armed = Some(at);
        Ok(())
    }
}
