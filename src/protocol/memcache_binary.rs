//! memcached binary protocol: encode requests and find where each response ends.
//!
//! Every packet is a 24-byte header followed by a body of extras, key and value,
//! all integers big endian:
//!
//! ```text
//! byte  0      magic: 0x80 request, 0x81 response
//! byte  1      opcode
//! bytes 2-3    key length
//! byte  4      extras length
//! byte  5      data type (0: raw bytes)
//! bytes 6-7    request: vbucket id (0 here); response: status
//! bytes 8-11   total body length = extras + key + value
//! bytes 12-15  opaque: copied from request to response, to match them up
//! bytes 16-23  cas
//! then         extras, key, value
//! ```
//!
//! A multi-get is one quiet GETKQ per key and a NOOP: the server answers only
//! the hits (and errors other than "not found"), then the NOOP, which closes
//! the batch.
//!
//! As with RESP, decoding yields where a reply ends and its outcome, not a
//! parsed value; the body is never read except where a payload span is
//! reported.

use crate::protocol::{Decode, Key, Reply, ReplyKind};

/// Bytes in every request and response header.
pub const HEADER_LEN: usize = 24;

/// Largest response body accepted. memcached's item size limit cannot be
/// configured above 1 GiB, so anything longer is not a memcached response.
pub const MAX_BODY_LEN: usize = 1 << 30;

/// Magic byte of a request.
pub const MAGIC_REQUEST: u8 = 0x80;
/// Magic byte of a response.
pub const MAGIC_RESPONSE: u8 = 0x81;

/// Opcodes this module sends or accepts.
pub mod opcode {
    /// Get: the response carries 4 bytes of flags and the value.
    pub const GET: u8 = 0x00;
    /// Set: store unconditionally.
    pub const SET: u8 = 0x01;
    /// Add: store only if absent (accepted in store replies).
    pub const ADD: u8 = 0x02;
    /// Replace: store only if present (accepted in store replies).
    pub const REPLACE: u8 = 0x03;
    /// Quiet get: no response on a miss (accepted in multi-get replies).
    pub const GETQ: u8 = 0x09;
    /// No-op: always answered; ends a batch of quiet requests.
    pub const NOOP: u8 = 0x0a;
    /// Version: the response's value is the server's version text (the liveness probe).
    pub const VERSION: u8 = 0x0b;
    /// Get that echoes the key (accepted in get replies).
    pub const GETK: u8 = 0x0c;
    /// Quiet get that echoes the key: what multi-get sends for each key.
    pub const GETKQ: u8 = 0x0d;
    /// SASL: list the mechanisms the server offers.
    pub const SASL_LIST_MECHS: u8 = 0x20;
    /// SASL: start authentication with a mechanism.
    pub const SASL_AUTH: u8 = 0x21;
    /// SASL: next step of a multi-step mechanism.
    pub const SASL_STEP: u8 = 0x22;
}

/// Response status codes (bytes 6-7 of a response header).
///
/// ```text
/// 0x0000  no error
/// 0x0001  key not found                  a GET miss
/// 0x0002  key exists                     a CAS mismatch, or ADD of a present key
/// 0x0003  value too large
/// 0x0004  invalid arguments
/// 0x0005  item not stored
/// 0x0006  incr/decr on a non-numeric value
/// 0x0007  vbucket belongs to another server
/// 0x0008  authentication error           (some servers; memcached uses 0x0020)
/// 0x0009  authentication continue        (some servers; memcached uses 0x0021)
/// 0x0020  authentication error           wrong user or password, or SASL required
/// 0x0021  authentication continue        multi-step SASL; PLAIN never needs it
/// 0x0081  unknown command                e.g. SASL sent to a server built without it
/// 0x0082  out of memory
/// 0x0083  not supported
/// 0x0084  internal error
/// 0x0085  busy
/// 0x0086  temporary failure
/// ```
pub mod status {
    /// Success.
    pub const NO_ERROR: u16 = 0x0000;
    /// The key is not stored: a GET miss.
    pub const KEY_NOT_FOUND: u16 = 0x0001;
    /// The key exists (CAS mismatch, ADD of a present key).
    pub const KEY_EXISTS: u16 = 0x0002;
    /// The value exceeds the server's item size limit.
    pub const VALUE_TOO_LARGE: u16 = 0x0003;
    /// The request was malformed.
    pub const INVALID_ARGUMENTS: u16 = 0x0004;
    /// The item was not stored.
    pub const ITEM_NOT_STORED: u16 = 0x0005;
    /// INCR/DECR on a value that is not a number.
    pub const NON_NUMERIC: u16 = 0x0006;
    /// The vbucket belongs to another server.
    pub const VBUCKET_ELSEWHERE: u16 = 0x0007;
    /// Authentication failed (memcached's code; 0x0008 in some other servers).
    pub const AUTH_ERROR: u16 = 0x0020;
    /// Authentication needs another step (memcached's code).
    pub const AUTH_CONTINUE: u16 = 0x0021;
    /// The server does not know the opcode.
    pub const UNKNOWN_COMMAND: u16 = 0x0081;
    /// The server is out of memory.
    pub const OUT_OF_MEMORY: u16 = 0x0082;
    /// The server does not support the request.
    pub const NOT_SUPPORTED: u16 = 0x0083;
    /// The server failed internally.
    pub const INTERNAL_ERROR: u16 = 0x0084;
    /// The server is busy.
    pub const BUSY: u16 = 0x0085;
    /// The server failed temporarily.
    pub const TEMPORARY_FAILURE: u16 = 0x0086;
}

