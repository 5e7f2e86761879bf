//! memtier's argv into [`Cli`]: `--config` files expanded first (see [`super::config_file`]),
//! getopt's habits kept (`--flag=value` and `--flag value`, values that start with `-`,
//! the last of a repeated flag wins), each `--command` paired with the options that
//! follow it, and every clap error turned into one line.

use clap::error::ErrorKind;
use clap::parser::ValueSource;
use clap::{ArgMatches, CommandFactory, FromArgMatches};
use serde_json::Value;
use std::collections::HashSet;

use crate::error::Error;
use crate::frontend::common::usage::one_line;
use crate::frontend::memtier::cli::{Cli, Parsed, version_text};
use crate::frontend::memtier::commands::CommandSpec;
use crate::frontend::memtier::config_file::{
    KeyTable, expand_config, load_config_file, overridden_by,
};

/// Parse a whole argv (the first item is the program name, as from `std::env::args()`).
///
/// `--config` files are loaded and expanded before the rest of the command line, which
/// therefore overrides them. Returns [`Parsed::Print`] for `--help` and `--version`;
/// every other problem is a one-line [`Error::Usage`].
pub fn parse_args<I: IntoIterator<Item = String>>(args: I) -> Result<Parsed, Error> {
    let mut args = args.into_iter();
    let program = args.next().unwrap_or_else(|| "kvbench".to_string());
    let user_args: Vec<String> = args.collect();

    // Pass 1: the command line alone, to learn which --config files it names (clap
    // decides what is a flag and what is a value) and which flags it sets itself.
    let user_argv: Vec<String> = std::iter::once(program.clone())
        .chain(user_args.iter().cloned())
        .collect();
    let user_matches = match try_matches(&user_argv)? {
        Matched::Matches(m) => m,
        Matched::Print(text) => return Ok(Parsed::Print(text)),
    };
    let files: Vec<String> = user_matches
        .get_many::<String>("config")
        .map(|v| v.cloned().collect())
        .unwrap_or_default();
    if files.is_empty() {
        return finish(&user_matches);
    }

    let command = command();
    let keys = KeyTable::new(&command);
    let loaded: Vec<(String, serde_json::Map<String, Value>)> = files
        .iter()
        .map(|f| load_config_file(f).map(|map| (f.clone(), map)))
        .collect::<Result<_, _>>()?;

    // Settle clashes from the highest-priority source down: the command line, then the
    // files from last to first. `pushed_out` holds the ids lower sources must drop.
    let mut pushed_out: HashSet<&'static str> = HashSet::new();
    for arg in command.get_arguments() {
        let id = arg.get_id().as_str();
        if user_matches.value_source(id) == Some(ValueSource::CommandLine) {
            pushed_out.extend(overridden_by(id));
        }
    }
    let mut per_file_tokens: Vec<Vec<String>> = vec![Vec::new(); loaded.len()];
    for (i, (file, map)) in loaded.iter().enumerate().rev() {
        let (tokens, given) = expand_config(file, map, &keys, &pushed_out)?;
        per_file_tokens[i] = tokens;
        for id in &given {
            pushed_out.extend(overridden_by(id));
        }
    }

    // Pass 2: file flags first, then the command line, so later (user) values win.
    let argv: Vec<String> = std::iter::once(program)
        .chain(per_file_tokens.into_iter().flatten())
        .chain(user_args)
        .collect();
    // The command line alone parsed, so a clap error now comes from a file's flags:
    // say which files, as the message alone would point at a flag the user never typed.
    let in_files = |e: Error| {
        Error::usage(format!(
            "config file '{}': {}",
            files.join("', '"),
            e.message()
        ))
    };
    match try_matches(&argv).map_err(in_files)? {
        Matched::Matches(m) => finish(&m).map_err(in_files),
        Matched::Print(text) => Ok(Parsed::Print(text)),
    }
}

enum Matched {
    Matches(ArgMatches),
    Print(String),
}

/// The clap command for [`Cli`].
pub fn command() -> clap::Command {
    Cli::command()
}

