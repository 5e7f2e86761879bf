//! memtier's load-shape flags validated: reconnects, ramp-up, WAIT, expiry, multi-key
//! gets, data offset, timeouts and start jitter (rates are `open_loop.rs`'s).

use std::time::Duration;

use crate::error::{Error, Result};
use crate::frontend::memtier::cli::Cli;
use crate::plan::{LoadShape, Ramp, Reconnect, Refill, WaitConfig};

/// The largest `--data-offset` memtier takes (2^29 - 1: a SETRANGE past it would make a
/// string larger than Redis allows).
const MAX_DATA_OFFSET: u64 = (1 << 29) - 1;

/// How long requests may wait for a reply before the connection counts as stalled.
pub const DEFAULT_REPLY_TIMEOUT: Duration = Duration::from_secs(60);

/// Longest duration any flag may ask for (a day): larger values are typos, and would
/// overflow clock arithmetic.
pub const MAX_FLAG_SECS: u64 = 86_400;

/// Most keys in one multi-key get: each client keeps room for that many key ids.
pub const MAX_MULTI_KEY_GET: u32 = 10_000;

/// Seconds from a flag, at most [`MAX_FLAG_SECS`].
fn seconds(raw: &str, flag: &str) -> Result<u64> {
    let secs: u64 = number(raw, flag, "a number of seconds")?;
    if secs > MAX_FLAG_SECS {
        return Err(usage(format!(
            "{flag} must be at most {MAX_FLAG_SECS} seconds, got {secs}."
        )));
    }
    Ok(secs)
}

fn usage(msg: impl Into<String>) -> Error {
    Error::usage(msg)
}

fn number<T: std::str::FromStr>(raw: &str, flag: &str, what: &str) -> Result<T> {
    raw.trim()
        .parse::<T>()
        .map_err(|_| usage(format!("{flag} must be {what}, got '{raw}'.")))
}

/// `MIN<sep>MAX` with MIN <= MAX.
fn range(raw: &str, sep: char, flag: &str) -> Result<(u32, u32)> {
    let bad = || {
        usage(format!(
            "{flag} must be MIN{sep}MAX with MIN <= MAX, got '{raw}'."
        ))
    };
    let (a, b) = raw.split_once(sep).ok_or_else(bad)?;
    let (a, b): (u32, u32) = (
        a.trim().parse().map_err(|_| bad())?,
        b.trim().parse().map_err(|_| bad())?,
    );
    if a > b {
        return Err(bad());
    }
    Ok((a, b))
}

/// Validates the load-shape flags of `cli`; `clients` is `-c` (for the ramp-up check),
/// `memcache` tells whether a memcache protocol is in use.
pub fn from_cli(cli: &Cli, clients: usize, memcache: bool) -> Result<LoadShape> {
    let mut shape = LoadShape::default();
    if let Some(raw) = cli.multi_key_get.as_deref() {
        shape.multi_key_get = number(raw, "--multi-key-get", "a number of keys")?;
        // memtier refuses 0 (multi-key gets are off by leaving the flag out), so a
        // command line refused there must not run here either; its words are kept.
        if shape.multi_key_get == 0 {
            return Err(usage("multi-key-get must be greater than zero."));
        }
        if shape.multi_key_get > MAX_MULTI_KEY_GET {
            return Err(usage(format!(
                "--multi-key-get must be at most {MAX_MULTI_KEY_GET} keys, got {}.",
                shape.multi_key_get
            )));
        }
    }
    if let Some(raw) = cli.expiry_range.as_deref() {
        let (min, max) = range(raw, '-', "--expiry-range")?;
        if max > 0 {
            shape.expiry_range = Some((min, max));
        }
    }
    if let Some(raw) = cli.data_offset.as_deref() {
        shape.data_offset = number(raw, "--data-offset", "a byte offset")?;
        // SETRANGE's offset and value end inside Redis's 512 MB string: memtier's limit.
        if shape.data_offset > MAX_DATA_OFFSET {
            return Err(usage("data-offset too long"));
        }
        if shape.data_offset > 0 && memcache {
            return Err(usage(
                "--data-offset uses SETRANGE/GETRANGE, which memcached does not have.",
            ));
        }
    }
    if shape.data_offset > 0 && shape.expiry_range.is_some() {
        return Err(usage(
            "--data-offset cannot be combined with --expiry-range (SETRANGE takes no TTL).",
        ));
    }
    shape.refill = match cli.refill.as_deref().map(str::trim) {
        None | Some("reply") => Refill::AsRepliesArrive,
        Some("batch") => Refill::WholeBatch,
        Some(other) => {
            return Err(usage(format!(
                "--refill must be reply or batch, got '{other}'."
            )));
        }
    };
    shape.wait = wait_config(cli, memcache)?;
    if let Some(raw) = cli.reconnect_interval.as_deref() {
        let n: u64 = number(raw, "--reconnect-interval", "a number of requests")?;
        // memtier refuses 0 with these words rather than reading it as "never".
        if n == 0 {
            return Err(usage("reconnect-interval must be greater than zero."));
        }
        shape.reconnect_interval = Some(n);
    }
    let attempts = cli
        .max_reconnect_attempts
        .as_deref()
        .map(|raw| number::<u32>(raw, "--max-reconnect-attempts", "a number"))
        .transpose()?;
    let backoff = cli
        .reconnect_backoff_factor
        .as_deref()
        .map(|raw| number::<f64>(raw, "--reconnect-backoff-factor", "a number"))
        .transpose()?;
    if backoff.is_some_and(|f| !(0.0..=100.0).contains(&f)) {
        return Err(usage(
            "--reconnect-backoff-factor must be between 0 and 100.",
        ));
    }
    if cli.reconnect_on_error {
        shape.reconnect = Some(Reconnect {
            max_attempts: attempts.unwrap_or(0),
            backoff_factor: backoff.unwrap_or(0.0),
        });
    } else if attempts.is_some() || backoff.is_some() {
        return Err(usage(
            "--max-reconnect-attempts and --reconnect-backoff-factor need --reconnect-on-error.",
        ));
    }
    shape.reply_timeout = match cli.reply_timeout.as_deref() {
        Some(raw) => {
            let secs = seconds(raw, "--reply-timeout")?;
            (secs > 0).then(|| Duration::from_secs(secs))
        }
        None => Some(DEFAULT_REPLY_TIMEOUT),
    };
    if let Some(raw) = cli.connection_timeout.as_deref() {
        let secs = seconds(raw, "--connection-timeout")?;
        if secs > 0 {
            shape.connection_timeout = Some(Duration::from_secs(secs));
        }
    }
    let jitter_min = cli
        .thread_conn_start_min_jitter_micros
        .as_deref()
        .map(|raw| number::<u64>(raw, "--thread-conn-start-min-jitter-micros", "microseconds"))
        .transpose()?
        .unwrap_or(0);
    let jitter_max = cli
        .thread_conn_start_max_jitter_micros
        .as_deref()
        .map(|raw| number::<u64>(raw, "--thread-conn-start-max-jitter-micros", "microseconds"))
        .transpose()?
        .unwrap_or(jitter_min);
    for (flag, micros) in [
        ("--thread-conn-start-min-jitter-micros", jitter_min),
        ("--thread-conn-start-max-jitter-micros", jitter_max),
    ] {
        if micros > MAX_FLAG_SECS * 1_000_000 {
            return Err(usage(format!(
                "{flag} must be at most {} microseconds (a day), got {micros}.",
                MAX_FLAG_SECS * 1_000_000
            )));
        }
    }
    if jitter_max < jitter_min {
        return Err(usage(
            "--thread-conn-start-max-jitter-micros must be >= --thread-conn-start-min-jitter-micros.",
        ));
    }
    shape.conn_jitter_us = (jitter_min, jitter_max);
    shape.ramp = ramp(cli, clients)?;
    Ok(shape)
}