/// A short description of a response status, for error messages: the body of
/// an error response is often empty, and an auth-continue body is a SASL
/// challenge rather than text, so the status code is what explains it.
pub fn status_message(code: u16) -> &'static str {
    match code {
        status::NO_ERROR => "no error",
        status::KEY_NOT_FOUND => "key not found",
        status::KEY_EXISTS => "key exists",
        status::VALUE_TOO_LARGE => "value too large",
        status::INVALID_ARGUMENTS => "invalid arguments",
        status::ITEM_NOT_STORED => "item not stored",
        status::NON_NUMERIC => "incr/decr on a non-numeric value",
        status::VBUCKET_ELSEWHERE => "vbucket belongs to another server",
        0x0008 | status::AUTH_ERROR => "authentication failed",
        0x0009 | status::AUTH_CONTINUE => {
            "authentication continue: the server wants a multi-step SASL exchange, \
             which kvbench does not support (PLAIN needs one step)"
        }
        status::UNKNOWN_COMMAND => "unknown command",
        status::OUT_OF_MEMORY => "out of memory",
        status::NOT_SUPPORTED => "not supported",
        status::INTERNAL_ERROR => "internal error",
        status::BUSY => "busy",
        status::TEMPORARY_FAILURE => "temporary failure",
        _ => "unknown status",
    }
}

/// The opaque of the response starting `reply_bytes` (for a multi-get, of its
/// first packet), so the caller can check it answers the request it expects.
/// `None` when the bytes do not start with a response header.
pub fn opaque_of(reply_bytes: &[u8]) -> Option<u32> {
    let header = reply_bytes.get(..HEADER_LEN)?;
    (header[0] == MAGIC_RESPONSE).then(|| be_u32(&header[12..16]))
}

/// The status of the response starting `reply_bytes` (for a multi-get, of its
/// first packet); see [`status`] and [`status_message`]. `None` when the bytes
/// do not start with a response header.
pub fn status_of(reply_bytes: &[u8]) -> Option<u16> {
    let header = reply_bytes.get(..HEADER_LEN)?;
    (header[0] == MAGIC_RESPONSE).then(|| be_u16(&header[6..8]))
}

fn be_u16(bytes: &[u8]) -> u16 {
    u16::from_be_bytes([bytes[0], bytes[1]])
}

fn be_u32(bytes: &[u8]) -> u32 {
    u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]])
}

/// Appends a request: header, `extras`, `key`, then the value, given in
/// `parts` so callers need no temporary buffer to assemble it.
///
/// Lengths the header cannot express are clamped (a key to 65535 bytes, the
/// value so the body fits in a u32) rather than wrapped, so the stream stays
/// framed and the server answers with an error instead of the connection
/// desynchronising. Real keys are at most 250 bytes and values at most 1 GiB.
fn encode_request(
    out: &mut Vec<u8>,
    opcode: u8,
    extras: &[u8],
    key: Key,
    parts: &[&[u8]],
    opaque: u32,
) {
    // Extras are at most 8 bytes here, so only the key and value can be too long.
    let key = key.clamp(usize::from(u16::MAX));
    let room = (u32::MAX as usize).saturating_sub(extras.len() + key.len());
    let value_len = parts.iter().map(|part| part.len()).sum::<usize>().min(room);
    let body = extras.len() + key.len() + value_len;
    out.reserve(HEADER_LEN + body);
    // The header is put together on the stack and copied once.
    let mut header = [0u8; HEADER_LEN]; // data type raw bytes, vbucket 0, cas none
    header[0] = MAGIC_REQUEST;
    header[1] = opcode;
    header[2..4].copy_from_slice(&(key.len() as u16).to_be_bytes());
    header[4] = extras.len() as u8;
    header[8..12].copy_from_slice(&(body as u32).to_be_bytes());
    header[12..16].copy_from_slice(&opaque.to_be_bytes());
    out.extend_from_slice(&header);
    out.extend_from_slice(extras);
    key.write(out);
    let mut left = value_len;
    for part in parts {
        let part = &part[..part.len().min(left)];
        out.extend_from_slice(part);
        left -= part.len();
    }
}

/// Appends a SET with flags 0.
///
/// ```text
/// header (opcode 0x01, extras 8)  flags u32 = 0  expiration u32  key  value
/// ```
pub fn encode_set<'a>(
    out: &mut Vec<u8>,
    key: impl Into<Key<'a>>,
    value: &[u8],
    exptime: u32,
    opaque: u32,
) {
    let mut extras = [0u8; 8];
    extras[4..].copy_from_slice(&exptime.to_be_bytes());
    encode_request(out, opcode::SET, &extras, key.into(), &[value], opaque);
}

/// Appends a GET (opcode 0x00): header and key. Decode with [`BinExpect::Get`].
pub fn encode_get<'a>(out: &mut Vec<u8>, key: impl Into<Key<'a>>, opaque: u32) {
    encode_request(out, opcode::GET, &[], key.into(), &[], opaque);
}

/// Appends a GETKQ (opcode 0x0d): a get answered only on a hit. A multi-get
/// is one of these per key followed by [`encode_noop`]; decode the whole batch
/// with [`BinExpect::MultiGet`] and the number of keys.
pub fn encode_getkq(out: &mut Vec<u8>, key: &[u8], opaque: u32) {
    encode_request(out, opcode::GETKQ, &[], key.into(), &[], opaque);
}

/// Appends a NOOP (opcode 0x0a): a bare header. Its response ends a batch of
/// quiet requests.
pub fn encode_noop(out: &mut Vec<u8>, opaque: u32) {
    encode_request(out, opcode::NOOP, &[], Key::from(b""), &[], opaque);
}

/// Appends a VERSION (opcode 0x0b): a bare header, the liveness probe. Decode with
/// [`BinExpect::Version`].
pub fn encode_version(out: &mut Vec<u8>, opaque: u32) {
    encode_request(out, opcode::VERSION, &[], Key::from(b""), &[], opaque);
}

