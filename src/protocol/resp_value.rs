//! Reading the values inside a RESP reply the decoder has accepted: for the few replies
//! kvbench reads beyond their kind (`CLUSTER SLOTS`, a SCAN cursor, its own encoded
//! commands).
//!
//! [`RespDecoder`] is the one RESP parser: it decides whether bytes are a whole, valid
//! reply. [`Tokens`] then walks such a reply without checking it again (it relies on the
//! decoder's verdict, and stops, never panics, on bytes that were not checked), and
//! [`value`] builds a small tree from it, checking with the decoder first.
//!
//! ```text
//! *2\r\n$2\r\n17\r\n*1\r\n$1\r\nk\r\n   tokens: Aggregate(2) Bulk("17") Aggregate(1) Bulk("k")
//! ```

use crate::protocol::resp::{RespDecoder, parse_integer};
use crate::protocol::{Decode, ReplyKind};

/// One element of a reply, as [`Tokens`] meets it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Token<'a> {
    /// `+text`.
    Simple(&'a [u8]),
    /// `-text` or a blob error's text.
    Error(&'a [u8]),
    /// `:n`.
    Int(i64),
    /// A bulk string's bytes (a verbatim string's text after its `xxx:` format).
    Bulk(&'a [u8]),
    /// `$-1`, `*-1` or `_`.
    Nil,
    /// An array, set, map or push header with its number of elements (a map's pairs
    /// count twice); the elements follow.
    Aggregate { kind: ReplyKind, elements: usize },
    /// A double, boolean or big number: its text.
    Other(&'a [u8]),
}

/// Walks the elements of a reply depth first, each aggregate's header before its elements.
/// RESP3 attributes are skipped with what they annotate left in place.
pub struct Tokens<'a> {
    buf: &'a [u8],
    pos: usize,
}

/// The elements of `reply`, which must be a reply [`RespDecoder`] accepted (or the start of
/// a stream of them); on other bytes the walk ends early.
pub fn tokens(reply: &[u8]) -> Tokens<'_> {
    Tokens { buf: reply, pos: 0 }
}

impl<'a> Tokens<'a> {
    /// The header line at `pos`: its type byte and content, and where the line ends.
    fn line(&self) -> Option<(u8, &'a [u8], usize)> {
        let buf = self.buf;
        let type_byte = *buf.get(self.pos)?;
        let rest = buf.get(self.pos + 1..)?;
        let cr = rest.iter().position(|&b| b == b'\r')?;
        Some((type_byte, &rest[..cr], self.pos + 1 + cr + 2))
    }

    /// Skips `count` whole elements (an attribute's pairs).
    fn skip(&mut self, count: usize) -> Option<()> {
        let mut left = count;
        while left > 0 {
            if let Token::Aggregate { elements, .. } = self.next()? {
                // Unchecked bytes may claim counts whose sum overflows.
                left = left.checked_add(elements)?;
            }
            left -= 1;
        }
        Some(())
    }
}

impl<'a> Iterator for Tokens<'a> {
    type Item = Token<'a>;

    fn next(&mut self) -> Option<Token<'a>> {
        loop {
            let (type_byte, content, after) = self.line()?;
            let length = || parse_integer(content);
            let token = match type_byte {
                b'+' => Token::Simple(content),
                b'-' => Token::Error(content),
                b':' => Token::Int(length()?),
                b'_' => Token::Nil,
                b',' | b'#' | b'(' => Token::Other(content),
                b'$' | b'=' | b'!' => {
                    let len = length()?;
                    if len < 0 {
                        self.pos = after;
                        return Some(Token::Nil);
                    }
                    let end = after.checked_add(usize::try_from(len).ok()?)?;
                    let body = self.buf.get(after..end)?;
                    self.pos = end + 2;
                    return Some(match type_byte {
                        b'!' => Token::Error(body),
                        b'=' => Token::Bulk(body.get(4..).unwrap_or_default()),
                        _ => Token::Bulk(body),
                    });
                }
                b'|' => {
                    self.pos = after;
                    let pairs = usize::try_from(length()?).ok()?;
                    self.skip(pairs.checked_mul(2)?)?;
                    continue;
                }
                b'*' | b'%' | b'~' | b'>' => {
                    let count = length()?;
                    if count < 0 {
                        Token::Nil
                    } else {
                        let (kind, per) = match type_byte {
                            b'*' => (ReplyKind::Array, 1),
                            b'%' => (ReplyKind::Map, 2),
                            b'~' => (ReplyKind::Set, 1),
                            _ => (ReplyKind::Push, 1),
                        };
                        Token::Aggregate {
                            kind,
                            elements: usize::try_from(count).ok()?.checked_mul(per)?,
                        }
                    }
                }
                _ => return None,
            };
            self.pos = after;
            return Some(token);
        }
    }
}

