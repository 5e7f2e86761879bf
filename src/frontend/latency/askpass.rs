//! `--askpass`: the password read as one line from standard input before the probe
//! connects, as redis-cli reads it, so it is in no command line, environment or history.
//!
//! ```text
//! stdin a terminal:  echo off -> "Please input password: " -> line (Enter) -> echo back on
//!                    (stdout's terminal shows the prompt; stderr does when stdout is piped)
//! stdin anything else (`echo pw | kvbench latency --askpass`): one line, no prompt
//! ```
//!
//! The line is the password whole (colons and all, as redis-cli takes it); only its `\n`
//! is dropped. Ctrl-C (or SIGTERM, SIGHUP) at the prompt restores the terminal and ends
//! the invocation with 128 + the signal: redis-cli's line editor took Ctrl-C for an
//! empty password and went on to be refused, which nobody means.

use std::io::{ErrorKind, IsTerminal};

use crate::console::print_now;
use crate::error::Error;
use crate::signals;

/// redis-cli's prompt, word for word.
pub const PROMPT: &str = "Please input password: ";

/// What the prompt ended with.
#[derive(Debug, PartialEq, Eq)]
pub enum Asked {
    /// The line read, without its newline.
    Password(String),
    /// A stop signal arrived first: exit with 128 + it.
    Stopped(i32),
}

/// Reads the password from standard input (see the module).
pub fn ask() -> Result<Asked, Error> {
    // Ctrl-C must end the read, not be restarted under it: the usual handlers go back
    // once the line is in.
    signals::install_interrupting();
    let asked = if std::io::stdin().is_terminal() {
        ask_on_terminal()
    } else {
        read_line(read_stdin)
    };
    signals::install();
    asked
}

/// The prompt, then the line with echo off; the terminal's settings come back however
/// the read ends (a line, Ctrl-C, an error).
fn ask_on_terminal() -> Result<Asked, Error> {
    let to_stdout = std::io::stdout().is_terminal();
    let show = |text: &str| {
        // The figures own a piped stdout (`--raw > file`): the prompt must not land there.
        if to_stdout {
            print_now(text);
        } else {
            crate::eprint_safe!("{text}");
        }
    };
    let asked = {
        let _echo_off = EchoOff::new()?;
        show(PROMPT);
        read_line(read_stdin)
    };
    // The Enter (or ^C) was not echoed: end the prompt's line so what follows starts
    // on its own.
    show("\n");
    asked
}

