//! The `--command` list: each command parsed with its ratio and key pattern, and the
//! report rows they record into (named as memtier 2.x names them).

use crate::stats::RowName;
use crate::workload::commands::monitor::MonitorInput;
use crate::workload::commands::scan::{SCAN_FIRST_NAME, SCAN_NEXT_NAME, ScanPlan};
use crate::workload::commands::split::split_args;
use crate::workload::commands::template::{CommandTemplate, Fill};
use crate::workload::commands::{
    MONITOR_PREFIX, MONITOR_RANDOM_PLACEHOLDER, check_args, command_name,
};
use crate::workload::keys::KeyPattern;
use crate::workload::sequence::CommandSequence;

/// Name of the `__monitor_line@__` entry in memtier's command list (never a row here).
const MONITOR_RANDOM_NAME: &str = "MONITOR_RANDOM";

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::commands::test_support::{capture, encode, resp, spec, spec_with};
    use crate::workload::commands::{CommandSource, MonitorInput};

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
    fn parse_breakdown_reads_command_or_line() {
        assert_eq!(parse_breakdown(None), Ok(false));
        assert_eq!(parse_breakdown(Some("command")), Ok(false));
        assert_eq!(parse_breakdown(Some("LINE")), Ok(true));
        assert!(parse_breakdown(Some("lines")).is_err());
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
}
