//! A connection's reads: one read into the read buffer, its receive time, and the
//! buffer's room (made before a read, moved or grown when short, given back after a
//! large reply once the replies are small again).

use std::io;

use crate::engine::clock::Stamp;
use crate::engine::connection::{Connection, Failure, MAX_READ_BUFFER, SHRINK_AFTER_REPLIES};
use crate::engine::prefetch::{BATCH_LINES, REPLY_LINES, prefetch_slice};

impl Connection {
    /// One read into the buffer: `Ok(Some((n, space, at)))` bytes read out of the room
    /// there was, received at `at` (the replies' receive time, which also serves the stall
    /// watchdog): `ready_at` when given (the poll saw them waiting then), else the clock
    /// read after the read. `Ok(None)` when the socket had nothing.
    #[inline(always)]
    pub fn read_some(
        &mut self,
        ready_at: Option<Stamp>,
    ) -> Result<Option<(usize, usize, Stamp)>, Failure> {
        // Wanted right after the read, which gives them time to arrive (see
        // `engine::prefetch`): the requests the replies answer, where the replies land
        // (the kernel's copy would wait for those lines) and where the next batch goes.
        self.inflight.prefetch_oldest();
        prefetch_slice(self.rbuf.get(self.rend..).unwrap_or_default(), REPLY_LINES);
        // As many lines as the replies' batch will take (a GET from the templates is
        // about three quarters of one): one at pipeline 1, not twelve.
        let batch_lines = (self.inflight.len() * 3 / 4 + 1).min(BATCH_LINES);
        prefetch_slice(&*self.wbuf.spare_capacity_mut(), batch_lines);
        loop {
            self.make_read_space();
            let space = self.rbuf.len() - self.rend;
            let Some(transport) = self.transport.as_mut() else {
                return Ok(None);
            };
            match transport.read(&mut self.rbuf[self.rend..]) {
                Ok(0) => {
                    return Err(Failure::Broken(format!(
                        "connection closed by server {}",
                        self.peer
                    )));
                }
                Ok(n) => {
                    self.rend += n;
                    if n == space && self.read_size < MAX_READ_BUFFER {
                        // The socket may hold more: read more at once from now on.
                        self.read_size *= 2;
                    }
                    let at = ready_at.unwrap_or_else(Stamp::now);
                    self.last_progress = at.at;
                    self.heard = true;
                    self.answered = true;
                    return Ok(Some((n, space, at)));
                }
                Err(err) if err.kind() == io::ErrorKind::WouldBlock => return Ok(None),
                Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                Err(err) => return Err(self.failed(&err)),
            }
        }
    }

    /// Makes room at the end of the read buffer: compacts, grows to the settled size,
    /// and grows for a large reply. Each read gets at least half the settled size.
    #[inline]
    fn make_read_space(&mut self) {
        let needed = self.codec.bytes_needed_hint();
        let min_space = self.read_size / 2;
        let tail_room = self.rbuf.len() - self.rend;
        let fits = needed == 0 || self.rstart + needed <= self.rbuf.len();
        if tail_room >= min_space && fits && self.rbuf.len() >= self.read_size {
            return;
        }
        self.move_or_grow_read_buffer(needed, min_space);
    }

    /// [`make_read_space`](Self::make_read_space) when the room is short (out of line:
    /// nearly every read has it).
    #[inline(never)]
    fn move_or_grow_read_buffer(&mut self, needed: usize, min_space: usize) {
        if self.rstart > 0 {
            self.rbuf.copy_within(self.rstart..self.rend, 0);
            self.rend -= self.rstart;
            self.rstart = 0;
        }
        let wanted = needed.max(self.rend + min_space).max(self.read_size);
        if wanted > self.rbuf.len() {
            self.rbuf.resize(wanted.next_power_of_two(), 0);
        }
    }

    /// With the read buffer empty: gives back what a large reply grew it by, once
    /// replies have fitted the settled size for a while.
    pub(super) fn shrink_read_buffer(&mut self) {
        if self.rbuf.len() > self.read_size && self.small_replies >= SHRINK_AFTER_REPLIES {
            self.rbuf.truncate(self.read_size);
            self.rbuf.shrink_to_fit();
        }
    }
}
