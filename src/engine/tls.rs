//! TLS setup: turn `--tls`, `--cert`, `--key`, `--cacert`, `--tls-skip-verify`, `--sni` and
//! `--tls-protocols` into one ready rustls `ClientConfig`, and explain TLS failures to users.
//!
//! Everything that can be wrong with the files or flags is found here, while the
//! configuration is built, so a bad PEM file is a usage error before any connection. The
//! connections themselves (`crate::engine::transport`) share the one `ClientConfig` and come back
//! here only to turn a rustls error into a sentence that says what to change.

use std::fmt;
use std::fs;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::date::civil_from_days;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::{ResolvesClientCert, Resumption, WebPkiServerVerifier};
use rustls::crypto::{CryptoProvider, WebPkiSupportedAlgorithms};
use rustls::pki_types::pem::{self, PemObject};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::sign::CertifiedKey;
use rustls::{
    AlertDescription, CertificateError, ClientConfig, DigitallySignedStruct, Error as TlsError,
    InconsistentKeys, PeerIncompatible, RootCertStore, SignatureScheme, SupportedProtocolVersion,
};

/// Where Debian (and derivatives) keep the system's trusted CAs as one PEM bundle; the other
/// two are the Red Hat and Alpine/BSD spellings. `SSL_CERT_FILE`, as OpenSSL reads it, wins.
const SYSTEM_CA_BUNDLES: [&str; 3] = [
    "/etc/ssl/certs/ca-certificates.crt",
    "/etc/pki/tls/certs/ca-bundle.crt",
    "/etc/ssl/cert.pem",
];

/// The TLS flags as given, before validation.
#[derive(Clone, Copy, Debug, Default)]
pub struct TlsFlags<'a> {
    /// The server's host name or address as the user typed it (from `-h` or the URI).
    pub host: &'a str,
    pub cert: Option<&'a str>,
    pub key: Option<&'a str>,
    pub cacert: Option<&'a str>,
    pub skip_verify: bool,
    pub sni: Option<&'a str>,
    pub protocols: Option<&'a str>,
}

/// Everything every TLS connection of a run shares: built once, then read by all workers.
pub struct TlsSettings {
    /// The ready rustls configuration (roots or the skip-verify verifier, client
    /// certificate, protocol versions).
    pub client_config: Arc<ClientConfig>,
    /// The name sent as SNI and checked against the server's certificate: `--sni` or the host.
    pub server_name: ServerName<'static>,
    /// The protocol versions offered, for messages (`TLSv1.2 only`, `TLSv1.2 and TLSv1.3`).
    pub versions_text: String,
    /// What the user passed, for messages.
    pub cert_file: Option<String>,
    pub cacert_file: Option<String>,
    pub sni_given: bool,
    /// Set once any server asked this client for a certificate, so a handshake the server
    /// then rejects can be explained as "the server requires a client certificate".
    identity: Arc<ClientIdentity>,
}

impl fmt::Debug for TlsSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TlsSettings")
            .field("server_name", &self.server_name)
            .field("versions", &self.versions_text)
            .field("cert_file", &self.cert_file)
            .field("cacert_file", &self.cacert_file)
            .finish_non_exhaustive()
    }
}

impl TlsSettings {
    /// Validates the TLS flags and builds the shared rustls configuration. Every error is one
    /// line that names the flag or file at fault.
    pub fn build(flags: &TlsFlags) -> Result<TlsSettings, String> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let (versions, versions_text) = parse_versions(flags.protocols)?;
        let name_text = flags.sni.unwrap_or(flags.host);
        let server_name = server_name(name_text, flags.sni.is_some())?;

        let identity = Arc::new(ClientIdentity {
            key: match (flags.cert, flags.key) {
                (Some(cert), Some(key)) => Some(Arc::new(load_identity(cert, key, &provider)?)),
                (Some(_), None) => {
                    return Err(
                        "--cert needs --key: give the client certificate's private key too."
                            .to_string(),
                    );
                }
                (None, Some(_)) => {
                    return Err("--key needs --cert: give the client certificate too.".to_string());
                }
                (None, None) => None,
            },
            requested: AtomicBool::new(false),
        });

