//! The rules of Go's `flag` package over a clap definition: the argv walk, the usage
//! layout, and number and boolean values as Go's `strconv` reads them.
//!
//! Go's `flag` package accepts `-name`, `--name`, `-name=value` and `-name value`; a boolean
//! takes no separate value (`-multi`, `-multi=true`, `-multi=false`), and the last
//! occurrence of a flag wins. [`translate`] walks argv with exactly those rules and rewrites
//! each known flag as clap's `--name=value`, so clap stays the one definition of every flag
//! (built with [`uint`], [`int`], [`string`] and [`switch`]). Errors keep Go's wording:
//!
//! ```text
//! flag provided but not defined: -x
//! flag needs an argument: -c
//! invalid value "abc" for flag -c: parse error
//! invalid boolean value "yes" for -multi: parse error
//! bad flag syntax: ---c
//! ```
//!
//! Numbers parse as Go's `strconv` does with base 0 (`0x1F`, `0o17`, `017`, `0b101`,
//! `1_000`).

use std::fmt::Write as _;

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::{Arg, ArgAction, Command};

use crate::error::Error;

fn valued(name: &'static str, type_name: &'static str, default: &'static str) -> Arg {
    Arg::new(name)
        .long(name)
        .value_name(type_name)
        .action(ArgAction::Set)
        .default_value(default)
}

/// A flag of Go type `uint` (`flag.Uint64`), parsed as Go parses it.
pub fn uint(name: &'static str, default: &'static str, help: &'static str) -> Arg {
    valued(name, "uint", default)
        .help(help)
        .value_parser(|s: &str| go_parse_uint(s).map_err(GoNumError::message))
}

/// A flag of Go type `int` (`flag.Int`, `flag.Int64`), parsed as Go parses it.
pub fn int(name: &'static str, default: &'static str, help: &'static str) -> Arg {
    valued(name, "int", default)
        .help(help)
        .value_parser(|s: &str| go_parse_int(s).map_err(GoNumError::message))
}

/// A flag of Go type `string`.
pub fn string(name: &'static str, default: &'static str, help: &'static str) -> Arg {
    valued(name, "string", default).help(help)
}

/// A Go `bool` flag: a switch, set by `-name` or `-name=true`.
pub fn switch(name: &'static str, help: &'static str) -> Arg {
    Arg::new(name)
        .long(name)
        .action(ArgAction::SetTrue)
        .help(help)
}

/// What an argv means once walked by Go's rules.
pub enum Translated {
    /// `-help` or `--help`: print the usage.
    Help,
    /// The flags in clap's `--name=value` / `--name` form.
    Tokens(Vec<String>),
}

/// Walks argv with the rules of Go's `flag.FlagSet.Parse` and rewrites every flag as
/// `--name=value` (or `--name` for a switch set to true).
pub fn translate(cmd: &Command, args: &[String]) -> Result<Translated, Error> {
    // (name, value) in order; a switch is kept only while its last value is true.
    let mut flags: Vec<(String, Option<String>)> = Vec::new();
    let mut rest = args.iter();
    while let Some(word) = rest.next() {
        let bytes = word.as_bytes();
        if word == "--" {
            if let Some(next) = rest.next() {
                return Err(not_a_flag(cmd, next));
            }
            break;
        }
        if bytes.len() < 2 || bytes[0] != b'-' {
            return Err(not_a_flag(cmd, word));
        }
        let body = if bytes[1] == b'-' {
            &word[2..]
        } else {
            &word[1..]
        };
        if body.is_empty() || body.starts_with('-') || body.starts_with('=') {
            return Err(Error::usage(format!("bad flag syntax: {word}")));
        }
        let (name, value) = match body.find('=') {
            Some(eq) => (&body[..eq], Some(body[eq + 1..].to_string())),
            None => (body, None),
        };
        let Some(arg) = cmd.get_arguments().find(|a| a.get_long() == Some(name)) else {
            // Go answers -help (and -h when -h is not a flag of its own) with the usage.
            if name == "help" {
                return Ok(Translated::Help);
            }
            return Err(Error::usage(format!(
                "flag provided but not defined: -{name}"
            )));
        };
        if arg.get_action().takes_values() {
            let value = match value {
                Some(v) => v,
                // A value is the next word whatever it looks like, as in Go (`-a -secret`).
                None => rest
                    .next()
                    .cloned()
                    .ok_or_else(|| Error::usage(format!("flag needs an argument: -{name}")))?,
            };
            flags.push((name.to_string(), Some(value)));
        } else {
            let on = match value {
                None => true,
                Some(v) => go_parse_bool(&v).ok_or_else(|| {
                    Error::usage(format!(
                        "invalid boolean value {v:?} for -{name}: parse error"
                    ))
                })?,
            };
            flags.retain(|(n, _)| n != name);
            if on {
                flags.push((name.to_string(), None));
            }
        }
    }
    let tokens = flags
        .into_iter()
        .map(|(name, value)| match value {
            Some(v) => format!("--{name}={v}"),
            None => format!("--{name}"),
        })
        .collect();
    Ok(Translated::Tokens(tokens))
}

