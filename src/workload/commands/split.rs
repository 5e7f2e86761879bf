//! Splitting a command line into arguments, as memtier and `redis-cli` do: blanks,
//! `"double quotes"` with escapes, `'single quotes'`.

/// Why a command line could not be split into arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SplitError {
    /// A quote was opened and never closed.
    Unbalanced,
    /// A closing quote was followed by something other than a blank (`"a"b`).
    TextAfterQuote,
}

impl std::fmt::Display for SplitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            SplitError::Unbalanced => "unbalanced quotes",
            SplitError::TextAfterQuote => {
                "a closing quote must be followed by a space or the end of the command"
            }
        })
    }
}

/// Blanks skipped between arguments (C's `isspace`).
fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

/// Blanks that end an unquoted argument.
fn ends_word(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r')
}

fn hex_value(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

/// Splits a command line into arguments, as memtier and `redis-cli` do.
///
/// ```text
/// set k "a b"           -> [set] [k] [a b]
/// set k "say \"hi\"\n"  -> [set] [k] [say "hi"<LF>]
/// set k "\x00\xff"      -> [set] [k] [<00><ff>]
/// set k 'it\'s'         -> [set] [k] [it's]
/// set k a"b c"d         -> error: a closing quote must be followed by a space
/// ```
///
/// A quote may open in the middle of a word (`a"b c"` is `ab c`). Inside double quotes an
/// unknown escape is the character itself (`\q` is `q`), and `\x` without two hex digits is
/// `x`. Inside single quotes only `\'` is an escape.
pub fn split_args(line: &[u8]) -> Result<Vec<Vec<u8>>, SplitError> {
    let mut args = Vec::new();
    let mut p = 0;
    loop {
        while p < line.len() && is_space(line[p]) {
            p += 1;
        }
        if p >= line.len() {
            return Ok(args);
        }
        let mut arg = Vec::new();
        let mut in_double = false;
        let mut in_single = false;
        loop {
            let c = line.get(p).copied();
            if in_double {
                match c {
                    None => return Err(SplitError::Unbalanced),
                    Some(b'\\') if line.get(p + 1) == Some(&b'x') => {
                        let hi = line.get(p + 2).copied().and_then(hex_value);
                        let lo = line.get(p + 3).copied().and_then(hex_value);
                        if let (Some(hi), Some(lo)) = (hi, lo) {
                            arg.push(hi * 16 + lo);
                            p += 4;
                        } else {
                            arg.push(b'x');
                            p += 2;
                        }
                    }
                    Some(b'\\') if p + 1 < line.len() => {
                        arg.push(match line[p + 1] {
                            b'n' => b'\n',
                            b'r' => b'\r',
                            b't' => b'\t',
                            b'b' => 0x08,
                            b'a' => 0x07,
                            other => other,
                        });
                        p += 2;
                    }
                    Some(b'"') => {
                        if line.get(p + 1).is_some_and(|&n| !is_space(n)) {
                            return Err(SplitError::TextAfterQuote);
                        }
                        p += 1;
                        break;
                    }
                    Some(other) => {
                        arg.push(other);
                        p += 1;
                    }
                }
            } else if in_single {
                match c {
                    None => return Err(SplitError::Unbalanced),
                    Some(b'\\') if line.get(p + 1) == Some(&b'\'') => {
                        arg.push(b'\'');
                        p += 2;
                    }
                    Some(b'\'') => {
                        if line.get(p + 1).is_some_and(|&n| !is_space(n)) {
                            return Err(SplitError::TextAfterQuote);
                        }
                        p += 1;
                        break;
                    }
                    Some(other) => {
                        arg.push(other);
                        p += 1;
                    }
                }
            } else {
                match c {
                    None => break,
                    Some(b) if ends_word(b) => {
                        p += 1;
                        break;
                    }
                    Some(b'"') => {
                        in_double = true;
                        p += 1;
                    }
                    Some(b'\'') => {
                        in_single = true;
                        p += 1;
                    }
                    Some(other) => {
                        arg.push(other);
                        p += 1;
                    }
                }
            }
        }
        args.push(arg);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(line: &str) -> Vec<Vec<u8>> {
        split_args(line.as_bytes()).unwrap()
    }

    fn strs(args: &[Vec<u8>]) -> Vec<String> {
        args.iter()
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect()
    }

    #[test]
    fn splits_on_blanks() {
        assert_eq!(strs(&split("set  k\tv ")), ["set", "k", "v"]);
        assert_eq!(strs(&split("  get\r\nk")), ["get", "k"]);
        assert!(split("").is_empty());
        assert!(split(" \t ").is_empty());
    }

    #[test]
    fn double_quotes_keep_spaces_and_unescape() {
        assert_eq!(strs(&split(r#"set k "a b""#)), ["set", "k", "a b"]);
        assert_eq!(
            split(r#""say \"hi\"" "\\" "\n\r\t\b\a" "\q""#),
            [
                b"say \"hi\"".to_vec(),
                b"\\".to_vec(),
                b"\n\r\t\x08\x07".to_vec(),
                b"q".to_vec()
            ]
        );
        assert_eq!(split(r#""\x00\xfF\x41""#), [vec![0x00, 0xff, b'A']]);
        // \x without two hex digits is a plain x.
        assert_eq!(split(r#""\xZZ" "\x4""#), [b"xZZ".to_vec(), b"x4".to_vec()]);
        assert_eq!(split(r#""""#), [Vec::<u8>::new()]);
        assert_eq!(strs(&split(r#"a"b c" d"#)), ["ab c", "d"]);
    }

    #[test]
    fn single_quotes_only_escape_quote() {
        assert_eq!(
            split(r"'it\'s' 'a\nb' 'x y'"),
            [b"it's".to_vec(), b"a\\nb".to_vec(), b"x y".to_vec()]
        );
    }

    #[test]
    fn split_errors() {
        assert_eq!(split_args(br#"set k "abc"#), Err(SplitError::Unbalanced));
        assert_eq!(split_args(br"set k 'abc"), Err(SplitError::Unbalanced));
        assert_eq!(split_args(br#"set k "abc\"#), Err(SplitError::Unbalanced));
        assert_eq!(split_args(br#"set "a"b"#), Err(SplitError::TextAfterQuote));
        assert_eq!(split_args(br"set 'a'b"), Err(SplitError::TextAfterQuote));
    }
}
