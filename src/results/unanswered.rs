//! A closed-loop run's requests still unanswered when it ended. A closed loop sends a
//! request only when the one before it was answered, so a server that stops answering
//! shows as fewer requests, not as latency: a frozen server's requests never reach the
//! figures, and a run frozen for most of its time reads as a healthy short one. The
//! count and the oldest one's age say so (open loop has its own, in the schedule's
//! `Unfinished`).

/// Below this age an unanswered request is not worth a warning, however fast the
/// answered ones were: a busy machine delays a poll by a few milliseconds, and requests
/// cut off by the end of every `--test-time` run are that young.
pub const WARN_FROM_US: u64 = 100_000;

/// Requests sent but unanswered when a closed-loop run ended (sent after the warm-up).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Unanswered {
    pub requests: u64,
    /// How long before the end the oldest of them was sent, µs (0 when none).
    pub oldest_age_us: u64,
    /// How the run's front end spells the flag that sets a request rate (`--rate`,
    /// zbench's `-rps`), which the warning points to: an open loop measures stalls.
    pub rate_flag: &'static str,
}

impl Default for Unanswered {
    fn default() -> Self {
        Unanswered {
            requests: 0,
            oldest_age_us: 0,
            // memtier's spelling: merged and re-read files are memtier-shaped.
            rate_flag: "--rate",
        }
    }
}

impl Unanswered {
    /// Adds `other` (another thread's, another run's) into `self` (whose `rate_flag`
    /// stays).
    pub fn merge(&mut self, other: &Unanswered) {
        self.requests += other.requests;
        self.oldest_age_us = self.oldest_age_us.max(other.oldest_age_us);
    }

    /// Whether the figures hide a stall: the oldest unanswered request waited longer than
    /// every answered one took (`slowest_us`, the run's highest latency) and than
    /// [`WARN_FROM_US`]. A slow workload's last requests (a blocking command) are younger
    /// than its slowest answers and are not.
    pub fn hides_a_stall(&self, slowest_us: u64) -> bool {
        self.requests > 0 && self.oldest_age_us > slowest_us.max(WARN_FROM_US)
    }

    /// The warning, one line without its `warning: ` (for stderr and the JSON).
    pub fn warning(&self, slowest_us: u64) -> String {
        let n = self.requests;
        let (requests, were) = match n {
            1 => ("1 request".to_string(), "was"),
            _ => (format!("{n} requests"), "were"),
        };
        // An empty histogram's highest value is 0: nothing was answered at all.
        let slowest = match slowest_us {
            0 => "none was answered".to_string(),
            us => format!("the slowest answered took {}", age(us)),
        };
        format!(
            "{requests} {were} still unanswered when the run ended, the oldest sent {} before; \
             no latency figure counts them ({slowest}): a closed loop \
             waits for each reply, so a server that stops answering shows as fewer \
             requests, not as latency ({} measures stalls)",
            age(self.oldest_age_us),
            self.rate_flag
        )
    }
}

/// A duration in µs as people read it: `3.5 s`, `250 ms`, `0.412 ms`.
fn age(us: u64) -> String {
    if us >= 1_000_000 {
        format!("{:.1} s", us as f64 / 1e6)
    } else if us >= 10_000 {
        format!("{} ms", us / 1000)
    } else {
        format!("{:.3} ms", us as f64 / 1000.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_with_no_answer_says_so_rather_than_a_zero_latency() {
        let frozen = Unanswered {
            requests: 3,
            oldest_age_us: 12_000_000,
            ..Unanswered::default()
        };
        assert!(frozen.hides_a_stall(0));
        let warning = frozen.warning(0);
        assert!(
            warning.contains("no latency figure counts them (none was answered)"),
            "{warning}"
        );
    }

    #[test]
    fn only_an_old_request_beyond_the_slowest_answer_is_a_stall() {
        let frozen = Unanswered {
            requests: 20,
            oldest_age_us: 3_512_000,
            ..Unanswered::default()
        };
        assert!(frozen.hides_a_stall(9_100));
        assert_eq!(
            frozen.warning(9_100),
            "20 requests were still unanswered when the run ended, the oldest sent 3.5 s \
             before; no latency figure counts them (the slowest answered took 9.100 ms): a \
             closed loop waits for each reply, so a server that stops answering shows as \
             fewer requests, not as latency (--rate measures stalls)"
        );
        // The end of any run cuts requests off young.
        let cut = Unanswered {
            requests: 20,
            oldest_age_us: 400,
            ..Unanswered::default()
        };
        assert!(!cut.hides_a_stall(300));
        // Nor is a slow workload's last request, younger than its slowest answer.
        assert!(!frozen.hides_a_stall(5_000_000));
        assert!(!Unanswered::default().hides_a_stall(0));
        let one = Unanswered {
            requests: 1,
            oldest_age_us: 250_000,
            rate_flag: "-rps",
        };
        assert!(one.warning(0).starts_with("1 request was still unanswered"));
        assert!(one.warning(0).contains("sent 250 ms before"));
        // Each front end points to its own rate flag.
        assert!(one.warning(0).ends_with("(-rps measures stalls)"));
    }

    #[test]
    fn merging_adds_requests_and_keeps_the_oldest() {
        let mut all = Unanswered {
            requests: 3,
            oldest_age_us: 10,
            ..Unanswered::default()
        };
        all.merge(&Unanswered {
            requests: 2,
            oldest_age_us: 70,
            ..Unanswered::default()
        });
        assert_eq!(
            all,
            Unanswered {
                requests: 5,
                oldest_age_us: 70,
                ..Unanswered::default()
            }
        );
    }
}
