//! Decimal digits written fast into fixed-size request templates: a key id's digits, a
//! value's length, a random field's zero-padded number. An id of up to eight digits is
//! one eight-byte store of a word whose eight digits are split at once, in lanes (see
//! [`eight_digits`]), where the writer before it divided per group of four digits with
//! a bounds check per pair.

/// Digits of the largest u64.
pub const MAX_DIGITS: usize = 20;

/// `00` to `99`, for writing two digits at a time.
pub const PAIRS: [[u8; 2]; 100] = {
    let mut pairs = [[0u8; 2]; 100];
    let mut i = 0;
    while i < 100 {
        pairs[i] = [b'0' + (i / 10) as u8, b'0' + (i % 10) as u8];
        i += 1;
    }
    pairs
};

/// `10^i` for every `i` a u64 holds.
const POWERS_OF_TEN: [u64; 20] = {
    let mut powers = [1u64; 20];
    let mut i = 1;
    while i < 20 {
        powers[i] = powers[i - 1] * 10;
        i += 1;
    }
    powers
};

/// How many decimal digits `n` has: a guess from its bit length (`bits * log10(2)`,
/// as 1233 / 4096), one less than the answer or the answer, settled by one comparison
/// (a handful of instructions, where `ilog10` takes a few dozen).
#[inline(always)]
pub fn decimal_digits(n: u64) -> usize {
    let n = n | 1; // 0 has one digit, as 1 has
    let bits = 64 - n.leading_zeros() as usize;
    let guess = (bits * 1233) >> 12;
    guess + usize::from(n >= POWERS_OF_TEN[guess])
}

/// Writes `n`'s `digits` decimal digits at `out[at..]`; `digits` must be
/// [`decimal_digits`]`(n)`. An id of up to eight digits (any key range up to 10^8) is one
/// eight-byte store: its digits zero-padded to eight in a word, shifted so that the
/// padding falls off the front. The store writes 8 bytes from `at`, up to 7 past the last
/// digit, into template bytes that are written over or cut off after.
#[inline(always)]
pub fn write_digits<const N: usize>(out: &mut [u8; N], at: usize, n: u64, digits: usize) {
    debug_assert_eq!(digits, decimal_digits(n));
    if digits > 8 {
        return write_long_digits(out, at, n, digits);
    }
    let word = eight_digits(n as u32) >> ((8 - digits) * 8);
    out[at..at + 8].copy_from_slice(&word.to_le_bytes());
}

/// [`write_digits`] for ids past eight digits: the leading group, then whole groups of
/// eight left to right (each store's spill is written over by the next).
#[cold]
#[inline(never)]
fn write_long_digits<const N: usize>(out: &mut [u8; N], at: usize, n: u64, digits: usize) {
    const EIGHT: u64 = 100_000_000;
    let groups = [
        (n / EIGHT / EIGHT) as u32,
        (n / EIGHT % EIGHT) as u32,
        (n % EIGHT) as u32,
    ];
    // Digits in the leading group (1..=8), and the groups of eight after it.
    let lead = (digits - 1) % 8 + 1;
    let whole = (digits - lead) / 8;
    let mut at = at;
    let word = eight_digits(groups[2 - whole]) >> ((8 - lead) * 8);
    out[at..at + 8].copy_from_slice(&word.to_le_bytes());
    at += lead;
    for &group in &groups[3 - whole..] {
        out[at..at + 8].copy_from_slice(&eight_digits(group).to_le_bytes());
        at += 8;
    }
}

