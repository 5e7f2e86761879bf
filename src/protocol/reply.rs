//! What a decoder says about one reply: where it ends, its kind and its payload. Shared by
//! the three decoders, so a client records any protocol's replies the same way.

/// The type of a reply. RESP names them by their first byte; the memcache decoders map
/// their replies onto the same kinds (a miss is `Nil`, a value `Bulk`, an error `Error`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplyKind {
    /// `+`
    Simple,
    /// `-` or the RESP3 blob error `!`.
    Error,
    /// `:`
    Integer,
    /// `$` with a length of 0 or more.
    Bulk,
    /// `$-1`, `*-1` or the RESP3 null `_`: a GET miss.
    Nil,
    /// `*`
    Array,
    /// `%`
    Map,
    /// `~`
    Set,
    /// `>`: out-of-band data (pub/sub, client tracking), not the answer to a request.
    Push,
    /// `,`
    Double,
    /// `#`
    Boolean,
    /// `(`
    BigNumber,
    /// `=`
    Verbatim,
}

/// What the decoder learned about one complete top-level reply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reply {
    /// Bytes of the whole top-level reply, attributes before it included:
    /// advance the read buffer by this much.
    pub len: usize,
    /// Kind of the top-level element (a RESP3 attribute before it is skipped).
    pub kind: ReplyKind,
    /// `(offset, length)` within the reply of the text of a top-level bulk,
    /// blob error, simple string or error; for a verbatim string the text after
    /// its `xxx:` format prefix. `(0, 0)` for every other kind.
    pub payload: (usize, usize),
    /// Top-level aggregate: its number of elements (map: number of pairs); else 0.
    pub elements: u32,
    /// Top-level aggregate: how many of its direct elements are nil (MGET misses).
    pub nil_elements: u32,
}

impl Reply {
    /// The payload bytes, given the buffer the reply was decoded from.
    /// Empty if `buf` is not that buffer and too short.
    pub fn text<'a>(&self, buf: &'a [u8]) -> &'a [u8] {
        let (offset, len) = self.payload;
        buf.get(offset..offset.saturating_add(len)).unwrap_or(&[])
    }
}

/// Outcome of one decoder call (every decoder's `decode` has the same contract: see
/// [`crate::protocol::resp::RespDecoder`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decode {
    /// The buffer holds only part of the reply: append more and call again.
    Incomplete,
    /// A whole reply starts the buffer.
    Complete(Reply),
    /// The bytes are not RESP; the connection cannot be resynchronised.
    Invalid(&'static str),
}
