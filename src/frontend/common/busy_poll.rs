//! `--busy-poll=USEC`, the same in every front end that drives the engine: how long a
//! worker polls without waiting before it sleeps (see `plan::Load::busy_poll`). On a
//! virtual machine a thread woken from idle by its reply takes tens of microseconds to
//! run again, which a latency measured at a few connections mostly consists of; polling
//! for a while first takes replies that come within it at once, at the price of the
//! worker's core while it polls.

use std::time::Duration;

/// The longest poll without waiting a flag may ask for: a second.
pub const MAX_BUSY_POLL_US: u64 = 1_000_000;

/// Parses the flag's microseconds (0 turns it off); the error is a sentence naming
/// `flag` and what it takes.
pub fn parse_busy_poll(raw: &str, flag: &str) -> Result<Option<Duration>, String> {
    match raw.trim().parse::<u64>() {
        Ok(us) if us <= MAX_BUSY_POLL_US => Ok((us > 0).then(|| Duration::from_micros(us))),
        _ => Err(format!(
            "{flag} must be microseconds from 0 to {MAX_BUSY_POLL_US}, got '{raw}'."
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn microseconds_up_to_a_second_and_zero_is_off() {
        assert_eq!(parse_busy_poll("0", "--busy-poll"), Ok(None));
        assert_eq!(
            parse_busy_poll(" 50 ", "--busy-poll"),
            Ok(Some(Duration::from_micros(50)))
        );
        assert_eq!(
            parse_busy_poll("1000000", "--busy-poll"),
            Ok(Some(Duration::from_secs(1)))
        );
        for bad in ["1000001", "-1", "abc", "", "1.5"] {
            let err = parse_busy_poll(bad, "--busy-poll").unwrap_err();
            assert!(err.starts_with("--busy-poll must be microseconds"), "{err}");
            assert!(err.contains(&format!("'{bad}'")), "{err}");
        }
    }
}
