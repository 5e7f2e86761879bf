//! `-D/--debug`: a leveled logger that prints `file:line: message` on stderr.
//!
//! The level is process-wide (set once from the configuration, read everywhere). When it
//! is off, [`debug_log!`](crate::debug_log) costs one relaxed atomic load and a compare:
//! the message is never formatted.
//!
//! Levels: `-D` (1) shows connection set-up and other per-connection events, `-D -D` (2)
//! adds one line per request (its command and key).

use std::fmt;
use std::io::Write;
use std::sync::atomic::{AtomicU8, Ordering};

/// The current level: the number of `-D` flags given.
static LEVEL: AtomicU8 = AtomicU8::new(0);

/// Sets the process-wide debug level (0 = off).
pub fn set_level(level: u8) {
    LEVEL.store(level, Ordering::Relaxed);
}

/// The process-wide debug level (0 = off).
#[inline]
pub fn level() -> u8 {
    LEVEL.load(Ordering::Relaxed)
}

/// Whether a message of level `needed` prints. Level 0 messages are treated as level 1,
/// so nothing ever prints without `-D`.
#[inline]
pub fn enabled(needed: u8) -> bool {
    level() >= needed.max(1)
}

/// Prints one debug line on stderr. Called by [`debug_log!`](crate::debug_log) once it
/// knows the level allows it; a failed write to stderr is ignored.
#[cold]
pub fn emit(file: &str, line: u32, args: fmt::Arguments<'_>) {
    let text = format_line(file, line, args);
    let mut stderr = std::io::stderr().lock();
    let _ = stderr.write_all(text.as_bytes());
}

/// `file:line: message\n`.
fn format_line(file: &str, line: u32, args: fmt::Arguments<'_>) -> String {
    format!("{file}:{line}: {args}\n")
}

/// Prints `file:line: message` on stderr when the debug level is at least `level`:
///
/// ```text
/// src/client.rs:212: connection 3: connected to 127.0.0.1:6379
/// ```
///
/// The arguments are those of `format!`; they are not evaluated or formatted unless the
/// line prints.
///
/// ```
/// kvbench::debug::set_level(0);
/// kvbench::debug_log!(1, "never formatted: {}", 42);
/// ```
#[macro_export]
macro_rules! debug_log {
    ($level:expr, $($arg:tt)+) => {
        if $crate::debug::enabled($level) {
            $crate::debug::emit(file!(), line!(), format_args!($($arg)+));
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    /// Counts how often it is formatted.
    struct Counted<'a>(&'a Cell<u32>);

    impl fmt::Display for Counted<'_> {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            self.0.set(self.0.get() + 1);
            f.write_str("counted")
        }
    }

    #[test]
    fn line_is_file_line_message() {
        assert_eq!(
            format_line("src/client.rs", 12, format_args!("conn {} ready", 3)),
            "src/client.rs:12: conn 3 ready\n"
        );
    }

    // One test owns the global level, so parallel tests cannot race on it.
    #[test]
    fn levels_gate_messages_and_formatting() {
        let formatted = Cell::new(0);
        set_level(0);
        assert_eq!(level(), 0);
        assert!(!enabled(0) && !enabled(1) && !enabled(2));
        crate::debug_log!(1, "{}", Counted(&formatted));
        crate::debug_log!(0, "{}", Counted(&formatted));
        assert_eq!(formatted.get(), 0, "formatted while debug output is off");

        set_level(1);
        assert!(enabled(0) && enabled(1) && !enabled(2));
        crate::debug_log!(2, "{}", Counted(&formatted));
        assert_eq!(formatted.get(), 0, "a level-2 line formatted at -D");
        crate::debug_log!(1, "{}", Counted(&formatted));
        assert_eq!(formatted.get(), 1);

        set_level(2);
        assert!(enabled(2) && !enabled(3));
        crate::debug_log!(2, "{}", Counted(&formatted));
        assert_eq!(formatted.get(), 2);
        set_level(0);
    }
}
