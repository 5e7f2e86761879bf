//! Why a connection cannot go on (broken, so a reconnect may help, or fatal), and an OS
//! error told the way the engine's messages tell it.

use std::io;

/// Why a connection cannot go on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Failure {
    /// The connection broke (refused, reset, closed, garbage, stalled): reconnecting may
    /// help.
    Broken(String),
    /// Nothing a reconnect can fix (a refused password, a failed SELECT, a cluster that
    /// is down): the client ends.
    Fatal(String),
}

impl Failure {
    /// The message for the user.
    pub fn message(&self) -> &str {
        match self {
            Failure::Broken(m) | Failure::Fatal(m) => m,
        }
    }

    /// The same failure with `more` appended to its message.
    pub fn with_suffix(self, more: &str) -> Failure {
        match self {
            Failure::Broken(m) => Failure::Broken(m + more),
            Failure::Fatal(m) => Failure::Fatal(m + more),
        }
    }
}

/// An OS error without the "(os error N)" suffix users do not need.
pub fn describe(err: &io::Error) -> String {
    let text = err.to_string();
    match text.find(" (os error") {
        Some(cut) => text[..cut].to_lowercase(),
        None => text,
    }
}