        let builder = ClientConfig::builder_with_provider(provider.clone())
            .with_protocol_versions(&versions)
            .map_err(|e| format!("cannot set up TLS: {e}"))?;
        let builder = if flags.skip_verify {
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(SkipVerify {
                    algorithms: provider.signature_verification_algorithms,
                }))
        } else {
            let roots = Arc::new(root_store(flags.cacert)?);
            let verifier = WebPkiServerVerifier::builder_with_provider(roots, provider.clone())
                .build()
                .map_err(|e| format!("cannot set up TLS verification: {e}"))?;
            builder.with_webpki_verifier(verifier)
        };
        let mut client_config = builder.with_client_cert_resolver(identity.clone());
        // Every connection makes a full handshake, as memtier's do: results compare, and
        // servers that mishandle resumption still work (memcached 1.6 with client
        // verification answers a resumed handshake with an internal_error alert).
        client_config.resumption = Resumption::disabled();

        Ok(TlsSettings {
            client_config: Arc::new(client_config),
            server_name,
            versions_text,
            cert_file: flags.cert.map(str::to_string),
            cacert_file: flags.cacert.map(str::to_string),
            sni_given: flags.sni.is_some(),
            identity,
        })
    }

    /// Whether a server asked this client for a certificate during a handshake.
    pub fn client_cert_requested(&self) -> bool {
        self.identity.requested.load(Ordering::Relaxed)
    }

    /// A rustls failure as a sentence that says what to change, e.g.
    /// `certificate verify failed: unknown issuer; pass the server's CA with --cacert or use
    /// --tls-skip-verify`.
    pub fn explain(&self, err: &TlsError) -> String {
        match err {
            TlsError::InvalidCertificate(problem) => {
                format!("certificate verify failed: {}", self.explain_cert(problem))
            }
            TlsError::AlertReceived(alert) => self.explain_alert(*alert),
            TlsError::PeerIncompatible(why) => self.explain_incompatible(why),
            TlsError::InvalidMessage(_) | TlsError::PeerSentOversizedRecord => format!(
                "the server sent something that is not TLS ({err}); is this a plaintext port? \
                 drop --tls"
            ),
            other => other.to_string(),
        }
    }

    fn explain_cert(&self, problem: &CertificateError) -> String {
        let skip = "use --tls-skip-verify";
        match problem {
            CertificateError::UnknownIssuer => match &self.cacert_file {
                Some(file) => format!(
                    "unknown issuer (no CA in {file} signed the server's certificate); pass \
                     the server's CA with --cacert or {skip}"
                ),
                None => format!("unknown issuer; pass the server's CA with --cacert or {skip}"),
            },
            CertificateError::NotValidForName => format!(
                "the certificate is not valid for '{}'; set the expected name with --sni or {skip}",
                name_text(&self.server_name)
            ),
            CertificateError::NotValidForNameContext {
                expected,
                presented,
            } => {
                let names = if presented.is_empty() {
                    "no names".to_string()
                } else {
                    presented
                        .iter()
                        .map(|p| presented_name(p))
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                let how = if self.sni_given {
                    "correct --sni"
                } else {
                    "set the expected name with --sni"
                };
                format!(
                    "the certificate is not valid for '{}' (it names {names}); {how} or {skip}",
                    name_text(expected)
                )
            }
            CertificateError::Expired => {
                format!("the server's certificate has expired; renew it or {skip}")
            }
            CertificateError::ExpiredContext { time, not_after } => format!(
                "the server's certificate expired on {} (now {}); renew it or {skip}",
                utc(*not_after),
                utc(*time)
            ),
            CertificateError::NotValidYet => {
                format!("the server's certificate is not valid yet (check clocks); {skip}")
            }
            CertificateError::NotValidYetContext { time, not_before } => format!(
                "the server's certificate is not valid before {} (now {}); check clocks or {skip}",
                utc(*not_before),
                utc(*time)
            ),
            CertificateError::InvalidPurpose | CertificateError::InvalidPurposeContext { .. } => {
                format!("the certificate is not for TLS servers (extended key usage); {skip}")
            }
            other => format!("{other:?}; {skip}"),
        }
    }

    fn explain_alert(&self, alert: AlertDescription) -> String {
        let have_cert = self.cert_file.as_deref();
        match (alert, have_cert) {
            (AlertDescription::CertificateRequired, None) => {
                "the server requires a client certificate; pass --cert and --key".to_string()
            }
            // TLS 1.2 servers say only "handshake failure" when a required certificate is
            // missing; the resolver saw the request, so that is the likely reason.
            (
                AlertDescription::HandshakeFailure
                | AlertDescription::BadCertificate
                | AlertDescription::CertificateUnknown
                | AlertDescription::AccessDenied,
                None,
            ) if self.client_cert_requested() => format!(
                "the server requires a client certificate (it sent alert {alert:?}); pass --cert \
                 and --key"
            ),
            (
                AlertDescription::CertificateRequired
                | AlertDescription::BadCertificate
                | AlertDescription::UnknownCA
                | AlertDescription::CertificateUnknown
                | AlertDescription::CertificateExpired
                | AlertDescription::UnsupportedCertificate
                | AlertDescription::AccessDenied
                | AlertDescription::DecryptError,
                Some(file),
            ) => format!(
                "the server rejected the client certificate in {file} (alert {alert:?}); check \
                 that the server trusts its CA"
            ),
            (AlertDescription::ProtocolVersion, _) => format!(
                "the server refused the TLS version (alert ProtocolVersion): kvbench offered {}; \
                 allow the server's version with --tls-protocols",
                self.versions_text
            ),
            (AlertDescription::HandshakeFailure, _) => format!(
                "the server refused the handshake (alert HandshakeFailure): no version or cipher \
                 in common? kvbench offered {}; check --tls-protocols",
                self.versions_text
            ),
            (other, _) => format!("the server sent TLS alert {other:?}"),
        }
    }

    fn explain_incompatible(&self, why: &PeerIncompatible) -> String {
        match why {
            PeerIncompatible::ServerTlsVersionIsDisabledByOurConfig
            | PeerIncompatible::ServerDoesNotSupportTls12Or13
            | PeerIncompatible::SupportedVersionsExtensionRequired
            | PeerIncompatible::Tls12NotOffered
            | PeerIncompatible::Tls12NotOfferedOrEnabled => format!(
                "the server chose a TLS version kvbench did not offer ({why:?}): kvbench offered \
                 {}; allow the server's version with --tls-protocols",
                self.versions_text
            ),
            other => format!("the server is not compatible: {other:?}"),
        }
    }
}

