//! The one error type for setup and user errors, with the exit code each maps to.

use std::fmt;

/// An error a user can act on. `main` prints `error: <message>` on one line and exits
/// with [`Error::exit_code`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// A bad flag, flag value or config file: nothing was sent.
    Usage(String),
    /// The run could not start or did not complete (unreachable server, server died,
    /// garbage replies, unwritable output file).
    Run(String),
}

impl Error {
    pub fn usage(msg: impl Into<String>) -> Self {
        Error::Usage(msg.into())
    }

    pub fn run(msg: impl Into<String>) -> Self {
        Error::Run(msg.into())
    }

    /// Exit status for this error: 1 for both kinds, as memtier uses.
    pub fn exit_code(&self) -> i32 {
        1
    }

    pub fn message(&self) -> &str {
        match self {
            Error::Usage(m) | Error::Run(m) => m,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

impl std::error::Error for Error {}

pub type Result<T> = std::result::Result<T, Error>;
