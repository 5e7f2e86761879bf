//! kvbench's connection additions to redis-zbench-go's flags, Go-style like the rest:
//! TLS (`-tls`, `-cacert`, `-cert`, `-key`, `-sni`, `-tls-skip-verify`), an ACL user
//! (`-user`, with `-a`) and a server URI (`-u redis://user:pass@host:port/db`, `rediss://`
//! for TLS), turned into the engine's credentials and rustls configuration.

use clap::parser::ValueSource;
use clap::{ArgMatches, Command};

use super::goflag::{string, switch};
use crate::error::Error;
use crate::frontend::common::tls::{self, TlsFlags};
use crate::frontend::common::uri::parse_uri;
use crate::plan::TlsSettings;
use crate::protocol::Credentials;

/// The connection flags beyond `-h`, `-p` and `-a`, validated.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ConnSpec {
    /// `-user` (or the URI's user): the ACL user `-a`'s password belongs to.
    pub user: Option<String>,
    /// The URI's database, selected after connecting.
    pub db: Option<u32>,
    /// TLS, when `-tls` or a `rediss://` URI asks for it.
    pub tls: Option<TlsSpec>,
}

/// The TLS flags as given (files are read when the run starts).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TlsSpec {
    pub cacert: Option<String>,
    pub cert: Option<String>,
    pub key: Option<String>,
    pub sni: Option<String>,
    pub skip_verify: bool,
}

/// Adds the connection flags to zbench's command.
pub fn add_args(cmd: Command) -> Command {
    cmd.arg(switch("tls", "kvbench: connect over TLS."))
        .arg(string(
            "cacert",
            "",
            "kvbench: CA certificate file (PEM) to verify the server with.",
        ))
        .arg(string(
            "cert",
            "",
            "kvbench: client certificate file (PEM) for TLS.",
        ))
        .arg(string(
            "key",
            "",
            "kvbench: client private key file (PEM) for TLS.",
        ))
        .arg(string(
            "sni",
            "",
            "kvbench: server name to send in TLS (SNI); the certificate chain is verified, not its names.",
        ))
        .arg(switch(
            "tls-skip-verify",
            "kvbench: do not verify the server's TLS certificate.",
        ))
        .arg(string(
            "user",
            "",
            "kvbench: ACL user to authenticate as (with -a).",
        ))
        .arg(string(
            "u",
            "",
            "kvbench: server URI redis://[user[:password]@]host[:port][/db] (rediss:// for TLS).",
        ))
}

/// What a URI set, applied over `-h`, `-p` and `-a`.
pub struct Applied {
    pub host: String,
    pub port: u16,
    pub password: Option<String>,
    pub conn: ConnSpec,
    /// A flag the URI overrode, in the other front ends' words.
    pub warnings: Vec<String>,
}

/// Validates the connection flags; a `-u` URI overrides `-h`, `-p`, `-a` and `-user`
/// (with a warning naming each flag it overrode, as the other front ends give).
pub fn validate(
    m: &ArgMatches,
    host: String,
    port: u16,
    password: Option<String>,
) -> Result<Applied, Error> {
    let text = |id: &str| m.get_one::<String>(id).cloned().filter(|s| !s.is_empty());
    let mut applied = Applied {
        host,
        port,
        password,
        conn: ConnSpec {
            user: text("user"),
            db: None,
            tls: None,
        },
        warnings: Vec::new(),
    };
    let mut use_tls = m.get_flag("tls");
    if let Some(uri) = text("u") {
        let parts = parse_uri(&uri)?;
        let given = |id: &str| m.value_source(id) == Some(ValueSource::CommandLine);
        let clashes = [
            (given("h") && parts.host.is_some(), "-h"),
            (given("p") && parts.port.is_some(), "-p"),
            (given("a") && parts.credentials.is_some(), "-a"),
            (given("user") && parts.credentials.is_some(), "-user"),
        ];
        for (clash, flag) in clashes {
            if clash {
                applied.warnings.push(format!(
                    "warning: both URI and {flag} specified, URI takes precedence."
                ));
            }
        }
        if let Some(host) = parts.host {
            applied.host = host;
        }
        if let Some(port) = parts.port {
            applied.port = port;
        }
        if let Some(credentials) = parts.credentials {
            applied.password = Some(credentials.password);
            applied.conn.user = credentials.user;
        }
        applied.conn.db = parts.db;
        use_tls |= parts.tls;
    }
    if applied.conn.user.is_some() && applied.password.is_none() {
        return Err(Error::usage(
            "-user needs -a (the password to authenticate with)",
        ));
    }
    let tls_spec = TlsSpec {
        cacert: text("cacert"),
        cert: text("cert"),
        key: text("key"),
        sni: text("sni"),
        skip_verify: m.get_flag("tls-skip-verify"),
    };
    if use_tls {
        applied.conn.tls = Some(tls_spec);
    } else if tls_spec != TlsSpec::default() {
        return Err(Error::usage(
            "-cacert, -cert, -key, -sni and -tls-skip-verify need -tls (or a rediss:// URI)",
        ));
    }
    Ok(applied)
}

