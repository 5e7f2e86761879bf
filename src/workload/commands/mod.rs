//! Arbitrary commands (`--command`): split them into arguments ([`split`]), pre-encode them
//! as RESP templates ([`template`]), lay out the command list and its report rows
//! ([`list`]), replay a MONITOR capture ([`monitor`]) and follow SCAN cursors ([`scan`]).
//!
//! Everything here is pure: the only I/O is [`MonitorInput::load`] reading the capture file.
//! The hot path is [`CommandTemplate::encode_resp`]: every literal argument is RESP-encoded
//! once at parse time, so a request only copies bytes, formats the lengths of the
//! arguments that hold a placeholder, and reserves the write buffer once.
//!
//! Reading the flags is a front end's job (memtier's is `frontend::memtier::commands`):
//! it splits each line with [`split`], then builds the list with [`CommandList::new`],
//! [`CommandList::push`] and [`CommandList::finish`]. Flag spellings below are memtier's,
//! to say what each rule is for.
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

pub mod list;
pub mod monitor;
pub mod scan;
pub mod split;
pub mod template;
#[cfg(test)]
pub(crate) mod test_support;

pub use list::{CommandList, CommandSource, CommandSpecParsed, ScanRefusal, row_name};
pub use monitor::{MonitorInput, MonitorPattern};
pub use scan::{ScanPlan, ScanState, scan_cursor};
pub use split::{SplitError, split_args};
pub use template::CommandTemplate;

/// Replaced by a generated key.
pub const KEY_PLACEHOLDER: &str = "__key__";
/// Replaced by a generated value.
pub const DATA_PLACEHOLDER: &str = "__data__";
/// `__monitor_line@__`: a command picked from the capture per request.
pub const MONITOR_RANDOM_PLACEHOLDER: &str = "__monitor_line@__";
/// `__monitor_lineN__` (1-based): the capture's command N, every time.
pub const MONITOR_PREFIX: &str = "__monitor_line";

/// Upper-cased command word, as text.
pub fn command_name(word: &[u8]) -> String {
    String::from_utf8_lossy(word).to_ascii_uppercase()
}
