//! `kvbench merge`: many result files into one (the flags; the merging is `crate::merge`).

pub mod flags;
