//! The open-loop schedule: a lazy sequence of intended send times, the engine's only
//! pacing implementation.
//!
//! A schedule is one *share* of a rate: share `s` of `n` takes positions `s, s + n,
//! s + 2n, ...` of the rate's sequence (`w` shares in a row, `s..s + w`, take `w` of every
//! `n`). A `--rate` run gives each of its `n` workers one share (the workers' sequences
//! interleave into exactly the total rate), or, when its clients do not split evenly over
//! the workers, each worker as many shares as it has clients; a run whose clients'
//! request streams set each one's share of the commands gives each worker a rate in
//! proportion to its commands ([`Schedule::of_work`]), so a worker with more to send
//! does not end later at too low a rate; a `--rate-limiting=r` run gives each of its `n`
//! connections one share of `r × n`, so every connection runs at `r` and the
//! connections' sends are spread evenly.
//!
//! ```text
//! uniform   position k of share s:  start + (k·n + s) / rate      computed from k, never summed
//! poisson   start + sum of k exponential gaps of mean n / rate    seeded per share, summed in f64 ns
//! ```
//!
//! A rate with bursts of `b` (a front end pacing whole pipelines) is a sequence of bursts
//! at `rate / b` a second, shared out as positions are: a share's `k`-th position belongs
//! to its burst `k / b`, which takes the place a position would (`start + (j·n + s) · b /
//! rate` for burst `j`), so a burst's requests are due together and the shares' bursts
//! interleave evenly (Poisson: one gap of mean `b` times as long per burst).
//!
//! Nothing is stored per pending request: the backlog is "positions whose time has
//! passed and that were not taken yet". Whoever sends takes the next position and its
//! intended time; a request that waited for a connection keeps that time, so its latency
//! counts the wait.

use std::time::{Duration, Instant};

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use rand_distr::Exp1;

use crate::plan::{Arrival, Plan, Rate};
use crate::stats::ScheduleStats;

/// The most backlog positions walked one by one when a run ends (each one's age goes into
/// the health's histogram); beyond it they are counted, at age 0 (a lower bound).
pub const BACKLOG_WALK_LIMIT: u64 = 1_000_000;

/// Intended send times, taken one by one.
#[derive(Clone, Debug)]
pub struct Schedule {
    start: Instant,
    gaps: Gaps,
    /// This share's positions passed so far: taken, or (uniform) skipped because they
    /// fell before the schedule started.
    taken: u64,
    /// The intended time of the next position.
    next: Instant,
    /// Due positions are waiting because no connection had room for them; cleared once
    /// the backlog is gone. Requests sent late while it is set were late for want of a
    /// connection, not for want of the generator's CPU.
    blocked: bool,
    /// [`start_at`](Self::start_at) has fixed the start.
    anchored: bool,
    /// Positions per burst (at least 1), all due at the burst's first one's time.
    burst: u64,
    /// Uniform arrivals: no position is due before this (the moment the schedule
    /// started, when that fell between two of its bursts: the one before is due then).
    not_before: Instant,
}

#[derive(Clone, Debug)]
enum Gaps {
    Uniform {
        /// Shares of the rate (positions between two of this schedule's).
        shares: u64,
        share: u64,
        /// Shares in a row this schedule takes, from `share` (at least 1).
        width: u64,
        rate: u64,
    },
    Poisson {
        rng: SmallRng,
        /// Between two bursts (two positions when a burst is one).
        mean_gap_ns: f64,
        /// Nanoseconds from `start` to the next position, summed unrounded.
        at_ns: f64,
    },
}

const NANOS_PER_SEC: u128 = 1_000_000_000;

impl Schedule {
    /// Share `share` (0-based) of `shares` of `rate`, from `start`.
    pub fn new(rate: Rate, start: Instant, share: u64, shares: u64) -> Schedule {
        Schedule::of_shares(rate, start, share, 1, shares)
    }

    /// Worker `thread`'s part of a total `rate`: with request streams, in proportion to
    /// the commands its clients will send ([`Schedule::of_work`]); otherwise shares in
    /// proportion to its clients, so that clients with equal shares of `-n` end
    /// together when a front end split them over the workers unevenly. Shares count in
    /// units of the workers' common divisor, so an even split (memtier's `-c` on every
    /// worker) is one share per worker, interleaved position by position. `None` for a
    /// worker with no client.
    pub fn of_worker(rate: Rate, start: Instant, plan: &Plan, thread: usize) -> Option<Schedule> {
        let work: Option<Vec<u64>> = (0..plan.load.threads)
            .map(|t| plan.stream_commands_on_thread(t))
            .collect();
        if let Some(work) = work {
            return Schedule::of_work(rate, start, &work, thread);
        }
        let total = plan.total_clients();
        let unit = (0..plan.load.threads)
            .map(|t| plan.clients_on_thread(t) as u64)
            .fold(0, gcd)
            .max(1);
        let clients = plan.clients_on_thread(thread) as u64 / unit;
        let first = plan.first_client_of_thread(thread) as u64 / unit;
        (clients > 0).then(|| Schedule::of_shares(rate, start, first, clients, total as u64 / unit))
    }

