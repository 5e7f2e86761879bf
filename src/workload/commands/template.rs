//! One command as a RESP template: literal arguments encoded once, placeholders
//! (`__key__`, `__data__`, a SCAN cursor, `__monitor_line@__`) filled per request with no
//! allocation and one reservation of the write buffer.

use crate::protocol::resp_encode::{encode_array_header, encode_bulk};
use crate::protocol::{KeyBatch, decimal_len};
use crate::workload::commands::monitor::MonitorInput;
use crate::workload::commands::split::split_args;
use crate::workload::commands::{DATA_PLACEHOLDER, KEY_PLACEHOLDER};

/// One part of an argument that holds a placeholder.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Piece {
    /// `bytes[start..end]` of the template.
    Lit {
        start: usize,
        end: usize,
    },
    Key,
    Data,
    Cursor,
}

/// A run of the encoded command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Segment {
    /// `bytes[start..end]`, already RESP: the `*N` header and whole literal arguments.
    Raw { start: usize, end: usize },
    /// One bulk string made of `pieces[first..last]`, whose literal parts add up to `lit_len`.
    Bulk {
        first: usize,
        last: usize,
        lit_len: usize,
    },
}

#[derive(Clone, Debug)]
enum Body {
    Args {
        bytes: Box<[u8]>,
        segments: Box<[Segment]>,
        pieces: Box<[Piece]>,
    },
    /// `__monitor_line@__`: the bytes come from [`MonitorInput`] per request.
    MonitorRandom,
}

/// One `--command`, ready to encode: literal arguments pre-encoded, placeholders
/// (`__key__`, `__data__`, a SCAN cursor, `__monitor_line@__`) filled per request.
#[derive(Clone, Debug)]
pub struct CommandTemplate {
    body: Body,
    first: Box<[u8]>,
    argc: usize,
    keys: usize,
    datas: usize,
}

/// How [`CommandTemplate::build`] treats the arguments.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fill {
    /// `__key__` and `__data__` are placeholders (a `--command`).
    Placeholders,
    /// Every byte is literal (a captured MONITOR command, replayed verbatim).
    Verbatim,
    /// Placeholders, and argument `n` is the SCAN cursor.
    CursorAt(usize),
}

/// Splits one argument at its `__key__` / `__data__` occurrences.
fn split_placeholders(arg: &[u8]) -> Vec<(Option<Piece>, &[u8])> {
    let key = KEY_PLACEHOLDER.as_bytes();
    let data = DATA_PLACEHOLDER.as_bytes();
    let mut parts = Vec::new();
    let mut lit_start = 0;
    let mut i = 0;
    while i < arg.len() {
        let rest = &arg[i..];
        let found = if rest.starts_with(key) {
            Some((Piece::Key, key.len()))
        } else if rest.starts_with(data) {
            Some((Piece::Data, data.len()))
        } else {
            None
        };
        match found {
            Some((piece, len)) => {
                if lit_start < i {
                    parts.push((None, &arg[lit_start..i]));
                }
                parts.push((Some(piece), &arg[i..i + len]));
                i += len;
                lit_start = i;
            }
            None => i += 1,
        }
    }
    if lit_start < arg.len() {
        parts.push((None, &arg[lit_start..]));
    }
    parts
}

impl CommandTemplate {
    /// Builds a template from split arguments (never empty).
    pub(crate) fn build(args: &[Vec<u8>], fill: Fill) -> CommandTemplate {
        let mut bytes = Vec::new();
        let mut segments = Vec::new();
        let mut pieces = Vec::new();
        let (mut keys, mut datas) = (0, 0);
        encode_array_header(&mut bytes, args.len());
        let mut raw_start = 0;
        for (i, arg) in args.iter().enumerate() {
            let parts: Vec<(Option<Piece>, &[u8])> = match fill {
                Fill::CursorAt(at) if at == i => vec![(Some(Piece::Cursor), &[][..])],
                Fill::Placeholders | Fill::CursorAt(_) => split_placeholders(arg),
                Fill::Verbatim => vec![(None, &arg[..])],
            };
            if parts.iter().all(|(p, _)| p.is_none()) {
                encode_bulk(&mut bytes, arg);
                continue;
            }
            if raw_start < bytes.len() {
                segments.push(Segment::Raw {
                    start: raw_start,
                    end: bytes.len(),
                });
            }
            let first = pieces.len();
            let mut lit_len = 0;
            for (piece, text) in parts {
                match piece {
                    Some(p) => {
                        keys += usize::from(p == Piece::Key);
                        datas += usize::from(p == Piece::Data);
                        pieces.push(p);
                    }
                    None => {
                        let start = bytes.len();
                        bytes.extend_from_slice(text);
                        lit_len += text.len();
                        pieces.push(Piece::Lit {
                            start,
                            end: bytes.len(),
                        });
                    }
                }
            }
            segments.push(Segment::Bulk {
                first,
                last: pieces.len(),
                lit_len,
            });
            raw_start = bytes.len();
        }
        if raw_start < bytes.len() {
            segments.push(Segment::Raw {
                start: raw_start,
                end: bytes.len(),
            });
        }
        CommandTemplate {
            body: Body::Args {
                bytes: bytes.into_boxed_slice(),
                segments: segments.into_boxed_slice(),
                pieces: pieces.into_boxed_slice(),
            },
            first: args.first().cloned().unwrap_or_default().into_boxed_slice(),
            argc: args.len(),
            keys,
            datas,
        }
    }

