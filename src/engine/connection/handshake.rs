//! What a connection that timed out while connecting was waiting for, so that the
//! failure can say what to change.

use crate::engine::connection::Connection;

impl Connection {
    /// Its TLS handshake got no answer at all over a TCP connection that is up (a
    /// plaintext port, most likely), rather than the TCP connection not coming up.
    pub fn awaits_tls_answer(&self) -> bool {
        self.transport
            .as_ref()
            .is_some_and(|t| t.awaits_tls_answer())
    }
}