/// Appends a SASL PLAIN authentication (opcode 0x21). Decode with [`BinExpect::Auth`].
///
/// ```text
/// header (opcode 0x21)  key "PLAIN"  value \0<user>\0<password>
/// ```
///
/// The empty first field is the authorisation identity (RFC 4616): "act as
/// the user who authenticates".
pub fn encode_sasl_auth_plain(out: &mut Vec<u8>, user: &[u8], password: &[u8], opaque: u32) {
    encode_request(
        out,
        opcode::SASL_AUTH,
        &[],
        Key::from(b"PLAIN"),
        &[b"\0", user, b"\0", password],
        opaque,
    );
}

/// Appends a SASL list-mechanisms request (opcode 0x20): a bare header. The
/// answer (decode with [`BinExpect::Auth`]) carries the mechanisms, space
/// separated, as its value.
pub fn encode_sasl_list_mechs(out: &mut Vec<u8>, opaque: u32) {
    encode_request(
        out,
        opcode::SASL_LIST_MECHS,
        &[],
        Key::from(b""),
        &[],
        opaque,
    );
}

/// The request a response answers; it decides the opcodes accepted and what
/// the status means.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinExpect {
    /// A SET (ADD and REPLACE responses are accepted too).
    Store,
    /// A GET (or GETK).
    Get,
    /// A batch of this many GETKQ (or GETQ) requests ended by a NOOP.
    MultiGet(u32),
    /// A SASL list-mechanisms, auth or step request.
    Auth,
    /// A VERSION request.
    Version,
}

impl BinExpect {
    fn accepts(self, op: u8) -> bool {
        match self {
            BinExpect::Store => matches!(op, opcode::SET | opcode::ADD | opcode::REPLACE),
            BinExpect::Get => matches!(op, opcode::GET | opcode::GETK),
            BinExpect::MultiGet(_) => matches!(op, opcode::GETKQ | opcode::GETQ | opcode::NOOP),
            BinExpect::Auth => matches!(
                op,
                opcode::SASL_LIST_MECHS | opcode::SASL_AUTH | opcode::SASL_STEP
            ),
            BinExpect::Version => op == opcode::VERSION,
        }
    }
}

/// What the decoder keeps of a packet header while its body arrives.
#[derive(Clone, Copy, Debug)]
struct Packet {
    opcode: u8,
    status: u16,
    /// Offset of the value within the reply (after header, extras and key).
    value_start: usize,
    /// Buffer length at which the packet is complete.
    end: usize,
}

/// Incremental decoder for memcached binary responses.
///
/// Contract (the same as [`RespDecoder`](crate::protocol::resp::RespDecoder)):
/// every call gets a buffer that starts at the first byte of the current
/// reply; after `Incomplete`, the next call gets the same bytes with more
/// appended, and the same [`BinExpect`]. After `Complete` or `Invalid` the
/// decoder is ready for the next reply.
///
/// Each header is parsed once; after it, the decoder knows where the packet
/// ends and returns `Incomplete` without looking at the buffer until it is
/// that long. A multi-get reply is several packets; `pos` is where the
/// current one starts.
#[derive(Clone, Debug)]
pub struct BinaryDecoder {
    /// Start of the packet being decoded; packets before it are validated.
    pos: usize,
    /// The packet at `pos`, once its header has arrived.
    packet: Option<Packet>,
    /// Multi-get: responses seen before the NOOP, hits among them, and the
    /// value of the first error response.
    responses: u32,
    hits: u32,
    first_error: Option<(usize, usize)>,
    /// Headers parsed, to prove each is parsed once however many calls its
    /// packet takes to arrive. Not cleared by `reset`.
    #[cfg(test)]
    headers_read: usize,
}

impl Default for BinaryDecoder {
    fn default() -> Self {
        Self::new()
    }
}

impl BinaryDecoder {
    /// A decoder waiting for the first byte of a response.
    pub fn new() -> Self {
        BinaryDecoder {
            pos: 0,
            packet: None,
            responses: 0,
            hits: 0,
            first_error: None,
            #[cfg(test)]
            headers_read: 0,
        }
    }

    /// Forgets any partly decoded reply (after a reconnect, say).
    pub fn reset(&mut self) {
        self.pos = 0;
        self.packet = None;
        self.responses = 0;
        self.hits = 0;
        self.first_error = None;
    }

    /// The buffer length the current reply needs at least, once a header has
    /// told it (for a multi-get, that packet plus the NOOP still to come);
    /// else 0. Lets the caller grow its read buffer once for a large value.
    pub fn bytes_needed_hint(&self) -> usize {
        match self.packet {
            None => 0,
            Some(p) if p.opcode == opcode::GETKQ || p.opcode == opcode::GETQ => p.end + HEADER_LEN,
            Some(p) => p.end,
        }
    }

    /// Continues decoding the reply to `expect` at the start of `buf`.
    ///
    /// | expect | status 0 | status 1 (not found) | other status |
    /// | --- | --- | --- | --- |
    /// | `Store` | `Simple` | `Error` | `Error` |
    /// | `Get` | `Bulk` | `Nil` | `Error` |
    /// | `Auth` | `Simple` | `Error` | `Error` (0x20 failed, 0x21 continue) |
    ///
    /// `payload` is the value section (after extras and key): the data of a
    /// hit, the server's text for an error (often "Not found", "Auth failure"),
    /// the mechanism list or SASL challenge for `Auth`. [`status_of`] on the
    /// reply bytes gives the status code.
    ///
    /// `MultiGet(n)` reads GETKQ responses until the NOOP's: `Array` with
    /// `elements` = hits and `nil_elements` = n - hits. If any response in
    /// the batch (or the NOOP) carried an error status the kind is `Error`,
    /// the payload that first error's value, and the counts are still set.
    /// `len` always covers the whole batch, NOOP included.
    #[inline(always)]
    pub fn decode(&mut self, buf: &[u8], expect: BinExpect) -> Decode {
        // A decoder at rest facing a whole answer to a set or a get that succeeded or
        // missed (what a load mostly gets) takes it in one look.
        if self.pos == 0
            && self.packet.is_none()
            && let Some(reply) = common_reply(buf, expect)
        {
            return Decode::Complete(reply);
        }
        self.decode_general(buf, expect)
    }

