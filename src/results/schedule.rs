//! An open-loop run's schedule as the reports show it: target and achieved rates, late
//! sends, the send lag, what the run left unfinished, and, when the target was missed,
//! why, judged from the evidence the run recorded.
//!
//! ```text
//! achieved < 99 % of target, and something fell due (else no reason)?
//!   under 1 % of what fell due unfinished (never sent, or unanswered at the end):
//!     1 % or more of the sends late for want of a connection:
//!       connections x pipeline / service floor (p5) < target -> ConnectionsBusy
//!       otherwise                                  -> Waited (the server paused, then
//!                                                     caught up)
//!     otherwise                                    -> ScheduleShort (the run's edges,
//!                                                     ramp-up, Poisson draws)
//!   late for want of the generator > late for want of a connection (counting what was
//!   left unsent behind full connections)           -> Generator
//!   connections x pipeline / service floor (p5) < target              -> ConnectionsBusy
//!   every connection full at the end, more left unsent than sent late -> Stalled
//!   otherwise (the service time rose with every connection full)     -> ServerTooSlow
//! ```

use hdrhistogram::Histogram;

use crate::results::value_at_percentile_us;
use crate::stats::ScheduleStats;

/// The share of the target rate that counts as reached.
pub const REACHED: f64 = 0.99;

/// The service-time percentile taken as what a request costs the server when it is not
/// queueing (a low one, but not the minimum, which one lucky request sets).
const SERVICE_FLOOR_PERCENTILE: f64 = 5.0;

/// How the load was spread, to judge why a target was missed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Capacity {
    /// Connections in all (clients, all threads).
    pub connections: u64,
    /// Requests in flight per connection at most.
    pub pipeline: u64,
}

/// Why an open-loop run fell short of its target.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Behind {
    /// Every connection was full and the service time rose well above its floor: the
    /// server answers no faster.
    ServerTooSlow {
        service_p50_ms: f64,
        service_floor_ms: f64,
    },
    /// Every connection was full while the service time stayed near its floor: these
    /// connections cannot carry the target, however fast the server.
    ConnectionsBusy {
        slots: u64,
        service_floor_ms: f64,
        max_per_sec: f64,
    },
    /// Requests went out late although connections had room: the generator's own thread
    /// (its CPU, or its wake-ups) is the limit.
    Generator { late: u64, lag_p99_ms: f64 },
    /// Every connection was full when the run ended and more requests fell due unsent
    /// than went out late: the server stopped answering (or answered far too little)
    /// towards the end; those requests are in no latency figure.
    Stalled { unsent: u64, in_flight: u64 },
    /// Nearly every request that fell due was sent and answered: the schedule itself
    /// asked for less than target × run time (connecting and any ramp-up count in the
    /// run's time; Poisson draws vary).
    ScheduleShort { due: u64 },
    /// Nearly every request that fell due was answered in the end, but many went out
    /// late because every connection was waiting for replies: the server paused (or
    /// slowed) for a while and then caught up; the pause is in the response times.
    Waited { late_blocked: u64, lag_max_ms: f64 },
}

impl Behind {
    /// The reason as one line, for the text report and the JSON.
    pub fn reason(&self) -> String {
        match *self {
            Behind::ServerTooSlow {
                service_p50_ms,
                service_floor_ms,
            } => format!(
                "the server is too slow: with every connection full its service time rose \
                 to {service_p50_ms:.3} ms (p50) from {service_floor_ms:.3} ms (p5)"
            ),
            Behind::Stalled { unsent, in_flight } => format!(
                "the server stopped answering: every connection was full when the run ended, \
                 {} that fell due {} never sent and {in_flight} {} \
                 unanswered (they are in no latency figure; see Unfinished)",
                requests(unsent),
                were(unsent),
                were(in_flight)
            ),
            Behind::Waited {
                late_blocked,
                lag_max_ms,
            } => format!(
                "the server kept kvbench waiting: {} went out late \
                 (up to {lag_max_ms:.3} ms) because every connection was waiting for replies, \
                 and all were answered in the end: the server paused or slowed for a while \
                 (see the response times)",
                requests(late_blocked)
            ),
            Behind::ScheduleShort { due } => format!(
                "not the server or kvbench: the {} that fell due {} sent and \
                 answered, the schedule asked for fewer (connecting and any ramp-up count in \
                 the run's time, and Poisson arrivals vary)",
                requests(due),
                were(due)
            ),
            Behind::ConnectionsBusy {
                slots,
                service_floor_ms,
                max_per_sec,
            } => format!(
                "connections all busy: {} in flight at most (connections × \
                 pipeline) at a service time of {service_floor_ms:.3} ms carry about \
                 {max_per_sec:.0} requests/s; add connections (-c, -t) or --pipeline",
                requests(slots)
            ),
            Behind::Generator { late, lag_p99_ms } => format!(
                "the generator's own CPU: {} went out late while connections \
                 had room (send lag p99 {lag_p99_ms:.3} ms); add threads (-t) or lower the rate",
                requests(late)
            ),
        }
    }
}