/// Holds the client certificate (if any) and notes whether a server asked for one.
#[derive(Debug)]
struct ClientIdentity {
    key: Option<Arc<CertifiedKey>>,
    requested: AtomicBool,
}

impl ResolvesClientCert for ClientIdentity {
    fn resolve(
        &self,
        _root_hint_subjects: &[&[u8]],
        _sigschemes: &[SignatureScheme],
    ) -> Option<Arc<CertifiedKey>> {
        self.requested.store(true, Ordering::Relaxed);
        self.key.clone()
    }

    fn has_certs(&self) -> bool {
        self.key.is_some()
    }
}

/// `--tls-skip-verify`: accepts any certificate chain and any name, but still checks the
/// handshake signatures, so the connection is at least bound to the key the server showed.
#[derive(Debug)]
struct SkipVerify {
    algorithms: WebPkiSupportedAlgorithms,
}

impl ServerCertVerifier for SkipVerify {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, TlsError> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, TlsError> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, TlsError> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}

/// `--tls-protocols=TLSv1.2,TLSv1.3` (memtier's spelling, any case). rustls has no TLS 1.0
/// or 1.1, so those are refused rather than silently dropped.
fn parse_versions(
    raw: Option<&str>,
) -> Result<(Vec<&'static SupportedProtocolVersion>, String), String> {
    let Some(raw) = raw else {
        return Ok((
            vec![&rustls::version::TLS13, &rustls::version::TLS12],
            "TLSv1.2 and TLSv1.3".to_string(),
        ));
    };
    let (mut tls12, mut tls13) = (false, false);
    for token in raw.split(',').map(str::trim).filter(|t| !t.is_empty()) {
        match token.to_ascii_lowercase().as_str() {
            "tlsv1.2" => tls12 = true,
            "tlsv1.3" => tls13 = true,
            "tlsv1" | "tlsv1.0" | "tlsv1.1" => {
                return Err(format!(
                    "--tls-protocols: {token} is not available: kvbench's TLS (rustls) speaks \
                     TLSv1.2 and TLSv1.3 only."
                ));
            }
            _ => {
                return Err(format!(
                    "Invalid tls-protocols specified {token}. Use a combination of 'TLSv1.2' \
                     and 'TLSv1.3'."
                ));
            }
        }
    }
    match (tls12, tls13) {
        (true, true) => Ok((
            vec![&rustls::version::TLS13, &rustls::version::TLS12],
            "TLSv1.2 and TLSv1.3".to_string(),
        )),
        (true, false) => Ok((vec![&rustls::version::TLS12], "TLSv1.2 only".to_string())),
        (false, true) => Ok((vec![&rustls::version::TLS13], "TLSv1.3 only".to_string())),
        (false, false) => {
            Err("--tls-protocols needs at least one of 'TLSv1.2' and 'TLSv1.3'.".to_string())
        }
    }
}

