//! What a request on the wire carries until its reply comes: its purpose (a workload
//! request, a cluster or visibility side request, MULTI/EXEC) and its times. The
//! connection queues these; the client reads them back with each reply.

use std::time::Instant;

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
    /// A write tracked for replica visibility: its sequence number in the value stamp.
    pub stamp: Option<u64>,
    /// Sent inside MULTI: its reply is `+QUEUED`, its outcome comes with EXEC's.
    pub queued: bool,
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
    /// When it was sent. Service time counts from here.
    pub sent: Instant,
}
