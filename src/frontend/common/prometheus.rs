//! The `--prometheus-*` flags as typed, shared by the front ends that offer the live
//! endpoint, and their validation into the sink's [`PrometheusSettings`].
//!
//! The flags stay raw strings here (like the memtier front end's other flags) so that every
//! refusal is kvbench's own one-line message, not clap's. A front end flattens
//! [`PrometheusArgs`] into its clap struct and calls [`PrometheusArgs::settings`] while it
//! builds its plan.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use clap::{ArgAction, Args};

use crate::error::Error;
use crate::sinks::prometheus::settings::{
    DEFAULT_BUCKETS_US, MAX_BUCKET_US, PrometheusSettings, RunLabel, bucket_error,
};

/// The endpoint's flags exactly as typed. Flatten it into a front end's clap struct.
#[derive(Args, Clone, Debug, Default, PartialEq, Eq)]
#[command(next_help_heading = "Prometheus Options")]
pub struct PrometheusArgs {
    /// Serve live metrics at http://ADDR:PORT/metrics while the run lasts; 0 picks a free
    /// port and prints it on stderr (default: none, disabled)
    #[arg(long, value_name = "PORT", allow_hyphen_values = true)]
    pub prometheus_port: Option<String>,

    /// Numeric IPv4 or IPv6 address the metrics endpoint listens on (default: 127.0.0.1)
    #[arg(long, value_name = "ADDR", allow_hyphen_values = true)]
    pub prometheus_bind_addr: Option<String>,

    /// A label put on every metric, KEY=VALUE; repeat it for more labels
    #[arg(long, value_name = "KEY=VALUE", action = ArgAction::Append, allow_hyphen_values = true)]
    pub prometheus_run_label: Vec<String>,

    /// Upper bounds of the latency histogram's buckets in seconds, ascending,
    /// comma-separated; +Inf is implicit (default: memtier's 26, 0.0001 to 60)
    #[arg(long, value_name = "LIST", allow_hyphen_values = true)]
    pub prometheus_latency_buckets: Option<String>,

    /// After the last run, keep the endpoint up until a scrape has taken the final
    /// figures, at most this many seconds (0 to 3600; default: 0, close at once)
    #[arg(long, value_name = "SECONDS", allow_hyphen_values = true)]
    pub prometheus_linger: Option<String>,
}

impl PrometheusArgs {
    /// The validated settings, or `None` when `--prometheus-port` is absent (the endpoint
    /// is off). Another `--prometheus-*` flag without `--prometheus-port` is refused rather
    /// than silently ignored.
    pub fn settings(&self) -> Result<Option<PrometheusSettings>, Error> {
        let Some(port) = &self.prometheus_port else {
            let stray = [
                (
                    self.prometheus_bind_addr.is_some(),
                    "--prometheus-bind-addr",
                ),
                (
                    !self.prometheus_run_label.is_empty(),
                    "--prometheus-run-label",
                ),
                (
                    self.prometheus_latency_buckets.is_some(),
                    "--prometheus-latency-buckets",
                ),
                (self.prometheus_linger.is_some(), "--prometheus-linger"),
            ];
            return match stray.iter().find(|(given, _)| *given) {
                Some((_, flag)) => Err(Error::usage(format!(
                    "{flag} needs --prometheus-port (the endpoint is off without it)."
                ))),
                None => Ok(None),
            };
        };
        let port = parse_port(port)?;
        let ip = match &self.prometheus_bind_addr {
            Some(addr) => parse_bind_addr(addr)?,
            None => IpAddr::V4(Ipv4Addr::LOCALHOST),
        };
        let labels = self
            .prometheus_run_label
            .iter()
            .map(|l| parse_run_label(l))
            .collect::<Result<Vec<_>, _>>()?;
        let buckets = match &self.prometheus_latency_buckets {
            Some(list) => parse_buckets(list)?,
            None => DEFAULT_BUCKETS_US.to_vec(),
        };
        let mut settings = PrometheusSettings::new(SocketAddr::new(ip, port), labels, buckets)?;
        if let Some(linger) = &self.prometheus_linger {
            settings.linger = parse_linger(linger)?;
        }
        Ok(Some(settings))
    }
}

/// `--prometheus-linger`: seconds (decimals allowed), 0 to an hour.
fn parse_linger(text: &str) -> Result<std::time::Duration, Error> {
    match text.trim().parse::<f64>() {
        Ok(secs) if (0.0..=3600.0).contains(&secs) => Ok(std::time::Duration::from_secs_f64(secs)),
        _ => Err(Error::usage(format!(
            "--prometheus-linger must be seconds from 0 to 3600, not '{text}'."
        ))),
    }
}

