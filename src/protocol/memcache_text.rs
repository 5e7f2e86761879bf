//! memcached text protocol: encode `set`/`get` requests and find where each reply ends.
//!
//! Like the RESP decoder, this does not build values: it reports where a reply
//! ends, whether it was a hit, a miss or an error, and (for a single `get`)
//! where the value's bytes are. It decodes *against the request in flight*: a
//! `get` reply is read as `VALUE` headers, each followed by exactly the
//! announced number of data bytes, then `END`. The stream is never searched
//! for `END`, so values that contain `\r\nEND\r\n` or `VALUE` decode correctly.
//!
//! ```text
//! request                                  replies
//! set <key> 0 <exptime> <bytes>\r\n        STORED\r\n
//! <data>\r\n                               NOT_STORED\r\n | EXISTS\r\n | NOT_FOUND\r\n
//! get <key>\r\n                            VALUE <key> <flags> <bytes>[ <cas>]\r\n<data>\r\nEND\r\n
//!                                          END\r\n                                 (miss)
//! get <key 1> <key 2> ...\r\n              zero or more VALUE blocks, then END\r\n
//! any                                      ERROR\r\n
//!                                          CLIENT_ERROR <message>\r\n
//!                                          SERVER_ERROR <message>\r\n
//! ```

use crate::protocol::{Decode, Key, Reply, ReplyKind, decimal_len};

/// Longest reply line accepted, CRLF excluded. memcached keys are at most 250
/// bytes, so a `VALUE` line is far shorter; the bound only stops the decoder
/// waiting for ever on a stream that is not memcached.
pub const MAX_LINE: usize = 8 * 1024;

/// Largest value accepted (memcached's item size limit is 1 MB by default and
/// cannot be configured above 1 GiB).
pub const MAX_VALUE_LEN: usize = 1 << 30;

/// The `END\r\n` that closes every `get` reply.
const END_LINE: usize = 5;

/// Appends a `set` with flags 0 to `out`.
///
/// ```text
/// set <key> 0 <exptime> <value len>\r\n<value>\r\n
/// ```
///
/// The key must be a valid memcached key (no spaces or control bytes); the
/// workload's key generator guarantees that. The exact size is reserved once.
pub fn encode_set<'a>(out: &mut Vec<u8>, key: impl Into<Key<'a>>, value: &[u8], exptime: u32) {
    let key = key.into();
    let mut exp = itoa::Buffer::new();
    let exp = exp.format(exptime).as_bytes();
    let size = b"set ".len()
        + key.len()
        + b" 0 ".len()
        + exp.len()
        + 1
        + decimal_len(value.len())
        + 2
        + value.len()
        + 2;
    out.reserve(size);
    out.extend_from_slice(b"set ");
    key.write(out);
    out.extend_from_slice(b" 0 ");
    out.extend_from_slice(exp);
    out.push(b' ');
    out.extend_from_slice(itoa::Buffer::new().format(value.len()).as_bytes());
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(value);
    out.extend_from_slice(b"\r\n");
}

/// Appends a single-key `get` to `out`.
///
/// ```text
/// get <key>\r\n
/// ```
pub fn encode_get<'a>(out: &mut Vec<u8>, key: impl Into<Key<'a>>) {
    let key = key.into();
    out.reserve(b"get ".len() + key.len() + 2);
    out.extend_from_slice(b"get ");
    key.write(out);
    out.extend_from_slice(b"\r\n");
}

/// Appends a `version` request to `out` (the liveness probe). Decode the reply with
/// [`Expect::Version`].
///
/// ```text
/// version\r\n
/// ```
pub fn encode_version(out: &mut Vec<u8>) {
    out.extend_from_slice(b"version\r\n");
}

/// Appends one `get` naming every key of `keys` to `out`.
///
/// ```text
/// get <key 1> <key 2> ... <key n>\r\n
/// ```
///
/// `keys` is walked twice (it must be `Clone`, as slice iterators and maps over
/// them are): once to size the request so the buffer grows at most once, once
/// to write it. Decode the reply with [`Expect::MultiGet`] and the number of
/// keys; an empty `keys` still writes `get\r\n`, which memcached refuses with
/// `ERROR`.
pub fn encode_multi_get<'a>(out: &mut Vec<u8>, keys: impl Iterator<Item = &'a [u8]> + Clone) {
    let size = b"get".len() + keys.clone().map(|key| 1 + key.len()).sum::<usize>() + 2;
    out.reserve(size);
    out.extend_from_slice(b"get");
    for key in keys {
        out.push(b' ');
        out.extend_from_slice(key);
    }
    out.extend_from_slice(b"\r\n");
}