/// How an open-loop run kept its schedule.
#[derive(Clone, Debug)]
pub struct ScheduleResult {
    /// Requests per second aimed at, all connections together.
    pub target_per_sec: u64,
    /// `uniform` or `poisson`.
    pub arrival: &'static str,
    /// The rate was set per connection (`--rate-limiting`).
    pub per_connection: bool,
    /// Requests answered per second of the run.
    pub achieved_per_sec: f64,
    pub health: ScheduleStats,
    /// Why the target was missed, when it was.
    pub behind: Option<Behind>,
}

impl ScheduleResult {
    /// The result of a run that aimed at `target_per_sec` and answered
    /// `achieved_per_sec`; `service` is its Totals' service-time histogram (µs).
    pub fn new(
        target_per_sec: u64,
        arrival: &'static str,
        per_connection: bool,
        achieved_per_sec: f64,
        health: ScheduleStats,
        service: Option<&Histogram<u64>>,
        capacity: Capacity,
    ) -> ScheduleResult {
        let behind = diagnose(
            target_per_sec as f64,
            achieved_per_sec,
            &health,
            service,
            capacity,
        );
        ScheduleResult {
            target_per_sec,
            arrival,
            per_connection,
            achieved_per_sec,
            health,
            behind,
        }
    }

    /// Achieved as a percentage of the target.
    pub fn achieved_percent(&self) -> f64 {
        percent(self.achieved_per_sec, self.target_per_sec as f64)
    }

    /// Late sends as a percentage of all scheduled sends.
    pub fn late_percent(&self) -> f64 {
        percent(self.health.late as f64, self.health.sent as f64)
    }

    /// Several runs' schedules as one (`-x N`): counts and histograms added, the
    /// achieved rate averaged and, when that average misses the target, the first run's
    /// reason that missed it too.
    pub fn aggregate(all: &[&ScheduleResult]) -> Option<ScheduleResult> {
        let first = all.first()?;
        let mut health = ScheduleStats::new();
        for s in all {
            health.merge(&s.health);
        }
        let achieved_per_sec =
            all.iter().map(|s| s.achieved_per_sec).sum::<f64>() / all.len() as f64;
        let reached = achieved_per_sec >= first.target_per_sec as f64 * REACHED;
        Some(ScheduleResult {
            achieved_per_sec,
            health,
            behind: if reached {
                None
            } else {
                all.iter().find_map(|s| s.behind)
            },
            ..(*first).clone()
        })
    }
}

/// `n` requests, in the singular for one.
fn requests(n: u64) -> String {
    if n == 1 {
        "1 request".to_string()
    } else {
        format!("{n} requests")
    }
}

/// The verb for `n` things.
fn were(n: u64) -> &'static str {
    if n == 1 { "was" } else { "were" }
}

fn percent(part: f64, whole: f64) -> f64 {
    if whole > 0.0 {
        part / whole * 100.0
    } else {
        0.0
    }
}

fn ms(us: u64) -> f64 {
    us as f64 / 1000.0
}

