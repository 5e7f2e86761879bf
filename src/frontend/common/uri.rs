//! `redis://[user[:password]@]host[:port][/db]` URIs (`rediss://` for TLS; the user and
//! password percent-decoded, as redis-cli and the Go clients do): what they set,
//! and how they are shown with the password masked.

use crate::error::{Error, Result};
use crate::frontend::common::{parse_credentials, parse_port};
use crate::protocol::Credentials;

fn usage(msg: impl Into<String>) -> Error {
    Error::usage(msg)
}

/// What a `redis://` URI sets; `None` parts leave the flags' values in place.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct UriParts {
    pub host: Option<String>,
    pub port: Option<u16>,
    pub credentials: Option<Credentials>,
    pub db: Option<u32>,
    /// The `rediss://` scheme: TLS, as `--tls`.
    pub tls: bool,
}

/// `redis://[user[:password]@]host[:port][/db]`, or `rediss://` for TLS. `[v6addr]`
/// brackets are accepted for IPv6 literals.
pub fn parse_uri(raw: &str) -> Result<UriParts> {
    if raw.is_empty() {
        return Err(usage("empty URI provided."));
    }
    let Some((scheme, rest)) = raw.split_once("://") else {
        return Err(usage("invalid URI format, missing scheme."));
    };
    if scheme != "redis" && scheme != "rediss" {
        return Err(usage(format!(
            "unsupported URI scheme '{scheme}'. Use 'redis' or 'rediss'."
        )));
    }
    let mut parts = UriParts {
        tls: scheme == "rediss",
        ..UriParts::default()
    };
    // The last '@' ends the user info: a password may contain '@', a host cannot.
    let host_part = match rest.rfind('@') {
        Some(at) => {
            let mut credentials = parse_credentials(&rest[..at]).map_err(|_| {
                usage("invalid URI: nothing between '://' and '@' (expected user:password@ or password@).")
            })?;
            // Split at the first ':' before decoding: an escaped ':' is the password's.
            credentials.password = percent_decode(&credentials.password).map_err(usage)?;
            if let Some(user) = credentials.user.as_mut() {
                *user = percent_decode(user).map_err(usage)?;
            }
            parts.credentials = Some(credentials);
            &rest[at + 1..]
        }
        None => rest,
    };
    let (host_port, db) = match host_part.split_once('/') {
        Some((hp, db)) => (hp, db),
        None => (host_part, ""),
    };
    if !db.is_empty() {
        parts.db = Some(
            db.parse::<u32>()
                .map_err(|_| usage(format!("invalid database number '{db}'.")))?,
        );
    }
    let (host, port) = if let Some(bracketed) = host_port.strip_prefix('[') {
        let Some((h, after)) = bracketed.split_once(']') else {
            return Err(usage(format!(
                "invalid URI host '{host_port}': missing ']'."
            )));
        };
        match after.strip_prefix(':') {
            Some(p) => (h, Some(p)),
            None if after.is_empty() => (h, None),
            None => return Err(usage(format!("invalid URI host '{host_port}'."))),
        }
    } else {
        match host_port.split_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (host_port, None),
        }
    };
    if let Some(p) = port {
        parts.port =
            Some(parse_port(p).ok_or_else(|| usage(format!("invalid port number '{p}'.")))?);
    }
    if !host.is_empty() {
        parts.host = Some(host.to_string());
    }
    Ok(parts)
}

/// The URI as typed with its password replaced by `***`.
pub fn masked_uri(raw: &str) -> String {
    let Some((scheme, rest)) = raw.split_once("://") else {
        return raw.to_string();
    };
    let Some(at) = rest.rfind('@') else {
        return raw.to_string();
    };
    let user_info = match rest[..at].split_once(':') {
        Some((user, _)) => format!("{user}:***"),
        None => "***".to_string(),
    };
    format!("{scheme}://{user_info}@{}", &rest[at + 1..])
}

/// Decodes a URI's user info's `%XX` escapes (a password holding `@`, `:` or `/` is
/// written so); the result must be UTF-8.
pub fn percent_decode(s: &str) -> std::result::Result<String, String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| format!("invalid percent escape in URI user info '{s}'"))?;
            out.push(hex);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| format!("URI user info '{s}' is not UTF-8 once decoded"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_info_is_percent_decoded_after_the_split() {
        // redis-cli and the Go clients decode it: a password with ':' or '@' is written so.
        let parts = parse_uri("redis://default:pa%3Ass%40x@127.0.0.1:7001").unwrap();
        let c = parts.credentials.unwrap();
        assert_eq!(
            (c.user.as_deref(), c.password.as_str()),
            (Some("default"), "pa:ss@x")
        );
        assert!(parse_uri("redis://pw%zz@127.0.0.1").is_err());
    }
}
