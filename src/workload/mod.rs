//! What each client sends next: keys, values and the SET:GET sequence.

pub mod keys;
pub mod values;