fn parse_port(text: &str) -> Result<u16, Error> {
    text.trim().parse::<u16>().map_err(|_| {
        Error::usage(format!(
            "--prometheus-port must be a number in the range [0-65535] (0: any free port), not '{text}'."
        ))
    })
}

/// A numeric address, IPv6 with or without brackets. Host names are refused: which
/// interface a name resolves to is too easy to get wrong for a port without
/// authentication.
fn parse_bind_addr(text: &str) -> Result<IpAddr, Error> {
    let bare = text
        .strip_prefix('[')
        .and_then(|t| t.strip_suffix(']'))
        .unwrap_or(text);
    bare.parse::<IpAddr>().map_err(|_| {
        Error::usage(format!(
            "--prometheus-bind-addr must be a numeric IPv4 or IPv6 address (e.g. 127.0.0.1 or ::1), not '{text}'."
        ))
    })
}

fn parse_run_label(text: &str) -> Result<RunLabel, Error> {
    let Some((name, value)) = text.split_once('=') else {
        return Err(Error::usage(format!(
            "--prometheus-run-label must be KEY=VALUE, not '{text}'."
        )));
    };
    if value.is_empty() {
        // Prometheus treats an empty value as no label at all.
        return Err(Error::usage(format!(
            "--prometheus-run-label '{text}' has an empty value."
        )));
    }
    Ok(RunLabel {
        name: name.to_string(),
        value: value.to_string(),
    })
}

