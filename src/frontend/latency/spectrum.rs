//! `--dist`: latency samples counted into redis-cli's 31 spectrum buckets, and the spectrum
//! line and colour legend drawn with xterm-256 background colours.
//!
//! ```text
//! ---------------------------------------------
//! . - * #          .01 .125 .25 .5 milliseconds
//! 1,2,3,...,9      from 1 to 9     milliseconds
//! A,B,C,D,E        10,20,30,40,50  milliseconds
//! F,G,H,I,J        .1,.2,.3,.4,.5       seconds
//! K,L,M,N,O,P,Q,?  1,2,4,8,16,30,60,>60 seconds
//! From 0 to 100%: <one space per palette colour>
//! ---------------------------------------------
//! ESC[38;5;0m ESC[48;5;<colour>m. ESC[48;5;<colour>m- ... ESC[48;5;<colour>m? ESC[0m
//! ```
//!
//! Each bucket's background colour says what share of the window's samples fell in it, so
//! the picture does not change with the sampling rate.

use std::fmt::Write as _;

/// Upper bound in microseconds (inclusive) and character of every bucket but the last,
/// which takes everything above a minute (`?`). A sample goes to the first bucket whose
/// bound it does not exceed.
const BOUNDS: [(u64, u8); 30] = [
    (10, b'.'),
    (125, b'-'),
    (250, b'*'),
    (500, b'#'),
    (1_000, b'1'),
    (2_000, b'2'),
    (3_000, b'3'),
    (4_000, b'4'),
    (5_000, b'5'),
    (6_000, b'6'),
    (7_000, b'7'),
    (8_000, b'8'),
    (9_000, b'9'),
    (10_000, b'A'),
    (20_000, b'B'),
    (30_000, b'C'),
    (40_000, b'D'),
    (50_000, b'E'),
    (100_000, b'F'),
    (200_000, b'G'),
    (300_000, b'H'),
    (400_000, b'I'),
    (500_000, b'J'),
    (1_000_000, b'K'),
    (2_000_000, b'L'),
    (4_000_000, b'M'),
    (8_000_000, b'N'),
    (16_000_000, b'O'),
    (30_000_000, b'P'),
    (60_000_000, b'Q'),
];

/// Number of buckets: the bounded ones and `?`.
pub const BUCKETS: usize = BOUNDS.len() + 1;

/// The character of the overflow bucket (more than a minute).
const OVERFLOW: u8 = b'?';

/// redis-cli's default palette: black, greys, then yellow to red for the fullest buckets.
const COLOUR: [u8; 19] = [
    0, 233, 234, 235, 237, 239, 241, 243, 245, 247, 144, 143, 142, 184, 226, 214, 208, 202, 196,
];

/// `--mono`: black to light grey only.
const MONO: [u8; 13] = [
    0, 233, 234, 235, 237, 239, 241, 243, 245, 247, 249, 251, 253,
];

/// The horizontal rule above and below the legend.
const RULE: &str = "---------------------------------------------\n";

/// Which xterm-256 colours shade the buckets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Palette {
    /// Greys, then yellow to red (redis-cli's default).
    Colour,
    /// Greys only (`--mono`).
    Mono,
}

impl Palette {
    fn colours(self) -> &'static [u8] {
        match self {
            Palette::Colour => &COLOUR,
            Palette::Mono => &MONO,
        }
    }

    /// The colour for a bucket holding `count` of `total` samples: the share scaled to the
    /// palette and rounded up, so any non-empty bucket is lighter than black.
    fn shade(self, count: u64, total: u64) -> u8 {
        let colours = self.colours();
        if total == 0 {
            return colours[0];
        }
        // Single precision on purpose: redis-cli computes this share in `float`, and a share
        // such as 1/3 of 18 lands on 6 in single precision but just under it in double.
        let scaled = (count as f32 / total as f32 * (colours.len() - 1) as f32).ceil();
        let index = (scaled as usize).min(colours.len() - 1);
        colours[index]
    }
}

/// Sample counts per spectrum bucket for one window.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Spectrum {
    counts: [u64; BUCKETS],
}

