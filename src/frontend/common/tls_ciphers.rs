//! OpenSSL cipher strings (`--tls-ciphers`) and TLS 1.3 suite lists (`--tls-ciphersuites`)
//! mapped onto the cipher suites rustls's *ring* provider offers.
//!
//! redis-benchmark, redis-cli and memtier hand these strings to OpenSSL. kvbench speaks
//! TLS through rustls, which offers three TLS 1.3 suites and six TLS 1.2 suites (all
//! ECDHE with AES-GCM or ChaCha20-Poly1305). The strings keep OpenSSL's meaning, applied
//! to those nine:
//!
//! ```text
//! --tls-ciphers       TLS 1.2: elements separated by ':' (or ',', ' ', ';'), each
//!                     [!|-|+]name[+name...]  or  @STRENGTH / @SECLEVEL=n
//!                       name   a cipher (ECDHE-RSA-AES256-GCM-SHA384) or an alias
//!                              (DEFAULT, ALL, HIGH, ECDHE, aRSA, AESGCM, CHACHA20, ...)
//!                       a+b    the ciphers both a and b select
//!                       (none) add the selected ciphers at the end of the list
//!                       -      take them out (a later element may add them back)
//!                       !      take them out for good
//!                       +      move the selected ciphers already listed to the end
//! --tls-ciphersuites  TLS 1.3: suite names separated by ':' (TLS_AES_256_GCM_SHA384, ...)
//! ```
//!
//! Elements that select only ciphers rustls lacks (`DHE-RSA-AES256-SHA256`, `kRSA`,
//! `CAMELLIA`, ...) select nothing here, as an unknown name does in OpenSSL; an adding
//! element that selects nothing earns a warning, and a string that leaves no suite of its
//! TLS version is an error that names the suites kvbench can offer.

use rustls::crypto::ring::ALL_CIPHER_SUITES;
use rustls::{CipherSuite, SupportedCipherSuite};

