//! Reads an HdrHistogram interval log into the [`IntervalLog`] model: kvbench's and
//! memtier_benchmark's `.hgrm` files and kvbench's tagged `--hdr-log` files, and logs
//! written by HdrHistogram's own writers (Java, C, Python, Rust).
//!
//! ```text
//! #[Histogram log format version 1.3]
//! #[StartTime: 1796032471.890 (seconds since epoch), Mon Nov 30 09:54:31 UTC 2026]
//! #[BaseTime: 1796032471.890 (seconds since epoch)]
//! "StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"
//! Tag=SET,0.000,1.000,8067.0,HISTFAAAAvp4nC1Q...
//! ```
//!
//! Two legends exist: `"Interval_Length"` (Java, Python, Rust, kvbench's `--hdr-log`: the
//! second column is the interval's length) and `"EndTimestamp"` (HdrHistogram C, memtier
//! and kvbench `.hgrm` files: the second column is the absolute end). Timestamps are
//! resolved the way HdrHistogram's readers do: relative to `BaseTime` when the log has
//! one; otherwise absolute, unless they lie more than a year before `StartTime`, in which
//! case they are relative to it.

use crate::results::decode_histogram;

use super::model::{Interval, IntervalLog};

/// Timestamps this far before `StartTime` are taken as relative to it (HdrHistogram's rule).
const RELATIVE_THRESHOLD_MS: u64 = 365 * 24 * 3600 * 1000;

/// Decimal seconds (`1796032471.890`, `0.000000`, `12`) as whole milliseconds, rounded.
fn seconds_as_ms(text: &str) -> Option<u64> {
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    if whole.is_empty() && fraction.is_empty() {
        return None;
    }
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if !digits(whole) || !digits(fraction) {
        return None;
    }
    let secs: u64 = if whole.is_empty() {
        0
    } else {
        whole.parse().ok()?
    };
    let mut ms = 0u64;
    for (i, b) in fraction.bytes().take(3).enumerate() {
        ms += u64::from(b - b'0') * 10u64.pow(2 - i as u32);
    }
    if fraction.as_bytes().get(3).is_some_and(|b| *b >= b'5') {
        ms += 1;
    }
    secs.checked_mul(1000)?.checked_add(ms)
}

/// The number after `prefix` on a `#[StartTime: X ...]`-style line.
fn header_time(line: &str, prefix: &str, number: usize) -> Result<Option<u64>, String> {
    let Some(rest) = line.strip_prefix(prefix) else {
        return Ok(None);
    };
    let text = rest.trim_start().split([' ', ']']).next().unwrap_or("");
    seconds_as_ms(text)
        .map(Some)
        .ok_or_else(|| format!("line {number}: \"{text}\" is not a time in seconds"))
}

/// One interval line's raw fields.
struct Line<'a> {
    tag: Option<&'a str>,
    first_ms: u64,
    second_ms: u64,
    max: f64,
    histogram: &'a str,
}

fn interval_line(line: &str, number: usize) -> Result<Line<'_>, String> {
    let bad = |what: &str| format!("line {number}: {what}");
    let (tag, rest) = match line.strip_prefix("Tag=") {
        Some(rest) => {
            let (tag, rest) = rest
                .split_once(',')
                .ok_or_else(|| bad("a tag without the fields after it"))?;
            (Some(tag), rest)
        }
        None => (None, line),
    };
    let fields: Vec<&str> = rest.splitn(4, ',').collect();
    let [first, second, max, histogram] = fields[..] else {
        return Err(bad(
            "not an interval line (expected start,length-or-end,max,histogram)",
        ));
    };
    let time = |s: &str| {
        seconds_as_ms(s.trim()).ok_or_else(|| bad(&format!("\"{s}\" is not a time in seconds")))
    };
    let max = max
        .trim()
        .parse::<f64>()
        .ok()
        .filter(|m| m.is_finite())
        .ok_or_else(|| bad(&format!("\"{max}\" is not a number")))?;
    Ok(Line {
        tag,
        first_ms: time(first)?,
        second_ms: time(second)?,
        max,
        histogram: histogram.trim(),
    })
}

