//! Wire formats: encode requests into a write buffer and decode replies; no I/O here.
//!
//! [`Codec`] is the one interface a client uses: it encodes a SET or GET in the chosen
//! protocol and decodes the next reply against what the request in flight expects.
//! Every decoder is incremental (a reply split anywhere parses the same) and keeps a
//! resume offset, so a large reply arriving in pieces is scanned once.

pub mod auth;
#[cfg(test)]
mod contract;
pub mod decimal;
pub mod key;
pub mod key_batch;
pub mod memcache_binary;
pub mod memcache_text;
pub mod reply;
pub mod resp;
pub mod resp_encode;
pub mod resp_value;
pub mod templates;

pub use auth::{Credentials, encode_auth};
pub use key::Key;
pub use key_batch::KeyBatch;
pub use memcache_binary::{BinExpect, BinaryDecoder};
pub use memcache_text::{Expect as TextExpect, TextDecoder};
pub use reply::{Decode, Reply, ReplyKind};
pub use resp::RespDecoder;

/// Wire protocol spoken to the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Protocol {
    /// RESP2 without a HELLO (works with every Redis version).
    Redis,
    /// RESP2, announced with `HELLO 2`.
    Resp2,
    /// RESP3, announced with `HELLO 3`.
    Resp3,
    /// memcached's text protocol.
    MemcacheText,
    /// memcached's binary protocol (SASL PLAIN authentication).
    MemcacheBinary,
}

impl Protocol {
    /// Every protocol, in the order `-P`'s help lists them.
    pub const ALL: [Protocol; 5] = [
        Protocol::Redis,
        Protocol::Resp2,
        Protocol::Resp3,
        Protocol::MemcacheText,
        Protocol::MemcacheBinary,
    ];

    /// The name `-P` gives it (and result files record): `redis`, `resp2`, `resp3`,
    /// `memcache_text`, `memcache_binary`.
    pub fn name(self) -> &'static str {
        match self {
            Protocol::Redis => "redis",
            Protocol::Resp2 => "resp2",
            Protocol::Resp3 => "resp3",
            Protocol::MemcacheText => "memcache_text",
            Protocol::MemcacheBinary => "memcache_binary",
        }
    }

    /// The protocol `name` names (as [`Protocol::name`] spells it), if any.
    pub fn from_name(name: &str) -> Option<Protocol> {
        Protocol::ALL.into_iter().find(|p| p.name() == name)
    }

    /// Whether this is one of memcached's protocols (no numbered databases, no Redis
    /// commands).
    pub fn is_memcache(self) -> bool {
        matches!(self, Protocol::MemcacheText | Protocol::MemcacheBinary)
    }
}

/// Number of decimal digits of `n`: what `itoa` writes for it, computed without writing,
/// so encoders can reserve a buffer's exact size once.
#[inline]
pub fn decimal_len(mut n: usize) -> usize {
    let mut len = 1;
    while n >= 10 {
        n /= 10;
        len += 1;
    }
    len
}

/// What the request whose reply comes next was, so the decoder knows what to read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expect {
    /// A store (SET): memcache answers STORED / NOT_STORED / an error.
    Store,
    /// A single-key read: a value (hit) or nothing (miss).
    Get,
    /// A read of this many keys in one request (MGET, `get k1 k2`, GETKQ… NOOP).
    MultiGet(u32),
    /// An authentication step during the handshake.
    Auth,
    /// Anything else during the handshake (HELLO, SELECT): any reply, errors reported.
    Setup,
    /// The liveness probe ([`Codec::encode_probe`]): `+PONG`, `VERSION <text>`, or the
    /// binary VERSION response.
    Probe,
}

/// What the memcache text decoder reads for a request that expects `expect`.
#[inline(always)]
pub fn text_expect(expect: Expect) -> TextExpect {
    match expect {
        Expect::Get => TextExpect::Get,
        Expect::MultiGet(n) => TextExpect::MultiGet(n),
        Expect::Store | Expect::Auth | Expect::Setup => TextExpect::Store,
        Expect::Probe => TextExpect::Version,
    }
}

/// What the memcache binary decoder reads for a request that expects `expect`.
#[inline(always)]
pub fn binary_expect(expect: Expect) -> BinExpect {
    match expect {
        Expect::Get => BinExpect::Get,
        Expect::MultiGet(n) => BinExpect::MultiGet(n),
        Expect::Auth => BinExpect::Auth,
        Expect::Store | Expect::Setup => BinExpect::Store,
        Expect::Probe => BinExpect::Version,
    }
}