/// The outcome of `--tls-ciphers` / `--tls-ciphersuites`: the suites to offer, in order of
/// preference, and what was given that kvbench cannot offer.
#[derive(Clone, Debug, PartialEq)]
pub struct CipherSelection {
    /// TLS 1.3 suites first, then TLS 1.2 suites, each group in the order the strings ask
    /// for. A version whose flag was not given keeps rustls's own suites for it.
    pub suites: Vec<SupportedCipherSuite>,
    /// One line per element that selected nothing kvbench offers (shown as warnings).
    pub warnings: Vec<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Auth {
    Rsa,
    Ecdsa,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Enc {
    Aes128Gcm,
    Aes256Gcm,
    Chacha20,
}

/// A TLS 1.2 suite rustls offers, as OpenSSL names and classifies it.
struct Tls12Cipher {
    openssl_name: &'static str,
    id: CipherSuite,
    auth: Auth,
    enc: Enc,
}

impl Tls12Cipher {
    /// Symmetric strength in bits, for `@STRENGTH`.
    fn strength(&self) -> u32 {
        match self.enc {
            Enc::Aes128Gcm => 128,
            Enc::Aes256Gcm | Enc::Chacha20 => 256,
        }
    }
}

/// rustls's TLS 1.2 suites in the order OpenSSL 3's DEFAULT lists them, which is the
/// order OpenSSL's rules start from.
const TLS12: [Tls12Cipher; 6] = [
    Tls12Cipher {
        openssl_name: "ECDHE-ECDSA-AES256-GCM-SHA384",
        id: CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
        auth: Auth::Ecdsa,
        enc: Enc::Aes256Gcm,
    },
    Tls12Cipher {
        openssl_name: "ECDHE-RSA-AES256-GCM-SHA384",
        id: CipherSuite::TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
        auth: Auth::Rsa,
        enc: Enc::Aes256Gcm,
    },
    Tls12Cipher {
        openssl_name: "ECDHE-ECDSA-CHACHA20-POLY1305",
        id: CipherSuite::TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
        auth: Auth::Ecdsa,
        enc: Enc::Chacha20,
    },
    Tls12Cipher {
        openssl_name: "ECDHE-RSA-CHACHA20-POLY1305",
        id: CipherSuite::TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
        auth: Auth::Rsa,
        enc: Enc::Chacha20,
    },
    Tls12Cipher {
        openssl_name: "ECDHE-ECDSA-AES128-GCM-SHA256",
        id: CipherSuite::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
        auth: Auth::Ecdsa,
        enc: Enc::Aes128Gcm,
    },
    Tls12Cipher {
        openssl_name: "ECDHE-RSA-AES128-GCM-SHA256",
        id: CipherSuite::TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
        auth: Auth::Rsa,
        enc: Enc::Aes128Gcm,
    },
];

/// rustls's TLS 1.3 suites by their standard names, in OpenSSL's default order.
const TLS13: [(&str, CipherSuite); 3] = [
    (
        "TLS_AES_256_GCM_SHA384",
        CipherSuite::TLS13_AES_256_GCM_SHA384,
    ),
    (
        "TLS_CHACHA20_POLY1305_SHA256",
        CipherSuite::TLS13_CHACHA20_POLY1305_SHA256,
    ),
    (
        "TLS_AES_128_GCM_SHA256",
        CipherSuite::TLS13_AES_128_GCM_SHA256,
    ),
];

/// TLS 1.3 names OpenSSL knows and rustls does not offer: accepted with a warning.
const TLS13_UNOFFERED: [&str; 2] = ["TLS_AES_128_CCM_SHA256", "TLS_AES_128_CCM_8_SHA256"];

/// What one name selects among [`TLS12`]: a bit per cipher.
type Mask = u8;
const ALL_TLS12: Mask = 0b11_1111;

/// The set of [`TLS12`] ciphers an OpenSSL alias or cipher name selects. A name that only
/// selects ciphers rustls lacks, and an unknown name, select nothing (as in OpenSSL).
fn select(name: &str) -> Mask {
    let by = |pred: &dyn Fn(&Tls12Cipher) -> bool| -> Mask {
        TLS12
            .iter()
            .enumerate()
            .filter(|(_, c)| pred(c))
            .fold(0, |m, (i, _)| m | (1 << i))
    };
    if let Some(i) = TLS12.iter().position(|c| c.openssl_name == name) {
        return 1 << i;
    }
    match name {
        // OpenSSL 3: DEFAULT = ALL:!COMPLEMENTOFDEFAULT:!eNULL, which keeps all six.
        "DEFAULT" | "ALL" | "HIGH" | "TLSv1.2" | "AEAD" => ALL_TLS12,
        // Key exchange: every rustls TLS 1.2 suite is ephemeral ECDH.
        "kECDHE" | "kEECDH" | "ECDHE" | "EECDH" | "ECDH" => ALL_TLS12,
        "aRSA" => by(&|c| c.auth == Auth::Rsa),
        "aECDSA" | "ECDSA" => by(&|c| c.auth == Auth::Ecdsa),
        "AESGCM" | "AES" => by(&|c| c.enc != Enc::Chacha20),
        "AES128" => by(&|c| c.enc == Enc::Aes128Gcm),
        "AES256" => by(&|c| c.enc == Enc::Aes256Gcm),
        "CHACHA20" => by(&|c| c.enc == Enc::Chacha20),
        _ => 0,
    }
}

/// One element of a cipher string, split into its operator and its `+`-joined names.
enum Op {
    Add,
    Delete,
    Kill,
    MoveToEnd,
}

/// The TLS 1.2 suites an OpenSSL cipher string leaves, in order, with a warning per
/// adding element that selected nothing.
fn apply_cipher_string(raw: &str) -> Result<(Vec<usize>, Vec<String>), String> {
    // OpenSSL keeps every cipher in one ordered list with an "active" mark; rules move
    // entries around and flip marks, and the active ones, in list order, are the result.
    let mut order: Vec<usize> = (0..TLS12.len()).collect();
    let mut active = [false; TLS12.len()];
    let mut killed = [false; TLS12.len()];
    let mut warnings = Vec::new();
    let elements = raw
        .split([':', ',', ' ', ';'])
        .filter(|e| !e.is_empty())
        .collect::<Vec<_>>();
    if elements.is_empty() {
        return Err("--tls-ciphers is empty".to_string());
    }
    for element in elements {
        let (op, body) = match element.as_bytes()[0] {
            b'!' => (Op::Kill, &element[1..]),
            b'-' => (Op::Delete, &element[1..]),
            b'+' => (Op::MoveToEnd, &element[1..]),
            _ => (Op::Add, element),
        };
        if body == "@STRENGTH" {
            // A stable sort by strength keeps equal-strength ciphers in their order.
            order.sort_by_key(|&i| std::cmp::Reverse(TLS12[i].strength()));
            continue;
        }
        if body.starts_with("@SECLEVEL=") {
            // Every rustls suite passes every security level OpenSSL defines for ciphers.
            continue;
        }
        if body.is_empty() || body.starts_with('@') {
            return Err(format!("--tls-ciphers: cannot read '{element}'"));
        }
        let mask = body
            .split('+')
            .fold(ALL_TLS12, |mask, name| mask & select(name));
        let selected = |i: usize| mask & (1 << i) != 0 && !killed[i];
        match op {
            Op::Add => {
                if mask == 0 {
                    warnings.push(format!(
                        "--tls-ciphers: '{body}' selects no cipher kvbench offers (it is left out)"
                    ));
                }
                let newly: Vec<usize> = order
                    .iter()
                    .copied()
                    .filter(|&i| selected(i) && !active[i])
                    .collect();
                order.retain(|i| !newly.contains(i));
                for i in newly {
                    active[i] = true;
                    order.push(i);
                }
            }
            Op::MoveToEnd => {
                let moved: Vec<usize> = order
                    .iter()
                    .copied()
                    .filter(|&i| selected(i) && active[i])
                    .collect();
                order.retain(|i| !moved.contains(i));
                order.extend(moved);
            }
            Op::Delete => {
                // Taken-out ciphers go to the front, in their order, so that adding them
                // back later restores OpenSSL's relative order.
                let removed: Vec<usize> = order
                    .iter()
                    .copied()
                    .filter(|&i| selected(i) && active[i])
                    .collect();
                order.retain(|i| !removed.contains(i));
                for &i in &removed {
                    active[i] = false;
                }
                order.splice(0..0, removed);
            }
            Op::Kill => {
                for i in 0..TLS12.len() {
                    if mask & (1 << i) != 0 {
                        killed[i] = true;
                        active[i] = false;
                    }
                }
            }
        }
    }
    let chosen = order.into_iter().filter(|&i| active[i]).collect();
    Ok((chosen, warnings))
}

fn supported(id: CipherSuite) -> SupportedCipherSuite {
    *ALL_CIPHER_SUITES
        .iter()
        .find(|s| s.suite() == id)
        .expect("every suite in the tables is one of rustls's ring suites")
}

fn offered_tls12() -> String {
    TLS12
        .iter()
        .map(|c| c.openssl_name)
        .collect::<Vec<_>>()
        .join(", ")
}

fn offered_tls13() -> String {
    TLS13.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ")
}

/// The TLS 1.2 suites `--tls-ciphers` asks for.
fn tls12_suites(raw: &str) -> Result<(Vec<SupportedCipherSuite>, Vec<String>), String> {
    let (chosen, warnings) = apply_cipher_string(raw)?;
    if chosen.is_empty() {
        return Err(format!(
            "--tls-ciphers '{raw}' leaves no TLS 1.2 cipher kvbench can use; it offers {}",
            offered_tls12()
        ));
    }
    let suites = chosen.into_iter().map(|i| supported(TLS12[i].id)).collect();
    Ok((suites, warnings))
}

/// The TLS 1.3 suites `--tls-ciphersuites` asks for: a plain list of names.
fn tls13_suites(raw: &str) -> Result<(Vec<SupportedCipherSuite>, Vec<String>), String> {
    let mut suites = Vec::new();
    let mut warnings = Vec::new();
    for name in raw.split(':').filter(|n| !n.is_empty()) {
        if let Some((_, id)) = TLS13.iter().find(|(n, _)| *n == name) {
            let suite = supported(*id);
            if !suites.contains(&suite) {
                suites.push(suite);
            }
        } else if TLS13_UNOFFERED.contains(&name) {
            warnings.push(format!(
                "--tls-ciphersuites: kvbench does not offer {name} (it is left out)"
            ));
        } else {
            return Err(format!(
                "--tls-ciphersuites: unknown TLS 1.3 suite '{name}'; kvbench offers {}",
                offered_tls13()
            ));
        }
    }
    if suites.is_empty() {
        return Err(format!(
            "--tls-ciphersuites '{raw}' leaves no TLS 1.3 suite kvbench can use; it offers {}",
            offered_tls13()
        ));
    }
    Ok((suites, warnings))
}

/// Map `--tls-ciphers` (TLS 1.2, OpenSSL cipher string) and `--tls-ciphersuites`
/// (TLS 1.3 names) onto rustls's suites. `None` when neither is given: rustls's defaults
/// apply unchanged. Either string leaving nothing rustls can use is an error that says
/// what kvbench offers.
pub fn select_suites(
    tls_ciphers: Option<&str>,
    tls_ciphersuites: Option<&str>,
) -> Result<Option<CipherSelection>, String> {
    if tls_ciphers.is_none() && tls_ciphersuites.is_none() {
        return Ok(None);
    }
    let is13 = |s: &SupportedCipherSuite| matches!(s, SupportedCipherSuite::Tls13(_));
    let mut warnings = Vec::new();
    let tls13 = match tls_ciphersuites {
        Some(raw) => {
            let (suites, w) = tls13_suites(raw)?;
            warnings.extend(w);
            suites
        }
        None => ALL_CIPHER_SUITES.iter().copied().filter(is13).collect(),
    };
    let tls12 = match tls_ciphers {
        Some(raw) => {
            let (suites, w) = tls12_suites(raw)?;
            warnings.extend(w);
            suites
        }
        None => ALL_CIPHER_SUITES
            .iter()
            .copied()
            .filter(|s| !is13(s))
            .collect(),
    };
    Ok(Some(CipherSelection {
        suites: tls13.into_iter().chain(tls12).collect(),
        warnings,
    }))
}

/// OpenSSL's name for a suite kvbench offers (`ECDHE-RSA-AES128-GCM-SHA256`,
/// `TLS_AES_128_GCM_SHA256`), for messages and tests.
pub fn openssl_name(suite: &SupportedCipherSuite) -> Option<&'static str> {
    let id = suite.suite();
    TLS12
        .iter()
        .find(|c| c.id == id)
        .map(|c| c.openssl_name)
        .or_else(|| TLS13.iter().find(|(_, i)| *i == id).map(|(n, _)| *n))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names12(raw: &str) -> Vec<&'static str> {
        let sel = select_suites(Some(raw), None).unwrap().unwrap();
        sel.suites
            .iter()
            .filter(|s| matches!(s, SupportedCipherSuite::Tls12(_)))
            .map(|s| openssl_name(s).unwrap())
            .collect()
    }

