//! A server with no room for another connection says so and closes it: Redis at its
//! `maxclients` (`-ERR max number of clients reached`), memcached at its `-c` (`ERROR Too
//! many open connections`, in text whatever protocol the client speaks). Those words
//! reach the client in one of four ways, depending on who moves first: as the reply to
//! its first request, as a reply to nothing, as bytes the binary decoder cannot read, or
//! not at all, when the client's write meets the reset that closing an unread connection
//! sends. Each way failed with its own message ("connection reset by peer", "bad magic
//! byte", an error reply counted as a SET), none naming the cause; they all fail with
//! this one.

use std::io;

use crate::engine::connection::{Connection, Failure};

/// What full servers say, as far as it is theirs alone, and the limit to raise.
const FULL_SERVER_WORDS: [(&[u8], &str); 2] = [
    (b"max number of clients reached", "the server's maxclients"),
    (b"Too many open connections", "memcached's -c"),
];

/// How far into a reply the words are looked for (a refusal is the first line).
const LOOK_AT: usize = 256;

/// The failure for a server that refused the connection for lack of room, if `bytes`
/// (a reply, an error reply's text, or bytes that decoded as nothing) are its words.
/// A `Broken` connection: with a reconnect policy a later try may find room.
pub fn full_server(peer: &str, bytes: &[u8]) -> Option<Failure> {
    let bytes = &bytes[..bytes.len().min(LOOK_AT)];
    let (at, limit) = FULL_SERVER_WORDS.iter().find_map(|&(words, limit)| {
        let at = bytes
            .windows(words.len())
            .position(|window| window == words)?;
        Some((at, limit))
    })?;
    // The words' line, without the RESP error marker and the line end.
    let start = bytes[..at]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let end = bytes[at..]
        .iter()
        .position(|&b| b == b'\r' || b == b'\n')
        .map_or(bytes.len(), |i| at + i);
    let line = bytes[start..end]
        .strip_prefix(b"-")
        .unwrap_or(&bytes[start..end]);
    Some(Failure::Broken(format!(
        "server {peer} refused the connection: {} (it has no room for more connections: \
         raise {limit} or open fewer)",
        String::from_utf8_lossy(line)
    )))
}

impl Connection {
    /// The failure for a write that met `err`. A reset (or a broken pipe) may come from a
    /// server that wrote why before it closed: what it wrote is still readable, and names
    /// the cause when it is a full server's refusal.
    pub(super) fn failed_writing(&mut self, err: &io::Error) -> Failure {
        let reset = matches!(
            err.kind(),
            io::ErrorKind::ConnectionReset | io::ErrorKind::BrokenPipe
        );
        if reset && let Some(transport) = self.transport.as_mut() {
            let mut said = [0u8; LOOK_AT];
            if let Ok(n) = transport.read(&mut said)
                && let Some(failure) = full_server(&self.peer, &said[..n])
            {
                return failure;
            }
        }
        self.failed(err)
    }

    /// The failure for bytes at the read position that decode as no reply (`why`): a
    /// full memcached's text refusal to a binary client, or garbage.
    pub(super) fn invalid_reply(&self, why: &str) -> Failure {
        full_server(&self.peer, &self.rbuf[self.rstart..self.rend])
            .unwrap_or_else(|| Failure::Broken(format!("invalid reply from {}: {why}", self.peer)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redis_and_memcached_refusals_are_named_in_their_words() {
        let redis = full_server("h:1", b"-ERR max number of clients reached\r\n").unwrap();
        assert_eq!(
            redis.message(),
            "server h:1 refused the connection: ERR max number of clients reached (it has no \
             room for more connections: raise the server's maxclients or open fewer)"
        );
        assert!(matches!(redis, Failure::Broken(_)));
        // An error reply's text (no marker), and memcached's line with a reply before it.
        let text = full_server("h:1", b"ERR max number of clients reached").unwrap();
        assert!(
            text.message()
                .contains(": ERR max number of clients reached (")
        );
        let memcached = full_server("h:2", b"END\r\nERROR Too many open connections\r\n");
        assert!(
            memcached
                .unwrap()
                .message()
                .ends_with(": ERROR Too many open connections (it has no room for more connections: raise memcached's -c or open fewer)")
        );
    }

    #[test]
    fn other_errors_and_garbage_are_not_refusals() {
        for bytes in [
            &b"-ERR unknown command 'FOO'\r\n"[..],
            b"",
            b"\x81\x00\x00",
            b"-ERR max number of clients",
        ] {
            assert!(full_server("h:1", bytes).is_none(), "{bytes:?}");
        }
    }
}
