//! The open-loop flags validated: `--rate`, memtier's `--rate-limiting`, `--arrival`,
//! `--warmup`, `--rate-sweep` with `--step-duration`, and `--slo`, into the plan's
//! pacing, warm-up and sweep. Every bad value or combination is one usage line.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::error::{Error, Result};
use crate::frontend::memtier::cli::Cli;
use crate::frontend::memtier::shape::MAX_FLAG_SECS;
use crate::plan::pacing::MAX_RATE;
use crate::plan::{Arrival, Pacing, Rate, RateSweep, Slo};

/// The most steps a sweep may have.
pub const MAX_SWEEP_STEPS: u64 = 1000;
/// Seeds Poisson arrivals unless `--randomize` asks for the clock: the same flags send
/// at the same times.
const ARRIVAL_SEED: u64 = 0x6b76_6265_6e63_6821;

/// The open-loop part of the plan.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OpenLoop {
    pub pacing: Pacing,
    pub warmup: Duration,
    pub sweep: Option<RateSweep>,
}

fn usage(msg: impl Into<String>) -> Error {
    Error::usage(msg)
}

/// A rate flag: a whole number of requests per second, 1 to [`MAX_RATE`].
fn rate(raw: &str, flag: &str) -> Result<u64> {
    let text = raw.trim();
    match text.parse::<u64>() {
        Ok(n) if (1..=MAX_RATE).contains(&n) => Ok(n),
        _ if past_max_rate(text) => Err(usage(format!(
            "{flag} must be at most {MAX_RATE} requests per second, got {text}."
        ))),
        _ => Err(usage(format!(
            "{flag} must be a number of requests per second (at least 1), got '{raw}'."
        ))),
    }
}

/// Digits that name a rate above [`MAX_RATE`], however many (past `u64` too).
fn past_max_rate(text: &str) -> bool {
    // A leading `+` is a number too, as the rate's own parse takes it.
    let text = text.strip_prefix('+').unwrap_or(text);
    !text.is_empty()
        && text.bytes().all(|b| b.is_ascii_digit())
        && text.parse::<u64>().map_or(true, |n| n > MAX_RATE)
}

fn seconds(raw: &str, flag: &str) -> Result<u64> {
    match raw.trim().parse::<u64>() {
        Ok(n) if n <= MAX_FLAG_SECS => Ok(n),
        Ok(_) => Err(usage(format!(
            "{flag} must be at most {MAX_FLAG_SECS} seconds, got '{raw}'."
        ))),
        Err(_) => Err(usage(format!(
            "{flag} must be a number of seconds, got '{raw}'."
        ))),
    }
}

/// `START:END:STEP`, rates with START <= END and a step of at least 1.
fn sweep_rates(raw: &str) -> Result<(u64, u64, u64)> {
    let bad = || {
        usage(format!(
            "--rate-sweep must be START:END:STEP in requests per second with START <= END, e.g. \
             10000:100000:10000, got '{raw}'."
        ))
    };
    let parts: Vec<&str> = raw.split(':').collect();
    let [start, end, step] = parts[..] else {
        return Err(bad());
    };
    // A number past the largest rate says so; anything else is the format's fault.
    let rate_or = |text: &str, flag: &str| {
        if past_max_rate(text.trim()) {
            rate(text, flag)
        } else {
            rate(text, flag).map_err(|_| bad())
        }
    };
    let start = rate_or(start, "--rate-sweep START")?;
    let end = rate_or(end, "--rate-sweep END")?;
    let step: u64 = step.trim().parse().map_err(|_| bad())?;
    if end < start || step == 0 {
        return Err(bad());
    }
    let steps = (end - start) / step + 1;
    if steps > MAX_SWEEP_STEPS {
        return Err(usage(format!(
            "--rate-sweep={raw} makes {steps} steps; at most {MAX_SWEEP_STEPS} (use a larger STEP)."
        )));
    }
    Ok((start, end, step))
}

/// `pPCT:MS`, e.g. `p99:5` or `p99.9:20.5`.
fn slo(raw: &str) -> Result<Slo> {
    let bad = || {
        usage(format!(
            "--slo must be pPERCENTILE:MILLISECONDS, e.g. p99:5, got '{raw}'."
        ))
    };
    let (p, ms) = raw.split_once(':').ok_or_else(bad)?;
    let p = p.strip_prefix('p').ok_or_else(bad)?;
    let percentile: f64 = p.parse().map_err(|_| bad())?;
    let max_ms: f64 = ms.parse().map_err(|_| bad())?;
    let valid = percentile > 0.0 && percentile <= 100.0 && max_ms > 0.0 && max_ms.is_finite();
    if !valid {
        return Err(bad());
    }
    Ok(Slo { percentile, max_ms })
}

