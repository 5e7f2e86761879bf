//! Wire formats: encode requests into a write buffer and decode replies; no I/O here.

pub mod resp;