/// The credentials `-a` (and `-user`) give.
pub fn credentials(password: Option<&str>, conn: &ConnSpec) -> Option<Credentials> {
    password.map(|password| Credentials {
        user: conn.user.clone(),
        password: password.to_string(),
    })
}

/// The rustls configuration `-tls` asks for, its files read now (a bad file is a usage
/// error before any connection).
pub fn tls_settings(conn: &ConnSpec, host: &str) -> Result<Option<TlsSettings>, Error> {
    let Some(spec) = &conn.tls else {
        return Ok(None);
    };
    let flags = TlsFlags {
        host,
        cert: spec.cert.as_deref(),
        key: spec.key.as_deref(),
        cacert: spec.cacert.as_deref(),
        skip_verify: spec.skip_verify,
        sni: spec.sni.as_deref(),
        protocols: None,
        cacertdir: None,
        cipher_suites: None,
    };
    tls::build(&flags)
        .map(Some)
        .map_err(|msg| Error::usage(go_names(&msg)))
}

/// The shared TLS builder names memtier's flags; say zbench's.
fn go_names(msg: &str) -> String {
    msg.replace("--tls-skip-verify", "-tls-skip-verify")
        .replace("--cacert", "-cacert")
        .replace("--cert", "-cert")
        .replace("--key", "-key")
        .replace("--sni", "-sni")
        .replace("--tls", "-tls")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frontend::zbench::goflag::{Translated, translate};

    /// The connection flags of `args` validated over `-h ignored -p 1` and `-a password`.
    fn run(args: &[&str], password: Option<&str>) -> Result<Applied, Error> {
        let cmd = add_args(Command::new("zbench").no_binary_name(true));
        let words: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        let Ok(Translated::Tokens(tokens)) = translate(&cmd, &words) else {
            panic!("{args:?}: not translated");
        };
        let m = cmd.try_get_matches_from(tokens).expect("valid flags");
        validate(&m, "ignored".to_string(), 1, password.map(str::to_string))
    }

    #[test]
    fn a_uri_sets_host_port_credentials_database_and_tls() {
        let applied = run(&["--u=rediss://bob:pw@127.0.0.1:7001/3"], None).expect("valid");
        assert_eq!((applied.host.as_str(), applied.port), ("127.0.0.1", 7001));
        assert_eq!(applied.password.as_deref(), Some("pw"));
        assert_eq!(applied.conn.user.as_deref(), Some("bob"));
        assert_eq!(applied.conn.db, Some(3));
        assert!(applied.conn.tls.is_some());
        let creds = credentials(applied.password.as_deref(), &applied.conn).expect("creds");
        assert_eq!(creds.user.as_deref(), Some("bob"));
    }

    #[test]
    fn go_spellings_of_the_tls_and_user_flags() {
        let applied = run(
            &["-tls", "--cacert", "ca.pem", "-sni=name", "-user", "u"],
            Some("p"),
        )
        .expect("valid");
        let tls = applied.conn.tls.expect("tls");
        assert_eq!(tls.cacert.as_deref(), Some("ca.pem"));
        assert_eq!(tls.sni.as_deref(), Some("name"));
        assert_eq!(applied.conn.user.as_deref(), Some("u"));
        assert_eq!((applied.host.as_str(), applied.port), ("ignored", 1));
    }

    #[test]
    fn refusals() {
        for (args, needle) in [
            (&["-user", "u"][..], "-user needs -a"),
            (&["-cacert", "x"][..], "need -tls"),
            (&["-u", "http://x"][..], "unsupported URI scheme"),
        ] {
            match run(args, None) {
                Err(Error::Usage(msg)) => assert!(msg.contains(needle), "{args:?}: {msg}"),
                Err(other) => panic!("{args:?}: {other:?}"),
                Ok(_) => panic!("{args:?}: accepted"),
            }
        }
    }

    #[test]
    fn tls_errors_name_zbench_s_flags() {
        let conn = ConnSpec {
            tls: Some(TlsSpec {
                cert: Some("client.pem".to_string()),
                ..TlsSpec::default()
            }),
            ..ConnSpec::default()
        };
        match tls_settings(&conn, "localhost") {
            Err(Error::Usage(msg)) => assert!(!msg.contains("--"), "{msg}"),
            other => panic!("{other:?}"),
        }
    }
}
