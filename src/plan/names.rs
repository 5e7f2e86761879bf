//! How the front end spells the knobs the engine's messages point users to: the engine
//! says "add --tls" or "(--reply-timeout)" without knowing any command line.

/// Flag spellings for the engine's messages, supplied by the front end in the plan.
#[derive(Debug, PartialEq, Eq)]
pub struct FlagNames {
    /// Turns TLS on, e.g. `--tls`.
    pub tls: &'static str,
    /// Every way to turn TLS on, for "add ...": e.g. `--tls (or use a rediss:// URI)`.
    pub tls_any: &'static str,
    /// The CA file, e.g. `--cacert`.
    pub cacert: &'static str,
    /// The client certificate and key, e.g. `--cert` and `--key`.
    pub cert: &'static str,
    pub key: &'static str,
    /// The expected server name, e.g. `--sni`.
    pub sni: &'static str,
    /// No certificate checks, e.g. `--tls-skip-verify`.
    pub tls_skip_verify: &'static str,
    /// The TLS versions, e.g. `--tls-protocols`.
    pub tls_protocols: &'static str,
    /// The connect timeout, e.g. `--connection-timeout`.
    pub connection_timeout: &'static str,
    /// The stall watchdog, e.g. `--reply-timeout`.
    pub reply_timeout: &'static str,
    /// A request rate (an open loop, which measures a stall as latency), e.g. `--rate`.
    pub rate: &'static str,
    /// How to give credentials, e.g. `-a PASSWORD or -a USER:PASSWORD`.
    pub authenticate: &'static str,
    /// Cluster mode, e.g. `--cluster-mode`.
    pub cluster_mode: &'static str,
}
