//! Redis RESP2 and RESP3: find where each reply ends (the encoders are in
//! [`resp_encode`](super::resp_encode)).
//!
//! A load generator does not need a parsed value tree: it needs to know where a
//! reply ends (to advance its read buffer), what kind it is (error, nil, ...)
//! and, for MGET-style arrays, how many elements were nil. [`RespDecoder`]
//! returns exactly that, incrementally, without ever rescanning bytes it has
//! already validated.
//!
//! Wire format (RESP2 types first, then the RESP3 additions):
//!
//! ```text
//! +OK\r\n                         simple string
//! -ERR unknown command\r\n        error
//! :1000\r\n                       integer
//! $5\r\nhello\r\n                 bulk string ($-1\r\n is nil)
//! *2\r\n$1\r\na\r\n:1\r\n         array of 2 elements (*-1\r\n is nil)
//! _\r\n                           null
//! ,3.14\r\n                       double (also inf, -inf, nan)
//! #t\r\n                          boolean
//! (3492890328409238509324850\r\n  big number
//! =15\r\ntxt:Some string\r\n      verbatim string (3-byte format, ':', text)
//! !21\r\nSYNTAX invalid syntax\r\n blob error
//! %1\r\n+key\r\n:1\r\n            map of 1 pair (2 elements per pair)
//! ~2\r\n:1\r\n:2\r\n              set
//! >2\r\n+message\r\n+hi\r\n       push (out-of-band, e.g. pub/sub)
//! |1\r\n+ttl\r\n:3600\r\n         attribute: key/value pairs annotating the next element
//! ```

use crate::protocol::{Decode, Reply, ReplyKind};

/// Longest bulk, verbatim or blob-error body accepted (Redis's default `proto-max-bulk-len`).
pub const MAX_BULK_LEN: u64 = 512 * 1024 * 1024;

/// Most elements accepted in one aggregate (map and attribute: pairs). Redis
/// itself refuses multibulk lengths above `i32::MAX`.
pub const MAX_AGGREGATE_LEN: u64 = i32::MAX as u64;

/// Deepest nesting of aggregates accepted. Real replies nest a few levels at
/// most; the bound keeps the decoder's state a small fixed-size array.
pub const MAX_DEPTH: usize = 32;

/// Longest simple string, error line or big number accepted.
const MAX_TEXT_LINE: usize = MAX_BULK_LEN as usize;
/// `-9223372036854775808` is 20 bytes; lengths and integers never need more.
const MAX_INTEGER_LINE: usize = 20;
/// `%.17g` doubles are at most 24 bytes; leave room for other spellings.
const MAX_DOUBLE_LINE: usize = 64;

/// One open aggregate: how many elements it still expects.
#[derive(Clone, Copy, Debug, Default)]
struct Frame {
    remaining: u64,
    /// An attribute annotates the element after it and is not itself an element
    /// of its parent, so closing it must not count towards the parent.
    attribute: bool,
}

/// What a header line may contain, so garbage is refused as soon as it arrives
/// instead of after waiting for a CRLF that may never come.
#[derive(Clone, Copy, PartialEq, Eq)]
enum LineClass {
    /// Anything but CR and LF.
    Text,
    /// A signed decimal: lengths, counts, integers.
    Integer,
    /// Digits and a sign, any length (big numbers).
    BigNumber,
    /// A float as Redis prints it, checked by parsing once the line is whole.
    Double,
    /// `t` or `f`.
    Boolean,
    /// Nothing.
    Empty,
}

impl LineClass {
    fn max_len(self) -> usize {
        match self {
            LineClass::Text | LineClass::BigNumber => MAX_TEXT_LINE,
            LineClass::Integer => MAX_INTEGER_LINE,
            LineClass::Double => MAX_DOUBLE_LINE,
            LineClass::Boolean => 1,
            LineClass::Empty => 0,
        }
    }

    fn allows(self, b: u8) -> bool {
        match self {
            LineClass::Text => true,
            LineClass::Integer => b.is_ascii_digit() || b == b'-',
            LineClass::BigNumber => b.is_ascii_digit() || b == b'-' || b == b'+',
            LineClass::Double => b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'),
            LineClass::Boolean => b == b't' || b == b'f',
            LineClass::Empty => false,
        }
    }
}

/// Parses a RESP integer line: an optional `-` and 1 to 19 digits.
pub(crate) fn parse_integer(digits: &[u8]) -> Option<i64> {
    let (negative, digits) = match digits.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, digits),
    };
    if digits.is_empty() {
        return None;
    }
    let mut value: i64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        let d = i64::from(d - b'0');
        value = if negative {
            value.checked_mul(10)?.checked_sub(d)?
        } else {
            value.checked_mul(10)?.checked_add(d)?
        };
    }
    Some(value)
}

/// Parses a length or count: `Ok(None)` for `-1` when `nil_allowed`, else a value
/// in `0..=max`.
fn parse_length(digits: &[u8], nil_allowed: bool, max: u64) -> Result<Option<u64>, &'static str> {
    match parse_integer(digits) {
        None => Err("malformed length"),
        Some(-1) if nil_allowed => Ok(None),
        Some(n) if n < 0 => Err("negative length"),
        Some(n) if n as u64 > max => Err("length too large"),
        Some(n) => Ok(Some(n as u64)),
    }
}

fn valid_big_number(digits: &[u8]) -> bool {
    let digits = match digits.split_first() {
        Some((b'-' | b'+', rest)) => rest,
        _ => digits,
    };
    !digits.is_empty() && digits.iter().all(u8::is_ascii_digit)
}

fn valid_double(text: &[u8]) -> bool {
    // Rust's float parser takes every spelling Redis sends (`1.5`, `1e+300`,
    // `inf`, `-inf`, `nan`) and allocates nothing.
    std::str::from_utf8(text).is_ok_and(|s| s.parse::<f64>().is_ok())
}

