//! Arbitrary commands (`--command`): parse them, encode them as RESP, name their report rows.
//!
//! Also the command ratio sequence, MONITOR capture replay (`--monitor-input`) and SCAN
//! cursor following (`--scan-incremental-iteration`).
//!
//! Everything here is pure: the only I/O is [`MonitorInput::load`] reading the capture file.
//! The hot path is [`CommandTemplate::encode_resp`]: every literal argument is RESP-encoded
//! once at parse time, so a request only copies bytes, formats the lengths of the
//! arguments that hold a placeholder, and reserves the write buffer once.
//!
//! # Command line
//! `--command` is split like memtier (and `redis-cli`) split it: on blanks, with
//! `"double quotes"` (escapes `\"`, `\\`, `\n`, `\r`, `\t`, `\b`, `\a`, `\xHH`) and
//! `'single quotes'` (escape `\'` only). A closing quote must be followed by a blank or
//! the end of the line. In each argument `__key__` becomes a generated key and `__data__`
//! a generated value, as a whole argument (`__key__`) or inside one (`user:__key__`; memtier
//! only accepts whole arguments).
//!
//! # Report rows (as memtier 2.x names them)
//! A command's *name* is its first word in upper case (`hset` -> `HSET`); its row is that
//! name in lower case with the first letter upper case, plus `s` (`Hsets`); its histogram
//! (JSON arrays, HDR files) is the name itself (`HSET`).
//! - `--command-stats-breakdown=command` (default): one row per name, in first-seen order;
//!   `set a` and `set b` share `Sets`.
//! - `--command-stats-breakdown=line`: one row per `--command`, still named by its first
//!   word, so two `set` lines give two `Sets` rows (as memtier does).
//! - `__monitor_lineN__` is named after the captured command (`SET`); per line it is
//!   `SET (Line N)`, row `Set (line n)s`, exactly as memtier spells it.
//! - `__monitor_line@__` reports into one row per command name found in the capture, in
//!   first-seen order, after the rows of all `--command`s. Several `@` commands share them.
//!   memtier also prints an always-empty `Monitor_randoms` row in `line` mode; kvbench does
//!   not (its width still counts, see [`CommandList::type_column_width`]).
//! - `--scan-incremental-iteration`: the SCAN command is `SCAN 0` (`Scan 0s`) and its
//!   continuations `SCAN <cursor>` (`Scan <cursor>s`).
//!
//! # Differences from memtier, on purpose
//! - The name is the first *token* (`"set" k v` is `SET`); memtier takes the raw text up to
//!   the first space, quotes included.
//! - A monitor placeholder without `--monitor-input` is an error; memtier sends the text
//!   `__monitor_line1__` to the server, which rejects it.
//! - A `__key__` or `__data__` in the first word is an error; memtier aborts on an assertion.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

use rand::Rng;

use crate::protocol::resp::{encode_array_header, encode_bulk};
use crate::protocol::resp_value::{Token, tokens};
use crate::protocol::{KeyBatch, decimal_len};
use crate::stats::RowName;
use crate::workload::keys::KeyPattern;

/// Replaced by a generated key.
pub const KEY_PLACEHOLDER: &str = "__key__";
/// Replaced by a generated value.
pub const DATA_PLACEHOLDER: &str = "__data__";
/// `__monitor_line@__`: a command picked from the capture per request.
pub const MONITOR_RANDOM_PLACEHOLDER: &str = "__monitor_line@__";
/// `__monitor_lineN__` (1-based): the capture's command N, every time.
const MONITOR_PREFIX: &str = "__monitor_line";

/// Name of the `__monitor_line@__` entry in memtier's command list (never a row here).
const MONITOR_RANDOM_NAME: &str = "MONITOR_RANDOM";
/// Names of the two SCAN rows under `--scan-incremental-iteration`.
const SCAN_FIRST_NAME: &str = "SCAN 0";
const SCAN_NEXT_NAME: &str = "SCAN <cursor>";

/// Captured commands that are never replayed: `HELLO 3` would switch the connection to
/// RESP3 behind the decoder's back (memtier skips it for the same reason).
const UNREPLAYABLE: &[&str] = &["HELLO"];

// ---------------------------------------------------------------------------------------
// Tokenizer
// ---------------------------------------------------------------------------------------

/// Why a command line could not be split into arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SplitError {
    /// A quote was opened and never closed.
    Unbalanced,
    /// A closing quote was followed by something other than a blank (`"a"b`).
    TextAfterQuote,
}

impl std::fmt::Display for SplitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            SplitError::Unbalanced => "unbalanced quotes",
            SplitError::TextAfterQuote => {
                "a closing quote must be followed by a space or the end of the command"
            }
        })
    }
}

/// Blanks skipped between arguments (C's `isspace`).
fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

/// Blanks that end an unquoted argument.
fn ends_word(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r')
}