    /// Worker `thread`'s part of a total `rate` when the workers have `work[t]` commands
    /// to send each (request streams, whose clients' shares differ by one when a total
    /// does not divide over the clients): a rate in proportion to its commands, so every
    /// worker ends together and the run keeps the total rate to its end. A worker runs
    /// at `rate × w / W` (`w` its commands, `W` all), its position `k` due at
    /// `(k·W + before) / (rate × w)`, with `before` the commands of the workers before
    /// it (so the workers' first sends are spread over the first gap); computed from
    /// `k`, never summed. `None` for a worker with nothing to send.
    pub fn of_work(rate: Rate, start: Instant, work: &[u64], thread: usize) -> Option<Schedule> {
        let unit = work.iter().copied().fold(0, gcd).max(1);
        let mine = work.get(thread).copied().unwrap_or(0) / unit;
        let all = work.iter().sum::<u64>() / unit;
        let before = work.iter().take(thread).sum::<u64>() / unit;
        let scaled = Rate {
            per_sec: rate.per_sec.max(1).saturating_mul(mine),
            ..rate
        };
        (mine > 0).then(|| Schedule::of_shares(scaled, start, before, 1, all))
    }

    /// The `width` shares from `share` (0-based) of `shares` of `rate`, from `start`: a
    /// worker's part of a total rate in proportion to its clients. Uniform: `width` of
    /// every `shares` positions; Poisson: one process of `width / shares` of the rate (the
    /// sum of `width` independent ones).
    pub fn of_shares(rate: Rate, start: Instant, share: u64, width: u64, shares: u64) -> Schedule {
        let shares = shares.max(1);
        let share = share % shares;
        let width = width.clamp(1, shares - share);
        let per_sec = rate.per_sec.max(1);
        let burst = rate.burst.max(1);
        let gaps = match rate.arrival {
            Arrival::Uniform => Gaps::Uniform {
                shares,
                share,
                width,
                rate: per_sec,
            },
            Arrival::Poisson => {
                let mut rng = SmallRng::seed_from_u64(
                    rate.seed ^ share.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15),
                );
                let mean_gap_ns =
                    1e9 * shares as f64 * burst as f64 / (per_sec as f64 * width as f64);
                let first: f64 = rng.sample(Exp1);
                Gaps::Poisson {
                    rng,
                    mean_gap_ns,
                    at_ns: first * mean_gap_ns,
                }
            }
        };
        let mut schedule = Schedule {
            start,
            gaps,
            taken: 0,
            next: start,
            blocked: false,
            anchored: false,
            burst,
            not_before: start,
        };
        schedule.next = schedule.time_of_next();
        schedule
    }

    /// Starts the schedule at `at` instead, the first time only (and only if no
    /// position has been taken): the schedule begins when its first request can go out,
    /// so connecting is not counted as the server's latency. Uniform arrivals keep their
    /// start: the last burst due before `at` is due at `at`, those before it are skipped,
    /// and the rest keep their places, so shares that start at different moments (each
    /// worker's, each connection's) stay on one grid and still interleave evenly, and a
    /// slow rate loses no period to the connect. Poisson arrivals start afresh at `at`
    /// (independent processes have no phase).
    pub fn start_at(&mut self, at: Instant) {
        if !self.anchored && self.taken == 0 {
            match self.gaps {
                Gaps::Uniform { .. } => {
                    let first = self.first_burst_from(at);
                    self.taken = first.saturating_sub(1) * self.burst;
                    self.not_before = self.not_before.max(at);
                }
                Gaps::Poisson { .. } => self.start = at,
            }
            self.next = self.time_of_next();
        }
        self.anchored = true;
    }

    /// Uniform arrivals: the first of this share's bursts due at or after `at`.
    fn first_burst_from(&self, at: Instant) -> u64 {
        let due_before = |j: u64| self.time_of(j.saturating_mul(self.burst)) < at;
        if !due_before(0) {
            return 0;
        }
        // Bursts (lo, hi]: due_before(lo), and hi is not, found by doubling.
        let (mut lo, mut hi) = (0u64, 1u64);
        while due_before(hi) {
            lo = hi;
            match hi.checked_mul(2) {
                Some(next) if next < u64::MAX / self.burst => hi = next,
                _ => return hi,
            }
        }
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if due_before(mid) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        hi
    }

    /// When the next position is due.
    #[inline]
    pub fn peek(&self) -> Instant {
        self.next
    }

    /// Takes the next position; returns its intended time.
    #[inline]
    pub fn take(&mut self) -> Instant {
        let due = self.next;
        self.taken += 1;
        if let Gaps::Poisson {
            rng,
            mean_gap_ns,
            at_ns,
        } = &mut self.gaps
            && (self.burst == 1 || self.taken.is_multiple_of(self.burst))
        {
            let gap: f64 = rng.sample(Exp1);
            *at_ns += gap * *mean_gap_ns;
        }
        self.next = self.time_of_next();
        due
    }

    /// Takes the next position if it is due by `now`: its intended time, and whether it
    /// waited for a connection with room (the schedule was [blocked](Self::block)). The
    /// block lifts once nothing more is due.
    #[inline]
    pub fn take_due(&mut self, now: Instant) -> Option<(Instant, bool)> {
        if self.next > now {
            self.blocked = false;
            return None;
        }
        let blocked = self.blocked;
        let at = self.take();
        if self.next > now {
            self.blocked = false;
        }
        Some((at, blocked))
    }

    /// Due positions are waiting because no connection has room: until the backlog is
    /// gone, whoever takes them took them late for want of a connection.
    pub fn block(&mut self) {
        self.blocked = true;
    }

    /// Whether due positions are waiting for a connection with room.
    pub fn is_blocked(&self) -> bool {
        self.blocked
    }

    /// When the positions after the next are due (what [`peek`](Self::peek) returns once
    /// one, two, ... more positions are taken), into `ahead`, so timers can be armed for
    /// the next wake-ups before they are needed.
    pub fn peek_ahead(&self, ahead: &mut [Instant]) {
        match &self.gaps {
            Gaps::Uniform { .. } => {
                for (k, at) in ahead.iter_mut().enumerate() {
                    *at = self.time_of(self.taken + 1 + k as u64).max(self.not_before);
                }
            }
            Gaps::Poisson {
                rng,
                mean_gap_ns,
                at_ns,
            } => {
                // The gaps `take` will draw: the same generator, steps ahead on a copy.
                let mut rng = rng.clone();
                let mut ns = *at_ns;
                let mut taken = self.taken;
                for at in ahead.iter_mut() {
                    taken += 1;
                    if taken.is_multiple_of(self.burst) {
                        let gap: f64 = rng.sample(Exp1);
                        ns += gap * *mean_gap_ns;
                    }
                    *at = self.offset(ns as u64);
                }
            }
        }
    }

    /// Positions taken so far.
    pub fn taken(&self) -> u64 {
        self.taken
    }

    /// Takes the positions due before `until` (the backlog when a run ends at `until`),
    /// handing each intended time to `each`, oldest first, for at most `limit` of them;
    /// returns how many were due in all. Those beyond `limit` are counted, not walked (a
    /// rate far beyond the server can leave millions): exactly for uniform arrivals, by
    /// their expected number for Poisson ones. The schedule is not used after this.
    pub fn drain_until(
        &mut self,
        until: Instant,
        limit: u64,
        mut each: impl FnMut(Instant),
    ) -> u64 {
        let mut n = 0;
        while self.next < until {
            if n == limit {
                return n + self.count_due(until);
            }
            each(self.take());
            n += 1;
        }
        n
    }

    /// At the end of a run: counts the positions due before `end` and never sent into
    /// `health`, at most `cap` of them (what a `-n` client had left), each with its age at
    /// `end` (positions intended before `measure_from` are warm-up and left out).
    pub fn count_backlog(
        &mut self,
        end: Instant,
        measure_from: Instant,
        cap: u64,
        health: &mut ScheduleStats,
    ) {
        let mut walked = 0;
        let mut counted = 0;
        let due = self.drain_until(end, BACKLOG_WALK_LIMIT.min(cap), |t| {
            walked += 1;
            if t >= measure_from {
                counted += 1;
                let age = end.saturating_duration_since(t).as_micros() as u64;
                health.unfinished_age.saturating_record(age);
            }
        });
        // The ones not walked are the youngest: after the warm-up, of unknown age.
        let rest = due.min(cap) - walked;
        if rest > 0 {
            health.unfinished_age.saturating_record_n(0, rest);
        }
        health.unsent_at_end += counted + rest;
    }

    /// How many positions not taken yet are due before `until`.
    fn count_due(&self, until: Instant) -> u64 {
        if self.next >= until {
            return 0;
        }
        let horizon_ns = until.saturating_duration_since(self.start).as_nanos();
        match &self.gaps {
            Gaps::Uniform {
                shares,
                share,
                width,
                rate,
            } => {
                // This schedule's places p (p mod shares in share..share + width; a place
                // is a burst of b positions) with floor(p · b / rate) < horizon (in ns, as
                // `time_of_next` rounds), i.e. p < horizon · rate / b: those among the
                // first `bound`, each with its b positions.
                let burst = u128::from(self.burst);
                let bound = (horizon_ns * u128::from(*rate)).div_ceil(NANOS_PER_SEC * burst);
                let (shares, share, width) =
                    (u128::from(*shares), u128::from(*share), u128::from(*width));
                let of_share =
                    bound / shares * width + (bound % shares).saturating_sub(share).min(width);
                let due = (of_share * burst).saturating_sub(u128::from(self.taken));
                u64::try_from(due).unwrap_or(u64::MAX)
            }
            Gaps::Poisson {
                mean_gap_ns, at_ns, ..
            } => {
                // The rest of the next position's burst, then whole bursts.
                let rest_of_burst = self.burst - self.taken % self.burst;
                let bursts = ((horizon_ns as f64 - at_ns) / mean_gap_ns).max(0.0) as u64;
                rest_of_burst.saturating_add(bursts.saturating_mul(self.burst))
            }
        }
    }

    fn time_of_next(&self) -> Instant {
        match &self.gaps {
            Gaps::Uniform { .. } => self.time_of(self.taken).max(self.not_before),
            Gaps::Poisson { at_ns, .. } => self.offset(*at_ns as u64),
        }
    }

    /// Uniform arrivals: when this share's position `k` (0-based) is due, from the
    /// position number, so no rounding ever accumulates.
    fn time_of(&self, k: u64) -> Instant {
        let Gaps::Uniform {
            shares,
            share,
            width,
            rate,
        } = &self.gaps
        else {
            return self.next;
        };
        // With bursts the shares interleave burst by burst: this share's burst `k / b`
        // takes the place a position would, its `b` positions due at once, the rate's
        // sequence of bursts `rate / b` a second.
        let burst = u128::from(self.burst);
        let (k, width) = (u128::from(k) / burst, u128::from(*width));
        let position = k / width * u128::from(*shares) + u128::from(*share) + k % width;
        let ns = position * burst * NANOS_PER_SEC / u128::from(*rate);
        self.offset(u64::try_from(ns).unwrap_or(u64::MAX))
    }

    /// `start` plus `ns` nanoseconds (a century on overflow).
    fn offset(&self, ns: u64) -> Instant {
        self.start
            .checked_add(Duration::from_nanos(ns))
            .unwrap_or(self.start + Duration::from_secs(86_400 * 365 * 100))
    }
}

