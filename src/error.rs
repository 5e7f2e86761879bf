//! The one error type for setup and user errors, with the exit code each maps to.

use std::fmt::{self, Write as _};

/// An error a user can act on. `main` prints `error: <message>` on one line and exits
/// with [`Error::exit_code`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// A bad flag, flag value or config file: nothing was sent.
    Usage(String),
    /// The run could not start or did not complete (unreachable server, server died,
    /// garbage replies, unwritable output file).
    Run(String),
    /// Standard output's reader went away before the report was written (`kvbench ... |
    /// head -3`), every file written all the same. Said with no word and exit status 141:
    /// what a shell reports for memtier_benchmark there, which SIGPIPE ends silently.
    ReaderGone,
}

impl Error {
    pub fn usage(msg: impl Into<String>) -> Self {
        Error::Usage(msg.into())
    }

    pub fn run(msg: impl Into<String>) -> Self {
        Error::Run(msg.into())
    }

    /// Exit status for this error: 1 for a usage or run error, as memtier uses; 128 +
    /// SIGPIPE for a reader gone.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Usage(_) | Error::Run(_) => 1,
            Error::ReaderGone => 128 + libc::SIGPIPE,
        }
    }

    /// Whether `main` prints it: a reader gone asked for no more, and hears nothing.
    pub fn is_said(&self) -> bool {
        !matches!(self, Error::ReaderGone)
    }

    pub fn message(&self) -> &str {
        match self {
            Error::Usage(m) | Error::Run(m) => m,
            Error::ReaderGone => "standard output's reader has gone",
        }
    }
}

impl fmt::Display for Error {
    /// The message on one line: a message may quote what the user typed or a file held,
    /// and a line break (or another control character) in that must not split the one
    /// `error: ...` line `main` prints, so those are shown escaped (`\n`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for c in self.message().chars() {
            if c.is_control() && c != '\t' {
                write!(f, "{}", c.escape_default())?;
            } else {
                f.write_char(c)?;
            }
        }
        Ok(())
    }
}

impl std::error::Error for Error {}

pub type Result<T> = std::result::Result<T, Error>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shown_on_one_line_whatever_it_quotes() {
        let e = Error::usage("unexpected argument 'a\nb\r\u{1}c\td'");
        assert_eq!(e.to_string(), "unexpected argument 'a\\nb\\r\\u{1}c\td'");
        assert_eq!(e.message(), "unexpected argument 'a\nb\r\u{1}c\td'");
        assert_eq!(Error::run("plain text").to_string(), "plain text");
    }

    #[test]
    fn a_reader_gone_is_141_and_unsaid() {
        assert_eq!(Error::ReaderGone.exit_code(), 141);
        assert!(!Error::ReaderGone.is_said());
        assert!(Error::run("x").is_said());
        assert_eq!(Error::usage("x").exit_code(), 1);
    }
}
