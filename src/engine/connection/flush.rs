//! Writing a connection's buffered requests to its socket, and giving back what large
//! requests grew the buffer by once they stop.

use std::io;

use mio::Registry;

use crate::engine::connection::{Connection, Failure, MAX_KEPT_WRITE_BUFFER, SHRINK_AFTER_REPLIES};

impl Connection {
    /// Writes the buffer until it is empty or the socket is full. A ready connection is
    /// polled for writing only while bytes are left (`registry`: its poll's).
    #[inline(always)]
    pub fn flush(&mut self, registry: &Registry) -> Result<(), Failure> {
        let Some(transport) = self.transport.as_mut() else {
            return Ok(());
        };
        while self.wpos < self.wbuf.len() {
            match transport.write(&self.wbuf[self.wpos..]) {
                Ok(0) => {
                    return Err(Failure::Broken(format!(
                        "connection closed by server {}",
                        self.peer
                    )));
                }
                Ok(n) => self.wpos += n,
                Err(err) if err.kind() == io::ErrorKind::WouldBlock => {
                    // The socket's room frees up later: wake for it.
                    return self.want_writable(registry, true);
                }
                Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                Err(err) => return Err(self.failed_writing(&err)),
            }
        }
        let droppable = transport.can_drop_write_interest();
        if self.write_interest && droppable && self.is_ready() {
            self.want_writable(registry, false)?;
        }
        let written = self.wbuf.len();
        self.wbuf.clear();
        self.wpos = 0;
        if self.wbuf.capacity() > MAX_KEPT_WRITE_BUFFER {
            // Large requests grew it: kept while they go on, given back once they stop.
            if written > MAX_KEPT_WRITE_BUFFER {
                self.small_writes = 0;
            } else {
                self.small_writes += 1;
                if self.small_writes >= SHRINK_AFTER_REPLIES {
                    self.wbuf.shrink_to(MAX_KEPT_WRITE_BUFFER);
                    self.small_writes = 0;
                }
            }
        }
        Ok(())
    }

    /// Polls the socket for writing too (`writable`) or for reading alone, if that
    /// changes anything (re-registering with writing on reports a socket that is already
    /// writable at once, so no wake-up is lost).
    fn want_writable(&mut self, registry: &Registry, writable: bool) -> Result<(), Failure> {
        if self.write_interest == writable {
            return Ok(());
        }
        let Some(transport) = self.transport.as_mut() else {
            return Ok(());
        };
        transport
            .set_write_interest(registry, self.token, writable)
            .map_err(|err| Failure::Broken(format!("cannot register connection: {err}")))?;
        self.write_interest = writable;
        Ok(())
    }
}