/// The reply at the start of `buf` if it is whole and one of the replies a load mostly
/// gets (`+OK`, a nil bulk, a bulk of up to 9 999 999 bytes), exactly as the general
/// decoder would report it; `None` for anything else, including what is invalid.
#[inline(always)]
fn common_reply(buf: &[u8]) -> Option<Reply> {
    let head = buf.get(..5)?;
    if head == b"+OK\r\n" {
        return Some(Reply {
            len: 5,
            kind: ReplyKind::Simple,
            payload: (1, 2),
            elements: 0,
            nil_elements: 0,
        });
    }
    if head == b"$-1\r\n" {
        return Some(Reply {
            len: 5,
            kind: ReplyKind::Nil,
            payload: (0, 0),
            elements: 0,
            nil_elements: 0,
        });
    }
    if head[0] != b'$' {
        return None;
    }
    // `$<len>\r\n<len bytes>\r\n`, the length without a sign or leading zero.
    let mut len = 0usize;
    let mut i = 1;
    while let Some(&b) = buf.get(i) {
        if !b.is_ascii_digit() || i > 7 || (i == 2 && len == 0) {
            break;
        }
        len = len * 10 + usize::from(b - b'0');
        i += 1;
    }
    if i == 1 || buf.get(i..i + 2)? != b"\r\n" {
        return None;
    }
    let start = i + 2;
    let end = start + len + 2;
    if buf.get(end - 2..end)? != b"\r\n" {
        return None;
    }
    Some(Reply {
        len: end,
        kind: ReplyKind::Bulk,
        payload: (start, len),
        elements: 0,
        nil_elements: 0,
    })
}

/// Incremental RESP2/RESP3 reply decoder.
///
/// Contract: every call gets a buffer that starts at the first byte of the
/// current reply; after `Incomplete`, the next call gets the same bytes with
/// more appended. After `Complete` or `Invalid` the decoder is ready for the
/// next reply (whose first byte the caller puts at the start of `buf`).
///
/// Nothing is scanned twice. The decoder remembers how far it has validated
/// (`pos`, and `scan` within a header line still waiting for its CRLF) and
/// the element counts of the open aggregates. When a bulk header announces
/// `$1048576`, it records where the body must end and returns `Incomplete`
/// without touching the buffer until it is that long; the body itself is
/// never read, only the CRLF after it.
///
/// Laid out in declaration order (`repr(C)`): the nesting stack, which only aggregates
/// use, goes last, so that a connection's decoding of flat replies reads the decoder's
/// first line or two alone (see [`Connection`](crate::engine::connection::Connection)).
#[derive(Clone, Debug)]
#[repr(C)]
pub struct RespDecoder {
    /// First byte not yet validated: the start of the next header line, or the
    /// start of a body that `blob_end` is waiting for.
    pos: usize,
    /// Within the header line at `pos`: how far the search for its CRLF has got
    /// (0 when not started).
    scan: usize,
    /// Waiting for a bulk/verbatim/blob-error body: the buffer length at which it
    /// and its CRLF are complete. 0 when not waiting (a body never ends at 0).
    blob_end: usize,
    /// For a verbatim body: where its format's `:` must be. 0 when not verbatim.
    verbatim_colon: usize,
    /// Number of open aggregates in `stack`.
    depth: usize,
    /// Kind of the top-level element, once its header has been read.
    top: Option<ReplyKind>,
    payload: (usize, usize),
    elements: u32,
    nil_elements: u32,
    /// Nothing of a reply decoded yet: the state here is all at rest (cleared when a
    /// call leaves a reply partly decoded, set again by [`reset`](Self::reset)), one
    /// flag for the fast path to test rather than three positions.
    resting: bool,
    stack: [Frame; MAX_DEPTH],
    /// Bytes looked at while searching for CRLFs, to prove nothing is rescanned.
    #[cfg(test)]
    examined: usize,
}

impl Default for RespDecoder {
    fn default() -> Self {
        Self::new()
    }
}

impl RespDecoder {
    /// Bytes at the start of a decoder that decoding flat replies reads (all but the
    /// nesting stack).
    pub const HOT_BYTES: usize = std::mem::offset_of!(RespDecoder, stack);

    /// A decoder waiting for the first byte of a reply.
    pub fn new() -> Self {
        RespDecoder {
            pos: 0,
            scan: 0,
            blob_end: 0,
            resting: true,
            verbatim_colon: 0,
            stack: [Frame::default(); MAX_DEPTH],
            depth: 0,
            top: None,
            payload: (0, 0),
            elements: 0,
            nil_elements: 0,
            #[cfg(test)]
            examined: 0,
        }
    }

    /// Forgets any partly decoded reply (after a reconnect, say).
    pub fn reset(&mut self) {
        self.resting = true;
        self.pos = 0;
        self.scan = 0;
        self.blob_end = 0;
        self.verbatim_colon = 0;
        self.depth = 0;
        self.top = None;
        self.payload = (0, 0);
        self.elements = 0;
        self.nil_elements = 0;
    }

    /// The buffer length the current reply needs at least, when a bulk header
    /// has told it; else 0. Lets the caller grow its read buffer once for a
    /// large value instead of doubling it repeatedly.
    pub fn bytes_needed_hint(&self) -> usize {
        self.blob_end
    }

    /// Continues decoding the reply at the start of `buf`.
    #[inline(always)]
    pub fn decode(&mut self, buf: &[u8]) -> Decode {
        // A decoder at rest facing a whole common reply (what a load mostly gets back)
        // takes it in one look; anything else, or anything partial, goes the general way.
        if self.resting
            && let Some(reply) = common_reply(buf)
        {
            return Decode::Complete(reply);
        }
        self.decode_general(buf)
    }