fn wait_config(cli: &Cli, memcache: bool) -> Result<Option<WaitConfig>> {
    let Some(raw) = cli.wait_ratio.as_deref() else {
        if cli.num_slaves.is_some() || cli.wait_timeout.is_some() {
            return Err(usage("--num-slaves and --wait-timeout need --wait-ratio."));
        }
        return Ok(None);
    };
    let (sets, waits) = match raw.split_once(':') {
        Some((a, b)) => (
            number::<u32>(a, "--wait-ratio", "SETS:WAITS")?,
            number::<u32>(b, "--wait-ratio", "SETS:WAITS")?,
        ),
        None => {
            return Err(usage(format!(
                "--wait-ratio must be SETS:WAITS, got '{raw}'."
            )));
        }
    };
    // memtier takes `N:0` (no WAITs) but refuses `0:0`, a ratio of nothing, in its words.
    if sets == 0 && waits == 0 {
        return Err(usage("wait-ratio must be expressed as [0-n]:[0-n]."));
    }
    if waits == 0 {
        return Ok(None);
    }
    if sets == 0 {
        return Err(usage(
            "--wait-ratio needs at least one SET between WAITs (e.g. 10:1).",
        ));
    }
    if memcache {
        return Err(usage(
            "--wait-ratio sends Redis WAIT commands; memcached has none.",
        ));
    }
    let num_slaves = match cli.num_slaves.as_deref() {
        Some(raw) => range(raw, '-', "--num-slaves")?,
        None => (0, 0),
    };
    let timeout_ms = match cli.wait_timeout.as_deref() {
        Some(raw) => range(raw, '-', "--wait-timeout")?,
        None => (0, 0),
    };
    Ok(Some(WaitConfig {
        sets,
        waits,
        num_slaves,
        timeout_ms,
    }))
}

fn ramp(cli: &Cli, clients: usize) -> Result<Option<Ramp>> {
    // With --rate-sweep, --step-duration is the sweep's.
    let given = [
        cli.clients_start.is_some(),
        cli.clients_step.is_some(),
        cli.step_duration.is_some() && cli.rate_sweep.is_none(),
    ];
    if given.iter().all(|g| !g) {
        return Ok(None);
    }
    if !given.iter().all(|g| *g) {
        return Err(usage(
            "staircase ramp-up needs all of --clients-start, --clients-step and --step-duration.",
        ));
    }
    let start: usize = number(
        cli.clients_start.as_deref().unwrap_or(""),
        "--clients-start",
        "a number of clients",
    )?;
    let step: usize = number(
        cli.clients_step.as_deref().unwrap_or(""),
        "--clients-step",
        "a number of clients",
    )?;
    let secs = seconds(
        cli.step_duration.as_deref().unwrap_or(""),
        "--step-duration",
    )?;
    if start == 0 || start >= clients {
        return Err(usage(format!(
            "--clients-start must be at least 1 and less than --clients ({clients})."
        )));
    }
    if cli.test_time.is_none() {
        return Err(usage(
            "staircase ramp-up needs --test-time (and no --requests).",
        ));
    }
    if step == 0 || secs == 0 {
        return Err(usage(
            "--clients-step and --step-duration must be greater than zero.",
        ));
    }
    Ok(Some(Ramp {
        start,
        step,
        step_duration: Duration::from_secs(secs),
    }))
}
