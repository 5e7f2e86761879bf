//! `--config=FILE` (repeatable, anywhere on the line): a JSON object whose keys are long
//! flag names without dashes, expanded into flags placed *before* the real command line,
//! so the command line wins.
//!
//! ```text
//! {"ratio": "3:2", "test-time": 60, "hide-histogram": true,
//!  "command": ["set __key__ __data__", "get __key__"]}
//! ```
//!
//! `true` becomes the bare switch, `false` is left out, a number or string becomes
//! `--key=value`, an array repeats the flag. Flags that exclude each other (`--requests` /
//! `--test-time`, the three data-size flags, the endpoint flags) do not clash across
//! sources: when the command line (or a later file) gives one, the earlier file's partners
//! are dropped (see `OVERRIDES`). `config/README.md` documents the format for users.

use std::collections::{HashMap, HashSet};

use clap::ArgAction;
use serde_json::Value;

use crate::error::Error;

/// Which earlier `--config` values a flag pushes out, by clap id. When a
/// higher-priority source (the command line, or a later file) gives the flag on the
/// left, lower-priority files lose the flags on the right instead of clashing with it:
/// `--config=timed.json -n 500` runs 500 requests rather than failing with
/// "--test-time and --requests are mutually exclusive".
const OVERRIDES: &[(&str, &[&str])] = &[
    ("requests", &["test_time"]),
    ("test_time", &["requests"]),
    ("data_size", &["data_size_range", "data_size_list"]),
    ("data_size_range", &["data_size", "data_size_list"]),
    ("data_size_list", &["data_size", "data_size_range"]),
    ("host", &["unix_socket", "uri"]),
    ("unix_socket", &["host", "port", "uri"]),
    (
        "uri",
        &["host", "port", "authenticate", "select_db", "unix_socket"],
    ),
    ("rate", &["rate_limiting"]),
    ("rate_limiting", &["rate"]),
    ("ipv4", &["ipv6"]),
    ("ipv6", &["ipv4"]),
    // A command list replaces the file's list rather than appending to it.
    (
        "command",
        &["command", "command_ratio", "command_key_pattern"],
    ),
];

/// Keys a config file may not hold: they act on the parser itself.
const NOT_IN_CONFIG_FILE: &[&str] = &["help", "version", "config"];

/// How a config-file key maps to a flag of `Cli`.
struct KeyInfo {
    /// The clap id (field name), used for the exclusive groups.
    id: String,
    /// The canonical long name, used to build `--long=value` tokens.
    long: String,
    /// A switch (`true`/`false` in the file) rather than a flag with a value.
    switch: bool,
    /// The flag may be repeated, so an array value is allowed.
    repeatable: bool,
}

/// Every long name and long alias of `Cli`, asked of clap so it can never drift from
/// the struct.
pub struct KeyTable(HashMap<String, KeyInfo>);

impl KeyTable {
    pub fn new(command: &clap::Command) -> Self {
        let mut map = HashMap::new();
        for arg in command.get_arguments() {
            let Some(long) = arg.get_long() else { continue };
            let action = arg.get_action();
            let info = || KeyInfo {
                id: arg.get_id().as_str().to_string(),
                long: long.to_string(),
                switch: !action.takes_values(),
                repeatable: matches!(action, ArgAction::Append),
            };
            map.insert(long.to_string(), info());
            for alias in arg.get_all_aliases().unwrap_or_default() {
                map.insert(alias.to_string(), info());
            }
        }
        KeyTable(map)
    }
}

pub fn overridden_by(id: &str) -> impl Iterator<Item = &'static str> {
    OVERRIDES
        .iter()
        .filter(move |(by, _)| *by == id)
        .flat_map(|(_, lost)| lost.iter().copied())
}

pub fn load_config_file(file: &str) -> Result<serde_json::Map<String, Value>, Error> {
    let text = std::fs::read_to_string(file)
        .map_err(|e| Error::usage(format!("config file '{file}': cannot read it: {e}")))?;
    let value: Value = serde_json::from_str(&text)
        .map_err(|e| Error::usage(format!("config file '{file}': not valid JSON: {e}")))?;
    match value {
        Value::Object(map) => Ok(map),
        _ => Err(Error::usage(format!(
            "config file '{file}': must hold one JSON object of flags, e.g. {{\"ratio\": \"1:1\"}}"
        ))),
    }
}

