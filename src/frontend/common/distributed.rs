//! The flags that make several processes one workload: `--shard=I/N` (this process's
//! part) and `--start-at=TIME` (when every part starts sending), parsed and checked into
//! the plan's [`Shard`] and start time. Shared, so every front end that runs the engine
//! words them alike.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::date::{days_from_civil, days_in_month};
use crate::error::{Error, Result};
use crate::plan::shard::{BadShard, MAX_SHARDS};
use crate::plan::{Pacing, RateSweep, Shard};

/// How far ahead `--start-at` may lie: a mistyped date should not leave processes
/// waiting for years.
pub const MAX_START_AHEAD: Duration = Duration::from_secs(86_400);

/// `--shard=I/N`: shard I (from 0) of N.
pub fn parse_shard(raw: &str) -> Result<Shard> {
    Shard::parse(raw).map_err(|why| {
        Error::usage(match why {
            BadShard::NotIOverN => format!(
                "--shard={raw}: expected I/N, this process's shard I counted from 0 of N shards (e.g. --shard=0/3)"
            ),
            BadShard::TooMany => format!("--shard={raw}: at most {MAX_SHARDS} shards"),
            BadShard::NumberTooLarge => {
                format!("--shard={raw}: at most {MAX_SHARDS} shards (shard numbers from 0)")
            }
            BadShard::NoShards => {
                format!("--shard={raw}: the number of shards must be at least 1")
            }
            BadShard::IndexNotBelowCount { count } => format!(
                "--shard={raw}: the shard number must be below the number of shards (0 to {}), counted from 0",
                count - 1
            ),
        })
    })
}

/// This shard's pacing: a total rate (`--rate`, and each step of a `--rate-sweep`) is
/// divided among the shards so their rates add up to it; a rate per connection
/// (`--rate-limiting`) is not divided, as each shard's connections are connections of
/// their own. A total too small to give every shard a request per second is an error.
pub fn shard_pacing(pacing: Pacing, sweep: Option<&RateSweep>, shard: Shard) -> Result<Pacing> {
    let Pacing::Total(total) = pacing else {
        return Ok(pacing);
    };
    let lowest = sweep.map_or(total.per_sec, |s| s.start);
    let (flag, what) = if sweep.is_some() {
        ("--rate-sweep", "its first rate")
    } else {
        ("--rate", "the rate")
    };
    match shard.rate(total) {
        Some(rate) if lowest >= u64::from(shard.count) => Ok(Pacing::Total(rate)),
        _ => Err(Error::usage(format!(
            "{flag}: {what} ({lowest}/s in all) is below the number of shards ({}): every shard needs at least 1 request/s",
            shard.count
        ))),
    }
}

/// `--start-at=TIME`: seconds since the Unix epoch (`1767225600`, `1767225600.250`) or an
/// RFC 3339 time (`2026-01-01T00:00:00Z`, `2026-01-01 01:00:00.5+01:00`). It must lie
/// after `now` and at most [`MAX_START_AHEAD`] ahead of it.
pub fn parse_start_at(raw: &str, now: SystemTime) -> Result<SystemTime> {
    let at = if raw.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
        parse_epoch_seconds(raw)
    } else {
        parse_rfc3339(raw)
    }
    .ok_or_else(|| {
        Error::usage(format!(
            "--start-at={raw}: expected seconds since the Unix epoch (1767225600) or an RFC 3339 time (2026-01-01T00:00:00Z)"
        ))
    })?;
    match at.duration_since(now) {
        Err(past) => Err(Error::usage(format!(
            "--start-at={raw} is {:.3} s in the past (now is {}): give a time still to come",
            past.duration().as_secs_f64(),
            epoch_seconds_text(now)
        ))),
        Ok(ahead) if ahead > MAX_START_AHEAD => Err(Error::usage(format!(
            "--start-at={raw} is {:.3} s ahead: at most a day ({} s) ahead is accepted",
            ahead.as_secs_f64(),
            MAX_START_AHEAD.as_secs()
        ))),
        Ok(_) => Ok(at),
    }
}

/// `1767225600.250`: a time as seconds since the epoch with milliseconds, as the JSON
/// configuration and messages show it.
pub fn epoch_seconds_text(t: SystemTime) -> String {
    let ms = t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis());
    format!("{}.{:03}", ms / 1000, ms % 1000)
}

