//! MD5 (RFC 1321), only for placing keys on a ketama ring: the ring's points and key
//! hashes are MD5 digests in every client that computes ketama, so kvbench must compute
//! the same bytes. Not used for anything that needs a secure hash.

/// Per-round left-rotation amounts.
const SHIFTS: [u32; 64] = [
    7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9,
    14, 20, 5, 9, 14, 20, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 6, 10, 15,
    21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21,
];

/// `floor(abs(sin(i + 1)) * 2^32)`, the RFC's table T.
const T: [u32; 64] = [
    0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613, 0xfd469501,
    0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821,
    0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8,
    0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed, 0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a,
    0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70,
    0x289b7ec6, 0xeaa127fa, 0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665,
    0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
    0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391,
];

/// The MD5 digest of `data`.
pub fn digest(data: &[u8]) -> [u8; 16] {
    let mut state: [u32; 4] = [0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476];
    let mut chunks = data.chunks_exact(64);
    for block in chunks.by_ref() {
        compress(&mut state, block);
    }
    // The tail, the 0x80 marker, zeros, and the length in bits (little endian): one or
    // two more blocks.
    let rest = chunks.remainder();
    let mut tail = [0u8; 128];
    tail[..rest.len()].copy_from_slice(rest);
    tail[rest.len()] = 0x80;
    let blocks = if rest.len() < 56 { 1 } else { 2 };
    let bits = (data.len() as u64).wrapping_mul(8);
    tail[blocks * 64 - 8..blocks * 64].copy_from_slice(&bits.to_le_bytes());
    for block in tail[..blocks * 64].chunks_exact(64) {
        compress(&mut state, block);
    }
    let mut out = [0u8; 16];
    for (i, word) in state.iter().enumerate() {
        out[i * 4..i * 4 + 4].copy_from_slice(&word.to_le_bytes());
    }
    out
}

/// The message word each of the 64 steps adds: `i` in the first round, then `5i + 1`,
/// `3i + 5` and `7i` (mod 16).
const WORD: [usize; 64] = {
    let mut word = [0usize; 64];
    let mut i = 0;
    while i < 64 {
        word[i] = match i / 16 {
            0 => i,
            1 => (5 * i + 1) % 16,
            2 => (3 * i + 5) % 16,
            _ => (7 * i) % 16,
        };
        i += 1;
    }
    word
};

/// The four rounds' functions of `b`, `c` and `d`.
#[inline(always)]
fn round1(b: u32, c: u32, d: u32) -> u32 {
    d ^ (b & (c ^ d))
}

#[inline(always)]
fn round2(b: u32, c: u32, d: u32) -> u32 {
    c ^ (d & (b ^ c))
}

#[inline(always)]
fn round3(b: u32, c: u32, d: u32) -> u32 {
    b ^ c ^ d
}

#[inline(always)]
fn round4(b: u32, c: u32, d: u32) -> u32 {
    c ^ (b | !d)
}

/// Step `i`: `b + ((a + f + m[WORD[i]] + T[i]) <<< SHIFTS[i])`, every index a constant.
#[inline(always)]
fn step(i: usize, a: u32, b: u32, f: u32, m: &[u32; 16]) -> u32 {
    b.wrapping_add(
        a.wrapping_add(f)
            .wrapping_add(m[WORD[i]])
            .wrapping_add(T[i])
            .rotate_left(SHIFTS[i]),
    )
}

/// Four steps from step `$i`, the state's words taking turns as the one written.
macro_rules! four_steps {
    ($round:ident, $i:expr, $m:ident, $a:ident, $b:ident, $c:ident, $d:ident) => {
        $a = step($i, $a, $b, $round($b, $c, $d), &$m);
        $d = step($i + 1, $d, $a, $round($a, $b, $c), &$m);
        $c = step($i + 2, $c, $d, $round($d, $a, $b), &$m);
        $b = step($i + 3, $b, $c, $round($c, $d, $a), &$m);
    };
}

/// One 64-byte block into the state. The 64 steps are written out (through
/// `four_steps`), so every table index and rotation is a constant: a ketama pool hashes
/// every key it places, and the loop with a round `match` per step cost about four times
/// as many instructions.
fn compress(state: &mut [u32; 4], block: &[u8]) {
    let mut m = [0u32; 16];
    for (word, bytes) in m.iter_mut().zip(block.chunks_exact(4)) {
        *word = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
    }
    let [mut a, mut b, mut c, mut d] = *state;
    four_steps!(round1, 0, m, a, b, c, d);
    four_steps!(round1, 4, m, a, b, c, d);
    four_steps!(round1, 8, m, a, b, c, d);
    four_steps!(round1, 12, m, a, b, c, d);
    four_steps!(round2, 16, m, a, b, c, d);
    four_steps!(round2, 20, m, a, b, c, d);
    four_steps!(round2, 24, m, a, b, c, d);
    four_steps!(round2, 28, m, a, b, c, d);
    four_steps!(round3, 32, m, a, b, c, d);
    four_steps!(round3, 36, m, a, b, c, d);
    four_steps!(round3, 40, m, a, b, c, d);
    four_steps!(round3, 44, m, a, b, c, d);
    four_steps!(round4, 48, m, a, b, c, d);
    four_steps!(round4, 52, m, a, b, c, d);
    four_steps!(round4, 56, m, a, b, c, d);
    four_steps!(round4, 60, m, a, b, c, d);
    state[0] = state[0].wrapping_add(a);
    state[1] = state[1].wrapping_add(b);
    state[2] = state[2].wrapping_add(c);
    state[3] = state[3].wrapping_add(d);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(d: [u8; 16]) -> String {
        d.iter().map(|b| format!("{b:02x}")).collect()
    }

    #[test]
    fn rfc_1321_test_suite() {
        let cases: [(&str, &str); 7] = [
            ("", "d41d8cd98f00b204e9800998ecf8427e"),
            ("a", "0cc175b9c0f1b6a831c399e269772661"),
            ("abc", "900150983cd24fb0d6963f7d28e17f72"),
            ("message digest", "f96b697d7cb7938d525a2f31aaf161d0"),
            (
                "abcdefghijklmnopqrstuvwxyz",
                "c3fcd3d76192e4007dfb496cca67e13b",
            ),
            (
                "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
                "d174ab98d277d9f5a5611c2c9f419d9f",
            ),
            (
                "12345678901234567890123456789012345678901234567890123456789012345678901234567890",
                "57edf4a22be3c955ac49da2e2107b67a",
            ),
        ];
        for (input, want) in cases {
            assert_eq!(hex(digest(input.as_bytes())), want, "{input:?}");
        }
    }

    #[test]
    fn lengths_around_the_block_edge() {
        // 55, 56, 63, 64 and 65 bytes take the one- and two-block tail paths.
        let want = [
            (55, "ef1772b6dff9a122358552954ad0df65"),
            (56, "3b0c8ac703f828b04c6c197006d17218"),
            (64, "014842d480b571495a4a0363793f7367"),
        ];
        for (n, expected) in want {
            assert_eq!(hex(digest(&vec![b'a'; n])), expected, "{n} bytes");
        }
    }
}
