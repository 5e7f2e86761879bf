//! The keys of one request (an MGET, or an arbitrary command's `__key__`s), in one reusable
//! buffer: no allocation per request once warmed up.

/// Keys for one request, one per `__key__`, in one reusable buffer (no allocation once
/// warmed up).
#[derive(Clone, Debug, Default)]
pub struct KeyBatch {
    bytes: Vec<u8>,
    ends: Vec<usize>,
}

impl KeyBatch {
    /// An empty batch.
    pub fn new() -> Self {
        KeyBatch::default()
    }

    /// Forgets the keys, keeping the memory.
    pub fn clear(&mut self) {
        self.bytes.clear();
        self.ends.clear();
    }

    /// Adds a key.
    pub fn push(&mut self, key: &[u8]) {
        self.bytes.extend_from_slice(key);
        self.ends.push(self.bytes.len());
    }

    /// Adds the key `prefix` + `id` in decimal (`memtier-42`), as memtier's `%s%llu`.
    pub fn push_key(&mut self, prefix: &str, id: u64) {
        let mut digits = itoa::Buffer::new();
        self.bytes.extend_from_slice(prefix.as_bytes());
        self.bytes.extend_from_slice(digits.format(id).as_bytes());
        self.ends.push(self.bytes.len());
    }

    /// Number of keys.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether the batch holds no key.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Key `n`, if there is one.
    pub fn get(&self, n: usize) -> Option<&[u8]> {
        let end = *self.ends.get(n)?;
        let start = if n == 0 { 0 } else { self.ends[n - 1] };
        Some(&self.bytes[start..end])
    }

    /// The keys in order.
    pub fn iter(&self) -> impl Iterator<Item = &[u8]> + Clone {
        (0..self.len()).filter_map(move |n| self.get(n))
    }

    /// Key `n % len`, or empty if the batch is empty.
    pub fn get_wrapping(&self, n: usize) -> &[u8] {
        match self.len() {
            0 => b"",
            len => self.get(n % len).unwrap_or_default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_batch_reuses_memory() {
        let mut keys = KeyBatch::new();
        keys.push_key("p-", 7);
        keys.push(b"abc");
        assert_eq!(
            (keys.len(), keys.get(0), keys.get(1)),
            (2, Some(&b"p-7"[..]), Some(&b"abc"[..]))
        );
        assert_eq!(keys.get(2), None);
        keys.clear();
        assert!(keys.is_empty());
    }
}
