//! Fuzz target: `--monitor-input` captures (see `kvbench_fuzz::monitor`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| kvbench_fuzz::monitor::check(data));
