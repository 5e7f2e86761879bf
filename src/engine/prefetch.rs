//! Hints to the processor to bring memory into its caches before it is used.
//!
//! At pipeline 16 with 50 connections, a connection's state has left the caches by the
//! time its replies come back: between two visits the kernel's socket work for the other
//! connections walks through more memory than the caches hold. Sampled, the first touch
//! of the requests in flight (read back for the replies) and of the buffers was the
//! largest single cost in kvbench's user time. A visit starts with a read system call
//! that takes microseconds; memory asked for just before it has arrived when the call
//! returns.

/// Bytes the processor moves into its caches at once.
const LINE: usize = 64;

/// The cache lines `bytes` from the start of a line take.
pub const fn lines(bytes: usize) -> usize {
    bytes.div_ceil(LINE)
}

/// Cache lines asked for the plain path's stats rows (SET and GET) before a visit
/// reads: the most it records into.
pub const ROW_LINES: usize = 16;

/// Cache lines of the read buffer asked for before a read: a batch of 16 short replies.
pub const REPLY_LINES: usize = 2;

/// Cache lines of the write buffer asked for before a read: a batch of 16 GETs written
/// from their templates.
pub const BATCH_LINES: usize = 12;

/// Cache lines of the requests in flight asked for before a read: a batch of 16, two
/// compact entries to a line.
pub const IN_FLIGHT_LINES: usize = 8;

/// Asks for the cache lines that hold `items` (at most `max_lines` of them, from the
/// first).
#[inline(always)]
pub fn prefetch_slice<T>(items: &[T], max_lines: usize) {
    let bytes = std::mem::size_of_val(items);
    let base = items.as_ptr().cast::<u8>();
    for line in 0..bytes.div_ceil(LINE).min(max_lines) {
        prefetch_address(base.wrapping_add(line * LINE));
    }
}

/// Asks for the cache line that holds `address`.
#[inline(always)]
fn prefetch_address(address: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is only a hint: it reads nothing into the program, writes
    // nothing and never faults, whatever the address (here always inside a live slice).
    unsafe {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        _mm_prefetch::<_MM_HINT_T0>(address.cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = address;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefetching_any_slice_changes_nothing() {
        let data: Vec<u64> = (0..1000).collect();
        prefetch_slice(&data, 4);
        prefetch_slice(&data[999..], 8);
        prefetch_slice::<u64>(&[], 8);
        assert_eq!(data.iter().sum::<u64>(), 999 * 1000 / 2);
    }
}
