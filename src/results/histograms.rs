//! Latency histograms as the reports read and write them: memtier's rounded-rank
//! percentiles, and the compressed form (HdrHistogram V2 + DEFLATE, base64) of the JSON
//! and `.hgrm` files.
//!
//! Both run once a second per row while a run goes on (the gatherer summarizes every
//! second), so they are written to cost little: a percentile is the crate's chunked scan
//! of the counts, not an iterator step per bucket, and the compressor's tables (hundreds
//! of kilobytes, zeroed on creation) are made once per thread and reset between uses.

use std::cell::RefCell;

use base64::Engine;
use flate2::{Compress, Compression, FlushCompress, Status};
use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Deserializer, Serializer, V2Serializer};

/// HdrHistogram's cookie for a V2 encoding compressed with DEFLATE (its base cookie with
/// the 0x10 word-size bits), as every HdrHistogram decoder expects it.
const V2_COMPRESSED_COOKIE: u32 = 0x1c84_9304 | 0x10;

/// What one thread keeps between encodings: the V2 encoder, its output, and a zlib
/// stream at the default level (what HdrHistogram's own DEFLATE serializer uses).
struct Encoder {
    v2: V2Serializer,
    plain: Vec<u8>,
    packed: Vec<u8>,
    zlib: Compress,
}

thread_local! {
    static ENCODER: RefCell<Option<Encoder>> = const { RefCell::new(None) };
}

/// Encodes a histogram as memtier's JSON and `.hgrm` files carry it: HdrHistogram V2 +
/// DEFLATE, then standard base64 with padding (`HISTF...`); byte for byte what
/// HdrHistogram's `V2DeflateSerializer` writes.
///
/// Returns an empty string in the one case the encoder refuses (a bucket count above
/// `i64::MAX`), so a report is never lost to an unencodable histogram.
pub fn compress_histogram(h: &Histogram<u64>) -> String {
    ENCODER.with(|cell| {
        let mut slot = cell.borrow_mut();
        let encoder = slot.get_or_insert_with(|| Encoder {
            v2: V2Serializer::new(),
            plain: Vec::new(),
            packed: Vec::new(),
            zlib: Compress::new(Compression::default(), true),
        });
        match encoder.encode(h) {
            Some(bytes) => base64::engine::general_purpose::STANDARD.encode(bytes),
            None => String::new(),
        }
    })
}

impl Encoder {
    /// The compressed encoding of `h`, or `None` where V2 refuses it.
    fn encode(&mut self, h: &Histogram<u64>) -> Option<&[u8]> {
        self.plain.clear();
        self.v2.serialize(h, &mut self.plain).ok()?;
        self.packed.clear();
        self.packed
            .extend_from_slice(&V2_COMPRESSED_COOKIE.to_be_bytes());
        self.packed.extend_from_slice(&[0; 4]);
        self.zlib.reset();
        let mut input = &self.plain[..];
        loop {
            // A zlib stream is never much longer than its input; room for that and the
            // stream's header and trailer usually finishes in one call.
            self.packed.reserve(input.len() + 64);
            let before_in = self.zlib.total_in();
            let status = self
                .zlib
                .compress_vec(input, &mut self.packed, FlushCompress::Finish)
                .ok()?;
            input = &input[(self.zlib.total_in() - before_in) as usize..];
            if status == Status::StreamEnd {
                break;
            }
        }
        let length = u32::try_from(self.packed.len() - 8).ok()?;
        self.packed[4..8].copy_from_slice(&length.to_be_bytes());
        Some(&self.packed)
    }
}

/// Decodes a compressed histogram, the inverse of [`compress_histogram`] (`HISTF...`, or
/// any V2 / V2+DEFLATE encoding in standard base64). `Err` reads after "the histogram": `is not valid base64 (...)`.
pub fn decode_histogram(text: &str) -> Result<Histogram<u64>, String> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text.trim())
        .map_err(|e| format!("is not valid base64 ({e})"))?;
    Deserializer::new()
        .deserialize(&mut &bytes[..])
        .map_err(|e| format!("does not decode as an HdrHistogram ({e})"))
}

