//! Open-loop load in the plan: the target rate, how arrivals are spread, the warm-up and
//! the rate sweep. The engine's scheduler (`engine/schedule.rs`) is the only pacing
//! implementation; every front end's rate flag (`--rate`, `--rate-limiting`, `--rps`)
//! becomes one of these values.

use std::time::Duration;

/// The highest rate any front end's flag may ask for, requests per second: far beyond
/// what one generator process sends, and a send period (10 ns) the scheduler still
/// counts in whole nanoseconds.
pub const MAX_RATE: u64 = 100_000_000;

/// How send times are spread over a second.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arrival {
    /// Evenly: the k-th request at exactly k / rate seconds.
    Uniform,
    /// A Poisson process: exponential gaps of mean 1 / rate, from a seeded generator.
    Poisson,
}

impl Arrival {
    /// `uniform` or `poisson`, as the flags spell it.
    pub fn name(self) -> &'static str {
        match self {
            Arrival::Uniform => "uniform",
            Arrival::Poisson => "poisson",
        }
    }
}

/// A target rate and its arrival process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rate {
    /// Requests per second (at least 1).
    pub per_sec: u64,
    pub arrival: Arrival,
    /// Seeds the Poisson gaps; each worker (or connection) derives its own from it, so
    /// the same plan sends at the same times.
    pub seed: u64,
    /// Requests per arrival (at least 1): the requests of one arrival are due at the
    /// same moment and go out together, `per_sec / burst` arrivals a second. A front end
    /// whose tool paces whole pipelines (redis-zbench-go's limiter hands out a batch at a
    /// time) sets it to the pipeline; 1 elsewhere.
    pub burst: u64,
}

/// How requests are paced.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Pacing {
    /// Closed loop: a connection sends as soon as it has room (up to `--pipeline`).
    #[default]
    Closed,
    /// Open loop at a total rate across every thread and connection: each worker sends
    /// its share on whichever of its connections has room.
    Total(Rate),
    /// Open loop at this rate on each connection (memtier's `--rate-limiting`): every
    /// connection keeps a schedule of its own.
    PerConnection(Rate),
}

impl Pacing {
    /// Whether requests carry intended send times (open loop).
    pub fn is_open(&self) -> bool {
        !matches!(self, Pacing::Closed)
    }

    /// The rate and arrival process, in open loop.
    pub fn rate(&self) -> Option<Rate> {
        match *self {
            Pacing::Closed => None,
            Pacing::Total(rate) | Pacing::PerConnection(rate) => Some(rate),
        }
    }

    /// Requests per second the whole run aims at, with `connections` connections in all.
    pub fn target_total(&self, connections: usize) -> Option<u64> {
        match *self {
            Pacing::Closed => None,
            Pacing::Total(rate) => Some(rate.per_sec),
            Pacing::PerConnection(rate) => Some(rate.per_sec.saturating_mul(connections as u64)),
        }
    }

    /// The same pacing at another total rate (a step of a sweep).
    pub fn with_total(self, per_sec: u64) -> Pacing {
        match self {
            Pacing::Total(rate) | Pacing::PerConnection(rate) => {
                Pacing::Total(Rate { per_sec, ..rate })
            }
            Pacing::Closed => Pacing::Total(Rate {
                per_sec,
                arrival: Arrival::Uniform,
                seed: 0,
                burst: 1,
            }),
        }
    }
}

/// A service-level objective: a latency percentile that must stay under a bound.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Slo {
    /// 0-100, e.g. 99.0.
    pub percentile: f64,
    /// The bound, milliseconds.
    pub max_ms: f64,
}

/// Open-loop rates run in turn, each for `step_duration`: the latency–throughput curve.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RateSweep {
    pub start: u64,
    pub end: u64,
    pub step: u64,
    pub step_duration: Duration,
    /// Stop at the first step whose response time breaks it.
    pub slo: Option<Slo>,
}

impl RateSweep {
    /// The rates of the steps: start, start + step, ... up to end (end itself only when
    /// the steps land on it).
    pub fn rates(&self) -> impl Iterator<Item = u64> + '_ {
        let step = self.step.max(1);
        (0..)
            .map(move |i: u64| self.start.saturating_add(i.saturating_mul(step)))
            .take_while(move |&r| r <= self.end)
            .take(self.steps() as usize)
    }

    /// How many steps there are.
    pub fn steps(&self) -> u64 {
        if self.end < self.start {
            0
        } else {
            (self.end - self.start) / self.step.max(1) + 1
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sweep_rates_run_from_start_to_end() {
        let sweep = RateSweep {
            start: 1000,
            end: 5000,
            step: 2000,
            step_duration: Duration::from_secs(1),
            slo: None,
        };
        assert_eq!(sweep.rates().collect::<Vec<_>>(), [1000, 3000, 5000]);
        let uneven = RateSweep { end: 6000, ..sweep };
        assert_eq!(uneven.rates().collect::<Vec<_>>(), [1000, 3000, 5000]);
        assert_eq!(uneven.steps(), 3);
        let one = RateSweep { end: 1000, ..sweep };
        assert_eq!(one.rates().collect::<Vec<_>>(), [1000]);
    }

    #[test]
    fn per_connection_target_is_rate_times_connections() {
        let rate = Rate {
            per_sec: 200,
            arrival: Arrival::Uniform,
            seed: 1,
            burst: 1,
        };
        assert_eq!(Pacing::PerConnection(rate).target_total(10), Some(2000));
        assert_eq!(Pacing::Total(rate).target_total(10), Some(200));
        assert_eq!(Pacing::Closed.target_total(10), None);
        assert_eq!(
            Pacing::PerConnection(rate).with_total(500),
            Pacing::Total(Rate {
                per_sec: 500,
                ..rate
            })
        );
    }
}