/// The request a reply answers; it decides which lines are valid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expect {
    /// A `set`: one status line.
    Store,
    /// A single-key `get`: at most one `VALUE` block, then `END`.
    Get,
    /// A `get` naming this many keys: at most that many `VALUE` blocks, then `END`.
    MultiGet(u32),
    /// A `version`: one `VERSION <text>` line.
    Version,
}

/// The lines a reply can be made of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Line {
    Stored,
    NotStored,
    Exists,
    NotFound,
    Error,
    Value,
    End,
    Version,
}

/// Whether a keyword is followed by ` <arguments>`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Args {
    Never,
    Optional,
    Required,
}

/// The keyword table: (keyword, arguments, line). `ERROR` may carry a message
/// (some memcached-compatible servers send one); the `_ERROR` lines always do
/// in memcached, but an empty message is harmless so it is not required.
const ERROR_LINES: [(&[u8], Args, Line); 3] = [
    (b"ERROR", Args::Optional, Line::Error),
    (b"CLIENT_ERROR", Args::Optional, Line::Error),
    (b"SERVER_ERROR", Args::Optional, Line::Error),
];
const STORE_LINES: [(&[u8], Args, Line); 4] = [
    (b"STORED", Args::Never, Line::Stored),
    (b"NOT_STORED", Args::Never, Line::NotStored),
    (b"EXISTS", Args::Never, Line::Exists),
    (b"NOT_FOUND", Args::Never, Line::NotFound),
];
const VERSION_LINES: [(&[u8], Args, Line); 1] = [(b"VERSION", Args::Required, Line::Version)];
const GET_LINES: [(&[u8], Args, Line); 2] = [
    (b"VALUE", Args::Required, Line::Value),
    (b"END", Args::Never, Line::End),
];

/// A partial line is checked against the keywords once this many bytes (the
/// longest keyword, a space or CR, one more) have arrived; past that the
/// keyword is known and only the CRLF is awaited.
const KEYWORD_WINDOW: usize = 14;

fn lines_for(expect: Expect) -> &'static [(&'static [u8], Args, Line)] {
    match expect {
        Expect::Store => &STORE_LINES,
        Expect::Get | Expect::MultiGet(_) => &GET_LINES,
        Expect::Version => &VERSION_LINES,
    }
}

/// Which line `content` (CRLF excluded) is, and where its arguments start.
fn classify(content: &[u8], expect: Expect) -> Option<(Line, usize)> {
    lines_for(expect)
        .iter()
        .chain(ERROR_LINES.iter())
        .find_map(|&(keyword, args, line)| {
            let rest = content.strip_prefix(keyword)?;
            match (rest.first(), args) {
                (None, Args::Never | Args::Optional) => Some((line, keyword.len())),
                (Some(b' '), Args::Optional | Args::Required) => Some((line, keyword.len() + 1)),
                _ => None,
            }
        })
}

/// Whether `partial` (the start of a line whose LF has not arrived, possibly
/// ending in its CR) can still become a valid line.
fn plausible(partial: &[u8], expect: Expect) -> bool {
    lines_for(expect)
        .iter()
        .chain(ERROR_LINES.iter())
        .any(|&(keyword, args, _)| {
            if partial.len() <= keyword.len() {
                return keyword.starts_with(partial);
            }
            match partial.strip_prefix(keyword) {
                None => false,
                Some(rest) => match args {
                    Args::Never => rest == b"\r",
                    Args::Optional => rest[0] == b' ' || rest == b"\r",
                    Args::Required => rest[0] == b' ',
                },
            }
        })
}

/// Parses a non-empty unsigned decimal no greater than `max`.
fn parse_decimal(digits: &[u8], max: u64) -> Option<u64> {
    if digits.is_empty() {
        return None;
    }
    let mut value: u64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        value = value.checked_mul(10)?.checked_add(u64::from(d - b'0'))?;
    }
    (value <= max).then_some(value)
}

/// Checks the arguments of a `VALUE` line, `<key> <flags> <bytes>[ <cas>]`,
/// and returns `<bytes>`.
fn value_len(args: &[u8]) -> Result<usize, &'static str> {
    let mut fields = args.split(|&b| b == b' ');
    let key = fields.next().unwrap_or_default();
    if key.is_empty() || key.iter().any(|&b| b <= b' ' || b == 0x7f) {
        return Err("malformed key in VALUE line");
    }
    let flags = fields.next().unwrap_or_default();
    if parse_decimal(flags, u64::from(u32::MAX)).is_none() {
        return Err("malformed flags in VALUE line");
    }
    let bytes = fields.next().unwrap_or_default();
    let len = match parse_decimal(bytes, u64::MAX) {
        None => return Err("malformed byte count in VALUE line"),
        Some(len) if len > MAX_VALUE_LEN as u64 => return Err("value larger than 1 GiB"),
        Some(len) => len as usize,
    };
    if let Some(cas) = fields.next()
        && parse_decimal(cas, u64::MAX).is_none()
    {
        return Err("malformed cas in VALUE line");
    }
    if fields.next().is_some() {
        return Err("too many fields in VALUE line");
    }
    Ok(len)
}