/// Validates the open-loop flags of `cli`.
pub fn from_cli(cli: &Cli) -> Result<OpenLoop> {
    let arrival = match cli.arrival.as_deref() {
        None | Some("uniform") => Arrival::Uniform,
        Some("poisson") => Arrival::Poisson,
        Some(other) => {
            return Err(usage(format!(
                "--arrival must be uniform or poisson, got '{other}'."
            )));
        }
    };
    let seed = if cli.randomize {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(ARRIVAL_SEED, |d| d.as_nanos() as u64)
    } else {
        ARRIVAL_SEED
    };
    let total = cli
        .rate
        .as_deref()
        .map(|raw| rate(raw, "--rate"))
        .transpose()?;
    // memtier's --rate-limiting: no limit unless given, and a given one above zero.
    let per_connection = match cli.rate_limiting.as_deref() {
        Some(raw) if raw.trim() == "0" => {
            return Err(usage("rate must be greater than zero."));
        }
        Some(raw) => Some(rate(raw, "--rate-limiting")?),
        None => None,
    };
    if total.is_some() && per_connection.is_some() {
        return Err(usage(
            "--rate (in all) and --rate-limiting (per connection) cannot be used together: choose one.",
        ));
    }
    let sweep = match cli.rate_sweep.as_deref() {
        Some(raw) => Some(sweep(cli, raw)?),
        None => {
            if cli.slo.is_some() {
                return Err(usage(
                    "--slo needs --rate-sweep (it finds the highest rate that holds it).",
                ));
            }
            None
        }
    };
    if sweep.is_some() && (total.is_some() || per_connection.is_some()) {
        return Err(usage(
            "--rate-sweep sets each step's rate: drop --rate and --rate-limiting.",
        ));
    }
    let make = |per_sec| Rate {
        per_sec,
        arrival,
        seed,
        burst: 1,
    };
    let pacing = match (total, per_connection, sweep) {
        (Some(r), _, _) => Pacing::Total(make(r)),
        (_, Some(r), _) => Pacing::PerConnection(make(r)),
        (_, _, Some(s)) => Pacing::Total(make(s.start)),
        _ => {
            if cli.arrival.is_some() {
                return Err(usage(
                    "--arrival needs a rate: --rate, --rate-limiting or --rate-sweep.",
                ));
            }
            Pacing::Closed
        }
    };
    let warmup = match cli.warmup.as_deref() {
        Some(raw) => Duration::from_secs(seconds(raw, "--warmup")?),
        None => Duration::ZERO,
    };
    if !warmup.is_zero() && cli.test_time.is_none() && sweep.is_none() {
        return Err(usage(
            "--warmup needs --test-time (or --rate-sweep): it runs before the timed part.",
        ));
    }
    if !warmup.is_zero() && cli.clients_start.is_some() {
        return Err(usage(
            "--warmup cannot be combined with a staircase ramp-up (--clients-start, --clients-step).",
        ));
    }
    Ok(OpenLoop {
        pacing,
        warmup,
        sweep,
    })
}

