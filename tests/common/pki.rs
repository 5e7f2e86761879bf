//! A throwaway PKI for the TLS tests: a CA, certificates it signed and one it did not,
//! made with the `openssl` CLI when a test starts (no key is ever committed).

use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use super::temp_dir;

/// The `openssl` config the test PKI is made with, so the result does not depend on the
/// system's `openssl.cnf`. Sections name the certificate profiles.
const PKI_OPENSSL_CNF: &str = "\
[req]
distinguished_name = dn
prompt = no
[dn]
CN = kvbench-test
[ca]
basicConstraints = critical,CA:TRUE
keyUsage = critical,keyCertSign,cRLSign
subjectKeyIdentifier = hash
[server]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature,keyEncipherment
extendedKeyUsage = serverAuth
subjectAltName = DNS:localhost,IP:127.0.0.1
[named]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature,keyEncipherment
extendedKeyUsage = serverAuth
subjectAltName = DNS:kvbench.test
[nosan]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature,keyEncipherment
extendedKeyUsage = serverAuth
[client]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature
extendedKeyUsage = clientAuth
";

/// A throwaway PKI made with the `openssl` CLI when a test starts (no key is ever
/// committed): a CA, certificates it signed, and a second, unrelated CA. EC P-256 keys, so
/// generating them takes milliseconds. `Drop` removes the directory.
pub struct TestPki {
    dir: PathBuf,
}

impl TestPki {
    /// Generate every file; panics with the openssl output if a step fails.
    pub fn generate() -> Self {
        let dir = temp_dir("pki");
        let pki = TestPki { dir };
        fs::write(pki.path("openssl.cnf"), PKI_OPENSSL_CNF).expect("write openssl.cnf");
        pki.self_signed_ca("ca", "kvbench-test-ca");
        pki.self_signed_ca("other-ca", "kvbench-other-ca");
        pki.issue("server", "localhost", "server", &["-days", "2"]);
        pki.issue("named", "kvbench.test", "named", &["-days", "2"]);
        // As Redis's own test certificates are: a name in the CN only, no subjectAltName.
        pki.issue("nosan", "Server-only", "nosan", &["-days", "2"]);
        pki.issue("client", "kvbench-client", "client", &["-days", "2"]);
        // A certificate whose notAfter is already past. `-days -1` works with the OpenSSL
        // 3.0 of Debian 12; newer releases take explicit dates instead.
        if !pki.try_issue("expired", "localhost", "server", &["-days", "-1"]) {
            pki.issue(
                "expired",
                "localhost",
                "server",
                &[
                    "-not_before",
                    "20200101000000Z",
                    "-not_after",
                    "20200102000000Z",
                ],
            );
        }
        // A client certificate past its notAfter, for the server's CertificateExpired.
        if !pki.try_issue(
            "client-expired",
            "kvbench-client",
            "client",
            &["-days", "-1"],
        ) {
            pki.issue(
                "client-expired",
                "kvbench-client",
                "client",
                &[
                    "-not_before",
                    "20200101000000Z",
                    "-not_after",
                    "20200102000000Z",
                ],
            );
        }
        // A client certificate without extensions: OpenSSL makes it X.509 v1, which
        // rustls does not take (the "--cert file" refusal).
        pki.issue_v1("client-v1", "kvbench-client-v1");
        // A server certificate made the same way (no subjectAltName either).
        pki.issue_v1("server-v1", "localhost");
        // The client key again, encrypted, for the "encrypted key" refusal.
        pki.openssl(&[
            "pkey",
            "-in",
            &pki.file("client.key"),
            "-aes256",
            "-passout",
            "pass:secret",
            "-out",
            &pki.file("client-encrypted.key"),
        ]);
        pki
    }

