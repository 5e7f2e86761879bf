//! redis-benchmark's number flags read and checked: an integer (what `atoi` would take,
//! refusing what is not a number), one of at least 1, and `--rps`'s rate.

use crate::error::Error;
use crate::plan::pacing::MAX_RATE;

fn usage(msg: impl Into<String>) -> Error {
    Error::usage(msg)
}

/// An integer flag value; redis-benchmark reads these with `atoi`, kvbench refuses what
/// is not a number.
pub fn integer(raw: &str, flag: &str) -> Result<i64, Error> {
    raw.trim().parse::<i64>().map_err(|err| {
        let why = match err.kind() {
            std::num::IntErrorKind::PosOverflow | std::num::IntErrorKind::NegOverflow => {
                "an integer too large to use"
            }
            _ => "expected an integer",
        };
        usage(format!("invalid value '{raw}' for {flag}: {why}"))
    })
}

/// An integer flag value of at least 1, `what` naming it in the refusal.
pub fn positive(raw: &str, flag: &str, what: &str) -> Result<u64, Error> {
    let n = integer(raw, flag)?;
    if n < 1 {
        return Err(usage(format!("{flag} {raw}: {what} must be at least 1")));
    }
    Ok(n as u64)
}

/// `--rps`: a request rate from 1 to the plan's [`MAX_RATE`].
pub fn rps_value(raw: &str) -> Result<u64, Error> {
    let rate = positive(raw, "--rps", "the request rate")?;
    if rate > MAX_RATE {
        return Err(usage(format!(
            "--rps {raw}: the request rate must be at most {MAX_RATE} per second"
        )));
    }
    Ok(rate)
}