    /// The template of one command line with placeholders (`hset __key__ f __data__`);
    /// `None` when the line does not split into arguments or has none.
    pub fn from_line(line: &str) -> Option<CommandTemplate> {
        let args = split_args(line.as_bytes()).ok()?;
        (!args.is_empty()).then(|| CommandTemplate::build(&args, Fill::Placeholders))
    }

    pub(crate) fn monitor_random() -> CommandTemplate {
        CommandTemplate {
            body: Body::MonitorRandom,
            first: Box::default(),
            argc: 0,
            keys: 0,
            datas: 0,
        }
    }

    /// The command word as typed (`hset`); empty for `__monitor_line@__`, whose command
    /// changes per request.
    pub fn first_word(&self) -> &[u8] {
        &self.first
    }

    /// Number of arguments, the command word included (0 for `__monitor_line@__`).
    pub fn arg_count(&self) -> usize {
        self.argc
    }

    /// Number of `__key__` placeholders: how many keys [`encode_resp_keys`] uses.
    ///
    /// [`encode_resp_keys`]: CommandTemplate::encode_resp_keys
    pub fn key_count(&self) -> usize {
        self.keys
    }

    /// Number of `__data__` placeholders.
    pub fn data_count(&self) -> usize {
        self.datas
    }

    /// Whether this is `__monitor_line@__` (the command comes from the capture per request).
    pub fn is_monitor_random(&self) -> bool {
        matches!(self.body, Body::MonitorRandom)
    }

    /// RESP-encodes the command into `out` and returns the number of bytes appended.
    ///
    /// ```text
    /// hset __key__ f __data__   key=memtier-7, data=xyz
    /// *4\r\n$4\r\nhset\r\n$9\r\nmemtier-7\r\n$1\r\nf\r\n$3\r\nxyz\r\n
    /// ```
    ///
    /// Every `__key__` is `key` and every `__data__` is `data` (see
    /// [`encode_resp_keys`](CommandTemplate::encode_resp_keys) for a different key per
    /// placeholder). For `__monitor_line@__` the command is the capture's command
    /// `monitor_index` (modulo its length; pick it with [`MonitorInput::pick`]); without a
    /// monitor nothing is written and 0 is returned. `out` is reserved once, so a buffer
    /// that has held this command before never reallocates.
    pub fn encode_resp(
        &self,
        out: &mut Vec<u8>,
        key: &[u8],
        data: &[u8],
        monitor: Option<&MonitorInput>,
        monitor_index: usize,
    ) -> usize {
        self.encode_with(out, |_| key, data, b"", monitor, monitor_index)
    }

    /// As [`encode_resp`](CommandTemplate::encode_resp), but the n-th `__key__` of the
    /// command is `keys.get(n)` (wrapping around if `keys` holds fewer), as memtier draws a
    /// new key for each placeholder: `mset __key__ __data__ __key__ __data__` sets two keys.
    pub fn encode_resp_keys(
        &self,
        out: &mut Vec<u8>,
        keys: &KeyBatch,
        data: &[u8],
        monitor: Option<&MonitorInput>,
        monitor_index: usize,
    ) -> usize {
        self.encode_with(
            out,
            |n| keys.get_wrapping(n),
            data,
            b"",
            monitor,
            monitor_index,
        )
    }

