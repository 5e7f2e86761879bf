//! Imported data (`--data-import`): memtier's CSV dump of memcached items, loaded once into
//! one buffer that every client reads keys, values and expiries from.
//!
//! # The file format
//!
//! memtier_benchmark's import format (its `file_io.cpp` reader and writer, and its
//! `README.import`): a header line, then one line per item with ten comma-separated
//! columns. Each item below is one line; the third item's value holds a line break, so it
//! spans two lines of the file.
//!
//! ```text
//! dumpflags, time, exptime, nbytes, nsuffix, it_flags, clsid, nkey, key, data
//! 0, 0, 0, 7, 0, 0, 0, 5, "alpha", "hello"
//! 0, 0, 3600, 10, 0, 0, 0, 4, "beta", "say ""hi"""
//! 0, 0, 0, 8, 0, 0, 0, 5, "gamma", "two
//! ln"
//! 0, 0, 60, 19, 200, 0, 1, 11, 'doxrpshny', 'asdfghjklqwerty'
//! ```
//!
//! - **Header.** The first line must begin with `dumpflags, time, exptime`; memtier
//!   compares only those 24 bytes and ignores the rest of the line.
//! - **Eight numbers.** Unsigned decimal (`u32`), each followed by a comma. memtier reads
//!   them with `fscanf("%u, %u, ...")`, so whitespace (even a line break) may come before
//!   a number and after a comma. Only three matter:
//!   - `exptime`: the item's expiry in seconds, sent with the SET as is (0 = none).
//!     `--no-expiry` ignores it. (In a real memcached dump it counts from the server's
//!     start; memtier does not convert it, and neither do we.)
//!   - `nbytes`: the value's length **plus 2**: memcached counts the value's trailing
//!     `\r\n`, which the file does not hold (`"hello"` has `nbytes` 7). So it is at least 2.
//!   - `nkey`: the key's length in bytes.
//!
//!   `dumpflags`, `time`, `nsuffix`, `it_flags` and `clsid` are read and ignored.
//! - **Key, then data.** Each column is either quoted, `"..."` with a `"` inside written
//!   as `""`, and may then hold any byte (commas, CR, LF, NUL: binary safe); or unquoted,
//!   and then holds no comma, quote, CR or LF (the `'doxrpshny'` row above, from memtier's
//!   README: the single quotes are part of the key, hence `nkey` 11). A column holds
//!   exactly `nkey` (key) or `nbytes - 2` (data) bytes once unquoted. A comma and spaces
//!   separate key from data; the line ends after the data with `\n` or `\r\n` (or the end
//!   of the file).
//! - **`--generate-keys`.** The key column is still read and checked, then dropped: item
//!   `i` (0-based, in file order) gets the key `<key-prefix><key-minimum + i>`, as
//!   [`crate::workload::keys::write_key`] spells it.
//!
//! Where kvbench differs from memtier, it is stricter where memtier goes wrong and
//! accepts more where nothing is ambiguous:
//! - A key column whose length differs from `nkey` is an error; memtier only warns and
//!   then sends `nkey` bytes of whatever its buffer held.
//! - A file with no items is an error; memtier loads it and aborts on the first request.
//! - Errors name the file and the real line (`data.csv:7: ...`); memtier counts one line
//!   per item, so its numbers drift after a value with line breaks in it.
//! - Spaces before a comma, no space after the key's comma, and blank lines are accepted.
//! - With `--generate-keys` memtier gives the n-th SET of each connection the n-th item's
//!   value under whatever key the key pattern picks, so which value a key holds depends
//!   on timing. kvbench ties item `i` to key id `key-minimum + i` for good, so every key
//!   always holds the same value and `--data-verify` can check it.

use crate::workload::keys::MEMCACHE_MAX_KEY_LEN;
use std::io::Write as _;
use std::path::Path;

/// What the 24 bytes of the first line must be (memtier compares nothing else).
pub const HEADER_PREFIX: &[u8] = b"dumpflags, time, exptime";

/// The whole header line memtier writes (and [`write_import_file`] writes).
pub const HEADER_LINE: &str =
    "dumpflags, time, exptime, nbytes, nsuffix, it_flags, clsid, nkey, key, data";

/// The eight numeric columns, in order, as errors name them.
const NUMBER_COLUMNS: [&str; 8] = [
    "dumpflags",
    "time",
    "exptime",
    "nbytes",
    "nsuffix",
    "it_flags",
    "clsid",
    "nkey",
];
const EXPTIME: usize = 2;
const NBYTES: usize = 3;
const NKEY: usize = 7;

/// One item as a client sends it: borrowed from [`ImportedData`], never copied.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ImportedItem<'a> {
    pub key: &'a [u8],
    pub value: &'a [u8],
    /// Expiry in seconds to send with the SET; 0 for none.
    pub expiry_secs: u32,
}

/// How [`ImportedData::parse`] turns rows into items (`--generate-keys`, `--no-expiry`,
/// `--key-prefix`, `--key-minimum`).
#[derive(Clone, Copy, Debug)]
pub struct ImportOptions<'a> {
    /// Replace each file key with `key_prefix` + (`key_min` + item index).
    pub generate_keys: bool,
    /// Send every item without an expiry, whatever its `exptime`.
    pub no_expiry: bool,
    pub key_prefix: &'a str,
    pub key_min: u64,
}

