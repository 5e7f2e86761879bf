//! redis-benchmark's `-u` server URI: `redis://[[user:]password@]host[:port][/db]`, or
//! `rediss://` for TLS, with percent-encoded user and password.

use crate::frontend::common::uri::percent_decode;

/// What a `-u` URI sets; `None` leaves the flag's default (or an earlier flag) alone.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UriParts {
    /// The `rediss` scheme: TLS, as `--tls`.
    pub tls: bool,
    /// The ACL user (`user:password@`).
    pub user: Option<String>,
    /// The password (`password@` or `user:password@`).
    pub password: Option<String>,
    /// Host name or address (brackets of an IPv6 literal removed).
    pub host: Option<String>,
    /// Port.
    pub port: Option<u16>,
    /// Database number (`/2`).
    pub dbnum: Option<u32>,
}

/// `raw` after `scheme`, which matches whatever its case: redis-benchmark compares the
/// scheme case-insensitively, so `REDIS://host` works there and must here.
fn strip_scheme<'a>(raw: &'a str, scheme: &str) -> Option<&'a str> {
    let head = raw.get(..scheme.len())?;
    head.eq_ignore_ascii_case(scheme)
        .then(|| &raw[scheme.len()..])
}

/// Parse a `-u` URI. Errors are one line and name what is wrong.
pub fn parse_uri(raw: &str) -> Result<UriParts, String> {
    let (tls, rest) = if let Some(rest) = strip_scheme(raw, "redis://") {
        (false, rest)
    } else if let Some(rest) = strip_scheme(raw, "rediss://") {
        (true, rest)
    } else {
        // redis-benchmark's own words.
        return Err(format!(
            "Invalid URI scheme in '{raw}' (use redis:// or rediss://)"
        ));
    };
    let mut parts = UriParts {
        tls,
        ..UriParts::default()
    };
    // The last '@' ends the user info: a password may hold an '@', a host cannot.
    let host_part = match rest.rfind('@') {
        Some(at) => {
            let userinfo = &rest[..at];
            match userinfo.split_once(':') {
                Some((user, password)) => {
                    parts.user = Some(percent_decode(user)?);
                    parts.password = Some(percent_decode(password)?);
                }
                None => parts.password = Some(percent_decode(userinfo)?),
            }
            &rest[at + 1..]
        }
        None => rest,
    };
    let (host_port, db) = host_part.split_once('/').unwrap_or((host_part, ""));
    if !db.is_empty() {
        parts.dbnum = Some(
            db.parse::<u32>()
                .map_err(|_| format!("invalid database number '{db}' in URI '{raw}'"))?,
        );
    }
    let (host, port) = match host_port.strip_prefix('[') {
        Some(bracketed) => {
            let (h, after) = bracketed
                .split_once(']')
                .ok_or_else(|| format!("invalid host in URI '{raw}': missing ']'"))?;
            match after {
                "" => (h, None),
                _ => match after.strip_prefix(':') {
                    Some(p) => (h, Some(p)),
                    None => return Err(format!("invalid host in URI '{raw}'")),
                },
            }
        }
        None => match host_port.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (host_port, None),
        },
    };
    if let Some(p) = port {
        parts.port = Some(
            p.parse::<u16>()
                .ok()
                .filter(|&p| p > 0)
                .ok_or_else(|| format!("invalid port '{p}' in URI '{raw}'"))?,
        );
    }
    if !host.is_empty() {
        parts.host = Some(host.to_string());
    }
    Ok(parts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_uri() {
        let p = parse_uri("rediss://bench:s%40cret@cache.example:6380/2").unwrap();
        assert_eq!(
            p,
            UriParts {
                tls: true,
                user: Some("bench".into()),
                password: Some("s@cret".into()),
                host: Some("cache.example".into()),
                port: Some(6380),
                dbnum: Some(2),
            }
        );
    }

    #[test]
    fn partial_uris() {
        let p = parse_uri("redis://secret@127.0.0.1").unwrap();
        assert_eq!(
            (p.user, p.password.as_deref(), p.port),
            (None, Some("secret"), None)
        );
        let p = parse_uri("redis://[::1]:7000").unwrap();
        assert_eq!((p.host.as_deref(), p.port), (Some("::1"), Some(7000)));
        let p = parse_uri("redis://:6390/").unwrap();
        assert_eq!((p.host, p.port, p.dbnum), (None, Some(6390), None));
        assert_eq!(parse_uri("redis://").unwrap(), UriParts::default());
        // The scheme in any case, as redis-benchmark reads it.
        let p = parse_uri("REDIS://h:7000").unwrap();
        assert_eq!((p.tls, p.host.as_deref()), (false, Some("h")));
        assert!(parse_uri("RedisS://h").unwrap().tls);
        assert!(parse_uri("redi").is_err());
    }

    #[test]
    fn bad_uris() {
        for (raw, says) in [
            ("http://x", "Invalid URI scheme"),
            ("redis://h:0", "invalid port"),
            ("redis://h:x", "invalid port"),
            ("redis://h/x", "invalid database number"),
            ("redis://[::1", "missing ']'"),
            ("redis://a%zz@h", "percent escape"),
        ] {
            let err = parse_uri(raw).unwrap_err();
            assert!(err.contains(says), "{raw}: {err}");
        }
    }
}
