//! Wire formats: encode requests into a write buffer and decode replies; no I/O here.

pub mod memcache_binary;
pub mod memcache_text;
pub mod resp;
