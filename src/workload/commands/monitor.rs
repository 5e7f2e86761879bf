//! MONITOR replay (`--monitor-input`): a capture's commands, RESP-encoded once, and how
//! `__monitor_line@__` picks among them.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

use rand::Rng;

use crate::protocol::resp_encode::{encode_array_header, encode_bulk};
use crate::protocol::resp_value::{Token, tokens};
use crate::workload::commands::command_name;
use crate::workload::commands::split::split_args;

/// Captured commands that are never replayed: `HELLO 3` would switch the connection to
/// RESP3 behind the decoder's back (memtier skips it for the same reason).
const UNREPLAYABLE: &[&str] = &["HELLO"];

/// How `__monitor_line@__` picks capture commands (`--monitor-pattern=S|R`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum MonitorPattern {
    /// In file order, one shared position for all clients and threads, wrapping around.
    #[default]
    Sequential,
    /// Uniformly at random, from the client's RNG (reproducible without `--randomize`).
    Random,
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

    pub(crate) fn encoded_wrapping(&self, index: usize) -> Option<&[u8]> {
        match self.len() {
            0 => None,
            len => self.encoded(index % len),
        }
    }

    /// Command `index` (0-based) split into arguments again (setup only: allocates).
    pub(crate) fn args(&self, index: usize) -> Vec<Vec<u8>> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::commands::test_support::{CAPTURE, capture, resp};
    use rand::SeedableRng;
    use rand::rngs::SmallRng;

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
}
