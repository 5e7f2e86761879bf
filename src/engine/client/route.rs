//! Where a request goes in cluster mode: the connection that serves its key's slot, and
//! what MOVED and ASK change. A MOVED updates the slot map and asks the node that
//! answered for the whole map again (at most once a second); a redirection to a node this
//! client has no connection to opens one, once its name is looked up off the event loop
//! (the request waits, parked, meanwhile).

use std::net::{IpAddr, SocketAddr};
use std::time::{Duration, Instant};

use crate::engine::client::{Client, ClientContext, MAX_CONNECTIONS_PER_CLIENT, Status, held};
use crate::engine::cluster::{Redirect, SlotMap};
use crate::engine::connection::{Connection, Failure};
use crate::engine::generator::Op;
use crate::engine::in_flight::{Purpose, Redirects, Request};
use crate::engine::resolver::Lookup;
use crate::plan::{Endpoint, ErrorReplies, Plan};
use crate::protocol::resp_encode;

use super::send::{Resend, Retry};

/// The first pause before a request answered `-TRYAGAIN` is sent again.
const TRYAGAIN_FIRST: Duration = Duration::from_millis(2);
/// The longest pause between tries.
const TRYAGAIN_MAX: Duration = Duration::from_millis(100);
/// Retries of a request answered `-TRYAGAIN` (about 6 s in all); after them the next
/// `-TRYAGAIN` is its answer, an error reply (`record.rs`).
pub(super) const TRYAGAIN_TRIES: u8 = 64;

/// A redirected request waiting for its target's name to be looked up.
#[derive(Clone, Debug)]
pub(super) struct Parked {
    /// The connection the redirection came from.
    source: usize,
    host: String,
    port: u16,
    slot: u16,
    ask: bool,
    request: Request,
    /// Open loop: the request's intended send time, which its resend keeps.
    intended: Option<Instant>,
}

impl Client {
    /// The connection a request for the key in `key_buf` goes to.
    pub(super) fn route(&self) -> usize {
        self.router.route(&self.key_buf, self.conns.len())
    }

    /// The slot map, to change: the requests queued for room were routed by the old one.
    fn slot_owner_mut(&mut self) -> Option<&mut Vec<u16>> {
        self.backlog.mark_stale();
        self.router.slots_mut()
    }

    /// Follows a MOVED (update the slot map, resend) or ASK (ASKING + resend, once) that
    /// answered `request` on connection `source`. In open loop the resend keeps the
    /// request's `intended` send time, so the redirection counts in its response time.
    pub(super) fn follow(
        &mut self,
        source: usize,
        redirect: Redirect,
        request: Request,
        intended: Option<Instant>,
        plan: &Plan,
        ctx: &mut ClientContext,
    ) -> Result<(), Failure> {
        if ctx.time_up {
            // Read after the deadline: the request is not sent again, and no slot map is
            // asked for or connection opened after the run's end.
            return Ok(());
        }
        if matches!(redirect, Redirect::TryAgain) {
            self.retry_later(request, intended, ctx);
            return Ok(());
        }
        if self.pinned.is_some() {
            if !takes_a_fresh_slot(&request, plan) {
                return Err(self.unroutable(source, &redirect, plan, ctx));
            }
            return self.follow_pinned(source, &redirect);
        }
        let (slot, mut host, port, ask) = match redirect {
            Redirect::Moved { slot, host, port } => (slot, host, port, false),
            Redirect::Ask { slot, host, port } => (slot, host, port, true),
            Redirect::TryAgain => return Ok(()),
        };
        // Redis sends an empty host for "the address you reached me by".
        let mut reached_by = None;
        if host.is_empty()
            && let Endpoint::Tcp {
                host: by_name,
                addr,
            } = self.conns[source].endpoint()
        {
            host = by_name.clone();
            reached_by = Some(addr.ip());
        }
        let target = self.connection_to(&host, port, reached_by, plan, ctx)?;
        if !ask {
            // Asked after the target is known, as the slot map's owner is updated first.
            if let Some(target) = target
                && let Some(owner) = self.slot_owner_mut()
            {
                owner[usize::from(slot)] = target as u16;
            }
            self.refresh_topology(source);
        }
        match target {
            Some(target) => self.resend(target, ask, request, intended, ctx),
            None => self.parked.push(Parked {
                source,
                host,
                port,
                slot,
                ask,
                request,
                intended,
            }),
        }
        Ok(())
    }