    /// [`decode`](Self::decode) without the look for common replies.
    #[inline(never)]
    fn decode_general(&mut self, buf: &[u8], expect: BinExpect) -> Decode {
        let outcome = self.step(buf, expect);
        if !matches!(outcome, Decode::Incomplete) {
            self.reset();
        }
        outcome
    }

    fn step(&mut self, buf: &[u8], expect: BinExpect) -> Decode {
        let validated = self.pos + if self.packet.is_some() { HEADER_LEN } else { 0 };
        if buf.len() < validated {
            // The caller broke the contract (the buffer lost validated bytes);
            // waiting could never end, so fail instead.
            return Decode::Invalid("buffer shorter than the part already decoded");
        }
        loop {
            let packet = match self.packet {
                Some(packet) => packet,
                None => match self.read_header(buf, expect) {
                    Ok(Some(packet)) => packet,
                    Ok(None) => return Decode::Incomplete,
                    Err(why) => return Decode::Invalid(why),
                },
            };
            if buf.len() < packet.end {
                return Decode::Incomplete;
            }
            self.packet = None;
            let value = (packet.value_start, packet.end - packet.value_start);
            let ok = packet.status == status::NO_ERROR;
            let kind = match expect {
                BinExpect::Store | BinExpect::Auth | BinExpect::Version if ok => ReplyKind::Simple,
                BinExpect::Get if ok => ReplyKind::Bulk,
                BinExpect::Get if packet.status == status::KEY_NOT_FOUND => {
                    return complete(packet.end, ReplyKind::Nil, (0, 0), 0, 0);
                }
                BinExpect::Store | BinExpect::Get | BinExpect::Auth | BinExpect::Version => {
                    ReplyKind::Error
                }
                BinExpect::MultiGet(n) => {
                    // A quiet get sends no "not found", but a server that
                    // does is answering, not failing.
                    let failed = !ok && packet.status != status::KEY_NOT_FOUND;
                    if failed && self.first_error.is_none() {
                        self.first_error = Some(value);
                    }
                    if packet.opcode == opcode::NOOP {
                        return match self.first_error {
                            None => complete(
                                packet.end,
                                ReplyKind::Array,
                                (0, 0),
                                self.hits,
                                n - self.hits,
                            ),
                            Some(error) => complete(
                                packet.end,
                                ReplyKind::Error,
                                error,
                                self.hits,
                                n - self.hits,
                            ),
                        };
                    }
                    // Each key is answered at most once; more means the
                    // stream is not the answer to this batch.
                    if self.responses >= n {
                        return Decode::Invalid("more multi-get responses than keys requested");
                    }
                    self.responses += 1;
                    if ok {
                        self.hits += 1;
                    }
                    self.pos = packet.end;
                    continue;
                }
            };
            return complete(packet.end, kind, value, 0, 0);
        }
    }

    /// Parses and checks the header at `pos`. `Ok(None)`: not all arrived yet.
    fn read_header(
        &mut self,
        buf: &[u8],
        expect: BinExpect,
    ) -> Result<Option<Packet>, &'static str> {
        let start = self.pos;
        let Some(header) = buf.get(start..start + HEADER_LEN) else {
            // Refuse garbage from its first byte rather than after 24.
            return match buf.get(start) {
                Some(&magic) if magic != MAGIC_RESPONSE => Err("bad magic byte in response header"),
                _ => Ok(None),
            };
        };
        #[cfg(test)]
        {
            self.headers_read += 1;
        }
        if header[0] != MAGIC_RESPONSE {
            return Err("bad magic byte in response header");
        }
        let op = header[1];
        if !expect.accepts(op) {
            return Err("response opcode does not match the request");
        }
        let key_len = usize::from(be_u16(&header[2..4]));
        let extras_len = usize::from(header[4]);
        let status = be_u16(&header[6..8]);
        let body_len = be_u32(&header[8..12]) as usize;
        if body_len > MAX_BODY_LEN {
            return Err("response body larger than 1 GiB");
        }
        if body_len < extras_len + key_len {
            return Err("response body shorter than its extras and key");
        }
        let Some(end) = (start + HEADER_LEN).checked_add(body_len) else {
            return Err("response larger than the address space");
        };
        let packet = Packet {
            opcode: op,
            status,
            value_start: start + HEADER_LEN + extras_len + key_len,
            end,
        };
        self.packet = Some(packet);
        Ok(Some(packet))
    }
}

