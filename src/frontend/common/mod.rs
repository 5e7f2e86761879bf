//! What several front ends share: the connection flags (one clap [`ConnectionArgs`] struct,
//! in memtier's spellings, that a front end flattens into its own) and their conversion
//! into the plan's server and TLS parts; the `--print-percentiles` list ([`percentiles`]);
//! the live Prometheus endpoint's flags ([`prometheus`]); `--shard` and `--start-at`
//! ([`distributed`]); `--busy-poll` ([`busy_poll`]); a clap error as one usage line
//! ([`usage`]); the open-file check ([`open_files`]) for the connections a front end asks
//! for.
//!
//! The conversion has two phases, so a front end can check its own flags in between:
//! [`ConnectionArgs::target`] parses the flags and the URI (no I/O), and
//! [`Target::connect`] resolves the host and reads the TLS files.

pub mod busy_poll;
pub mod distributed;
pub mod open_files;
pub mod percentiles;
pub mod pool;
pub mod prometheus;
pub mod tls;
pub mod tls_ciphers;
pub mod uri;
pub mod usage;
pub mod visibility;

use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::sync::Arc;

use clap::Args;

use crate::error::{Error, Result};
use crate::plan::{AddressChoice, Endpoint, TlsSettings};
use crate::protocol::Credentials;
use tls::TlsFlags;
use uri::UriParts;

/// The help heading the connection flags appear under.
pub const HEADING: &str = "Connection and General Options";

/// The host when none is given.
pub const DEFAULT_HOST: &str = "localhost";
/// The environment variable `-a/--authenticate` is read from when the flag is not given
/// (as redis-cli reads `REDISCLI_AUTH`).
pub const AUTH_ENV: &str = "KVBENCH_AUTH";

/// The port when none is given (Redis's).
pub const DEFAULT_PORT: u16 = 6379;