    /// A pinned client's request that names no `{tag}` (redis-benchmark's command
    /// `set foo x` in `--cluster`) goes to its master whatever slot its key hashes to, so
    /// sending it again after a MOVED or ASK could only be redirected again, for ever.
    /// The redirection ends the run instead, as an error reply (redis-benchmark's `Error
    /// from server HOST:PORT: MOVED ...` under `ErrorReplies::Stop`), as the real tool
    /// does.
    fn unroutable(
        &self,
        source: usize,
        redirect: &Redirect,
        plan: &Plan,
        ctx: &mut ClientContext,
    ) -> Failure {
        let text = match redirect {
            Redirect::Moved { slot, host, port } => format!("MOVED {slot} {host}:{port}"),
            Redirect::Ask { slot, host, port } => format!("ASK {slot} {host}:{port}"),
            Redirect::TryAgain => "TRYAGAIN".to_string(),
        };
        let peer = self.conns[source].peer();
        if plan.load.error_replies == ErrorReplies::Stop {
            ctx.error_reply.keep(peer, text.as_bytes());
        }
        Failure::Fatal(format!(
            "server {peer} answered {text}: the command names no {{tag}}, so a client pinned to one master cannot send it where its key lives (put a {{tag}} in its key)"
        ))
    }

    /// `-TRYAGAIN` (a multi-key request during a slot migration): the request is sent
    /// again after a back-off that doubles with each try, routed by its key then. Never a
    /// success, never dropped: `record.rs` answers one whose [`TRYAGAIN_TRIES`] retries
    /// are spent (or that it cannot send again) as an error reply before it comes here.
    fn retry_later(
        &mut self,
        request: Request,
        intended: Option<Instant>,
        ctx: &mut ClientContext,
    ) {
        let resendable = matches!(
            request.op,
            Op::Set { .. } | Op::Get { .. } | Op::Verify { .. } | Op::MultiGet | Op::Template
        ) || held::resendable_stream(request.op);
        // A guard only: `record.rs` keeps such a request from coming here.
        if !resendable || request.tries >= TRYAGAIN_TRIES {
            self.release_copy(request.op);
            let row = usize::from(request.row);
            if row < ctx.stats.len() {
                ctx.stats[row].errors += 1;
            }
            ctx.errors.report(format_args!(
                "a request got -TRYAGAIN {} times: counted as an error",
                request.tries + 1
            ));
            return;
        }
        let tries = request.tries + 1;
        let pause = TRYAGAIN_FIRST
            .saturating_mul(1 << (tries - 1).min(16))
            .min(TRYAGAIN_MAX);
        self.retries.push(Retry {
            at: Instant::now() + pause,
            op: request.op,
            // A retry is not a first send (it does not count toward -n again), and it
            // may be redirected afresh (the owner sends ASK again while migrating):
            // the tries bound the loop.
            redirects: Redirects::Once,
            tries,
            intended,
        });
    }

    /// Queues `request` again for connection `target`; a request is followed through at
    /// most two redirections (ASK then MOVED during a migration), and nodes that keep
    /// sending it on get an error counted instead.
    fn resend(
        &mut self,
        target: usize,
        ask: bool,
        request: Request,
        intended: Option<Instant>,
        ctx: &mut ClientContext,
    ) {
        let resendable = matches!(
            request.op,
            Op::Set { .. } | Op::Get { .. } | Op::Verify { .. } | Op::MultiGet
        ) || held::resendable_stream(request.op);
        let redirects = match request.redirects {
            Redirects::None => Some(Redirects::Once),
            Redirects::Once => Some(Redirects::Twice),
            Redirects::Twice => None,
        };
        match redirects {
            Some(redirects) if resendable => self.resends.push_back(Resend {
                conn: target,
                op: request.op,
                asking: ask,
                redirects,
                tries: request.tries,
                intended,
            }),
            _ => {
                self.release_copy(request.op);
                let row = usize::from(request.row);
                if row < ctx.stats.len() {
                    ctx.stats[row].errors += 1;
                }
            }
        }
    }

    /// Sends on the redirections whose target name has been looked up since. Returns the
    /// status to report when a failure ends the client.
    pub(super) fn unpark(&mut self, plan: &Plan, ctx: &mut ClientContext) -> Option<Status> {
        if ctx.time_up {
            // After the deadline nothing is sent again, nor a connection opened for it.
            return None;
        }
        let mut i = 0;
        while i < self.parked.len() {
            let p = self.parked[i].clone();
            match self.connection_to(&p.host, p.port, None, plan, ctx) {
                Ok(None) => i += 1,
                Ok(Some(target)) => {
                    self.parked.swap_remove(i);
                    if !p.ask
                        && let Some(owner) = self.slot_owner_mut()
                    {
                        owner[usize::from(p.slot)] = target as u16;
                    }
                    self.resend(target, p.ask, p.request, p.intended, ctx);
                }
                Err(failure) => {
                    self.parked.swap_remove(i);
                    if let Some(status) = self.connection_failed(p.source, failure, plan, ctx) {
                        return Some(status);
                    }
                }
            }
        }
        None
    }