fn server_name(text: &str, from_sni: bool) -> Result<ServerName<'static>, String> {
    if text.is_empty() {
        return Err("--sni needs a host name.".to_string());
    }
    ServerName::try_from(text.to_string()).map_err(|_| {
        if from_sni {
            format!("--sni '{text}' is not a valid host name or IP address.")
        } else {
            format!(
                "host '{text}' is not a valid TLS server name; give the name on the server's \
                 certificate with --sni."
            )
        }
    })
}

/// rustls shows certificate names as `DnsName("host")` / `IpAddress(1.2.3.4)`; users
/// want `host` / `1.2.3.4`.
fn presented_name(raw: &str) -> &str {
    raw.strip_prefix("DnsName(\"")
        .and_then(|r| r.strip_suffix("\")"))
        .or_else(|| {
            raw.strip_prefix("IpAddress(")
                .and_then(|r| r.strip_suffix(')'))
        })
        .unwrap_or(raw)
}

fn name_text(name: &ServerName<'_>) -> String {
    match name {
        ServerName::DnsName(dns) => dns.as_ref().to_string(),
        ServerName::IpAddress(ip) => std::net::IpAddr::from(*ip).to_string(),
        other => format!("{other:?}"),
    }
}

/// Reads a whole file for the flag `flag`, with the OS reason on failure.
fn read_file(flag: &str, path: &str) -> Result<Vec<u8>, String> {
    fs::read(path).map_err(|e| format!("cannot read {flag} file '{path}': {}", os_text(&e)))
}

fn os_text(err: &std::io::Error) -> String {
    let text = err.to_string();
    match text.find(" (os error") {
        Some(cut) => text[..cut].to_lowercase(),
        None => text,
    }
}

fn pem_problem(flag: &str, path: &str, err: &pem::Error) -> String {
    format!("{flag} file '{path}' is not valid PEM: {err}")
}

/// All certificates of a PEM file, in order; none is an error naming the file.
fn load_certs(flag: &str, path: &str) -> Result<Vec<CertificateDer<'static>>, String> {
    let bytes = read_file(flag, path)?;
    let certs = CertificateDer::pem_slice_iter(&bytes)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| pem_problem(flag, path, &e))?;
    if certs.is_empty() {
        return Err(format!(
            "no certificate in {flag} file '{path}' (expected PEM: -----BEGIN CERTIFICATE-----)"
        ));
    }
    Ok(certs)
}