/// `0.001,0.005,0.05` (seconds) into whole microseconds. Range and order are checked by
/// [`PrometheusSettings::new`].
fn parse_buckets(list: &str) -> Result<Vec<u64>, Error> {
    list.split(',')
        .map(|token| {
            let token = token.trim();
            if token.eq_ignore_ascii_case("+inf") || token.eq_ignore_ascii_case("inf") {
                return Err(bucket_error("+Inf is implicit, leave it out".to_string()));
            }
            match token.parse::<f64>() {
                Ok(secs) if secs.is_finite() && secs > 0.0 => {
                    let us = (secs * 1e6).round();
                    // Out-of-range values are refused by `PrometheusSettings::new`;
                    // saturate so the check sees them.
                    Ok(if us > MAX_BUCKET_US as f64 {
                        u64::MAX
                    } else {
                        us as u64
                    })
                }
                _ => Err(bucket_error(format!(
                    "'{token}' is not a positive number of seconds"
                ))),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sinks::prometheus::settings::{MAX_BUCKETS, MAX_RUN_LABELS};
    use clap::Parser;

    #[derive(Parser, Debug)]
    struct Cli {
        #[command(flatten)]
        prometheus: PrometheusArgs,
    }

    fn settings(args: &[&str]) -> Result<Option<PrometheusSettings>, Error> {
        let argv = std::iter::once("kvbench").chain(args.iter().copied());
        Cli::try_parse_from(argv)
            .expect("clap accepts raw strings")
            .prometheus
            .settings()
    }

    fn refused(args: &[&str]) -> String {
        match settings(args) {
            Err(Error::Usage(msg)) => {
                assert!(!msg.contains('\n'), "{msg}");
                msg
            }
            other => panic!("{args:?}: expected a usage error, got {other:?}"),
        }
    }

    #[test]
    fn off_without_port() {
        assert_eq!(settings(&[]).unwrap(), None);
    }

    #[test]
    fn defaults() {
        let s = settings(&["--prometheus-port=0"]).unwrap().unwrap();
        assert_eq!(s.addr(), "127.0.0.1:0".parse().unwrap());
        assert!(s.run_labels().is_empty());
        assert_eq!(s.buckets_us(), DEFAULT_BUCKETS_US);
    }

    #[test]
    fn every_flag() {
        let s = settings(&[
            "--prometheus-port",
            "9100",
            "--prometheus-bind-addr=[::1]",
            "--prometheus-run-label=env=ci",
            "--prometheus-run-label",
            "note=a=b \"q\"",
            "--prometheus-latency-buckets= 0.0001, 0.0025,1,2.5",
        ])
        .unwrap()
        .unwrap();
        assert_eq!(s.addr(), "[::1]:9100".parse().unwrap());
        let labels: Vec<_> = s
            .run_labels()
            .iter()
            .map(|l| (l.name.as_str(), l.value.as_str()))
            .collect();
        assert_eq!(labels, [("env", "ci"), ("note", "a=b \"q\"")]);
        assert_eq!(s.buckets_us(), [100, 2_500, 1_000_000, 2_500_000]);
        let v4 = settings(&["--prometheus-port=1", "--prometheus-bind-addr=0.0.0.0"]);
        assert_eq!(v4.unwrap().unwrap().addr(), "0.0.0.0:1".parse().unwrap());
    }

    #[test]
    fn bad_values_are_one_line_usage_errors() {
        let cases: &[(&[&str], &str)] = &[
            (&["--prometheus-port=x"], "range [0-65535]"),
            (&["--prometheus-port=65536"], "range [0-65535]"),
            (&["--prometheus-port=-1"], "range [0-65535]"),
            (&["--prometheus-bind-addr=::1"], "needs --prometheus-port"),
            (&["--prometheus-run-label=a=b"], "needs --prometheus-port"),
            (
                &["--prometheus-latency-buckets=1"],
                "needs --prometheus-port",
            ),
            (
                &["--prometheus-port=0", "--prometheus-bind-addr=localhost"],
                "numeric IPv4 or IPv6",
            ),
            (
                &["--prometheus-port=0", "--prometheus-run-label=ab"],
                "KEY=VALUE",
            ),
            (
                &["--prometheus-port=0", "--prometheus-run-label=a="],
                "empty value",
            ),
            (
                &["--prometheus-port=0", "--prometheus-run-label=1a=b"],
                "not a label name",
            ),
            (
                &["--prometheus-port=0", "--prometheus-run-label=a-b=c"],
                "not a label name",
            ),
            (
                &["--prometheus-port=0", "--prometheus-run-label==c"],
                "not a label name",
            ),
            (
                &["--prometheus-port=0", "--prometheus-run-label=__a=c"],
                "reserved",
            ),
            (
                &["--prometheus-port=0", "--prometheus-run-label=le=c"],
                "sets itself",
            ),
            (
                &["--prometheus-port=0", "--prometheus-run-label=command=c"],
                "sets itself",
            ),
            (
                &[
                    "--prometheus-port=0",
                    "--prometheus-run-label=a=1",
                    "--prometheus-run-label=a=2",
                ],
                "given twice",
            ),
            (
                &["--prometheus-port=0", "--prometheus-latency-buckets="],
                "not a positive",
            ),
            (
                &["--prometheus-port=0", "--prometheus-latency-buckets=1,,2"],
                "not a positive",
            ),
            (
                &["--prometheus-port=0", "--prometheus-latency-buckets=0"],
                "not a positive",
            ),
            (
                &["--prometheus-port=0", "--prometheus-latency-buckets=-1"],
                "not a positive",
            ),
            (
                &["--prometheus-port=0", "--prometheus-latency-buckets=1ms"],
                "not a positive",
            ),
            (
                &["--prometheus-port=0", "--prometheus-latency-buckets=nan"],
                "not a positive",
            ),
            (
                &["--prometheus-port=0", "--prometheus-latency-buckets=1,+Inf"],
                "implicit",
            ),
            (
                &["--prometheus-port=0", "--prometheus-latency-buckets=2,1"],
                "ascending",
            ),
            (
                &["--prometheus-port=0", "--prometheus-latency-buckets=1,1"],
                "ascending",
            ),
            (
                &[
                    "--prometheus-port=0",
                    "--prometheus-latency-buckets=0.0000011,0.0000012",
                ],
                "ascending",
            ),
            (
                &[
                    "--prometheus-port=0",
                    "--prometheus-latency-buckets=0.0000001",
                ],
                "between",
            ),
            (
                &["--prometheus-port=0", "--prometheus-latency-buckets=3601"],
                "between",
            ),
            (
                &["--prometheus-port=0", "--prometheus-latency-buckets=1e300"],
                "between",
            ),
        ];
        for (args, needle) in cases {
            let msg = refused(args);
            assert!(msg.contains(needle), "{args:?}: {msg}");
        }
        let mut many = vec!["--prometheus-port=0".to_string()];
        many.extend((0..=MAX_RUN_LABELS).map(|i| format!("--prometheus-run-label=l{i}=v")));
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        assert!(refused(&many).contains("at most"));
        let list: Vec<String> = (1..=MAX_BUCKETS + 1).map(|i| i.to_string()).collect();
        let flag = format!("--prometheus-latency-buckets={}", list.join(","));
        assert!(refused(&["--prometheus-port=0", &flag]).contains("1 to 64"));
    }
}