/// `--rate-sweep` with its `--step-duration` and `--slo`, and what it excludes.
fn sweep(cli: &Cli, raw: &str) -> Result<RateSweep> {
    let (start, end, step) = sweep_rates(raw)?;
    let Some(duration) = cli.step_duration.as_deref() else {
        return Err(usage(
            "--rate-sweep needs --step-duration=SECS: how long each rate runs.",
        ));
    };
    let secs = seconds(duration, "--step-duration")?;
    if secs == 0 {
        return Err(usage("--step-duration must be greater than zero."));
    }
    if cli.test_time.is_some() || cli.requests.is_some() {
        return Err(usage(
            "--rate-sweep runs each step for --step-duration: drop --test-time and --requests.",
        ));
    }
    if cli.clients_start.is_some() || cli.clients_step.is_some() {
        return Err(usage(
            "--rate-sweep cannot be combined with a staircase ramp-up (--clients-start, --clients-step).",
        ));
    }
    if cli.run_count.as_deref().is_some_and(|n| n.trim() != "1") {
        return Err(usage(
            "--rate-sweep cannot be combined with --run-count: each step is one run.",
        ));
    }
    Ok(RateSweep {
        start,
        end,
        step,
        step_duration: Duration::from_secs(secs),
        slo: cli.slo.as_deref().map(slo).transpose()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cli(args: &[&str]) -> Cli {
        use clap::Parser;
        let argv = std::iter::once("kvbench").chain(args.iter().copied());
        Cli::try_parse_from(argv).expect("flags parse")
    }

    fn err(args: &[&str]) -> String {
        from_cli(&cli(args)).unwrap_err().message().to_string()
    }

    #[test]
    fn rates_become_pacing() {
        let open = from_cli(&cli(&["--rate=2000", "--arrival=poisson"])).unwrap();
        assert!(matches!(
            open.pacing,
            Pacing::Total(Rate {
                per_sec: 2000,
                arrival: Arrival::Poisson,
                ..
            })
        ));
        let open = from_cli(&cli(&["--rate-limiting=200"])).unwrap();
        assert!(matches!(
            open.pacing,
            Pacing::PerConnection(Rate { per_sec: 200, .. })
        ));
        // memtier refuses a zero rate rather than run unlimited.
        assert_eq!(
            from_cli(&cli(&["--rate-limiting=0"]))
                .unwrap_err()
                .to_string(),
            "rate must be greater than zero."
        );
        assert_eq!(from_cli(&cli(&[])).unwrap().pacing, Pacing::Closed);
    }

    #[test]
    fn the_same_flags_seed_the_same_arrivals() {
        let a = from_cli(&cli(&["--rate=10", "--arrival=poisson"])).unwrap();
        let b = from_cli(&cli(&["--rate=10", "--arrival=poisson"])).unwrap();
        assert_eq!(a.pacing, b.pacing);
    }

    #[test]
    fn sweep_takes_step_duration_and_slo() {
        let open = from_cli(&cli(&[
            "--rate-sweep=1000:5000:1000",
            "--step-duration=2",
            "--slo=p99.9:2.5",
            "--warmup=1",
        ]))
        .unwrap();
        let sweep = open.sweep.unwrap();
        assert_eq!((sweep.start, sweep.end, sweep.step), (1000, 5000, 1000));
        assert_eq!(sweep.step_duration, Duration::from_secs(2));
        assert_eq!(
            sweep.slo,
            Some(Slo {
                percentile: 99.9,
                max_ms: 2.5
            })
        );
        assert_eq!(open.warmup, Duration::from_secs(1));
        assert!(matches!(
            open.pacing,
            Pacing::Total(Rate { per_sec: 1000, .. })
        ));
    }

    #[test]
    fn bad_values_are_one_line_usage_errors() {
        for (args, wanted) in [
            (
                &["--rate=0"][..],
                "--rate must be a number of requests per second",
            ),
            (&["--rate=fast"], "--rate must be a number"),
            (&["--rate=200000000"], "--rate must be at most"),
            (&["--rate=+200000000"], "--rate must be at most"),
            (
                &["--rate=99999999999999999999"],
                "--rate must be at most 100000000 requests per second, got 99999999999999999999.",
            ),
            (&["--rate-limiting=x"], "--rate-limiting must be a number"),
            (
                &["--rate=5", "--rate-limiting=5"],
                "cannot be used together",
            ),
            (
                &["--arrival=gamma", "--rate=5"],
                "--arrival must be uniform or poisson",
            ),
            (&["--arrival=poisson"], "--arrival needs a rate"),
            (&["--warmup=5"], "--warmup needs --test-time"),
            (
                &["--warmup=x", "--test-time=5"],
                "--warmup must be a number of seconds",
            ),
            (&["--rate-sweep=1:2"], "--rate-sweep must be START:END:STEP"),
            (&["--rate-sweep=5:1:1", "--step-duration=1"], "START <= END"),
            (
                &["--rate-sweep=1:200000000:100000000", "--step-duration=1"],
                "--rate-sweep END must be at most 100000000",
            ),
            (
                &["--rate-sweep=1:5:0", "--step-duration=1"],
                "START:END:STEP",
            ),
            (
                &["--rate-sweep=1:5000:1", "--step-duration=1"],
                "at most 1000",
            ),
            (&["--rate-sweep=1:5:1"], "needs --step-duration"),
            (
                &["--rate-sweep=1:5:1", "--step-duration=0"],
                "greater than zero",
            ),
            (
                &["--rate-sweep=1:5:1", "--step-duration=1", "--test-time=5"],
                "drop --test-time",
            ),
            (
                &["--rate-sweep=1:5:1", "--step-duration=1", "--rate=5"],
                "drop --rate",
            ),
            (
                &["--rate-sweep=1:5:1", "--step-duration=1", "-x", "2"],
                "--run-count",
            ),
            (
                &[
                    "--rate-sweep=1:5:1",
                    "--step-duration=1",
                    "--clients-start=1",
                ],
                "ramp-up",
            ),
            (&["--slo=p99:5"], "--slo needs --rate-sweep"),
            (
                &["--rate-sweep=1:5:1", "--step-duration=1", "--slo=99:5"],
                "--slo must be pPERCENTILE:MILLISECONDS",
            ),
            (
                &["--rate-sweep=1:5:1", "--step-duration=1", "--slo=p101:5"],
                "--slo must be",
            ),
            (
                &["--rate-sweep=1:5:1", "--step-duration=1", "--slo=p99:-1"],
                "--slo must be",
            ),
        ] {
            let message = err(args);
            assert!(message.contains(wanted), "{args:?}: {message}");
            assert!(!message.contains('\n'), "{message}");
        }
    }
}
