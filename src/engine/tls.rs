//! TLS failures as sentences: a rustls error turned into what to change, naming the
//! front end's flags (through the plan's [`FlagNames`]).

use std::io;
use std::time::Duration;

use rustls::pki_types::UnixTime;
use rustls::{AlertDescription, CertificateError, Error as TlsError, PeerIncompatible};

use crate::date::civil_from_days;
use crate::engine::failure::describe;
use crate::plan::{FlagNames, TlsSettings};

/// A handshake the server left unanswered for `within`: a plaintext port, most likely.
pub fn no_answer(within: Duration, flags: &FlagNames) -> String {
    format!(
        "no TLS answer within {} s; is this a plaintext port? drop {}",
        within.as_secs(),
        flags.tls
    )
}

/// What went wrong in a blocking TLS handshake (cluster discovery, a one-shot query) as
/// a sentence that says what to change: silence until the `waited` deadline is a
/// plaintext port; a rustls error is explained as the event loops explain it.
pub fn blocking_handshake_problem(
    settings: &TlsSettings,
    flags: &FlagNames,
    err: &io::Error,
    waited: Duration,
) -> String {
    if matches!(
        err.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    ) {
        return no_answer(waited, flags);
    }
    match err
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<TlsError>())
    {
        Some(tls_err) => explain(settings, flags, tls_err),
        None => describe(err),
    }
}

/// A rustls failure as a sentence that says what to change, e.g.
/// `certificate verify failed: unknown issuer; pass the server's CA with --cacert or use
/// --tls-skip-verify`.
pub fn explain(settings: &TlsSettings, flags: &FlagNames, err: &TlsError) -> String {
    match err {
        TlsError::InvalidCertificate(problem) => {
            format!(
                "certificate verify failed: {}",
                explain_cert(settings, flags, problem)
            )
        }
        TlsError::AlertReceived(alert) => explain_alert(settings, flags, *alert),
        TlsError::PeerIncompatible(why) => explain_incompatible(settings, flags, why),
        TlsError::InvalidMessage(_) | TlsError::PeerSentOversizedRecord => format!(
            "the server sent something that is not TLS ({err}); is this a plaintext port? \
             drop {}",
            flags.tls
        ),
        other => other.to_string(),
    }
}

fn explain_cert(settings: &TlsSettings, flags: &FlagNames, problem: &CertificateError) -> String {
    let skip = format!("use {}", flags.tls_skip_verify);
    let cacert = flags.cacert;
    match problem {
        CertificateError::UnknownIssuer => match &settings.cacert_file {
            Some(file) => format!(
                "unknown issuer (no CA in {file} signed the server's certificate); pass \
                 the server's CA with {cacert} or {skip}"
            ),
            None => format!("unknown issuer; pass the server's CA with {cacert} or {skip}"),
        },
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
        // rustls names a version-1 certificate only in its debug text
        // (`Other(OtherError(UnsupportedCertVersion))`); `openssl x509 -req` without an
        // extensions file makes one, and OpenSSL clients take it, so say it in words.
        other => match format!("{other:?}") {
            text if text.contains("UnsupportedCertVersion") => format!(
                "the server's certificate is X.509 version 1, not 3 (as `openssl x509 -req` \
                 without -extfile makes it); reissue it with v3 extensions or {skip}"
            ),
            text => format!("{text}; {skip}"),
        },
    }
}

fn explain_alert(settings: &TlsSettings, flags: &FlagNames, alert: AlertDescription) -> String {
    let have_cert = settings.cert_file.as_deref();
    let (cert, key, versions) = (flags.cert, flags.key, flags.tls_protocols);
    match (alert, have_cert) {
        (AlertDescription::CertificateRequired, None) => {
            format!("the server requires a client certificate; pass {cert} and {key}")
        }
        // TLS 1.2 servers say only "handshake failure" when a required certificate is
        // missing; the resolver saw the request, so that is the likely reason.
        (
            AlertDescription::HandshakeFailure
            | AlertDescription::BadCertificate
            | AlertDescription::CertificateUnknown
            | AlertDescription::AccessDenied,
            None,
        ) if settings.client_cert_requested() => format!(
            "the server requires a client certificate (it sent alert {alert:?}); pass {cert} \
             and {key}"
        ),
        // OpenSSL servers send this for a client certificate past its notAfter (or not
        // yet valid): its CA is trusted, its dates are what to fix.
        (AlertDescription::CertificateExpired, Some(file)) => format!(
            "the server rejected the client certificate in {file} as expired or not yet valid (alert CertificateExpired); renew it, or check this machine's clock"
        ),
        (
            AlertDescription::CertificateRequired
            | AlertDescription::BadCertificate
            | AlertDescription::UnknownCA
            | AlertDescription::CertificateUnknown
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
             allow the server's version with {versions}",
            settings.versions_text
        ),
        (AlertDescription::HandshakeFailure, _) => format!(
            "the server refused the handshake (alert HandshakeFailure): no version or cipher \
             in common? kvbench offered {}; check {versions}",
            settings.versions_text
        ),
        (other, _) => format!("the server sent TLS alert {other:?}"),
    }
}

fn explain_incompatible(
    settings: &TlsSettings,
    flags: &FlagNames,
    why: &PeerIncompatible,
) -> String {
    match why {
        PeerIncompatible::ServerTlsVersionIsDisabledByOurConfig
        | PeerIncompatible::ServerDoesNotSupportTls12Or13
        | PeerIncompatible::SupportedVersionsExtensionRequired
        | PeerIncompatible::Tls12NotOffered
        | PeerIncompatible::Tls12NotOfferedOrEnabled => format!(
            "the server chose a TLS version kvbench did not offer ({why:?}): kvbench offered \
             {}; allow the server's version with {}",
            settings.versions_text, flags.tls_protocols
        ),
        other => format!("the server is not compatible: {other:?}"),
    }
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
}
