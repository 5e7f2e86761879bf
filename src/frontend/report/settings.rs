//! What a file's configuration puts in the page's configuration section beyond its
//! settings as written: a `--command` run's commands, in a list of their own.

use crate::report::html::CommandLine;
use crate::resultfile::ordered::Json;

/// A `--command` run's commands, from the configuration's `command`, `command-ratio` and
/// `command-key-pattern` arrays (kvbench's, named as the flags), and the keys they came
/// from (to list as commands, not again as settings). Nothing without a `command` list of
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
    (commands, keys)
}

/// A key pattern's letter with what it means: `S (sequential)`.
fn key_pattern_words(letter: &str) -> String {
    let meaning = match letter {
        "R" => "random",
        "S" => "sequential",
        "G" => "gaussian",
        "P" => "parallel",
        "Z" => "zipf",
        _ => return letter.to_string(),
    };
    format!("{letter} ({meaning})")
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
        assert_eq!(keys, ["command", "command-ratio", "command-key-pattern"]);
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
        assert_eq!(keys, ["command"]);
    }
}