/// Encoder and decoder state for one connection.
// One per connection and used on every reply: keeping the RESP decoder's fixed nesting
// stack inline avoids a pointer chase on the hot path, so the size difference is wanted.
// The tag first (`repr(u8)`), then the decoder's own hot fields: the stack, at the end
// of the RESP decoder, stays out of the lines a connection's visit reads.
#[allow(clippy::large_enum_variant)]
#[repr(u8)]
pub enum Codec {
    Resp(RespDecoder),
    MemcacheText(TextDecoder),
    MemcacheBinary(BinaryDecoder),
}

impl Codec {
    /// Bytes at the start of a codec that decoding flat replies reads: the tag, then the
    /// decoder's hot fields (a memcache decoder is small and wholly hot).
    pub const HOT_BYTES: usize = {
        // `Ord::max` is not callable in a constant.
        const fn larger(a: usize, b: usize) -> usize {
            if a > b { a } else { b }
        }
        let text_or_binary = larger(size_of::<TextDecoder>(), size_of::<BinaryDecoder>());
        // `repr(u8)`: the tag, then each variant's decoder at its alignment.
        align_of::<Codec>() + larger(RespDecoder::HOT_BYTES, text_or_binary)
    };

    pub fn new(protocol: Protocol) -> Codec {
        match protocol {
            Protocol::Redis | Protocol::Resp2 | Protocol::Resp3 => Codec::Resp(RespDecoder::new()),
            Protocol::MemcacheText => Codec::MemcacheText(TextDecoder::new()),
            Protocol::MemcacheBinary => Codec::MemcacheBinary(BinaryDecoder::new()),
        }
    }

    /// Appends a store of `value` under `key` with a TTL of `exptime` seconds (0: none;
    /// Redis then gets `SETEX key exptime value`).
    #[inline]
    pub fn encode_set(&self, out: &mut Vec<u8>, key: Key, value: &[u8], exptime: u32, opaque: u32) {
        match self {
            Codec::Resp(_) if exptime > 0 => {
                let mut digits = itoa::Buffer::new();
                resp_encode::encode_array_header(out, 4);
                resp_encode::encode_bulk(out, b"SETEX");
                resp_encode::encode_bulk_key(out, key);
                resp_encode::encode_bulk(out, digits.format(exptime).as_bytes());
                resp_encode::encode_bulk(out, value);
            }
            Codec::Resp(_) => resp_encode::encode_set(out, key, value),
            Codec::MemcacheText(_) => memcache_text::encode_set(out, key, value, exptime),
            Codec::MemcacheBinary(_) => {
                memcache_binary::encode_set(out, key, value, exptime, opaque)
            }
        }
    }

    /// Appends a read of `key`.
    #[inline]
    pub fn encode_get(&self, out: &mut Vec<u8>, key: Key, opaque: u32) {
        match self {
            Codec::Resp(_) => resp_encode::encode_get(out, key),
            Codec::MemcacheText(_) => memcache_text::encode_get(out, key),
            Codec::MemcacheBinary(_) => memcache_binary::encode_get(out, key, opaque),
        }
    }

    /// Appends one read of all `keys`: Redis `MGET`, memcache text `get k1 k2 ...`,
    /// memcache binary one GETKQ per key closed by a NOOP (only hits answer a GETKQ).
    pub fn encode_multi_get(&self, out: &mut Vec<u8>, keys: &KeyBatch, opaque: u32) {
        match self {
            Codec::Resp(_) => {
                resp_encode::encode_array_header(out, keys.len() + 1);
                resp_encode::encode_bulk(out, b"MGET");
                for key in keys.iter() {
                    resp_encode::encode_bulk(out, key);
                }
            }
            Codec::MemcacheText(_) => memcache_text::encode_multi_get(out, keys.iter()),
            Codec::MemcacheBinary(_) => {
                for key in keys.iter() {
                    memcache_binary::encode_getkq(out, key, opaque);
                }
                memcache_binary::encode_noop(out, opaque);
            }
        }
    }

    /// Appends the protocol's cheapest request, the liveness probe: Redis `PING`,
    /// memcached `version` (text) or VERSION (binary). Decode with [`Expect::Probe`].
    pub fn encode_probe(&self, out: &mut Vec<u8>, opaque: u32) {
        match self {
            Codec::Resp(_) => resp_encode::encode_command(out, &[b"PING"]),
            Codec::MemcacheText(_) => memcache_text::encode_version(out),
            Codec::MemcacheBinary(_) => memcache_binary::encode_version(out, opaque),
        }
    }

