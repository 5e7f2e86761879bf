//! One request as bytes with fixed-width fields to fill per request: random numbers
//! (`__rand_int__`, 12 digits) and a cluster slot tag (`{tag}`, 3 bytes between braces).
//!
//! Filling a field never changes the request's length, so a request is a copy of the
//! template into the write buffer and a few in-place patches: no allocation, no
//! formatting per request.
//!
//! ```text
//! SET key:__rand_int__ VXK          random fields  ->  SET key:000000000417 VXK
//! SET key:{tag}:__rand_int__ VXK    + a slot tag   ->  SET key:{3Ac}:000000000417 VXK
//!      the tag's 3 bytes hash to a chosen slot ('}'-padded when the tag is shorter)
//! ```

use crate::protocol::decimal::write_twelve_digits;
use crate::protocol::resp_encode::{encode_array_header, encode_bulk};

/// The 12-byte field filled with 12 zero-padded digits of a random number.
pub const RAND_PLACEHOLDER: &[u8] = b"__rand_int__";
/// The 5-byte field whose 3 inner bytes are filled with a slot's hash tag.
pub const TAG_PLACEHOLDER: &[u8] = b"{tag}";
/// Numbers written into a random field are below this: 12 digits.
pub const RAND_LIMIT: u64 = 1_000_000_000_000;

/// One request's bytes with the offsets of the fields to fill on every request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequestTemplate {
    bytes: Vec<u8>,
    rand_at: Vec<usize>,
    tag_at: Vec<usize>,
}

impl RequestTemplate {
    /// An inline command (`PING\r\n`), sent as is.
    pub fn inline(line: &[u8]) -> Self {
        let mut bytes = line.to_vec();
        bytes.extend_from_slice(b"\r\n");
        RequestTemplate {
            bytes,
            rand_at: Vec::new(),
            tag_at: Vec::new(),
        }
    }

    /// A RESP multi-bulk command. With `randomize` every `__rand_int__` inside an
    /// argument becomes a random field; with `tagged` every `{tag}` becomes a tag field.
    /// Otherwise they are sent as they are.
    pub fn from_args<A: AsRef<[u8]>>(args: &[A], randomize: bool, tagged: bool) -> Self {
        let mut bytes = Vec::new();
        let mut rand_at = Vec::new();
        let mut tag_at = Vec::new();
        encode_array_header(&mut bytes, args.len());
        for arg in args {
            let arg = arg.as_ref();
            encode_bulk(&mut bytes, arg);
            // The argument sits just before its closing CRLF.
            let start = bytes.len() - arg.len() - 2;
            if randomize {
                rand_at.extend(find_all(arg, RAND_PLACEHOLDER).map(|at| start + at));
            }
            if tagged {
                tag_at.extend(find_all(arg, TAG_PLACEHOLDER).map(|at| start + at));
            }
        }
        RequestTemplate {
            bytes,
            rand_at,
            tag_at,
        }
    }

    /// The request with its fields unfilled.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Offsets in [`bytes`](Self::bytes) of each 12-byte random field.
    pub fn rand_positions(&self) -> &[usize] {
        &self.rand_at
    }

    /// Offsets in [`bytes`](Self::bytes) of each 5-byte `{tag}` field.
    pub fn tag_positions(&self) -> &[usize] {
        &self.tag_at
    }

    /// Append one request to `out`: each random field gets its own `next_rand()` (its
    /// last 12 digits), each tag field gets `tag`. Allocates nothing once `out` has the
    /// capacity.
    #[inline]
    pub fn write_request(
        &self,
        out: &mut Vec<u8>,
        mut next_rand: impl FnMut() -> u64,
        tag: Option<&[u8; 3]>,
    ) {
        let base = out.len();
        out.extend_from_slice(&self.bytes);
        let request = &mut out[base..];
        for &at in &self.rand_at {
            // Drawn whatever happens below, so the random sequence never shifts.
            let n = next_rand();
            // Always 12 bytes inside the request (the template's own offsets).
            if let Some(field) = request[at..].first_chunk_mut::<12>() {
                write_rand_field(field, n);
            }
        }
        if let Some(tag) = tag {
            for &at in &self.tag_at {
                request[at + 1..at + 4].copy_from_slice(tag);
            }
        }
    }
}

/// Writes the last 12 digits of `n`, zero-padded, into a random field.
#[inline]
pub fn write_rand_field(field: &mut [u8; 12], n: u64) {
    write_twelve_digits(field, n);
}

/// Non-overlapping occurrences of `needle` in `hay`, left to right.
fn find_all<'a>(hay: &'a [u8], needle: &'a [u8]) -> impl Iterator<Item = usize> + 'a {
    let mut from = 0;
    std::iter::from_fn(move || {
        let at = hay
            .get(from..)?
            .windows(needle.len())
            .position(|w| w == needle)?
            + from;
        from = at + needle.len();
        Some(at)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_filled_in_place() {
        let t = RequestTemplate::from_args(&["SET", "k:{tag}:__rand_int__", "v"], true, true);
        assert_eq!(t.rand_positions().len(), 1);
        assert_eq!(t.tag_positions().len(), 1);
        let mut out = b"prefix".to_vec();
        t.write_request(&mut out, || 42, Some(b"ab}"));
        assert_eq!(
            &out[6..],
            b"*3\r\n$3\r\nSET\r\n$20\r\nk:{ab}}:000000000042\r\n$1\r\nv\r\n"
        );
        assert_eq!(out.len(), 6 + t.bytes().len());
        // Without a tag the braces stay as typed.
        out.clear();
        t.write_request(&mut out, || 7, None);
        assert!(out.windows(5).any(|w| w == b"{tag}"));
    }

    #[test]
    fn unfilled_without_randomize() {
        let t = RequestTemplate::from_args(&["GET", "__rand_int__"], false, false);
        assert!(t.rand_positions().is_empty() && t.tag_positions().is_empty());
        let mut out = Vec::new();
        t.write_request(&mut out, || unreachable!("no random field"), None);
        assert_eq!(out, t.bytes());
        assert_eq!(RequestTemplate::inline(b"PING").bytes(), b"PING\r\n");
    }

    #[test]
    fn rand_field_keeps_the_last_digits() {
        let mut field = [0u8; 12];
        write_rand_field(&mut field, 42);
        assert_eq!(&field, b"000000000042");
        write_rand_field(&mut field, 1_234_567_890_123);
        assert_eq!(&field, b"234567890123");
    }

    #[test]
    fn placeholders_do_not_overlap() {
        let t =
            RequestTemplate::from_args(&["x", "__rand_int____rand_int___rand_int__"], true, false);
        assert_eq!(t.rand_positions().len(), 2);
    }
}