    #[test]
    fn no_flags_keep_rustls_defaults() {
        assert_eq!(select_suites(None, None).unwrap(), None);
    }

    #[test]
    fn default_keeps_all_six_in_openssl_order() {
        assert_eq!(
            names12("DEFAULT"),
            [
                "ECDHE-ECDSA-AES256-GCM-SHA384",
                "ECDHE-RSA-AES256-GCM-SHA384",
                "ECDHE-ECDSA-CHACHA20-POLY1305",
                "ECDHE-RSA-CHACHA20-POLY1305",
                "ECDHE-ECDSA-AES128-GCM-SHA256",
                "ECDHE-RSA-AES128-GCM-SHA256",
            ]
        );
        // Taking out a cipher rustls lacks changes nothing and warns about nothing.
        let sel = select_suites(Some("DEFAULT:-AES128-SHA256"), None)
            .unwrap()
            .unwrap();
        assert!(sel.warnings.is_empty(), "{:?}", sel.warnings);
        assert_eq!(sel.suites.len(), 9);
    }

    #[test]
    fn explicit_list_keeps_its_order_and_warns_about_the_rest() {
        let sel = select_suites(
            Some(
                "ECDHE-RSA-AES128-GCM-SHA256:DHE-RSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384",
            ),
            None,
        )
        .unwrap()
        .unwrap();
        let names: Vec<_> = sel.suites.iter().filter_map(openssl_name).collect();
        assert_eq!(
            names,
            [
                "TLS_AES_256_GCM_SHA384",
                "TLS_AES_128_GCM_SHA256",
                "TLS_CHACHA20_POLY1305_SHA256",
                "ECDHE-RSA-AES128-GCM-SHA256",
                "ECDHE-RSA-AES256-GCM-SHA384",
            ]
        );
        assert_eq!(sel.warnings.len(), 1);
        assert!(sel.warnings[0].contains("DHE-RSA-AES256-GCM-SHA384"));
    }

