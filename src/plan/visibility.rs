//! Replica visibility: where tracked writes are looked for after the primary
//! acknowledged them, how many are tracked and for how long.

use std::time::Duration;

use crate::plan::Endpoint;

/// Bytes at the start of a tracked write's value that carry its stamp:
///
/// ```text
/// #SSSSSSSSSSSSSSSS#   the write's sequence number (hex, 16 digits), shared by every
///                      client of the process, so a later stamp means a later write
/// ```
pub const STAMP_LEN: usize = 18;

/// `--visibility-from` and its companions.
#[derive(Clone, Debug)]
pub struct VisibilityProbe {
    /// The other endpoint (a replica, another region) polled for tracked writes.
    pub endpoint: Endpoint,
    /// One write in this many is tracked (at least 1).
    pub every: u64,
    /// A tracked write not visible after this long counts as never seen.
    pub timeout: Duration,
}
