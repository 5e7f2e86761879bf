//! The arbitrary-command list: each command with its template, ratio and key pattern, and
//! the report rows they record into (named as memtier 2.x names them). A front end
//! validates its own flags and builds the list with [`CommandList::push`].

use crate::stats::RowName;
use crate::stats::rows::{ROW_NUMBER, split_number};
use crate::workload::commands::command_name;
use crate::workload::commands::monitor::MonitorInput;
use crate::workload::commands::scan::{SCAN_FIRST_NAME, SCAN_NEXT_NAME, ScanPlan};
use crate::workload::commands::template::{CommandTemplate, Fill};
use crate::workload::keys::KeyPattern;
use crate::workload::sequence::CommandSequence;

/// Name of the `__monitor_line@__` entry in memtier's command list (never a row here).
const MONITOR_RANDOM_NAME: &str = "MONITOR_RANDOM";

/// Where a command's bytes come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CommandSource {
    /// The command line itself.
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

/// One command of the list.
#[derive(Clone, Debug)]
pub struct CommandSpecParsed {
    /// The command line as given.
    pub line: String,
    /// What to send.
    pub template: CommandTemplate,
    /// How many times in a row it is sent (at least 1).
    pub ratio: u32,
    /// How its `__key__`s are picked.
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

/// Why a list cannot follow SCAN cursors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScanRefusal {
    /// There is no command.
    NoCommand,
    /// There is more than one command.
    SeveralCommands,
    /// The command is not a SCAN (or comes from a capture).
    NotScan,
    /// The SCAN has no cursor argument.
    NoCursor,
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

/// Every command, with the report rows they record into.
#[derive(Clone, Debug, Default)]
pub struct CommandList {
    /// The commands, in the order given.
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

impl CommandList {
    /// An empty list; with `by_line` every command gets a row of its own, otherwise
    /// commands share the row of their command name.
    pub fn new(by_line: bool) -> CommandList {
        CommandList {
            by_line,
            ..CommandList::default()
        }
    }

    /// The name a command from `source` is known by in messages and per-line rows:
    /// its command word in upper case (`HSET`), `SET (Line 3)` for the capture's third
    /// command, `MONITOR_RANDOM` for a command picked from the capture per request.
    pub fn name_of(
        source: CommandSource,
        args: &[Vec<u8>],
        monitor: Option<&MonitorInput>,
    ) -> String {
        match (source, monitor) {
            (CommandSource::MonitorRandom, _) => MONITOR_RANDOM_NAME.to_string(),
            (CommandSource::MonitorLine(n), Some(m)) => {
                format!("{} (Line {n})", m.command_type(n - 1))
            }
            _ => args.first().map(|w| command_name(w)).unwrap_or_default(),
        }
    }

    /// Adds a command: `line` as given, split into `args` (a [`CommandSource::Line`]
    /// keeps its `__key__`/`__data__` placeholders; a capture's command comes from
    /// `monitor`, verbatim). Call [`finish`](Self::finish) after the last one.
    pub fn push(
        &mut self,
        line: &str,
        source: CommandSource,
        args: Vec<Vec<u8>>,
        ratio: u32,
        key_pattern: KeyPattern,
        monitor: Option<&MonitorInput>,
    ) {
        let name = Self::name_of(source, &args, monitor);
        let (template, ty, placeholder) = match (source, monitor) {
            (CommandSource::MonitorRandom, _) => (
                CommandTemplate::monitor_random(),
                MONITOR_RANDOM_NAME.to_string(),
                true,
            ),
            (CommandSource::MonitorLine(n), Some(m)) => (
                CommandTemplate::build(&m.args(n - 1), Fill::Verbatim),
                m.command_type(n - 1).to_string(),
                false,
            ),
            _ => (
                CommandTemplate::build(&args, Fill::Placeholders),
                args.first().map(|w| command_name(w)).unwrap_or_default(),
                false,
            ),
        };
        self.entries.push(Entry {
            name,
            ty,
            placeholder,
        });
        self.commands.push(CommandSpecParsed {
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

    /// Lays out the report rows once every command is pushed: with a command picked from
    /// the capture per request, one row per command word found in `monitor`, after the
    /// rows of all commands.
    pub fn finish(&mut self, monitor: Option<&MonitorInput>) {
        let uses_random = self
            .commands
            .iter()
            .any(|c| c.source == CommandSource::MonitorRandom);
        let slots_start = self.entries.len();
        if let (true, Some(m)) = (uses_random, monitor) {
            for ty in m.types() {
                self.entries.push(Entry {
                    name: ty.clone(),
                    ty: ty.clone(),
                    placeholder: false,
                });
            }
        }
        self.monitor_slots = slots_start..self.entries.len();
        self.relink();
    }

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

    /// Turns on SCAN cursor iteration: the one command must be a SCAN with a cursor; its
    /// row becomes `Scan 0s` and a `Scan <cursor>s` row is added for the continuations
    /// ([`CommandList::scan`]). A pipeline of 1 is the caller's to check.
    pub fn enable_scan_iteration(&mut self) -> Result<(), ScanRefusal> {
        if self.scan.is_some() {
            return Ok(());
        }
        let cmd = match self.commands.as_slice() {
            [] => return Err(ScanRefusal::NoCommand),
            [cmd] => cmd,
            _ => return Err(ScanRefusal::SeveralCommands),
        };
        let is_scan = cmd
            .args
            .first()
            .is_some_and(|w| w.eq_ignore_ascii_case(b"SCAN"));
        if cmd.source != CommandSource::Line || !is_scan {
            return Err(ScanRefusal::NotScan);
        }
        if cmd.args.len() < 2 {
            return Err(ScanRefusal::NoCursor);
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
                // Two lines of one command (`set a ...`, `set b ...`) would share a table
                // name, a JSON key (a reader keeps one of the two) and an HDR file (one
                // overwrites the other): the later ones are numbered, `Sets #2`, `SET_2`.
                let label = row_name(&e.name);
                let same = rows
                    .iter()
                    .filter(|r| split_number(&r.row, ROW_NUMBER).0 == label)
                    .count();
                rows.push(match same {
                    0 => RowName::new(&label, &e.name, false),
                    n => RowName::numbered(&label, &e.name, n + 1),
                });
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn row_names_follow_memtier() {
        assert_eq!(row_name("HSET"), "Hsets");
        assert_eq!(row_name("GET"), "Gets");
        assert_eq!(row_name("SET (Line 3)"), "Set (line 3)s");
        assert_eq!(row_name("SCAN <cursor>"), "Scan <cursor>s");
        assert_eq!(row_name(""), "s");
    }
}