/// The response at the start of `buf` if it is whole and answers a set (stored) or a get
/// (a value, or not found), exactly as the general decoder would report it; `None` for
/// anything else, including what is invalid.
#[inline(always)]
fn common_reply(buf: &[u8], expect: BinExpect) -> Option<Reply> {
    // A fixed-size header: no bounds checks on the fields.
    let header: &[u8; HEADER_LEN] = buf.get(..HEADER_LEN)?.try_into().ok()?;
    let accepted = match expect {
        BinExpect::Store => header[1] == opcode::SET,
        BinExpect::Get => header[1] == opcode::GET,
        _ => false,
    };
    if header[0] != MAGIC_RESPONSE || !accepted {
        return None;
    }
    let body_len = u32::from_be_bytes([header[8], header[9], header[10], header[11]]) as usize;
    let key_len = usize::from(u16::from_be_bytes([header[2], header[3]]));
    let value_start = HEADER_LEN + usize::from(header[4]) + key_len;
    let end = HEADER_LEN + body_len;
    if body_len > MAX_BODY_LEN || value_start > end || buf.len() < end {
        return None;
    }
    let kind = match (u16::from_be_bytes([header[6], header[7]]), expect) {
        (status::NO_ERROR, BinExpect::Store) => ReplyKind::Simple,
        (status::NO_ERROR, _) => ReplyKind::Bulk,
        (status::KEY_NOT_FOUND, BinExpect::Get) => {
            return Some(Reply {
                len: end,
                kind: ReplyKind::Nil,
                payload: (0, 0),
                elements: 0,
                nil_elements: 0,
            });
        }
        _ => return None,
    };
    Some(Reply {
        len: end,
        kind,
        payload: (value_start, end - value_start),
        elements: 0,
        nil_elements: 0,
    })
}

