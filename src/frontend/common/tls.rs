//! TLS set-up from the shared connection flags: `--tls`, `--cert`, `--key`, `--cacert`,
//! `--tls-skip-verify`, `--sni` and `--tls-protocols` into one ready rustls configuration
//! (the plan's [`TlsSettings`]); front ends that have them add a CA directory
//! (`--cacertdir`) and the cipher suites to offer (`--tls-ciphers`, mapped by
//! [`super::tls_ciphers`]).
//!
//! Everything that can be wrong with the files or flags is found here, while the plan is
//! built, so a bad PEM file is a usage error before any connection.

use std::fs;
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::{Resumption, verify_server_cert_signed_by_trust_anchor};
use rustls::crypto::{CryptoProvider, WebPkiSupportedAlgorithms};
use rustls::pki_types::pem::{self, PemObject};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::server::ParsedCertificate;
use rustls::sign::CertifiedKey;
use rustls::{
    ClientConfig, DigitallySignedStruct, Error as TlsError, InconsistentKeys, RootCertStore,
    SignatureScheme, SupportedCipherSuite, SupportedProtocolVersion,
};

use crate::plan::tls::{ClientIdentity, TlsSettings};

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
    /// A directory whose certificate files are all trusted too (redis-benchmark's
    /// `--cacertdir`).
    pub cacertdir: Option<&'a str>,
    /// The suites to offer, in order; `None`: rustls's own.
    pub cipher_suites: Option<&'a [SupportedCipherSuite]>,
}

/// Validates the TLS flags and builds the shared rustls configuration. Every error is one
/// line that names the flag or file at fault.
pub fn build(flags: &TlsFlags) -> Result<TlsSettings, String> {
    let mut provider = rustls::crypto::ring::default_provider();
    if let Some(suites) = flags.cipher_suites {
        provider.cipher_suites = suites.to_vec();
    }
    let provider = Arc::new(provider);
    let (versions, versions_text) = parse_versions(flags.protocols)?;
    let name_text = flags.sni.unwrap_or(flags.host);
    let server_name = server_name(name_text, flags.sni.is_some())?;

    let key = match (flags.cert, flags.key) {
        (Some(cert), Some(key)) => Some(Arc::new(load_identity(cert, key, &provider)?)),
        (Some(_), None) => {
            return Err(
                "--cert needs --key: give the client certificate's private key too.".to_string(),
            );
        }
        (None, Some(_)) => {
            return Err("--key needs --cert: give the client certificate too.".to_string());
        }
        (None, None) => None,
    };
    let identity = Arc::new(ClientIdentity::new(key));

    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(&versions)
        .map_err(|e| format!("cannot set up TLS: {e}"))?;
    let roots = match flags.skip_verify {
        true => None,
        false => Some(Arc::new(root_store(flags.cacert, flags.cacertdir)?)),
    };
    let builder = builder
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(Verifier {
            roots,
            algorithms: provider.signature_verification_algorithms,
        }));
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
        identity,
    })
}

/// How the server's certificate is verified. With `roots`: as memtier's and
/// redis-benchmark's OpenSSL set-up verifies it, the chain up to a trusted CA, each
/// certificate's dates and signatures, and the handshake's signatures, but not the host
/// name (OpenSSL checks a name only when asked to, and neither tool asks). So Redis's own
/// test certificates (`CN=Server-only`, no subjectAltName) and a certificate issued for a
/// name other than the address dialled connect as they do with those tools; `--sni` is
/// the name sent. Without (`--tls-skip-verify`): any chain and any name, but the
/// handshake signatures are still checked where the certificate can be read, so the
/// connection is at least bound to the key the server showed.
#[derive(Debug)]
struct Verifier {
    roots: Option<Arc<RootCertStore>>,
    algorithms: WebPkiSupportedAlgorithms,
}

impl Verifier {
    /// A handshake signature's check: as it came with a verified chain; under
    /// `--tls-skip-verify`, one whose certificate cannot be read passes (see
    /// [`unreadable_taken`]).
    fn signature(
        &self,
        checked: Result<HandshakeSignatureValid, TlsError>,
    ) -> Result<HandshakeSignatureValid, TlsError> {
        match self.roots {
            Some(_) => checked,
            None => unreadable_taken(checked),
        }
    }
}

impl ServerCertVerifier for Verifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, TlsError> {
        if let Some(roots) = &self.roots {
            let cert = ParsedCertificate::try_from(end_entity)?;
            verify_server_cert_signed_by_trust_anchor(
                &cert,
                roots,
                intermediates,
                now,
                self.algorithms.all,
            )?;
        }
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, TlsError> {
        self.signature(rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.algorithms,
        ))
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, TlsError> {
        self.signature(rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.algorithms,
        ))
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}

