//! Front ends: each tool's own command line and output over the shared engine.

pub mod zbench;