/// Why `achieved` fell short of `target`, or `None` when it did not.
fn diagnose(
    target: f64,
    achieved: f64,
    health: &ScheduleStats,
    service: Option<&Histogram<u64>>,
    capacity: Capacity,
) -> Option<Behind> {
    let due = health.sent + health.unsent_at_end;
    // Nothing fell due (a run stopped in its warm-up): nothing to judge.
    if achieved >= target * REACHED || due == 0 {
        return None;
    }
    let slots = capacity.connections.max(1) * capacity.pipeline.max(1);
    let (floor_us, p50_us) = match service {
        Some(h) if !h.is_empty() => (
            value_at_percentile_us(h, SERVICE_FLOOR_PERCENTILE).max(1),
            value_at_percentile_us(h, 50.0),
        ),
        _ => (1, 1),
    };
    // Little's law: with every slot busy, requests per second = slots / service time.
    let max_per_sec = slots as f64 * 1e6 / floor_us as f64;
    let connections_busy = Behind::ConnectionsBusy {
        slots,
        service_floor_ms: ms(floor_us),
        max_per_sec,
    };
    if (health.unfinished() as f64) < due as f64 * (1.0 - REACHED) {
        if (health.late_blocked as f64) >= health.sent as f64 * (1.0 - REACHED) {
            // A run bounded by a count answers everything in the end, whatever held it
            // back: connections too few for the target wait the whole run, not a while.
            if max_per_sec < target {
                return Some(connections_busy);
            }
            return Some(Behind::Waited {
                late_blocked: health.late_blocked,
                lag_max_ms: ms(health.lag.max()),
            });
        }
        return Some(Behind::ScheduleShort { due });
    }
    // Requests left unsent behind connections all full waited for a connection too.
    let full_at_end = health.in_flight_at_end >= slots;
    let unsent_blocked = if full_at_end { health.unsent_at_end } else { 0 };
    if health.late_generator() > health.late_blocked + unsent_blocked {
        return Some(Behind::Generator {
            late: health.late_generator(),
            lag_p99_ms: ms(value_at_percentile_us(&health.lag, 99.0)),
        });
    }
    if max_per_sec < target {
        Some(connections_busy)
    } else if full_at_end && health.unsent_at_end > health.late_blocked {
        Some(Behind::Stalled {
            unsent: health.unsent_at_end,
            in_flight: health.in_flight_at_end,
        })
    } else {
        Some(Behind::ServerTooSlow {
            service_p50_ms: ms(p50_us),
            service_floor_ms: ms(floor_us),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::new_histogram;

    fn health(late_blocked: u64, late_generator: u64) -> ScheduleStats {
        let mut h = ScheduleStats::new();
        for _ in 0..late_blocked {
            h.record_send(5000, true);
        }
        for _ in 0..late_generator {
            h.record_send(3000, false);
        }
        for _ in 0..1000 {
            h.record_send(10, false);
        }
        h
    }

    /// `h` with `unsent` due but never sent and `in_flight` unanswered at the end.
    fn ended(mut h: ScheduleStats, unsent: u64, in_flight: u64) -> ScheduleStats {
        h.unsent_at_end = unsent;
        h.in_flight_at_end = in_flight;
        h
    }

    fn service(values_us: &[(u64, u64)]) -> Histogram<u64> {
        let mut h = new_histogram();
        for &(v, n) in values_us {
            h.record_n(v, n).unwrap();
        }
        h
    }

    const CAP: Capacity = Capacity {
        connections: 10,
        pipeline: 1,
    };

    #[test]
    fn a_reached_target_has_no_reason() {
        let r = ScheduleResult::new(1000, "uniform", false, 995.0, health(500, 0), None, CAP);
        assert_eq!(r.behind, None);
        assert!((r.achieved_percent() - 99.5).abs() < 1e-9);
    }

    #[test]
    fn late_with_room_is_the_generator() {
        let h = ended(health(10, 400), 1000, 2);
        let r = ScheduleResult::new(1000, "uniform", false, 500.0, h, None, CAP);
        assert!(matches!(
            r.behind,
            Some(Behind::Generator { late: 400, .. })
        ));
        assert!(
            r.behind
                .unwrap()
                .reason()
                .starts_with("the generator's own CPU")
        );
    }

    #[test]
    fn full_connections_at_a_low_service_time_are_too_few() {
        // 10 connections at 50 µs carry 200 000/s at most: a 1 000 000/s target needs more.
        let s = service(&[(50, 1000)]);
        let r = ScheduleResult::new(
            1_000_000,
            "uniform",
            false,
            190_000.0,
            ended(health(400, 0), 5000, 10),
            Some(&s),
            CAP,
        );
        match r.behind {
            Some(Behind::ConnectionsBusy {
                slots, max_per_sec, ..
            }) => {
                assert_eq!(slots, 10);
                assert!((max_per_sec - 200_000.0).abs() < 1000.0, "{max_per_sec}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn full_connections_at_a_risen_service_time_mean_a_slow_server() {
        // A floor of 50 µs would carry 200 000/s, but the service time rose to 2 ms.
        let s = service(&[(50, 100), (2000, 900)]);
        let r = ScheduleResult::new(
            100_000,
            "uniform",
            false,
            5_000.0,
            ended(health(400, 0), 300, 10),
            Some(&s),
            CAP,
        );
        assert!(
            matches!(r.behind, Some(Behind::ServerTooSlow { .. })),
            "{:?}",
            r.behind
        );
        assert!(
            r.behind
                .unwrap()
                .reason()
                .starts_with("the server is too slow")
        );
    }

    #[test]
    fn a_server_that_stopped_answering_is_stalled_not_the_generator() {
        // A freeze until the end: a few sends late for want of the generator, none
        // for a connection (nothing went out after the freeze), 3990 never sent, every
        // connection full: the server stopped, whatever the service time of the rest.
        let s = service(&[(100, 1000)]);
        let h = ended(health(0, 22), 3990, 10);
        let r = ScheduleResult::new(2000, "uniform", false, 1200.0, h, Some(&s), CAP);
        assert_eq!(
            r.behind,
            Some(Behind::Stalled {
                unsent: 3990,
                in_flight: 10
            })
        );
        assert!(
            r.behind
                .unwrap()
                .reason()
                .starts_with("the server stopped answering")
        );
    }

    #[test]
    fn a_shortfall_with_everything_due_answered_is_the_schedules_own() {
        // 15 Poisson draws over a 4 s run at 5/s, all sent, one of them late.
        let mut h = ScheduleStats::new();
        h.record_send(3000, false);
        for _ in 0..14 {
            h.record_send(10, false);
        }
        let r = ScheduleResult::new(5, "poisson", false, 3.75, h, None, CAP);
        assert_eq!(r.behind, Some(Behind::ScheduleShort { due: 15 }));
        assert!(
            r.behind
                .unwrap()
                .reason()
                .starts_with("not the server or kvbench")
        );
    }

    #[test]
    fn a_server_that_paused_then_caught_up_kept_kvbench_waiting() {
        // A 4 s stall mid-run: 500 sends waited for a connection, up to 2 s; everything
        // was answered by the end, at 60 % of the target over the run.
        let mut h = ScheduleStats::new();
        for i in 0..500 {
            h.record_send(4000 + i * 4000, true);
        }
        for _ in 0..1000 {
            h.record_send(10, false);
        }
        let r = ScheduleResult::new(1000, "uniform", false, 600.0, h, None, CAP);
        let Some(Behind::Waited {
            late_blocked,
            lag_max_ms,
        }) = r.behind
        else {
            panic!("{:?}", r.behind);
        };
        assert_eq!(late_blocked, 500);
        assert!((1990.0..2010.0).contains(&lag_max_ms), "{lag_max_ms}");
        assert!(
            r.behind
                .unwrap()
                .reason()
                .starts_with("the server kept kvbench waiting: 500 requests went out late")
        );
    }

    #[test]
    fn a_count_run_on_too_few_connections_is_their_limit_not_a_pause() {
        // `-c 1 -n 60000 --rate=1000000`: every request answered in the end, almost every
        // one late for want of the one connection, at a service time of 20 µs: one
        // connection carries 50 000 requests/s, the target is twenty times that.
        let mut h = ScheduleStats::new();
        for i in 0..60_000 {
            h.record_send(10 + i, true);
        }
        let one = Capacity {
            connections: 1,
            pipeline: 1,
        };
        let served = service(&[(20, 60_000)]);
        let r = ScheduleResult::new(1_000_000, "uniform", false, 47_000.0, h, Some(&served), one);
        let Some(Behind::ConnectionsBusy { slots, .. }) = r.behind else {
            panic!("{:?}", r.behind);
        };
        assert_eq!(slots, 1);
        assert!(
            r.behind
                .unwrap()
                .reason()
                .starts_with("connections all busy: 1 request in flight at most"),
            "{}",
            r.behind.unwrap().reason()
        );
    }

    #[test]
    fn nothing_due_is_nothing_to_judge() {
        // Stopped in the warm-up: no request fell due in the measured run.
        let r = ScheduleResult::new(1000, "uniform", false, 0.0, ScheduleStats::new(), None, CAP);
        assert_eq!(r.behind, None);
    }

    #[test]
    fn aggregate_adds_counts_and_averages_rates() {
        let a = ScheduleResult::new(1000, "poisson", false, 1000.0, health(0, 0), None, CAP);
        let b = ScheduleResult::new(1000, "poisson", false, 500.0, health(0, 400), None, CAP);
        let agg = ScheduleResult::aggregate(&[&a, &b]).unwrap();
        assert_eq!(agg.health.sent, 2400);
        assert_eq!(agg.achieved_per_sec, 750.0);
        assert!(agg.behind.is_some());
        assert_eq!(agg.arrival, "poisson");
        // A run behind in an average that reached the target gives no reason.
        let c = ScheduleResult::new(1000, "poisson", false, 985.0, health(0, 400), None, CAP);
        let d = ScheduleResult::new(1000, "poisson", false, 999.0, health(0, 0), None, CAP);
        assert!(c.behind.is_some());
        assert!(
            ScheduleResult::aggregate(&[&c, &d])
                .unwrap()
                .behind
                .is_none()
        );
    }
}