/// Reads a whole log. `Err` is a message without the file name (`line 7: ...`).
pub fn read(text: &str) -> Result<IntervalLog, String> {
    let mut log = IntervalLog::default();
    let mut second_is_end = false;
    for (i, raw) in text.lines().enumerate() {
        let number = i + 1;
        let line = raw.trim_end_matches('\r');
        if line.trim().is_empty() {
            continue;
        }
        if line.starts_with('#') {
            if let Some(ms) = header_time(line, "#[StartTime:", number)? {
                log.start_time_ms = Some(ms);
            } else if let Some(ms) = header_time(line, "#[BaseTime:", number)? {
                log.base_time_ms = Some(ms);
            } else if let Some(v) = line.strip_prefix("#[Histogram log format version ") {
                log.format_version = Some(v.trim_end_matches(']').trim().to_string());
            } else if let Some(title) = line
                .strip_prefix("#[")
                .and_then(|l| l.strip_suffix(" HDR latency histogram results]"))
            {
                log.title = Some(title.to_string());
            } else if let Some(title) = line
                .strip_prefix("#[")
                .and_then(|l| l.strip_suffix(" HDR service time histogram results]"))
            {
                // `..._service.hgrm` files are titled for their service times.
                log.title = Some(title.to_string());
                log.service = true;
            }
            continue;
        }
        if line.starts_with("\"StartTimestamp\"") {
            second_is_end = line.contains("\"EndTimestamp\"");
            continue;
        }
        let fields = interval_line(line, number)?;
        let offset = match (log.base_time_ms, log.start_time_ms) {
            (Some(base), _) => base,
            (None, Some(start))
                if fields.first_ms.saturating_add(RELATIVE_THRESHOLD_MS) < start =>
            {
                start
            }
            _ => 0,
        };
        let start_epoch_ms = fields.first_ms.saturating_add(offset);
        let end_epoch_ms = if second_is_end {
            fields.second_ms.saturating_add(offset)
        } else {
            start_epoch_ms.saturating_add(fields.second_ms)
        };
        if end_epoch_ms < start_epoch_ms {
            return Err(format!("line {number}: the interval ends before it starts"));
        }
        let histogram = decode_histogram(fields.histogram)
            .map_err(|e| format!("line {number}: the histogram {e}"))?;
        log.intervals.push(Interval {
            tag: fields.tag.map(str::to_string),
            start_epoch_ms,
            end_epoch_ms,
            max: fields.max,
            histogram,
        });
    }
    Ok(log)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::test_support::DEFAULT_FULL_RUN_HGRM;

    #[test]
    fn seconds_parse_exactly_to_milliseconds() {
        assert_eq!(seconds_as_ms("1796032471.890"), Some(1_796_032_471_890));
        assert_eq!(seconds_as_ms("0.000000"), Some(0));
        assert_eq!(seconds_as_ms("1.0005"), Some(1001));
        assert_eq!(seconds_as_ms("1.0004999"), Some(1000));
        assert_eq!(seconds_as_ms("12"), Some(12_000));
        assert_eq!(seconds_as_ms(".5"), Some(500));
        for bad in ["", ".", "-1.0", "1e3", "1.2.3", " 1"] {
            assert_eq!(seconds_as_ms(bad), None, "{bad}");
        }
    }

    #[test]
    fn memtier_hgrm_has_absolute_start_and_end() {
        let log = read(DEFAULT_FULL_RUN_HGRM).unwrap();
        assert_eq!(log.title.as_deref(), Some("Full Run command"));
        assert_eq!(log.title_command(), None);
        assert_eq!(log.format_version.as_deref(), Some("1.2"));
        assert_eq!(log.start_time_ms, Some(1_795_979_180_809));
        assert_eq!(log.intervals.len(), 1);
        let iv = &log.intervals[0];
        assert_eq!(
            (iv.start_epoch_ms, iv.end_epoch_ms),
            (1_795_979_180_809, 1_795_979_180_827)
        );
        assert_eq!(iv.tag, None);
        assert_eq!(iv.max, 311.0);
        assert_eq!(iv.histogram.len(), 800);
    }

    #[test]
    fn tagged_relative_log_with_base_time() {
        let h = crate::results::compress_histogram(&{
            let mut h = crate::stats::new_histogram();
            h.record_n(100, 3).unwrap();
            h
        });
        let text = format!(
            "#[SET command HDR latency histogram results]\n\
             #[Histogram log format version 1.3]\n\
             #[StartTime: 1000.250 (seconds since epoch), Thu Jan 01 00:16:40 UTC 1970]\n\
             #[BaseTime: 1000.000 (seconds since epoch)]\n\
             \"StartTimestamp\",\"Interval_Length\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n\
             Tag=GET,0.250,1.000,100.0,{h}\r\n\
             \n\
             1.250,0.500,100.0,{h}\n"
        );
        let log = read(&text).unwrap();
        assert_eq!(log.title_command(), Some("SET"));
        let times: Vec<(u64, u64)> = log
            .intervals
            .iter()
            .map(|i| (i.start_epoch_ms, i.end_epoch_ms))
            .collect();
        assert_eq!(times, [(1_000_250, 1_001_250), (1_001_250, 1_001_750)]);
        assert_eq!(log.intervals[0].tag.as_deref(), Some("GET"));
        assert_eq!(log.intervals[1].histogram.len(), 3);
    }

    #[test]
    fn without_base_time_old_timestamps_are_relative_to_start() {
        let h = crate::results::compress_histogram(&{
            let mut h = crate::stats::new_histogram();
            h.record(5).unwrap();
            h
        });
        let text =
            format!("#[StartTime: 1700000000.000 (seconds since epoch)]\n2.000,1.000,5.0,{h}\n");
        let log = read(&text).unwrap();
        assert_eq!(log.intervals[0].start_epoch_ms, 1_700_000_002_000);
        // Absolute when close to StartTime.
        let text = format!(
            "#[StartTime: 1700000000.000 (seconds since epoch)]\n1700000003.000,1.000,5.0,{h}\n"
        );
        assert_eq!(
            read(&text).unwrap().intervals[0].start_epoch_ms,
            1_700_000_003_000
        );
    }

    #[test]
    fn bad_lines_are_named() {
        let err = read("#!/bin/sh\necho hello\n").unwrap_err();
        assert!(err.starts_with("line 2: not an interval line"), "{err}");
        let err = read("1.0,x,3.0,HISTF\n").unwrap_err();
        assert_eq!(err, "line 1: \"x\" is not a time in seconds");
        let err = read("1.0,1.0,3.0,HISTFnotbase64!\n").unwrap_err();
        assert!(err.starts_with("line 1: the histogram "), "{err}");
        let err = read("#[StartTime: soon (seconds since epoch)]\n").unwrap_err();
        assert_eq!(err, "line 1: \"soon\" is not a time in seconds");
        let err = read("Tag=SET\n").unwrap_err();
        assert_eq!(err, "line 1: a tag without the fields after it");
        let err = read("\"StartTimestamp\",\"EndTimestamp\"\n5.0,4.0,1.0,HISTF\n").unwrap_err();
        assert_eq!(err, "line 2: the interval ends before it starts");
    }
}