/// Go stops parsing at the first word that is not a flag, and a tool that takes no
/// arguments then ignores it and every flag after it; kvbench refuses it instead of
/// silently dropping flags.
fn not_a_flag(cmd: &Command, word: &str) -> Error {
    Error::usage(format!(
        "{word:?} is not a flag: kvbench {} takes flags only (see -help)",
        cmd.get_name()
    ))
}

/// A clap error as one line in Go's words: only values can fail here, since [`translate`]
/// already checked every name.
pub fn clap_error(e: &clap::Error) -> Error {
    let arg = match e.get(ContextKind::InvalidArg) {
        Some(ContextValue::String(s)) => s.trim_start_matches('-').split(' ').next(),
        _ => None,
    };
    let value = match e.get(ContextKind::InvalidValue) {
        Some(ContextValue::String(s)) => Some(s.as_str()),
        _ => None,
    };
    let reason = std::error::Error::source(e).map(|s| s.to_string());
    match (e.kind(), arg, value, reason) {
        (ErrorKind::ValueValidation, Some(name), Some(value), Some(reason)) => Error::usage(
            format!("invalid value {value:?} for flag -{name}: {reason}"),
        ),
        _ => {
            let text = e.to_string();
            let first = text.lines().next().unwrap_or("invalid arguments");
            Error::usage(first.trim().trim_start_matches("error: ").to_string())
        }
    }
}

