//! What the page's configuration section lists of a file beyond its settings as written: a
//! `--command` run's commands, in a list of their own; and each setting once, where the
//! file's `"configuration"` and `"run information"` both hold it.

use crate::report::html::{CommandLine, Run};
use crate::resultfile::ordered::Json;
use crate::workload::keys::KeyPattern;

/// Settings a file holds twice, under a name in `"configuration"` and another in `"run
/// information"` (as the adapter names them: a sweep's seconds are per step).
const HELD_TWICE: [(&str, &str); 5] = [
    ("threads", "Threads"),
    ("clients", "Connections per thread"),
    ("requests", "Requests per client"),
    ("test_time", "Seconds"),
    ("step_duration", "Seconds per step"),
];

/// Leaves out the run information's name of a setting where the configuration's gives the
/// same value, in every run that has it, so the page lists the setting once. Where a run's
/// two differ they say different things (a merge's `threads` is each file's, its
/// `Threads` their sum; redis-benchmark's `requests` are all clients', its `Requests per
/// client` one's): every run keeps both then, so no run's line reads as missing beside
/// another's.
pub fn list_each_setting_once(runs: &mut [Run]) {
    fn value<'a>(run: &'a Run, key: &str) -> Option<&'a str> {
        run.config
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
    for (configuration_key, info_key) in HELD_TWICE {
        let same_everywhere = runs.iter().all(|run| {
            value(run, info_key).is_none_or(|info| value(run, configuration_key) == Some(info))
        });
        if same_everywhere {
            for run in runs.iter_mut() {
                run.config.retain(|(k, _)| k != info_key);
            }
        }
    }
}

/// A `--command` run's commands, from the configuration's `command`, `command-ratio` and
/// `command-key-pattern` arrays (kvbench's, named as the flags), and the settings to leave
/// out of the list of settings: the keys they came from (listed as commands, not again),
/// and the SET:GET `ratio` and `key_pattern`, which such a run does not use (it sends no
/// SET or GET of its own; each command has its own ratio and key pattern). Nothing without a `command` list of
/// strings: a run of SET/GET, a file of memtier's or of an older kvbench, or a merge of
/// files that disagree (its array of each file's list stays a setting). A ratio or key
/// pattern list that does not pair with the commands stays a setting too.
pub fn commands(configuration: &[(String, Json)]) -> (Vec<CommandLine>, Vec<&'static str>) {
    let get = |key: &str| configuration.iter().find(|(k, _)| k == key).map(|(_, v)| v);
    let lines: Option<Vec<&str>> = match get("command") {
        Some(Json::Array(items)) => items.iter().map(Json::as_str).collect(),
        _ => None,
    };
    let Some(lines) = lines.filter(|l| !l.is_empty()) else {
        return (Vec::new(), Vec::new());
    };
    let paired = |key: &str| match get(key) {
        Some(Json::Array(items)) if items.len() == lines.len() => Some(items),
        _ => None,
    };
    let (ratios, patterns) = (paired("command-ratio"), paired("command-key-pattern"));
    let commands = lines
        .iter()
        .enumerate()
        .map(|(i, line)| CommandLine {
            command: line.to_string(),
            ratio: ratios.and_then(|r| r[i].as_u64()),
            key_pattern: patterns.and_then(|p| p[i].as_str()).map(key_pattern_words),
        })
        .collect();
    let mut keys = vec!["command"];
    keys.extend(ratios.map(|_| "command-ratio"));
    keys.extend(patterns.map(|_| "command-key-pattern"));
    keys.extend(["ratio", "key_pattern"]);
    (commands, keys)
}

/// A key pattern's letter with what it means: `S (sequential)`; anything else as it is.
fn key_pattern_words(letter: &str) -> String {
    let mut chars = letter.chars();
    match (chars.next().and_then(KeyPattern::from_letter), chars.next()) {
        (Some(pattern), None) => format!("{letter} ({})", pattern.name()),
        _ => letter.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resultfile::ordered::parse;

    fn configuration(text: &str) -> Vec<(String, Json)> {
        match parse(text).expect("valid JSON") {
            Json::Object(members) => members,
            other => panic!("not an object: {other:?}"),
        }
    }

    #[test]
    fn commands_pair_with_their_ratios_and_key_patterns() {
        let (commands, keys) = commands(&configuration(
            r#"{"server": "x", "command": ["hset __key__ f __data__", "ping"],
                "command-ratio": [2, 1], "command-key-pattern": ["S", "Q"]}"#,
        ));
        assert_eq!(
            commands,
            [
                CommandLine {
                    command: "hset __key__ f __data__".into(),
                    ratio: Some(2),
                    key_pattern: Some("S (sequential)".into()),
                },
                CommandLine {
                    command: "ping".into(),
                    ratio: Some(1),
                    key_pattern: Some("Q".into()),
                },
            ]
        );
        assert_eq!(
            keys,
            [
                "command",
                "command-ratio",
                "command-key-pattern",
                "ratio",
                "key_pattern"
            ]
        );
    }

    fn run(config: &[(&str, &str)]) -> Run {
        Run {
            config: config
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            ..Run::default()
        }
    }

    fn keys(run: &Run) -> Vec<&str> {
        run.config.iter().map(|(k, _)| k.as_str()).collect()
    }

    #[test]
    fn a_setting_held_twice_with_one_value_is_listed_once() {
        let mut runs = [
            run(&[("threads", "2"), ("clients", "4"), ("test_time", "0")]),
            run(&[("threads", "1"), ("clients", "4"), ("test_time", "60")]),
        ];
        runs[0]
            .config
            .extend(run(&[("Threads", "2"), ("Connections per thread", "4")]).config);
        runs[1]
            .config
            .extend(run(&[("Threads", "1"), ("Seconds", "60")]).config);
        list_each_setting_once(&mut runs);
        assert_eq!(keys(&runs[0]), ["threads", "clients", "test_time"]);
        assert_eq!(keys(&runs[1]), ["threads", "clients", "test_time"]);
    }

    #[test]
    fn a_setting_whose_two_values_differ_in_any_run_keeps_both_in_every_run() {
        // A merge: each file's threads, and their sum.
        let merged = run(&[("threads", "1"), ("merged_from", "[...]"), ("Threads", "2")]);
        let single = run(&[("threads", "1"), ("Threads", "1")]);
        let mut runs = [single, merged];
        list_each_setting_once(&mut runs);
        assert_eq!(keys(&runs[0]), ["threads", "Threads"]);
        assert_eq!(keys(&runs[1]), ["threads", "merged_from", "Threads"]);
        // A file without a configuration keeps its run information.
        let mut runs = [run(&[("Threads", "3")])];
        list_each_setting_once(&mut runs);
        assert_eq!(keys(&runs[0]), ["Threads"]);
    }

    #[test]
    fn what_is_not_a_command_list_stays_a_setting() {
        // memtier's files and older kvbench ones: no list.
        assert_eq!(
            commands(&configuration(r#"{"ratio": "1:10"}"#)),
            (vec![], vec![])
        );
        // A merge of files that disagree: each file's list, or null.
        let merged = r#"{"command": [["get __key__"], null], "command-ratio": [[1], null]}"#;
        assert_eq!(commands(&configuration(merged)), (vec![], vec![]));
        // Ratios that do not pair with the commands stay a setting; the commands are listed.
        let (listed, keys) = commands(&configuration(
            r#"{"command": ["get __key__", "ping"], "command-ratio": [3]}"#,
        ));
        assert_eq!(listed.len(), 2);
        assert_eq!(listed[0].ratio, None);
        assert_eq!(keys, ["command", "ratio", "key_pattern"]);
    }
}