/// A signature check that could not read the certificate (an X.509 version 1 one, which
/// webpki does not parse, as `openssl x509 -req` without extensions makes) passes under
/// `--tls-skip-verify`, as OpenSSL-based tools' `--insecure` does: with any certificate
/// taken, binding the handshake to one that cannot be read proves nothing more. A
/// signature that does not match its key still fails.
fn unreadable_taken(
    checked: Result<HandshakeSignatureValid, TlsError>,
) -> Result<HandshakeSignatureValid, TlsError> {
    match checked {
        Err(TlsError::InvalidCertificate(
            rustls::CertificateError::Other(_) | rustls::CertificateError::BadEncoding,
        )) => Ok(HandshakeSignatureValid::assertion()),
        other => other,
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
            format!("host '{text}' cannot be sent as a TLS server name (SNI); give one with --sni.")
        }
    })
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
    // The library's own text shows markers and lines as lists of byte values.
    let why = match err {
        pem::Error::MissingSectionEnd { end_marker } => format!(
            "a {label} section has no -----END {label}----- line: the file is cut short",
            label = String::from_utf8_lossy(end_marker).trim()
        ),
        pem::Error::IllegalSectionStart { line } => format!(
            "a section starts with a malformed line ({})",
            String::from_utf8_lossy(line).trim()
        ),
        other => other.to_string(),
    };
    format!("{flag} file '{path}' is not valid PEM: {why}")
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
        // rustls checks the certificate itself here too (e.g. an X.509 v1 certificate,
        // which it does not take): that is the --cert file's fault, not the key's.
        TlsError::InvalidCertificate(problem) => {
            // rustls names the problem only in its Debug form
            // (`Other(OtherError(UnsupportedCertVersion))`): say the common one in words.
            let problem = format!("{problem:?}");
            if problem.contains("UnsupportedCertVersion") {
                return format!(
                    "cannot use the certificate in --cert file '{cert_path}': it is not an \
                     X.509 v3 certificate (rustls takes X.509 v3 certificates: issue it with \
                     v3 extensions, e.g. openssl x509 -req ... -extfile v3.ext)"
                );
            }
            // The innermost name of the Debug form (`SignatureAlgorithmMismatch`).
            let inner = problem
                .trim_end_matches(')')
                .rsplit('(')
                .next()
                .unwrap_or("");
            format!(
                "cannot use the certificate in --cert file '{cert_path}': it does not read as \
                 a valid X.509 certificate ({inner}); is the file damaged?"
            )
        }
        other => format!(
            "cannot use the --cert file '{cert_path}' with the --key file '{key_path}': {other}"
        ),
    })
}

/// The CAs to verify the server with: `--cacert` and/or every certificate file in
/// `--cacertdir`, else the system bundle.
fn root_store(cacert: Option<&str>, cacertdir: Option<&str>) -> Result<RootCertStore, String> {
    let mut roots = RootCertStore::empty();
    if let Some(path) = cacert {
        let (added, _ignored) = roots.add_parsable_certificates(load_certs("--cacert", path)?);
        if added == 0 {
            return Err(format!(
                "no usable CA certificate in --cacert file '{path}' (none parsed as X.509)"
            ));
        }
    }
    if let Some(dir) = cacertdir {
        let added = add_cert_dir(&mut roots, dir)?;
        // Beside --cacert an empty directory takes nothing away (OpenSSL, and so
        // redis-benchmark, uses both); alone it would leave nothing to trust.
        if added == 0 && cacert.is_none() {
            return Err(format!(
                "no usable CA certificate in --cacertdir directory '{dir}' (no file holds a PEM certificate)"
            ));
        }
    }
    if cacert.is_some() || cacertdir.is_some() {
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

/// Adds the certificates of every regular file in `dir` (OpenSSL's hashed names or any
/// other); files that hold none are skipped. Returns how many were added.
fn add_cert_dir(roots: &mut RootCertStore, dir: &str) -> Result<usize, String> {
    let entries = fs::read_dir(dir)
        .map_err(|e| format!("cannot read --cacertdir directory '{dir}': {}", os_text(&e)))?;
    let mut added = 0;
    for entry in entries.flatten() {
        let path = entry.path();
        if !path.is_file() {
            continue;
        }
        let Ok(bytes) = fs::read(&path) else {
            continue;
        };
        let certs = CertificateDer::pem_slice_iter(&bytes).filter_map(|c| c.ok());
        added += roots.add_parsable_certificates(certs).0;
    }
    Ok(added)
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
