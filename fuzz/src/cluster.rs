//! `CLUSTER SLOTS` and `MOVED`/`ASK` parsing on any bytes: what the `cluster` fuzz target
//! asserts.
//!
//! - The token walk ([`resp_value::tokens`], [`resp_value::first_bulk`]) promises to stop,
//!   never panic, on bytes the decoder never checked: it gets raw bytes here.
//! - A reply the decoder accepts is read into a value and a slot map: every slot is owned
//!   by a listed node or by none.
//! - A redirection read from any text names a slot below 16384 and reads back the same
//!   once written out again.
//!
//! Included by path from the main suite's `tests/fuzz_properties.rs`.

use kvbench::protocol::resp_value;

use crate::decoder::{redirect_round_trip, slot_map_in_range};

/// Checks the cluster parsers on one fuzz input (the same bytes as a reply, raw tokens
/// and error text).
pub fn check(data: &[u8]) {
    // Raw bytes: the walk ends early on what it cannot read, within a bounded number of
    // steps (each token moves forward).
    let mut steps = 0;
    for _ in resp_value::tokens(data) {
        steps += 1;
        assert!(steps <= data.len(), "the token walk did not move forward");
    }
    let _ = resp_value::first_bulk(data);
    if let Some((value, used)) = resp_value::value(data) {
        assert!(used > 0 && used <= data.len());
        slot_map_in_range(&value);
    }
    redirect_round_trip(data);
}