    /// [`decode`](Self::decode) without the fast path for common replies.
    #[inline(never)]
    fn decode_general(&mut self, buf: &[u8]) -> Decode {
        let outcome = self.step(buf);
        if matches!(outcome, Decode::Incomplete) {
            self.resting = false;
        } else {
            self.reset();
        }
        outcome
    }

    fn step(&mut self, buf: &[u8]) -> Decode {
        if buf.len() < self.pos || buf.len() < self.scan {
            // The caller broke the contract (the buffer lost validated bytes);
            // waiting could never end, so fail instead.
            return Decode::Invalid("buffer shorter than the part already decoded");
        }
        loop {
            if self.blob_end != 0 {
                let end = self.blob_end;
                if buf.len() < end {
                    return Decode::Incomplete;
                }
                if buf[end - 2..end] != *b"\r\n" {
                    return Decode::Invalid("bulk string not terminated by CRLF");
                }
                if self.verbatim_colon != 0 && buf[self.verbatim_colon] != b':' {
                    return Decode::Invalid("verbatim string without a format prefix");
                }
                self.blob_end = 0;
                self.verbatim_colon = 0;
                self.pos = end;
                if self.element_done(false) {
                    return self.complete();
                }
                continue;
            }

            let Some(&type_byte) = buf.get(self.pos) else {
                return Decode::Incomplete;
            };
            let class = match type_byte {
                b'+' | b'-' => LineClass::Text,
                b':' | b'$' | b'=' | b'!' | b'*' | b'%' | b'~' | b'>' | b'|' => LineClass::Integer,
                b'(' => LineClass::BigNumber,
                b',' => LineClass::Double,
                b'#' => LineClass::Boolean,
                b'_' => LineClass::Empty,
                _ => return Decode::Invalid("unknown RESP type byte"),
            };
            let cr = match self.find_line_end(buf, class) {
                Ok(Some(cr)) => cr,
                Ok(None) => return Decode::Incomplete,
                Err(why) => return Decode::Invalid(why),
            };
            self.scan = 0;
            let start = self.pos + 1;
            let content = &buf[start..cr];
            let line_end = cr + 2;
            let at_top = self.depth == 0;

            let (kind, nil) = match type_byte {
                b'+' => (ReplyKind::Simple, false),
                b'-' => (ReplyKind::Error, false),
                b':' => {
                    if parse_integer(content).is_none() {
                        return Decode::Invalid("malformed integer");
                    }
                    (ReplyKind::Integer, false)
                }
                b'_' => (ReplyKind::Nil, true),
                b',' => {
                    if !valid_double(content) {
                        return Decode::Invalid("malformed double");
                    }
                    (ReplyKind::Double, false)
                }
                b'#' => {
                    if content.is_empty() {
                        return Decode::Invalid("malformed boolean");
                    }
                    (ReplyKind::Boolean, false)
                }
                b'(' => {
                    if !valid_big_number(content) {
                        return Decode::Invalid("malformed big number");
                    }
                    (ReplyKind::BigNumber, false)
                }
                b'$' | b'=' | b'!' => {
                    match parse_length(content, type_byte == b'$', MAX_BULK_LEN) {
                        Err(why) => return Decode::Invalid(why),
                        Ok(None) => (ReplyKind::Nil, true),
                        Ok(Some(len)) => {
                            // len <= 512 MB, so this cannot overflow a usize on 64-bit
                            // targets; checked anyway for 32-bit ones.
                            let len = len as usize;
                            let Some(end) =
                                line_end.checked_add(len).and_then(|e| e.checked_add(2))
                            else {
                                return Decode::Invalid("length too large");
                            };
                            let (kind, skip) = match type_byte {
                                b'$' => (ReplyKind::Bulk, 0),
                                b'!' => (ReplyKind::Error, 0),
                                _ => {
                                    if len < 4 {
                                        return Decode::Invalid(
                                            "verbatim string without a format prefix",
                                        );
                                    }
                                    self.verbatim_colon = line_end + 3;
                                    (ReplyKind::Verbatim, 4)
                                }
                            };
                            if at_top {
                                self.top = Some(kind);
                                self.payload = (line_end + skip, len - skip);
                            }
                            self.pos = line_end;
                            self.blob_end = end;
                            continue;
                        }
                    }
                }
                // '*', '%', '~', '>', '|': the only type bytes left.
                _ => {
                    match parse_length(content, type_byte == b'*', MAX_AGGREGATE_LEN) {
                        Err(why) => return Decode::Invalid(why),
                        Ok(None) => (ReplyKind::Nil, true),
                        Ok(Some(count)) => {
                            let (kind, per_entry) = match type_byte {
                                b'*' => (ReplyKind::Array, 1),
                                b'~' => (ReplyKind::Set, 1),
                                b'>' => (ReplyKind::Push, 1),
                                // An attribute is shaped like a map; it has no kind
                                // of its own because it is never the reply.
                                _ => (ReplyKind::Map, 2),
                            };
                            let attribute = type_byte == b'|';
                            self.pos = line_end;
                            if at_top && !attribute {
                                self.top = Some(kind);
                                // count <= i32::MAX, so it fits.
                                self.elements = count as u32;
                            }
                            if count == 0 {
                                if !attribute && self.element_done(false) {
                                    return self.complete();
                                }
                                continue;
                            }
                            if self.depth == MAX_DEPTH {
                                return Decode::Invalid("aggregates nested too deeply");
                            }
                            self.stack[self.depth] = Frame {
                                remaining: count * per_entry,
                                attribute,
                            };
                            self.depth += 1;
                            continue;
                        }
                    }
                }
            };

            // A scalar (or nil) element ends with its header line.
            if at_top {
                self.top = Some(kind);
                if matches!(type_byte, b'+' | b'-') {
                    self.payload = (start, content.len());
                }
            }
            self.pos = line_end;
            if self.element_done(nil) {
                return self.complete();
            }
        }
    }

