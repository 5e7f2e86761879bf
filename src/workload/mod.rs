//! What each client sends next: keys, values and the SET:GET sequence.

pub mod args;
pub mod commands;
pub mod import;
pub mod indexed_draws;
pub mod keys;
pub mod request_template;
pub mod sequence;
pub mod values;
pub mod verify;
