//! Cluster mode: a copy of each request-stream command in flight, so that a MOVED, ASK or
//! TRYAGAIN reply can send the same command again (a stream hands each command out once).
//!
//! ```text
//! next_from_stream  -> hold(cmd) = id      Op::Stream { held: id } goes on the wire
//! MOVED / ASK       -> resend Op::Stream { held: id }: encoded from the copy
//! the real answer   -> release(id)         (also when the request is given up)
//! ```
//!
//! Copies reuse their memory (no allocation once warm). A command lost with a broken
//! connection is never answered, so its copy is kept: at most [`MAX_HELD`] copies exist,
//! and a command that finds none free goes out unheld (a redirection of it is an error,
//! as it would be without this).

use crate::engine::client::Client;
use crate::engine::generator::Op;
use crate::workload::args::Args;

/// An `Op::Stream` whose command is not held (sent from the stream buffer itself).
pub const NOT_HELD: u32 = u32::MAX;
/// Most copies one client keeps.
const MAX_HELD: usize = 4096;

/// The copies of one client's stream commands in flight.
#[derive(Debug, Default)]
pub(super) struct HeldCommands {
    slots: Vec<Args>,
    /// Whether each slot holds a command in flight.
    in_use: Vec<bool>,
    free: Vec<u32>,
}

impl HeldCommands {
    /// Keeps a copy of `cmd`; its id, or [`NOT_HELD`] when [`MAX_HELD`] are kept already.
    pub fn hold(&mut self, cmd: &Args) -> u32 {
        if let Some(id) = self.free.pop() {
            self.slots[id as usize].clone_from(cmd);
            self.in_use[id as usize] = true;
            return id;
        }
        if self.slots.len() >= MAX_HELD {
            return NOT_HELD;
        }
        self.slots.push(cmd.clone());
        self.in_use.push(true);
        (self.slots.len() - 1) as u32
    }

    /// The command held as `id`.
    pub fn get(&self, id: u32) -> Option<&Args> {
        self.slots.get(id as usize)
    }

    /// The command held as `id` is answered or given up: its copy is free again.
    pub fn release(&mut self, id: u32) {
        if let Some(in_use) = self.in_use.get_mut(id as usize)
            && *in_use
        {
            *in_use = false;
            self.free.push(id);
        }
    }
}

/// Whether `op` can be sent again after a redirection: a stream command only when held.
pub(super) fn resendable_stream(op: Op) -> bool {
    matches!(op, Op::Stream { held } if held != NOT_HELD)
}

impl Client {
    /// `op` is answered or given up: a stream command's copy is free again.
    pub(super) fn release_copy(&mut self, op: Op) {
        if let (Op::Stream { held }, Some(copies)) = (op, self.stream_copies.as_mut()) {
            copies.release(held);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmd(words: &[&str]) -> Args {
        let mut args = Args::new();
        for w in words {
            args.push(w.as_bytes());
        }
        args
    }

    #[test]
    fn copies_are_kept_until_released_and_reused() {
        let mut held = HeldCommands::default();
        let a = held.hold(&cmd(&["ZADD", "k1", "1", "m"]));
        let b = held.hold(&cmd(&["ZADD", "k2", "2", "n"]));
        assert_ne!(a, b);
        assert_eq!(held.get(a).map(Args::key), Some(&b"k1"[..]));
        held.release(a);
        held.release(a);
        let c = held.hold(&cmd(&["ZRANGEBYLEX", "k3", "-", "+"]));
        assert_eq!(c, a, "a released copy is reused");
        assert_eq!(held.get(c).map(Args::key), Some(&b"k3"[..]));
        assert_eq!(held.get(b).map(Args::key), Some(&b"k2"[..]));
    }

    #[test]
    fn at_most_max_held() {
        let mut held = HeldCommands::default();
        let c = cmd(&["GET", "k"]);
        for _ in 0..MAX_HELD {
            assert_ne!(held.hold(&c), NOT_HELD);
        }
        assert_eq!(held.hold(&c), NOT_HELD);
        held.release(7);
        assert_eq!(held.hold(&c), 7);
    }
}
