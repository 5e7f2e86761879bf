//! redis-benchmark's TLS flags (`--tls`, `--sni`, `--cacert`, `--cacertdir`,
//! `--insecure`, `--cert`, `--key`, `--tls-ciphers`, `--tls-ciphersuites`) as typed, and
//! their check into a [`TlsSpec`]: TLS options without TLS are refused, never ignored.

use std::path::PathBuf;

use clap::Args;
use rustls::SupportedCipherSuite;

use crate::error::Error;
use crate::frontend::common::tls_ciphers::select_suites;

/// The TLS flags as typed (flattened into the command line's flags).
#[derive(Args, Debug, Default)]
pub(super) struct TlsFlags {
    #[arg(long = "tls")]
    pub tls: bool,
    #[arg(long = "sni", allow_hyphen_values = true)]
    sni: Option<String>,
    #[arg(long = "cacert", allow_hyphen_values = true)]
    cacert: Option<PathBuf>,
    #[arg(long = "cacertdir", allow_hyphen_values = true)]
    cacertdir: Option<PathBuf>,
    #[arg(long = "insecure")]
    insecure: bool,
    #[arg(long = "cert", allow_hyphen_values = true)]
    cert: Option<PathBuf>,
    #[arg(long = "key", allow_hyphen_values = true)]
    key: Option<PathBuf>,
    #[arg(long = "tls-ciphers", allow_hyphen_values = true)]
    tls_ciphers: Option<String>,
    #[arg(long = "tls-ciphersuites", allow_hyphen_values = true)]
    tls_ciphersuites: Option<String>,
}

/// `--tls` (or `rediss://`) and its options.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TlsSpec {
    /// `--sni`: the name sent (SNI) instead of the host.
    pub sni: Option<String>,
    /// `--cacert`.
    pub cacert: Option<PathBuf>,
    /// `--cacertdir`: every certificate file in the directory is trusted.
    pub cacertdir: Option<PathBuf>,
    /// `--insecure`: do not verify the server's certificate.
    pub insecure: bool,
    /// `--cert` (with `--key`): the client certificate.
    pub cert: Option<PathBuf>,
    /// `--key`.
    pub key: Option<PathBuf>,
    /// `--tls-ciphers` / `--tls-ciphersuites` mapped onto rustls; `None` keeps rustls's
    /// defaults.
    pub cipher_suites: Option<Vec<SupportedCipherSuite>>,
}

impl TlsFlags {
    /// `--tls` (or `rediss://`) and its options. TLS options without TLS are refused rather
    /// than ignored, so a forgotten `--tls` is not a silent plaintext run.
    pub(super) fn spec(
        &self,
        uri_tls: bool,
        unix_socket: bool,
        warnings: &mut Vec<String>,
    ) -> Result<Option<TlsSpec>, Error> {
        let given = [
            (self.sni.is_some(), "--sni"),
            (self.cacert.is_some(), "--cacert"),
            (self.cacertdir.is_some(), "--cacertdir"),
            (self.insecure, "--insecure"),
            (self.cert.is_some(), "--cert"),
            (self.key.is_some(), "--key"),
            (self.tls_ciphers.is_some(), "--tls-ciphers"),
            (self.tls_ciphersuites.is_some(), "--tls-ciphersuites"),
        ];
        if !self.tls && !uri_tls {
            if let Some((_, flag)) = given.iter().find(|(g, _)| *g) {
                return Err(usage(format!(
                    "{flag} applies to TLS connections: add --tls (or use a rediss:// URI)"
                )));
            }
            return Ok(None);
        }
        if unix_socket {
            return Err(usage(
                "--tls works over TCP only: it cannot be combined with -s",
            ));
        }
        match (&self.cert, &self.key) {
            (Some(_), None) => {
                return Err(usage("--cert needs --key (the certificate's private key)"));
            }
            (None, Some(_)) => return Err(usage("--key needs --cert (the client certificate)")),
            _ => {}
        }
        if self.sni.as_deref() == Some("") {
            return Err(usage("--sni is empty"));
        }
        let selection = select_suites(
            self.tls_ciphers.as_deref(),
            self.tls_ciphersuites.as_deref(),
        )
        .map_err(usage)?;
        let cipher_suites = selection.map(|s| {
            warnings.extend(s.warnings);
            s.suites
        });
        Ok(Some(TlsSpec {
            sni: self.sni.clone(),
            cacert: self.cacert.clone(),
            cacertdir: self.cacertdir.clone(),
            insecure: self.insecure,
            cert: self.cert.clone(),
            key: self.key.clone(),
            cipher_suites,
        }))
    }
}

fn usage(msg: impl Into<String>) -> Error {
    Error::usage(msg)
}
