//! The pool flags: `--servers=H1:P1,H2:P2,...` or `--server` given more than once (each
//! `HOST[:PORT[:WEIGHT]]`, an IPv6 host in brackets) and `--distribution=ketama|modula`,
//! validated and resolved into the plan's [`Pool`].

use clap::Args;

use crate::error::{Error, Result};
use crate::frontend::common::{ConnectionArgs, DEFAULT_PORT, Target, resolve};
use crate::plan::{Distribution, Endpoint, Member, Pool};

/// Most servers in a pool: a client holds one connection to each.
pub const MAX_MEMBERS: usize = 64;

/// The help heading the pool flags appear under.
const HEADING: &str = "Pools of servers";

/// `--servers` and `--distribution`.
#[derive(Args, Clone, Debug, Default)]
pub struct PoolArgs {
    /// A pool of servers, comma-separated HOST[:PORT[:WEIGHT]]; each request goes to its
    /// key's server (see --distribution). The same as --server given once per member
    /// with --distribution. One list per run (the flag may not repeat)
    #[arg(long, value_name = "LIST", allow_hyphen_values = true, help_heading = HEADING)]
    pub servers: Vec<String>,

    /// How keys are spread over a pool: ketama (libmemcached's consistent hashing, MD5,
    /// weights honoured; the default) or modula (one-at-a-time hash mod servers)
    #[arg(long, value_name = "ketama|modula", help_heading = HEADING)]
    pub distribution: Option<String>,
}

fn usage(msg: impl Into<String>) -> Error {
    Error::usage(msg)
}

/// One `HOST[:PORT[:WEIGHT]]`: host, port (else `default_port`), weight (else 1).
fn parse_member(raw: &str, default_port: u16) -> Result<(String, u16, Option<u32>)> {
    let bad = |why: &str| usage(format!("pool member '{raw}': {why}"));
    let (host, rest) = match raw.strip_prefix('[') {
        Some(inner) => {
            let (host, rest) = inner
                .split_once(']')
                .ok_or_else(|| bad("an IPv6 address needs its closing ']'"))?;
            match rest {
                "" => (host, None),
                _ => match rest.strip_prefix(':') {
                    Some(rest) => (host, Some(rest)),
                    None => return Err(bad("expected ':' after ']'")),
                },
            }
        }
        None => {
            // `::1:7401` split at its first ':' has no host: say what would work.
            let colons = raw.matches(':').count();
            if colons > 2 || raw.parse::<std::net::Ipv6Addr>().is_ok() || raw.starts_with("::") {
                return Err(bad(
                    "write an IPv6 address in brackets: [::1], [::1]:PORT or [::1]:PORT:WEIGHT",
                ));
            }
            match raw.split_once(':') {
                Some((host, rest)) => (host, Some(rest)),
                None => (raw, None),
            }
        }
    };
    if host.is_empty() {
        return Err(bad("no host"));
    }
    let (port, weight) = match rest {
        None => (default_port, None),
        Some(rest) => {
            let (port, weight) = match rest.split_once(':') {
                Some((port, weight)) => (port, Some(weight)),
                None => (rest, None),
            };
            if port.contains(':') || weight.is_some_and(|w| w.contains(':')) {
                return Err(bad("too many ':' (put an IPv6 address in brackets)"));
            }
            let port = super::parse_port(port)
                .ok_or_else(|| bad("the port must be a number in the range [1-65535]"))?;
            let weight = weight
                .map(|w| {
                    w.parse::<u32>()
                        .ok()
                        .filter(|&w| (1..=1_000_000).contains(&w))
                        .ok_or_else(|| bad("the weight must be a whole number from 1 to 1000000"))
                })
                .transpose()?;
            (port, weight)
        }
    };
    Ok((host.to_string(), port, weight))
}

