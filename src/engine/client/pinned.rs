//! A client pinned to one cluster master (`ClusterRouting::OneMasterPerClient`): the
//! slots that master serves, the random one each batch's `{tag}` fields name, and what a
//! MOVED or ASK changes: the slot leaves the list (MOVED), the slot map is read again
//! from the master, and the request is sent again with a fresh slot.

use rand::Rng;
use rand::rngs::SmallRng;

use crate::engine::client::Client;
use crate::engine::cluster::{Redirect, SlotMap, Topology};
use crate::engine::connection::Failure;

/// The master a client is pinned to and the slots it serves.
#[derive(Clone, Debug)]
pub(super) struct Pinned {
    /// `(host, port)` as the cluster reports the master, to find it in a new slot map.
    master: (String, u16),
    slots: Vec<u16>,
    /// The tag of the batch being written, chosen at its first templated request.
    batch_tag: Option<[u8; 3]>,
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
            batch_tag: None,
            orphaned: false,
        }
    }

    /// A new batch begins: its first templated request picks a fresh slot.
    #[inline]
    pub(super) fn start_batch(&mut self) {
        self.batch_tag = None;
    }

    /// The tag bytes of this batch's slot: a random slot of the master, from `tags`
    /// (one entry per slot).
    #[inline]
    pub(super) fn tag(&mut self, tags: &[[u8; 3]], rng: &mut SmallRng) -> [u8; 3] {
        if let Some(tag) = self.batch_tag {
            return tag;
        }
        let tag = match self.slots.len() {
            0 => [b'}'; 3],
            n => tags
                .get(usize::from(self.slots[rng.random_range(0..n)]))
                .copied()
                .unwrap_or([b'}'; 3]),
        };
        self.batch_tag = Some(tag);
        tag
    }

    /// A MOVED said `slot` is served elsewhere now: stop naming it.
    fn moved_away(&mut self, slot: u16) {
        if self.slots.len() > 1
            && let Some(at) = self.slots.iter().position(|&s| s == slot)
        {
            self.slots.swap_remove(at);
        }
    }

    /// A fresh slot map: the master's slots as it now reports them. A master that
    /// serves none any more keeps its old list (requests still name a slot) and is
    /// marked orphaned: its next redirection ends the run.
    pub(super) fn apply(&mut self, map: &SlotMap) {
        let slots = match map.nodes.iter().position(|n| *n == self.master) {
            Some(me) => slots_of(&map.slot_owner, me),
            None => Vec::new(),
        };
        self.orphaned = slots.is_empty();
        if !slots.is_empty() {
            self.slots = slots;
        }
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
            if let Redirect::Moved { slot, .. } = redirect {
                pinned.moved_away(*slot);
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
    use rand::SeedableRng;

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
    fn one_tag_per_batch_from_the_masters_slots() {
        let tags: Vec<[u8; 3]> = (0..16384u32)
            .map(|s| [(s >> 8) as u8, (s & 0xff) as u8, b'}'])
            .collect();
        let mut pinned = Pinned::new(&topology(), 1);
        assert_eq!(pinned.slots.len(), 8192);
        let mut rng = SmallRng::seed_from_u64(1);
        let first = pinned.tag(&tags, &mut rng);
        assert_eq!(pinned.tag(&tags, &mut rng), first, "same batch, same tag");
        let mut seen = std::collections::HashSet::new();
        for _ in 0..50 {
            pinned.start_batch();
            let tag = pinned.tag(&tags, &mut rng);
            let slot = tags.iter().position(|t| *t == tag).unwrap();
            assert!(slot >= 8192, "slot {slot} is not the master's");
            seen.insert(tag);
        }
        assert!(seen.len() > 1, "batches get different slots");
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
