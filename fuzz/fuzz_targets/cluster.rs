//! Fuzz target: `CLUSTER SLOTS` replies, the token walk on unchecked bytes and `MOVED`/`ASK`
//! text (see `kvbench_fuzz::cluster`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| kvbench_fuzz::cluster::check(data));