fn hex_value(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

/// Splits a command line into arguments, as memtier and `redis-cli` do.
///
/// ```text
/// set k "a b"           -> [set] [k] [a b]
/// set k "say \"hi\"\n"  -> [set] [k] [say "hi"<LF>]
/// set k "\x00\xff"      -> [set] [k] [<00><ff>]
/// set k 'it\'s'         -> [set] [k] [it's]
/// set k a"b c"d         -> error: a closing quote must be followed by a space
/// ```
///
/// A quote may open in the middle of a word (`a"b c"` is `ab c`). Inside double quotes an
/// unknown escape is the character itself (`\q` is `q`), and `\x` without two hex digits is
/// `x`. Inside single quotes only `\'` is an escape.
pub fn split_args(line: &[u8]) -> Result<Vec<Vec<u8>>, SplitError> {
    let mut args = Vec::new();
    let mut p = 0;
    loop {
        while p < line.len() && is_space(line[p]) {
            p += 1;
        }
        if p >= line.len() {
            return Ok(args);
        }
        let mut arg = Vec::new();
        let mut in_double = false;
        let mut in_single = false;
        loop {
            let c = line.get(p).copied();
            if in_double {
                match c {
                    None => return Err(SplitError::Unbalanced),
                    Some(b'\\') if line.get(p + 1) == Some(&b'x') => {
                        let hi = line.get(p + 2).copied().and_then(hex_value);
                        let lo = line.get(p + 3).copied().and_then(hex_value);
                        if let (Some(hi), Some(lo)) = (hi, lo) {
                            arg.push(hi * 16 + lo);
                            p += 4;
                        } else {
                            arg.push(b'x');
                            p += 2;
                        }
                    }
                    Some(b'\\') if p + 1 < line.len() => {
                        arg.push(match line[p + 1] {
                            b'n' => b'\n',
                            b'r' => b'\r',
                            b't' => b'\t',
                            b'b' => 0x08,
                            b'a' => 0x07,
                            other => other,
                        });
                        p += 2;
                    }
                    Some(b'"') => {
                        if line.get(p + 1).is_some_and(|&n| !is_space(n)) {
                            return Err(SplitError::TextAfterQuote);
                        }
                        p += 1;
                        break;
                    }
                    Some(other) => {
                        arg.push(other);
                        p += 1;
                    }
                }
            } else if in_single {
                match c {
                    None => return Err(SplitError::Unbalanced),
                    Some(b'\\') if line.get(p + 1) == Some(&b'\'') => {
                        arg.push(b'\'');
                        p += 2;
                    }
                    Some(b'\'') => {
                        if line.get(p + 1).is_some_and(|&n| !is_space(n)) {
                            return Err(SplitError::TextAfterQuote);
                        }
                        p += 1;
                        break;
                    }
                    Some(other) => {
                        arg.push(other);
                        p += 1;
                    }
                }
            } else {
                match c {
                    None => break,
                    Some(b) if ends_word(b) => {
                        p += 1;
                        break;
                    }
                    Some(b'"') => {
                        in_double = true;
                        p += 1;
                    }
                    Some(b'\'') => {
                        in_single = true;
                        p += 1;
                    }
                    Some(other) => {
                        arg.push(other);
                        p += 1;
                    }
                }
            }
        }
        args.push(arg);
    }
}

// ---------------------------------------------------------------------------------------
// Template and RESP encoding
// ---------------------------------------------------------------------------------------

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
enum Fill {
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
    fn build(args: &[Vec<u8>], fill: Fill) -> CommandTemplate {
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

    /// A template for one command line (`hset __key__ f __data__`), with no ratio, pattern
    /// or naming: the parsing [`parse_commands`] does for each `--command`.
    pub fn parse(line: &str) -> Result<CommandTemplate, String> {
        let args = split_args(line.as_bytes())
            .map_err(|e| format!("cannot parse --command \"{line}\": {e}"))?;
        check_args(line, &args)?;
        Ok(CommandTemplate::build(&args, Fill::Placeholders))
    }

    fn monitor_random() -> CommandTemplate {
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

    /// Encodes a SCAN continuation ([`ScanPlan::continuation`]) with `cursor` in place of
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

// ---------------------------------------------------------------------------------------
// Parsing the --command list
// ---------------------------------------------------------------------------------------

/// One command line as the user gave it, with the ratio and key pattern given for it
/// (raw, validated by [`parse_commands`]).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CommandSpec {
    /// The command line to send, e.g. `set __key__ __data__`.
    pub command: String,
    /// The raw ratio given for it, if any.
    pub ratio: Option<String>,
    /// The raw key pattern given for it, if any.
    pub key_pattern: Option<String>,
}

/// Where a `--command`'s bytes come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CommandSource {
    /// The `--command` text itself.
    Line,
    /// `__monitor_lineN__`: the capture's command N (1-based), verbatim.
    MonitorLine(usize),
    /// `__monitor_line@__`: a capture command picked per request.
    MonitorRandom,
}

/// Which report row a command's requests are recorded in.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Route {
    Row(usize),
    /// `__monitor_line@__`: row per capture command name ([`MonitorInput::type_id`]).
    ByMonitorType(Vec<usize>),
}

/// One `--command` after parsing.
#[derive(Clone, Debug)]
pub struct CommandSpecParsed {
    /// The `--command` text as given.
    pub line: String,
    /// What to send.
    pub template: CommandTemplate,
    /// `--command-ratio`: how many times in a row it is sent (at least 1).
    pub ratio: u32,
    /// `--command-key-pattern` (default `R`).
    pub key_pattern: KeyPattern,
    /// Its report row (`Hsets`). For `__monitor_line@__` this is memtier's name for the
    /// placeholder (`Monitor_randoms`), which is no row: see [`CommandSpecParsed::stat_row`].
    pub row_name: String,
    /// Its histogram name (`HSET`; `MONITOR_RANDOM` for `__monitor_line@__`).
    pub hist_name: String,
    /// Whether it holds `__key__` (a keyless command needs no key generator).
    pub has_key: bool,
    /// Whether it holds `__data__`.
    pub has_data: bool,
    /// Where its bytes come from.
    pub source: CommandSource,
    args: Vec<Vec<u8>>,
    route: Route,
}

impl CommandSpecParsed {
    /// Index into [`CommandList::rows`] of the row a request is recorded in. `monitor` and
    /// `monitor_index` only matter for `__monitor_line@__`: pass what was encoded.
    pub fn stat_row(&self, monitor: Option<&MonitorInput>, monitor_index: usize) -> usize {
        match &self.route {
            Route::Row(row) => *row,
            Route::ByMonitorType(rows) => monitor
                .filter(|m| !m.is_empty())
                .and_then(|m| rows.get(m.type_id(monitor_index % m.len())))
                .copied()
                .unwrap_or(0),
        }
    }
}

/// SCAN cursor iteration (`--scan-incremental-iteration`).
#[derive(Clone, Debug)]
pub struct ScanPlan {
    /// `SCAN <cursor> ...`: the command with its cursor argument replaced; encode it with
    /// [`CommandTemplate::encode_resp_cursor`].
    pub continuation: CommandTemplate,
    /// Index into [`CommandList::rows`] of `Scan <cursor>s`.
    pub row: usize,
}

/// An entry of memtier's command list: its `command_name` (per-line rows, column width)
/// and `command_type` (per-command rows).
#[derive(Clone, Debug)]
struct Entry {
    name: String,
    ty: String,
    /// The `__monitor_line@__` placeholder: never a row.
    placeholder: bool,
}

/// Every `--command`, parsed, with the report rows they record into.
#[derive(Clone, Debug, Default)]
pub struct CommandList {
    /// The commands, in `--command` order.
    pub commands: Vec<CommandSpecParsed>,
    /// The report rows, in print order.
    pub rows: Vec<RowName>,
    /// Set by [`CommandList::enable_scan_iteration`].
    pub scan: Option<ScanPlan>,
    entries: Vec<Entry>,
    /// Entries of the `__monitor_line@__` rows, one per [`MonitorInput::types`].
    monitor_slots: std::ops::Range<usize>,
    by_line: bool,
}

/// `HSET` -> `Hsets`, `SET (Line 3)` -> `Set (line 3)s`: memtier's row name.
pub fn row_name(name: &str) -> String {
    let mut row = name.to_ascii_lowercase();
    if let Some(first) = row.get_mut(..1) {
        first.make_ascii_uppercase();
    }
    row.push('s');
    row
}

/// Upper-cased command word, as text.
fn command_name(word: &[u8]) -> String {
    String::from_utf8_lossy(word).to_ascii_uppercase()
}

/// Rejects an empty command and a placeholder in the command word.
fn check_args(line: &str, args: &[Vec<u8>]) -> Result<(), String> {
    let Some(first) = args.first() else {
        return Err(format!(
            "--command \"{line}\" is empty: give a command such as --command=\"get __key__\""
        ));
    };
    let holds = |p: &str| first.windows(p.len()).any(|w| w == p.as_bytes());
    if holds(KEY_PLACEHOLDER) || holds(DATA_PLACEHOLDER) {
        return Err(format!(
            "--command \"{line}\": the first word must be the command name, not {KEY_PLACEHOLDER} or {DATA_PLACEHOLDER}"
        ));
    }
    Ok(())
}

/// `--command-ratio`: a whole number from 1 to 2^32-1 (memtier rejects 0, which would
/// never be sent).
fn parse_ratio(raw: Option<&str>, name: &str) -> Result<u32, String> {
    let Some(raw) = raw else { return Ok(1) };
    let ratio = if raw.is_empty() || !raw.bytes().all(|b| b.is_ascii_digit()) {
        None
    } else {
        raw.parse::<u32>().ok().filter(|&r| r > 0)
    };
    ratio.ok_or_else(|| {
        format!(
            "failed to set ratio for command {name}: --command-ratio must be a whole number from 1 to {} (got \"{raw}\").",
            u32::MAX
        )
    })
}

/// `--command-key-pattern`: one of `R G Z S P` (default `R`).
fn parse_key_pattern(raw: Option<&str>, name: &str) -> Result<KeyPattern, String> {
    let Some(raw) = raw else {
        return Ok(KeyPattern::Random);
    };
    let mut letters = raw.chars();
    match (
        letters.next().and_then(KeyPattern::from_letter),
        letters.next(),
    ) {
        (Some(pattern), None) => Ok(pattern),
        _ => Err(format!(
            "key-pattern for command {name} must be in the format of [S/R/Z/G/P] (got \"{raw}\")."
        )),
    }
}

/// `--command-stats-breakdown=command|line` (any case; default `command`): whether rows
/// are per command line.
pub fn parse_breakdown(raw: Option<&str>) -> Result<bool, String> {
    match raw {
        None => Ok(false),
        Some(s) if s.eq_ignore_ascii_case("command") => Ok(false),
        Some(s) if s.eq_ignore_ascii_case("line") => Ok(true),
        Some(_) => Err("command-stats-breakdown must be 'command' or 'line'.".to_string()),
    }
}

/// A monitor placeholder, if the command is one.
enum MonitorRef {
    Random,
    Line(usize),
}

/// Recognises `__monitor_line@__` and `__monitor_lineN__` when they are the first word, as
/// memtier does (a later word that looks like one is sent as text).
fn monitor_ref(
    line: &str,
    args: &[Vec<u8>],
    monitor: Option<&MonitorInput>,
) -> Result<Option<MonitorRef>, String> {
    let Some(first) = args.first() else {
        return Ok(None);
    };
    if !first.starts_with(MONITOR_PREFIX.as_bytes()) {
        return Ok(None);
    }
    let Some(monitor) = monitor else {
        return Err(format!(
            "--command \"{line}\" replays a MONITOR capture: give it with --monitor-input=FILE"
        ));
    };
    let invalid = || {
        format!(
            "invalid monitor placeholder '{line}' (valid range: __monitor_line1__ to __monitor_line{}__ or {MONITOR_RANDOM_PLACEHOLDER})",
            monitor.len()
        )
    };
    if args.len() != 1 {
        return Err(format!(
            "invalid monitor placeholder '{line}': a monitor placeholder must be the whole command"
        ));
    }
    if first.as_slice() == MONITOR_RANDOM_PLACEHOLDER.as_bytes() {
        return Ok(Some(MonitorRef::Random));
    }
    let n = first[MONITOR_PREFIX.len()..]
        .strip_suffix(b"__")
        .filter(|d| !d.is_empty() && d.iter().all(u8::is_ascii_digit))
        .and_then(|d| std::str::from_utf8(d).ok()?.parse::<usize>().ok())
        .filter(|&n| n >= 1 && n <= monitor.len())
        .ok_or_else(invalid)?;
    Ok(Some(MonitorRef::Line(n)))
}

/// Parses every `--command` with its ratio and key pattern, and lays out the report rows.
///
/// `breakdown_by_line` is `--command-stats-breakdown=line`. `monitor` is the
/// `--monitor-input` capture, needed by `__monitor_line...__` commands. An empty `specs`
/// gives an empty list. Errors are messages for the user: an empty command, unbalanced
/// quotes, a bad ratio or key pattern, a monitor placeholder out of range or without a
/// capture.
pub fn parse_commands(
    specs: &[CommandSpec],
    breakdown_by_line: bool,
    monitor: Option<&MonitorInput>,
) -> Result<CommandList, String> {
    let mut list = CommandList {
        by_line: breakdown_by_line,
        ..CommandList::default()
    };
    let mut uses_random = false;
    for spec in specs {
        let line = spec.command.as_str();
        let args = split_args(line.as_bytes())
            .map_err(|e| format!("cannot parse --command \"{line}\": {e}"))?;
        check_args(line, &args)?;
        let reference = monitor_ref(line, &args, monitor)?;
        let (template, source, name, ty, placeholder) = match (reference, monitor) {
            (Some(MonitorRef::Random), Some(_)) => {
                uses_random = true;
                (
                    CommandTemplate::monitor_random(),
                    CommandSource::MonitorRandom,
                    MONITOR_RANDOM_NAME.to_string(),
                    MONITOR_RANDOM_NAME.to_string(),
                    true,
                )
            }
            (Some(MonitorRef::Line(n)), Some(m)) => {
                let captured = m.args(n - 1);
                let ty = m.command_type(n - 1).to_string();
                (
                    CommandTemplate::build(&captured, Fill::Verbatim),
                    CommandSource::MonitorLine(n),
                    format!("{ty} (Line {n})"),
                    ty,
                    false,
                )
            }
            _ => {
                let ty = command_name(&args[0]);
                (
                    CommandTemplate::build(&args, Fill::Placeholders),
                    CommandSource::Line,
                    ty.clone(),
                    ty,
                    false,
                )
            }
        };
        let ratio = parse_ratio(spec.ratio.as_deref(), &name)?;
        let key_pattern = parse_key_pattern(spec.key_pattern.as_deref(), &name)?;
        list.entries.push(Entry {
            name,
            ty,
            placeholder,
        });
        list.commands.push(CommandSpecParsed {
            line: line.to_string(),
            has_key: template.key_count() > 0,
            has_data: template.data_count() > 0,
            template,
            ratio,
            key_pattern,
            row_name: String::new(),
            hist_name: String::new(),
            source,
            args: if source == CommandSource::Line {
                args
            } else {
                Vec::new()
            },
            route: Route::Row(0),
        });
    }
    let slots_start = list.entries.len();
    if let (true, Some(m)) = (uses_random, monitor) {
        for ty in m.types() {
            list.entries.push(Entry {
                name: ty.clone(),
                ty: ty.clone(),
                placeholder: false,
            });
        }
    }
    list.monitor_slots = slots_start..list.entries.len();
    list.relink();
    Ok(list)
}

impl CommandList {
    /// Whether there are no commands (plain SET/GET mode).
    pub fn is_empty(&self) -> bool {
        self.commands.is_empty()
    }

    /// The ratios, in command order (for [`CommandSequence::new`]).
    pub fn ratios(&self) -> Vec<u32> {
        self.commands.iter().map(|c| c.ratio).collect()
    }

    /// A fresh per-client command sequence.
    pub fn sequence(&self) -> CommandSequence {
        CommandSequence::new(&self.ratios())
    }

    /// Width N of the table's `%-Ns` Type cell: memtier's `max(6, longest command name) + 1`,
    /// where names are the per-line names (`SET (Line 3)`, `SCAN <cursor>`, and
    /// `MONITOR_RANDOM` for `__monitor_line@__`) whichever breakdown is used.
    pub fn type_column_width(&self) -> usize {
        self.entries
            .iter()
            .map(|e| e.name.len())
            .fold(6, usize::max)
            + 1
    }

    /// Turns on `--scan-incremental-iteration`: the one command must be a SCAN with a
    /// cursor; its row becomes `Scan 0s` and a `Scan <cursor>s` row is added for the
    /// continuations ([`CommandList::scan`]). `--pipeline 1` is the caller's to check.
    pub fn enable_scan_iteration(&mut self) -> Result<(), String> {
        if self.scan.is_some() {
            return Ok(());
        }
        let cmd = match self.commands.as_slice() {
            [] => {
                return Err(
                    "--scan-incremental-iteration requires --command with a SCAN command."
                        .to_string(),
                );
            }
            [cmd] => cmd,
            _ => {
                return Err(
                    "--scan-incremental-iteration requires exactly one --command (a SCAN command)."
                        .to_string(),
                );
            }
        };
        if cmd.source != CommandSource::Line || !cmd.args[0].eq_ignore_ascii_case(b"SCAN") {
            return Err(
                "--scan-incremental-iteration requires the command to be a SCAN command."
                    .to_string(),
            );
        }
        if cmd.args.len() < 2 {
            return Err(
                "SCAN command must have at least a cursor argument (e.g., 'SCAN 0').".to_string(),
            );
        }
        let continuation = CommandTemplate::build(&cmd.args, Fill::CursorAt(1));
        self.entries[0].name = SCAN_FIRST_NAME.to_string();
        self.entries[0].ty = SCAN_FIRST_NAME.to_string();
        self.entries.push(Entry {
            name: SCAN_NEXT_NAME.to_string(),
            ty: SCAN_NEXT_NAME.to_string(),
            placeholder: false,
        });
        self.scan = Some(ScanPlan {
            continuation,
            row: 0,
        });
        self.relink();
        Ok(())
    }

    /// Recomputes the rows from the entries, and each command's route and names.
    fn relink(&mut self) {
        let mut rows: Vec<RowName> = Vec::new();
        let mut entry_row = Vec::with_capacity(self.entries.len());
        for e in &self.entries {
            if e.placeholder {
                entry_row.push(None);
                continue;
            }
            let row = if self.by_line {
                rows.push(RowName::new(&row_name(&e.name), &e.name, false));
                rows.len() - 1
            } else if let Some(row) = rows.iter().position(|r| r.hist == e.ty) {
                row
            } else {
                rows.push(RowName::new(&row_name(&e.ty), &e.ty, false));
                rows.len() - 1
            };
            entry_row.push(Some(row));
        }
        let monitor_rows: Vec<usize> = entry_row[self.monitor_slots.clone()]
            .iter()
            .flatten()
            .copied()
            .collect();
        for (i, cmd) in self.commands.iter_mut().enumerate() {
            match entry_row[i] {
                Some(row) => {
                    cmd.route = Route::Row(row);
                    cmd.row_name = rows[row].row.clone();
                    cmd.hist_name = rows[row].hist.clone();
                }
                None => {
                    cmd.route = Route::ByMonitorType(monitor_rows.clone());
                    cmd.row_name = row_name(&self.entries[i].name);
                    cmd.hist_name = self.entries[i].name.clone();
                }
            }
        }
        if let Some(scan) = &mut self.scan {
            scan.row = entry_row.last().copied().flatten().unwrap_or(0);
        }
        self.rows = rows;
    }
}

// ---------------------------------------------------------------------------------------
// Ratio sequence
// ---------------------------------------------------------------------------------------

/// Which command a client sends next: each command `ratio` times in a row, in order, for
/// ever (ratios 2 and 1 give `0 0 1 0 0 1 ...`), as memtier cycles its `--command` list.
#[derive(Clone, Debug)]
pub struct CommandSequence {
    ratios: Box<[u32]>,
    index: usize,
    sent: u32,
    any: bool,
}

impl CommandSequence {
    /// A sequence over `ratios`. A zero ratio is skipped; if none is positive (the config
    /// never allows it) every call returns 0 rather than panicking.
    pub fn new(ratios: &[u32]) -> Self {
        CommandSequence {
            ratios: ratios.into(),
            index: 0,
            sent: 0,
            any: ratios.iter().any(|&r| r > 0),
        }
    }

    /// Index of the next command.
    #[allow(clippy::should_implement_trait)] // endless and infallible: not an Iterator
    pub fn next(&mut self) -> usize {
        if !self.any {
            return 0;
        }
        while self.sent >= self.ratios[self.index] {
            self.index = (self.index + 1) % self.ratios.len();
            self.sent = 0;
        }
        self.sent += 1;
        self.index
    }
}

// ---------------------------------------------------------------------------------------
// MONITOR capture
// ---------------------------------------------------------------------------------------

/// How `__monitor_line@__` picks capture commands (`--monitor-pattern=S|R`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum MonitorPattern {
    /// In file order, one shared position for all clients and threads, wrapping around.
    #[default]
    Sequential,
    /// Uniformly at random, from the client's RNG (reproducible without `--randomize`).
    Random,
}