/// The client certificate chain and its key, checked to belong together.
fn load_identity(
    cert_path: &str,
    key_path: &str,
    provider: &CryptoProvider,
) -> Result<CertifiedKey, String> {
    let chain = load_certs("--cert", cert_path)?;
    let bytes = read_file("--key", key_path)?;
    let key = match PrivateKeyDer::from_pem_slice(&bytes) {
        Ok(key) => key,
        Err(pem::Error::NoItemsFound) => {
            let encrypted = String::from_utf8_lossy(&bytes).contains("ENCRYPTED PRIVATE KEY");
            return Err(if encrypted {
                format!(
                    "the private key in --key file '{key_path}' is encrypted; decrypt it first \
                     (openssl pkey -in {key_path} -out key.pem)"
                )
            } else {
                format!(
                    "no private key in --key file '{key_path}' (expected PEM: -----BEGIN PRIVATE \
                     KEY-----, RSA PRIVATE KEY or EC PRIVATE KEY)"
                )
            });
        }
        Err(e) => return Err(pem_problem("--key", key_path, &e)),
    };
    CertifiedKey::from_der(chain, key, provider).map_err(|e| match e {
        TlsError::InconsistentKeys(InconsistentKeys::KeyMismatch) => format!(
            "the private key in --key file '{key_path}' does not match the certificate in \
             --cert file '{cert_path}'"
        ),
        other => format!("cannot use the private key in --key file '{key_path}': {other}"),
    })
}

/// The CAs to verify the server with: `--cacert`, else the system bundle.
fn root_store(cacert: Option<&str>) -> Result<RootCertStore, String> {
    let mut roots = RootCertStore::empty();
    if let Some(path) = cacert {
        let (added, _ignored) = roots.add_parsable_certificates(load_certs("--cacert", path)?);
        if added == 0 {
            return Err(format!(
                "no usable CA certificate in --cacert file '{path}' (none parsed as X.509)"
            ));
        }
        return Ok(roots);
    }
    let from_env = std::env::var("SSL_CERT_FILE")
        .ok()
        .filter(|p| !p.is_empty());
    let candidates: Vec<String> = from_env
        .into_iter()
        .chain(SYSTEM_CA_BUNDLES.iter().map(|p| p.to_string()))
        .collect();
    for path in &candidates {
        let Ok(bytes) = fs::read(path) else {
            continue;
        };
        // One odd entry in a system bundle should not stop the rest from being used.
        let certs = CertificateDer::pem_slice_iter(&bytes).filter_map(|c| c.ok());
        let (added, _ignored) = roots.add_parsable_certificates(certs);
        if added > 0 {
            return Ok(roots);
        }
    }
    Err(format!(
        "no CA certificates to verify the server with: none found in {}; pass the server's CA \
         with --cacert or use --tls-skip-verify",
        candidates.join(", ")
    ))
}

/// `2026-11-29 20:20:14 UTC` from seconds since the Unix epoch (proleptic Gregorian).
fn utc(time: UnixTime) -> String {
    let secs = time.as_secs();
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02} UTC",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_parse_like_memtier_and_refuse_what_rustls_lacks() {
        assert_eq!(parse_versions(None).map(|v| v.0.len()), Ok(2));
        assert_eq!(
            parse_versions(Some("tlsv1.3")).map(|v| v.1),
            Ok("TLSv1.3 only".to_string())
        );
        assert_eq!(
            parse_versions(Some("TLSv1.2, TLSv1.3")).map(|v| v.0.len()),
            Ok(2)
        );
        let old = parse_versions(Some("TLSv1.1,TLSv1.2")).map(|v| v.1);
        assert_eq!(
            old,
            Err(
                "--tls-protocols: TLSv1.1 is not available: kvbench's TLS (rustls) speaks \
                 TLSv1.2 and TLSv1.3 only."
                    .to_string()
            )
        );
        assert!(parse_versions(Some("SSLv3")).is_err());
        assert!(parse_versions(Some(",")).is_err());
    }

    #[test]
    fn utc_dates() {
        assert_eq!(
            utc(UnixTime::since_unix_epoch(std::time::Duration::ZERO)),
            "1970-01-01 00:00:00 UTC"
        );
        assert_eq!(
            utc(UnixTime::since_unix_epoch(std::time::Duration::from_secs(
                951_825_599
            ))),
            "2000-02-29 11:59:59 UTC"
        );
    }

    #[test]
    fn names_from_host_or_sni() {
        assert!(matches!(
            server_name("localhost", false),
            Ok(ServerName::DnsName(_))
        ));
        assert!(matches!(
            server_name("127.0.0.1", false),
            Ok(ServerName::IpAddress(_))
        ));
        assert_eq!(
            server_name("", true).map(|_| ()),
            Err("--sni needs a host name.".to_string())
        );
        assert!(server_name("bad name!", true).is_err());
    }
}