/// Where one item lives in [`ImportedData::bytes`]: its key, then its value right after.
#[derive(Clone, Copy, Debug)]
struct Entry {
    start: usize,
    key_len: u32,
    value_len: u32,
    expiry_secs: u32,
}

/// Every imported item, in file order: all keys and values in one contiguous buffer
/// plus a small fixed-size entry per item, so a million items are two allocations, not
/// two million.
#[derive(Clone, Debug)]
pub struct ImportedData {
    bytes: Vec<u8>,
    entries: Vec<Entry>,
    max_key_len: usize,
    max_value_len: usize,
    generated_keys: bool,
}

impl ImportedData {
    /// Reads and parses the import file at `path` (see the module docs for the format).
    ///
    /// With `generate_keys`, item `i` gets the key `key_prefix` + (`key_min` + `i`);
    /// with `no_expiry`, every item's expiry is 0. Errors name the file and, for a
    /// malformed file, the line: `items.csv:3: nbytes is 1; ...`.
    pub fn load(
        path: &Path,
        generate_keys: bool,
        no_expiry: bool,
        key_prefix: &str,
        key_min: u64,
    ) -> Result<ImportedData, String> {
        let name = path.display().to_string();
        let src = std::fs::read(path).map_err(|e| format!("cannot read {name}: {e}"))?;
        let options = ImportOptions {
            generate_keys,
            no_expiry,
            key_prefix,
            key_min,
        };
        ImportedData::parse(&name, &src, &options)
    }

    /// Parses the text of an import file; `name` is what errors call the file.
    pub fn parse(name: &str, src: &[u8], options: &ImportOptions) -> Result<ImportedData, String> {
        Parser::new(name, src).parse(options)
    }

    /// Number of items (never 0: a file without items does not load).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there are no items; always false for data that loaded.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Item `index`, taken modulo [`len`](Self::len) so that a running counter cycles
    /// through the file as memtier does. Slices of the one buffer: no copy, no allocation.
    pub fn item(&self, index: usize) -> ImportedItem<'_> {
        let Some(i) = index.checked_rem(self.entries.len()) else {
            return ImportedItem::default();
        };
        let e = self.entries[i];
        let key_end = e.start + e.key_len as usize;
        ImportedItem {
            key: &self.bytes[e.start..key_end],
            value: &self.bytes[key_end..key_end + e.value_len as usize],
            expiry_secs: e.expiry_secs,
        }
    }

    /// The longest key, for sizing request buffers once.
    pub fn max_key_len(&self) -> usize {
        self.max_key_len
    }

    /// The longest value, for sizing request buffers once.
    pub fn max_value_len(&self) -> usize {
        self.max_value_len
    }

    /// Bytes of all keys and values together.
    pub fn total_bytes(&self) -> usize {
        self.bytes.len()
    }

    /// Whether the keys were generated (`--generate-keys`) rather than read from the file.
    pub fn generated_keys(&self) -> bool {
        self.generated_keys
    }

    /// Checks every key against memcached's text protocol, which cannot carry a key that
    /// is empty, longer than 250 bytes, or holds a space or control character. The error
    /// names the first such item (counting from 1, in file order).
    pub fn check_memcache_text_keys(&self) -> Result<(), String> {
        for i in 0..self.len() {
            let key = self.item(i).key;
            let problem = if key.is_empty() {
                Some("is empty".to_string())
            } else if key.len() > MEMCACHE_MAX_KEY_LEN {
                Some(format!(
                    "is {} bytes, above memcached's {MEMCACHE_MAX_KEY_LEN}",
                    key.len()
                ))
            } else if key.iter().any(|&b| b <= b' ' || b == 0x7f) {
                Some("holds a space or control character".to_string())
            } else {
                None
            };
            if let Some(problem) = problem {
                return Err(format!(
                    "imported item {} cannot be sent with the memcache_text protocol: its key [{}] {problem}",
                    i + 1,
                    key.escape_ascii()
                ));
            }
        }
        Ok(())
    }

    /// The raw buffer, for tests of the storage layout.
    #[cfg(test)]
    fn buffer(&self) -> &[u8] {
        &self.bytes
    }
}

/// A cursor over the file that knows its line number.
struct Parser<'a> {
    name: &'a str,
    src: &'a [u8],
    pos: usize,
    /// 1-based line of `pos`.
    line: usize,
}

impl<'a> Parser<'a> {
    fn new(name: &'a str, src: &'a [u8]) -> Self {
        Parser {
            name,
            src,
            pos: 0,
            line: 1,
        }
    }

    fn error(&self, message: impl std::fmt::Display) -> String {
        format!("{}:{}: {message}", self.name, self.line)
    }

    fn peek(&self) -> Option<u8> {
        self.src.get(self.pos).copied()
    }

    fn bump(&mut self) -> Option<u8> {
        let c = self.peek()?;
        self.pos += 1;
        if c == b'\n' {
            self.line += 1;
        }
        Some(c)
    }