/// `SECONDS[.FRACTION]`, exactly (no floating point).
fn parse_epoch_seconds(raw: &str) -> Option<SystemTime> {
    let (whole, frac) = match raw.split_once('.') {
        Some((w, f)) => (w, f),
        None => (raw, ""),
    };
    if whole.is_empty() {
        return None;
    }
    let secs: u64 = whole.parse().ok()?;
    let nanos = fraction_nanos(frac)?;
    UNIX_EPOCH.checked_add(Duration::new(secs, nanos))
}

/// The digits after a decimal point as nanoseconds (beyond nine digits ignored).
fn fraction_nanos(frac: &str) -> Option<u32> {
    if !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let mut nanos = 0u32;
    for i in 0..9 {
        let digit = frac.as_bytes().get(i).map_or(0, |b| u32::from(b - b'0'));
        nanos = nanos * 10 + digit;
    }
    Some(nanos)
}

/// `YYYY-MM-DD(T| )HH:MM:SS[.F](Z|±HH:MM)`, RFC 3339's date-time (`t`/`z` in either case).
fn parse_rfc3339(raw: &str) -> Option<SystemTime> {
    let b = raw.as_bytes();
    if b.len() < 20 {
        return None;
    }
    let digits = |from: usize, len: usize| -> Option<u32> {
        let part = raw.get(from..from + len)?;
        if !part.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        part.parse().ok()
    };
    let sep = |at: usize, c: u8| b.get(at) == Some(&c);
    let shaped = sep(4, b'-')
        && sep(7, b'-')
        && matches!(b[10], b'T' | b't' | b' ')
        && sep(13, b':')
        && sep(16, b':');
    if !shaped {
        return None;
    }
    let (year, month, day) = (digits(0, 4)?, digits(5, 2)?, digits(8, 2)?);
    let (hour, minute, second) = (digits(11, 2)?, digits(14, 2)?, digits(17, 2)?);
    if !(1..=12).contains(&month)
        || day == 0
        || day > days_in_month(i64::from(year), month)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return None;
    }
    let mut rest = &raw[19..];
    let mut nanos = 0;
    if let Some(after_dot) = rest.strip_prefix('.') {
        let end = after_dot
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(after_dot.len());
        if end == 0 {
            return None;
        }
        nanos = fraction_nanos(&after_dot[..end])?;
        rest = &after_dot[end..];
    }
    let offset_secs: i64 = match rest.as_bytes() {
        [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), h1, h2, b':', m1, m2] => {
            let two = |a: u8, b: u8| -> Option<i64> {
                (a.is_ascii_digit() && b.is_ascii_digit())
                    .then(|| i64::from(a - b'0') * 10 + i64::from(b - b'0'))
            };
            let (h, m) = (two(*h1, *h2)?, two(*m1, *m2)?);
            if h > 23 || m > 59 {
                return None;
            }
            let offset = h * 3600 + m * 60;
            if *sign == b'-' { -offset } else { offset }
        }
        _ => return None,
    };
    // A leap second (:60) counts as the first second of the next minute, as Unix time does.
    let local = days_from_civil(i64::from(year), month, day) * 86_400
        + i64::from(hour) * 3600
        + i64::from(minute) * 60
        + i64::from(second);
    let utc = u64::try_from(local - offset_secs).ok()?;
    UNIX_EPOCH.checked_add(Duration::new(utc, nanos))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: u64, ms: u32) -> SystemTime {
        UNIX_EPOCH + Duration::new(secs, ms * 1_000_000)
    }

    /// 2026-01-01T00:00:00Z.
    const NEW_YEAR: u64 = 1_767_225_600;

    #[test]
    fn a_total_rate_is_divided_and_a_per_connection_rate_is_not() {
        use crate::plan::{Arrival, Rate};
        let rate = |per_sec| Rate {
            per_sec,
            arrival: Arrival::Uniform,
            seed: 1,
            burst: 1,
        };
        let half = Shard { index: 1, count: 2 };
        let per_sec = |p: Pacing| p.rate().map(|r| r.per_sec);
        let total = shard_pacing(Pacing::Total(rate(2001)), None, half).unwrap();
        assert_eq!(per_sec(total), Some(1001), "shard 0 has the other 1000");
        let own = shard_pacing(Pacing::PerConnection(rate(50)), None, half).unwrap();
        assert_eq!(own, Pacing::PerConnection(rate(50)));
        assert_eq!(
            shard_pacing(Pacing::Closed, None, half).unwrap(),
            Pacing::Closed
        );
        let e =
            shard_pacing(Pacing::Total(rate(2)), None, Shard { index: 0, count: 3 }).unwrap_err();
        assert!(
            e.message().starts_with("--rate: the rate (2/s"),
            "{}",
            e.message()
        );
        let sweep = RateSweep {
            start: 2,
            end: 10,
            step: 2,
            step_duration: Duration::from_secs(1),
            slo: None,
        };
        let e = shard_pacing(
            Pacing::Total(rate(2)),
            Some(&sweep),
            Shard { index: 0, count: 3 },
        )
        .unwrap_err();
        assert!(e.message().starts_with("--rate-sweep:"), "{}", e.message());
    }

    #[test]
    fn shards() {
        assert_eq!(parse_shard("0/3").unwrap(), Shard { index: 0, count: 3 });
        assert_eq!(parse_shard("2/3").unwrap(), Shard { index: 2, count: 3 });
        assert_eq!(parse_shard("0/1").unwrap(), Shard::WHOLE);
        for (raw, says) in [
            ("3/3", "must be below the number of shards (0 to 2)"),
            ("0/0", "at least 1"),
            ("1", "expected I/N"),
            ("a/3", "expected I/N"),
            ("-1/3", "expected I/N"),
            ("1/ 3", "expected I/N"),
            ("", "expected I/N"),
            ("0/99999999999", "at most 1000000 shards"),
            ("0/1000001", "at most 1000000 shards"),
        ] {
            let e = parse_shard(raw).unwrap_err();
            assert!(matches!(e, Error::Usage(_)));
            assert!(e.message().contains(says), "{raw}: {}", e.message());
            assert!(e.message().starts_with(&format!("--shard={raw}")));
        }
    }

    #[test]
    fn start_at_in_both_spellings() {
        let now = at(NEW_YEAR - 10, 0);
        let want = at(NEW_YEAR, 0);
        for raw in [
            "1767225600",
            "1767225600.",
            "1767225600.000",
            "2026-01-01T00:00:00Z",
            "2026-01-01t00:00:00z",
            "2026-01-01 00:00:00Z",
            "2026-01-01T01:00:00+01:00",
            "2025-12-31T19:30:00-04:30",
        ] {
            assert_eq!(parse_start_at(raw, now).unwrap(), want, "{raw}");
        }
        assert_eq!(
            parse_start_at("1767225600.25", now).unwrap(),
            at(NEW_YEAR, 250)
        );
        assert_eq!(
            parse_start_at("2026-01-01T00:00:00.123456789Z", now).unwrap(),
            UNIX_EPOCH + Duration::new(NEW_YEAR, 123_456_789)
        );
        assert_eq!(epoch_seconds_text(at(NEW_YEAR, 250)), "1767225600.250");
    }

    #[test]
    fn bad_or_past_start_times_are_usage_errors() {
        let now = at(NEW_YEAR, 0);
        for raw in [
            "",
            "soon",
            "1.2.3",
            ".5",
            "2026-01-01T00:00:00",
            "2026-02-30T00:00:00Z",
            "2026-13-01T00:00:00Z",
            "2026-01-01T24:00:00Z",
            "2026-01-01T00:00:00.Z",
            "2026-01-01T00:00:00+1:00",
            "2026-01-01X00:00:00Z",
            "２026-01-01T00:00:00Z",
        ] {
            let e = parse_start_at(raw, now).unwrap_err();
            assert!(
                e.message()
                    .contains("expected seconds since the Unix epoch"),
                "{raw}: {}",
                e.message()
            );
        }
        let e = parse_start_at("1767225598.5", now).unwrap_err();
        assert_eq!(
            e.message(),
            "--start-at=1767225598.5 is 1.500 s in the past (now is 1767225600.000): give a time still to come"
        );
        let e = parse_start_at("2026-01-03T00:00:00Z", now).unwrap_err();
        assert!(e.message().contains("at most a day"), "{}", e.message());
        assert!(parse_start_at("2026-01-01T23:59:59Z", now).is_ok());
    }
}