/// Latency at percentile `p` (0-100), in milliseconds; 0 for an empty histogram.
///
/// Uses memtier's (HdrHistogram C's) rank, `round(p/100 * count)`, not the Rust crate's
/// `ceil`: with 800 samples p99.9 is the 799th value, as memtier's tables show it.
/// `p` is clamped to 0-100; NaN reads as 100.
pub fn latency_at_percentile_ms(h: &Histogram<u64>, p: f64) -> f64 {
    value_at_percentile_us(h, p) as f64 / 1000.0
}

/// [`latency_at_percentile_ms`] in the histogram's own unit (microseconds).
pub fn value_at_percentile_us(h: &Histogram<u64>, p: f64) -> u64 {
    let total = h.len();
    if total == 0 {
        return 0;
    }
    let p = if p.is_finite() {
        p.clamp(0.0, 100.0)
    } else {
        100.0
    };
    if p == 0.0 {
        return h.min();
    }
    let rank = ((p / 100.0) * total as f64 + 0.5) as u64;
    let rank = rank.clamp(1, total);
    // The crate finds the value at rank ceil(q * total); half a sample below `rank`
    // lands on `rank` whatever the rounding of q * total (exact below 2^52 samples).
    h.value_at_quantile((rank as f64 - 0.5) / total as f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use hdrhistogram::serialization::V2DeflateSerializer;
    use rand::{Rng, SeedableRng, rngs::SmallRng};

    /// The rank walk this module replaced: one recorded bucket at a time.
    fn walked_percentile(h: &Histogram<u64>, p: f64) -> u64 {
        let total = h.len();
        let rank = (((p / 100.0) * total as f64 + 0.5) as u64).clamp(1, total);
        let mut seen = 0u64;
        for v in h.iter_recorded() {
            seen += v.count_at_value();
            if seen >= rank {
                return v.value_iterated_to();
            }
        }
        h.max()
    }

    fn random_histogram(rng: &mut SmallRng) -> Histogram<u64> {
        let mut h = crate::stats::new_histogram();
        let samples = rng.random_range(1..3_000);
        let spread = [100u64, 10_000, 1_000_000, 3_600_000_000][rng.random_range(0..4)];
        for _ in 0..samples {
            let count = if rng.random_bool(0.1) {
                rng.random_range(1..1_000)
            } else {
                1
            };
            h.record_n(rng.random_range(1..=spread), count).unwrap();
        }
        h
    }

    #[test]
    fn percentiles_match_a_walk_of_the_recorded_buckets() {
        let mut rng = SmallRng::seed_from_u64(7);
        let ps = [
            0.001, 1.0, 25.0, 50.0, 90.0, 99.0, 99.9, 99.99, 99.999, 100.0,
        ];
        for _ in 0..300 {
            let h = random_histogram(&mut rng);
            for p in ps {
                assert_eq!(
                    value_at_percentile_us(&h, p),
                    walked_percentile(&h, p),
                    "p{p} of {} samples",
                    h.len()
                );
            }
            let p = rng.random_range(0.0..100.0);
            assert_eq!(
                value_at_percentile_us(&h, p),
                walked_percentile(&h, p),
                "p{p}"
            );
        }
    }

    #[test]
    fn compressed_bytes_are_hdrhistograms_own() {
        let mut rng = SmallRng::seed_from_u64(11);
        for _ in 0..50 {
            let h = random_histogram(&mut rng);
            let mut theirs = Vec::new();
            V2DeflateSerializer::new()
                .serialize(&h, &mut theirs)
                .unwrap();
            let ours = base64::engine::general_purpose::STANDARD
                .decode(compress_histogram(&h))
                .unwrap();
            assert_eq!(ours, theirs);
            assert_eq!(decode_histogram(&compress_histogram(&h)).unwrap(), h);
        }
    }
}
