//! What a request on the wire carries until its reply comes: its purpose (a workload
//! request, a cluster or visibility side request, MULTI/EXEC) and its times. The
//! connection queues these (the plain closed loop's SETs and GETs in a compact form,
//! see [`in_flight_queue`](crate::engine::in_flight_queue)); the client reads them back
//! with each reply.

use std::num::NonZeroU64;
use std::time::{Duration, Instant};

use crate::engine::generator::Op;
use crate::protocol::Expect;

/// How many cluster redirections a request has been through.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Redirects {
    /// Sent for the first time: it counts toward `-n`.
    None,
    /// Resent once after a MOVED or ASK.
    Once,
    /// Resent twice (an ASK then a MOVED during a migration): the last time it is.
    Twice,
}

/// A request of the workload.
#[derive(Clone, Copy, Debug)]
pub struct Request {
    /// What was sent, to resend it after a cluster redirection.
    pub op: Op,
    /// The stats row its reply is recorded in.
    pub row: u8,
    /// What its reply looks like (a multi-key read carries its key count).
    pub expect: Expect,
    pub redirects: Redirects,
    /// Times it was sent again after `-TRYAGAIN` (cluster mode).
    pub tries: u8,
    /// A SCAN whose reply carries the cursor to follow.
    pub scan: bool,
    /// A write tracked for replica visibility: its sequence number in the value stamp
    /// (sequence numbers start at 1: eight bytes in the entry, not sixteen).
    pub stamp: Option<NonZeroU64>,
    /// Sent inside MULTI: its reply is `+QUEUED`, its outcome comes with EXEC's.
    pub queued: bool,
}

impl Request {
    /// A workload request sent for the first time, outside MULTI, untracked (what the
    /// plain closed loop sends), recorded in stats row `row`.
    #[inline(always)]
    pub fn plain(op: Op, row: usize, expect: Expect) -> Self {
        Request {
            op,
            row: row as u8,
            expect,
            redirects: Redirects::None,
            tries: 0,
            scan: false,
            stamp: None,
            queued: false,
        }
    }
}

/// What a request on the wire is for.
#[derive(Clone, Copy, Debug)]
pub enum Purpose {
    /// A request of the workload, recorded when its reply comes.
    Work(Request),
    /// `ASKING` before an ASK-redirected request: its `+OK` is not recorded.
    Asking,
    /// `CLUSTER SLOTS` to refresh the slot map: its reply is read, not recorded.
    TopologyRefresh,
    /// A replica-visibility poll (its token: the tracked write's slot, replica or
    /// primary, generation): its reply is compared, not recorded as load.
    Visibility(u32),
    /// `MULTI` opening a stream's batch: its `+OK` is not recorded.
    Multi,
    /// `EXEC` closing a stream's batch: its reply records every command of the batch.
    Exec,
    /// Nothing: a reply that came with no request in flight (a server refusing the
    /// connection says why this way). Never in flight itself.
    Unsolicited,
}

impl Purpose {
    /// What the decoder reads for this request's reply.
    pub fn expect(&self) -> Expect {
        match self {
            Purpose::Work(request) => request.expect,
            Purpose::Visibility(_) => Expect::Get,
            Purpose::Asking
            | Purpose::TopologyRefresh
            | Purpose::Unsolicited
            | Purpose::Multi
            | Purpose::Exec => Expect::Store,
        }
    }
}

/// A request on the wire whose reply has not arrived yet.
#[derive(Clone, Copy, Debug)]
pub struct Pending {
    pub purpose: Purpose,
    /// Sequence number echoed by memcache binary replies, checked to catch a stream out
    /// of step.
    pub opaque: u32,
    /// Bytes this request took on the wire.
    pub tx: u32,
    /// When it should have been sent (open loop: its scheduled time; closed loop: when
    /// it was sent). Response time counts from here.
    pub intended: Instant,
    /// When it was sent, as nanoseconds after `intended` (negative: before it): the
    /// closed loop's are equal, and an `i64` spans centuries, so no send time is
    /// clipped. Service time counts from [`Pending::sent`].
    sent_after: i64,
}

impl Pending {
    /// A request intended for `intended`, sent at `sent`.
    #[inline]
    pub fn new(purpose: Purpose, opaque: u32, tx: u32, intended: Instant, sent: Instant) -> Self {
        let sent_after = match sent.checked_duration_since(intended) {
            Some(later) => i64::try_from(later.as_nanos()).unwrap_or(i64::MAX),
            None => i64::try_from(intended.duration_since(sent).as_nanos())
                .map_or(i64::MIN, |earlier| -earlier),
        };
        Pending {
            purpose,
            opaque,
            tx,
            intended,
            sent_after,
        }
    }

    /// A request sent when it was intended (the closed loop).
    #[inline(always)]
    pub fn sent_as_intended(purpose: Purpose, opaque: u32, tx: u32, at: Instant) -> Self {
        Pending {
            purpose,
            opaque,
            tx,
            intended: at,
            sent_after: 0,
        }
    }

    /// When it was sent. Service time counts from here.
    #[inline]
    pub fn sent(&self) -> Instant {
        let offset = Duration::from_nanos(self.sent_after.unsigned_abs());
        let sent = if self.sent_after >= 0 {
            self.intended.checked_add(offset)
        } else {
            self.intended.checked_sub(offset)
        };
        sent.unwrap_or(self.intended)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sent_reads_back_exactly() {
        let base = Instant::now();
        let times = [
            (base, base),
            (base, base + Duration::from_nanos(1)),
            (
                base,
                base + Duration::from_secs(7) + Duration::from_nanos(123_456_789),
            ),
            (base + Duration::from_millis(3), base),
            (base, base + Duration::from_secs(90_000)),
        ];
        for (intended, sent) in times {
            let pending = Pending::new(Purpose::Asking, 0, 0, intended, sent);
            assert_eq!(pending.intended, intended);
            assert_eq!(pending.sent(), sent);
        }
        let closed = Pending::sent_as_intended(Purpose::Multi, 0, 0, base);
        assert_eq!(closed.sent(), base);
    }

    #[test]
    fn entry_stays_small() {
        // The general path writes one per request and reads it back per reply.
        assert!(
            std::mem::size_of::<Pending>() <= 80,
            "{}",
            std::mem::size_of::<Pending>()
        );
    }
}