/// `n` (below 10^8) as eight ASCII digits, zero-padded, the first in the lowest byte:
/// the word's little-endian bytes are the text. All eight are split at once, as lanes
/// of one word (two of 32 bits, then four of 16, then eight of 8): a division by 100
/// or 10 in every lane is one multiplication by its reciprocal, scaled so that no lane's
/// product reaches the next lane (about 20 instructions, where four lookups of a
/// two-digit table took nearly twice as many).
#[inline(always)]
pub fn eight_digits(n: u32) -> u64 {
    debug_assert!(n < 100_000_000);
    // The first four digits in the low lane, the last four in the high one.
    let fours = u64::from(n / 10_000) | (u64::from(n % 10_000) << 32);
    // Per 32-bit lane below 10^4: v / 100 is (v * 10486) >> 20.
    let hundreds = ((fours * 10_486) >> 20) & 0x0000_007F_0000_007F;
    let pairs = hundreds | ((fours - hundreds * 100) << 16);
    // Per 16-bit lane below 100: v / 10 is (v * 103) >> 10.
    let tens = ((pairs * 103) >> 10) & 0x000F_000F_000F_000F;
    let digits = tens | ((pairs - tens * 10) << 8);
    digits | 0x3030_3030_3030_3030
}

/// Writes the last twelve digits of `n`, zero-padded, into `field` (a random field of a
/// request template).
#[inline(always)]
pub fn write_twelve_digits(field: &mut [u8; 12], n: u64) {
    const EIGHT: u64 = 100_000_000;
    let high = (n / EIGHT % 10_000) as u32;
    // The high group's last four digits: its word's upper half.
    field[..4].copy_from_slice(&((eight_digits(high) >> 32) as u32).to_le_bytes());
    field[4..].copy_from_slice(&eight_digits((n % EIGHT) as u32).to_le_bytes());
}

/// Numbers around every power of ten and at the ends of u64, for the digit writers' tests
/// here and the templates' byte-for-byte tests.
#[cfg(test)]
pub(crate) fn test_ids() -> Vec<u64> {
    let mut ids = vec![0, 1, 9, 10, 99, 100, 101, 999, 1000, 9999, 10_000, 10_001];
    let mut p = 1u64;
    while let Some(next) = p.checked_mul(10) {
        ids.extend([p - 1, p, p + 1, next / 3]);
        p = next;
    }
    ids.extend([u64::MAX - 1, u64::MAX, 12_345_678, 10_000_000]);
    ids
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digits_are_counted_at_every_power_of_ten() {
        let mut p = 1u64;
        for digits in 1..=20 {
            assert_eq!(decimal_digits(p), digits, "{p}");
            if digits > 1 {
                assert_eq!(decimal_digits(p - 1), digits - 1, "{}", p - 1);
            }
            p = p.saturating_mul(10);
        }
        assert_eq!(decimal_digits(0), 1);
        assert_eq!(decimal_digits(u64::MAX), 20);
    }

    #[test]
    fn digits_are_counted_and_written() {
        for id in test_ids() {
            let text = id.to_string();
            assert_eq!(decimal_digits(id), text.len());
            // Room for the store's spill past the digits, as the templates have.
            let mut out = [b'#'; 2 + MAX_DIGITS + 8];
            write_digits(&mut out, 2, id, text.len());
            assert_eq!(&out[2..2 + text.len()], text.as_bytes());
            assert_eq!(&out[..2], b"##");
        }
    }

    #[test]
    fn eight_digits_are_every_number_below_ten_to_the_eight() {
        // Every lane's boundaries, then a stride through the whole range (all 10^8 take
        // too long unoptimised).
        let mut ids: Vec<u32> = (0..20_000).chain(99_980_000..100_000_000).collect();
        ids.extend((0..100_000_000).step_by(997));
        for id in ids {
            let text = format!("{id:08}");
            assert_eq!(&eight_digits(id).to_le_bytes(), text.as_bytes(), "{id}");
        }
    }

    #[test]
    fn twelve_digits_are_the_last_twelve_zero_padded() {
        for id in test_ids() {
            let mut field = [b'#'; 12];
            write_twelve_digits(&mut field, id);
            let text = format!("{:012}", id % 1_000_000_000_000);
            assert_eq!(&field, text.as_bytes(), "{id}");
        }
    }
}