    /// Redis `SETRANGE key offset value` (`--data-offset`; Redis protocols only).
    pub fn encode_setrange(&self, out: &mut Vec<u8>, key: Key, offset: u64, value: &[u8]) {
        let mut digits = itoa::Buffer::new();
        resp_encode::encode_array_header(out, 4);
        resp_encode::encode_bulk(out, b"SETRANGE");
        resp_encode::encode_bulk_key(out, key);
        resp_encode::encode_bulk(out, digits.format(offset).as_bytes());
        resp_encode::encode_bulk(out, value);
    }

    /// Redis `GETRANGE key offset -1`: the value from the offset to its end
    /// (`--data-offset`; Redis protocols only).
    pub fn encode_getrange(&self, out: &mut Vec<u8>, key: Key, offset: u64) {
        let mut start = itoa::Buffer::new();
        resp_encode::encode_array_header(out, 4);
        resp_encode::encode_bulk(out, b"GETRANGE");
        resp_encode::encode_bulk_key(out, key);
        resp_encode::encode_bulk(out, start.format(offset).as_bytes());
        resp_encode::encode_bulk(out, b"-1");
    }

    /// Redis `WAIT numreplicas timeout` (`--wait-ratio`; Redis protocols only).
    pub fn encode_wait(&self, out: &mut Vec<u8>, replicas: u32, timeout_ms: u32) {
        let mut r = itoa::Buffer::new();
        let mut t = itoa::Buffer::new();
        resp_encode::encode_command(
            out,
            &[
                b"WAIT",
                r.format(replicas).as_bytes(),
                t.format(timeout_ms).as_bytes(),
            ],
        );
    }

    /// Decodes the reply at the start of `buf` (see each decoder for the contract).
    #[inline]
    pub fn decode(&mut self, buf: &[u8], expect: Expect) -> Decode {
        match self {
            Codec::Resp(decoder) => decoder.decode(buf),
            Codec::MemcacheText(decoder) => decoder.decode(buf, text_expect(expect)),
            Codec::MemcacheBinary(decoder) => decoder.decode(buf, binary_expect(expect)),
        }
    }

    /// Buffer length the reply being decoded needs at least, when known (else 0).
    #[inline]
    pub fn bytes_needed_hint(&self) -> usize {
        match self {
            Codec::Resp(decoder) => decoder.bytes_needed_hint(),
            Codec::MemcacheText(decoder) => decoder.bytes_needed_hint(),
            Codec::MemcacheBinary(decoder) => decoder.bytes_needed_hint(),
        }
    }

    /// The opaque a binary reply echoes, to check replies come back in order.
    pub fn reply_opaque(&self, reply: &[u8]) -> Option<u32> {
        match self {
            Codec::MemcacheBinary(_) => memcache_binary::opaque_of(reply),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_probe_is_each_protocols_cheapest_request() {
        let probe = |protocol| {
            let mut out = Vec::new();
            Codec::new(protocol).encode_probe(&mut out, 7);
            out
        };
        assert_eq!(probe(Protocol::Redis), b"*1\r\n$4\r\nPING\r\n");
        assert_eq!(probe(Protocol::Resp3), b"*1\r\n$4\r\nPING\r\n");
        assert_eq!(probe(Protocol::MemcacheText), b"version\r\n");
        let binary = probe(Protocol::MemcacheBinary);
        assert_eq!(binary.len(), memcache_binary::HEADER_LEN);
        assert_eq!(
            (binary[0], binary[1]),
            (
                memcache_binary::MAGIC_REQUEST,
                memcache_binary::opcode::VERSION
            )
        );
        assert_eq!(binary[12..16], 7u32.to_be_bytes());
        // Each decodes its own protocol's answer as a simple reply.
        let mut text = Codec::new(Protocol::MemcacheText);
        match text.decode(b"VERSION 1.6.21\r\n", Expect::Probe) {
            Decode::Complete(reply) => assert_eq!(reply.kind, ReplyKind::Simple),
            other => panic!("{other:?}"),
        }
        match text.decode(b"STORED\r\n", Expect::Probe) {
            Decode::Invalid(_) => {}
            other => panic!("a store line is no answer to version: {other:?}"),
        }
        let mut resp = Codec::new(Protocol::Redis);
        match resp.decode(b"+PONG\r\n", Expect::Probe) {
            Decode::Complete(reply) => assert_eq!(reply.kind, ReplyKind::Simple),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn protocol_names_read_back() {
        for p in Protocol::ALL {
            assert_eq!(Protocol::from_name(p.name()), Some(p));
        }
        assert_eq!(
            Protocol::from_name("memcache_text"),
            Some(Protocol::MemcacheText)
        );
        assert_eq!(Protocol::from_name("Redis"), None);
        assert_eq!(Protocol::from_name(""), None);
    }
}