    /// After a MOVED, asks the node that answered for the whole slot map again (at most
    /// once a second per client): a resharding moves many slots, and one MOVED each would
    /// cost a round trip per slot.
    pub(super) fn refresh_topology(&mut self, source: usize) {
        let now = Instant::now();
        if self
            .last_refresh
            .is_some_and(|t| now.duration_since(t) < Duration::from_secs(1))
        {
            return;
        }
        self.last_refresh = Some(now);
        let conn = &mut self.conns[source];
        if !conn.is_ready() {
            return;
        }
        let started = conn.begin(now);
        resp_encode::encode_command(conn.encoder().1, &[b"CLUSTER", b"SLOTS"]);
        conn.finish(started, Purpose::TopologyRefresh, now, now);
    }

    /// Routes every slot as a fresh `CLUSTER SLOTS` reply says, opening connections to
    /// masters this client does not know yet (a master whose name is still being looked
    /// up keeps its slots routed as before, until a later refresh or MOVED).
    pub(super) fn apply_slot_map(&mut self, map: &SlotMap, plan: &Plan, ctx: &mut ClientContext) {
        if let Some(pinned) = self.pinned.as_mut() {
            // A pinned client keeps its one master: only the slots it names change.
            pinned.apply(map);
            return;
        }
        let mut index_of = Vec::with_capacity(map.nodes.len());
        for (host, port) in &map.nodes {
            let found = self.connection_to(host, *port, None, plan, ctx);
            index_of.push(found.ok().flatten());
        }
        if let Some(owner) = self.slot_owner_mut() {
            for (slot, node) in map.slot_owner.iter().enumerate() {
                if let Some(Some(i)) = index_of.get(usize::from(*node)) {
                    owner[slot] = *i as u16;
                }
            }
        }
    }

    /// The index of the connection to `host:port`, opening a new one if needed; `None`
    /// while the name is being looked up. `reached_by` is the address already known for
    /// `host`, when there is one.
    fn connection_to(
        &mut self,
        host: &str,
        port: u16,
        reached_by: Option<IpAddr>,
        plan: &Plan,
        ctx: &mut ClientContext,
    ) -> Result<Option<usize>, Failure> {
        let name = format!("{host}:{port}");
        if let Some(i) = self.conns.iter().position(|c| c.peer() == name) {
            return Ok(Some(i));
        }
        if self.conns.len() >= MAX_CONNECTIONS_PER_CLIENT {
            return Err(Failure::Broken(format!(
                "redirected to {name}, but a client may not open more than {MAX_CONNECTIONS_PER_CLIENT} connections"
            )));
        }
        let lookup = match (reached_by, ctx.resolver) {
            (Some(ip), _) => Lookup::Ready(SocketAddr::new(ip, port)),
            (None, Some(resolver)) => resolver.lookup(host, port),
            (None, None) => Lookup::Failed,
        };
        let addr = match lookup {
            Lookup::Ready(addr) => addr,
            Lookup::Pending => return Ok(None),
            Lookup::Failed => {
                return Err(Failure::Broken(format!(
                    "cannot resolve redirected node {name}"
                )));
            }
        };
        let endpoint = Endpoint::Tcp {
            host: host.to_string(),
            addr,
        };
        self.conns.push(Connection::new(endpoint, name, plan));
        let i = self.conns.len() - 1;
        if let Err(failure) = self.open(i, plan, ctx)
            && let Some(Status::Failed(message)) = self.connection_failed(i, failure, plan, ctx)
        {
            return Err(Failure::Broken(message));
        }
        Ok(Some(i))
    }
}

/// Whether a pinned client's redirected request can be sent again with the next slot:
/// anything but a request template without a `{tag}` field (whose key stays where it is).
fn takes_a_fresh_slot(request: &Request, plan: &Plan) -> bool {
    match (request.op, plan.workload.template.as_deref()) {
        (Op::Template, Some(templated)) => {
            templated.slot_tags.is_some() && !templated.template.tag_positions().is_empty()
        }
        _ => true,
    }
}
