//! Fuzz target: `--config` files and the command line after them (see `kvbench_fuzz::config`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| kvbench_fuzz::config::check(data));
