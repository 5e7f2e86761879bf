//! `--askpass`: the password read as one line from standard input before the probe
//! connects, as redis-cli reads it, so it is in no command line, environment or history.
//!
//! ```text
//! stdin a terminal:  "Please input password: " -> a `*` per character typed -> Enter
//!                    (stdout's terminal shows the prompt; stderr does when stdout is piped)
//! stdin anything else (`echo pw | kvbench latency --askpass`): one line, no prompt
//! ```
//!
//! On a terminal the line is read as redis-cli's line editor (linenoise, mask mode) reads
//! it: echo and line editing off, a byte at a time, so each character shows as one `*`
//! and the length is all that can be seen. The keys:
//!
//! ```text
//! Enter (CR or LF)      ends the line; a newline is shown
//! Backspace (DEL, ^H)   drops the last character, "\x08 \x08" takes its `*` off the screen
//! ^U / ^W               drop the whole line / its last word, `*`s and all
//! ^D on an empty line   no password, as stdin's end on a pipe (refused below); else nothing
//! ^C (SIGTERM, SIGHUP)  the terminal restored, exit 128 + the signal, nothing sent
//! arrows, ^A ^E ^L ...  ignored: the cursor stays at the end of the line
//! anything else         part of the password (Tab too), one `*` per UTF-8 character
//! ```
//!
//! redis-cli redraws the whole line for a Backspace (`\r`, the prompt, the `*`s, then an
//! escape sequence to clear the rest); the terminal ends up showing what "\x08 \x08"
//! leaves. It shows a `*` per byte and drops a byte per Backspace, which can leave half a
//! UTF-8 character in the password; here both go by characters. It also takes Ctrl-J for
//! a character, where here it is Enter, as it is to every canonical-mode terminal.
//!
//! The line is the password whole (colons and all, as redis-cli takes it); only its `\n`
//! is dropped. An empty one, or none (Ctrl-D, a pipe's end), is refused before anything
//! connects. Ctrl-C (or SIGTERM, SIGHUP) at the prompt restores the terminal and ends
//! the invocation with 128 + the signal: redis-cli's line editor took Ctrl-C (and Ctrl-D
//! on an empty line) for no password and went on to be refused, which nobody means.

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

/// The prompt, then the line as `*`s; the terminal's settings come back however the
/// read ends (a line, Ctrl-C, an error).
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
        let _raw = RawInput::new()?;
        show(PROMPT);
        read_masked(read_stdin, show)
    };
    // The terminal does not echo the Enter (or ^C, ^D): end the prompt's line so what
    // follows starts on its own. Output processing was left on, so it shows as "\r\n",
    // as redis-cli's does.
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
            Err(e) => return Err(unreadable(e)),
        }
    }
    password(line)
}

/// The keys typed at the terminal, `read` a byte at a time, edited by [`MaskedLine`]
/// with what it shows handed to `show`; a stop signal seen before or while reading ends
/// it as [`Asked::Stopped`].
fn read_masked(
    mut read: impl FnMut(&mut [u8]) -> std::io::Result<usize>,
    mut show: impl FnMut(&str),
) -> Result<Asked, Error> {
    let mut line = MaskedLine::default();
    let mut byte = [0u8; 1];
    loop {
        if let Some(signal) = signals::received() {
            return Ok(Asked::Stopped(signal));
        }
        match read(&mut byte) {
            // The terminal hung up: nobody pressed Enter, so nothing typed is meant.
            Ok(0) => return password(Vec::new()),
            Ok(_) => match line.key(byte[0]) {
                Key::Show(text) if text.is_empty() => {}
                Key::Show(text) => show(&text),
                Key::Enter => return password(line.typed),
                Key::NoPassword => return password(Vec::new()),
                Key::Interrupt => return Ok(Asked::Stopped(libc::SIGINT)),
            },
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(unreadable(e)),
        }
    }
}

fn unreadable(e: std::io::Error) -> Error {
    Error::run(format!(
        "--askpass cannot read the password from standard input: {e}"
    ))
}

/// The line read, as the password: refused when empty or not text.
fn password(line: Vec<u8>) -> Result<Asked, Error> {
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

/// What the terminal shows to take one `*` off: back, blank it, back again.
const ERASE: &str = "\x08 \x08";

/// What one typed byte did.
#[derive(Debug, PartialEq, Eq)]
enum Key {
    /// The line changed, or not: `*`s to add or [`ERASE`]s to show (maybe none).
    Show(String),
    /// Enter: the line is the password.
    Enter,
    /// Ctrl-D on an empty line: no password at all.
    NoPassword,
    /// A Ctrl-C that came as a byte: the terminal was set not to make it a signal.
    Interrupt,
}

/// Where an escape sequence (an arrow, Home, Alt+key) stands: its bytes are dropped
/// whole, or they would land in the password as `[D` and the like.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Escape {
    #[default]
    None,
    /// ESC seen: `[` or `O` starts a sequence, any other byte is Alt+that key.
    Started,
    /// `ESC [`: parameters until a final byte in `@`..=`~`.
    Csi,
    /// `ESC O`: one more byte (the keypad's and some terminals' arrows).
    Ss3,
}

