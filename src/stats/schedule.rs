//! How well an open-loop run kept its schedule: requests sent late and why, the send
//! lag's distribution, and what was still unfinished when the run ended. Recorded by
//! workers, merged by the runner, like [`super::OpStats`].

use hdrhistogram::Histogram;

use crate::stats::new_histogram;

/// A request is late when it goes out more than this after its intended time, µs.
pub const LATE_US: u64 = 1000;

/// Schedule health of an interval (or a whole run).
#[derive(Clone, Debug)]
pub struct ScheduleStats {
    /// Requests sent with an intended time.
    pub sent: u64,
    /// Of those, sent more than [`LATE_US`] after it.
    pub late: u64,
    /// Late ones that waited because no connection had room (the rest waited for the
    /// generator itself: its thread was busy or woke late).
    pub late_blocked: u64,
    /// Due by the end of the run but never sent.
    pub unsent_at_end: u64,
    /// Sent but unanswered when the run ended.
    pub in_flight_at_end: u64,
    /// Actual send time minus intended send time, µs.
    pub lag: Histogram<u64>,
    /// How old each unfinished request (unsent or in flight) was when the run ended, from
    /// its intended time, µs: a lower bound of the response time it never got.
    pub unfinished_age: Histogram<u64>,
}

impl Default for ScheduleStats {
    fn default() -> Self {
        Self::new()
    }
}

impl ScheduleStats {
    pub fn new() -> Self {
        ScheduleStats {
            sent: 0,
            late: 0,
            late_blocked: 0,
            unsent_at_end: 0,
            in_flight_at_end: 0,
            lag: new_histogram(),
            unfinished_age: new_histogram(),
        }
    }

    /// One request sent `lag_us` after its intended time; `blocked` when it had waited
    /// for a connection with room.
    #[inline]
    pub fn record_send(&mut self, lag_us: u64, blocked: bool) {
        self.sent += 1;
        if lag_us > LATE_US {
            self.late += 1;
            if blocked {
                self.late_blocked += 1;
            }
        }
        self.lag.saturating_record(lag_us);
    }

    /// Late requests that waited for the generator rather than for a connection.
    pub fn late_generator(&self) -> u64 {
        self.late - self.late_blocked
    }

    /// Requests the run ended before answering.
    pub fn unfinished(&self) -> u64 {
        self.unsent_at_end + self.in_flight_at_end
    }

    /// Adds `other` into `self`.
    pub fn merge(&mut self, other: &ScheduleStats) {
        self.sent += other.sent;
        self.late += other.late;
        self.late_blocked += other.late_blocked;
        self.unsent_at_end += other.unsent_at_end;
        self.in_flight_at_end += other.in_flight_at_end;
        self.lag
            .add(&other.lag)
            .expect("histograms share the same bounds");
        self.unfinished_age
            .add(&other.unfinished_age)
            .expect("histograms share the same bounds");
    }

    /// Clears all counts, keeping the histograms' memory.
    pub fn reset(&mut self) {
        self.sent = 0;
        self.late = 0;
        self.late_blocked = 0;
        self.unsent_at_end = 0;
        self.in_flight_at_end = 0;
        self.lag.reset();
        self.unfinished_age.reset();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn late_means_more_than_a_millisecond_and_keeps_its_reason() {
        let mut s = ScheduleStats::new();
        s.record_send(0, false);
        s.record_send(1000, true);
        s.record_send(1001, true);
        s.record_send(5000, false);
        assert_eq!(
            (s.sent, s.late, s.late_blocked, s.late_generator()),
            (4, 2, 1, 1)
        );
        assert_eq!(s.lag.len(), 4);
        assert_eq!(s.lag.min(), 0);
        let mut total = ScheduleStats::new();
        total.merge(&s);
        total.merge(&s);
        assert_eq!((total.sent, total.late), (8, 4));
        total.reset();
        assert_eq!((total.sent, total.lag.len()), (0, 0));
    }
}