    /// The directory holding the files.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// `DIR/name` as a path.
    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// `DIR/name` as a string, for command lines. Files: `ca.pem`, `other-ca.pem`,
    /// `server.pem`/`.key` (localhost, 127.0.0.1), `named.pem`/`.key` (kvbench.test only),
    /// `nosan.pem`/`.key` (`CN=Server-only`, no subjectAltName),
    /// `client.pem`/`.key`, `client-v1.pem`/`.key` (X.509 v1), `expired.pem`/`.key`,
    /// `client-expired.pem`/`.key`,
    /// `client-encrypted.key`.
    pub fn file(&self, name: &str) -> String {
        self.path(name).to_string_lossy().into_owned()
    }

    fn self_signed_ca(&self, name: &str, cn: &str) {
        self.openssl(&[
            "req",
            "-x509",
            "-config",
            &self.file("openssl.cnf"),
            "-extensions",
            "ca",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
            "-keyout",
            &self.file(&format!("{name}.key")),
            "-out",
            &self.file(&format!("{name}.pem")),
            "-days",
            "2",
            "-subj",
            &format!("/CN={cn}"),
        ]);
    }

    /// A new key `name.key` and a signing request for `/CN=cn`; returns the request's path.
    fn key_and_request(&self, name: &str, cn: &str) -> String {
        let csr = self.file(&format!("{name}.csr"));
        self.openssl(&[
            "req",
            "-new",
            "-config",
            &self.file("openssl.cnf"),
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
            "-keyout",
            &self.file(&format!("{name}.key")),
            "-out",
            &csr,
            "-subj",
            &format!("/CN={cn}"),
        ]);
        csr
    }

    /// A key and a certificate signed by `ca` with no extensions at all (X.509 v1).
    fn issue_v1(&self, name: &str, cn: &str) {
        let csr = self.key_and_request(name, cn);
        self.openssl(&[
            "x509",
            "-req",
            "-in",
            &csr,
            "-CA",
            &self.file("ca.pem"),
            "-CAkey",
            &self.file("ca.key"),
            "-set_serial",
            "4242",
            "-days",
            "2",
            "-out",
            &self.file(&format!("{name}.pem")),
        ]);
    }

    fn issue(&self, name: &str, cn: &str, profile: &str, validity: &[&str]) {
        assert!(
            self.try_issue(name, cn, profile, validity),
            "openssl could not issue {name}.pem; see the output above"
        );
    }

    /// A key and a certificate signed by `ca`, with the extensions of `profile`.
    fn try_issue(&self, name: &str, cn: &str, profile: &str, validity: &[&str]) -> bool {
        let csr = self.key_and_request(name, cn);
        // Serial numbers must differ per certificate: derive one from the name.
        let serial = name.bytes().fold(7u32, |acc, b| {
            acc.wrapping_mul(31).wrapping_add(u32::from(b))
        }) % 1_000_000
            + 1;
        let mut args = vec![
            "x509".to_string(),
            "-req".to_string(),
            "-in".to_string(),
            csr,
            "-CA".to_string(),
            self.file("ca.pem"),
            "-CAkey".to_string(),
            self.file("ca.key"),
            "-set_serial".to_string(),
            serial.to_string(),
            "-extfile".to_string(),
            self.file("openssl.cnf"),
            "-extensions".to_string(),
            profile.to_string(),
            "-out".to_string(),
            self.file(&format!("{name}.pem")),
        ];
        args.extend(validity.iter().map(|s| s.to_string()));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        self.openssl_status(&args)
    }

    fn openssl(&self, args: &[&str]) {
        assert!(
            self.openssl_status(args),
            "openssl {args:?} failed; see the output above"
        );
    }

    fn openssl_status(&self, args: &[&str]) -> bool {
        let mut cmd = Command::new("openssl");
        cmd.args(args).current_dir(&self.dir).stdin(Stdio::null());
        let out = match cmd.output() {
            Ok(out) => out,
            Err(e) if e.kind() == ErrorKind::NotFound => {
                panic!("openssl not found: run `make test`, which installs it")
            }
            Err(e) => panic!("cannot run openssl: {e}"),
        };
        if !out.status.success() {
            eprintln!(
                "openssl {args:?} failed ({}):\n{}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            );
        }
        out.status.success()
    }
}

impl Drop for TestPki {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.dir);
    }
}
