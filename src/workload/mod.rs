//! What each client sends next: keys, values and the SET:GET sequence.

pub mod generator;
pub mod keys;
pub mod sequence;
pub mod values;