/// One byte at a time from fd 0, by `read(2)` itself: std's `Stdin` buffers (taking more
/// than the line from a pipe) and its line readers retry an `EINTR`, which is how
/// Ctrl-C shows here.
fn read_stdin(buf: &mut [u8]) -> std::io::Result<usize> {
    // SAFETY: `buf` is valid for writes of `buf.len()` bytes for the whole call.
    let n = unsafe { libc::read(libc::STDIN_FILENO, buf.as_mut_ptr().cast(), buf.len()) };
    if n < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

/// The line `read` gives, up to `\n` or the end of input; a stop signal seen before or
/// while reading ends it as [`Asked::Stopped`].
fn read_line(mut read: impl FnMut(&mut [u8]) -> std::io::Result<usize>) -> Result<Asked, Error> {
    let mut line = Vec::new();
    let mut byte = [0u8; 1];
    loop {
        if let Some(signal) = signals::received() {
            return Ok(Asked::Stopped(signal));
        }
        match read(&mut byte) {
            Ok(0) => break,
            Ok(_) if byte[0] == b'\n' => break,
            Ok(_) => line.push(byte[0]),
            // The loop's head asks which signal it was; another one reads on.
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => {
                return Err(Error::run(format!(
                    "--askpass cannot read the password from standard input: {e}"
                )));
            }
        }
    }
    if line.is_empty() {
        return Err(Error::usage(
            "--askpass read an empty password from standard input: type it at the prompt, \
             or pipe it in (echo PASSWORD | kvbench latency --askpass ...).",
        ));
    }
    String::from_utf8(line).map(Asked::Password).map_err(|_| {
        Error::usage("--askpass read a password that is not UTF-8 text from standard input.")
    })
}

/// Standard input's terminal with echo off until dropped, when its settings as found
/// are put back.
struct EchoOff {
    saved: libc::termios,
}

impl EchoOff {
    fn new() -> Result<EchoOff, Error> {
        let unusable =
            |e: std::io::Error| Error::run(format!("--askpass cannot turn echo off: {e}"));
        // SAFETY: termios is plain data, filled in by tcgetattr before it is read.
        let mut saved: libc::termios = unsafe { std::mem::zeroed() };
        // SAFETY: fd 0 and a valid pointer to a termios.
        if unsafe { libc::tcgetattr(libc::STDIN_FILENO, &mut saved) } != 0 {
            return Err(unusable(std::io::Error::last_os_error()));
        }
        let mut quiet = saved;
        // Canonical mode and ISIG stay: the line can be edited, and Ctrl-C is a signal.
        quiet.c_lflag &= !(libc::ECHO | libc::ECHOE | libc::ECHOK | libc::ECHONL);
        // TCSAFLUSH, as getpass(3): what was typed ahead, echoed in clear, is not the
        // password.
        // SAFETY: fd 0 and a valid termios.
        if unsafe { libc::tcsetattr(libc::STDIN_FILENO, libc::TCSAFLUSH, &quiet) } != 0 {
            return Err(unusable(std::io::Error::last_os_error()));
        }
        Ok(EchoOff { saved })
    }
}

impl Drop for EchoOff {
    fn drop(&mut self) {
        // Nothing to do about a failure here but leave the terminal as it is.
        // SAFETY: fd 0 and the termios tcgetattr filled in.
        unsafe { libc::tcsetattr(libc::STDIN_FILENO, libc::TCSANOW, &self.saved) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that hands out `input`, as much as each call asks for.
    fn reader(input: &[u8]) -> impl FnMut(&mut [u8]) -> std::io::Result<usize> + '_ {
        let mut at = 0;
        move |buf: &mut [u8]| {
            let n = buf.len().min(input.len() - at);
            buf[..n].copy_from_slice(&input[at..at + n]);
            at += n;
            Ok(n)
        }
    }

    fn password(input: &[u8]) -> Result<Asked, Error> {
        read_line(reader(input))
    }

    #[test]
    fn one_line_whole_without_its_newline() {
        for (input, want) in [
            (&b"secret\n"[..], "secret"),
            (b"secret", "secret"),
            (b"pa:ss word\nnext line\n", "pa:ss word"),
            // redis-cli keeps a carriage return: it is part of what was sent.
            (b"secret\r\n", "secret\r"),
        ] {
            assert_eq!(
                password(input).expect("a password"),
                Asked::Password(want.to_string()),
                "{input:?}"
            );
        }
    }

    #[test]
    fn an_interrupted_read_reads_on() {
        let mut calls = 0;
        let read = |buf: &mut [u8]| {
            calls += 1;
            match calls {
                1 => Err(ErrorKind::Interrupted.into()),
                2 => {
                    buf[0] = b'x';
                    Ok(1)
                }
                _ => Ok(0),
            }
        };
        assert_eq!(read_line(read).expect("read"), Asked::Password("x".into()));
    }

    #[test]
    fn empty_unreadable_and_not_text_are_one_line_errors() {
        for (input, needle) in [
            (&b""[..], "empty password"),
            (b"\n", "empty password"),
            (b"\xff\xfe\n", "not UTF-8"),
        ] {
            let err = password(input).expect_err("refused").to_string();
            assert!(err.contains(needle), "{input:?}: {err}");
            assert!(!err.contains('\n'), "{err}");
        }
        let err = read_line(|_: &mut [u8]| Err(ErrorKind::PermissionDenied.into()))
            .expect_err("refused")
            .to_string();
        assert!(err.starts_with("--askpass cannot read"), "{err}");
    }
}