    /// Looks for the CRLF ending the header line at `self.pos`, resuming where
    /// the previous call stopped. Returns the offset of the CR.
    fn find_line_end(
        &mut self,
        buf: &[u8],
        class: LineClass,
    ) -> Result<Option<usize>, &'static str> {
        let content_start = self.pos + 1;
        let max_len = class.max_len();
        let from = self.scan.max(content_start);
        for (i, &b) in buf.iter().enumerate().skip(from) {
            #[cfg(test)]
            {
                self.examined += 1;
            }
            match b {
                b'\r' => {
                    return match buf.get(i + 1) {
                        Some(b'\n') => Ok(Some(i)),
                        Some(_) => Err("CR not followed by LF"),
                        None => {
                            // Look at this CR again when its LF arrives.
                            self.scan = i;
                            Ok(None)
                        }
                    };
                }
                b'\n' => return Err("LF without CR"),
                _ if i - content_start >= max_len => return Err("header line too long"),
                _ if !class.allows(b) => return Err("unexpected byte in header line"),
                _ => {}
            }
        }
        self.scan = buf.len();
        Ok(None)
    }

    /// Records that one element (of the innermost open aggregate, or the
    /// top-level reply) is complete, closing every aggregate it completes in
    /// turn. Returns true when the whole top-level reply is complete.
    fn element_done(&mut self, nil: bool) -> bool {
        let mut nil = nil;
        loop {
            if self.depth == 0 {
                // False after a top-level attribute: the reply itself follows.
                return self.top.is_some();
            }
            let frame = &mut self.stack[self.depth - 1];
            if nil && self.depth == 1 && !frame.attribute {
                self.nil_elements = self.nil_elements.saturating_add(1);
            }
            frame.remaining -= 1;
            if frame.remaining > 0 {
                return false;
            }
            let attribute = frame.attribute;
            self.depth -= 1;
            if attribute {
                // It annotated the element that comes next, which is still to come.
                return false;
            }
            nil = false;
        }
    }

    fn complete(&self) -> Decode {
        match self.top {
            Some(kind) => Decode::Complete(Reply {
                len: self.pos,
                kind,
                payload: self.payload,
                elements: self.elements,
                nil_elements: self.nil_elements,
            }),
            None => Decode::Invalid("reply without a value"),
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::protocol::Expect as ProtocolExpect;
    use crate::protocol::resp_encode::*;
    use crate::protocol::{Key, decimal_len};
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};

    fn decode_whole(buf: &[u8]) -> Decode {
        RespDecoder::new().decode(buf)
    }

    fn reply(len: usize, kind: ReplyKind) -> Reply {
        Reply {
            len,
            kind,
            payload: (0, 0),
            elements: 0,
            nil_elements: 0,
        }
    }

    fn with_payload(r: Reply, offset: usize, len: usize) -> Reply {
        Reply {
            payload: (offset, len),
            ..r
        }
    }

    fn aggregate(len: usize, kind: ReplyKind, elements: u32, nil_elements: u32) -> Reply {
        Reply {
            elements,
            nil_elements,
            ..reply(len, kind)
        }
    }

    fn bulk(body: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        out.push(b'$');
        out.extend_from_slice(body.len().to_string().as_bytes());
        out.extend_from_slice(b"\r\n");
        out.extend_from_slice(body);
        out.extend_from_slice(b"\r\n");
        out
    }

    /// The contract cases (see `crate::protocol::contract`): every reply type.
    pub(crate) fn contract_cases() -> Vec<(Vec<u8>, ProtocolExpect, Decode)> {
        cases()
            .into_iter()
            .map(|(bytes, reply)| (bytes, ProtocolExpect::Get, Decode::Complete(reply)))
            .collect()
    }

    /// Every reply type, with what the decoder must say about it.
    fn cases() -> Vec<(Vec<u8>, Reply)> {
        use ReplyKind::*;
        let big = vec![b'v'; 1 << 20];
        let mut big_bulk = bulk(&big);
        // A body that looks like RESP must still be taken as opaque bytes.
        let tricky_body = b"\r\n$-1\r\n*3\r\n+OK\r\n";
        let tricky = bulk(tricky_body);
        let attr_top =
            b"|1\r\n+key-popularity\r\n*2\r\n$1\r\na\r\n,0.1923\r\n*2\r\n:2039123\r\n:9543892\r\n";
        let mut c: Vec<(Vec<u8>, Reply)> = vec![
            (b"+OK\r\n".to_vec(), with_payload(reply(5, Simple), 1, 2)),
            (b"+\r\n".to_vec(), with_payload(reply(3, Simple), 1, 0)),
            (
                b"-ERR bad thing\r\n".to_vec(),
                with_payload(reply(16, Error), 1, 13),
            ),
            (b":1000\r\n".to_vec(), reply(7, Integer)),
            (b":-9223372036854775808\r\n".to_vec(), reply(23, Integer)),
            (
                b"$5\r\nhello\r\n".to_vec(),
                with_payload(reply(11, Bulk), 4, 5),
            ),
            (b"$0\r\n\r\n".to_vec(), with_payload(reply(6, Bulk), 4, 0)),
            (b"$-1\r\n".to_vec(), reply(5, Nil)),
            (b"*-1\r\n".to_vec(), reply(5, Nil)),
            (b"_\r\n".to_vec(), reply(3, Nil)),
            (b"*0\r\n".to_vec(), aggregate(4, Array, 0, 0)),
            (
                b"*2\r\n$1\r\na\r\n:1\r\n".to_vec(),
                aggregate(15, Array, 2, 0),
            ),
            // MGET with two misses, RESP2 and RESP3 style.
            (
                b"*3\r\n$1\r\na\r\n$-1\r\n_\r\n".to_vec(),
                aggregate(19, Array, 3, 2),
            ),
            // Nested nils are not top-level misses.
            (
                b"*2\r\n*2\r\n$-1\r\n:1\r\n*0\r\n".to_vec(),
                aggregate(21, Array, 2, 0),
            ),
            (b",3.14\r\n".to_vec(), reply(7, Double)),
            (b",-inf\r\n".to_vec(), reply(7, Double)),
            (b",nan\r\n".to_vec(), reply(6, Double)),
            (b",1e+300\r\n".to_vec(), reply(9, Double)),
            (b"#t\r\n".to_vec(), reply(4, Boolean)),
            (b"#f\r\n".to_vec(), reply(4, Boolean)),
            (
                b"(3492890328409238509324850943850943825024385\r\n".to_vec(),
                reply(46, BigNumber),
            ),
            (b"(-12\r\n".to_vec(), reply(6, BigNumber)),
            (
                b"=15\r\ntxt:Some string\r\n".to_vec(),
                with_payload(reply(22, Verbatim), 9, 11),
            ),
            (
                b"!21\r\nSYNTAX invalid syntax\r\n".to_vec(),
                with_payload(reply(28, Error), 5, 21),
            ),
            (
                b"%2\r\n+first\r\n:1\r\n+second\r\n:2\r\n".to_vec(),
                aggregate(29, Map, 2, 0),
            ),
            (b"%1\r\n+k\r\n_\r\n".to_vec(), aggregate(11, Map, 1, 1)),
            (
                b"~3\r\n:1\r\n:2\r\n#f\r\n".to_vec(),
                aggregate(16, Set, 3, 0),
            ),
            (
                b">2\r\n+message\r\n+hi\r\n".to_vec(),
                aggregate(19, Push, 2, 0),
            ),
            // Attribute before the reply: skipped, but counted in len.
            (attr_top.to_vec(), aggregate(attr_top.len(), Array, 2, 0)),
            (
                b"|0\r\n+OK\r\n".to_vec(),
                with_payload(reply(9, Simple), 5, 2),
            ),
            (
                b"|1\r\n+a\r\n:1\r\n$3\r\nabc\r\n".to_vec(),
                with_payload(reply(21, Bulk), 16, 3),
            ),
            // Attribute inside an array: annotates the nil after it; its own nil
            // value is not a top-level element.
            (
                b"*2\r\n|1\r\n+a\r\n_\r\n_\r\n:1\r\n".to_vec(),
                aggregate(22, Array, 2, 1),
            ),
            (
                tricky.clone(),
                with_payload(reply(tricky.len(), Bulk), 5, tricky_body.len()),
            ),
        ];
        let len = big_bulk.len();
        c.push((
            big_bulk.clone(),
            with_payload(reply(len, Bulk), 10, 1 << 20),
        ));
        // A large bulk inside an array, after another element.
        let mut arr = b"*2\r\n:7\r\n".to_vec();
        arr.append(&mut big_bulk);
        let len = arr.len();
        c.push((arr, aggregate(len, Array, 2, 0)));
        // Nesting to the limit.
        let mut deep = b"*1\r\n".repeat(MAX_DEPTH);
        deep.extend_from_slice(b":1\r\n");
        let len = deep.len();
        c.push((deep, aggregate(len, Array, 1, 0)));
        c
    }

    #[test]
    fn encode_command_is_byte_exact() {
        let mut out = Vec::new();
        encode_command(&mut out, &[b"HELLO", b"3"]);
        assert_eq!(out, b"*2\r\n$5\r\nHELLO\r\n$1\r\n3\r\n");
        out.clear();
        encode_command(&mut out, &[]);
        assert_eq!(out, b"*0\r\n");
        out.clear();
        encode_command(&mut out, &[b"ECHO", b""]);
        assert_eq!(out, b"*2\r\n$4\r\nECHO\r\n$0\r\n\r\n");
        let ten: Vec<&[u8]> = vec![b"k"; 10];
        out.clear();
        encode_command(&mut out, &ten);
        assert!(out.starts_with(b"*10\r\n$1\r\nk\r\n"));
        assert_eq!(out.len(), 5 + 10 * 7);
    }

    #[test]
    fn encode_set_and_get_are_byte_exact() {
        let mut out = Vec::new();
        encode_set(&mut out, b"memtier-42", b"xxxx");
        assert_eq!(
            out,
            b"*3\r\n$3\r\nSET\r\n$10\r\nmemtier-42\r\n$4\r\nxxxx\r\n".to_vec()
        );
        // Appends: the write buffer may already hold pipelined requests.
        encode_get(&mut out, b"memtier-42");
        assert_eq!(
            out,
            b"*3\r\n$3\r\nSET\r\n$10\r\nmemtier-42\r\n$4\r\nxxxx\r\n*2\r\n$3\r\nGET\r\n$10\r\nmemtier-42\r\n"
                .to_vec()
        );
        let value = vec![b'x'; 1000];
        out.clear();
        encode_set(&mut out, b"k", &value);
        assert!(out.starts_with(b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1000\r\nxxx"));
        assert!(out.ends_with(b"xx\r\n"));
        assert_eq!(out.len(), 4 + 9 + 7 + 7 + 1000 + 2);
    }

    #[test]
    fn encoder_reserves_exactly_once() {
        let value = vec![b'x'; 12_345];
        // *3 SET $1 k $12345 <value>
        let exact = 4 + 9 + 7 + 8 + value.len() + 2;
        let mut out = Vec::with_capacity(exact);
        let ptr = out.as_ptr();
        encode_set(&mut out, b"k", &value);
        assert_eq!(out.len(), exact);
        assert_eq!(out.as_ptr(), ptr, "the computed size must be exact");
        // Warmed up: clearing and encoding again never reallocates.
        for _ in 0..10 {
            out.clear();
            encode_set(&mut out, b"k", &value);
            assert_eq!(out.as_ptr(), ptr);
        }
    }

    #[test]
    fn encoded_commands_decode_as_arrays() {
        let mut out = Vec::new();
        encode_set(&mut out, b"key", b"value");
        assert_eq!(
            decode_whole(&out),
            Decode::Complete(aggregate(out.len(), ReplyKind::Array, 3, 0))
        );
    }

    #[test]
    fn decimal_len_matches_itoa() {
        let mut b = itoa::Buffer::new();
        for n in [0usize, 9, 10, 99, 100, 999_999, 1_000_000, usize::MAX] {
            assert_eq!(decimal_len(n), b.format(n).len(), "{n}");
        }
    }

    #[test]
    fn common_replies_decode_as_the_general_path_does() {
        let mut inputs: Vec<Vec<u8>> = vec![
            b"+OK\r\n".to_vec(),
            b"$-1\r\n".to_vec(),
            b"$0\r\n\r\n".to_vec(),
            b"$3\r\nabc\r\n+OK\r\n".to_vec(),
            b"$01\r\na\r\n".to_vec(),
            b"$3\r\nabcd\r\n".to_vec(),
            b"$3\r\nab".to_vec(),
            b"$-2\r\n".to_vec(),
            b"$1\rx".to_vec(),
            b"+OKAY\r\n".to_vec(),
            b"$9999999\r\n".to_vec(),
            b"$10000000\r\n".to_vec(),
        ];
        let mut big = b"$1234567\r\n".to_vec();
        big.resize(big.len() + 1_234_567, b'x');
        big.extend_from_slice(b"\r\n");
        inputs.push(big);
        for input in &inputs {
            for cut in 0..=input.len().min(40) {
                let part = &input[..cut];
                let fast = RespDecoder::new().decode(part);
                let general = RespDecoder::new().decode_general(part);
                assert_eq!(fast, general, "{:?}", String::from_utf8_lossy(part));
            }
            let fast = RespDecoder::new().decode(input);
            let general = RespDecoder::new().decode_general(input);
            assert_eq!(fast, general, "whole {}", input.len());
        }
    }

    #[test]
    fn hand_written_commands_match_the_general_encoder() {
        for key_len in [0, 1, 9, 10, 99, 100, 1000] {
            let key = vec![b'k'; key_len];
            for value_len in [0, 5, 32, 150, 100_000] {
                let value = vec![b'v'; value_len];
                let (mut fast, mut general) = (Vec::new(), Vec::new());
                encode_set(&mut fast, &key, &value);
                encode_command(&mut general, &[b"SET", &key, &value]);
                assert_eq!(fast, general);
            }
            let (mut fast, mut general) = (Vec::new(), Vec::new());
            encode_get(&mut fast, &key);
            encode_command(&mut general, &[b"GET", &key]);
            assert_eq!(fast, general);
            // A key in two parts (a prefix and an id's digits) reads the same.
            let (mut split, mut whole) = (Vec::new(), Vec::new());
            let cut = key_len / 2;
            encode_get(&mut split, Key::new(&key[..cut], &key[cut..]));
            encode_get(&mut whole, &key);
            assert_eq!(split, whole);
            let (mut split, mut whole) = (Vec::new(), Vec::new());
            encode_set(&mut split, Key::new(&key[..cut], &key[cut..]), b"v");
            encode_set(&mut whole, &key, b"v");
            assert_eq!(split, whole);
        }
    }

    #[test]
    fn every_reply_type_decodes_whole() {
        for (bytes, expected) in cases() {
            assert_eq!(
                decode_whole(&bytes),
                Decode::Complete(expected),
                "{:?}",
                String::from_utf8_lossy(&bytes[..bytes.len().min(60)])
            );
        }
    }

    #[test]
    fn payload_text_points_at_the_value() {
        let cases: [(&[u8], &[u8]); 5] = [
            (b"+OK\r\n", b"OK"),
            (b"-ERR wrong\r\n", b"ERR wrong"),
            (b"$5\r\nhello\r\n", b"hello"),
            (b"=10\r\nmkd:# hi\r\n\r\n", b"# hi\r\n"),
            (b"!3\r\nERR\r\n", b"ERR"),
        ];
        for (bytes, text) in cases {
            match decode_whole(bytes) {
                Decode::Complete(r) => assert_eq!(r.text(bytes), text),
                other => panic!("{other:?}"),
            }
        }
        let r = reply(3, ReplyKind::Nil);
        assert_eq!(r.text(b"_\r\n"), b"");
        assert_eq!(with_payload(r, 2, 10).text(b"_\r\n"), b"");
    }

    /// A 1 MB bulk arriving in 1000 pieces is scanned once: after the header,
    /// the decoder never reads the body, only the CRLF at its known end.
    #[test]
    fn large_bulk_is_not_rescanned() {
        let body = vec![b'z'; 1 << 20];
        let mut bytes = bulk(&body);
        let total = bytes.len();
        let header = b"$1048576\r\n".len();
        let mut d = RespDecoder::new();
        assert_eq!(d.bytes_needed_hint(), 0);
        let piece = total / 1000 + 1;
        let mut end = 0;
        let mut calls = 0;
        while end < total {
            end = (end + piece).min(total);
            calls += 1;
            let outcome = d.decode(&bytes[..end]);
            if end < total {
                assert_eq!(outcome, Decode::Incomplete);
                assert_eq!(d.bytes_needed_hint(), total, "known from the header");
                assert_eq!(d.pos, header, "resume offset jumps past the header");
                // Proof the header is never looked at again: corrupt it. A decoder
                // that rescanned from the start would now fail.
                bytes[..header].fill(b'?');
            } else {
                assert_eq!(
                    outcome,
                    Decode::Complete(with_payload(reply(total, ReplyKind::Bulk), header, 1 << 20))
                );
            }
        }
        assert!(calls >= 1000);
        // Only the header was scanned byte by byte (plus the final CRLF check,
        // which is not a scan).
        assert!(d.examined <= header, "examined {} bytes", d.examined);
        assert_eq!(d.bytes_needed_hint(), 0, "reset after Complete");
    }

    /// A long header line (a big simple string) arriving a byte at a time is also
    /// scanned once: the CRLF search resumes where it stopped.
    #[test]
    fn long_line_is_not_rescanned() {
        let mut bytes = vec![b'+'];
        bytes.extend(std::iter::repeat_n(b'a', 100_000));
        bytes.extend_from_slice(b"\r\n");
        let mut d = RespDecoder::new();
        for end in 1..bytes.len() {
            assert_eq!(d.decode(&bytes[..end]), Decode::Incomplete);
        }
        assert_eq!(
            d.decode(&bytes),
            Decode::Complete(with_payload(
                reply(bytes.len(), ReplyKind::Simple),
                1,
                100_000
            ))
        );
        // Each byte once, plus the CR seen again when its LF arrived.
        assert!(d.examined <= bytes.len() + 1, "examined {}", d.examined);
    }

    #[test]
    fn many_elements_are_scanned_once() {
        let mut bytes = b"*10000\r\n".to_vec();
        for i in 0..10_000 {
            bytes.extend_from_slice(&bulk(i.to_string().as_bytes()));
        }
        let mut d = RespDecoder::new();
        for end in (1..bytes.len()).step_by(7) {
            assert_eq!(d.decode(&bytes[..end]), Decode::Incomplete);
        }
        assert!(matches!(d.decode(&bytes), Decode::Complete(r) if r.elements == 10_000));
        assert!(d.examined < bytes.len() + 10_000, "examined {}", d.examined);
    }

    #[test]
    fn bytes_needed_hint_for_nested_bulk() {
        let mut d = RespDecoder::new();
        let bytes = b"*2\r\n:1\r\n$100\r\n";
        assert_eq!(d.decode(bytes), Decode::Incomplete);
        assert_eq!(d.bytes_needed_hint(), bytes.len() + 102);
        d.reset();
        assert_eq!(d.bytes_needed_hint(), 0);
        assert_eq!(
            d.decode(b"+OK\r\n"),
            Decode::Complete(with_payload(reply(5, ReplyKind::Simple), 1, 2))
        );
    }

    fn is_invalid(bytes: &[u8]) -> bool {
        matches!(decode_whole(bytes), Decode::Invalid(_))
    }

    #[test]
    fn garbage_is_invalid() {
        let too_deep = {
            let mut b = b"*1\r\n".repeat(MAX_DEPTH + 1);
            b.extend_from_slice(b":1\r\n");
            b
        };
        let bad: Vec<&[u8]> = vec![
            b"?",
            b"hello",
            b"\r\n",
            b"$abc\r\n",
            b"$\r\n",
            b"$-2\r\n",
            b"$-0x\r\n",
            b"=-1\r\n",
            b"!-1\r\n",
            b"%-1\r\n",
            b"~-1\r\n",
            b">-1\r\n",
            b"|-1\r\n",
            b"*-5\r\n",
            b"$5\r\nhello!!",
            b"$536870913\r\n",
            b"*2147483648\r\n",
            b":99999999999999999999\r\n",
            b":12a",
            b":--1\r\n",
            b":\r\n",
            b"+OK\n",
            b"+OK\rX",
            b"-ERR\n",
            b"#x",
            b"#tt",
            b"#\r\n",
            b"_x",
            b",abc\r\n",
            b",\r\n",
            b",1.2.3\r\n",
            b"(12a",
            b"(\r\n",
            b"(-\r\n",
            b"=3\r\nabc\r\n",
            b"=5\r\nabcde\r\n",
            b"*1\r\n?",
            b"*2\r\n:1\r\n$2\r\nabc\r\n",
            b"$?\r\n",
            &too_deep,
        ];
        for b in bad {
            assert!(
                is_invalid(b),
                "{:?} should be invalid",
                String::from_utf8_lossy(b)
            );
        }
    }

    /// Bytes that can never become valid are refused at once, not after waiting
    /// for a CRLF that will never come.
    #[test]
    fn impossible_prefixes_fail_without_waiting() {
        let mut long_integer = b":".to_vec();
        long_integer.extend_from_slice(&b"1".repeat(21));
        assert!(is_invalid(&long_integer));
        assert!(is_invalid(b"$12x"));
        assert!(is_invalid(
            b",1.0000000000000000000000000000000000000000000000000000000000000000001"
        ));
        assert!(is_invalid(b"_ "));
        // Still waiting is right when more bytes could make it valid.
        assert_eq!(decode_whole(b":123"), Decode::Incomplete);
        assert_eq!(decode_whole(b"$5\r\nhel"), Decode::Incomplete);
        assert_eq!(decode_whole(b"+OK\r"), Decode::Incomplete);
    }

    #[test]
    fn decoder_resets_after_invalid() {
        let mut d = RespDecoder::new();
        assert_eq!(d.decode(b"*2\r\n:1\r\n"), Decode::Incomplete);
        assert!(matches!(d.decode(b"*2\r\n:1\r\n?"), Decode::Invalid(_)));
        assert_eq!(
            d.decode(b":1\r\n"),
            Decode::Complete(reply(4, ReplyKind::Integer))
        );
    }

    #[test]
    fn shrunken_buffer_is_invalid_not_a_hang() {
        let mut d = RespDecoder::new();
        assert_eq!(d.decode(b"*2\r\n:1\r\n"), Decode::Incomplete);
        assert!(matches!(d.decode(b"*2"), Decode::Invalid(_)));
    }

    /// What a randomly generated element should decode to.
    struct Expect {
        kind: ReplyKind,
        payload: (usize, usize),
        elements: u32,
        nil_elements: u32,
        nil: bool,
    }

    fn scalar(kind: ReplyKind, nil: bool) -> Expect {
        Expect {
            kind,
            payload: (0, 0),
            elements: 0,
            nil_elements: 0,
            nil,
        }
    }

    /// Appends a random valid element to `out`, possibly preceded by an attribute.
    fn generate(r: &mut SmallRng, depth: usize, out: &mut Vec<u8>) -> Expect {
        if depth < 5 && r.random_bool(0.05) {
            let pairs = r.random_range(0..3);
            out.extend_from_slice(format!("|{pairs}\r\n").as_bytes());
            for _ in 0..2 * pairs {
                generate(r, depth + 1, out);
            }
        }
        let choice = r.random_range(0..if depth < 5 { 18 } else { 13 });
        match choice {
            0 => {
                let start = out.len() + 1;
                out.extend_from_slice(b"+OK\r\n");
                Expect {
                    payload: (start, 2),
                    ..scalar(ReplyKind::Simple, false)
                }
            }
            1 => {
                let start = out.len() + 1;
                out.extend_from_slice(b"-ERR x\r\n");
                Expect {
                    payload: (start, 5),
                    ..scalar(ReplyKind::Error, false)
                }
            }
            2 => {
                out.extend_from_slice(format!(":{}\r\n", r.random::<i64>()).as_bytes());
                scalar(ReplyKind::Integer, false)
            }
            3 | 4 => {
                let len = r.random_range(0..300);
                let body: Vec<u8> = (0..len).map(|_| r.random()).collect();
                let header = format!("${len}\r\n");
                let start = out.len() + header.len();
                out.extend_from_slice(header.as_bytes());
                out.extend_from_slice(&body);
                out.extend_from_slice(b"\r\n");
                Expect {
                    payload: (start, len),
                    ..scalar(ReplyKind::Bulk, false)
                }
            }
            5 => {
                out.extend_from_slice(b"$-1\r\n");
                scalar(ReplyKind::Nil, true)
            }
            6 => {
                out.extend_from_slice(b"_\r\n");
                scalar(ReplyKind::Nil, true)
            }
            7 => {
                out.extend_from_slice(format!(",{}\r\n", r.random::<f64>() * 1e10).as_bytes());
                scalar(ReplyKind::Double, false)
            }
            8 => {
                out.extend_from_slice(if r.random() { b"#t\r\n" } else { b"#f\r\n" });
                scalar(ReplyKind::Boolean, false)
            }
            9 => {
                out.extend_from_slice(b"(123456789012345678901234567890\r\n");
                scalar(ReplyKind::BigNumber, false)
            }
            10 => {
                let start = out.len() + b"=10\r\ntxt:".len();
                out.extend_from_slice(b"=10\r\ntxt:abcdef\r\n");
                Expect {
                    payload: (start, 6),
                    ..scalar(ReplyKind::Verbatim, false)
                }
            }
            11 => {
                let start = out.len() + 4;
                out.extend_from_slice(b"!5\r\nERR x\r\n");
                Expect {
                    payload: (start, 5),
                    ..scalar(ReplyKind::Error, false)
                }
            }
            12 => {
                out.extend_from_slice(b"*-1\r\n");
                scalar(ReplyKind::Nil, true)
            }
            _ => {
                let (kind, byte, per) = match choice {
                    13 | 14 => (ReplyKind::Array, b'*', 1),
                    15 => (ReplyKind::Map, b'%', 2),
                    16 => (ReplyKind::Set, b'~', 1),
                    _ => (ReplyKind::Push, b'>', 1),
                };
                let count = r.random_range(0..5u32);
                out.push(byte);
                out.extend_from_slice(format!("{count}\r\n").as_bytes());
                let mut nils = 0;
                for _ in 0..count * per {
                    if generate(r, depth + 1, out).nil {
                        nils += 1;
                    }
                }
                Expect {
                    elements: count,
                    nil_elements: nils,
                    ..scalar(kind, false)
                }
            }
        }
    }

    #[test]
    fn random_valid_replies_decode_whole_split_and_pipelined() {
        let mut r = SmallRng::seed_from_u64(42);
        let mut stream = Vec::new();
        let mut expected = Vec::new();
        for _ in 0..2_000 {
            let mut bytes = Vec::new();
            let e = generate(&mut r, 0, &mut bytes);
            let want = Reply {
                len: bytes.len(),
                kind: e.kind,
                payload: e.payload,
                elements: e.elements,
                nil_elements: e.nil_elements,
            };
            assert_eq!(
                decode_whole(&bytes),
                Decode::Complete(want),
                "{:?}",
                String::from_utf8_lossy(&bytes)
            );
            // Byte by byte.
            let mut d = RespDecoder::new();
            for end in 0..bytes.len() {
                assert_eq!(d.decode(&bytes[..end]), Decode::Incomplete);
            }
            assert_eq!(d.decode(&bytes), Decode::Complete(want));
            // Two random cuts.
            let a = r.random_range(0..bytes.len());
            let b = r.random_range(a..bytes.len());
            assert_eq!(d.decode(&bytes[..a]), Decode::Incomplete);
            assert_eq!(d.decode(&bytes[..b]), Decode::Incomplete);
            assert_eq!(d.decode(&bytes), Decode::Complete(want));
            stream.extend_from_slice(&bytes);
            expected.push(want);
        }
        let mut d = RespDecoder::new();
        let mut off = 0;
        for want in expected {
            assert_eq!(d.decode(&stream[off..]), Decode::Complete(want));
            off += want.len;
        }
        assert_eq!(off, stream.len());
    }
}
