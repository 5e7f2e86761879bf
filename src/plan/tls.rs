//! The TLS part of the plan: one rustls client configuration every connection shares,
//! and what the engine needs to explain a failed handshake.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use rustls::ClientConfig;
use rustls::SignatureScheme;
use rustls::client::ResolvesClientCert;
use rustls::pki_types::ServerName;
use rustls::sign::CertifiedKey;

/// Everything every TLS connection of a run shares: built once, then read by all workers.
pub struct TlsSettings {
    /// The ready rustls configuration (roots or the skip-verify verifier, client
    /// certificate, protocol versions).
    pub client_config: Arc<ClientConfig>,
    /// The name sent as SNI: `--sni` or the host (the certificate's chain is verified, not
    /// its names, as memtier's and redis-benchmark's OpenSSL set-up does).
    pub server_name: ServerName<'static>,
    /// The protocol versions offered, for messages (`TLSv1.2 only`, `TLSv1.2 and TLSv1.3`).
    pub versions_text: String,
    /// What the user passed, for messages.
    pub cert_file: Option<String>,
    pub cacert_file: Option<String>,
    /// Set once any server asked this client for a certificate, so a handshake the server
    /// then rejects can be explained as "the server requires a client certificate".
    pub identity: Arc<ClientIdentity>,
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
    /// Whether a server asked this client for a certificate during a handshake.
    pub fn client_cert_requested(&self) -> bool {
        self.identity.requested.load(Ordering::Relaxed)
    }
}

/// Holds the client certificate (if any) and notes whether a server asked for one.
#[derive(Debug)]
pub struct ClientIdentity {
    key: Option<Arc<CertifiedKey>>,
    requested: AtomicBool,
}

impl ClientIdentity {
    /// An identity presenting `key` (a certificate chain and its private key), if any.
    pub fn new(key: Option<Arc<CertifiedKey>>) -> Self {
        ClientIdentity {
            key,
            requested: AtomicBool::new(false),
        }
    }
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
