//! The replica-visibility flags: `--visibility-from=HOST:PORT`, `--visibility-ratio=N`,
//! `--visibility-timeout=MS`, validated and resolved into the plan's
//! [`VisibilityProbe`].

use std::time::Duration;

use clap::Args;

use crate::error::{Error, Result};
use crate::frontend::common::{Target, parse_port, resolve};
use crate::plan::{Endpoint, VisibilityProbe};

/// The help heading the visibility flags appear under.
const HEADING: &str = "Replica visibility";

/// How long a tracked write may stay unseen when `--visibility-timeout` is not given.
const DEFAULT_TIMEOUT_MS: u64 = 5000;

/// `--visibility-from` and its companions.
#[derive(Args, Clone, Debug, Default)]
pub struct VisibilityArgs {
    /// After a tracked write is acknowledged, poll its key on HOST:PORT (a replica, or
    /// the same database in another region) until the written value is there, and
    /// report the visibility lag. One endpoint per run (the flag may not repeat)
    #[arg(long, value_name = "HOST:PORT", help_heading = HEADING)]
    pub visibility_from: Vec<String>,

    /// Track one write in N for --visibility-from (default: 100)
    #[arg(long, value_name = "N", help_heading = HEADING)]
    pub visibility_ratio: Option<String>,

    /// A tracked write not visible after MS milliseconds counts as never seen
    /// (default: 5000); a --visibility-from endpoint that stops answering gives timeouts,
    /// it does not end the run (--reply-timeout does not apply to it)
    #[arg(long, value_name = "MS", help_heading = HEADING)]
    pub visibility_timeout: Option<String>,
}

fn usage(msg: impl Into<String>) -> Error {
    Error::usage(msg)
}

impl VisibilityArgs {
    /// The probe the flags ask for, its endpoint resolved; `None` without
    /// `--visibility-from`.
    pub fn probe(&self, target: &Target) -> Result<Option<VisibilityProbe>> {
        if self.visibility_from.len() > 1 {
            return Err(usage(format!(
                "--visibility-from takes one endpoint per run (given {} times).",
                self.visibility_from.len()
            )));
        }
        let Some(from) = self.visibility_from.first().map(String::as_str) else {
            if self.visibility_ratio.is_some() || self.visibility_timeout.is_some() {
                return Err(usage(
                    "--visibility-ratio and --visibility-timeout apply with --visibility-from=HOST:PORT.",
                ));
            }
            return Ok(None);
        };
        let (host, port) = match from.strip_prefix('[') {
            Some(rest) => rest
                .split_once("]:")
                .ok_or_else(|| usage("--visibility-from must be HOST:PORT ([IPv6]:PORT)."))?,
            None => from
                .rsplit_once(':')
                .filter(|(host, _)| !host.contains(':'))
                .ok_or_else(|| usage("--visibility-from must be HOST:PORT ([IPv6]:PORT)."))?,
        };
        if host.is_empty() {
            return Err(usage("--visibility-from needs a host."));
        }
        let port = parse_port(port).ok_or_else(|| {
            usage("--visibility-from: the port must be a number in the range [1-65535].")
        })?;
        let every =
            match self.visibility_ratio.as_deref() {
                None => 100,
                Some(n) => n.parse::<u64>().ok().filter(|&n| n >= 1).ok_or_else(|| {
                    usage("--visibility-ratio must be a whole number of at least 1.")
                })?,
            };
        let timeout_ms = match self.visibility_timeout.as_deref() {
            None => DEFAULT_TIMEOUT_MS,
            Some(ms) => ms
                .parse::<u64>()
                .ok()
                .filter(|&ms| (1..=3_600_000).contains(&ms))
                .ok_or_else(|| {
                    usage("--visibility-timeout must be milliseconds from 1 to 3600000.")
                })?,
        };
        let addr = resolve(host, port, target.address_choice())?;
        Ok(Some(VisibilityProbe {
            endpoint: Endpoint::Tcp {
                host: host.to_string(),
                addr,
            },
            every,
            timeout: Duration::from_millis(timeout_ms),
        }))
    }
}