    /// Skips spaces and tabs.
    fn skip_blanks(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.pos += 1;
        }
    }

    /// Skips all whitespace, line breaks included (what `fscanf`'s `%u` and ` ` skip).
    fn skip_whitespace(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\r' | b'\n')) {
            self.bump();
        }
    }

    fn parse(mut self, options: &ImportOptions) -> Result<ImportedData, String> {
        self.header()?;
        let mut data = ImportedData {
            // The values take about as much room as the file; keys and quotes make up
            // the difference, so this is close to one allocation.
            bytes: Vec::with_capacity(self.src.len()),
            entries: Vec::new(),
            max_key_len: 0,
            max_value_len: 0,
            generated_keys: options.generate_keys,
        };
        let mut digits = itoa::Buffer::new();
        loop {
            self.skip_whitespace();
            if self.peek().is_none() {
                break;
            }
            let index = data.entries.len();
            // Item indices must fit a u32 (the verifier's key index stores them so).
            if index >= u32::MAX as usize {
                return Err(self.error(format!(
                    "more than {} items; kvbench imports at most that many",
                    u32::MAX
                )));
            }
            let numbers = self.numbers()?;

            let start = data.bytes.len();
            let nkey = numbers[NKEY] as usize;
            if options.generate_keys {
                self.column(nkey, "key", None)?;
                let id = options.key_min.checked_add(index as u64).ok_or_else(|| {
                    self.error(format!(
                        "--generate-keys: key id {} + {index} is above {}",
                        options.key_min,
                        u64::MAX
                    ))
                })?;
                data.bytes.extend_from_slice(options.key_prefix.as_bytes());
                data.bytes.extend_from_slice(digits.format(id).as_bytes());
            } else {
                self.column(nkey, "key", Some(&mut data.bytes))?;
            }
            let key_len = data.bytes.len() - start;

            self.skip_blanks();
            match self.peek() {
                Some(b',') => self.pos += 1,
                other => {
                    return Err(self.error(format!(
                        "expected ',' after the key column, found {}",
                        describe(other)
                    )));
                }
            }
            self.skip_blanks();

            let nbytes = numbers[NBYTES];
            let Some(value_len) = nbytes.checked_sub(2) else {
                return Err(self.error(format!(
                    "nbytes is {nbytes}; it counts the value plus memcached's trailing \\r\\n, so it is at least 2"
                )));
            };
            self.column(value_len as usize, "data", Some(&mut data.bytes))?;
            self.end_of_line()?;

            let key_len = u32::try_from(key_len)
                .map_err(|_| self.error("--generate-keys: generated key too long"))?;
            data.max_key_len = data.max_key_len.max(key_len as usize);
            data.max_value_len = data.max_value_len.max(value_len as usize);
            data.entries.push(Entry {
                start,
                key_len,
                value_len,
                expiry_secs: if options.no_expiry {
                    0
                } else {
                    numbers[EXPTIME]
                },
            });
        }
        if data.entries.is_empty() {
            return Err(self.error("no items after the header line"));
        }
        data.bytes.shrink_to_fit();
        Ok(data)
    }

    fn header(&mut self) -> Result<(), String> {
        if self.src.is_empty() {
            return Err(self.error(format!(
                "empty file; an import file begins with the line \"{HEADER_LINE}\""
            )));
        }
        if !self.src.starts_with(HEADER_PREFIX) {
            return Err(self.error(format!(
                "not a memtier import file: the first line must begin with \"{}\"",
                String::from_utf8_lossy(HEADER_PREFIX)
            )));
        }
        while let Some(c) = self.bump() {
            if c == b'\n' {
                break;
            }
        }
        Ok(())
    }

    /// The eight numbers and the comma after each.
    fn numbers(&mut self) -> Result<[u32; 8], String> {
        let mut out = [0u32; 8];
        for (slot, column) in out.iter_mut().zip(NUMBER_COLUMNS) {
            self.skip_whitespace();
            let begin = self.pos;
            let mut value: u32 = 0;
            while let Some(c @ b'0'..=b'9') = self.peek() {
                value = value
                    .checked_mul(10)
                    .and_then(|v| v.checked_add(u32::from(c - b'0')))
                    .ok_or_else(|| {
                        self.error(format!(
                            "{column} is above {}, the largest allowed",
                            u32::MAX
                        ))
                    })?;
                self.pos += 1;
            }
            if self.pos == begin {
                return Err(self.error(format!(
                    "expected a number for the {column} column, found {}",
                    describe(self.peek())
                )));
            }
            self.skip_blanks();
            if self.peek() != Some(b',') {
                return Err(self.error(format!(
                    "expected ',' after the {column} column, found {}",
                    describe(self.peek())
                )));
            }
            self.pos += 1;
            *slot = value;
        }
        // memtier's trailing ", " in its scanf format skips any whitespace here.
        self.skip_whitespace();
        Ok(out)
    }

    /// A key or data column of exactly `len` bytes once unquoted, appended to `out`
    /// (or only checked, when `out` is `None`). Leaves the cursor on the byte after it.
    fn column(&mut self, len: usize, what: &str, out: Option<&mut Vec<u8>>) -> Result<(), String> {
        let says = if what == "key" { "nkey" } else { "nbytes - 2" };
        if self.peek() == Some(b'"') {
            self.pos += 1;
            self.quoted(len, what, says, out)
        } else {
            self.unquoted(len, what, says, out)
        }
    }

    /// The inside of a quoted column (the opening quote already read) and its closing
    /// quote. The length is what decides where it ends, as in memtier: after `len`
    /// bytes, with each `""` counting as one `"`, the closing quote must follow.
    fn quoted(
        &mut self,
        len: usize,
        what: &str,
        says: &str,
        mut out: Option<&mut Vec<u8>>,
    ) -> Result<(), String> {
        if let Some(out) = out.as_deref_mut() {
            // `len` is only what the line claims: never reserve more than the file holds.
            out.reserve(len.min(self.src.len() - self.pos));
        }
        let mut got = 0usize;
        while got < len {
            let c = match self.bump() {
                None => {
                    return Err(self.error(format!(
                        "the file ends inside the quoted {what} column ({got} of {len} bytes read)"
                    )));
                }
                Some(b'"') if self.peek() == Some(b'"') => {
                    self.pos += 1;
                    b'"'
                }
                Some(b'"') => {
                    return Err(self.error(format!(
                        "the {what} column is {got} bytes, but {says} says {len}"
                    )));
                }
                Some(c) => c,
            };
            if let Some(out) = out.as_deref_mut() {
                out.push(c);
            }
            got += 1;
        }
        match self.bump() {
            Some(b'"') if self.peek() != Some(b'"') => Ok(()),
            None => Err(self.error(format!(
                "the file ends before the closing quote of the {what} column"
            ))),
            Some(_) => Err(self.error(format!(
                "the {what} column is longer than the {len} bytes {says} says"
            ))),
        }
    }

    /// An unquoted column: `len` bytes, none of them a comma, quote, CR or LF.
    fn unquoted(
        &mut self,
        len: usize,
        what: &str,
        says: &str,
        out: Option<&mut Vec<u8>>,
    ) -> Result<(), String> {
        let rest = &self.src[self.pos..];
        let stop = rest
            .iter()
            .take(len)
            .position(|&c| matches!(c, b',' | b'"' | b'\r' | b'\n'))
            .or((rest.len() < len).then_some(rest.len()));
        if let Some(got) = stop {
            self.pos += got;
            return Err(if self.peek() == Some(b'"') {
                self.unexpected_quote(what)
            } else {
                self.error(format!(
                    "the {what} column is {got} bytes, but {says} says {len}"
                ))
            });
        }
        if let Some(out) = out {
            out.extend_from_slice(&rest[..len]);
        }
        // No line break inside, so the line number stays right.
        self.pos += len;
        if self.peek() == Some(b'"') {
            return Err(self.unexpected_quote(what));
        }
        Ok(())
    }

    fn unexpected_quote(&self, what: &str) -> String {
        self.error(format!(
            "unexpected '\"' in the unquoted {what} column; quote the column to hold one"
        ))
    }

    /// Optional blanks, then `\n`, `\r\n` or the end of the file.
    fn end_of_line(&mut self) -> Result<(), String> {
        self.skip_blanks();
        if self.peek() == Some(b'\r') {
            self.pos += 1;
        }
        match self.peek() {
            None => Ok(()),
            Some(b'\n') => {
                self.bump();
                Ok(())
            }
            other => Err(self.error(format!(
                "expected the end of the line after the data column, found {}",
                describe(other)
            ))),
        }
    }
}