/// Incremental decoder for memcached text replies.
///
/// Contract (the same as [`RespDecoder`](crate::protocol::resp::RespDecoder)):
/// every call gets a buffer that starts at the first byte of the current
/// reply; after `Incomplete`, the next call gets the same bytes with more
/// appended, and the same [`Expect`]. After `Complete` or `Invalid` the decoder
/// is ready for the next reply.
///
/// Nothing is scanned twice. The decoder remembers the start of the line it is
/// on (`pos`) and how far its search for the line's LF has got (`scan`). Once
/// a `VALUE` header announces `<bytes>`, it knows where the data and its CRLF
/// end (`data_end`) and returns `Incomplete` without looking at the buffer
/// until it is that long; the data bytes themselves are never read.
#[derive(Clone, Debug)]
pub struct TextDecoder {
    /// Start of the line being decoded; everything before it is validated.
    pos: usize,
    /// Where the search for the current line's LF resumes (`>= pos`).
    scan: usize,
    /// Waiting for value data: the buffer length at which it and its CRLF are
    /// in. 0 when not waiting (data never ends at 0).
    data_end: usize,
    /// `VALUE` blocks seen so far in this reply.
    values: u32,
    /// `(offset, length)` of the first value's data.
    payload: (usize, usize),
    /// Nothing of a reply decoded yet: the state above is all at rest (cleared when a
    /// call leaves a reply partly decoded, set again by [`reset`](Self::reset)), one
    /// flag for the fast path to test rather than three positions.
    resting: bool,
    /// Bytes looked at (LF search and keyword checks), to prove nothing is rescanned.
    #[cfg(test)]
    examined: usize,
}

impl Default for TextDecoder {
    fn default() -> Self {
        Self::new()
    }
}

impl TextDecoder {
    /// A decoder waiting for the first byte of a reply.
    pub fn new() -> Self {
        TextDecoder {
            pos: 0,
            scan: 0,
            data_end: 0,
            resting: true,
            values: 0,
            payload: (0, 0),
            #[cfg(test)]
            examined: 0,
        }
    }

    /// Forgets any partly decoded reply (after a reconnect, say).
    pub fn reset(&mut self) {
        self.resting = true;
        self.pos = 0;
        self.scan = 0;
        self.data_end = 0;
        self.values = 0;
        self.payload = (0, 0);
    }

    /// The buffer length the current reply needs at least, once a `VALUE`
    /// header has told it (the data, its CRLF and the closing `END\r\n`);
    /// else 0. Lets the caller grow its read buffer once for a large value.
    pub fn bytes_needed_hint(&self) -> usize {
        if self.data_end == 0 {
            0
        } else {
            self.data_end.saturating_add(END_LINE)
        }
    }

    /// Continues decoding the reply to `expect` at the start of `buf`.
    #[inline(always)]
    pub fn decode(&mut self, buf: &[u8], expect: Expect) -> Decode {
        // A decoder at rest facing a whole `STORED` to a set or `END` to a get (a
        // miss), the replies a load mostly gets, takes it in one look.
        if self.resting {
            match expect {
                Expect::Store if buf.starts_with(b"STORED\r\n") => {
                    return complete(8, ReplyKind::Simple, (0, 6), 0, 0);
                }
                Expect::Get if buf.starts_with(b"END\r\n") => {
                    return complete(5, ReplyKind::Nil, (0, 0), 0, 0);
                }
                _ => {}
            }
        }
        self.decode_general(buf, expect)
    }

    /// [`decode`](Self::decode) without the look for common replies.
    #[inline(never)]
    fn decode_general(&mut self, buf: &[u8], expect: Expect) -> Decode {
        let outcome = self.step(buf, expect);
        if matches!(outcome, Decode::Incomplete) {
            self.resting = false;
        } else {
            self.reset();
        }
        outcome
    }

