//! `kvbench completions bash|zsh|fish`: a completion script for the whole command line
//! (memtier's flags at the top, every tool and its flags after its name), from clap_complete.
//!
//! ```sh
//! source <(kvbench completions bash)                   # this shell
//! kvbench completions zsh > "${fpath[1]}/_kvbench"     # zsh, for good
//! kvbench completions fish > ~/.config/fish/completions/kvbench.fish
//! ```

use std::ffi::OsString;
use std::io::Write;

use clap::error::ErrorKind;
use clap::{CommandFactory, FromArgMatches, Parser, ValueEnum};
use clap_complete::Shell;

use super::kvbench_command;
use crate::console::print_now;
use crate::error::Error;
use crate::frontend::common::usage::one_line;

/// The shells a script is written for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum CompletionShell {
    Bash,
    Zsh,
    Fish,
}

impl CompletionShell {
    fn shell(self) -> Shell {
        match self {
            CompletionShell::Bash => Shell::Bash,
            CompletionShell::Zsh => Shell::Zsh,
            CompletionShell::Fish => Shell::Fish,
        }
    }
}

#[derive(Parser, Debug)]
#[command(
    name = "kvbench completions",
    bin_name = "kvbench completions",
    about = "Print a shell completion script for kvbench: every tool, every flag.",
    version = env!("CARGO_PKG_VERSION"),
    after_help = "bash: source <(kvbench completions bash), or save it as \
                  /usr/share/bash-completion/completions/kvbench. zsh: save it as _kvbench in \
                  a directory of $fpath. fish: save it as \
                  ~/.config/fish/completions/kvbench.fish. `make install` installs all three."
)]
struct Flags {
    /// The shell to write the script for.
    #[arg(value_name = "SHELL", value_enum)]
    shell: CompletionShell,
}

/// The clap command, for `--help`, completions and the man page.
pub fn command() -> clap::Command {
    Flags::command()
}

/// The completion script for `shell`.
pub fn script(shell: CompletionShell) -> Vec<u8> {
    let mut cmd = kvbench_command();
    let mut out = Vec::new();
    clap_complete::generate(shell.shell(), &mut cmd, "kvbench", &mut out);
    out
}

/// Runs `kvbench completions` with its argv (the first item is the program name).
pub fn main(args: Vec<OsString>) -> Result<u8, Error> {
    let matches = match Flags::command().try_get_matches_from(args) {
        Ok(m) => m,
        Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => {
            print_now(&e.to_string());
            return Ok(0);
        }
        Err(e) => return Err(one_line(&e)),
    };
    let flags = Flags::from_arg_matches(&matches).map_err(|e| one_line(&e))?;
    let mut out = std::io::stdout().lock();
    out.write_all(&script(flags.shell))
        .and_then(|()| out.flush())
        .map_err(|e| Error::run(format!("cannot write the completion script: {e}")))?;
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_shell_gets_every_tool_and_flag() {
        for shell in [
            CompletionShell::Bash,
            CompletionShell::Zsh,
            CompletionShell::Fish,
        ] {
            let text = String::from_utf8(script(shell)).unwrap();
            for word in [
                "report",
                "intrinsic-latency",
                "ratio",
                "prometheus-port",
                "out-file",
            ] {
                assert!(text.contains(word), "{shell:?} lacks {word}");
            }
        }
    }

    #[test]
    fn an_unknown_shell_is_one_line() {
        let e = main(vec!["kvbench completions".into(), "tcsh".into()]).unwrap_err();
        assert!(e.message().contains("tcsh"), "{}", e.message());
        assert!(!e.message().contains('\n'), "{}", e.message());
    }
}
