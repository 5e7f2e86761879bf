//! Redis RESP commands into a write buffer: a whole command from its arguments, the
//! SET and GET the workload sends most (sized exactly, keys written in two parts), and
//! the pieces (array header, bulk) for commands built argument by argument.

use crate::protocol::{Key, decimal_len};

/// Appends one command, as an array of bulk strings, to `out`.
///
/// ```text
/// *<number of args>\r\n
/// $<len of arg 1>\r\n<arg 1>\r\n
/// ...
/// ```
///
/// The exact size is computed first and reserved once, so a warmed-up buffer
/// never reallocates and a cold one reallocates at most once.
pub fn encode_command(out: &mut Vec<u8>, args: &[&[u8]]) {
    let mut size = 1 + decimal_len(args.len()) + 2;
    for arg in args {
        size += 1 + decimal_len(arg.len()) + 2 + arg.len() + 2;
    }
    out.reserve(size);
    let mut num = itoa::Buffer::new();
    out.push(b'*');
    out.extend_from_slice(num.format(args.len()).as_bytes());
    out.extend_from_slice(b"\r\n");
    for arg in args {
        out.push(b'$');
        out.extend_from_slice(num.format(arg.len()).as_bytes());
        out.extend_from_slice(b"\r\n");
        out.extend_from_slice(arg);
        out.extend_from_slice(b"\r\n");
    }
}

/// Appends `SET key value` to `out`.
///
/// ```text
/// *3\r\n$3\r\nSET\r\n$<key len>\r\n<key>\r\n$<value len>\r\n<value>\r\n
/// ```
pub fn encode_set<'a>(out: &mut Vec<u8>, key: impl Into<Key<'a>>, value: &[u8]) {
    let key = key.into();
    // The hot path's commands are written by hand rather than through
    // `encode_command`: constant parts as one copy, lengths without a division loop.
    const HEAD: &[u8] = b"*3\r\n$3\r\nSET\r\n$";
    // The exact size, so a warmed-up buffer never reallocates.
    out.reserve(
        HEAD.len()
            + length_len(key.len())
            + key.len()
            + 3
            + length_len(value.len())
            + value.len()
            + 2,
    );
    out.extend_from_slice(HEAD);
    push_length(out, key.len());
    key.write(out);
    out.extend_from_slice(b"\r\n$");
    push_length(out, value.len());
    out.extend_from_slice(value);
    out.extend_from_slice(b"\r\n");
}

/// Appends `GET key` to `out`.
///
/// ```text
/// *2\r\n$3\r\nGET\r\n$<key len>\r\n<key>\r\n
/// ```
pub fn encode_get<'a>(out: &mut Vec<u8>, key: impl Into<Key<'a>>) {
    const HEAD: &[u8] = b"*2\r\n$3\r\nGET\r\n$";
    let key = key.into();
    let n = key.len();
    out.reserve(HEAD.len() + length_len(n) + n + 2);
    if n < 100 {
        // The head and the key's length as one copy of a fixed size (which compiles
        // to a few moves, where a copy of a varying size is a call), less what a
        // one-digit length does not use.
        let mut head = [0u8; HEAD.len() + 4];
        head[..HEAD.len()].copy_from_slice(HEAD);
        let digits = if n < 10 {
            head[HEAD.len()..].copy_from_slice(&[b'0' + n as u8, b'\r', b'\n', 0]);
            3
        } else {
            head[HEAD.len()..].copy_from_slice(&[
                b'0' + (n / 10) as u8,
                b'0' + (n % 10) as u8,
                b'\r',
                b'\n',
            ]);
            4
        };
        out.extend_from_slice(&head);
        out.truncate(out.len() - (4 - digits));
    } else {
        out.extend_from_slice(HEAD);
        push_length(out, n);
    }
    key.write(out);
    out.extend_from_slice(b"\r\n");
}

/// Bytes of `<n>\r\n`.
#[inline]
fn length_len(n: usize) -> usize {
    2 + match n {
        0..10 => 1,
        10..100 => 2,
        _ => decimal_len(n),
    }
}

/// Appends `<n>\r\n`: keys and small values have one- or two-digit lengths, written
/// without `itoa`'s general path.
#[inline(always)]
fn push_length(out: &mut Vec<u8>, n: usize) {
    if n < 10 {
        out.extend_from_slice(&[b'0' + n as u8, b'\r', b'\n']);
    } else if n < 100 {
        out.extend_from_slice(&[b'0' + (n / 10) as u8, b'0' + (n % 10) as u8, b'\r', b'\n']);
    } else {
        out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
        out.extend_from_slice(b"\r\n");
    }
}

/// Appends an array header `*<n>\r\n`, for commands whose argument count is only known
/// at run time (MGET); follow it with `n` calls to [`encode_bulk`].
pub fn encode_array_header(out: &mut Vec<u8>, n: usize) {
    let mut num = itoa::Buffer::new();
    out.push(b'*');
    out.extend_from_slice(num.format(n).as_bytes());
    out.extend_from_slice(b"\r\n");
}

/// Appends one bulk string `$<len>\r\n<arg>\r\n`.
pub fn encode_bulk(out: &mut Vec<u8>, arg: &[u8]) {
    let mut num = itoa::Buffer::new();
    out.reserve(1 + decimal_len(arg.len()) + 2 + arg.len() + 2);
    out.push(b'$');
    out.extend_from_slice(num.format(arg.len()).as_bytes());
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(arg);
    out.extend_from_slice(b"\r\n");
}

/// Appends one bulk string holding `key`.
pub fn encode_bulk_key(out: &mut Vec<u8>, key: Key) {
    out.reserve(1 + length_len(key.len()) + key.len() + 2);
    out.push(b'$');
    push_length(out, key.len());
    key.write(out);
    out.extend_from_slice(b"\r\n");
}