    fn step(&mut self, buf: &[u8], expect: Expect) -> Decode {
        if buf.len() < self.scan {
            // The caller broke the contract (the buffer lost validated bytes);
            // waiting could never end, so fail instead.
            return Decode::Invalid("buffer shorter than the part already decoded");
        }
        loop {
            if self.data_end != 0 {
                let end = self.data_end;
                if buf.len() < end {
                    return Decode::Incomplete;
                }
                if buf[end - 2..end] != *b"\r\n" {
                    return Decode::Invalid("value data not followed by CRLF");
                }
                self.data_end = 0;
                self.pos = end;
                self.scan = end;
            }

            let cr = match self.find_line_end(buf, expect) {
                Ok(Some(cr)) => cr,
                Ok(None) => return Decode::Incomplete,
                Err(why) => return Decode::Invalid(why),
            };
            let start = self.pos;
            let line_end = cr + 2;
            let content = &buf[start..cr];
            let Some((line, args_at)) = classify(content, expect) else {
                return Decode::Invalid(match expect {
                    Expect::Store => "unexpected reply line to a set",
                    Expect::Get | Expect::MultiGet(_) => "unexpected reply line to a get",
                    Expect::Version => "unexpected reply line to a version",
                });
            };
            let whole_line = (start, cr - start);
            return match line {
                // Not-stored answers are the server's answer, not a broken
                // stream; the caller tells them apart by the payload.
                Line::Stored | Line::NotStored | Line::Exists | Line::NotFound => {
                    complete(line_end, ReplyKind::Simple, whole_line, 0, 0)
                }
                Line::Error => complete(line_end, ReplyKind::Error, whole_line, 0, 0),
                Line::Version => complete(line_end, ReplyKind::Simple, whole_line, 0, 0),
                Line::End => match expect {
                    Expect::MultiGet(n) => complete(
                        line_end,
                        ReplyKind::Array,
                        (0, 0),
                        self.values,
                        n - self.values,
                    ),
                    // `Store` and `Version` never get here (END is not one of
                    // their lines); they share the arm only to keep the match
                    // exhaustive.
                    Expect::Store | Expect::Get | Expect::Version if self.values == 0 => {
                        complete(line_end, ReplyKind::Nil, (0, 0), 0, 0)
                    }
                    Expect::Store | Expect::Get | Expect::Version => {
                        complete(line_end, ReplyKind::Bulk, self.payload, 0, 0)
                    }
                },
                Line::Value => {
                    let limit = match expect {
                        Expect::MultiGet(n) => n,
                        Expect::Store | Expect::Get | Expect::Version => 1,
                    };
                    if self.values >= limit {
                        return Decode::Invalid("more VALUE blocks than keys requested");
                    }
                    let len = match value_len(&content[args_at..]) {
                        Ok(len) => len,
                        Err(why) => return Decode::Invalid(why),
                    };
                    let Some(data_end) = line_end.checked_add(len).and_then(|e| e.checked_add(2))
                    else {
                        return Decode::Invalid("value larger than the address space");
                    };
                    if self.values == 0 {
                        self.payload = (line_end, len);
                    }
                    self.values += 1;
                    self.data_end = data_end;
                    continue;
                }
            };
        }
    }

