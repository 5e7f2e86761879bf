//! Text to stdout and stderr that a closed pipe cannot turn into a panic: `print!` and
//! `eprintln!` panic when the reader of a pipe has gone (`kvbench ... 2>&1 | head`,
//! `--help | head`), which would end a run before it writes its files. [`print_now`] and
//! the macros below write the same text and drop a failed write: it had nowhere to go.

use std::fmt;
use std::io::Write;

/// `eprint!` that never panics: see the module.
#[macro_export]
macro_rules! eprint_safe {
    ($($arg:tt)*) => {
        $crate::console::write_stderr(format_args!($($arg)*), false)
    };
}

/// `eprintln!` that never panics: see the module.
#[macro_export]
macro_rules! eprintln_safe {
    () => {
        $crate::console::write_stderr(format_args!(""), true)
    };
    ($($arg:tt)*) => {
        $crate::console::write_stderr(format_args!($($arg)*), true)
    };
}

/// Writes `text` to stdout and flushes it (a live line has no newline to flush it); a
/// write error, such as a reader gone early, is dropped.
pub fn print_now(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

/// Writes `args` (and a newline) to stderr in one write, so lines of several threads do
/// not interleave; an error is dropped.
pub fn write_stderr(args: fmt::Arguments<'_>, newline: bool) {
    let mut text = fmt::format(args);
    if newline {
        text.push('\n');
    }
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}

#[cfg(test)]
mod tests {
    #[test]
    fn formats_like_eprintln() {
        // Nothing to observe but that it formats and returns; a closed stderr is
        // covered end to end by tests/closed_pipes.rs.
        crate::eprint_safe!("{}", "");
        crate::eprintln_safe!("{:>0}", "");
    }
}