/// The connection flags: server address, Unix socket, address family, credentials, URI
/// and TLS, exactly as memtier spells them.
#[derive(Args, Clone, Debug, Default)]
pub struct ConnectionArgs {
    /// Server address (default: localhost). Given once per member with --distribution,
    /// it makes a pool (each HOST[:PORT[:WEIGHT]])
    #[arg(short = 'h', long = "host", visible_short_alias = 's', visible_alias = "server",
          value_name = "ADDR", allow_hyphen_values = true, action = clap::ArgAction::Append,
          help_heading = HEADING)]
    pub host: Vec<String>,

    /// Server port (default: 6379)
    #[arg(short = 'p', long, value_name = "PORT", allow_hyphen_values = true,
          help_heading = HEADING)]
    pub port: Option<String>,

    /// UNIX Domain socket name (default: none)
    #[arg(short = 'S', long, value_name = "SOCKET", allow_hyphen_values = true,
          help_heading = HEADING)]
    pub unix_socket: Option<String>,

    /// Force IPv4 address resolution.
    #[arg(short = '4', long, overrides_with = "ipv6", help_heading = HEADING)]
    pub ipv4: bool,

    /// Force IPv6 address resolution.
    #[arg(short = '6', long, overrides_with = "ipv4", help_heading = HEADING)]
    pub ipv6: bool,

    /// Authenticate using specified credentials.
    /// A simple password is used for Redis <= 5.x.
    /// <USER>:<PASSWORD> can be specified for Redis
    /// 6.x or newer with ACL user support, and is
    /// needed for memcached (memcache_text: memcached
    /// -Y; memcache_binary: SASL PLAIN).
    /// (kvbench) Read from KVBENCH_AUTH when not given.
    // The environment variable keeps a secret out of argv (which `ps` shows): the
    // Kubernetes Job passes the password from a Secret this way.
    #[arg(short = 'a', long, value_name = "CREDENTIALS", allow_hyphen_values = true,
          env = AUTH_ENV, hide_env_values = true, help_heading = HEADING,
          verbatim_doc_comment)]
    pub authenticate: Option<String>,

    /// Server URI on format
    /// redis://user:password@host:port/dbnum
    /// User, password and dbnum are optional. For
    /// authentication without a username, use username
    /// 'default'. For TLS, use the scheme 'rediss'.
    #[arg(short = 'u', long, value_name = "URI", allow_hyphen_values = true,
          help_heading = HEADING, verbatim_doc_comment)]
    pub uri: Option<String>,

    /// Enable SSL/TLS transport security (rustls:
    /// TLSv1.2 and TLSv1.3). The server's certificate
    /// chain is checked against --cacert (default: the
    /// system CA bundle), not its name, as memtier does.
    #[arg(long, help_heading = HEADING, verbatim_doc_comment)]
    pub tls: bool,

    /// Use specified client certificate for TLS
    /// (PEM, X.509 v3 only, chain allowed; needs --key)
    #[arg(long, value_name = "FILE", allow_hyphen_values = true, help_heading = HEADING,
          verbatim_doc_comment)]
    pub cert: Option<String>,

    /// Use specified private key for TLS
    /// (PEM: PKCS#8, RSA or EC; not encrypted)
    #[arg(long, value_name = "FILE", allow_hyphen_values = true, help_heading = HEADING,
          verbatim_doc_comment)]
    pub key: Option<String>,

    /// Use specified CA certs bundle for TLS (PEM;
    /// default: SSL_CERT_FILE or the system bundle,
    /// /etc/ssl/certs/ca-certificates.crt)
    #[arg(long, value_name = "FILE", allow_hyphen_values = true, help_heading = HEADING,
          verbatim_doc_comment)]
    pub cacert: Option<String>,

    /// Skip verification of server certificate
    /// (issuer and dates)
    #[arg(long, help_heading = HEADING, verbatim_doc_comment)]
    pub tls_skip_verify: bool,

    /// Specify the tls protocol version to use, comma
    /// delimited. Use a combination of 'TLSv1.2' and
    /// 'TLSv1.3' (default: both). 'TLSv1' and 'TLSv1.1'
    /// are refused: rustls does not implement them.
    #[arg(long, value_name = "LIST", allow_hyphen_values = true, help_heading = HEADING,
          verbatim_doc_comment)]
    pub tls_protocols: Option<String>,

    /// Add an SNI header (default: the host); the
    /// certificate's names are not checked
    #[arg(long, value_name = "STRING", allow_hyphen_values = true, help_heading = HEADING,
          verbatim_doc_comment)]
    pub sni: Option<String>,
}

/// Which address families `-4` / `-6` allow when resolving the host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    Any,
    V4,
    V6,
}

impl Family {
    /// How a host's address is picked: `-4` / `-6` keep their family, and without either
    /// the front end's tool decides (`unspecified`).
    pub fn choice(self, unspecified: AddressChoice) -> AddressChoice {
        match self {
            Family::Any => unspecified,
            Family::V4 => AddressChoice::Ipv4Only,
            Family::V6 => AddressChoice::Ipv6Only,
        }
    }

    /// The name memtier prints in its "address family" option.
    pub fn memtier_name(self) -> &'static str {
        match self {
            Family::Any => "Unspecified",
            Family::V4 => "AF_INET",
            Family::V6 => "AF_INET6",
        }
    }
}

/// The connection flags parsed, the URI applied over them; nothing resolved or read yet.
#[derive(Clone, Debug)]
pub struct Target {
    pub family: Family,
    /// How the host's address is picked without `-4` / `-6`: memtier's way (the resolver's
    /// first) unless the front end says otherwise ([`Target::preferring`]).
    unspecified: AddressChoice,
    /// The URI's credentials, else `-a`'s.
    pub credentials: Option<Credentials>,
    /// The database the URI names, if it names one.
    pub uri_db: Option<u32>,
    uri: UriParts,
    pub(crate) flag_port: Option<u16>,
}

/// Where to connect, resolved, with TLS built: the plan's server part.
#[derive(Clone, Debug)]
pub struct Connect {
    pub endpoint: Endpoint,
    /// The host as given (the socket path for a Unix socket), for messages.
    pub host: String,
    /// The port as given (0 for a Unix socket).
    pub port: u16,
    pub tls: Option<Arc<TlsSettings>>,
}