impl PoolArgs {
    /// The pool the flags ask for, members resolved now (a typo is a usage error, not a
    /// connection error in every client); `None` for one server.
    pub fn pool(&self, conn: &ConnectionArgs, target: &Target) -> Result<Option<Pool>> {
        if self.servers.len() > 1 {
            // A second list would silently replace the first.
            return Err(usage(format!(
                "--servers takes one list per run (given {} times): put every member in one, comma-separated.",
                self.servers.len()
            )));
        }
        let listed: Vec<&str> = match self.servers.first() {
            Some(list) => {
                if !conn.host.is_empty() {
                    return Err(usage(
                        "--servers cannot be combined with --server/--host: list every member in one of them.",
                    ));
                }
                list.split(',').collect()
            }
            // memtier's rule (the last --server wins) unless a distribution asks for a pool.
            None if conn.host.len() > 1 && self.distribution.is_some() => {
                conn.host.iter().map(String::as_str).collect()
            }
            None => {
                if self.distribution.is_some() {
                    return Err(usage(
                        "--distribution applies to a pool: give --servers=H1:P1,H2:P2 or --server once per member.",
                    ));
                }
                return Ok(None);
            }
        };
        let distribution = match self.distribution.as_deref() {
            None | Some("ketama") => Distribution::Ketama,
            Some("modula") => Distribution::Modula,
            Some(other) => {
                return Err(usage(format!(
                    "--distribution must be ketama or modula, not '{other}'."
                )));
            }
        };
        if conn.unix_socket.is_some() || conn.uri.is_some() {
            return Err(usage(
                "a pool of servers cannot be combined with --unix-socket or --uri: list TCP members.",
            ));
        }
        if listed.len() > MAX_MEMBERS {
            return Err(usage(format!(
                "a pool may have at most {MAX_MEMBERS} servers, not {}.",
                listed.len()
            )));
        }
        let default_port = target.flag_port.unwrap_or(DEFAULT_PORT);
        let mut members = Vec::with_capacity(listed.len());
        let mut weighted = false;
        for raw in listed {
            let (host, port, weight) = parse_member(raw.trim(), default_port)?;
            weighted |= weight.is_some();
            let addr = resolve(&host, port, target.address_choice())?;
            let endpoint = Endpoint::Tcp { host, addr };
            if members
                .iter()
                .any(|m: &Member| m.endpoint.name() == endpoint.name())
            {
                return Err(usage(format!(
                    "pool member {} is listed twice.",
                    endpoint.name()
                )));
            }
            members.push(Member {
                endpoint,
                weight: weight.unwrap_or(1),
            });
        }
        if weighted && distribution == Distribution::Modula {
            return Err(usage(
                "pool weights need --distribution=ketama (modula places keys by count only).",
            ));
        }
        Ok(Some(Pool::new(members, distribution)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_parse_with_and_without_port_and_weight() {
        assert_eq!(parse_member("a", 7).unwrap(), ("a".to_string(), 7, None));
        assert_eq!(
            parse_member("a:11212", 7).unwrap(),
            ("a".to_string(), 11212, None)
        );
        assert_eq!(
            parse_member("a:11212:3", 7).unwrap(),
            ("a".to_string(), 11212, Some(3))
        );
        assert_eq!(
            parse_member("[::1]:6380:2", 7).unwrap(),
            ("::1".to_string(), 6380, Some(2))
        );
        assert_eq!(
            parse_member("[::1]", 7).unwrap(),
            ("::1".to_string(), 7, None)
        );
    }

    #[test]
    fn bad_members_say_why() {
        for (raw, why) in [
            ("", "no host"),
            (":80", "no host"),
            ("a:0", "port"),
            ("a:x", "port"),
            ("a:80:0", "weight"),
            ("a:80:w", "weight"),
            ("::1:80", "write an IPv6 address in brackets"),
            ("::1", "write an IPv6 address in brackets"),
            ("fe80::1", "write an IPv6 address in brackets"),
            ("fe80::1:80:2", "write an IPv6 address in brackets"),
            ("fe80::1:80", "brackets"),
            ("[::1", "closing"),
        ] {
            let err = parse_member(raw, 7).unwrap_err().to_string();
            assert!(err.contains(why), "{raw}: {err}");
        }
    }
}
