//! Text to standard output without `print!`'s panic: help, versions, shown
//! configurations and live lines written at once, a reader gone early (`--help | head`,
//! a closed pipe) ending the text rather than the process with a backtrace.

use std::io::Write;

/// Writes `text` to stdout and flushes it (a live line has no newline to flush it); a
/// write error, such as a reader gone early, is ignored: the text had nowhere to go.
pub fn print_now(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}