impl ConnectionArgs {
    /// The address family `-4` / `-6` ask for.
    pub fn family(&self) -> Family {
        if self.ipv6 {
            Family::V6
        } else if self.ipv4 {
            Family::V4
        } else {
            Family::Any
        }
    }

    /// Phase 1: the port, the credentials and the URI, checked (a URI wins over `-h`, `-p`
    /// and `-a`, with a warning on stderr when both are given, as memtier does).
    pub fn target(&self) -> Result<Target> {
        let flag_port = self
            .port
            .as_deref()
            .map(|p| {
                parse_port(p).ok_or_else(|| usage("port must be a number in the range [1-65535]."))
            })
            .transpose()?;
        let flag_credentials = self
            .authenticate
            .as_deref()
            .map(parse_credentials)
            .transpose()?;
        let uri = self
            .uri
            .as_deref()
            .map(uri::parse_uri)
            .transpose()?
            .unwrap_or_default();
        if self.uri.is_some() {
            self.warn_uri_precedence(&uri);
        }
        Ok(Target {
            family: self.family(),
            unspecified: AddressChoice::AsResolved,
            credentials: uri.credentials.clone().or(flag_credentials),
            uri_db: uri.db,
            uri,
            flag_port,
        })
    }

    /// memtier's rule: the URI wins over the separate flags, and says so.
    fn warn_uri_precedence(&self, uri: &UriParts) {
        let clashes = [
            (
                !self.host.is_empty() && uri.host.is_some(),
                "--host/--server",
            ),
            (self.port.is_some() && uri.port.is_some(), "--port"),
            (
                self.authenticate.is_some() && uri.credentials.is_some(),
                "--authenticate",
            ),
        ];
        for (clash, flag) in clashes {
            if clash {
                eprintln_safe!("warning: both URI and {flag} specified, URI takes precedence.");
            }
        }
    }
}

impl Target {
    /// The same target, its host's address picked as `choice` says when neither `-4` nor
    /// `-6` is given (`kvbench latency`: IPv4 first, as redis-cli's hiredis does).
    pub fn preferring(self, choice: AddressChoice) -> Target {
        Target {
            unspecified: choice,
            ..self
        }
    }

    /// How this target's host names become addresses.
    pub fn address_choice(&self) -> AddressChoice {
        self.family.choice(self.unspecified)
    }

    /// Phase 2: the Unix socket, or the host resolved once (so a typo in it is a usage
    /// error, not a connection error in every client); then TLS, its files read and
    /// checked now, before any connection.
    pub fn connect(&self, args: &ConnectionArgs) -> Result<Connect> {
        let (endpoint, host, port) = match args.unix_socket.as_deref() {
            Some(path) => {
                if !args.host.is_empty() || args.uri.is_some() {
                    return Err(usage(
                        "--unix-socket cannot be combined with --host/--server or --uri: choose one server.",
                    ));
                }
                if path.is_empty() {
                    return Err(usage("unix-socket needs a socket path."));
                }
                // No host or port for a Unix socket: `host` carries the path for messages.
                (Endpoint::Unix(PathBuf::from(path)), path.to_string(), 0)
            }
            None => {
                let host = self
                    .uri
                    .host
                    .clone()
                    .or_else(|| args.host.last().map(|h| unbracket(h).to_string()))
                    .unwrap_or_else(|| DEFAULT_HOST.to_string());
                let port = self.uri.port.or(self.flag_port).unwrap_or(DEFAULT_PORT);
                let addr = resolve(&host, port, self.address_choice())?;
                (
                    Endpoint::Tcp {
                        host: host.clone(),
                        addr,
                    },
                    host,
                    port,
                )
            }
        };
        let tls = tls_settings(args, &endpoint, self.uri.tls)?;
        Ok(Connect {
            endpoint,
            host,
            port,
            tls,
        })
    }
}

