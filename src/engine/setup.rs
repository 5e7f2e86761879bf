//! A connection's set-up commands (AUTH, CLIENT TRACKING, HELLO, SELECT): what goes out
//! before the load, in which order, and what a failed reply means to the user. The
//! connection writes them and checks each reply here before it counts as ready.

use std::collections::VecDeque;

use crate::plan::{Plan, Server, SetupStyle};
use crate::protocol::{Expect, Protocol, ReplyKind, encode_auth, resp_encode};

/// A setup command whose reply must be checked before load starts.
#[derive(Clone, Copy, Debug)]
pub enum SetupStep {
    Auth,
    Tracking,
    Hello(u8),
    Select(u32),
}

impl SetupStep {
    pub fn expect(self) -> Expect {
        match self {
            SetupStep::Auth => Expect::Auth,
            SetupStep::Tracking | SetupStep::Hello(_) | SetupStep::Select(_) => Expect::Setup,
        }
    }
}

/// Encodes the set-up commands `server` asks for into `out` and their steps into
/// `steps`: AUTH, CLIENT TRACKING, then HELLO and SELECT (SELECT before HELLO with
/// `SetupStyle::Prefix`, the order tools that prefix their requests use).
pub fn encode_setup(server: &Server, out: &mut Vec<u8>, steps: &mut VecDeque<SetupStep>) {
    if let Some(credentials) = &server.credentials {
        encode_auth(out, server.protocol, credentials);
        steps.push_back(SetupStep::Auth);
    }
    if server.setup.client_tracking {
        resp_encode::encode_command(out, &[b"CLIENT", b"TRACKING", b"on"]);
        steps.push_back(SetupStep::Tracking);
    }
    let hello = match server.protocol {
        Protocol::Resp2 => Some(2u8),
        Protocol::Resp3 => Some(3u8),
        _ => None,
    };
    // Cluster nodes only have database 0.
    let select = server.select_db.filter(|_| !server.cluster_mode);
    let encode_hello = |out: &mut Vec<u8>, steps: &mut VecDeque<SetupStep>| {
        if let Some(version) = hello {
            let digit = [b'0' + version];
            resp_encode::encode_command(out, &[b"HELLO", &digit]);
            steps.push_back(SetupStep::Hello(version));
        }
    };
    let encode_select = |out: &mut Vec<u8>, steps: &mut VecDeque<SetupStep>| {
        if let Some(db) = select {
            let mut digits = itoa::Buffer::new();
            resp_encode::encode_command(out, &[b"SELECT", digits.format(db).as_bytes()]);
            steps.push_back(SetupStep::Select(db));
        }
    };
    match server.setup.style {
        SetupStyle::Handshake => {
            encode_hello(out, steps);
            encode_select(out, steps);
        }
        SetupStyle::Prefix => {
            encode_select(out, steps);
            encode_hello(out, steps);
        }
    }
}

/// Turns a failed AUTH, HELLO or SELECT into a message that says what to change.
pub fn check_setup_reply(
    step: SetupStep,
    kind: ReplyKind,
    text: &[u8],
    plan: &Plan,
    peer: &str,
) -> Result<(), String> {
    if kind != ReplyKind::Error {
        return Ok(());
    }
    let text = String::from_utf8_lossy(text);
    Err(match step {
        SetupStep::Auth => {
            let who = plan
                .server
                .credentials
                .as_ref()
                .and_then(|c| c.user.clone())
                .map_or_else(String::new, |user| format!(" as user '{user}'"));
            // A memcached without -S knows no SASL commands.
            let hint = if plan.server.protocol == Protocol::MemcacheBinary
                && text == "Unknown command"
            {
                " (the server does not use SASL, a memcached without -S: run without credentials)"
                    .to_string()
            } else {
                String::new()
            };
            // Which server refused: a pool's members may hold different users.
            format!("authentication{who} failed on {peer}: {text}{hint}")
        }
        SetupStep::Tracking => format!("CLIENT TRACKING on failed: {text}"),
        // HELLO without AUTH on a server with a password: the protocol is not at fault.
        SetupStep::Hello(version) if text.starts_with("NOAUTH") => format!(
            "HELLO {version} failed: {text} (use {})",
            plan.names.authenticate
        ),
        SetupStep::Hello(version) => {
            format!("HELLO {version} failed: {text} (servers older than Redis 6 need -P redis)")
        }
        SetupStep::Select(db) => format!("SELECT {db} failed: {text}"),
    })
}
