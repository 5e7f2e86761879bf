//! One command's arguments in one reusable buffer, for request streams that build each
//! command as they go (a ZADD with many members): no allocation once warmed up, and the
//! engine encodes it straight into the write buffer.

/// One command's arguments, kept as one byte buffer and the end offset of each argument.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Args {
    bytes: Vec<u8>,
    ends: Vec<usize>,
}

impl Args {
    /// An empty command.
    pub fn new() -> Self {
        Args::default()
    }

    /// Forgets the arguments, keeping the memory.
    pub fn clear(&mut self) {
        self.bytes.clear();
        self.ends.clear();
    }

    /// Appends one argument.
    pub fn push(&mut self, arg: &[u8]) {
        self.push_with(|out| out.extend_from_slice(arg));
    }

    /// Appends one argument that `write` appends to the buffer (no copy through a
    /// temporary).
    pub fn push_with(&mut self, write: impl FnOnce(&mut Vec<u8>)) {
        write(&mut self.bytes);
        self.ends.push(self.bytes.len());
    }

    /// Number of arguments, the command name included.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether the command has no argument yet.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Argument `n` (0 is the command name).
    pub fn arg(&self, n: usize) -> Option<&[u8]> {
        let end = *self.ends.get(n)?;
        let start = if n == 0 { 0 } else { self.ends[n - 1] };
        Some(&self.bytes[start..end])
    }

    /// The arguments in order.
    pub fn args(&self) -> impl Iterator<Item = &[u8]> + Clone {
        (0..self.len()).filter_map(move |n| self.arg(n))
    }

    /// The key (argument 1), which routes the command in a cluster.
    pub fn key(&self) -> &[u8] {
        self.arg(1).unwrap_or_default()
    }

    /// Total bytes of all arguments (without protocol framing).
    pub fn payload_len(&self) -> usize {
        self.bytes.len()
    }

    /// Appends the command to `out` as a RESP multi-bulk request.
    ///
    /// ```text
    /// *3\r\n$4\r\nZADD\r\n$1\r\nk\r\n ...
    /// ```
    pub fn encode_resp(&self, out: &mut Vec<u8>) {
        use crate::protocol::resp_encode::{encode_array_header, encode_bulk};
        // Header and framing: at most 16 bytes per argument beyond its bytes.
        out.reserve(self.bytes.len() + 16 * (self.ends.len() + 1));
        encode_array_header(out, self.ends.len());
        for arg in self.args() {
            encode_bulk(out, arg);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_reuse_their_buffers_and_encode_as_resp() {
        let mut cmd = Args::new();
        cmd.push(b"ZADD");
        cmd.push_with(|out| out.extend_from_slice(b"k"));
        cmd.push(b"");
        assert_eq!((cmd.len(), cmd.payload_len()), (3, 5));
        let mut out = Vec::new();
        cmd.encode_resp(&mut out);
        assert_eq!(out, b"*3\r\n$4\r\nZADD\r\n$1\r\nk\r\n$0\r\n\r\n");
        cmd.clear();
        assert!(cmd.is_empty());
        assert_eq!(cmd.key(), b"");
        assert_eq!(cmd.arg(0), None);
    }
}