/// The password being typed: its bytes, and whether an escape sequence is under way.
/// The cursor is always at the end, so every key acts on the last character.
#[derive(Debug, Default)]
struct MaskedLine {
    typed: Vec<u8>,
    escape: Escape,
}

impl MaskedLine {
    fn key(&mut self, byte: u8) -> Key {
        const CTRL_C: u8 = 0x03;
        const CTRL_D: u8 = 0x04;
        const CTRL_H: u8 = 0x08;
        const CTRL_U: u8 = 0x15;
        const CTRL_W: u8 = 0x17;
        const ESC: u8 = 0x1b;
        const DEL: u8 = 0x7f;
        let nothing = || Key::Show(String::new());
        match self.escape {
            Escape::None => {}
            Escape::Started => {
                self.escape = match byte {
                    b'[' => Escape::Csi,
                    b'O' => Escape::Ss3,
                    _ => Escape::None,
                };
                return nothing();
            }
            Escape::Csi => {
                if (0x40..=0x7e).contains(&byte) {
                    self.escape = Escape::None;
                }
                return nothing();
            }
            Escape::Ss3 => {
                self.escape = Escape::None;
                return nothing();
            }
        }
        match byte {
            // The terminal may pass CR as it is (`stty -icrnl`); LF is Enter to a
            // canonical-mode terminal, the mode this one was in.
            b'\r' | b'\n' => Key::Enter,
            DEL | CTRL_H => {
                let from = self.last_char();
                self.erase_from(from)
            }
            CTRL_U => self.erase_from(0),
            CTRL_W => {
                // linenoise's word: the spaces before the cursor, then the non-spaces.
                let blanks = self.typed.iter().rev().take_while(|&&b| b == b' ').count();
                let word = self.typed[..self.typed.len() - blanks]
                    .iter()
                    .rev()
                    .take_while(|&&b| b != b' ')
                    .count();
                self.erase_from(self.typed.len() - blanks - word)
            }
            CTRL_D if self.typed.is_empty() => Key::NoPassword,
            CTRL_C => Key::Interrupt,
            ESC => {
                self.escape = Escape::Started;
                nothing()
            }
            // linenoise's cursor, screen and history keys (^A ^B ^D ^E ^F ^K ^L ^N ^P
            // ^T): with the cursor kept at the end, there is nothing for them to do.
            0x01 | 0x02 | CTRL_D | 0x05 | 0x06 | 0x0b | 0x0c | 0x0e | 0x10 | 0x14 => nothing(),
            _ => {
                self.typed.push(byte);
                // A UTF-8 character's later bytes add no `*`: its first one did.
                Key::Show(if is_continuation(byte) { "" } else { "*" }.to_string())
            }
        }
    }

    /// Where the last character starts (its first UTF-8 byte); 0 for an empty line.
    fn last_char(&self) -> usize {
        self.typed
            .iter()
            .rposition(|&b| !is_continuation(b))
            .unwrap_or(0)
    }

    /// Drops the bytes from `from` on, and takes their `*`s off the screen.
    fn erase_from(&mut self, from: usize) -> Key {
        let stars = self.typed[from..]
            .iter()
            .filter(|&&b| !is_continuation(b))
            .count();
        self.typed.truncate(from);
        Key::Show(ERASE.repeat(stars))
    }
}

/// A UTF-8 continuation byte (`10xxxxxx`): part of the character before it.
fn is_continuation(byte: u8) -> bool {
    byte & 0xc0 == 0x80
}

/// Standard input's terminal with echo and line editing off until dropped, when its
/// settings as found are put back.
struct RawInput {
    saved: libc::termios,
}

impl RawInput {
    fn new() -> Result<RawInput, Error> {
        let unusable =
            |e: std::io::Error| Error::run(format!("--askpass cannot turn echo off: {e}"));
        // SAFETY: termios is plain data, filled in by tcgetattr before it is read.
        let mut saved: libc::termios = unsafe { std::mem::zeroed() };
        // SAFETY: fd 0 and a valid pointer to a termios.
        if unsafe { libc::tcgetattr(libc::STDIN_FILENO, &mut saved) } != 0 {
            return Err(unusable(std::io::Error::last_os_error()));
        }
        let mut raw = saved;
        // Each key as it is typed (no ICANON), shown only as the `*` written for it (no
        // ECHO), and ^V, ^O not the terminal's to take (no IEXTEN), as linenoise sets it.
        // ISIG stays, unlike linenoise: Ctrl-C is a signal, handled as SIGTERM is. Output
        // processing stays too, so "\n" goes out as "\r\n".
        raw.c_lflag &=
            !(libc::ICANON | libc::IEXTEN | libc::ECHO | libc::ECHOE | libc::ECHOK | libc::ECHONL);
        // A read returns as soon as one byte is there, and waits for it however long.
        raw.c_cc[libc::VMIN] = 1;
        raw.c_cc[libc::VTIME] = 0;
        // TCSAFLUSH, as getpass(3): what was typed ahead, echoed in clear, is not the
        // password.
        // SAFETY: fd 0 and a valid termios.
        if unsafe { libc::tcsetattr(libc::STDIN_FILENO, libc::TCSAFLUSH, &raw) } != 0 {
            return Err(unusable(std::io::Error::last_os_error()));
        }
        Ok(RawInput { saved })
    }
}

