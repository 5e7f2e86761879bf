//! Fuzz target: `--data-import` files (see `kvbench_fuzz::import`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| kvbench_fuzz::import::check(data));