fn try_matches(argv: &[String]) -> Result<Matched, Error> {
    match command().try_get_matches_from(argv) {
        Ok(m) => Ok(Matched::Matches(m)),
        Err(e) => match e.kind() {
            ErrorKind::DisplayHelp => Ok(Matched::Print(e.to_string())),
            ErrorKind::DisplayVersion => Ok(Matched::Print(version_text())),
            _ => Err(one_line(&e)),
        },
    }
}

/// Build the typed `Cli` and pair each `--command` with the options that followed it.
fn finish(matches: &ArgMatches) -> Result<Parsed, Error> {
    let mut cli = Cli::from_arg_matches(matches).map_err(|e| one_line(&e))?;
    cli.commands = pair_commands(matches)?;
    Ok(Parsed::Run(Box::new(cli)))
}

/// memtier applies `--command-ratio` and `--command-key-pattern` to the most recent
/// `--command`; clap keeps each flag's values apart, so rebuild the pairing from the
/// argv positions clap recorded.
fn pair_commands(matches: &ArgMatches) -> Result<Vec<CommandSpec>, Error> {
    let positioned = |id: &str| -> Vec<(usize, String)> {
        match (matches.indices_of(id), matches.get_many::<String>(id)) {
            (Some(idx), Some(vals)) => idx.zip(vals.cloned()).collect(),
            _ => Vec::new(),
        }
    };
    let commands = positioned("command");
    let mut specs: Vec<CommandSpec> = commands
        .iter()
        .map(|(_, c)| CommandSpec {
            command: c.clone(),
            ..CommandSpec::default()
        })
        .collect();
    for (id, flag) in [
        ("command_ratio", "--command-ratio"),
        ("command_key_pattern", "--command-key-pattern"),
    ] {
        for (at, value) in positioned(id) {
            let owner = commands.iter().rposition(|(cmd_at, _)| *cmd_at < at);
            let Some(owner) = owner else {
                return Err(Error::usage(format!(
                    "{flag}={value} must follow the --command it applies to (no arbitrary command found)."
                )));
            };
            let spec = &mut specs[owner];
            // A second ratio for the same command replaces the first, as in memtier.
            if id == "command_ratio" {
                spec.ratio = Some(value);
            } else {
                spec.key_pattern = Some(value);
            }
        }
    }
    Ok(specs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(args: &[&str]) -> Vec<String> {
        std::iter::once("kvbench")
            .chain(args.iter().copied())
            .map(String::from)
            .collect()
    }

    #[test]
    fn clap_definition_is_consistent() {
        command().debug_assert();
    }

    #[test]
    fn command_options_pair_with_the_preceding_command() {
        let m = match try_matches(&argv(&[
            "--command=set __key__ __data__",
            "--command-ratio=2",
            "--command",
            "get __key__",
            "--command-key-pattern=G",
            "--command-ratio",
            "5",
        ])) {
            Ok(Matched::Matches(m)) => m,
            _ => panic!("parse failed"),
        };
        let specs = pair_commands(&m).expect("paired");
        assert_eq!(specs.len(), 2);
        assert_eq!(specs[0].ratio.as_deref(), Some("2"));
        assert_eq!(specs[0].key_pattern, None);
        assert_eq!(specs[1].ratio.as_deref(), Some("5"));
        assert_eq!(specs[1].key_pattern.as_deref(), Some("G"));
    }

    /// Found by the `config` fuzz target: a word holding line breaks, echoed by clap's
    /// "unexpected argument", made the error several lines long.
    #[test]
    fn an_argument_with_line_breaks_is_refused_on_one_line() {
        let Err(e) = parse_args(argv(&["pipeline\": 4,\n  \"clients\": 10\n}\n"])) else {
            panic!("a stray word parsed");
        };
        let shown = e.to_string();
        assert!(!shown.contains(['\n', '\r']), "{shown:?}");
        assert!(
            shown.contains(r#"unexpected argument 'pipeline": 4,\n  "clients""#),
            "{shown}"
        );
    }
}
