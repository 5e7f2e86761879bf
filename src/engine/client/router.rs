//! Which of a client's connections a key goes to: one server, a Redis Cluster's slot
//! map, or a pool's ketama/modula placement. The client sends by key only when the
//! router says so ([`Router::by_key`]); one server costs nothing per request.

use std::sync::Arc;

use crate::engine::cluster::{self, PrefixedSlots};
use crate::plan::Pool;

/// How a client picks the connection for a key.
#[derive(Debug)]
pub(super) enum Router {
    /// One server: every request on connection 0, no key looked at.
    Single,
    /// Redis Cluster: the connection serving each hash slot (`u16::MAX`: none; the
    /// topology's map, shared, until this client changes it), and the key prefix's
    /// hash when it can be taken once.
    Slots(Arc<Vec<u16>>, Option<PrefixedSlots>),
    /// A pool of servers: connection `i` is member `i`.
    Pool(Arc<Pool>),
}

impl Router {
    /// Whether a request's connection depends on its key.
    pub(super) fn by_key(&self) -> bool {
        !matches!(self, Router::Single)
    }

    /// Whether this is a cluster's slot map (MOVED/ASK, a node down is retried).
    pub(super) fn is_cluster(&self) -> bool {
        matches!(self, Router::Slots(..))
    }

    /// The pool, when there is one.
    pub(super) fn pool(&self) -> Option<&Pool> {
        match self {
            Router::Pool(pool) => Some(pool),
            _ => None,
        }
    }

    /// The cluster's slot map, to update after a MOVED or a fresh `CLUSTER SLOTS`.
    pub(super) fn slots_mut(&mut self) -> Option<&mut Vec<u16>> {
        match self {
            // The first change gives this client a copy of its own.
            Router::Slots(owner, _) => Some(Arc::make_mut(owner)),
            _ => None,
        }
    }

    /// The connection (of `conns`) for `key`; an unserved slot or a master beyond the
    /// connections held goes to connection 0.
    pub(super) fn route(&self, key: &[u8], conns: usize) -> usize {
        let i = match self {
            Router::Single => 0,
            Router::Slots(owner, prefixed) => {
                let slot = match prefixed {
                    Some(prefixed) => prefixed.key_slot(key),
                    None => cluster::key_slot(key),
                };
                usize::from(owner[usize::from(slot)])
            }
            Router::Pool(pool) => pool.member_of(key),
        };
        held_connection(i, conns)
    }

    /// The connection (of `conns`) for the generated key of `key_id` (the key prefix and
    /// the id's digits), as [`route`](Self::route) would give for that key; `None` when
    /// the prefix's hash could not be taken once (it holds a `{`).
    #[inline]
    pub(super) fn route_id(&self, key_id: u64, conns: usize) -> Option<usize> {
        let Router::Slots(owner, Some(prefixed)) = self else {
            return None;
        };
        let i = usize::from(owner[usize::from(prefixed.id_slot(key_id))]);
        Some(held_connection(i, conns))
    }
}

/// Connection `i`, or connection 0 when `i` is past the `conns` the client holds (an
/// unserved slot, or a master it has no connection to).
#[inline]
fn held_connection(i: usize, conns: usize) -> usize {
    if i >= conns { 0 } else { i }
}