/// How an error message shows the byte it found.
fn describe(c: Option<u8>) -> String {
    match c {
        None => "the end of the file".to_string(),
        Some(b'\n') | Some(b'\r') => "the end of the line".to_string(),
        Some(c) if c.is_ascii_graphic() || c == b' ' => format!("'{}'", c as char),
        Some(c) => format!("byte 0x{c:02x}"),
    }
}

/// Renders items in memtier's import format, as its `file_writer` does: the full header,
/// then per item `0, 0, <exptime>, <len + 2>, 0, 0, 0, <nkey>, "<key>", "<data>"` with
/// both columns quoted (a `"` doubled), so keys and values may hold any bytes.
pub fn render_import_file<'a>(items: impl IntoIterator<Item = ImportedItem<'a>>) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(HEADER_LINE.as_bytes());
    out.push(b'\n');
    let mut n = itoa::Buffer::new();
    for item in items {
        out.extend_from_slice(b"0, 0, ");
        out.extend_from_slice(n.format(item.expiry_secs).as_bytes());
        out.extend_from_slice(b", ");
        out.extend_from_slice(n.format(item.value.len() as u64 + 2).as_bytes());
        out.extend_from_slice(b", 0, 0, 0, ");
        out.extend_from_slice(n.format(item.key.len()).as_bytes());
        out.extend_from_slice(b", ");
        push_quoted(&mut out, item.key);
        out.extend_from_slice(b", ");
        push_quoted(&mut out, item.value);
        out.push(b'\n');
    }
    out
}

