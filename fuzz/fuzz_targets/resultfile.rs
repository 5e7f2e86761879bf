//! Fuzz target: result files for `merge` and the HTML report, JSON and interval logs (see
//! `kvbench_fuzz::resultfile`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| kvbench_fuzz::resultfile::check(data));