impl MonitorPattern {
    /// `S` or `R` (either case; default `S`), with memtier's messages.
    pub fn parse(raw: Option<&str>) -> Result<Self, String> {
        match raw {
            None => Ok(MonitorPattern::Sequential),
            Some(s) if s.len() != 1 => Err(
                "monitor-pattern must be a single character: 'S' (sequential) or 'R' (random)."
                    .to_string(),
            ),
            Some(s) if s.eq_ignore_ascii_case("S") => Ok(MonitorPattern::Sequential),
            Some(s) if s.eq_ignore_ascii_case("R") => Ok(MonitorPattern::Random),
            Some(_) => Err("monitor-pattern must be 'S' (sequential) or 'R' (random).".to_string()),
        }
    }
}

/// The commands of a Redis `MONITOR` capture (`--monitor-input`), RESP-encoded once.
///
/// ```text
/// OK                                                        skipped: no quote
/// 1700000000.123456 [0 127.0.0.1:50000] "SET" "key" "v\"1"  SET key v"1
/// [ proxy49 ] 1700000000.1 [0 lua] "get" "\xff\n"           get <ff><LF>
/// 1700000000.2 [0 127.0.0.1:50001] "HELLO" "3"              skipped: unreplayable
/// ```
///
/// A command starts at the line's first `"` and is split like `--command` (so `\"`, `\\`,
/// `\xHH`, `\n`, `\r`, `\t` are understood). Lines end at `\n`, `\r\n` or a lone `\r`. A
/// line whose command does not split (an unclosed quote) is skipped and counted.
#[derive(Debug)]
pub struct MonitorInput {
    encoded: Vec<u8>,
    /// `encoded[offsets[i]..offsets[i + 1]]` is command `i`.
    offsets: Vec<usize>,
    type_ids: Vec<u32>,
    types: Vec<String>,
    total_lines: usize,
    malformed: usize,
    unreplayable: usize,
    next: AtomicUsize,
}