fn complete(
    len: usize,
    kind: ReplyKind,
    payload: (usize, usize),
    elements: u32,
    nil_elements: u32,
) -> Decode {
    Decode::Complete(Reply {
        len,
        kind,
        payload,
        elements,
        nil_elements,
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::protocol::Expect;

    fn reply(
        len: usize,
        kind: ReplyKind,
        payload: (usize, usize),
        elements: u32,
        nils: u32,
    ) -> Decode {
        Decode::Complete(Reply {
            len,
            kind,
            payload,
            elements,
            nil_elements: nils,
        })
    }

    fn decode_whole(buf: &[u8], expect: BinExpect) -> Decode {
        BinaryDecoder::new().decode(buf, expect)
    }

    /// Builds a response packet; checked against the spec's bytes below.
    fn response(
        op: u8,
        status: u16,
        extras: &[u8],
        key: &[u8],
        value: &[u8],
        opaque: u32,
    ) -> Vec<u8> {
        let mut out = vec![MAGIC_RESPONSE, op];
        out.extend_from_slice(&(key.len() as u16).to_be_bytes());
        out.push(extras.len() as u8);
        out.push(0);
        out.extend_from_slice(&status.to_be_bytes());
        out.extend_from_slice(&((extras.len() + key.len() + value.len()) as u32).to_be_bytes());
        out.extend_from_slice(&opaque.to_be_bytes());
        out.extend_from_slice(&1u64.to_be_bytes());
        out.extend_from_slice(extras);
        out.extend_from_slice(key);
        out.extend_from_slice(value);
        out
    }

    /// The GET hit example of the binary protocol spec: flags 0xdeadbeef, "World".
    const SPEC_GET_HIT: &[u8] = &[
        0x81, 0x00, 0x00, 0x00, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x09, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0xde, 0xad, 0xbe, 0xef, b'W', b'o',
        b'r', b'l', b'd',
    ];
    /// The GET miss example of the spec: status 1, body "Not found".
    const SPEC_GET_MISS: &[u8] = &[
        0x81, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x09, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, b'N', b'o', b't', b' ', b'f', b'o',
        b'u', b'n', b'd',
    ];
    /// A successful SET response: a bare header with a cas.
    const SPEC_SET_OK: &[u8] = &[
        0x81, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
    ];

    /// The contract cases (see `crate::protocol::contract`): every well-formed reply.
    pub(crate) fn contract_cases() -> Vec<(Vec<u8>, Expect, Decode)> {
        valid_replies()
            .into_iter()
            .map(|(bytes, expect, want)| {
                let expect = match expect {
                    BinExpect::Store => Expect::Store,
                    BinExpect::Get => Expect::Get,
                    BinExpect::MultiGet(n) => Expect::MultiGet(n),
                    BinExpect::Auth => Expect::Auth,
                    BinExpect::Version => Expect::Probe,
                };
                (bytes, expect, want)
            })
            .collect()
    }

    /// Every well-formed reply exercised here, with its request and outcome.
    fn valid_replies() -> Vec<(Vec<u8>, BinExpect, Decode)> {
        let hit = |kind| reply(33, kind, (28, 5), 0, 0);
        let mut cases = vec![
            (SPEC_GET_HIT.to_vec(), BinExpect::Get, hit(ReplyKind::Bulk)),
            (
                SPEC_GET_MISS.to_vec(),
                BinExpect::Get,
                reply(33, ReplyKind::Nil, (0, 0), 0, 0),
            ),
            (
                SPEC_SET_OK.to_vec(),
                BinExpect::Store,
                reply(24, ReplyKind::Simple, (24, 0), 0, 0),
            ),
        ];
        // GETK echoes the key: the value starts after extras and key.
        let getk = response(opcode::GETK, 0, &[0, 0, 0, 0], b"Hello", b"World", 5);
        cases.push((
            getk,
            BinExpect::Get,
            reply(38, ReplyKind::Bulk, (33, 5), 0, 0),
        ));
        let version = response(opcode::VERSION, 0, &[], &[], b"1.6.21", 7);
        cases.push((
            version,
            BinExpect::Version,
            reply(30, ReplyKind::Simple, (24, 6), 0, 0),
        ));
        let empty = response(opcode::GET, 0, &[0, 0, 0, 0], b"", b"", 5);
        cases.push((
            empty,
            BinExpect::Get,
            reply(28, ReplyKind::Bulk, (28, 0), 0, 0),
        ));
        for (status, text) in [
            (status::KEY_EXISTS, &b"Data exists for key."[..]),
            (status::VALUE_TOO_LARGE, b"Too large."),
            (status::ITEM_NOT_STORED, b"Not stored."),
            (status::OUT_OF_MEMORY, b"Out of memory"),
            (status::KEY_NOT_FOUND, b"Not found"),
            (status::UNKNOWN_COMMAND, b""),
        ] {
            let len = 24 + text.len();
            cases.push((
                response(opcode::SET, status, &[], &[], text, 9),
                BinExpect::Store,
                reply(len, ReplyKind::Error, (24, text.len()), 0, 0),
            ));
            if status != status::KEY_NOT_FOUND {
                cases.push((
                    response(opcode::GET, status, &[], &[], text, 9),
                    BinExpect::Get,
                    reply(len, ReplyKind::Error, (24, text.len()), 0, 0),
                ));
            }
        }
        for (op, status, text, kind) in [
            (
                opcode::SASL_AUTH,
                status::NO_ERROR,
                &b"Authenticated"[..],
                ReplyKind::Simple,
            ),
            (
                opcode::SASL_AUTH,
                status::AUTH_ERROR,
                b"Auth failure",
                ReplyKind::Error,
            ),
            (
                opcode::SASL_AUTH,
                status::AUTH_CONTINUE,
                b"challenge",
                ReplyKind::Error,
            ),
            (
                opcode::SASL_AUTH,
                status::UNKNOWN_COMMAND,
                b"Unknown command",
                ReplyKind::Error,
            ),
            (
                opcode::SASL_LIST_MECHS,
                status::NO_ERROR,
                b"CRAM-MD5 PLAIN",
                ReplyKind::Simple,
            ),
        ] {
            cases.push((
                response(op, status, &[], &[], text, 1),
                BinExpect::Auth,
                reply(24 + text.len(), kind, (24, text.len()), 0, 0),
            ));
        }
        let noop = response(opcode::NOOP, 0, &[], &[], &[], 3);
        cases.push((
            noop.clone(),
            BinExpect::MultiGet(2),
            reply(24, ReplyKind::Array, (0, 0), 0, 2),
        ));
        cases.push((
            noop.clone(),
            BinExpect::MultiGet(0),
            reply(24, ReplyKind::Array, (0, 0), 0, 0),
        ));
        let mut batch = response(opcode::GETKQ, 0, &[0, 0, 0, 0], b"a", b"x", 3);
        batch.extend(response(opcode::GETKQ, 0, &[0, 0, 0, 7], b"ccc", b"yyy", 3));
        batch.extend_from_slice(&noop);
        let len = batch.len();
        cases.push((
            batch.clone(),
            BinExpect::MultiGet(3),
            reply(len, ReplyKind::Array, (0, 0), 2, 1),
        ));
        cases.push((
            batch,
            BinExpect::MultiGet(2),
            reply(len, ReplyKind::Array, (0, 0), 2, 0),
        ));
        // An explicit "not found" is a miss, not an error.
        let mut batch = response(
            opcode::GETKQ,
            status::KEY_NOT_FOUND,
            &[],
            &[],
            b"Not found",
            3,
        );
        batch.extend_from_slice(&noop);
        let len = batch.len();
        cases.push((
            batch,
            BinExpect::MultiGet(1),
            reply(len, ReplyKind::Array, (0, 0), 0, 1),
        ));
        // An error in the batch makes the whole reply an error, still counted to the NOOP.
        let mut batch = response(opcode::GETKQ, 0, &[0, 0, 0, 0], b"a", b"x", 3);
        batch.extend(response(
            opcode::GETKQ,
            status::OUT_OF_MEMORY,
            &[],
            &[],
            b"Out of memory",
            3,
        ));
        batch.extend_from_slice(&noop);
        let len = batch.len();
        cases.push((
            batch,
            BinExpect::MultiGet(3),
            reply(len, ReplyKind::Error, (54, 13), 1, 2),
        ));
        cases
    }

    #[test]
    fn the_look_for_common_replies_agrees_with_the_general_decoder() {
        let mut cases: Vec<(Vec<u8>, BinExpect)> = valid_replies()
            .into_iter()
            .map(|(bytes, expect, _)| (bytes, expect))
            .collect();
        // Refusals the look must leave to the general decoder.
        let mut short_body = SPEC_GET_HIT.to_vec();
        short_body[11] = 2;
        cases.push((short_body, BinExpect::Get));
        cases.push((SPEC_SET_OK.to_vec(), BinExpect::Get));
        cases.push((SPEC_GET_MISS.to_vec(), BinExpect::Store));
        let error = response(
            opcode::SET,
            status::VALUE_TOO_LARGE,
            &[],
            b"",
            b"Too large",
            0,
        );
        cases.push((error, BinExpect::Store));
        for (bytes, expect) in cases {
            for end in 0..=bytes.len() {
                let buf = &bytes[..end];
                let general = BinaryDecoder::new().decode_general(buf, expect);
                assert_eq!(decode_whole(buf, expect), general, "{buf:?} {expect:?}");
            }
        }
    }

    #[test]
    fn response_builder_matches_the_spec_bytes() {
        let hit = response(opcode::GET, 0, &[0xde, 0xad, 0xbe, 0xef], b"", b"World", 0);
        assert_eq!(hit, SPEC_GET_HIT);
        let miss = response(opcode::GET, 1, &[], b"", b"Not found", 0);
        assert_eq!(miss[..16], SPEC_GET_MISS[..16]);
        assert_eq!(miss[24..], SPEC_GET_MISS[24..]);
    }

    #[test]
    fn encodes_get_byte_exact() {
        // The spec's GET "Hello" example.
        let want: &[u8] = &[
            0x80, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x05, 0x00, 0x00,
            0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, b'H', b'e', b'l', b'l',
            b'o',
        ];
        let mut out = Vec::new();
        encode_get(&mut out, b"Hello", 0);
        assert_eq!(out, want);
    }

    #[test]
    fn encodes_set_byte_exact() {
        let want: &[u8] = &[
            0x80, 0x01, 0x00, 0x05, // magic, SET, key length 5
            0x08, 0x00, 0x00, 0x00, // extras 8, raw, vbucket 0
            0x00, 0x00, 0x00, 0x12, // body 8 + 5 + 5 = 18
            0xde, 0xad, 0xbe, 0xef, // opaque
            0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // cas
            0x00, 0x00, 0x00, 0x00, // flags 0
            0x00, 0x00, 0x0e, 0x10, // expiration 3600
            b'H', b'e', b'l', b'l', b'o', b'W', b'o', b'r', b'l', b'd',
        ];
        let mut out = b"before".to_vec();
        encode_set(&mut out, b"Hello", b"World", 3600, 0xdead_beef);
        assert_eq!(&out[..6], b"before", "appends, never clears");
        assert_eq!(&out[6..], want);
    }

    #[test]
    fn encodes_multi_get_byte_exact() {
        let want: &[u8] = &[
            0x80, 0x0d, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00,
            0x00, 0x07, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, b'k',
            b'1', // GETKQ k1
            0x80, 0x0d, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00,
            0x00, 0x07, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, b'k',
            b'2', // GETKQ k2
            0x80, 0x0a, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
            0x00, 0x07, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // NOOP
        ];
        let mut out = Vec::new();
        encode_getkq(&mut out, b"k1", 7);
        encode_getkq(&mut out, b"k2", 7);
        encode_noop(&mut out, 7);
        assert_eq!(out, want);
    }

    #[test]
    fn encodes_sasl_byte_exact() {
        let want: &[u8] = &[
            0x80, 0x21, 0x00, 0x05, 0x00, 0x00, 0x00, 0x00, // SASL auth, key "PLAIN"
            0x00, 0x00, 0x00, 0x0f, 0x00, 0x00, 0x00, 0x03, // body 5 + 10, opaque 3
            0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // cas
            b'P', b'L', b'A', b'I', b'N', 0x00, b'u', b's', b'e', b'r', 0x00, b'p', b'a', b's',
            b's',
        ];
        let mut out = Vec::new();
        encode_sasl_auth_plain(&mut out, b"user", b"pass", 3);
        assert_eq!(out, want);

        let want: &[u8] = &[
            0x80, 0x20, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
            0x00, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        ];
        out.clear();
        encode_sasl_list_mechs(&mut out, 4);
        assert_eq!(out, want);
    }

    #[test]
    fn encoders_reserve_the_exact_size_once() {
        // From an empty Vec one reserve of the right size allocates exactly
        // that much; a wrong size shows as capacity != len.
        let mut out = Vec::new();
        encode_set(&mut out, b"memtier-1", &[7; 100], 10, 1);
        assert_eq!(out.capacity(), out.len());
        let mut out = Vec::new();
        encode_sasl_auth_plain(&mut out, b"someone", b"secret", 1);
        assert_eq!(out.capacity(), out.len());
    }

    #[test]
    fn an_oversized_key_is_clamped_not_wrapped() {
        // 70000 as u16 would be 4464 and desynchronise the stream; clamped,
        // the header still frames exactly the bytes written.
        let key = vec![b'k'; 70_000];
        let mut out = Vec::new();
        encode_get(&mut out, &key, 0);
        assert_eq!(out[2..4], [0xff, 0xff]);
        assert_eq!(out[8..12], 65_535u32.to_be_bytes());
        assert_eq!(out.len(), HEADER_LEN + 65_535);
    }

    #[test]
    fn decodes_every_reply_kind() {
        for (buf, expect, want) in valid_replies() {
            assert_eq!(decode_whole(&buf, expect), want, "{buf:02x?} {expect:?}");
        }
    }

    #[test]
    fn payloads_and_header_fields() {
        let Decode::Complete(r) = decode_whole(SPEC_GET_HIT, BinExpect::Get) else {
            panic!("not complete");
        };
        assert_eq!(r.text(SPEC_GET_HIT), b"World");

        let denied = response(
            opcode::SASL_AUTH,
            status::AUTH_ERROR,
            &[],
            &[],
            b"Auth failure",
            0xabcd,
        );
        let Decode::Complete(r) = decode_whole(&denied, BinExpect::Auth) else {
            panic!("not complete");
        };
        assert_eq!(r.text(&denied), b"Auth failure");
        assert_eq!(opaque_of(&denied), Some(0xabcd));
        assert_eq!(status_of(&denied), Some(status::AUTH_ERROR));
        assert_eq!(status_message(status::AUTH_ERROR), "authentication failed");

        let more = response(opcode::SASL_AUTH, status::AUTH_CONTINUE, &[], &[], b"", 1);
        assert_eq!(
            decode_whole(&more, BinExpect::Auth),
            reply(24, ReplyKind::Error, (24, 0), 0, 0)
        );
        assert_eq!(status_of(&more), Some(0x21));
        assert!(status_message(0x21).starts_with("authentication continue"));
        assert_eq!(status_message(0x1234), "unknown status");

        assert_eq!(opaque_of(&SPEC_GET_HIT[..23]), None, "short");
        let mut request = Vec::new();
        encode_get(&mut request, b"k", 5);
        assert_eq!(opaque_of(&request), None, "a request is not a response");
        assert_eq!(status_of(&request), None);
    }

    #[test]
    fn refuses_malformed_replies() {
        let mut cases: Vec<(Vec<u8>, BinExpect, &str)> = Vec::new();
        let bad = "bad magic byte in response header";
        let mut request_magic = SPEC_SET_OK.to_vec();
        request_magic[0] = MAGIC_REQUEST;
        cases.push((request_magic, BinExpect::Store, bad));
        cases.push((b"STORED\r\n".to_vec(), BinExpect::Store, bad));
        cases.push((b"+OK\r\n".to_vec(), BinExpect::Store, bad));
        cases.push((vec![0x81], BinExpect::Get, "")); // a valid start: Incomplete, checked below
        // Body shorter than extras + key.
        let mut short = response(opcode::GET, 0, &[0, 0, 0, 0], b"key", b"", 0);
        short[11] = 6;
        cases.push((
            short,
            BinExpect::Get,
            "response body shorter than its extras and key",
        ));
        // Absurd body length: refused from the header alone.
        let mut huge = SPEC_SET_OK.to_vec();
        huge[8..12].copy_from_slice(&(MAX_BODY_LEN as u32 + 1).to_be_bytes());
        cases.push((huge, BinExpect::Store, "response body larger than 1 GiB"));
        // Opcode not answering the request.
        let mismatch = "response opcode does not match the request";
        cases.push((SPEC_GET_HIT.to_vec(), BinExpect::Store, mismatch));
        cases.push((SPEC_SET_OK.to_vec(), BinExpect::Get, mismatch));
        cases.push((SPEC_GET_HIT.to_vec(), BinExpect::MultiGet(1), mismatch));
        cases.push((SPEC_SET_OK.to_vec(), BinExpect::Auth, mismatch));
        // More answers than keys.
        let mut batch = response(opcode::GETKQ, 0, &[0, 0, 0, 0], b"a", b"x", 3);
        batch.extend(response(opcode::GETKQ, 0, &[0, 0, 0, 0], b"b", b"x", 3));
        batch.extend(response(opcode::NOOP, 0, &[], &[], &[], 3));
        cases.push((
            batch,
            BinExpect::MultiGet(1),
            "more multi-get responses than keys requested",
        ));
        for (buf, expect, why) in cases {
            let got = decode_whole(&buf, expect);
            if why.is_empty() {
                assert_eq!(got, Decode::Incomplete);
            } else {
                assert_eq!(got, Decode::Invalid(why), "{buf:02x?} {expect:?}");
            }
        }
    }

    #[test]
    fn garbage_is_refused_from_its_first_byte() {
        for first in [0x00, 0x80, b'S', b'V', b'$'] {
            for expect in [
                BinExpect::Store,
                BinExpect::Get,
                BinExpect::MultiGet(2),
                BinExpect::Auth,
            ] {
                assert!(matches!(decode_whole(&[first], expect), Decode::Invalid(_)));
            }
        }
        // A body length of 1 GiB is accepted and awaited; the hint says how long.
        let mut max = SPEC_SET_OK.to_vec();
        max[8..12].copy_from_slice(&(MAX_BODY_LEN as u32).to_be_bytes());
        let mut decoder = BinaryDecoder::new();
        assert_eq!(decoder.decode(&max, BinExpect::Store), Decode::Incomplete);
        assert_eq!(decoder.bytes_needed_hint(), HEADER_LEN + MAX_BODY_LEN);
    }

    #[test]
    fn a_1_mb_value_in_1000_pieces_is_not_rescanned() {
        const SIZE: usize = 1 << 20;
        let value: Vec<u8> = (0..SIZE).map(|i| (i % 251) as u8).collect();
        let buf = response(opcode::GET, 0, &[0, 0, 0, 0], b"", &value, 42);
        let total = buf.len();
        let mut decoder = BinaryDecoder::new();
        for piece in 1..1000 {
            let end = total * piece / 1000;
            assert_eq!(
                decoder.decode(&buf[..end], BinExpect::Get),
                Decode::Incomplete
            );
            let want_hint = if end >= HEADER_LEN { total } else { 0 };
            assert_eq!(decoder.bytes_needed_hint(), want_hint);
        }
        assert_eq!(
            decoder.headers_read, 1,
            "the header is parsed once, not per call"
        );
        assert_eq!(
            decoder.decode(&buf, BinExpect::Get),
            reply(total, ReplyKind::Bulk, (28, SIZE), 0, 0)
        );
        assert_eq!(decoder.headers_read, 1);
        assert_eq!(decoder.bytes_needed_hint(), 0);
    }

    #[test]
    fn multi_get_hint_counts_the_noop_still_to_come() {
        let buf = response(opcode::GETKQ, 0, &[0, 0, 0, 0], b"a", &[1; 100], 3);
        let mut decoder = BinaryDecoder::new();
        assert_eq!(
            decoder.decode(&buf[..30], BinExpect::MultiGet(2)),
            Decode::Incomplete
        );
        assert_eq!(decoder.bytes_needed_hint(), buf.len() + HEADER_LEN);
    }

    #[test]
    fn reset_and_shrinking_buffers() {
        let mut decoder = BinaryDecoder::new();
        assert_eq!(
            decoder.decode(&SPEC_GET_HIT[..30], BinExpect::Get),
            Decode::Incomplete
        );
        assert!(matches!(
            decoder.decode(&SPEC_GET_HIT[..10], BinExpect::Get),
            Decode::Invalid(_)
        ));
        assert_eq!(
            decoder.decode(&SPEC_GET_HIT[..30], BinExpect::Get),
            Decode::Incomplete
        );
        decoder.reset();
        assert_eq!(decoder.bytes_needed_hint(), 0);
        assert_eq!(
            decoder.decode(SPEC_SET_OK, BinExpect::Store),
            reply(24, ReplyKind::Simple, (24, 0), 0, 0)
        );
    }
}
