//! How a connection starts talking (its set-up commands, and whether it waits for their
//! replies), and in cluster mode which master a client talks to.

/// How the set-up commands (AUTH, CLIENT TRACKING, HELLO, SELECT) go out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SetupStyle {
    /// Sent as soon as the connection is up, in the order AUTH, CLIENT TRACKING, HELLO,
    /// SELECT; requests wait until every reply is in (a failure is explained before any
    /// load).
    #[default]
    Handshake,
    /// Written in front of the connection's first request, in the same write, in the
    /// order AUTH, CLIENT TRACKING, SELECT, HELLO; nothing is sent on a connection that
    /// never gets a request (idle connections send nothing at all).
    Prefix,
}

/// What every connection sends before its requests, beyond authentication, the
/// protocol's HELLO and the database's SELECT (which the server part of the plan says).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Setup {
    pub style: SetupStyle,
    /// `CLIENT TRACKING on` (server-assisted client caching).
    pub client_tracking: bool,
}

/// Which master a client sends to in cluster mode.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ClusterRouting {
    /// One connection per master; each request goes to the master owning its key's slot,
    /// following MOVED and ASK.
    #[default]
    ByKey,
    /// Client `i` holds one connection, to master `i mod masters`; the `{tag}` fields of
    /// its templated requests name one slot of that master (its first, as
    /// redis-benchmark does), and a MOVED or ASK re-reads the slot map and sends the
    /// request again with the next.
    OneMasterPerClient,
}