/// Expand one file's object into argv tokens, skipping the flags a higher-priority
/// source pushed out. Returns the tokens and the ids of the flags the file gives.
pub fn expand_config(
    file: &str,
    map: &serde_json::Map<String, Value>,
    keys: &KeyTable,
    pushed_out: &HashSet<&'static str>,
) -> Result<(Vec<String>, Vec<String>), Error> {
    let bad = |key: &str, problem: &str| {
        Error::usage(format!("config file '{file}': key '{key}' {problem}"))
    };
    let mut tokens = Vec::new();
    let mut given = Vec::new();
    // --command and its per-command options are interleaved by index below: the
    // pairing is positional on a command line, and a JSON object has no key order.
    let mut per_command: Vec<(&KeyInfo, Vec<String>)> = Vec::new();

    for (key, value) in map {
        let Some(info) = keys.0.get(key.as_str()) else {
            let hint = if key.starts_with('-') {
                "is not a flag name (write long flag names without the leading dashes)"
            } else {
                "is not a kvbench/memtier flag (see --help)"
            };
            return Err(bad(key, hint));
        };
        if NOT_IN_CONFIG_FILE.contains(&info.long.as_str()) {
            return Err(bad(key, "cannot be used inside a config file"));
        }
        if pushed_out.contains(info.id.as_str()) {
            continue;
        }
        let values: Vec<String> = if info.switch {
            match value {
                Value::Bool(true) => vec![String::new()],
                Value::Bool(false) => Vec::new(),
                _ => return Err(bad(key, "is a switch: its value must be true or false")),
            }
        } else {
            match value {
                Value::String(s) => vec![s.clone()],
                Value::Number(n) => vec![n.to_string()],
                Value::Array(items) if info.repeatable => items
                    .iter()
                    .map(|item| match item {
                        Value::String(s) => Ok(s.clone()),
                        Value::Number(n) => Ok(n.to_string()),
                        _ => Err(bad(key, "must be a list of strings or numbers")),
                    })
                    .collect::<Result<_, _>>()?,
                Value::Array(_) => return Err(bad(key, "takes one value, not a list")),
                Value::Bool(_) => {
                    return Err(bad(
                        key,
                        "takes a value (a string or a number), not true/false",
                    ));
                }
                Value::Null | Value::Object(_) => {
                    return Err(bad(key, "must be a string or a number"));
                }
            }
        };
        if values.is_empty() {
            continue;
        }
        given.push(info.id.clone());
        if matches!(
            info.id.as_str(),
            "command" | "command_ratio" | "command_key_pattern"
        ) {
            per_command.push((info, values));
            continue;
        }
        for v in values {
            tokens.push(if info.switch {
                format!("--{}", info.long)
            } else {
                format!("--{}={v}", info.long)
            });
        }
    }

    if !per_command.is_empty() {
        let count = |id: &str| {
            per_command
                .iter()
                .find(|(i, _)| i.id == id)
                .map_or(0, |(_, v)| v.len())
        };
        let commands = count("command");
        for (info, values) in &per_command {
            if info.id != "command" && values.len() > commands {
                return Err(bad(
                    &info.long,
                    &format!(
                        "has {} entries but there are {commands} commands: give one per \"command\"",
                        values.len()
                    ),
                ));
            }
        }
        for i in 0..commands {
            for id in ["command", "command_ratio", "command_key_pattern"] {
                if let Some((info, values)) = per_command.iter().find(|(inf, _)| inf.id == id)
                    && let Some(v) = values.get(i)
                {
                    tokens.push(format!("--{}={v}", info.long));
                }
            }
        }
    }
    Ok((tokens, given))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontend::memtier::cli::Cli;
    use clap::CommandFactory;

    #[test]
    fn every_long_flag_is_a_config_key() {
        let keys = KeyTable::new(&Cli::command());
        for name in [
            "ratio",
            "test-time",
            "server",
            "host",
            "command",
            "key-zipf-exp",
            "ipv6",
        ] {
            assert!(keys.0.contains_key(name), "{name} missing");
        }
        assert!(keys.0["hide-histogram"].switch);
        assert!(!keys.0["ratio"].switch);
        assert!(keys.0["command"].repeatable);
        assert!(!keys.0["ratio"].repeatable);
        assert_eq!(keys.0["server"].long, "host");
    }
}
