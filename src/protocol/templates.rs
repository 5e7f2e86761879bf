//! SET and GET of generated keys (the key prefix, then the id in decimal) written from
//! templates prepared once per client: the plain closed loop's requests, byte for byte
//! what the general encoders write, in one fixed-size copy per request instead of one
//! copy (and one capacity check) per piece.
//!
//! Each template holds a request's head with the prefix in place. Per request the whole
//! template is appended with one copy of a constant size; only the key's length, the id's
//! digits (through a two-digit table), the bytes after the key and (binary) the body
//! length and opaque are then written over the appended bytes, and the buffer is cut back
//! to the request's length. The value of a SET follows as one more copy. The templates
//! are never written to, so one worker's clients share one set.

use crate::protocol::decimal::{MAX_DIGITS, PAIRS, decimal_digits, write_digits};
use crate::protocol::memcache_binary::{self, MAGIC_REQUEST, opcode};
use crate::protocol::{Key, Protocol, memcache_text, resp_encode};

/// Longest key prefix the templates take; a longer one takes the general encoders.
pub const MAX_PREFIX: usize = 32;

/// Bytes a GET template holds: the largest head (binary: 24), the prefix, the digits and
/// the CRLF (RESP, text).
pub const GET_ROOM: usize = 80;

/// Bytes a SET template holds: RESP's head (18), the prefix, the digits, `\r\n$`, the
/// value's length and its CRLF (text and binary need less).
const SET_ROOM: usize = 96;

/// Binary protocol header bytes.
const BINARY_HEADER: usize = 24;

// The largest requests' heads fit their templates (RESP's are the longest but for the
// binary GET).
const _: () = assert!(18 + MAX_PREFIX + MAX_DIGITS + 2 <= GET_ROOM);
const _: () = assert!(BINARY_HEADER + MAX_PREFIX + MAX_DIGITS <= GET_ROOM);
const _: () = assert!(18 + MAX_PREFIX + MAX_DIGITS + 3 + MAX_DIGITS + 2 <= SET_ROOM);

/// The request format a set of templates writes (see [`Templates::form`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    Resp,
    Text,
    Binary,
}

/// One client's SET and GET templates for its key prefix.
#[derive(Clone, Debug)]
pub struct Templates {
    form: Form,
    prefix_len: usize,
    /// Where the key starts in both templates.
    key_at: usize,
    get: [u8; GET_ROOM],
    set: [u8; SET_ROOM],
}

impl Templates {
    /// Templates for `protocol` and keys `prefix` + id; `None` when the prefix is longer
    /// than [`MAX_PREFIX`] (the general encoders then write every request).
    pub fn new(protocol: Protocol, prefix: &[u8]) -> Option<Templates> {
        if prefix.len() > MAX_PREFIX {
            return None;
        }
        let (form, get_head, set_head): (Form, &[u8], &[u8]) = match protocol {
            // The key's length (two digits, written per request) and its CRLF follow.
            Protocol::Redis | Protocol::Resp2 | Protocol::Resp3 => (
                Form::Resp,
                b"*2\r\n$3\r\nGET\r\n$00\r\n",
                b"*3\r\n$3\r\nSET\r\n$00\r\n",
            ),
            Protocol::MemcacheText => (Form::Text, b"get ", b"set "),
            Protocol::MemcacheBinary => {
                let mut get = [0u8; BINARY_HEADER];
                get[0] = MAGIC_REQUEST;
                get[1] = opcode::GET;
                // Flags and expiration (both 0) follow a SET's header as its extras.
                let mut set = [0u8; BINARY_HEADER + 8];
                set[0] = MAGIC_REQUEST;
                set[1] = opcode::SET;
                set[4] = 8;
                return Some(Templates::with_heads(Form::Binary, prefix, &get, &set));
            }
        };
        Some(Templates::with_heads(form, prefix, get_head, set_head))
    }

    fn with_heads(form: Form, prefix: &[u8], get_head: &[u8], set_head: &[u8]) -> Templates {
        let mut get = [0u8; GET_ROOM];
        let mut set = [0u8; SET_ROOM];
        get[..get_head.len()].copy_from_slice(get_head);
        get[get_head.len()..get_head.len() + prefix.len()].copy_from_slice(prefix);
        set[..set_head.len()].copy_from_slice(set_head);
        set[set_head.len()..set_head.len() + prefix.len()].copy_from_slice(prefix);
        // Both heads end where the key starts (the binary SET's after its 8 extras).
        let key_at = match form {
            Form::Binary => BINARY_HEADER,
            _ => get_head.len(),
        };
        Templates {
            form,
            prefix_len: prefix.len(),
            key_at,
            get,
            set,
        }
    }