fn usage(msg: impl Into<String>) -> Error {
    Error::usage(msg)
}

/// A port number from 1 to 65535.
pub fn parse_port(raw: &str) -> Option<u16> {
    raw.parse::<u16>().ok().filter(|&p| p > 0)
}

/// `-a user:password` or a bare password. Only the first `:` splits, so a password may
/// hold colons; an empty user (`:password`) means the default user.
pub fn parse_credentials(raw: &str) -> Result<Credentials> {
    if raw.is_empty() {
        // KVBENCH_AUTH set to nothing reaches here as an empty -a: name the variable.
        if std::env::var_os(AUTH_ENV).is_some_and(|v| v.is_empty()) {
            return Err(usage(format!(
                "authenticate needs a password or user:password: {AUTH_ENV} is set but empty \
                 (unset it, or give the password)."
            )));
        }
        return Err(usage("authenticate needs a password or user:password."));
    }
    Ok(match raw.split_once(':') {
        Some((user, password)) => Credentials {
            user: (!user.is_empty()).then(|| user.to_string()),
            password: password.to_string(),
        },
        None => Credentials {
            user: None,
            password: raw.to_string(),
        },
    })
}

/// `-s [::1]` as `::1`: the bracketed form `--servers` and `-u redis://[::1]:P` take is
/// accepted here too (brackets are no part of the address the resolver is given).
fn unbracket(host: &str) -> &str {
    host.strip_prefix('[')
        .and_then(|inner| inner.strip_suffix(']'))
        .unwrap_or(host)
}

/// Resolves `host` once, keeping the address `choice` picks.
pub fn resolve(host: &str, port: u16, choice: AddressChoice) -> Result<SocketAddr> {
    let cannot = |why: &str| usage(format!("cannot resolve host '{host}'{why}"));
    let resolved: Vec<SocketAddr> = (host, port)
        .to_socket_addrs()
        .map_err(|_| cannot(""))?
        .collect();
    choice.pick(&resolved).ok_or_else(|| {
        // Addresses there were, none of the family asked for: say which flag ruled them out.
        match (resolved.is_empty(), choice) {
            (false, AddressChoice::Ipv4Only) => cannot(" to an IPv4 address (-4)"),
            (false, AddressChoice::Ipv6Only) => cannot(" to an IPv6 address (-6)"),
            _ => cannot(""),
        }
    })
}

/// `--tls` (or `rediss://`) with its options, validated and built into the one rustls
/// configuration all connections share. TLS options without TLS are refused, not ignored.
fn tls_settings(
    args: &ConnectionArgs,
    endpoint: &Endpoint,
    from_uri: bool,
) -> Result<Option<Arc<TlsSettings>>> {
    if !args.tls && !from_uri {
        let given = [
            (args.cert.is_some(), "--cert"),
            (args.key.is_some(), "--key"),
            (args.cacert.is_some(), "--cacert"),
            (args.tls_skip_verify, "--tls-skip-verify"),
            (args.sni.is_some(), "--sni"),
            (args.tls_protocols.is_some(), "--tls-protocols"),
        ];
        if let Some((_, flag)) = given.iter().find(|(given, _)| *given) {
            return Err(usage(format!(
                "{flag} applies to TLS connections: add --tls (or use a rediss:// URI)."
            )));
        }
        return Ok(None);
    }
    let Endpoint::Tcp { host, .. } = endpoint else {
        return Err(usage(
            "--tls works over TCP only: it cannot be combined with --unix-socket.",
        ));
    };
    let flags = TlsFlags {
        host,
        cert: args.cert.as_deref(),
        key: args.key.as_deref(),
        cacert: args.cacert.as_deref(),
        skip_verify: args.tls_skip_verify,
        sni: args.sni.as_deref(),
        protocols: args.tls_protocols.as_deref(),
        cacertdir: None,
        cipher_suites: None,
    };
    tls::build(&flags)
        .map(|settings| Some(Arc::new(settings)))
        .map_err(usage)
}