/// Lines of a capture: split at `\n`, `\r\n` and a lone `\r`, without the terminator.
fn capture_lines(bytes: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut rest = bytes;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let end = rest
            .iter()
            .position(|&b| b == b'\n' || b == b'\r')
            .unwrap_or(rest.len());
        let line = &rest[..end];
        let skip = match rest.get(end..end + 2) {
            Some(b"\r\n") => 2,
            _ if end < rest.len() => 1,
            _ => 0,
        };
        rest = &rest[end + skip..];
        Some(line)
    })
}

impl MonitorInput {
    /// Reads and parses a capture file.
    pub fn load(path: &Path) -> Result<Self, String> {
        let bytes = std::fs::read(path)
            .map_err(|e| format!("failed to open monitor input file: {}: {e}", path.display()))?;
        Self::parse_from(&bytes, &path.display().to_string())
    }

    /// Parses a capture held in memory.
    pub fn parse(text: &str) -> Result<Self, String> {
        Self::parse_bytes(text.as_bytes())
    }

    /// Parses a capture held in memory (it need not be UTF-8).
    pub fn parse_bytes(bytes: &[u8]) -> Result<Self, String> {
        Self::parse_from(bytes, "<memory>")
    }

    fn parse_from(bytes: &[u8], source: &str) -> Result<Self, String> {
        let mut input = MonitorInput {
            encoded: Vec::new(),
            offsets: vec![0],
            type_ids: Vec::new(),
            types: Vec::new(),
            total_lines: 0,
            malformed: 0,
            unreplayable: 0,
            next: AtomicUsize::new(0),
        };
        for line in capture_lines(bytes) {
            input.total_lines += 1;
            let Some(quote) = line.iter().position(|&b| b == b'"') else {
                continue;
            };
            let args = match split_args(&line[quote..]) {
                Ok(args) if args.first().is_some_and(|a| !a.is_empty()) => args,
                _ => {
                    input.malformed += 1;
                    continue;
                }
            };
            let ty = command_name(&args[0]);
            if UNREPLAYABLE.contains(&ty.as_str()) {
                input.unreplayable += 1;
                continue;
            }
            encode_array_header(&mut input.encoded, args.len());
            for arg in &args {
                encode_bulk(&mut input.encoded, arg);
            }
            input.offsets.push(input.encoded.len());
            let id = match input.types.iter().position(|t| *t == ty) {
                Some(id) => id,
                None => {
                    input.types.push(ty);
                    input.types.len() - 1
                }
            };
            input.type_ids.push(u32::try_from(id).unwrap_or(u32::MAX));
        }
        if input.is_empty() {
            return Err(if input.malformed > 0 {
                format!(
                    "no valid commands found in monitor input file: {source} ({} malformed line(s) skipped)",
                    input.malformed
                )
            } else {
                format!("no commands found in monitor input file: {source}")
            });
        }
        Ok(input)
    }

    /// Number of commands.
    pub fn len(&self) -> usize {
        self.type_ids.len()
    }

    /// Whether there are no commands (never true for a loaded capture).
    pub fn is_empty(&self) -> bool {
        self.type_ids.is_empty()
    }

