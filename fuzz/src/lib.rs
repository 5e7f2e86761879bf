//! What kvbench's fuzz targets assert, one module per parser of outside bytes; each target
//! in `fuzz_targets/` hands its input to one `check`. The main suite's property tests
//! include these same modules by path, so the fuzzer and `cargo test` hold the parsers to
//! one contract.

pub mod cluster;
pub mod config;
pub mod decoder;
pub mod import;
pub mod monitor;
pub mod resultfile;