    /// Finds the CR of the CRLF ending the line at `pos`, resuming the search
    /// where the last call stopped. `Ok(None)`: not arrived yet.
    fn find_line_end(&mut self, buf: &[u8], expect: Expect) -> Result<Option<usize>, &'static str> {
        let start = self.pos;
        let from = self.scan;
        match buf[from..].iter().position(|&b| b == b'\n') {
            Some(i) => {
                let lf = from + i;
                self.count_examined(i + 1);
                if lf == start || buf[lf - 1] != b'\r' {
                    return Err("reply line not terminated by CRLF");
                }
                if lf - 1 - start > MAX_LINE {
                    return Err("reply line too long");
                }
                self.scan = lf + 1;
                Ok(Some(lf - 1))
            }
            None => {
                self.count_examined(buf.len() - from);
                self.scan = buf.len();
                // One byte more than MAX_LINE may be the line's CR.
                if buf.len() - start > MAX_LINE + 1 {
                    return Err("reply line too long");
                }
                // Refuse garbage as soon as it arrives instead of waiting up
                // to MAX_LINE bytes for a CRLF; only the first few bytes of a
                // line need checking, and only once.
                if from < start + KEYWORD_WINDOW {
                    let partial = &buf[start..buf.len().min(start + KEYWORD_WINDOW)];
                    self.count_examined(partial.len());
                    if !plausible(partial, expect) {
                        return Err(match expect {
                            Expect::Store => "unexpected reply line to a set",
                            Expect::Get | Expect::MultiGet(_) => "unexpected reply line to a get",
                            Expect::Version => "unexpected reply line to a version",
                        });
                    }
                }
                Ok(None)
            }
        }
    }

    #[cfg(test)]
    fn count_examined(&mut self, n: usize) {
        self.examined += n;
    }

    #[cfg(not(test))]
    fn count_examined(&mut self, _n: usize) {}
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
    use crate::protocol::Expect as ProtocolExpect;

    const STORE: Expect = Expect::Store;
    const GET: Expect = Expect::Get;

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

    fn simple(line: &[u8]) -> Decode {
        reply(line.len(), ReplyKind::Simple, (0, line.len() - 2), 0, 0)
    }

    fn error(line: &[u8]) -> Decode {
        reply(line.len(), ReplyKind::Error, (0, line.len() - 2), 0, 0)
    }

    fn decode_whole(buf: &[u8], expect: Expect) -> Decode {
        TextDecoder::new().decode(buf, expect)
    }

    /// A value whose bytes look like protocol lines, to catch any decoder that
    /// searches the stream for `END` or `VALUE` instead of counting bytes.
    const TRICKY: &[u8] = b"\r\nEND\r\nVALUE x 0 1\r\nEND\r\n";

    /// The contract cases (see `crate::protocol::contract`): every well-formed reply.
    pub(crate) fn contract_cases() -> Vec<(Vec<u8>, ProtocolExpect, Decode)> {
        valid_replies()
            .into_iter()
            .map(|(bytes, expect, want)| {
                let expect = match expect {
                    Expect::Store => ProtocolExpect::Store,
                    Expect::Get => ProtocolExpect::Get,
                    Expect::MultiGet(n) => ProtocolExpect::MultiGet(n),
                    Expect::Version => ProtocolExpect::Probe,
                };
                (bytes, expect, want)
            })
            .collect()
    }

    /// Every well-formed reply exercised here, with its request and outcome.
    fn valid_replies() -> Vec<(Vec<u8>, Expect, Decode)> {
        let mut cases: Vec<(Vec<u8>, Expect, Decode)> = Vec::new();
        for line in [
            &b"STORED\r\n"[..],
            b"NOT_STORED\r\n",
            b"EXISTS\r\n",
            b"NOT_FOUND\r\n",
        ] {
            cases.push((line.to_vec(), STORE, simple(line)));
        }
        for line in [
            &b"ERROR\r\n"[..],
            b"ERROR unknown command\r\n",
            b"CLIENT_ERROR bad data chunk\r\n",
            b"SERVER_ERROR out of memory storing object\r\n",
            b"SERVER_ERROR\r\n",
        ] {
            cases.push((line.to_vec(), STORE, error(line)));
            cases.push((line.to_vec(), GET, error(line)));
            cases.push((line.to_vec(), Expect::MultiGet(3), error(line)));
        }
        let version = b"VERSION 1.6.21\r\n";
        cases.push((
            version.to_vec(),
            Expect::Version,
            reply(
                version.len(),
                ReplyKind::Simple,
                (0, version.len() - 2),
                0,
                0,
            ),
        ));
        cases.push((b"ERROR\r\n".to_vec(), Expect::Version, error(b"ERROR\r\n")));
        cases.push((
            b"END\r\n".to_vec(),
            GET,
            reply(5, ReplyKind::Nil, (0, 0), 0, 0),
        ));
        // "VALUE foo 0 3\r\n" is 15 bytes; the data starts right after it.
        cases.push((
            b"VALUE foo 0 3\r\nbar\r\nEND\r\n".to_vec(),
            GET,
            reply(25, ReplyKind::Bulk, (15, 3), 0, 0),
        ));
        cases.push((
            b"VALUE foo 4294967295 3 18446744073709551615\r\nbar\r\nEND\r\n".to_vec(),
            GET,
            reply(55, ReplyKind::Bulk, (45, 3), 0, 0),
        ));
        cases.push((
            b"VALUE k 0 0\r\n\r\nEND\r\n".to_vec(),
            GET,
            reply(20, ReplyKind::Bulk, (13, 0), 0, 0),
        ));
        let mut tricky = b"VALUE memtier-1 0 25\r\n".to_vec();
        tricky.extend_from_slice(TRICKY);
        tricky.extend_from_slice(b"\r\nEND\r\n");
        cases.push((
            tricky.clone(),
            GET,
            reply(54, ReplyKind::Bulk, (22, 25), 0, 0),
        ));
        cases.push((
            b"END\r\n".to_vec(),
            Expect::MultiGet(3),
            reply(5, ReplyKind::Array, (0, 0), 0, 3),
        ));
        cases.push((
            b"END\r\n".to_vec(),
            Expect::MultiGet(0),
            reply(5, ReplyKind::Array, (0, 0), 0, 0),
        ));
        let two = b"VALUE a 0 1\r\nx\r\nVALUE ccc 7 3 99\r\nyyy\r\nEND\r\n";
        cases.push((
            two.to_vec(),
            Expect::MultiGet(3),
            reply(two.len(), ReplyKind::Array, (0, 0), 2, 1),
        ));
        cases.push((
            two.to_vec(),
            Expect::MultiGet(2),
            reply(two.len(), ReplyKind::Array, (0, 0), 2, 0),
        ));
        let mut tricky_multi = tricky[..tricky.len() - 5].to_vec();
        tricky_multi.extend_from_slice(b"VALUE b 0 5\r\nVALUE\r\nEND\r\n");
        cases.push((
            tricky_multi.clone(),
            Expect::MultiGet(2),
            reply(tricky_multi.len(), ReplyKind::Array, (0, 0), 2, 0),
        ));
        // memcached can fail part-way through a multi-get (a key too long):
        // the reply ends at the error line, whose span is the payload.
        let partial = b"VALUE a 0 1\r\nx\r\nCLIENT_ERROR bad command line format\r\n";
        cases.push((
            partial.to_vec(),
            Expect::MultiGet(2),
            reply(partial.len(), ReplyKind::Error, (16, 36), 0, 0),
        ));
        cases
    }

    #[test]
    fn encodes_set_byte_exact() {
        let mut out = Vec::new();
        encode_set(&mut out, b"foo", b"bar", 0);
        assert_eq!(out, b"set foo 0 0 3\r\nbar\r\n");

        out.clear();
        encode_set(&mut out, b"memtier-42", &[b'x'; 1234], 3600);
        let mut want = b"set memtier-42 0 3600 1234\r\n".to_vec();
        want.extend_from_slice(&[b'x'; 1234]);
        want.extend_from_slice(b"\r\n");
        assert_eq!(out, want);

        out.clear();
        encode_set(&mut out, b"k", b"", u32::MAX);
        assert_eq!(out, b"set k 0 4294967295 0\r\n\r\n");
    }

    #[test]
    fn encodes_get_and_multi_get_byte_exact() {
        let mut out = b"previous ".to_vec();
        encode_get(&mut out, b"foo");
        assert_eq!(out, b"previous get foo\r\n", "appends, never clears");

        let mut out = Vec::new();
        let keys: [&[u8]; 3] = [b"a", b"bb", b"memtier-123"];
        encode_multi_get(&mut out, keys.iter().copied());
        assert_eq!(out, b"get a bb memtier-123\r\n");

        out.clear();
        encode_multi_get(&mut out, [&b"only"[..]].into_iter());
        assert_eq!(out, b"get only\r\n");
    }

    #[test]
    fn encoders_reserve_the_exact_size_once() {
        // From an empty Vec, one reserve of the computed size allocates exactly
        // that much; a wrong size would leave capacity != len (too much
        // reserved, or a second, doubling growth).
        let mut out = Vec::new();
        encode_set(&mut out, b"memtier-1", &[7; 100], 10);
        assert_eq!(out.capacity(), out.len());
        let mut out = Vec::new();
        encode_get(&mut out, b"memtier-1234567");
        assert_eq!(out.capacity(), out.len());
        let mut out = Vec::new();
        let keys: Vec<Vec<u8>> = (0..50)
            .map(|i| format!("memtier-{i}").into_bytes())
            .collect();
        encode_multi_get(&mut out, keys.iter().map(Vec::as_slice));
        assert_eq!(out.capacity(), out.len());
    }

    #[test]
    fn decodes_every_reply_kind() {
        for (buf, expect, want) in valid_replies() {
            assert_eq!(
                decode_whole(&buf, expect),
                want,
                "{:?} {expect:?}",
                String::from_utf8_lossy(&buf)
            );
        }
    }

    #[test]
    fn payloads_point_at_the_value_and_the_line() {
        let buf = b"VALUE foo 0 3\r\nbar\r\nEND\r\n";
        let Decode::Complete(r) = decode_whole(buf, GET) else {
            panic!("not complete");
        };
        assert_eq!(r.text(buf), b"bar");

        let mut buf = b"VALUE memtier-1 0 25\r\n".to_vec();
        buf.extend_from_slice(TRICKY);
        buf.extend_from_slice(b"\r\nEND\r\n");
        let Decode::Complete(r) = decode_whole(&buf, GET) else {
            panic!("not complete");
        };
        assert_eq!(r.text(&buf), TRICKY);
        assert_eq!(r.len, buf.len());

        let buf = b"SERVER_ERROR object too large for cache\r\n";
        let Decode::Complete(r) = decode_whole(buf, STORE) else {
            panic!("not complete");
        };
        assert_eq!(r.text(buf), b"SERVER_ERROR object too large for cache");
        let Decode::Complete(r) = decode_whole(b"NOT_STORED\r\n", STORE) else {
            panic!("not complete");
        };
        assert_eq!((r.kind, r.payload), (ReplyKind::Simple, (0, 10)));
    }

    #[test]
    fn refuses_malformed_replies() {
        let cases: &[(&[u8], Expect)] = &[
            (b"HELLO\r\n", STORE),
            (b"STORED\r\n", GET),
            (b"END\r\n", STORE),
            (b"VALUE foo 0 3\r\nbar\r\nEND\r\n", STORE),
            (b"STORED \r\n", STORE),
            (b"STOREDX\r\n", STORE),
            (b"STORED\n", STORE),
            (b"\n", STORE),
            (b"\r\n", GET),
            (b"END \r\n", GET),
            (b"VALUE\r\n", GET),
            (b"VALUE \r\n", GET),
            (b"VALUE foo\r\n", GET),
            (b"VALUE foo 0\r\n", GET),
            (b"VALUE foo 0 abc\r\n", GET),
            (b"VALUE foo 0 -3\r\n", GET),
            (b"VALUE foo 0 \r\n", GET),
            (b"VALUE  foo 0 3\r\n", GET),
            (b"VALUE foo\x01 0 3\r\n", GET),
            (b"VALUE foo 4294967296 3\r\n", GET),
            (b"VALUE foo x 3\r\n", GET),
            (b"VALUE foo 0 3 x\r\n", GET),
            (b"VALUE foo 0 3 18446744073709551616\r\n", GET),
            (b"VALUE foo 0 3 1 2\r\n", GET),
            (b"VALUE foo 0 3 \r\n", GET),
            (b"VALUE foo 0 99999999999999999999999\r\n", GET),
            (b"VALUE foo 0 1073741825\r\n", GET),
            // Data not followed by CRLF: the count and the bytes disagree.
            (b"VALUE foo 0 3\r\nbarX\r\nEND\r\n", GET),
            (b"VALUE foo 0 4\r\nbar\r\nEND\r\n", GET),
            // A single get answered twice.
            (b"VALUE a 0 1\r\nx\r\nVALUE a 0 1\r\nx\r\nEND\r\n", GET),
            (
                b"VALUE a 0 1\r\nx\r\nVALUE b 0 1\r\nx\r\nEND\r\n",
                Expect::MultiGet(1),
            ),
            (b"VALUE a 0 1\r\nx\r\nEND\r\n", Expect::MultiGet(0)),
        ];
        for &(buf, expect) in cases {
            assert!(
                matches!(decode_whole(buf, expect), Decode::Invalid(_)),
                "{:?} {expect:?} gave {:?}",
                String::from_utf8_lossy(buf),
                decode_whole(buf, expect)
            );
        }
    }

    #[test]
    fn value_data_must_end_exactly_where_its_count_says() {
        // The bytes after the counted data are "XY", then a well-formed END:
        // only the CRLF check after the data can catch the disagreement.
        for buf in [
            &b"VALUE foo 0 3\r\nbarXYEND\r\n"[..],
            b"VALUE foo 0 3\r\nbar\n\nEND\r\n",
            b"VALUE foo 0 3\r\nbar\r\r\nEND\r\n",
        ] {
            assert_eq!(
                decode_whole(buf, GET),
                Decode::Invalid("value data not followed by CRLF")
            );
        }
    }

    #[test]
    fn value_size_limit_is_1_gib() {
        // At the limit the header is accepted and the data awaited.
        let mut decoder = TextDecoder::new();
        let header = b"VALUE big 0 1073741824\r\n";
        assert_eq!(decoder.decode(header, GET), Decode::Incomplete);
        assert_eq!(
            decoder.bytes_needed_hint(),
            header.len() + MAX_VALUE_LEN + 2 + 5
        );
        assert_eq!(
            decode_whole(b"VALUE big 0 1073741825\r\n", GET),
            Decode::Invalid("value larger than 1 GiB")
        );
    }

    #[test]
    fn garbage_is_refused_before_its_line_ends() {
        // Waiting for a CRLF that a non-memcached stream may never send would
        // hang the connection; the first bytes already tell.
        for (partial, expect) in [
            (&b"H"[..], STORE),
            (b"V", STORE),
            (b"T", GET),
            (b"SX", GET),
            (b"+OK", STORE),
            (b"STORED!", STORE),
            (b"STORED\rx", STORE),
            (b"VALUEX", GET),
            (b"VALUE\r", GET),
            (b"ENDS", GET),
            (b"\x81\x00\x00\x00", GET),
        ] {
            assert!(
                matches!(decode_whole(partial, expect), Decode::Invalid(_)),
                "{:?} {expect:?}",
                String::from_utf8_lossy(partial)
            );
        }
        // Prefixes of real lines are not refused.
        for (partial, expect) in [
            (&b"S"[..], STORE),
            (b"STORED\r", STORE),
            (b"NOT_", STORE),
            (b"CLIENT_ERROR some text", STORE),
            (b"ERROR", GET),
            (b"VALUE k", GET),
            (b"END\r", GET),
        ] {
            assert_eq!(decode_whole(partial, expect), Decode::Incomplete);
        }
    }

    #[test]
    fn line_length_limit_is_enforced_without_a_crlf() {
        let mut line = b"SERVER_ERROR ".to_vec();
        line.resize(MAX_LINE, b'x');
        // Exactly MAX_LINE bytes of content: still valid.
        let mut decoder = TextDecoder::new();
        assert_eq!(decoder.decode(&line, STORE), Decode::Incomplete);
        let mut whole = line.clone();
        whole.extend_from_slice(b"\r\n");
        assert_eq!(decoder.decode(&whole, STORE), error(&whole));
        // One more byte with no CRLF in sight: refused, not awaited.
        line.push(b'x');
        line.push(b'x');
        assert_eq!(
            decode_whole(&line, STORE),
            Decode::Invalid("reply line too long")
        );
        line.truncate(MAX_LINE + 1);
        line.extend_from_slice(b"\r\n");
        assert_eq!(
            decode_whole(&line, STORE),
            Decode::Invalid("reply line too long")
        );
    }

    #[test]
    fn a_1_mb_value_in_1000_pieces_is_not_rescanned() {
        const SIZE: usize = 1 << 20;
        let header = b"VALUE memtier-7 0 1048576\r\n";
        let mut buf = header.to_vec();
        // Fill the value with what a rescanning decoder would trip on.
        while buf.len() < header.len() + SIZE {
            buf.extend_from_slice(b"\r\nEND\r\nVALUE x 0 1\r\n");
        }
        buf.truncate(header.len() + SIZE);
        buf.extend_from_slice(b"\r\nEND\r\n");
        let total = buf.len();

        let mut decoder = TextDecoder::new();
        let mut calls = 0;
        for piece in 1..1000 {
            let end = total * piece / 1000;
            assert_eq!(decoder.decode(&buf[..end], GET), Decode::Incomplete);
            calls += 1;
            if end >= header.len() {
                // The header told the decoder the whole length: the caller can
                // size its buffer once.
                assert_eq!(decoder.bytes_needed_hint(), total);
                assert_eq!(decoder.data_end, header.len() + SIZE + 2);
            }
        }
        let examined = decoder.examined;
        assert_eq!(
            decoder.decode(&buf, GET),
            reply(total, ReplyKind::Bulk, (header.len(), SIZE), 0, 0)
        );
        assert_eq!(calls, 999);
        // Only the header line (plus its one-off keyword check) was looked at
        // across 999 calls; the data was never read.
        assert!(
            examined <= header.len() + KEYWORD_WINDOW,
            "examined {examined} bytes"
        );
        assert_eq!(decoder.bytes_needed_hint(), 0);
    }

    #[test]
    fn a_long_line_arriving_byte_by_byte_is_scanned_once() {
        let mut line = b"SERVER_ERROR ".to_vec();
        line.resize(4000, b'e');
        line.extend_from_slice(b"\r\n");
        let mut decoder = TextDecoder::new();
        for end in 1..line.len() {
            assert_eq!(decoder.decode(&line[..end], STORE), Decode::Incomplete);
        }
        // Linear in the line, not quadratic.
        assert!(decoder.examined <= line.len() + KEYWORD_WINDOW * KEYWORD_WINDOW);
        assert_eq!(decoder.decode(&line, STORE), error(&line));
    }

    #[test]
    fn hint_is_zero_until_a_value_header_is_read() {
        let mut decoder = TextDecoder::new();
        assert_eq!(decoder.bytes_needed_hint(), 0);
        assert_eq!(decoder.decode(b"VALUE a 0 10", GET), Decode::Incomplete);
        assert_eq!(decoder.bytes_needed_hint(), 0);
        assert_eq!(decoder.decode(b"VALUE a 0 10\r\n", GET), Decode::Incomplete);
        assert_eq!(decoder.bytes_needed_hint(), 14 + 10 + 2 + 5);
    }

    #[test]
    fn common_replies_decode_as_the_general_path_does() {
        let inputs: [&[u8]; 7] = [
            b"STORED\r\n",
            b"STORED\r\nEND\r\n",
            b"END\r\n",
            b"END\r\nSTORED\r\n",
            b"STORED\r",
            b"END\n",
            b"VALUE k 0 1\r\nx\r\nEND\r\n",
        ];
        for input in inputs {
            for expect in [STORE, GET, Expect::MultiGet(2)] {
                for cut in 0..=input.len() {
                    let part = &input[..cut];
                    assert_eq!(
                        TextDecoder::new().decode(part, expect),
                        TextDecoder::new().decode_general(part, expect),
                        "{:?} {expect:?}",
                        String::from_utf8_lossy(part)
                    );
                }
            }
        }
    }

    #[test]
    fn reset_forgets_a_partial_reply() {
        let mut decoder = TextDecoder::new();
        assert_eq!(
            decoder.decode(b"VALUE a 0 10\r\nxx", GET),
            Decode::Incomplete
        );
        decoder.reset();
        assert_eq!(decoder.bytes_needed_hint(), 0);
        assert_eq!(decoder.decode(b"STORED\r\n", STORE), simple(b"STORED\r\n"));
    }

    #[test]
    fn a_buffer_that_shrinks_is_refused() {
        let mut decoder = TextDecoder::new();
        assert_eq!(
            decoder.decode(b"VALUE a 0 10\r\nxx", GET),
            Decode::Incomplete
        );
        assert!(matches!(decoder.decode(b"VAL", GET), Decode::Invalid(_)));
    }
}
