//! Who to authenticate as, and the one encoder of each protocol's authentication request.
//!
//! ```text
//! Redis            AUTH [user] password               (RESP array)
//! memcache_binary  SASL AUTH, mechanism PLAIN, "\0user\0password"
//! memcache_text    set kvbench-auth 0 -1 <n>\r\nuser password\r\n  (memcached -Y)
//! ```

use crate::protocol::{Protocol, memcache_binary, resp_encode};

/// Credentials: a bare password or `user:password`.
#[derive(Clone, PartialEq, Eq)]
pub struct Credentials {
    /// The user (Redis 6 ACL user, SASL user); `None` for a bare password.
    pub user: Option<String>,
    pub password: String,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Keep passwords out of debug output and panic messages.
        f.debug_struct("Credentials")
            .field("user", &self.user)
            .field("password", &"<hidden>")
            .finish()
    }
}

/// Appends the request that authenticates `credentials` in `protocol` to `out`: Redis
/// `AUTH [user] password`, memcache binary SASL PLAIN, or for memcache text the `set`
/// carrying "user password" that memcached's `-Y` authentication expects.
pub fn encode_auth(out: &mut Vec<u8>, protocol: Protocol, credentials: &Credentials) {
    let password = credentials.password.as_bytes();
    let user = credentials.user.as_deref().unwrap_or("").as_bytes();
    match protocol {
        Protocol::Redis | Protocol::Resp2 | Protocol::Resp3 => match &credentials.user {
            Some(user) => resp_encode::encode_command(out, &[b"AUTH", user.as_bytes(), password]),
            None => resp_encode::encode_command(out, &[b"AUTH", password]),
        },
        Protocol::MemcacheBinary => memcache_binary::encode_sasl_auth_plain(out, user, password, 0),
        Protocol::MemcacheText => {
            // memcached -Y reads the credentials from the data and ignores the rest; a
            // server without -Y stores an ordinary item, which the negative expiry makes
            // expired at once, so the credentials are never readable from the cache.
            let len = user.len() + 1 + password.len();
            out.extend_from_slice(b"set kvbench-auth 0 -1 ");
            out.extend_from_slice(itoa::Buffer::new().format(len).as_bytes());
            out.extend_from_slice(b"\r\n");
            out.extend_from_slice(user);
            out.push(b' ');
            out.extend_from_slice(password);
            out.extend_from_slice(b"\r\n");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn creds(user: Option<&str>, password: &str) -> Credentials {
        Credentials {
            user: user.map(str::to_string),
            password: password.to_string(),
        }
    }

    #[test]
    fn debug_output_hides_the_password() {
        let shown = format!("{:?}", creds(Some("bob"), "s3cret"));
        assert!(
            shown.contains("bob") && !shown.contains("s3cret"),
            "{shown}"
        );
    }

    #[test]
    fn redis_auth_with_and_without_a_user() {
        let mut out = Vec::new();
        encode_auth(&mut out, Protocol::Redis, &creds(None, "pw"));
        assert_eq!(out, b"*2\r\n$4\r\nAUTH\r\n$2\r\npw\r\n");
        out.clear();
        encode_auth(&mut out, Protocol::Resp3, &creds(Some("u"), "pw"));
        assert_eq!(out, b"*3\r\n$4\r\nAUTH\r\n$1\r\nu\r\n$2\r\npw\r\n");
    }

    #[test]
    fn memcache_text_auth_is_a_set_of_user_and_password() {
        let mut out = Vec::new();
        encode_auth(&mut out, Protocol::MemcacheText, &creds(Some("u"), "pw"));
        assert_eq!(out, b"set kvbench-auth 0 -1 4\r\nu pw\r\n");
    }
}