impl Drop for RawInput {
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

    fn piped(input: &[u8]) -> Result<Asked, Error> {
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
                piped(input).expect("a password"),
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
            let err = piped(input).expect_err("refused").to_string();
            assert!(err.contains(needle), "{input:?}: {err}");
            assert!(!err.contains('\n'), "{err}");
        }
        let err = read_line(|_: &mut [u8]| Err(ErrorKind::PermissionDenied.into()))
            .expect_err("refused")
            .to_string();
        assert!(err.starts_with("--askpass cannot read"), "{err}");
    }

    /// `keys` typed at the terminal: what the prompt ended with, and what was shown
    /// after the prompt.
    fn typed(keys: &[u8]) -> (Result<Asked, Error>, String) {
        let mut shown = String::new();
        let asked = read_masked(reader(keys), |text: &str| shown.push_str(text));
        (asked, shown)
    }

    fn stars(n: usize) -> String {
        "*".repeat(n)
    }

    fn erased(n: usize) -> String {
        ERASE.repeat(n)
    }

    #[test]
    fn a_star_per_character_and_backspace_takes_one_off() {
        for (keys, want, shown) in [
            (&b"secret\r"[..], "secret", stars(6)),
            // LF is Enter too, and what follows it is not read.
            (b"secret\nmore", "secret", stars(6)),
            // A Backspace on an empty line shows nothing; DEL and ^H both erase.
            (
                b"\x7fsecrx\x7fey\x08t\r",
                "secret",
                format!(
                    "{}{}{}{}{}",
                    stars(5),
                    erased(1),
                    stars(2),
                    erased(1),
                    stars(1)
                ),
            ),
            // One `*` for a two-byte character, and one Backspace drops it whole.
            (
                "é\x7fü\r".as_bytes(),
                "ü",
                format!("{}{}{}", stars(1), erased(1), stars(1)),
            ),
            // Tab and the rest of what is not a key of the editor's are characters.
            (b"a\tb:c\r", "a\tb:c", stars(5)),
        ] {
            let (asked, got) = typed(keys);
            assert_eq!(
                asked.expect("a password"),
                Asked::Password(want.into()),
                "{keys:?}"
            );
            assert_eq!(got, shown, "{keys:?}");
        }
    }

    #[test]
    fn ctrl_u_drops_the_line_and_ctrl_w_its_last_word() {
        let (asked, shown) = typed(b"abc\x15pa ss  \x17word\r");
        assert_eq!(
            asked.expect("a password"),
            Asked::Password("pa word".into())
        );
        assert_eq!(
            shown,
            format!(
                "{}{}{}{}{}",
                stars(3),
                erased(3),
                stars(7),
                erased(4),
                stars(4)
            )
        );
    }

    #[test]
    fn cursor_keys_and_escape_sequences_are_dropped_whole() {
        // Left, Ctrl+Right, keypad Up, Alt+x, Home and ^A ^E ^L: none reaches the line.
        let (asked, shown) = typed(b"se\x1b[D\x1b[1;5C\x1bOA\x1bx\x1b[1~\x01\x05\x0ccret\r");
        assert_eq!(asked.expect("a password"), Asked::Password("secret".into()));
        assert_eq!(shown, stars(6));
    }

    #[test]
    fn ctrl_d_is_no_password_on_an_empty_line_only() {
        let (asked, shown) = typed(b"\x04secret\r");
        let err = asked.expect_err("refused").to_string();
        assert!(err.contains("empty password"), "{err}");
        assert_eq!(shown, "", "nothing after ^D is read");
        let (asked, shown) = typed(b"se\x04cret\r");
        assert_eq!(asked.expect("a password"), Asked::Password("secret".into()));
        assert_eq!(shown, stars(6));
    }

    #[test]
    fn a_hang_up_an_empty_line_and_ctrl_c_send_nothing() {
        for keys in [&b"secret"[..], b"\r", b"x\x7f\r"] {
            let err = typed(keys).0.expect_err("refused").to_string();
            assert!(err.contains("empty password"), "{keys:?}: {err}");
        }
        // ^C as a byte (the terminal was set not to make it a signal) stops as SIGINT.
        let (asked, shown) = typed(b"sec\x03ret\r");
        assert_eq!(asked.expect("stopped"), Asked::Stopped(libc::SIGINT));
        assert_eq!(shown, stars(3));
    }
}