/// The usage text in the layout of Go's `flag.PrintDefaults`, from the clap definition:
///
/// ```text
/// Usage of kvbench zbench:
///   -c uint
///     <TAB>number of clients. (default 50)
///   -v<TAB>Output version and exit
/// ```
pub fn usage_text(cmd: &Command) -> String {
    let mut args: Vec<&Arg> = cmd.get_arguments().collect();
    args.sort_by_key(|a| a.get_long().unwrap_or_default());
    let mut out = format!("Usage of kvbench {}:\n", cmd.get_name());
    for arg in args {
        let name = arg.get_long().unwrap_or_default();
        let mut line = format!("  -{name}");
        let type_name = arg
            .get_value_names()
            .and_then(|names| names.first())
            .map(|n| n.as_str())
            .filter(|_| arg.get_action().takes_values());
        if let Some(type_name) = type_name {
            line.push(' ');
            line.push_str(type_name);
        }
        // Go puts the usage of a one-letter switch on the same line.
        line.push_str(if line.len() <= 4 { "\t" } else { "\n    \t" });
        line.push_str(&arg.get_help().map(|h| h.to_string()).unwrap_or_default());
        let default = arg
            .get_default_values()
            .first()
            .and_then(|d| d.to_str())
            .unwrap_or_default();
        // Go leaves out a default that is its type's zero value.
        match type_name {
            Some("string") if !default.is_empty() => {
                let _ = write!(line, " (default {default:?})");
            }
            Some("uint" | "int") if default != "0" => {
                let _ = write!(line, " (default {default})");
            }
            _ => {}
        }
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// Why Go's `strconv` refuses a number, worded as the `flag` package words it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GoNumError {
    /// Not a number in any base Go reads.
    Syntax,
    /// A number, but outside the type's range.
    Range,
}

impl GoNumError {
    fn message(self) -> String {
        match self {
            GoNumError::Syntax => "parse error".to_string(),
            GoNumError::Range => "value out of range".to_string(),
        }
    }
}

/// Go's `strconv.ParseUint(s, 0, 64)`: a base prefix (`0x`, `0o`, `0b`, or a leading `0`
/// for octal) and `_` between digits; no sign.
pub fn go_parse_uint(s: &str) -> Result<u64, GoNumError> {
    let bytes = s.as_bytes();
    if bytes.is_empty() {
        return Err(GoNumError::Syntax);
    }
    let (base, digits): (u64, &[u8]) = if bytes[0] == b'0' {
        match bytes.get(1).map(u8::to_ascii_lowercase) {
            Some(b'b') if bytes.len() >= 3 => (2, &bytes[2..]),
            Some(b'o') if bytes.len() >= 3 => (8, &bytes[2..]),
            Some(b'x') if bytes.len() >= 3 => (16, &bytes[2..]),
            _ => (8, &bytes[1..]),
        }
    } else {
        (10, bytes)
    };
    let mut n: u64 = 0;
    let mut underscores = false;
    for &c in digits {
        let d = match c {
            b'_' => {
                underscores = true;
                continue;
            }
            b'0'..=b'9' => u64::from(c - b'0'),
            b'a'..=b'z' => u64::from(c - b'a') + 10,
            b'A'..=b'Z' => u64::from(c - b'A') + 10,
            _ => return Err(GoNumError::Syntax),
        };
        if d >= base {
            return Err(GoNumError::Syntax);
        }
        n = n
            .checked_mul(base)
            .and_then(|n| n.checked_add(d))
            .ok_or(GoNumError::Range)?;
    }
    if underscores && !go_underscores_ok(bytes) {
        return Err(GoNumError::Syntax);
    }
    Ok(n)
}

/// Go's `strconv.ParseInt(s, 0, 64)`: an optional `+` or `-`, then as [`go_parse_uint`].
pub fn go_parse_int(s: &str) -> Result<i64, GoNumError> {
    let (negative, magnitude) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let n = go_parse_uint(magnitude)?;
    if negative {
        0i64.checked_sub_unsigned(n).ok_or(GoNumError::Range)
    } else {
        i64::try_from(n).map_err(|_| GoNumError::Range)
    }
}

/// Go's rule for `_` in a number literal: only between digits, or right after a base
/// prefix, and never last.
fn go_underscores_ok(s: &[u8]) -> bool {
    // What came last: a digit (or base prefix), an underscore, the start, or anything else.
    #[derive(PartialEq)]
    enum Saw {
        Start,
        Digit,
        Underscore,
        Other,
    }
    let s = match s.first() {
        Some(b'-' | b'+') => &s[1..],
        _ => s,
    };
    let mut saw = Saw::Start;
    let mut hex = false;
    let mut i = 0;
    if s.len() >= 2 && s[0] == b'0' && matches!(s[1].to_ascii_lowercase(), b'b' | b'o' | b'x') {
        i = 2;
        saw = Saw::Digit;
        hex = s[1].eq_ignore_ascii_case(&b'x');
    }
    for &c in &s[i..] {
        if c.is_ascii_digit() || (hex && c.is_ascii_hexdigit()) {
            saw = Saw::Digit;
        } else if c == b'_' {
            if saw != Saw::Digit {
                return false;
            }
            saw = Saw::Underscore;
        } else {
            if saw == Saw::Underscore {
                return false;
            }
            saw = Saw::Other;
        }
    }
    saw != Saw::Underscore
}

/// Go's `strconv.ParseBool`.
pub fn go_parse_bool(s: &str) -> Option<bool> {
    match s {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Some(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_numbers() {
        assert_eq!(go_parse_uint("0"), Ok(0));
        assert_eq!(go_parse_uint("42"), Ok(42));
        assert_eq!(go_parse_uint("0x1F"), Ok(31));
        assert_eq!(go_parse_uint("0X1f"), Ok(31));
        assert_eq!(go_parse_uint("0o17"), Ok(15));
        assert_eq!(go_parse_uint("017"), Ok(15));
        assert_eq!(go_parse_uint("0b101"), Ok(5));
        assert_eq!(go_parse_uint("1_000_000"), Ok(1_000_000));
        assert_eq!(go_parse_uint("0x_1F"), Ok(31));
        assert_eq!(go_parse_uint("18446744073709551615"), Ok(u64::MAX));
        assert_eq!(
            go_parse_uint("18446744073709551616"),
            Err(GoNumError::Range)
        );
        for bad in [
            "", "08", "0x", "1__0", "_1", "1_", "+1", "-1", "1e3", " 1", "0xg",
        ] {
            assert_eq!(go_parse_uint(bad), Err(GoNumError::Syntax), "{bad:?}");
        }
        assert_eq!(go_parse_int("-9223372036854775808"), Ok(i64::MIN));
        assert_eq!(go_parse_int("9223372036854775807"), Ok(i64::MAX));
        assert_eq!(go_parse_int("9223372036854775808"), Err(GoNumError::Range));
        assert_eq!(go_parse_int("-9223372036854775809"), Err(GoNumError::Range));
        assert_eq!(go_parse_int("+5"), Ok(5));
        assert_eq!(go_parse_int("-0x10"), Ok(-16));
        assert_eq!(go_parse_int("-_1"), Err(GoNumError::Syntax));
    }
}