impl Spectrum {
    /// An empty spectrum.
    pub fn new() -> Self {
        Self::default()
    }

    /// A spectrum holding these counts, bucket by bucket (`.` first, `?` last).
    pub fn from_counts(counts: [u64; BUCKETS]) -> Self {
        Spectrum { counts }
    }

    /// Counts one sample of `latency_us` microseconds.
    pub fn record(&mut self, latency_us: u64) {
        let index = BOUNDS
            .iter()
            .position(|&(bound, _)| latency_us <= bound)
            .unwrap_or(BUCKETS - 1);
        self.counts[index] += 1;
    }

    /// Empties every bucket.
    pub fn reset(&mut self) {
        self.counts = [0; BUCKETS];
    }

    /// The number of samples in each bucket.
    pub fn counts(&self) -> &[u64; BUCKETS] {
        &self.counts
    }

    /// The number of samples in all buckets.
    pub fn total(&self) -> u64 {
        self.counts.iter().sum()
    }
}

/// The bucket characters in order, `.` to `?`.
fn characters() -> impl Iterator<Item = char> {
    BOUNDS
        .iter()
        .map(|&(_, c)| char::from(c))
        .chain(std::iter::once(char::from(OVERFLOW)))
}

/// Appends the legend redis-cli shows before the first spectrum line and every 20 lines.
pub fn render_legend(palette: Palette, out: &mut String) {
    out.push_str(RULE);
    out.push_str(". - * #          .01 .125 .25 .5 milliseconds\n");
    out.push_str("1,2,3,...,9      from 1 to 9     milliseconds\n");
    out.push_str("A,B,C,D,E        10,20,30,40,50  milliseconds\n");
    out.push_str("F,G,H,I,J        .1,.2,.3,.4,.5       seconds\n");
    out.push_str("K,L,M,N,O,P,Q,?  1,2,4,8,16,30,60,>60 seconds\n");
    out.push_str("From 0 to 100%: ");
    for colour in palette.colours() {
        let _ = write!(out, "\x1b[48;5;{colour}m ");
    }
    out.push_str("\x1b[0m\n");
    out.push_str(RULE);
}

/// Appends one spectrum line: black text, each bucket's character on its shade, then the
/// colour reset. No newline: the caller may add figures before ending the line.
pub fn render_line(spectrum: &Spectrum, palette: Palette, out: &mut String) {
    render_counts(&spectrum.counts, spectrum.total(), palette, out);
}

/// [`render_line`] for these counts out of `total` samples.
fn render_counts(counts: &[u64; BUCKETS], total: u64, palette: Palette, out: &mut String) {
    out.push_str("\x1b[38;5;0m");
    for (count, character) in counts.iter().zip(characters()) {
        let _ = write!(
            out,
            "\x1b[48;5;{}m{character}",
            palette.shade(*count, total)
        );
    }
    out.push_str("\x1b[0m");
}

#[cfg(test)]
mod tests {
    use super::*;

    const COLOUR_FIXTURE: &str = include_str!("testdata/dist_color.txt");
    const MONO_FIXTURE: &str = include_str!("testdata/dist_mono.txt");

    /// The legend is the first eight lines of a capture.
    fn legend_of(capture: &str) -> String {
        capture.split_inclusive('\n').take(8).collect()
    }

    #[test]
    fn legend_matches_redis_cli_byte_for_byte() {
        let mut colour = String::new();
        render_legend(Palette::Colour, &mut colour);
        assert_eq!(colour, legend_of(COLOUR_FIXTURE));
        let mut mono = String::new();
        render_legend(Palette::Mono, &mut mono);
        assert_eq!(mono, legend_of(MONO_FIXTURE));
    }

