//! Writing a connection's buffered requests to its socket, and giving back what large
//! requests grew the buffer by once they stop.

use std::io;

use crate::engine::connection::{Connection, Failure, MAX_KEPT_WRITE_BUFFER, SHRINK_AFTER_REPLIES};

impl Connection {
    /// Writes the buffer until it is empty or the socket is full.
    pub fn flush(&mut self) -> Result<(), Failure> {
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
                Err(err) if err.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                Err(err) => return Err(self.failed(&err)),
            }
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
}
