//! memtier's `--command` flags into the arbitrary-command list: each command line split
//! and checked, its `--command-ratio` and `--command-key-pattern` validated, MONITOR
//! placeholders resolved against `--monitor-input`; `--command-stats-breakdown`,
//! `--monitor-pattern` and `--scan-incremental-iteration` in memtier's words.

use crate::workload::commands::{
    CommandList, CommandSource, DATA_PLACEHOLDER, KEY_PLACEHOLDER, MONITOR_PREFIX,
    MONITOR_RANDOM_PLACEHOLDER, MonitorInput, MonitorPattern, ScanRefusal, split_args,
};
use crate::workload::keys::KeyPattern;

/// One `--command`, with the `--command-ratio` and `--command-key-pattern` given after
/// it (memtier applies those two to the most recent `--command`), raw.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CommandSpec {
    /// The command line to send, e.g. `set __key__ __data__`.
    pub command: String,
    /// The raw `--command-ratio` that followed it, if any.
    pub ratio: Option<String>,
    /// The raw `--command-key-pattern` that followed it, if any.
    pub key_pattern: Option<String>,
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
    let mut list = CommandList::new(breakdown_by_line);
    for spec in specs {
        let line = spec.command.as_str();
        let args = split_args(line.as_bytes())
            .map_err(|e| format!("cannot parse --command \"{line}\": {e}"))?;
        check_args(line, &args)?;
        let source = match monitor_ref(line, &args, monitor)? {
            Some(MonitorRef::Random) => CommandSource::MonitorRandom,
            Some(MonitorRef::Line(n)) => CommandSource::MonitorLine(n),
            None => CommandSource::Line,
        };
        let name = CommandList::name_of(source, &args, monitor);
        let ratio = parse_ratio(spec.ratio.as_deref(), &name)?;
        let key_pattern = parse_key_pattern(spec.key_pattern.as_deref(), &name)?;
        list.push(line, source, args, ratio, key_pattern, monitor);
    }
    list.finish(monitor);
    Ok(list)
}

/// `--monitor-pattern=S|R` (either case; default `S`), with memtier's messages.
pub fn parse_monitor_pattern(raw: Option<&str>) -> Result<MonitorPattern, String> {
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

/// Turns on `--scan-incremental-iteration` for `list`, in memtier's words when it cannot.
pub fn enable_scan_iteration(list: &mut CommandList) -> Result<(), String> {
    list.enable_scan_iteration().map_err(|refusal| {
        match refusal {
            ScanRefusal::NoCommand => {
                "--scan-incremental-iteration requires --command with a SCAN command."
            }
            ScanRefusal::SeveralCommands => {
                "--scan-incremental-iteration requires exactly one --command (a SCAN command)."
            }
            ScanRefusal::NotScan => {
                "--scan-incremental-iteration requires the command to be a SCAN command."
            }
            ScanRefusal::NoCursor => {
                "SCAN command must have at least a cursor argument (e.g., 'SCAN 0')."
            }
        }
        .to_string()
    })
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::RowName;
    use crate::workload::commands::CommandTemplate;
    use crate::workload::commands::test_support::{capture, encode, resp};

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
        // A second line of one command is numbered: its JSON key and HDR file are its own.
        assert_eq!(names, ["Sets", "Gets", "Sets #2"]);
        let hists: Vec<_> = list.rows.iter().map(|r| r.hist.as_str()).collect();
        assert_eq!(hists, ["SET", "GET", "SET_2"]);
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
        assert!(CommandTemplate::from_line("").is_none());
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
        assert_eq!(names, ["Sets", "Sets #2", "Gets", "Hsets"]);
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
        enable_scan_iteration(&mut list).unwrap();
        enable_scan_iteration(&mut list).unwrap(); // idempotent
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
        enable_scan_iteration(&mut list).unwrap();
        let names: Vec<_> = list.rows.iter().map(|r| r.row.as_str()).collect();
        assert_eq!(names, ["Scan 0s", "Scan <cursor>s"]);
    }

    #[test]
    fn scan_iteration_errors() {
        let enable = |specs: &[CommandSpec]| {
            let mut list = parse_commands(specs, false, None).unwrap();
            enable_scan_iteration(&mut list).unwrap_err()
        };
        assert!(enable(&[]).contains("requires --command"));
        assert!(enable(&[spec("scan 0"), spec("get k")]).contains("exactly one"));
        assert!(enable(&[spec("get k")]).contains("requires the command to be a SCAN command"));
        assert!(enable(&[spec("scan")]).contains("at least a cursor"));
        let m = capture();
        let mut list = parse_commands(&[spec("__monitor_line@__")], false, Some(&m)).unwrap();
        assert!(enable_scan_iteration(&mut list).is_err());
    }

    #[test]
    fn monitor_pattern_is_s_or_r() {
        assert_eq!(parse_monitor_pattern(None), Ok(MonitorPattern::Sequential));
        assert_eq!(parse_monitor_pattern(Some("r")), Ok(MonitorPattern::Random));
        assert_eq!(
            parse_monitor_pattern(Some("S")),
            Ok(MonitorPattern::Sequential)
        );
        assert!(
            parse_monitor_pattern(Some("X"))
                .unwrap_err()
                .contains("'S'")
        );
        assert!(
            parse_monitor_pattern(Some("SR"))
                .unwrap_err()
                .contains("single")
        );
    }
}
