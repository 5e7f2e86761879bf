//! Front ends: each tool's own command line, parsed into what the engine runs, and its own text.

pub mod redis_benchmark;