/// The direct elements of an aggregate reply, each with how many elements it holds in
/// turn (for an aggregate; 0 otherwise): what EXEC's reply says of each queued command.
/// Allocates nothing.
///
/// ```text
/// *2\r\n*1\r\n$1\r\na\r\n-ERR x\r\n   elements: (Aggregate, 1) (Error("ERR x"), 0)
/// ```
pub struct Elements<'a> {
    tokens: Tokens<'a>,
    left: usize,
}

/// The elements of `reply` (a reply [`RespDecoder`] accepted), or `None` when it is not an
/// array, set or map.
pub fn elements(reply: &[u8]) -> Option<Elements<'_>> {
    let mut tokens = tokens(reply);
    match tokens.next()? {
        Token::Aggregate { kind, elements } if kind != ReplyKind::Push => Some(Elements {
            tokens,
            left: elements,
        }),
        _ => None,
    }
}

impl<'a> Iterator for Elements<'a> {
    /// The element's first token, and for an aggregate its number of elements.
    type Item = (Token<'a>, usize);

    fn next(&mut self) -> Option<(Token<'a>, usize)> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let token = self.tokens.next()?;
        let inner = match token {
            Token::Aggregate { elements, .. } => {
                Tokens::skip(&mut self.tokens, elements)?;
                elements
            }
            _ => 0,
        };
        Some((token, inner))
    }
}

/// A reply as a tree, for replies read field by field (`CLUSTER SLOTS`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value<'a> {
    Simple(&'a [u8]),
    Error(&'a [u8]),
    Int(i64),
    Bulk(&'a [u8]),
    Nil,
    /// Any aggregate's elements (a map's keys and values alternate).
    Array(Vec<Value<'a>>),
    /// A double, boolean or big number: its text.
    Other(&'a [u8]),
}

/// The reply at the start of `buf` as a tree, and its length: `None` unless the decoder
/// accepts a whole reply there.
pub fn value(buf: &[u8]) -> Option<(Value<'_>, usize)> {
    let Decode::Complete(reply) = RespDecoder::new().decode(buf) else {
        return None;
    };
    let mut walk = tokens(&buf[..reply.len]);
    Some((build(&mut walk)?, reply.len))
}

fn build<'a>(walk: &mut Tokens<'a>) -> Option<Value<'a>> {
    Some(match walk.next()? {
        Token::Simple(t) => Value::Simple(t),
        Token::Error(t) => Value::Error(t),
        Token::Int(n) => Value::Int(n),
        Token::Bulk(b) => Value::Bulk(b),
        Token::Nil => Value::Nil,
        Token::Other(t) => Value::Other(t),
        Token::Aggregate { elements, .. } => {
            // The decoder accepted the reply, so each element is really there: the
            // reservation is bounded by the reply's size.
            let mut items = Vec::with_capacity(elements.min(walk.buf.len()));
            for _ in 0..elements {
                items.push(build(walk)?);
            }
            Value::Array(items)
        }
    })
}

/// The first element of an array reply when it is a bulk string (`*2\r\n$2\r\n17\r\n...`
/// gives `17`): where a SCAN reply keeps its cursor. Allocates nothing.
pub fn first_bulk(reply: &[u8]) -> Option<&[u8]> {
    let mut walk = tokens(reply);
    match (walk.next()?, walk.next()?) {
        (Token::Aggregate { elements, .. }, Token::Bulk(b)) if elements > 0 => Some(b),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_walk_depth_first() {
        let reply = b"*3\r\n$2\r\n17\r\n*1\r\n$1\r\nk\r\n:-5\r\n";
        let got: Vec<Token> = tokens(reply).collect();
        assert_eq!(
            got,
            [
                Token::Aggregate {
                    kind: ReplyKind::Array,
                    elements: 3
                },
                Token::Bulk(b"17"),
                Token::Aggregate {
                    kind: ReplyKind::Array,
                    elements: 1
                },
                Token::Bulk(b"k"),
                Token::Int(-5),
            ]
        );
    }

    #[test]
    fn values_of_resp3_replies() {
        let (v, used) = value(b"|1\r\n+ttl\r\n:3\r\n%1\r\n+a\r\n=7\r\ntxt:xyz\r\nrest").unwrap();
        assert_eq!(used, 35);
        assert_eq!(
            v,
            Value::Array(vec![Value::Simple(b"a"), Value::Bulk(b"xyz")])
        );
        assert_eq!(value(b"$-1\r\n").unwrap().0, Value::Nil);
        assert_eq!(value(b"!3\r\nERR\r\n").unwrap().0, Value::Error(b"ERR"));
    }

    #[test]
    fn only_whole_valid_replies_have_a_value() {
        assert_eq!(value(b"*2\r\n:1\r\n"), None);
        assert_eq!(value(b"?\r\n"), None);
        assert_eq!(value(b"*1\r\n$5\r\nab\r\n"), None);
    }

    #[test]
    fn first_bulk_is_the_scan_cursor() {
        assert_eq!(first_bulk(b"*2\r\n$2\r\n17\r\n*0\r\n"), Some(&b"17"[..]));
        assert_eq!(first_bulk(b"*0\r\n"), None);
        assert_eq!(first_bulk(b"-ERR x\r\n"), None);
        assert_eq!(first_bulk(b"*2\r\n:1\r\n"), None);
    }

    /// Found by the `cluster` fuzz target: an attribute of 2^62 pairs whose first key
    /// is a map of 2^62 pairs made the count of elements to skip overflow.
    #[test]
    fn counts_that_overflow_end_the_walk() {
        let bytes = b"|4611686018427387904\r\n%4611686018427387904\r\n";
        assert_eq!(tokens(bytes).count(), 0);
        assert_eq!(first_bulk(bytes), None);
        let bytes = b"*1\r\n|9223372036854775807\r\n%9223372036854775807\r\n";
        assert_eq!(tokens(bytes).count(), 1);
    }

    #[test]
    fn unchecked_garbage_ends_the_walk_without_panicking() {
        for bytes in [&b"$9\r\nab"[..], b"*9", b"$-\r\n", b"|9\r\n+a\r\n", b"\r\n"] {
            let _ = tokens(bytes).count();
            let _ = first_bulk(bytes);
        }
    }

    #[test]
    fn elements_count_each_nested_reply() {
        let reply = b"*4\r\n*2\r\n$1\r\na\r\n*1\r\n$1\r\nb\r\n*0\r\n-ERR x\r\n:3\r\n";
        let seen: Vec<(bool, usize)> = elements(reply)
            .expect("an array")
            .map(|(token, n)| (matches!(token, Token::Error(_)), n))
            .collect();
        assert_eq!(seen, [(false, 2), (false, 0), (true, 0), (false, 0)]);
        assert!(elements(b"+OK\r\n").is_none());
        assert!(elements(b"*-1\r\n").is_none());
    }
}