    /// memtier's load message for stderr:
    /// `Loaded 5 monitor commands from 6 total lines` (plus the skipped counts if any).
    pub fn summary(&self) -> String {
        if self.malformed > 0 || self.unreplayable > 0 {
            format!(
                "Loaded {} monitor commands from {} total lines ({} malformed, {} unreplayable line(s) skipped)",
                self.len(),
                self.total_lines,
                self.malformed,
                self.unreplayable
            )
        } else {
            format!(
                "Loaded {} monitor commands from {} total lines",
                self.len(),
                self.total_lines
            )
        }
    }

    /// Command `index` (0-based), RESP-encoded.
    pub fn encoded(&self, index: usize) -> Option<&[u8]> {
        let start = *self.offsets.get(index)?;
        let end = *self.offsets.get(index + 1)?;
        Some(&self.encoded[start..end])
    }

    fn encoded_wrapping(&self, index: usize) -> Option<&[u8]> {
        match self.len() {
            0 => None,
            len => self.encoded(index % len),
        }
    }

    /// Command `index` (0-based) split into arguments again (setup only: allocates).
    fn args(&self, index: usize) -> Vec<Vec<u8>> {
        let Some(encoded) = self.encoded(index) else {
            return Vec::new();
        };
        // Our own encoding: an array of bulk strings.
        tokens(encoded)
            .skip(1)
            .filter_map(|t| match t {
                Token::Bulk(arg) => Some(arg.to_vec()),
                _ => None,
            })
            .collect()
    }

    /// The upper-cased command word of command `index` (`SET`), or `""` out of range.
    pub fn command_type(&self, index: usize) -> &str {
        self.type_ids
            .get(index)
            .and_then(|&id| self.types.get(id as usize))
            .map_or("", String::as_str)
    }

    /// Position in [`MonitorInput::types`] of command `index`'s word (0 out of range).
    pub fn type_id(&self, index: usize) -> usize {
        self.type_ids.get(index).map_or(0, |&id| id as usize)
    }

    /// The distinct command words, in first-seen order: the `__monitor_line@__` rows.
    pub fn types(&self) -> &[String] {
        &self.types
    }

    /// The next command in file order; one position shared by every caller (all clients
    /// of all threads, as memtier), wrapping around.
    pub fn next_sequential(&self) -> usize {
        match self.len() {
            0 => 0,
            len => self.next.fetch_add(1, Ordering::Relaxed) % len,
        }
    }

    /// The command `__monitor_line@__` sends next, by `pattern`.
    pub fn pick<R: Rng + ?Sized>(&self, pattern: MonitorPattern, rng: &mut R) -> usize {
        match (pattern, self.len()) {
            (_, 0) => 0,
            (MonitorPattern::Sequential, _) => self.next_sequential(),
            (MonitorPattern::Random, len) => rng.random_range(0..len),
        }
    }
}

// ---------------------------------------------------------------------------------------
// SCAN cursor iteration
// ---------------------------------------------------------------------------------------

/// The cursor of a SCAN reply, from its first element (the cursor bulk's payload):
/// `b"17"` -> `Some(17)`, `b"0"` -> `Some(0)` (iteration done: restart with `SCAN 0`).
/// `None` if it is not an unsigned 64-bit decimal.
pub fn scan_cursor(reply_first_bulk: &[u8]) -> Option<u64> {
    if reply_first_bulk.is_empty() || !reply_first_bulk.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(reply_first_bulk).ok()?.parse().ok()
}

/// Per-client state of `--scan-incremental-iteration` (which needs `--pipeline 1`).
///
/// ```text
/// SCAN 0 ...        -> cursor 17
/// SCAN 17 ...       -> cursor 42
/// SCAN 42 ...       -> cursor 0      (or after max_iterations continuations)
/// SCAN 0 ...        ...
/// ```
#[derive(Clone, Debug, Default)]
pub struct ScanState {
    max_iterations: u32,
    continuations: u32,
    cursor: Option<u64>,
}

impl ScanState {
    /// `max_iterations` is `--scan-incremental-max-iterations` (0: follow until cursor 0).
    pub fn new(max_iterations: u32) -> Self {
        ScanState {
            max_iterations,
            continuations: 0,
            cursor: None,
        }
    }

    /// What to send next: `None` for the command as given (`SCAN 0 ...`, row `Scan 0s`),
    /// `Some(cursor)` for the continuation ([`ScanPlan`], row `Scan <cursor>s`).
    pub fn next_cursor(&self) -> Option<u64> {
        self.cursor
    }