    /// The most bytes one GET appends (to reserve room for a batch of them at once).
    pub fn get_room(&self) -> usize {
        GET_ROOM
    }

    /// The format these templates write: a batch writer that matches on it once can
    /// pass it to [`encode_get_as`](Self::encode_get_as) and
    /// [`encode_set_as`](Self::encode_set_as) as a constant, which takes the format's
    /// branches out of its loop.
    pub fn form(&self) -> Form {
        self.form
    }

    /// Appends a GET of key `id`, as [`Codec::encode_get`](crate::protocol::Codec::encode_get)
    /// would.
    #[inline]
    pub fn encode_get(&self, out: &mut Vec<u8>, id: u64, opaque: u32) {
        self.encode_get_as(self.form, out, id, opaque);
    }

    /// [`encode_get`](Self::encode_get); `form` must be [`form`](Self::form).
    #[inline(always)]
    pub fn encode_get_as(&self, form: Form, out: &mut Vec<u8>, id: u64, opaque: u32) {
        debug_assert_eq!(form, self.form);
        let digits = decimal_digits(id);
        let key_len = self.prefix_len + digits;
        let at = self.key_at + self.prefix_len;
        if form == Form::Resp && key_len < 10 {
            // A one-digit key length shifts the head: the general encoder's.
            return self.encode_get_general(out, id, opaque);
        }
        let start = out.len();
        let Some(t) = stamp(out, &self.get) else {
            return self.encode_get_general(out, id, opaque);
        };
        let len = match form {
            Form::Resp => {
                t[14..16].copy_from_slice(&PAIRS[key_len]);
                write_digits(t, at, id, digits);
                t[at + digits..at + digits + 2].copy_from_slice(b"\r\n");
                at + digits + 2
            }
            Form::Text => {
                write_digits(t, at, id, digits);
                t[at + digits..at + digits + 2].copy_from_slice(b"\r\n");
                at + digits + 2
            }
            Form::Binary => {
                binary_header(t, key_len, key_len, opaque);
                write_digits(t, at, id, digits);
                at + digits
            }
        };
        out.truncate(start + len);
    }

    #[cold]
    fn encode_get_general(&self, out: &mut Vec<u8>, id: u64, opaque: u32) {
        let mut digits = itoa::Buffer::new();
        let key = Key::new(self.prefix(), digits.format(id).as_bytes());
        match self.form {
            Form::Resp => resp_encode::encode_get(out, key),
            Form::Text => memcache_text::encode_get(out, key),
            Form::Binary => memcache_binary::encode_get(out, key, opaque),
        }
    }

    /// Appends a SET of `value` under key `id` with no TTL, as
    /// [`Codec::encode_set`](crate::protocol::Codec::encode_set) would with expiry 0.
    #[inline]
    pub fn encode_set(&self, out: &mut Vec<u8>, id: u64, value: &[u8], opaque: u32) {
        self.encode_set_as(self.form, out, id, value, opaque);
    }

    /// [`encode_set`](Self::encode_set); `form` must be [`form`](Self::form).
    #[inline(always)]
    pub fn encode_set_as(&self, form: Form, out: &mut Vec<u8>, id: u64, value: &[u8], opaque: u32) {
        debug_assert_eq!(form, self.form);
        let digits = decimal_digits(id);
        let key_len = self.prefix_len + digits;
        let set_at = match form {
            Form::Binary => BINARY_HEADER + 8,
            _ => self.key_at,
        };
        let at = set_at + self.prefix_len;
        let value_len = value.len();
        // A one-digit RESP key length, and values past u32 (the binary body; the general
        // encoder clamps them), take the general encoder.
        let general = match form {
            Form::Resp => key_len < 10,
            Form::Text => false,
            Form::Binary => value_len > (u32::MAX / 2) as usize,
        };
        if general {
            return self.encode_set_general(out, id, value, opaque);
        }
        let start = out.len();
        let Some(t) = stamp(out, &self.set) else {
            return self.encode_set_general(out, id, value, opaque);
        };
        let len = match form {
            Form::Resp => {
                t[14..16].copy_from_slice(&PAIRS[key_len]);
                write_digits(t, at, id, digits);
                let tail = at + digits;
                t[tail..tail + 3].copy_from_slice(b"\r\n$");
                length_line(t, tail + 3, value_len)
            }
            Form::Text => {
                write_digits(t, at, id, digits);
                let tail = at + digits;
                t[tail..tail + 5].copy_from_slice(b" 0 0 ");
                length_line(t, tail + 5, value_len)
            }
            Form::Binary => {
                binary_header(t, key_len, 8 + key_len + value_len, opaque);
                write_digits(t, at, id, digits);
                at + digits
            }
        };
        out.truncate(start + len);
        out.extend_from_slice(value);
        if form != Form::Binary {
            out.extend_from_slice(b"\r\n");
        }
    }