    /// The palette index of every bucket of a captured spectrum line.
    fn indices_of(line: &str, palette: Palette) -> Vec<usize> {
        let body = line
            .strip_prefix("\x1b[38;5;0m")
            .and_then(|l| l.strip_suffix("\x1b[0m"))
            .expect("a spectrum line");
        let cells: Vec<&str> = body.split("\x1b[48;5;").skip(1).collect();
        assert_eq!(cells.len(), BUCKETS, "{line:?}");
        cells
            .iter()
            .zip(characters())
            .map(|(cell, c)| {
                let (colour, shown) = cell.split_once('m').expect("colour code ends with m");
                assert_eq!(shown, c.to_string());
                let colour: u8 = colour.parse().expect("numeric colour");
                palette
                    .colours()
                    .iter()
                    .position(|&p| p == colour)
                    .expect("a palette colour")
            })
            .collect()
    }

    /// Counts that give exactly these palette indices with redis-cli's formula: index i
    /// means a share in ((i-1)/(n-1), i/(n-1)], so `i * 1000 - 1` parts in `(n-1) * 1000`.
    fn counts_for(indices: &[usize], palette: Palette) -> (Spectrum, u64) {
        let steps = (palette.colours().len() - 1) as u64;
        let mut counts = [0u64; BUCKETS];
        for (slot, &i) in counts.iter_mut().zip(indices) {
            *slot = (i as u64 * 1000).saturating_sub(1);
        }
        (Spectrum::from_counts(counts), steps * 1000)
    }

    #[test]
    fn spectrum_lines_match_redis_cli_byte_for_byte() {
        for (capture, palette) in [
            (COLOUR_FIXTURE, Palette::Colour),
            (MONO_FIXTURE, Palette::Mono),
        ] {
            let lines: Vec<&str> = capture
                .lines()
                .filter(|l| l.starts_with("\x1b[38;5;0m"))
                .collect();
            assert!(lines.len() >= 2, "fixture holds spectrum lines");
            for line in lines {
                let indices = indices_of(line, palette);
                let (spectrum, total) = counts_for(&indices, palette);
                let mut out = String::new();
                render_counts(spectrum.counts(), total, palette, &mut out);
                assert_eq!(out, line);
            }
        }
    }

    #[test]
    fn render_line_shades_by_share_of_the_window() {
        let mut s = Spectrum::new();
        // 3 of 4 samples in '-', 1 in '2': shares 0.75 and 0.25 of 18 steps -> 14 and 5.
        for v in [50, 60, 125, 1_500] {
            s.record(v);
        }
        let mut out = String::new();
        render_line(&s, Palette::Colour, &mut out);
        assert!(out.starts_with("\x1b[38;5;0m\x1b[48;5;0m.\x1b[48;5;226m-\x1b[48;5;0m*"));
        assert!(out.contains("\x1b[48;5;239m2"));
        assert!(out.ends_with("\x1b[48;5;0m?\x1b[0m"));
    }

    #[test]
    fn buckets_take_their_upper_bound() {
        let mut s = Spectrum::new();
        for v in [
            0,
            10,
            11,
            125,
            126,
            1_000,
            1_001,
            60_000_000,
            60_000_001,
            u64::MAX,
        ] {
            s.record(v);
        }
        let c = s.counts();
        assert_eq!(c[0], 2); // 0 and 10 µs: '.'
        assert_eq!(c[1], 2); // 11 and 125 µs: '-'
        assert_eq!(c[2], 1); // 126 µs: '*'
        assert_eq!(c[4], 1); // 1000 µs: '1'
        assert_eq!(c[5], 1); // 1001 µs: '2'
        assert_eq!(c[29], 1); // one minute: 'Q'
        assert_eq!(c[30], 2); // more: '?'
        assert_eq!(s.total(), 10);
        s.reset();
        assert_eq!(s.total(), 0);
    }

    #[test]
    fn shares_are_computed_in_single_precision_like_redis_cli() {
        // 1/3 of 18 steps: 6 in f32 (redis-cli), 6 or 7 depending on rounding in f64.
        assert_eq!(Palette::Colour.shade(1, 3), COLOUR[6]);
        assert_eq!(Palette::Colour.shade(0, 3), COLOUR[0]);
        assert_eq!(Palette::Colour.shade(3, 3), COLOUR[18]);
        assert_eq!(Palette::Mono.shade(1, 1_000_000), MONO[1]);
        assert_eq!(Palette::Mono.shade(5, 0), MONO[0]);
    }
}
