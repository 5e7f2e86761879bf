//! redis-benchmark's live output, as the engine's observer: the `SET: rps=...` line
//! rewritten in place every 250 ms while a test runs (on a terminal), or `-I`'s
//! `clients: N` status.

use super::render::{LiveLine, LiveSample, idle_status};
use crate::console::print_now;
use crate::engine::{Progress, RunObserver, RunStart};

/// What the live output shows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Showing {
    /// Nothing (`--csv`, or not a terminal).
    Nothing,
    /// The live line of the test with this title.
    Test(String),
    /// `-I`: the connections up.
    Idle,
}

/// The live output's state between progress ticks.
#[derive(Debug)]
pub struct Live {
    showing: Showing,
    line: LiveLine,
    last: Progress,
}

impl Live {
    /// Live output that shows `showing`.
    pub fn new(showing: Showing) -> Live {
        Live {
            showing,
            line: LiveLine::default(),
            last: Progress::default(),
        }
    }

    /// Blanks the live line out before a result is printed (nothing if none was shown).
    pub fn clear(&mut self) {
        let text = self.line.clear();
        if !text.is_empty() {
            print_now(&text);
        }
    }

    /// The text of one tick (for tests too).
    fn render(&mut self, p: &Progress) -> String {
        let text = match &self.showing {
            Showing::Nothing => String::new(),
            Showing::Idle => idle_status(p.connected),
            Showing::Test(title) => {
                let requests = p.requests.saturating_sub(self.last.requests);
                let latency = p.latency_sum_us.saturating_sub(self.last.latency_sum_us);
                let avg_ms = |sum: u64, n: u64| {
                    if n == 0 {
                        0.0
                    } else {
                        sum as f64 / n as f64 / 1000.0
                    }
                };
                self.line.update(&LiveSample {
                    title,
                    interval_requests: requests,
                    interval: p.elapsed.saturating_sub(self.last.elapsed),
                    total_requests: p.requests,
                    elapsed: p.elapsed,
                    interval_avg_ms: avg_ms(latency, requests),
                    overall_avg_ms: avg_ms(p.latency_sum_us, p.requests),
                })
            }
        };
        self.last = *p;
        text
    }
}

impl RunObserver for Live {
    fn run_started(&mut self, _start: &RunStart) -> Result<(), String> {
        self.last = Progress::default();
        Ok(())
    }

    fn progress(&mut self, progress: &Progress) {
        let text = self.render(progress);
        if !text.is_empty() {
            print_now(&text);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn interval_and_overall_figures() {
        let mut live = Live::new(Showing::Test("SET".into()));
        let tick = |ms, requests, latency_sum_us| Progress {
            run: 1,
            elapsed: Duration::from_millis(ms),
            requests,
            latency_sum_us,
            connected: 5,
        };
        assert_eq!(
            live.render(&tick(250, 100, 10_000)),
            "SET: rps=400.0 (overall: 400.0) avg_msec=0.100 (overall: 0.100)\r"
        );
        let second = live.render(&tick(500, 300, 50_000));
        assert!(
            second.ends_with("SET: rps=800.0 (overall: 600.0) avg_msec=0.200 (overall: 0.167)\r"),
            "{second:?}"
        );
        let mut idle = Live::new(Showing::Idle);
        assert_eq!(idle.render(&tick(250, 0, 0)), "clients: 5\r");
        let mut quiet = Live::new(Showing::Nothing);
        assert_eq!(quiet.render(&tick(250, 1, 1)), "");
    }
}