    #[cold]
    fn encode_set_general(&self, out: &mut Vec<u8>, id: u64, value: &[u8], opaque: u32) {
        let mut digits = itoa::Buffer::new();
        let key = Key::new(self.prefix(), digits.format(id).as_bytes());
        match self.form {
            Form::Resp => resp_encode::encode_set(out, key, value),
            Form::Text => memcache_text::encode_set(out, key, value, 0),
            Form::Binary => memcache_binary::encode_set(out, key, value, 0, opaque),
        }
    }

    /// The key prefix, as the GET template holds it.
    fn prefix(&self) -> &[u8] {
        &self.get[self.key_at..self.key_at + self.prefix_len]
    }
}

/// Appends the whole `template` in one copy of a constant size (a few moves, where a copy
/// of a varying size is a call) and lends the appended bytes, to be filled in and cut
/// back to the request's length. Never `None` (the appended tail is `N` bytes).
#[inline(always)]
fn stamp<'a, const N: usize>(out: &'a mut Vec<u8>, template: &[u8; N]) -> Option<&'a mut [u8; N]> {
    out.extend_from_slice(template);
    // One comparison (the buffer holds at least N bytes), not a range and a length.
    out.last_chunk_mut::<N>()
}

/// Writes `<n>\r\n` into `t` at `at`; returns where it ends.
#[inline(always)]
fn length_line<const N: usize>(t: &mut [u8; N], at: usize, n: usize) -> usize {
    let digits = decimal_digits(n as u64);
    write_digits(t, at, n as u64, digits);
    t[at + digits..at + digits + 2].copy_from_slice(b"\r\n");
    at + digits + 2
}

/// Writes a binary header's key length, body length and opaque (the rest of it is
/// fixed in the template).
#[inline(always)]
fn binary_header<const N: usize>(template: &mut [u8; N], key_len: usize, body: usize, opaque: u32) {
    template[2..4].copy_from_slice(&(key_len as u16).to_be_bytes());
    template[8..12].copy_from_slice(&(body as u32).to_be_bytes());
    template[12..16].copy_from_slice(&opaque.to_be_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Codec;

    const PROTOCOLS: [Protocol; 3] = [
        Protocol::Redis,
        Protocol::MemcacheText,
        Protocol::MemcacheBinary,
    ];

    fn ids() -> Vec<u64> {
        crate::protocol::decimal::test_ids()
    }

    #[test]
    fn requests_match_the_general_encoders_byte_for_byte() {
        let long = [b'p'; MAX_PREFIX];
        let prefixes: [&[u8]; 5] = [b"memtier-", b"", b"k", b"key:with:colons:", &long];
        let values: [&[u8]; 4] = [b"", b"x", &[b'x'; 32], &[b'v'; 1000]];
        for protocol in PROTOCOLS {
            let codec = Codec::new(protocol);
            for prefix in prefixes {
                let t = Templates::new(protocol, prefix).unwrap();
                let (mut ours, mut theirs) = (vec![b'#'], vec![b'#']);
                for (i, id) in ids().into_iter().enumerate() {
                    let opaque = i as u32 * 7919;
                    let mut digits = itoa::Buffer::new();
                    let key = Key::new(prefix, digits.format(id).as_bytes());
                    t.encode_get(&mut ours, id, opaque);
                    codec.encode_get(&mut theirs, key, opaque);
                    for value in values {
                        t.encode_set(&mut ours, id, value, opaque);
                        codec.encode_set(&mut theirs, key, value, 0, opaque);
                    }
                    assert_eq!(
                        ours,
                        theirs,
                        "{protocol:?} {:?} {id}",
                        String::from_utf8_lossy(prefix)
                    );
                }
            }
        }
    }

    #[test]
    fn a_prefix_too_long_has_no_templates() {
        for protocol in PROTOCOLS {
            assert!(Templates::new(protocol, &[b'p'; MAX_PREFIX + 1]).is_none());
        }
    }
}