/// The greatest common divisor of `a` and `b` (`gcd(0, b) = b`).
fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { gcd(b, a % b) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rate(per_sec: u64, arrival: Arrival) -> Rate {
        Rate {
            per_sec,
            arrival,
            seed: 42,
            burst: 1,
        }
    }

    #[test]
    fn uniform_times_are_exact() {
        let start = Instant::now();
        let mut s = Schedule::new(rate(4, Arrival::Uniform), start, 0, 1);
        let times: Vec<u128> = (0..5).map(|_| (s.take() - start).as_nanos()).collect();
        assert_eq!(
            times,
            [0, 250_000_000, 500_000_000, 750_000_000, 1_000_000_000]
        );
        assert_eq!(s.taken(), 5);
    }

    #[test]
    fn uniform_has_no_drift_over_ten_million_positions() {
        let start = Instant::now();
        // 3 per second: a period of 333 333 333.33 ns, which summing would round.
        let mut s = Schedule::new(rate(3, Arrival::Uniform), start, 0, 1);
        for _ in 0..10_000_000u64 {
            s.take();
        }
        let expected = 10_000_000u128 * 1_000_000_000 / 3;
        assert_eq!((s.peek() - start).as_nanos(), expected);
        // 7 shares of 70 000/s: each share's k-th time is exact too.
        let mut s = Schedule::new(rate(70_000, Arrival::Uniform), start, 3, 7);
        for _ in 0..10_000_000u64 {
            s.take();
        }
        let position = 10_000_000u128 * 7 + 3;
        assert_eq!(
            (s.peek() - start).as_nanos(),
            position * 1_000_000_000 / 70_000
        );
    }

    #[test]
    fn peek_ahead_gives_the_next_peeks() {
        let start = Instant::now();
        for arrival in [Arrival::Uniform, Arrival::Poisson] {
            let mut s = Schedule::new(rate(30_000, arrival), start, 1, 3);
            let mut ahead = [start; 3];
            for _ in 0..1000 {
                s.peek_ahead(&mut ahead);
                let mut copy = s.clone();
                for at in ahead {
                    copy.take();
                    assert_eq!(copy.peek(), at, "{arrival:?}");
                }
                s.take();
            }
        }
    }

    #[test]
    fn shares_interleave_into_the_total_rate() {
        let start = Instant::now();
        let total = rate(20_000, Arrival::Uniform);
        let mut workers: Vec<Schedule> =
            (0..3).map(|w| Schedule::new(total, start, w, 3)).collect();
        let mut merged: Vec<u128> = Vec::new();
        for s in &mut workers {
            for _ in 0..1000 {
                merged.push((s.take() - start).as_nanos());
            }
        }
        merged.sort_unstable();
        for (j, t) in merged.iter().enumerate() {
            assert_eq!(*t, j as u128 * 1_000_000_000 / 20_000, "position {j}");
        }
    }

    #[test]
    fn shares_in_proportion_to_clients_make_the_total_rate() {
        // Seven clients on three workers (3, 2, 2): each worker takes as many shares as it
        // has clients, and together they take every position of the total, once.
        let start = Instant::now();
        let total = rate(7_000, Arrival::Uniform);
        let mut merged: Vec<u128> = Vec::new();
        for (first, width) in [(0, 3), (3, 2), (5, 2)] {
            let mut s = Schedule::of_shares(total, start, first, width, 7);
            for _ in 0..700 * width {
                merged.push((s.take() - start).as_nanos());
            }
        }
        merged.sort_unstable();
        for (j, t) in merged.iter().enumerate() {
            assert_eq!(*t, j as u128 * 1_000_000_000 / 7_000, "position {j}");
        }
        // The backlog count agrees with walking it, for a width too.
        let until = start + Duration::from_secs(3);
        for (first, width) in [(0, 3), (3, 2), (5, 2), (6, 1)] {
            let walked = Schedule::of_shares(total, start, first, width, 7).drain_until(
                until,
                u64::MAX,
                |_| {},
            );
            let mut s = Schedule::of_shares(total, start, first, width, 7);
            s.take();
            assert_eq!(
                s.drain_until(until, 10, |_| {}),
                walked - 1,
                "{first}+{width}"
            );
        }
        // Poisson: a worker with two of seven shares runs at two sevenths of the rate.
        let poisson = rate(70_000, Arrival::Poisson);
        let n = Schedule::of_shares(poisson, start, 3, 2, 7).drain_until(until, u64::MAX, |_| {});
        assert!((57_000..63_000).contains(&n), "{n}");
    }

    #[test]
    fn workers_share_a_total_rate_by_their_clients() {
        let start = Instant::now();
        let total = rate(6_000, Arrival::Uniform);
        // Positions each worker takes in the first 60 of the total.
        let taken = |threads: usize, clients: usize| -> Vec<Vec<u128>> {
            let mut plan = Plan::example();
            plan.load.threads = threads;
            plan.load.total_clients = Some(clients);
            (0..threads)
                .map(|t| match Schedule::of_worker(total, start, &plan, t) {
                    Some(mut s) => std::iter::from_fn(|| Some(s.take()))
                        .map(|at| ((at - start).as_nanos() * 6_000 + 500_000_000) / 1_000_000_000)
                        .take_while(|&p| p < 60)
                        .collect(),
                    None => Vec::new(),
                })
                .collect()
        };
        // An even split alternates position by position, as one share per worker.
        let even = taken(2, 4);
        assert_eq!(even[0], (0..60).step_by(2).collect::<Vec<_>>());
        assert_eq!(even[1], (1..60).step_by(2).collect::<Vec<_>>());
        // 3 clients on 2 workers: two positions of every three, and one.
        let uneven = taken(2, 3);
        assert_eq!((uneven[0].len(), uneven[1].len()), (40, 20));
        assert_eq!(&uneven[1][..3], [2, 5, 8]);
        // A worker with no client takes nothing; the others still make the total.
        let idle = taken(3, 2);
        assert!(idle[2].is_empty());
        assert_eq!(idle[0].len() + idle[1].len(), 60);
    }

    #[test]
    fn workers_share_a_total_rate_by_their_commands() {
        // 75 commands on 50 clients over two workers: 50 on the first, 25 on the second.
        // Shared by clients (half each), the first took 2 s at 25/s; by commands both
        // end at 1.5 s, and every second of the run holds the total rate.
        let start = Instant::now();
        let total = rate(50, Arrival::Uniform);
        let due = |work: &[u64]| -> Vec<Vec<f64>> {
            (0..work.len())
                .map(|t| match Schedule::of_work(total, start, work, t) {
                    Some(mut s) => (0..work[t])
                        .map(|_| (s.take() - start).as_secs_f64())
                        .collect(),
                    None => Vec::new(),
                })
                .collect()
        };
        let split = due(&[50, 25]);
        for worker in &split {
            let last = worker.last().copied().unwrap_or(0.0);
            assert!((1.45..1.5).contains(&last), "{last}");
        }
        let mut merged: Vec<f64> = split.concat();
        merged.sort_by(f64::total_cmp);
        for (j, t) in merged.iter().enumerate() {
            // Never more than one position from the exact total's.
            assert!((t * 50.0 - j as f64).abs() <= 1.0, "position {j} at {t}");
        }
        // Shares that do not reduce (500001 and 500000 commands) still run side by side,
        // each at half the rate, not one after the other.
        let big = [500_001, 500_000];
        for t in 0..2 {
            let mut s = Schedule::of_work(rate(1000, Arrival::Uniform), start, &big, t)
                .expect("work to do");
            let n = s.drain_until(start + Duration::from_secs(10), u64::MAX, |_| {});
            assert!((5000..=5001).contains(&n), "worker {t}: {n}");
        }
        // A worker with nothing to send takes nothing.
        assert!(Schedule::of_work(total, start, &[10, 0], 1).is_none());
        assert_eq!(due(&[10, 0])[0].len(), 10);
    }

    /// Gaps of a Poisson schedule: mean, coefficient of variation and the exponential
    /// distribution's quantiles.
    fn check_exponential(gaps: &[f64], mean: f64) {
        let n = gaps.len() as f64;
        let m = gaps.iter().sum::<f64>() / n;
        assert!((m / mean - 1.0).abs() < 0.01, "mean gap {m} vs {mean}");
        let var = gaps.iter().map(|g| (g - m) * (g - m)).sum::<f64>() / n;
        let cv = var.sqrt() / m;
        assert!((cv - 1.0).abs() < 0.02, "coefficient of variation {cv}");
        // P(gap > t) = exp(-t / mean) at a few points.
        for t in [0.1, 0.5, 1.0, 2.0, 4.0] {
            let above = gaps.iter().filter(|&&g| g > t * mean).count() as f64 / n;
            let expected = (-t).exp();
            assert!(
                (above - expected).abs() < 0.005,
                "P(gap > {t} mean) = {above}, expected {expected}"
            );
        }
    }

    #[test]
    fn poisson_gaps_are_exponential() {
        let start = Instant::now();
        let mut s = Schedule::new(rate(20_000, Arrival::Poisson), start, 0, 1);
        let mut last = s.take();
        let gaps: Vec<f64> = (0..200_000)
            .map(|_| {
                let t = s.take();
                let gap = (t - last).as_nanos() as f64;
                last = t;
                gap
            })
            .collect();
        check_exponential(&gaps, 50_000.0);
    }

    #[test]
    fn poisson_shares_differ_reproducibly_and_add_up_to_the_rate() {
        let start = Instant::now();
        let total = rate(30_000, Arrival::Poisson);
        let run = |share| {
            let mut s = Schedule::new(total, start, share, 3);
            (0..1000).map(|_| s.take()).collect::<Vec<_>>()
        };
        assert_eq!(run(1), run(1), "same seed and share, same times");
        assert_ne!(run(0), run(1), "shares differ");
        // Over 10 s the three shares send about 300 000 requests.
        let horizon = start + Duration::from_secs(10);
        let sent: u64 = (0..3)
            .map(|w| Schedule::new(total, start, w, 3).drain_until(horizon, u64::MAX, |_| {}))
            .sum();
        assert!((sent as f64 / 300_000.0 - 1.0).abs() < 0.01, "sent {sent}");
    }

    #[test]
    fn poisson_has_no_drift_over_ten_million_positions() {
        let start = Instant::now();
        let mut s = Schedule::new(rate(1_000_000, Arrival::Poisson), start, 0, 1);
        for _ in 0..10_000_000u64 {
            s.take();
        }
        // Ten million gaps of mean 1 µs: 10 s, with a relative spread of 1/sqrt(1e7).
        let elapsed = (s.peek() - start).as_secs_f64();
        assert!((elapsed / 10.0 - 1.0).abs() < 0.002, "elapsed {elapsed}");
    }

    #[test]
    fn a_block_lasts_until_the_backlog_is_gone() {
        let start = Instant::now();
        let ms = Duration::from_millis;
        let mut s = Schedule::new(rate(1000, Arrival::Uniform), start, 0, 1);
        assert_eq!(s.take_due(start), Some((start, false)));
        assert_eq!(s.take_due(start), None);
        // 3 ms later, with every connection full: positions at 1, 2, 3 ms wait.
        s.block();
        assert_eq!(s.take_due(start + ms(3)), Some((start + ms(1), true)));
        assert_eq!(s.take_due(start + ms(3)), Some((start + ms(2), true)));
        // The last of the backlog lifts the block.
        assert_eq!(s.take_due(start + ms(3)), Some((start + ms(3), true)));
        assert!(!s.is_blocked());
        assert_eq!(s.take_due(start + ms(4)), Some((start + ms(4), false)));
    }

    #[test]
    fn a_schedule_starts_when_its_first_request_can_go_out() {
        let start = Instant::now();
        let ms = Duration::from_millis;
        // Share 1 of 2 at 1000/s: its positions at 1, 3, 5, 7, ... ms.
        let mut s = Schedule::new(rate(1000, Arrival::Uniform), start, 1, 2);
        s.start_at(start + ms(4));
        // Once only: a share whose first position is not due yet keeps its start.
        s.start_at(start + ms(6));
        // The one at 3 ms is due at the start (4 ms), those before are skipped; the next
        // keep their places on the rate's grid.
        assert_eq!(s.take(), start + ms(4));
        assert_eq!(s.take(), start + ms(5));
        s.start_at(start + ms(50));
        assert_eq!(s.peek(), start + ms(7));
        // A slow rate loses no period to the connect: 1/s, ready 3 ms late.
        let mut slow = Schedule::new(rate(1, Arrival::Uniform), start, 0, 1);
        slow.start_at(start + ms(3));
        assert_eq!(slow.take(), start + ms(3));
        assert_eq!(slow.peek(), start + ms(1000));
    }

    #[test]
    fn shares_started_at_different_moments_still_interleave() {
        let start = Instant::now();
        let us = Duration::from_micros;
        // Two workers' shares of 1000/s; the second's connection was ready 2.3 ms later.
        let mut a = Schedule::new(rate(1000, Arrival::Uniform), start, 0, 2);
        let mut b = Schedule::new(rate(1000, Arrival::Uniform), start, 1, 2);
        a.start_at(start + us(200));
        b.start_at(start + us(2500));
        let mut times: Vec<Duration> = (0..4)
            .flat_map(|_| [a.take(), b.take()])
            .map(|t| t - start)
            .collect();
        times.sort();
        // One grid, 1 ms apart: a at 0.2 (its 0 ms one), 2, 4, 6 ms; b at 2.5 (its 1 ms
        // one), 3, 5, 7 ms.
        assert_eq!(
            times,
            [200, 2000, 2500, 3000, 4000, 5000, 6000, 7000].map(us)
        );
        // Bursts of 4 keep to the grid too: share 1's bursts at 4, 12, 20 ms.
        let burst = Rate {
            burst: 4,
            ..rate(1000, Arrival::Uniform)
        };
        let mut c = Schedule::new(burst, start, 1, 2);
        c.start_at(start + us(10_000));
        assert_eq!(
            c.peek() - start,
            us(10_000),
            "the 4 ms burst, due at the start"
        );
        for _ in 0..4 {
            c.take();
        }
        assert_eq!(c.peek() - start, us(12_000));
    }

    #[test]
    fn drain_counts_the_backlog() {
        let start = Instant::now();
        let mut s = Schedule::new(rate(1000, Arrival::Uniform), start, 0, 1);
        s.take();
        let mut oldest = None;
        let n = s.drain_until(start + Duration::from_millis(10), u64::MAX, |t| {
            oldest.get_or_insert(t);
        });
        // Positions at 1, 2, ..., 9 ms: the one at 10 ms is the end's, not before it.
        assert_eq!(n, 9);
        assert_eq!(oldest, Some(start + Duration::from_millis(1)));
        assert_eq!(s.peek(), start + Duration::from_millis(10));
    }

    #[test]
    fn a_long_backlog_is_counted_beyond_the_limit() {
        let start = Instant::now();
        let until = start + Duration::from_secs(10);
        // Uniform: exactly, whatever the shares.
        for (rate, share, shares) in [(1000, 0, 1), (70_000, 3, 7), (3, 0, 1), (999_983, 5, 6)] {
            let all = Schedule::new(rate_of(rate), start, share, shares).drain_until(
                until,
                u64::MAX,
                |_| {},
            );
            let mut s = Schedule::new(rate_of(rate), start, share, shares);
            s.take();
            let mut walked = 0;
            let counted = s.drain_until(until, 100, |_| walked += 1);
            assert_eq!(
                (walked, counted),
                (100.min(all - 1), all - 1),
                "rate {rate}"
            );
        }
        // Poisson: about the expected number.
        let poisson = rate(100_000, Arrival::Poisson);
        let all = Schedule::new(poisson, start, 0, 1).drain_until(until, u64::MAX, |_| {});
        let counted = Schedule::new(poisson, start, 0, 1).drain_until(until, 1000, |_| {});
        assert!(
            (counted as f64 / all as f64 - 1.0).abs() < 0.01,
            "{counted} vs {all}"
        );
    }

    fn rate_of(per_sec: u64) -> Rate {
        rate(per_sec, Arrival::Uniform)
    }

    fn bursts_of(burst: u64, rate: Rate) -> Rate {
        Rate { burst, ..rate }
    }

    #[test]
    fn a_burst_is_due_together_and_bursts_keep_the_rate() {
        let start = Instant::now();
        let ms = Duration::from_millis;
        // 1000/s in bursts of 4: four positions at 0, four at 4 ms, ...
        let mut s = Schedule::new(bursts_of(4, rate_of(1000)), start, 0, 1);
        let times: Vec<Instant> = (0..10).map(|_| s.take()).collect();
        let expected = [0, 0, 0, 0, 4, 4, 4, 4, 8, 8].map(|t| start + ms(t));
        assert_eq!(times, expected);
        // Two workers share the rate burst by burst: 1000/s in bursts of 3 is a burst
        // every 3 ms, worker 0's at 0, 6, 12 ms, worker 1's between them (not one
        // position after worker 0's, which put two bursts together every 6 ms).
        let take6 = |share| {
            let mut s = Schedule::new(bursts_of(3, rate_of(1000)), start, share, 2);
            (0..6).map(|_| s.take()).collect::<Vec<Instant>>()
        };
        assert_eq!(take6(0), [0, 0, 0, 6, 6, 6].map(|t| start + ms(t)));
        assert_eq!(take6(1), [3, 3, 3, 9, 9, 9].map(|t| start + ms(t)));
        // The backlog of a share counts its whole bursts only.
        let mut s = Schedule::new(bursts_of(3, rate_of(1000)), start, 1, 2);
        s.take();
        // Worker 1's bursts before 1 s: at 3, 9, ..., 999 ms: 167 of 3, one taken.
        assert_eq!(
            s.drain_until(start + Duration::from_secs(1), 10, |_| {}),
            500
        );
        // The backlog counts whole bursts, walked or counted past the limit.
        let until = start + Duration::from_secs(1);
        for limit in [u64::MAX, 10] {
            let mut s = Schedule::new(bursts_of(4, rate_of(1000)), start, 0, 1);
            s.take();
            // Bursts at 0, 4, ..., 996 ms: 250 of 4, one position taken.
            assert_eq!(s.drain_until(until, limit, |_| {}), 999, "limit {limit}");
        }
    }

    #[test]
    fn poisson_bursts_share_a_time_and_keep_the_rate() {
        let start = Instant::now();
        let mut s = Schedule::new(bursts_of(5, rate(50_000, Arrival::Poisson)), start, 0, 1);
        let mut ahead = [start; 7];
        s.peek_ahead(&mut ahead);
        let times: Vec<Instant> = (0..200_000).map(|_| s.take()).collect();
        assert_eq!(times[1..8], ahead, "peek_ahead sees the bursts");
        for burst in times.chunks(5) {
            assert!(
                burst.iter().all(|&t| t == burst[0]),
                "a burst is due at once"
            );
        }
        let gaps: Vec<f64> = times
            .chunks(5)
            .collect::<Vec<_>>()
            .windows(2)
            .map(|w| (w[1][0] - w[0][0]).as_nanos() as f64)
            .collect();
        // 10 000 bursts a second: gaps of mean 100 µs between them.
        check_exponential(&gaps, 100_000.0);
        let until = start + Duration::from_secs(10);
        let all = Schedule::new(bursts_of(5, rate(50_000, Arrival::Poisson)), start, 0, 1)
            .drain_until(until, u64::MAX, |_| {});
        let mut s = Schedule::new(bursts_of(5, rate(50_000, Arrival::Poisson)), start, 0, 1);
        s.take();
        s.take();
        let counted = s.drain_until(until, 1000, |_| {}) + 2;
        assert!((all as f64 / 500_000.0 - 1.0).abs() < 0.01, "{all}");
        assert_eq!(all % 5, 0, "whole bursts");
        assert!(
            (counted as f64 / all as f64 - 1.0).abs() < 0.01,
            "{counted} vs {all}"
        );
    }
}
