//! Front ends: each reads its own command line and renders its own text.

pub mod intrinsic_latency;
pub mod latency;