/// Writes [`render_import_file`]'s output to `path`.
pub fn write_import_file<'a>(
    path: &Path,
    items: impl IntoIterator<Item = ImportedItem<'a>>,
) -> Result<(), String> {
    let bytes = render_import_file(items);
    std::fs::File::create(path)
        .and_then(|mut f| f.write_all(&bytes))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

fn push_quoted(out: &mut Vec<u8>, bytes: &[u8]) {
    out.push(b'"');
    for &b in bytes {
        out.push(b);
        if b == b'"' {
            out.push(b'"');
        }
    }
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng, rngs::SmallRng};
    use std::path::PathBuf;
    use std::sync::atomic::{AtomicUsize, Ordering};

    const PLAIN: ImportOptions<'static> = ImportOptions {
        generate_keys: false,
        no_expiry: false,
        key_prefix: "memtier-",
        key_min: 0,
    };

    /// Found with the `import` fuzz target (under AddressSanitizer, which reports any
    /// allocation above 2 GB): a quoted column reserved the length its line claimed, so a
    /// 40-byte file claiming a 4 GB key asked for 4 GB before finding the file ends.
    #[test]
    fn a_claimed_length_reserves_no_more_than_the_file_holds() {
        let src = b"dumpflags, time, exptime\n0,0,0,2,0,0,0,4294967295,\"ab";
        let err = ImportedData::parse("claims.csv", src, &PLAIN).expect_err("a truncated file");
        assert!(err.contains("ends inside the quoted key column"), "{err}");
        let mut parser = Parser::new("claims.csv", src);
        parser.pos = src.len() - 2;
        let mut out = Vec::new();
        let _ = parser.quoted(u32::MAX as usize, "key", "nkey", Some(&mut out));
        assert!(out.capacity() < 1024, "reserved {} bytes", out.capacity());
    }

    fn parse(src: &str) -> Result<ImportedData, String> {
        parse_bytes(src.as_bytes(), &PLAIN)
    }

    fn parse_bytes(src: &[u8], options: &ImportOptions) -> Result<ImportedData, String> {
        ImportedData::parse("t.csv", src, options)
    }

    fn items(data: &ImportedData) -> Vec<(Vec<u8>, Vec<u8>, u32)> {
        (0..data.len())
            .map(|i| {
                let it = data.item(i);
                (it.key.to_vec(), it.value.to_vec(), it.expiry_secs)
            })
            .collect()
    }

    fn err(src: &str) -> String {
        match parse(src) {
            Ok(d) => panic!("parsed {} items from {src:?}", d.len()),
            Err(e) => e,
        }
    }

    fn temp_path(what: &str) -> PathBuf {
        static N: AtomicUsize = AtomicUsize::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        std::env::temp_dir().join(format!(
            "kvbench-import-{what}-{}-{n}.csv",
            std::process::id()
        ))
    }

    const H: &str = "dumpflags, time, exptime, nbytes, nsuffix, it_flags, clsid, nkey, key, data\n";

    #[test]
    fn module_doc_example_parses() {
        let src = format!(
            "{H}0, 0, 0, 7, 0, 0, 0, 5, \"alpha\", \"hello\"\n\
             0, 0, 3600, 10, 0, 0, 0, 4, \"beta\", \"say \"\"hi\"\"\"\n\
             0, 0, 0, 8, 0, 0, 0, 5, \"gamma\", \"two\nln\"\n\
             0, 0, 60, 19, 200, 0, 1, 11, 'doxrpshny', 'asdfghjklqwerty'\n"
        );
        let data = parse(&src).unwrap();
        assert_eq!(
            items(&data),
            vec![
                (b"alpha".to_vec(), b"hello".to_vec(), 0),
                (b"beta".to_vec(), b"say \"hi\"".to_vec(), 3600),
                (b"gamma".to_vec(), b"two\nln".to_vec(), 0),
                (b"'doxrpshny'".to_vec(), b"'asdfghjklqwerty'".to_vec(), 60),
            ]
        );
        assert_eq!(data.len(), 4);
        assert!(!data.is_empty());
        assert_eq!(data.max_key_len(), 11);
        assert_eq!(data.max_value_len(), 17);
        assert!(!data.generated_keys());
    }

    #[test]
    fn short_header_and_unquoted_columns_without_expiry() {
        // Only the first 24 bytes of the header are checked, as memtier does.
        let data = parse("dumpflags, time, exptime\n1, 2, 0, 5, 4, 5, 6, 2, k1, abc\n").unwrap();
        assert_eq!(items(&data), vec![(b"k1".to_vec(), b"abc".to_vec(), 0)]);
        let data =
            parse("dumpflags, time, exptime and anything else\n0,0,0,2,0,0,0,1,k,\n").unwrap();
        assert_eq!(items(&data), vec![(b"k".to_vec(), b"".to_vec(), 0)]);
    }

    #[test]
    fn binary_safe_quoted_values_and_keys() {
        let value: &[u8] = b"a,b\r\nEND\r\n\0\"\xff\xfe\"\"";
        let key: &[u8] = b"k\"ey,1\n";
        let src = render_import_file([ImportedItem {
            key,
            value,
            expiry_secs: 9,
        }]);
        let data = parse_bytes(&src, &PLAIN).unwrap();
        assert_eq!(items(&data), vec![(key.to_vec(), value.to_vec(), 9)]);
    }

    #[test]
    fn line_endings_blank_lines_and_missing_final_newline() {
        let src = format!(
            "{}\r\n\r\n0, 0, 5, 3, 0, 0, 0, 1, \"a\", \"x\"\r\n\n\n0, 0, 6, 4, 0, 0, 0, 1, \"b\",\"yz\"",
            H.trim_end()
        );
        let data = parse(&src).unwrap();
        assert_eq!(
            items(&data),
            vec![
                (b"a".to_vec(), b"x".to_vec(), 5),
                (b"b".to_vec(), b"yz".to_vec(), 6)
            ]
        );
        // Spaces before commas, tabs, trailing blanks and trailing blank lines.
        let src = format!("{H}0 ,\t0 , 0 , 3 , 0 , 0 , 0 , 1 , \"a\" ,\t\"x\"  \t\n\n  \n");
        assert_eq!(
            items(&parse(&src).unwrap()),
            vec![(b"a".to_vec(), b"x".to_vec(), 0)]
        );
        // fscanf skips line breaks between numbers too.
        let src = format!("{H}0, 0, 0,\n3, 0, 0, 0, 1,\n\"a\", \"x\"\n");
        assert_eq!(
            items(&parse(&src).unwrap()),
            vec![(b"a".to_vec(), b"x".to_vec(), 0)]
        );
    }

    #[test]
    fn empty_key_and_value() {
        let data = parse(&format!("{H}0, 0, 0, 2, 0, 0, 0, 0, \"\", \"\"\n")).unwrap();
        assert_eq!(items(&data), vec![(vec![], vec![], 0)]);
        let data = parse(&format!("{H}0, 0, 0, 2, 0, 0, 0, 0, , \n")).unwrap();
        assert_eq!(items(&data), vec![(vec![], vec![], 0)]);
    }

    #[test]
    fn no_expiry_zeroes_every_expiry() {
        let src = format!(
            "{H}0, 0, 100, 3, 0, 0, 0, 1, \"a\", \"x\"\n0, 0, 4294967295, 3, 0, 0, 0, 1, \"b\", \"y\"\n"
        );
        let kept = parse(&src).unwrap();
        assert_eq!(kept.item(0).expiry_secs, 100);
        assert_eq!(kept.item(1).expiry_secs, u32::MAX);
        let options = ImportOptions {
            no_expiry: true,
            ..PLAIN
        };
        let dropped = parse_bytes(src.as_bytes(), &options).unwrap();
        assert!((0..dropped.len()).all(|i| dropped.item(i).expiry_secs == 0));
        assert_eq!(dropped.item(1).value, b"y");
    }

    #[test]
    fn generate_keys_replaces_file_keys_with_prefix_and_id() {
        let src = format!(
            "{H}0, 0, 7, 3, 0, 0, 0, 5, \"file1\", \"x\"\n0, 0, 0, 4, 0, 0, 0, 3, odd, yz\n0, 0, 0, 2, 0, 0, 0, 0, \"\", \"\"\n"
        );
        let options = ImportOptions {
            generate_keys: true,
            no_expiry: false,
            key_prefix: "pre:",
            key_min: 98,
        };
        let data = parse_bytes(src.as_bytes(), &options).unwrap();
        assert!(data.generated_keys());
        assert_eq!(
            items(&data),
            vec![
                (b"pre:98".to_vec(), b"x".to_vec(), 7),
                (b"pre:99".to_vec(), b"yz".to_vec(), 0),
                (b"pre:100".to_vec(), b"".to_vec(), 0),
            ]
        );
        assert_eq!(data.max_key_len(), 7);
        // The file's key column is still checked.
        let bad = format!("{H}0, 0, 0, 3, 0, 0, 0, 9, \"short\", \"x\"\n");
        let e = parse_bytes(bad.as_bytes(), &options).unwrap_err();
        assert!(e.contains("key column is 5 bytes, but nkey says 9"), "{e}");
        // Key ids that would pass u64::MAX are refused, not wrapped.
        let two = format!("{H}0, 0, 0, 3, 0, 0, 0, 1, a, x\n0, 0, 0, 3, 0, 0, 0, 1, b, y\n");
        let options = ImportOptions {
            key_min: u64::MAX,
            ..options
        };
        let e = parse_bytes(two.as_bytes(), &options).unwrap_err();
        assert!(e.starts_with("t.csv:3: --generate-keys"), "{e}");
    }

    #[test]
    fn all_items_share_one_contiguous_buffer() {
        let mut rng = SmallRng::seed_from_u64(3);
        let owned: Vec<(Vec<u8>, Vec<u8>, u32)> = (0..500)
            .map(|i| {
                let klen = rng.random_range(0..20);
                let vlen = rng.random_range(0..300);
                let key = (0..klen).map(|_| rng.random::<u8>()).collect();
                let value = (0..vlen).map(|_| rng.random::<u8>()).collect();
                (key, value, i)
            })
            .collect();
        let src = render_import_file(owned.iter().map(|(k, v, e)| ImportedItem {
            key: k,
            value: v,
            expiry_secs: *e,
        }));
        let data = parse_bytes(&src, &PLAIN).unwrap();
        assert_eq!(items(&data), owned);

        // Every key and value is a slice of the one buffer, laid end to end in file
        // order: key 0, value 0, key 1, value 1, ... with nothing in between.
        let buf = data.buffer();
        let base = buf.as_ptr() as usize;
        let mut expect = base;
        for i in 0..data.len() {
            let it = data.item(i);
            assert_eq!(it.key.as_ptr() as usize, expect, "item {i} key");
            expect += it.key.len();
            assert_eq!(it.value.as_ptr() as usize, expect, "item {i} value");
            expect += it.value.len();
        }
        assert_eq!(expect, base + buf.len());
        let total: usize = owned.iter().map(|(k, v, _)| k.len() + v.len()).sum();
        assert_eq!(data.total_bytes(), total);
        assert_eq!(
            data.max_key_len(),
            owned.iter().map(|o| o.0.len()).max().unwrap()
        );
        assert_eq!(
            data.max_value_len(),
            owned.iter().map(|o| o.1.len()).max().unwrap()
        );
    }

    #[test]
    fn item_index_wraps_around() {
        let data = parse(&format!(
            "{H}0, 0, 0, 3, 0, 0, 0, 1, a, x\n0, 0, 0, 3, 0, 0, 0, 1, b, y\n"
        ))
        .unwrap();
        assert_eq!(data.item(2), data.item(0));
        assert_eq!(data.item(5).key, b"b");
        assert_eq!(data.item(usize::MAX).key, data.item(usize::MAX % 2).key);
    }

    #[test]
    fn load_reads_a_file_and_write_import_file_round_trips() {
        let path = temp_path("roundtrip");
        let owned = [
            (b"memtier-1".as_slice(), b"hello".as_slice(), 0u32),
            (b"with space".as_slice(), b"\r\nEND\r\n".as_slice(), 30),
            (b"q\"".as_slice(), b"\"\"".as_slice(), 1),
        ];
        write_import_file(
            &path,
            owned.iter().map(|&(key, value, expiry_secs)| ImportedItem {
                key,
                value,
                expiry_secs,
            }),
        )
        .unwrap();
        let text = std::fs::read(&path).unwrap();
        assert!(text.starts_with(format!("{HEADER_LINE}\n").as_bytes()));
        assert!(
            String::from_utf8_lossy(&text)
                .contains("\n0, 0, 0, 7, 0, 0, 0, 9, \"memtier-1\", \"hello\"\n")
        );
        let data = ImportedData::load(&path, false, false, "", 0).unwrap();
        let got: Vec<(&[u8], &[u8], u32)> = (0..data.len())
            .map(|i| {
                let it = data.item(i);
                (it.key, it.value, it.expiry_secs)
            })
            .collect();
        assert_eq!(got, owned);
        let data = ImportedData::load(&path, true, true, "k", 1).unwrap();
        assert_eq!(data.item(2).key, b"k3");
        assert_eq!(data.item(2).expiry_secs, 0);
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn missing_file_is_named() {
        let path = temp_path("missing");
        let e = ImportedData::load(&path, false, false, "", 0).unwrap_err();
        assert!(
            e.starts_with(&format!("cannot read {}: ", path.display())),
            "{e}"
        );
        let e = write_import_file(Path::new("/nonexistent-dir/x.csv"), []).unwrap_err();
        assert!(
            e.starts_with("cannot write /nonexistent-dir/x.csv: "),
            "{e}"
        );
    }

    #[test]
    fn header_errors() {
        assert_eq!(
            err(""),
            format!("t.csv:1: empty file; an import file begins with the line \"{HEADER_LINE}\"")
        );
        assert_eq!(
            err("key,value\nfoo,bar\n"),
            "t.csv:1: not a memtier import file: the first line must begin with \"dumpflags, time, exptime\""
        );
        assert_eq!(err(H), "t.csv:2: no items after the header line");
        assert_eq!(
            err(&format!("{H}\n\n  \n")),
            "t.csv:5: no items after the header line"
        );
    }

    #[test]
    fn number_errors() {
        assert_eq!(
            err(&format!("{H}0, 0, x, 3, 0, 0, 0, 1, a, x\n")),
            "t.csv:2: expected a number for the exptime column, found 'x'"
        );
        assert_eq!(
            err(&format!("{H}0, 0, -1, 3, 0, 0, 0, 1, a, x\n")),
            "t.csv:2: expected a number for the exptime column, found '-'"
        );
        assert_eq!(
            err(&format!("{H}0, 0, 4294967296, 3, 0, 0, 0, 1, a, x\n")),
            "t.csv:2: exptime is above 4294967295, the largest allowed"
        );
        assert_eq!(
            err(&format!("{H}0, 0, 0, 3; 0, 0, 0, 1, a, x\n")),
            "t.csv:2: expected ',' after the nbytes column, found ';'"
        );
        assert_eq!(
            err(&format!("{H}0, 0, 0, 3, 0, 0, 0\n")),
            "t.csv:2: expected ',' after the clsid column, found the end of the line"
        );
        assert_eq!(
            err(&format!("{H}0, 0, 0, 3, 0, 0, 0, 1")),
            "t.csv:2: expected ',' after the nkey column, found the end of the file"
        );
        assert_eq!(
            err(&format!("{H}0, 0, 0, 3, 0, 0, 0, 1\u{1}")),
            "t.csv:2: expected ',' after the nkey column, found byte 0x01"
        );
        assert_eq!(
            err(&format!("{H}0, 0, 0, 1, 0, 0, 0, 1, a, \n")),
            "t.csv:2: nbytes is 1; it counts the value plus memcached's trailing \\r\\n, so it is at least 2"
        );
    }

    #[test]
    fn key_column_errors() {
        // Quoted, shorter than nkey.
        assert_eq!(
            err(&format!("{H}0, 0, 0, 3, 0, 0, 0, 4, \"abc\", \"x\"\n")),
            "t.csv:2: the key column is 3 bytes, but nkey says 4"
        );
        // Quoted, longer than nkey (also with a doubled quote right at the end).
        assert_eq!(
            err(&format!("{H}0, 0, 0, 3, 0, 0, 0, 2, \"abc\", \"x\"\n")),
            "t.csv:2: the key column is longer than the 2 bytes nkey says"
        );
        assert_eq!(
            err(&format!("{H}0, 0, 0, 3, 0, 0, 0, 2, \"ab\"\"\", \"x\"\n")),
            "t.csv:2: the key column is longer than the 2 bytes nkey says"
        );
        // Unquoted, shorter and longer than nkey.
        assert_eq!(
            err(&format!("{H}0, 0, 0, 3, 0, 0, 0, 4, abc, x\n")),
            "t.csv:2: the key column is 3 bytes, but nkey says 4"
        );
        assert_eq!(
            err(&format!("{H}0, 0, 0, 3, 0, 0, 0, 2, abc, x\n")),
            "t.csv:2: expected ',' after the key column, found 'c'"
        );
        assert_eq!(
            err(&format!("{H}0, 0, 0, 3, 0, 0, 0, 3, a\"c, x\n")),
            "t.csv:2: unexpected '\"' in the unquoted key column; quote the column to hold one"
        );
        // Nothing between the key and the data.
        assert_eq!(
            err(&format!("{H}0, 0, 0, 3, 0, 0, 0, 1, \"a\" \"x\"\n")),
            "t.csv:2: expected ',' after the key column, found '\"'"
        );
        // The file ends inside a quoted key.
        assert_eq!(
            err(&format!("{H}0, 0, 0, 3, 0, 0, 0, 5, \"ab\"\"")),
            "t.csv:2: the file ends inside the quoted key column (3 of 5 bytes read)"
        );
    }

    #[test]
    fn data_column_errors() {
        assert_eq!(
            err(&format!("{H}0, 0, 0, 12, 0, 0, 0, 1, \"a\", \"short\"\n")),
            "t.csv:2: the data column is 5 bytes, but nbytes - 2 says 10"
        );
        assert_eq!(
            err(&format!("{H}0, 0, 0, 4, 0, 0, 0, 1, \"a\", \"longer\"\n")),
            "t.csv:2: the data column is longer than the 2 bytes nbytes - 2 says"
        );
        assert_eq!(
            err(&format!("{H}0, 0, 0, 9, 0, 0, 0, 1, a, x,y\n")),
            "t.csv:2: the data column is 1 bytes, but nbytes - 2 says 7"
        );
        assert_eq!(
            err(&format!("{H}0, 0, 0, 3, 0, 0, 0, 1, a, x,y\n")),
            "t.csv:2: expected the end of the line after the data column, found ','"
        );
        assert_eq!(
            err(&format!("{H}0, 0, 0, 3, 0, 0, 0, 1, a, \"x\" junk\n")),
            "t.csv:2: expected the end of the line after the data column, found 'j'"
        );
        // Unquoted data stops at the end of the line.
        assert_eq!(
            err(&format!("{H}0, 0, 0, 6, 0, 0, 0, 1, a, xy\nzw\n")),
            "t.csv:2: the data column is 2 bytes, but nbytes - 2 says 4"
        );
        assert_eq!(
            err(&format!("{H}0, 0, 0, 100, 0, 0, 0, 1, a, \"two\nlines")),
            "t.csv:3: the file ends inside the quoted data column (9 of 98 bytes read)"
        );
    }

    #[test]
    fn error_lines_count_real_lines_even_after_multiline_values() {
        let src = format!(
            "{H}0, 0, 0, 9, 0, 0, 0, 1, a, \"1\n2\n3\n4\"\n\n0, 0, 0, 3, 0, 0, 0, 1, b, \"x\"\n0, 0, 0, 3, 0, 0, 0, 2, c, \"x\"\n"
        );
        // Header 1, item on 2-5, blank 6, good item 7, bad item 8.
        assert_eq!(
            err(&src),
            "t.csv:8: the key column is 1 bytes, but nkey says 2"
        );
    }

    /// Random bytes drawn mostly from the ones the format treats specially.
    fn pick(rng: &mut SmallRng, len: usize) -> Vec<u8> {
        let alphabet = b"\"\",\r\n\0 xX";
        (0..len)
            .map(|_| alphabet[rng.random_range(0..alphabet.len())])
            .collect()
    }

    #[test]
    fn random_round_trips() {
        let mut rng = SmallRng::seed_from_u64(11);
        for _ in 0..50 {
            let n = rng.random_range(1..20);
            let owned: Vec<(Vec<u8>, Vec<u8>, u32)> = (0..n)
                .map(|_| {
                    let key_len = rng.random_range(0..8);
                    let value_len = rng.random_range(0..40);
                    let key = pick(&mut rng, key_len);
                    let value = pick(&mut rng, value_len);
                    (key, value, rng.random())
                })
                .collect();
            let src = render_import_file(owned.iter().map(|(k, v, e)| ImportedItem {
                key: k,
                value: v,
                expiry_secs: *e,
            }));
            assert_eq!(items(&parse_bytes(&src, &PLAIN).unwrap()), owned);
        }
    }

    #[test]
    fn memcache_text_key_check() {
        let ok = parse(&format!("{H}0, 0, 0, 3, 0, 0, 0, 3, abc, x\n")).unwrap();
        assert_eq!(ok.check_memcache_text_keys(), Ok(()));
        let spaced = parse(&format!(
            "{H}0, 0, 0, 3, 0, 0, 0, 1, a, x\n0, 0, 0, 3, 0, 0, 0, 3, \"a b\", x\n"
        ))
        .unwrap();
        assert_eq!(
            spaced.check_memcache_text_keys().unwrap_err(),
            "imported item 2 cannot be sent with the memcache_text protocol: its key [a b] holds a space or control character"
        );
        let long = "k".repeat(251);
        let long = parse(&format!("{H}0, 0, 0, 3, 0, 0, 0, 251, {long}, x\n")).unwrap();
        assert!(
            long.check_memcache_text_keys()
                .unwrap_err()
                .ends_with("is 251 bytes, above memcached's 250")
        );
        let empty = parse(&format!("{H}0, 0, 0, 3, 0, 0, 0, 0, \"\", x\n")).unwrap();
        assert!(
            empty
                .check_memcache_text_keys()
                .unwrap_err()
                .ends_with("[] is empty")
        );
    }
}
