//! A client pinned to one cluster master (`ClusterRouting::OneMasterPerClient`): the
//! slots that master serves, the one every `{tag}` field names (its first, as
//! redis-benchmark names its node's current slot: one key per master for a fixed key
//! name, `-r N` keys per master with `__rand_int__`, so a GET reads what a SET wrote),
//! and what a MOVED or ASK changes: the slot leaves the list (MOVED), the slot map is
//! read again from the master, and the request is sent again with the next slot.

use crate::engine::client::Client;
use crate::engine::cluster::{Redirect, SlotMap, Topology};
use crate::engine::connection::Failure;

/// The master a client is pinned to and the slots it serves.
#[derive(Clone, Debug)]
pub(super) struct Pinned {
    /// `(host, port)` as the cluster reports the master, to find it in a new slot map.
    master: (String, u16),
    /// In slot order; the first is the one named.
    slots: Vec<u16>,
    /// The last slot map read shows the master serving no slot: its requests can only
    /// be redirected.
    orphaned: bool,
}

impl Pinned {
    /// Pinned to master `master` of `topology`.
    pub(super) fn new(topology: &Topology, master: usize) -> Pinned {
        let node = &topology.nodes[master];
        Pinned {
            master: (node.host.clone(), node.port),
            slots: slots_of(&topology.slot_owner, master),
            orphaned: false,
        }
    }

    /// The tag bytes of the master's current slot, from `tags` (one entry per slot).
    #[inline]
    pub(super) fn tag(&self, tags: &[[u8; 3]]) -> [u8; 3] {
        self.slots
            .first()
            .and_then(|&slot| tags.get(usize::from(slot)))
            .copied()
            .unwrap_or([b'}'; 3])
    }

    /// A MOVED said `slot` is served elsewhere now: stop naming it (the next of the
    /// master's slots is named instead).
    fn moved_away(&mut self, slot: u16) {
        if self.slots.len() > 1
            && let Some(at) = self.slots.iter().position(|&s| s == slot)
        {
            self.slots.remove(at);
        }
    }

    /// An ASK said `slot` is migrating away: name the master's other slots first (the
    /// slot goes last). Named again at once, the request would be asked away again and
    /// again for as long as the migration lasts; the slot map still gives it to this
    /// master until it ends, when a MOVED takes it off the list.
    fn asked_away(&mut self, slot: u16) {
        if let Some(at) = self.slots.iter().position(|&s| s == slot) {
            let slot = self.slots.remove(at);
            self.slots.push(slot);
        }
    }

    /// A fresh slot map: the master's slots as it now reports them, in the order known
    /// so far (a slot asked away stays last: the map still gives a migrating slot to
    /// this master) and new ones after. A master that serves none any more keeps its
    /// old list (requests still name a slot) and is marked orphaned: its next
    /// redirection ends the run.
    pub(super) fn apply(&mut self, map: &SlotMap) {
        let slots = match map.nodes.iter().position(|n| *n == self.master) {
            Some(me) => slots_of(&map.slot_owner, me),
            None => Vec::new(),
        };
        self.orphaned = slots.is_empty();
        if slots.is_empty() {
            return;
        }
        let mut owned = vec![false; map.slot_owner.len()];
        slots.iter().for_each(|&s| owned[usize::from(s)] = true);
        let mut known = vec![false; owned.len()];
        let mut order: Vec<u16> = Vec::with_capacity(slots.len());
        for &s in &self.slots {
            if owned.get(usize::from(s)) == Some(&true) {
                known[usize::from(s)] = true;
                order.push(s);
            }
        }
        order.extend(slots.into_iter().filter(|&s| !known[usize::from(s)]));
        self.slots = order;
    }
}

/// The slots `owner` gives to node `node`.
fn slots_of(owner: &[u16], node: usize) -> Vec<u16> {
    owner
        .iter()
        .enumerate()
        .filter(|&(_, &n)| usize::from(n) == node)
        .map(|(slot, _)| slot as u16)
        .collect()
}

impl Client {
    /// A MOVED or ASK answered a request of a pinned client on connection `source`:
    /// forget the slot (MOVED), read the slot map again, send the request again. A
    /// master left with no slot cannot serve the client any more: that is the end.
    pub(super) fn follow_pinned(
        &mut self,
        source: usize,
        redirect: &Redirect,
    ) -> Result<(), Failure> {
        if let Some(pinned) = self.pinned.as_mut() {
            if pinned.orphaned {
                let (host, port) = &pinned.master;
                return Err(Failure::Fatal(format!(
                    "cluster master {host}:{port} serves no slot any more: its clients have nothing to send it"
                )));
            }
            match redirect {
                Redirect::Moved { slot, .. } => pinned.moved_away(*slot),
                Redirect::Ask { slot, .. } => pinned.asked_away(*slot),
                _ => {}
            }
        }
        self.refresh_topology(source);
        if let Some(left) = self.remaining.as_mut() {
            *left += 1;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn topology() -> Topology {
        let node = |port| crate::engine::cluster::Node {
            host: "127.0.0.1".into(),
            port,
            addr: ([127, 0, 0, 1], port).into(),
        };
        let mut slot_owner = vec![0u16; 16384];
        for owner in &mut slot_owner[8192..] {
            *owner = 1;
        }
        Topology {
            nodes: vec![node(7000), node(7001)],
            slot_owner: std::sync::Arc::new(slot_owner),
        }
    }

    #[test]
    fn the_masters_first_slot_until_a_move() {
        let tags: Vec<[u8; 3]> = (0..16384u32)
            .map(|s| [(s >> 8) as u8, (s & 0xff) as u8, b'}'])
            .collect();
        let mut pinned = Pinned::new(&topology(), 1);
        assert_eq!(pinned.slots.len(), 8192);
        assert_eq!(pinned.tag(&tags), tags[8192]);
        assert_eq!(
            pinned.tag(&tags),
            tags[8192],
            "every request, the same slot"
        );
        pinned.moved_away(8192);
        assert_eq!(pinned.tag(&tags), tags[8193], "then the next one");
    }

    #[test]
    fn slot_map_updates_the_masters_slots() {
        let mut pinned = Pinned::new(&topology(), 0);
        pinned.moved_away(5);
        assert!(!pinned.slots.contains(&5));
        let mut owner = vec![1u16; 16384];
        owner[..100].fill(0);
        let map = SlotMap {
            nodes: vec![("127.0.0.1".into(), 7000), ("127.0.0.1".into(), 7001)],
            slot_owner: owner,
        };
        pinned.apply(&map);
        assert_eq!(pinned.slots.len(), 100);
        // A slot asked away goes last, and a fresh map keeps it there.
        assert_eq!(pinned.slots[0], 0);
        pinned.asked_away(0);
        assert_eq!(pinned.slots[0], 1);
        pinned.apply(&map);
        assert_eq!((pinned.slots[0], pinned.slots[99]), (1, 0));
        // A map without the master keeps what was known.
        let other = SlotMap {
            nodes: vec![("10.0.0.1".into(), 7000)],
            slot_owner: vec![0; 16384],
        };
        pinned.apply(&other);
        assert_eq!(pinned.slots.len(), 100);
        assert!(pinned.orphaned);
    }
}
