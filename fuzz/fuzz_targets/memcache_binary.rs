//! Fuzz target: memcached binary responses decoded against each request kind, checked against the
//! incremental-decoder contract (see `kvbench_fuzz::decoder`).
#![no_main]

use kvbench::protocol::Protocol;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| kvbench_fuzz::decoder::check(Protocol::MemcacheBinary, data));