    /// Takes the cursor of the reply to the last SCAN sent (`None` if the reply had no
    /// usable cursor, e.g. an error): a non-zero cursor is followed unless the cycle
    /// already made `max_iterations` continuations; otherwise the cycle restarts.
    pub fn on_reply(&mut self, cursor: Option<u64>) {
        let limit_hit = self.max_iterations > 0 && self.continuations >= self.max_iterations;
        match cursor {
            Some(c) if c != 0 && !limit_hit => {
                self.cursor = Some(c);
                self.continuations += 1;
            }
            _ => {
                self.cursor = None;
                self.continuations = 0;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand::rngs::SmallRng;

    fn spec(command: &str) -> CommandSpec {
        CommandSpec {
            command: command.to_string(),
            ratio: None,
            key_pattern: None,
        }
    }

    fn spec_with(command: &str, ratio: Option<&str>, pattern: Option<&str>) -> CommandSpec {
        CommandSpec {
            command: command.to_string(),
            ratio: ratio.map(str::to_string),
            key_pattern: pattern.map(str::to_string),
        }
    }

    fn split(line: &str) -> Vec<Vec<u8>> {
        split_args(line.as_bytes()).unwrap()
    }

    fn strs(args: &[Vec<u8>]) -> Vec<String> {
        args.iter()
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect()
    }

    fn encode(t: &CommandTemplate, key: &[u8], data: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        let n = t.encode_resp(&mut out, key, data, None, 0);
        assert_eq!(n, out.len());
        out
    }

    /// The reference encoding: an independent, obviously right RESP array writer.
    fn resp(args: &[&[u8]]) -> Vec<u8> {
        let mut out = format!("*{}\r\n", args.len()).into_bytes();
        for a in args {
            out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
            out.extend_from_slice(a);
            out.extend_from_slice(b"\r\n");
        }
        out
    }

    const CAPTURE: &str = "OK\n\
        1700000000.123456 [0 127.0.0.1:50000] \"SET\" \"key1\" \"value1\"\n\
        [ proxy47 ] 1700000000.2 [0 127.0.0.1:39564] \"get\" \"key1\"\n\
        1700000000.3 [0 lua] \"HSET\" \"h\" \"f\" \"a \\\"quoted\\\" \\\\ \\x00\\xff\\n\\r\\t\"\n\
        1700000000.4 [0 127.0.0.1:50000] \"SET\" \"key2\" \"unclosed\n\
        1700000000.5 [0 127.0.0.1:50000] \"HELLO\" \"3\"\n\
        \n\
        1700000000.6 [0 127.0.0.1:50000] \"SET\" \"key3\" \"v3\"\n";

    fn capture() -> MonitorInput {
        MonitorInput::parse(CAPTURE).unwrap()
    }

    // ---- tokenizer ----

    #[test]
    fn splits_on_blanks() {
        assert_eq!(strs(&split("set  k\tv ")), ["set", "k", "v"]);
        assert_eq!(strs(&split("  get\r\nk")), ["get", "k"]);
        assert!(split("").is_empty());
        assert!(split(" \t ").is_empty());
    }

    #[test]
    fn double_quotes_keep_spaces_and_unescape() {
        assert_eq!(strs(&split(r#"set k "a b""#)), ["set", "k", "a b"]);
        assert_eq!(
            split(r#""say \"hi\"" "\\" "\n\r\t\b\a" "\q""#),
            [
                b"say \"hi\"".to_vec(),
                b"\\".to_vec(),
                b"\n\r\t\x08\x07".to_vec(),
                b"q".to_vec()
            ]
        );
        assert_eq!(split(r#""\x00\xfF\x41""#), [vec![0x00, 0xff, b'A']]);
        // \x without two hex digits is a plain x.
        assert_eq!(split(r#""\xZZ" "\x4""#), [b"xZZ".to_vec(), b"x4".to_vec()]);
        assert_eq!(split(r#""""#), [Vec::<u8>::new()]);
        assert_eq!(strs(&split(r#"a"b c" d"#)), ["ab c", "d"]);
    }

    #[test]
    fn single_quotes_only_escape_quote() {
        assert_eq!(
            split(r"'it\'s' 'a\nb' 'x y'"),
            [b"it's".to_vec(), b"a\\nb".to_vec(), b"x y".to_vec()]
        );
    }

    #[test]
    fn split_errors() {
        assert_eq!(split_args(br#"set k "abc"#), Err(SplitError::Unbalanced));
        assert_eq!(split_args(br"set k 'abc"), Err(SplitError::Unbalanced));
        assert_eq!(split_args(br#"set k "abc\"#), Err(SplitError::Unbalanced));
        assert_eq!(split_args(br#"set "a"b"#), Err(SplitError::TextAfterQuote));
        assert_eq!(split_args(br"set 'a'b"), Err(SplitError::TextAfterQuote));
    }

    // ---- naming and rows ----

    #[test]
    fn row_names_follow_memtier() {
        assert_eq!(row_name("HSET"), "Hsets");
        assert_eq!(row_name("GET"), "Gets");
        assert_eq!(row_name("SET (Line 3)"), "Set (line 3)s");
        assert_eq!(row_name("SCAN <cursor>"), "Scan <cursor>s");
        assert_eq!(row_name(""), "s");
    }

    #[test]
    fn names_come_from_the_first_word() {
        let list = parse_commands(
            &[
                spec("hset __key__ f __data__"),
                spec("get __key__"),
                spec("CONFIG get maxmemory"),
                spec("sEt k v"),
                spec(r#""zadd" z 1 m"#),
            ],
            false,
            None,
        )
        .unwrap();
        let names: Vec<_> = list.commands.iter().map(|c| c.row_name.as_str()).collect();
        assert_eq!(names, ["Hsets", "Gets", "Configs", "Sets", "Zadds"]);
        let hists: Vec<_> = list.commands.iter().map(|c| c.hist_name.as_str()).collect();
        assert_eq!(hists, ["HSET", "GET", "CONFIG", "SET", "ZADD"]);
        assert_eq!(list.commands[2].template.first_word(), b"CONFIG");
        assert_eq!(list.commands[3].template.first_word(), b"sEt");
    }

    #[test]
    fn command_breakdown_shares_rows_by_name() {
        let specs = [
            spec("SET foo __key__ __data__"),
            spec("GET foo"),
            spec("set bar __key__ __data__"),
            spec("GET bar"),
        ];
        let list = parse_commands(&specs, false, None).unwrap();
        assert_eq!(
            list.rows,
            [
                RowName::new("Sets", "SET", false),
                RowName::new("Gets", "GET", false),
            ]
        );
        let rows: Vec<_> = list.commands.iter().map(|c| c.stat_row(None, 0)).collect();
        assert_eq!(rows, [0, 1, 0, 1]);
    }

    #[test]
    fn line_breakdown_gives_each_command_its_row() {
        let specs = [
            spec("SET foo __key__ __data__"),
            spec("GET foo"),
            spec("set bar __key__ __data__"),
        ];
        let list = parse_commands(&specs, true, None).unwrap();
        let names: Vec<_> = list.rows.iter().map(|r| r.row.as_str()).collect();
        assert_eq!(names, ["Sets", "Gets", "Sets"]);
        let rows: Vec<_> = list.commands.iter().map(|c| c.stat_row(None, 0)).collect();
        assert_eq!(rows, [0, 1, 2]);
    }

    #[test]
    fn type_column_width_matches_memtier() {
        // arbitrary.out: "Hsets" in a 7-wide cell.
        let list = parse_commands(
            &[spec("hset __key__ f __data__"), spec("get __key__")],
            false,
            None,
        )
        .unwrap();
        assert_eq!(list.type_column_width(), 7);
        let m = capture();
        let list = parse_commands(&[spec("__monitor_line@__")], false, Some(&m)).unwrap();
        assert_eq!(list.type_column_width(), "MONITOR_RANDOM".len() + 1);
        assert_eq!(CommandList::default().type_column_width(), 7);
    }

    // ---- ratios and key patterns ----

    #[test]
    fn sequence_follows_ratios() {
        let mut s = CommandSequence::new(&[2, 1]);
        let got: Vec<_> = (0..9).map(|_| s.next()).collect();
        assert_eq!(got, [0, 0, 1, 0, 0, 1, 0, 0, 1]);
        let mut s = CommandSequence::new(&[1, 3, 1]);
        let got: Vec<_> = (0..10).map(|_| s.next()).collect();
        assert_eq!(got, [0, 1, 1, 1, 2, 0, 1, 1, 1, 2]);
        let mut s = CommandSequence::new(&[0, 2, 0]);
        let got: Vec<_> = (0..4).map(|_| s.next()).collect();
        assert_eq!(got, [1, 1, 1, 1]);
        let mut s = CommandSequence::new(&[]);
        assert_eq!(s.next(), 0);
        let mut s = CommandSequence::new(&[0, 0]);
        assert_eq!(s.next(), 0);
    }

    #[test]
    fn ratio_and_key_pattern_are_parsed_per_command() {
        let list = parse_commands(
            &[
                spec_with("hset __key__ f __data__", Some("2"), Some("G")),
                spec_with("get __key__", None, Some("Z")),
                spec_with("ping", Some("4294967295"), Some("P")),
                spec_with("incr __key__", None, Some("S")),
            ],
            false,
            None,
        )
        .unwrap();
        assert_eq!(list.ratios(), [2, 1, u32::MAX, 1]);
        let patterns: Vec<_> = list.commands.iter().map(|c| c.key_pattern).collect();
        assert_eq!(
            patterns,
            [
                KeyPattern::Gaussian,
                KeyPattern::Zipf,
                KeyPattern::Parallel,
                KeyPattern::Sequential
            ]
        );
        let mut seq = list.sequence();
        let got: Vec<_> = (0..4).map(|_| seq.next()).collect();
        assert_eq!(got, [0, 0, 1, 2]);
        assert!(!list.commands[2].has_key && !list.commands[2].has_data);
        assert!(list.commands[0].has_key && list.commands[0].has_data);
        assert!(list.commands[1].has_key && !list.commands[1].has_data);
    }

    #[test]
    fn bad_ratio_and_key_pattern_are_errors() {
        for bad in ["0", "-1", "+1", "abc", "", " 2", "4294967296", "1.5"] {
            let err = parse_commands(&[spec_with("hset k f v", Some(bad), None)], false, None)
                .unwrap_err();
            assert!(
                err.starts_with("failed to set ratio for command HSET:") && err.contains(bad),
                "{bad:?}: {err}"
            );
        }
        for bad in ["X", "RR", "", "r"] {
            let err =
                parse_commands(&[spec_with("get k", None, Some(bad))], false, None).unwrap_err();
            assert!(
                err.starts_with("key-pattern for command GET must be in the format of [S/R/Z/G/P]"),
                "{bad:?}: {err}"
            );
        }
    }

    #[test]
    fn command_errors_are_clear() {
        let err = |line: &str| parse_commands(&[spec(line)], false, None).unwrap_err();
        assert!(err("").contains("is empty"));
        assert!(err("   ").contains("is empty"));
        assert_eq!(
            err(r#"set k "v"#),
            r#"cannot parse --command "set k "v": unbalanced quotes"#
        );
        assert!(err(r#"set "k"v x"#).contains("closing quote must be followed by a space"));
        assert!(err("__key__ x").contains("the first word must be the command name"));
        assert!(err("x__data__ x").contains("the first word must be the command name"));
        assert!(CommandTemplate::parse("").is_err());
    }

    #[test]
    fn parse_breakdown_and_monitor_pattern() {
        assert_eq!(parse_breakdown(None), Ok(false));
        assert_eq!(parse_breakdown(Some("command")), Ok(false));
        assert_eq!(parse_breakdown(Some("LINE")), Ok(true));
        assert!(parse_breakdown(Some("lines")).is_err());
        assert_eq!(MonitorPattern::parse(None), Ok(MonitorPattern::Sequential));
        assert_eq!(MonitorPattern::parse(Some("r")), Ok(MonitorPattern::Random));
        assert_eq!(
            MonitorPattern::parse(Some("S")),
            Ok(MonitorPattern::Sequential)
        );
        assert!(
            MonitorPattern::parse(Some("X"))
                .unwrap_err()
                .contains("'S'")
        );
        assert!(
            MonitorPattern::parse(Some("SR"))
                .unwrap_err()
                .contains("single")
        );
    }

    // ---- encoding ----

    #[test]
    fn whole_placeholders_encode_byte_exact() {
        let t = CommandTemplate::parse("hset __key__ f __data__").unwrap();
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
        let t = CommandTemplate::parse("set k:__key__:__data__ __data__").unwrap();
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
        let t = CommandTemplate::parse("set user:__key__:name pre-__data__-__key__").unwrap();
        assert_eq!(
            encode(&t, b"memtier-42", b"DATA"),
            b"*3\r\n$3\r\nset\r\n$20\r\nuser:memtier-42:name\r\n$19\r\npre-DATA-memtier-42\r\n"
        );
        assert_eq!((t.key_count(), t.data_count()), (2, 1));
        let t = CommandTemplate::parse("set __key____data__ x__key_ __dat").unwrap();
        assert_eq!(
            encode(&t, b"K", b"D"),
            resp(&[b"set", b"KD", b"x__key_", b"__dat"])
        );
    }

    #[test]
    fn literal_commands_match_resp_encoder() {
        for line in ["ping", "config get maxmemory", r#"set "a b" "\x00\r\n""#] {
            let t = CommandTemplate::parse(line).unwrap();
            let args = split(line);
            let refs: Vec<&[u8]> = args.iter().map(Vec::as_slice).collect();
            let mut expected = Vec::new();
            crate::protocol::resp::encode_command(&mut expected, &refs);
            assert_eq!(encode(&t, b"unused", b"unused"), expected, "{line}");
            assert_eq!(t.key_count(), 0);
        }
    }

    #[test]
    fn several_keys_get_distinct_keys() {
        let t = CommandTemplate::parse("mset __key__ __data__ __key__ __data__").unwrap();
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
        let t = CommandTemplate::parse("set user:__key__ __data__ EX 100").unwrap();
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

    // ---- MONITOR capture ----

    #[test]
    fn monitor_capture_parses_escapes_and_skips_lines() {
        let m = capture();
        assert_eq!(m.len(), 4);
        assert_eq!(
            m.summary(),
            "Loaded 4 monitor commands from 8 total lines (1 malformed, 1 unreplayable line(s) skipped)"
        );
        assert_eq!(m.encoded(0).unwrap(), resp(&[b"SET", b"key1", b"value1"]));
        assert_eq!(m.encoded(1).unwrap(), resp(&[b"get", b"key1"]));
        assert_eq!(
            m.encoded(2).unwrap(),
            resp(&[b"HSET", b"h", b"f", b"a \"quoted\" \\ \x00\xff\n\r\t"])
        );
        assert_eq!(m.encoded(3).unwrap(), resp(&[b"SET", b"key3", b"v3"]));
        assert_eq!(m.encoded(4), None);
        assert_eq!(m.types(), ["SET", "GET", "HSET"]);
        let ids: Vec<_> = (0..4).map(|i| m.type_id(i)).collect();
        assert_eq!(ids, [0, 1, 2, 0]);
        assert_eq!(m.command_type(1), "GET");
        assert_eq!(m.command_type(9), "");
        assert_eq!(m.args(2)[3], b"a \"quoted\" \\ \x00\xff\n\r\t");
    }

    #[test]
    fn monitor_line_endings() {
        let m = MonitorInput::parse(
            "1 [0 a] \"SET\" \"a\" \"1\"\r\n2 [0 a] \"SET\" \"b\" \"2\"\r3 [0 a] \"GET\" \"c\"",
        )
        .unwrap();
        assert_eq!(m.len(), 3);
        assert_eq!(m.summary(), "Loaded 3 monitor commands from 3 total lines");
        assert_eq!(m.encoded(1).unwrap(), resp(&[b"SET", b"b", b"2"]));
        assert_eq!(m.encoded(2).unwrap(), resp(&[b"GET", b"c"]));
        // A BOM before the timestamp does not matter: the command starts at the quote.
        let m = MonitorInput::parse_bytes(b"\xef\xbb\xbf1 [0 a] \"PING\"\n").unwrap();
        assert_eq!(m.encoded(0).unwrap(), resp(&[b"PING"]));
    }

    #[test]
    fn monitor_capture_without_commands_is_an_error() {
        assert_eq!(
            MonitorInput::parse("OK\n\n").unwrap_err(),
            "no commands found in monitor input file: <memory>"
        );
        assert_eq!(
            MonitorInput::parse("1 [0 a] \"SET\" \"k\n").unwrap_err(),
            "no valid commands found in monitor input file: <memory> (1 malformed line(s) skipped)"
        );
        assert!(MonitorInput::parse("").is_err());
    }

    #[test]
    fn monitor_load_reads_a_file() {
        let path = std::env::temp_dir().join(format!("kvbench-monitor-{}.txt", std::process::id()));
        std::fs::write(&path, CAPTURE).unwrap();
        let m = MonitorInput::load(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(m.len(), 4);
        let err = MonitorInput::load(&path).unwrap_err();
        assert!(
            err.starts_with("failed to open monitor input file:")
                && err.contains("kvbench-monitor"),
            "{err}"
        );
    }

    #[test]
    fn monitor_line_n_sends_the_capture_verbatim() {
        let m = capture();
        let list = parse_commands(
            &[spec("__monitor_line3__"), spec("__monitor_line1__")],
            false,
            Some(&m),
        )
        .unwrap();
        let t = &list.commands[0].template;
        assert_eq!(list.commands[0].source, CommandSource::MonitorLine(3));
        assert_eq!(encode(t, b"ignored", b"ignored"), m.encoded(2).unwrap());
        assert_eq!(t.first_word(), b"HSET");
        assert!(!list.commands[0].has_key && !list.commands[0].has_data);
        let names: Vec<_> = list.rows.iter().map(|r| r.row.as_str()).collect();
        assert_eq!(names, ["Hsets", "Sets"]);

        let list = parse_commands(
            &[spec("__monitor_line3__"), spec("__monitor_line1__")],
            true,
            Some(&m),
        )
        .unwrap();
        let rows: Vec<_> = list
            .rows
            .iter()
            .map(|r| (r.row.as_str(), r.hist.as_str()))
            .collect();
        assert_eq!(
            rows,
            [
                ("Hset (line 3)s", "HSET (Line 3)"),
                ("Set (line 1)s", "SET (Line 1)")
            ]
        );
    }

    #[test]
    fn captured_placeholders_stay_literal() {
        let m = MonitorInput::parse("1 [0 a] \"SET\" \"__key__\" \"__data__\"\n").unwrap();
        let list = parse_commands(&[spec("__monitor_line1__")], false, Some(&m)).unwrap();
        assert_eq!(
            encode(&list.commands[0].template, b"K", b"D"),
            resp(&[b"SET", b"__key__", b"__data__"])
        );
    }

    #[test]
    fn monitor_placeholder_errors() {
        let m = capture();
        let err = |line: &str, m: Option<&MonitorInput>| {
            parse_commands(&[spec(line)], false, m).unwrap_err()
        };
        let range = "(valid range: __monitor_line1__ to __monitor_line4__ or __monitor_line@__)";
        for bad in [
            "__monitor_line0__",
            "__monitor_line5__",
            "__monitor_line1",
            "__monitor_line1_",
            "__monitor_line1__garbage",
            "__monitor_line1abc__",
            "__monitor_line__",
            "__monitor_line-1__",
        ] {
            assert_eq!(
                err(bad, Some(&m)),
                format!("invalid monitor placeholder '{bad}' {range}")
            );
        }
        assert!(err("__monitor_line1__ x", Some(&m)).contains("must be the whole command"));
        for line in [
            "__monitor_line1__",
            "__monitor_line@__",
            "__monitor_line1abc__",
        ] {
            assert!(err(line, None).contains("--monitor-input=FILE"), "{line}");
        }
        // Elsewhere than the first word it is plain text, as in memtier.
        let list = parse_commands(&[spec("get __monitor_line1__")], false, None).unwrap();
        assert_eq!(
            encode(&list.commands[0].template, b"", b""),
            resp(&[b"get", b"__monitor_line1__"])
        );
    }

    #[test]
    fn monitor_random_uses_rows_per_captured_command() {
        let m = capture();
        let list = parse_commands(
            &[
                spec("SET a b"),
                spec("__monitor_line@__"),
                spec("lpush l x"),
            ],
            false,
            Some(&m),
        )
        .unwrap();
        let names: Vec<_> = list.rows.iter().map(|r| r.row.as_str()).collect();
        assert_eq!(names, ["Sets", "Lpushs", "Gets", "Hsets"]);
        let random = &list.commands[1];
        assert_eq!(random.source, CommandSource::MonitorRandom);
        assert!(random.template.is_monitor_random());
        assert_eq!(random.template.first_word(), b"");
        // Capture commands SET, get, HSET, SET.
        let rows: Vec<_> = (0..5).map(|i| random.stat_row(Some(&m), i)).collect();
        assert_eq!(rows, [0, 2, 3, 0, 0]);
        for i in 0..5 {
            let mut out = Vec::new();
            let n = random
                .template
                .encode_resp(&mut out, b"k", b"d", Some(&m), i);
            assert_eq!(n, out.len());
            assert_eq!(out, m.encoded(i % 4).unwrap());
        }
        // Without the capture nothing is written and the row falls back to 0.
        let mut out = Vec::new();
        assert_eq!(
            random.template.encode_resp(&mut out, b"k", b"d", None, 0),
            0
        );
        assert!(out.is_empty());
        assert_eq!(random.stat_row(None, 1), 0);

        let list = parse_commands(
            &[
                spec("SET a b"),
                spec("__monitor_line@__"),
                spec("__monitor_line@__"),
            ],
            true,
            Some(&m),
        )
        .unwrap();
        let names: Vec<_> = list.rows.iter().map(|r| r.row.as_str()).collect();
        assert_eq!(names, ["Sets", "Sets", "Gets", "Hsets"]);
        assert_eq!(list.commands[1].row_name, "Monitor_randoms");
        for cmd in &list.commands[1..] {
            let rows: Vec<_> = (0..4).map(|i| cmd.stat_row(Some(&m), i)).collect();
            assert_eq!(rows, [1, 2, 3, 1]);
        }
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

    #[test]
    fn monitor_picks_sequentially_or_at_random() {
        let m = capture();
        let mut rng = SmallRng::seed_from_u64(1);
        let seq: Vec<_> = (0..6)
            .map(|_| m.pick(MonitorPattern::Sequential, &mut rng))
            .collect();
        assert_eq!(seq, [0, 1, 2, 3, 0, 1]);
        let mut seen = [false; 4];
        for _ in 0..200 {
            let i = m.pick(MonitorPattern::Random, &mut rng);
            seen[i] = true;
        }
        assert_eq!(seen, [true; 4]);
        let draws = |seed| {
            let mut rng = SmallRng::seed_from_u64(seed);
            (0..20)
                .map(|_| m.pick(MonitorPattern::Random, &mut rng))
                .collect::<Vec<_>>()
        };
        assert_eq!(draws(7), draws(7));
    }

    // ---- SCAN ----

    #[test]
    fn scan_cursor_parses_the_cursor_bulk() {
        assert_eq!(scan_cursor(b"0"), Some(0));
        assert_eq!(scan_cursor(b"17"), Some(17));
        assert_eq!(scan_cursor(b"18446744073709551615"), Some(u64::MAX));
        for bad in [
            &b""[..],
            b"18446744073709551616",
            b"-1",
            b"+1",
            b"1a",
            b" 1",
        ] {
            assert_eq!(scan_cursor(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn scan_iteration_rows_and_continuation() {
        let mut list =
            parse_commands(&[spec("SCAN 0 MATCH user:__key__* COUNT 100")], false, None).unwrap();
        list.enable_scan_iteration().unwrap();
        list.enable_scan_iteration().unwrap(); // idempotent
        let rows: Vec<_> = list
            .rows
            .iter()
            .map(|r| (r.row.as_str(), r.hist.as_str()))
            .collect();
        assert_eq!(
            rows,
            [("Scan 0s", "SCAN 0"), ("Scan <cursor>s", "SCAN <cursor>")]
        );
        assert_eq!(list.commands[0].stat_row(None, 0), 0);
        assert_eq!(list.commands[0].row_name, "Scan 0s");
        assert_eq!(list.type_column_width(), "SCAN <cursor>".len() + 1);
        let scan = list.scan.as_ref().unwrap();
        assert_eq!(scan.row, 1);
        let mut out = Vec::new();
        let n = scan
            .continuation
            .encode_resp_cursor(&mut out, 1234567, b"memtier-", b"");
        assert_eq!(n, out.len());
        assert_eq!(
            out,
            resp(&[
                b"SCAN",
                b"1234567",
                b"MATCH",
                b"user:memtier-*",
                b"COUNT",
                b"100"
            ])
        );
        assert_eq!(
            encode(&list.commands[0].template, b"memtier-", b""),
            resp(&[b"SCAN", b"0", b"MATCH", b"user:memtier-*", b"COUNT", b"100"])
        );
        // Line breakdown names the same two rows.
        let mut list = parse_commands(&[spec("scan 0")], true, None).unwrap();
        list.enable_scan_iteration().unwrap();
        let names: Vec<_> = list.rows.iter().map(|r| r.row.as_str()).collect();
        assert_eq!(names, ["Scan 0s", "Scan <cursor>s"]);
    }

    #[test]
    fn scan_iteration_errors() {
        let enable = |specs: &[CommandSpec]| {
            let mut list = parse_commands(specs, false, None).unwrap();
            list.enable_scan_iteration().unwrap_err()
        };
        assert!(enable(&[]).contains("requires --command"));
        assert!(enable(&[spec("scan 0"), spec("get k")]).contains("exactly one"));
        assert!(enable(&[spec("get k")]).contains("requires the command to be a SCAN command"));
        assert!(enable(&[spec("scan")]).contains("at least a cursor"));
        let m = capture();
        let mut list = parse_commands(&[spec("__monitor_line@__")], false, Some(&m)).unwrap();
        assert!(list.enable_scan_iteration().is_err());
    }

    #[test]
    fn scan_state_follows_cursors() {
        let mut s = ScanState::new(0);
        assert_eq!(s.next_cursor(), None);
        s.on_reply(Some(17));
        assert_eq!(s.next_cursor(), Some(17));
        s.on_reply(Some(42));
        assert_eq!(s.next_cursor(), Some(42));
        s.on_reply(Some(0));
        assert_eq!(s.next_cursor(), None);
        s.on_reply(Some(5));
        s.on_reply(None);
        assert_eq!(s.next_cursor(), None);

        // At most two continuations per cycle.
        let mut s = ScanState::new(2);
        let mut sent = Vec::new();
        for reply in [7, 8, 9, 10, 11, 12] {
            sent.push(s.next_cursor());
            s.on_reply(Some(reply));
        }
        assert_eq!(sent, [None, Some(7), Some(8), None, Some(10), Some(11)]);
    }
}