    /// Encodes a SCAN continuation ([`crate::workload::commands::ScanPlan::continuation`]) with `cursor` in place of
    /// the cursor argument. On other templates the cursor is unused.
    pub fn encode_resp_cursor(
        &self,
        out: &mut Vec<u8>,
        cursor: u64,
        key: &[u8],
        data: &[u8],
    ) -> usize {
        let mut num = itoa::Buffer::new();
        let cursor = num.format(cursor).as_bytes();
        self.encode_with(out, |_| key, data, cursor, None, 0)
    }

    fn encode_with<'k>(
        &self,
        out: &mut Vec<u8>,
        key: impl Fn(usize) -> &'k [u8],
        data: &[u8],
        cursor: &[u8],
        monitor: Option<&MonitorInput>,
        monitor_index: usize,
    ) -> usize {
        let (bytes, segments, pieces) = match &self.body {
            Body::Args {
                bytes,
                segments,
                pieces,
            } => (bytes, segments, pieces),
            Body::MonitorRandom => {
                let Some(command) = monitor.and_then(|m| m.encoded_wrapping(monitor_index)) else {
                    return 0;
                };
                out.extend_from_slice(command);
                return command.len();
            }
        };
        // Length of the bulk `pieces[first..last]` when its first `__key__` is key `k`.
        let bulk_len = |first: usize, last: usize, lit_len: usize, mut k: usize| {
            let mut len = lit_len;
            for piece in &pieces[first..last] {
                len += match piece {
                    Piece::Lit { .. } => 0,
                    Piece::Key => {
                        k += 1;
                        key(k - 1).len()
                    }
                    Piece::Data => data.len(),
                    Piece::Cursor => cursor.len(),
                };
            }
            len
        };

        let mut size = 0;
        let mut k = 0;
        for segment in segments.iter() {
            match *segment {
                Segment::Raw { start, end } => size += end - start,
                Segment::Bulk {
                    first,
                    last,
                    lit_len,
                } => {
                    let len = bulk_len(first, last, lit_len, k);
                    size += 1 + decimal_len(len) + 2 + len + 2;
                    k += pieces[first..last]
                        .iter()
                        .filter(|p| **p == Piece::Key)
                        .count();
                }
            }
        }
        out.reserve(size);

        let mut num = itoa::Buffer::new();
        let mut k = 0;
        for segment in segments.iter() {
            match *segment {
                Segment::Raw { start, end } => out.extend_from_slice(&bytes[start..end]),
                Segment::Bulk {
                    first,
                    last,
                    lit_len,
                } => {
                    let len = bulk_len(first, last, lit_len, k);
                    out.push(b'$');
                    out.extend_from_slice(num.format(len).as_bytes());
                    out.extend_from_slice(b"\r\n");
                    for piece in &pieces[first..last] {
                        match *piece {
                            Piece::Lit { start, end } => out.extend_from_slice(&bytes[start..end]),
                            Piece::Key => {
                                out.extend_from_slice(key(k));
                                k += 1;
                            }
                            Piece::Data => out.extend_from_slice(data),
                            Piece::Cursor => out.extend_from_slice(cursor),
                        }
                    }
                    out.extend_from_slice(b"\r\n");
                }
            }
        }
        size
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::commands::test_support::{capture, encode, resp};

    #[test]
    fn whole_placeholders_encode_byte_exact() {
        let t = CommandTemplate::from_line("hset __key__ f __data__").unwrap();
        assert_eq!(
            encode(&t, b"memtier-7", b"xyz"),
            b"*4\r\n$4\r\nhset\r\n$9\r\nmemtier-7\r\n$1\r\nf\r\n$3\r\nxyz\r\n"
        );
        assert_eq!((t.key_count(), t.data_count(), t.arg_count()), (1, 1, 4));
        // A value long enough for a multi-digit length, and an empty one.
        let big = vec![b'v'; 1234];
        assert_eq!(encode(&t, b"k", &big), resp(&[b"hset", b"k", b"f", &big]));
        assert_eq!(encode(&t, b"", b""), resp(&[b"hset", b"", b"f", b""]));
        // Every length, across the digit-count boundaries of the bulk headers.
        let t = CommandTemplate::from_line("set k:__key__:__data__ __data__").unwrap();
        for len in 0..=120 {
            let data = vec![b'd'; len];
            let mixed = [&b"k:memtier-5:"[..], &data].concat();
            assert_eq!(
                encode(&t, b"memtier-5", &data),
                resp(&[b"set", &mixed, &data]),
                "{len}"
            );
        }
    }

    #[test]
    fn embedded_placeholders_encode_byte_exact() {
        let t = CommandTemplate::from_line("set user:__key__:name pre-__data__-__key__").unwrap();
        assert_eq!(
            encode(&t, b"memtier-42", b"DATA"),
            b"*3\r\n$3\r\nset\r\n$20\r\nuser:memtier-42:name\r\n$19\r\npre-DATA-memtier-42\r\n"
        );
        assert_eq!((t.key_count(), t.data_count()), (2, 1));
        let t = CommandTemplate::from_line("set __key____data__ x__key_ __dat").unwrap();
        assert_eq!(
            encode(&t, b"K", b"D"),
            resp(&[b"set", b"KD", b"x__key_", b"__dat"])
        );
    }

    #[test]
    fn literal_commands_match_resp_encoder() {
        for line in ["ping", "config get maxmemory", r#"set "a b" "\x00\r\n""#] {
            let t = CommandTemplate::from_line(line).unwrap();
            let args = split_args(line.as_bytes()).unwrap();
            let refs: Vec<&[u8]> = args.iter().map(Vec::as_slice).collect();
            let mut expected = Vec::new();
            crate::protocol::resp_encode::encode_command(&mut expected, &refs);
            assert_eq!(encode(&t, b"unused", b"unused"), expected, "{line}");
            assert_eq!(t.key_count(), 0);
        }
    }

    #[test]
    fn several_keys_get_distinct_keys() {
        let t = CommandTemplate::from_line("mset __key__ __data__ __key__ __data__").unwrap();
        let mut keys = KeyBatch::new();
        keys.push_key("memtier-", 1);
        keys.push_key("memtier-", 12345);
        let mut out = Vec::new();
        let n = t.encode_resp_keys(&mut out, &keys, b"v", None, 0);
        assert_eq!(n, out.len());
        assert_eq!(
            out,
            resp(&[b"mset", b"memtier-1", b"v", b"memtier-12345", b"v"])
        );
        // encode_resp repeats one key.
        assert_eq!(
            encode(&t, b"k", b"v"),
            resp(&[b"mset", b"k", b"v", b"k", b"v"])
        );
        // Fewer keys than placeholders wrap around; none gives empty keys.
        let mut one = KeyBatch::new();
        one.push(b"only");
        out.clear();
        t.encode_resp_keys(&mut out, &one, b"v", None, 0);
        assert_eq!(out, resp(&[b"mset", b"only", b"v", b"only", b"v"]));
        out.clear();
        t.encode_resp_keys(&mut out, &KeyBatch::new(), b"v", None, 0);
        assert_eq!(out, resp(&[b"mset", b"", b"v", b"", b"v"]));
    }

    #[test]
    fn encoding_appends_and_does_not_allocate_once_warm() {
        let t = CommandTemplate::from_line("set user:__key__ __data__ EX 100").unwrap();
        let mut out = b"prefix".to_vec();
        t.encode_resp(&mut out, b"memtier-99", b"0123456789", None, 0);
        assert!(out.starts_with(b"prefix*5\r\n"));
        // Warm: the same command (or a shorter key) reuses the buffer.
        out.clear();
        t.encode_resp(&mut out, b"memtier-99", b"0123456789", None, 0);
        let (cap, ptr) = (out.capacity(), out.as_ptr());
        for key in [&b"memtier-99"[..], b"memtier-1", b""] {
            out.clear();
            let n = t.encode_resp(&mut out, key, b"0123456789", None, 0);
            assert_eq!(n, out.len());
            assert_eq!((out.capacity(), out.as_ptr()), (cap, ptr));
        }
        // A cold buffer grows at most once, to exactly what is needed.
        let mut cold = Vec::new();
        let n = t.encode_resp(&mut cold, b"memtier-99", b"0123456789", None, 0);
        assert_eq!(cold.capacity(), n);
    }

    #[test]
    fn monitor_random_copies_without_allocating_once_warm() {
        let m = capture();
        let t = CommandTemplate::monitor_random();
        let longest = (0..m.len())
            .max_by_key(|&i| m.encoded(i).unwrap().len())
            .unwrap();
        let mut out = Vec::new();
        t.encode_resp(&mut out, b"", b"", Some(&m), longest);
        let (cap, ptr) = (out.capacity(), out.as_ptr());
        for i in 0..8 {
            out.clear();
            t.encode_resp(&mut out, b"", b"", Some(&m), i);
            assert_eq!((out.capacity(), out.as_ptr()), (cap, ptr));
        }
    }
}
