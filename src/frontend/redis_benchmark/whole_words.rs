//! redis-benchmark's own reading of its command line, checked before clap parses it:
//! every option a word of its own, its value the next word, the command from the first
//! word that is not an option. clap would split `-qn 5` or `-I3` into several flags.

use std::ffi::OsString;

use clap::CommandFactory;

use super::flags::RawFlags;
use crate::error::Error;

/// redis-benchmark matches each option as a whole word: `-q=1`, `-qn 5`, `-n5` and `-I3`
/// are invalid options there, where clap would split them (`-I3` into `-I -3`, an idle
/// run that never ends). An option's value is the next word; the command begins at the
/// first word that is not an option. kvbench's `--flag=value` stays allowed.
pub(super) fn whole_words(args: &[OsString]) -> Result<(), Error> {
    let command = RawFlags::command();
    let mut words = args.iter().skip(1).map(|a| a.to_string_lossy());
    while let Some(word) = words.next() {
        if !word.starts_with('-') || word == "-" {
            return Ok(());
        }
        let (name, inline_value) = match word.strip_prefix("--") {
            Some(long) => match long.split_once('=') {
                Some((name, _)) => (name, true),
                None => (long, false),
            },
            None => (&word[1..], false),
        };
        let long = word.starts_with("--");
        let known = command.get_arguments().find(|arg| match long {
            true => arg.get_long() == Some(name),
            false => name.chars().count() == 1 && arg.get_short() == name.chars().next(),
        });
        let Some(arg) = known.filter(|arg| !inline_value || arg.get_action().takes_values()) else {
            return Err(Error::usage(format!(
                "Invalid option \"{word}\" or option argument missing (see --help)"
            )));
        };
        if arg.get_action().takes_values() && !inline_value && words.next().is_none() {
            return Err(Error::usage(format!(
                "Invalid option \"{word}\" or option argument missing (see --help)"
            )));
        }
    }
    Ok(())
}