    #[test]
    fn aliases_operators_and_strength() {
        assert_eq!(
            names12("ECDHE+AESGCM"),
            [
                "ECDHE-ECDSA-AES256-GCM-SHA384",
                "ECDHE-RSA-AES256-GCM-SHA384",
                "ECDHE-ECDSA-AES128-GCM-SHA256",
                "ECDHE-RSA-AES128-GCM-SHA256",
            ]
        );
        assert_eq!(
            names12("aRSA:!AES256"),
            ["ECDHE-RSA-CHACHA20-POLY1305", "ECDHE-RSA-AES128-GCM-SHA256"]
        );
        // '!' is for good: adding back does not bring the cipher back.
        assert_eq!(
            names12("!CHACHA20:ALL"),
            [
                "ECDHE-ECDSA-AES256-GCM-SHA384",
                "ECDHE-RSA-AES256-GCM-SHA384",
                "ECDHE-ECDSA-AES128-GCM-SHA256",
                "ECDHE-RSA-AES128-GCM-SHA256",
            ]
        );
        // '-' then re-adding puts the cipher back at the end.
        assert_eq!(
            names12("ALL:-ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-ECDSA-AES256-GCM-SHA384")
                .last()
                .copied(),
            Some("ECDHE-ECDSA-AES256-GCM-SHA384")
        );
        // '+' moves what is listed to the end.
        assert_eq!(
            names12("ALL:+AES256")[4..],
            [
                "ECDHE-ECDSA-AES256-GCM-SHA384",
                "ECDHE-RSA-AES256-GCM-SHA384"
            ]
        );
        assert_eq!(
            names12("AES128:CHACHA20:@STRENGTH")[..2],
            [
                "ECDHE-ECDSA-CHACHA20-POLY1305",
                "ECDHE-RSA-CHACHA20-POLY1305"
            ]
        );
        assert_eq!(names12("HIGH:@SECLEVEL=2").len(), 6);
    }

