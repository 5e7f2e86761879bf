//! A request's key as the encoders take it: in two parts, so a generated key (the key
//! prefix, then its id's digits) goes straight into the request instead of being put
//! together in a buffer of its own first.

/// A key: `head` then `tail` (a whole key is all head).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Key<'a> {
    head: &'a [u8],
    tail: &'a [u8],
}

impl<'a> Key<'a> {
    /// The key `head` followed by `tail`.
    #[inline]
    pub fn new(head: &'a [u8], tail: &'a [u8]) -> Key<'a> {
        Key { head, tail }
    }

    /// Bytes of the whole key.
    #[inline]
    pub fn len(&self) -> usize {
        self.head.len() + self.tail.len()
    }

    /// Whether the key has no bytes.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Appends the key's bytes to `out`.
    #[inline]
    pub fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(self.head);
        out.extend_from_slice(self.tail);
    }

    /// The key cut to at most `max` bytes (a protocol's length limit).
    pub fn clamp(self, max: usize) -> Key<'a> {
        if self.len() <= max {
            self
        } else if self.head.len() >= max {
            Key::new(&self.head[..max], &[])
        } else {
            Key::new(self.head, &self.tail[..max - self.head.len()])
        }
    }
}

impl<'a> From<&'a [u8]> for Key<'a> {
    fn from(key: &'a [u8]) -> Key<'a> {
        Key::new(key, &[])
    }
}

impl<'a, const N: usize> From<&'a [u8; N]> for Key<'a> {
    fn from(key: &'a [u8; N]) -> Key<'a> {
        Key::new(key, &[])
    }
}

impl<'a> From<&'a Vec<u8>> for Key<'a> {
    fn from(key: &'a Vec<u8>) -> Key<'a> {
        Key::new(key, &[])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(key: Key) -> Vec<u8> {
        let mut out = Vec::new();
        key.write(&mut out);
        out
    }

    #[test]
    fn both_parts_are_written_in_order() {
        let key = Key::new(b"memtier-", b"42");
        assert_eq!(key.len(), 10);
        assert_eq!(bytes(key), b"memtier-42");
        assert_eq!(bytes(Key::from(b"k")), b"k");
        assert!(Key::from(b"").is_empty());
    }

    #[test]
    fn clamping_cuts_the_tail_first() {
        let key = Key::new(b"abc", b"defg");
        assert_eq!(bytes(key.clamp(10)), b"abcdefg");
        assert_eq!(bytes(key.clamp(5)), b"abcde");
        assert_eq!(bytes(key.clamp(3)), b"abc");
        assert_eq!(bytes(key.clamp(2)), b"ab");
        assert_eq!(bytes(key.clamp(0)), b"");
    }
}
