//! SCAN cursor iteration (`--scan-incremental-iteration`): the continuation command and
//! each client's cursor.

use crate::workload::commands::template::CommandTemplate;

/// Names of the two SCAN rows under `--scan-incremental-iteration`.
pub(crate) const SCAN_FIRST_NAME: &str = "SCAN 0";
pub(crate) const SCAN_NEXT_NAME: &str = "SCAN <cursor>";

/// SCAN cursor iteration (`--scan-incremental-iteration`).
#[derive(Clone, Debug)]
pub struct ScanPlan {
    /// `SCAN <cursor> ...`: the command with its cursor argument replaced; encode it with
    /// [`CommandTemplate::encode_resp_cursor`].
    pub continuation: CommandTemplate,
    /// Index into [`crate::workload::commands::CommandList::rows`] of `Scan <cursor>s`.
    pub row: usize,
}

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