    #[test]
    fn a_string_that_leaves_nothing_is_an_error() {
        for raw in [
            "AES128-SHA256",
            "kRSA",
            "DEFAULT:!ECDHE",
            "NOSUCHCIPHER",
            ":",
        ] {
            let err = select_suites(Some(raw), None).unwrap_err();
            assert!(
                err.contains("--tls-ciphers") && !err.contains('\n'),
                "{raw}: {err}"
            );
        }
        let err = select_suites(Some("RC4-SHA"), None).unwrap_err();
        assert!(err.contains("ECDHE-RSA-AES128-GCM-SHA256"), "{err}");
    }

    #[test]
    fn tls13_names() {
        let sel = select_suites(
            None,
            Some("TLS_CHACHA20_POLY1305_SHA256:TLS_AES_128_CCM_SHA256"),
        )
        .unwrap()
        .unwrap();
        let names: Vec<_> = sel.suites.iter().filter_map(openssl_name).collect();
        assert_eq!(names[0], "TLS_CHACHA20_POLY1305_SHA256");
        assert_eq!(
            names.len(),
            7,
            "one TLS 1.3 suite and rustls's six TLS 1.2 ones"
        );
        assert_eq!(sel.warnings.len(), 1);
        assert!(select_suites(None, Some("TLS_AES_128_CCM_SHA256")).is_err());
        let err = select_suites(None, Some("TLS_FOO")).unwrap_err();
        assert!(err.contains("unknown TLS 1.3 suite 'TLS_FOO'"), "{err}");
    }
}
