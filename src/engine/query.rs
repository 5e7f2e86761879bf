//! One-shot questions to a server before (or between) runs: a blocking connection over
//! the plan's transport (TCP, Unix socket or TLS) that authenticates as the plan says
//! (and stops there if refused), sends a few commands in one write and returns each
//! reply's bytes, e.g. the `CONFIG GET save` a report quotes. Never used on the hot path.
//!
//! ```text
//! connect (5 s) -> [AUTH ...]                      <- +OK (an error: stop here)
//!               -> CONFIG GET save, CONFIG GET appendonly  (one write)
//!               <- *2 $4 save $0 ...  *2 $10 appendonly $2 no   (each reply checked
//!                  whole by the one RESP decoder, handed back as bytes)
//! ```

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::time::Duration;

use crate::engine::deadline_stream::{self, DeadlineStream};
use crate::engine::failure::describe;
use crate::engine::tls;
use crate::plan::{Endpoint, Plan};
use crate::protocol::resp::RespDecoder;
use crate::protocol::resp_value::{Value, value};
use crate::protocol::{Decode, Protocol, encode_auth, resp_encode};

/// How long a query may wait to connect, and then for the whole exchange (a TLS handshake
/// included).
const QUERY_TIMEOUT: Duration = Duration::from_secs(5);

/// Why a query got no answers, in one line naming the server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QueryError {
    /// No conversation could begin: the connection to `peer` or its TLS handshake
    /// failed, for the reason `why` (a caller that is about to connect the same way can
    /// stop here).
    Unreachable { peer: String, why: String },
    /// Connected, but the exchange failed (no answer in time, a broken reply, a refused
    /// AUTH).
    Failed(String),
}

impl std::fmt::Display for QueryError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            QueryError::Unreachable { peer, why } => write!(f, "cannot connect to {peer}: {why}"),
            QueryError::Failed(why) => f.write_str(why),
        }
    }
}

/// Sends `commands` (each a list of arguments) to `endpoint`, after AUTH when the plan
/// has credentials, and returns the reply to each command as RESP bytes (an error reply
/// is returned as such; a refused AUTH is an `Err`).
pub fn query(
    plan: &Plan,
    endpoint: &Endpoint,
    commands: &[&[&[u8]]],
) -> Result<Vec<Vec<u8>>, QueryError> {
    let (auth, replies) = query_with_auth(plan, endpoint, commands)?;
    if let Some((Value::Error(e), _)) = auth.as_deref().and_then(value) {
        return Err(QueryError::Failed(format!(
            "authentication with {} failed: {}",
            endpoint.name(),
            String::from_utf8_lossy(e)
        )));
    }
    Ok(replies)
}

/// The AUTH's reply (when one was sent) and the reply to each command, as RESP bytes.
pub type Answered = (Option<Vec<u8>>, Vec<Vec<u8>>);

/// [`query`], with the reply to the AUTH (when the plan has credentials) handed back as
/// it came, error or not, for a caller that words a refusal itself. The commands go out
/// only once the AUTH was accepted: behind a refused one they would run as the
/// connection's default user, which a client that was refused has no business doing
/// (redis-benchmark stops at the refusal too); after a refusal the list is empty.
pub fn query_with_auth(
    plan: &Plan,
    endpoint: &Endpoint,
    commands: &[&[&[u8]]],
) -> Result<Answered, QueryError> {
    let peer = endpoint.name();
    let mut auth = Vec::new();
    if let Some(credentials) = &plan.server.credentials {
        encode_auth(&mut auth, Protocol::Redis, credentials);
    }
    let mut request = Vec::new();
    for command in commands {
        resp_encode::encode_command(&mut request, command);
    }
    let exchanges = Exchanges {
        auth: &auth,
        request: &request,
        replies: commands.len(),
        peer: &peer,
        plan,
    };
    let unreachable = |why: String| QueryError::Unreachable {
        peer: peer.clone(),
        why,
    };
    let connect_failed = |e: std::io::Error| unreachable(describe(&e));
    let answered = match endpoint {
        Endpoint::Unix(path) => {
            let stream = UnixStream::connect(path).map_err(connect_failed)?;
            let mut stream = DeadlineStream::new(stream, QUERY_TIMEOUT);
            exchanges.run(&mut stream)?
        }
        Endpoint::Tcp { addr, .. } => {
            let stream = deadline_stream::connect(addr, QUERY_TIMEOUT).map_err(connect_failed)?;
            let _ = stream.set_nodelay(true);
            let mut stream = DeadlineStream::new(stream, QUERY_TIMEOUT);
            match &plan.server.tls {
                Some(tls) => {
                    let mut session = rustls::ClientConnection::new(
                        Arc::clone(&tls.client_config),
                        tls.server_name.clone(),
                    )
                    .map_err(|e| unreachable(format!("TLS failed: {e}")))?;
                    // The handshake on its own, so that a plaintext port (silent until
                    // the deadline) or a refused certificate reads as what it is.
                    while session.is_handshaking() {
                        session.complete_io(&mut stream).map_err(|e| {
                            let why =
                                tls::blocking_handshake_problem(tls, plan.names, &e, QUERY_TIMEOUT);
                            unreachable(format!("TLS handshake failed: {why}"))
                        })?;
                    }
                    stream.restart();
                    let mut stream = rustls::StreamOwned::new(session, stream);
                    exchanges.run(&mut stream)?
                }
                None => exchanges.run(&mut stream)?,
            }
        }
    };
    Ok(answered)
}

/// One query's conversation: the AUTH (empty without credentials) on its own, then the
/// commands' `request`.
struct Exchanges<'a> {
    auth: &'a [u8],
    request: &'a [u8],
    replies: usize,
    peer: &'a str,
    plan: &'a Plan,
}

impl Exchanges<'_> {
    /// The AUTH's reply, then the commands' replies unless the AUTH was refused.
    fn run(&self, stream: &mut (impl Read + Write)) -> Result<Answered, QueryError> {
        let auth_reply = match self.auth.is_empty() {
            true => None,
            false => {
                let reply = exchange(stream, self.auth, 1, self.peer, self.plan)?
                    .pop()
                    .expect("exchange returns the one reply it was asked for");
                if matches!(value(&reply), Some((Value::Error(_), _))) {
                    return Ok((Some(reply), Vec::new()));
                }
                Some(reply)
            }
        };
        let replies = exchange(stream, self.request, self.replies, self.peer, self.plan)?;
        Ok((auth_reply, replies))
    }
}

/// Writes `request` and reads until `replies` whole replies have arrived; returns each.
/// A TLS server that refused the connection before answering anything (an alert, which
/// TLS 1.3 sends after the client's side of the handshake is done) is
/// [`QueryError::Unreachable`], with what to change. A plaintext connection reset or
/// closed at once stays a failed query: a proxy may close on a command it lacks (as
/// redis-benchmark, the caller warns and goes on), and the run's own connections say
/// whether the port wanted TLS.
fn exchange(
    stream: &mut (impl Read + Write),
    request: &[u8],
    replies: usize,
    peer: &str,
    plan: &Plan,
) -> Result<Vec<Vec<u8>>, QueryError> {
    let failed = QueryError::Failed;
    let unreachable = |why: String| QueryError::Unreachable {
        peer: peer.to_string(),
        why,
    };
    let refused = |e: &std::io::Error| match &plan.server.tls {
        Some(tls) if e.get_ref().is_some_and(|inner| inner.is::<rustls::Error>()) => Some(format!(
            "TLS handshake failed: {}",
            tls::blocking_handshake_problem(tls, plan.names, e, QUERY_TIMEOUT)
        )),
        _ => None,
    };
    if let Err(e) = stream.write_all(request).and_then(|()| stream.flush()) {
        return Err(refused(&e).map_or_else(
            || failed(format!("cannot send to {peer}: {e}")),
            unreachable,
        ));
    }
    let mut buf = Vec::with_capacity(4096);
    let mut chunk = [0u8; 4096];
    let mut decoder = RespDecoder::new();
    let mut out = Vec::with_capacity(replies);
    let mut start = 0;
    while out.len() < replies {
        match decoder.decode(&buf[start..]) {
            Decode::Complete(reply) => {
                out.push(buf[start..start + reply.len].to_vec());
                start += reply.len;
                continue;
            }
            Decode::Incomplete => {}
            Decode::Invalid(why) => {
                return Err(failed(format!("invalid reply from {peer}: {why}")));
            }
        }
        let n = match stream.read(&mut chunk) {
            Ok(n) => n,
            Err(e) => {
                return Err(match refused(&e) {
                    Some(why) if buf.is_empty() => unreachable(why),
                    _ => failed(format!("no answer from {peer}: {e}")),
                });
            }
        };
        if n == 0 {
            return Err(failed(format!("{peer} closed the connection")));
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{SocketAddr, TcpListener};

    /// A one-connection fake server answering with `answer` once it has read `expect`
    /// bytes.
    fn fake(answer: &'static [u8], expect: usize) -> SocketAddr {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            let mut got = Vec::new();
            let mut chunk = [0u8; 256];
            while got.len() < expect {
                let n = s.read(&mut chunk).unwrap();
                if n == 0 {
                    return;
                }
                got.extend_from_slice(&chunk[..n]);
            }
            // Split the answer to check replies are reassembled.
            let (a, b) = answer.split_at(answer.len() / 2);
            s.write_all(a).unwrap();
            s.flush().unwrap();
            s.write_all(b).unwrap();
        });
        addr
    }

    #[test]
    fn replies_come_back_whole_and_auth_is_checked() {
        let mut plan = Plan::example();
        let get = b"*3\r\n$6\r\nCONFIG\r\n$3\r\nGET\r\n$4\r\nsave\r\n".len();
        let addr = fake(b"*2\r\n$4\r\nsave\r\n$0\r\n\r\n-ERR nope\r\n", get * 2);
        let endpoint = Endpoint::Tcp {
            host: "127.0.0.1".into(),
            addr,
        };
        let cmd: &[&[u8]] = &[b"CONFIG", b"GET", b"save"];
        let replies = query(&plan, &endpoint, &[cmd, cmd]).unwrap();
        assert_eq!(replies[0], b"*2\r\n$4\r\nsave\r\n$0\r\n\r\n");
        assert_eq!(replies[1], b"-ERR nope\r\n");

        plan.server.credentials = Some(crate::protocol::Credentials {
            user: None,
            password: "pw".into(),
        });
        let addr = fake(b"-WRONGPASS bad\r\n:1\r\n", 10);
        let endpoint = Endpoint::Tcp {
            host: "127.0.0.1".into(),
            addr,
        };
        let err = query(&plan, &endpoint, &[&[b"PING"]]).unwrap_err();
        assert!(matches!(err, QueryError::Failed(_)), "{err:?}");
        let err = err.to_string();
        assert!(
            err.contains("authentication with 127.0.0.1:") && err.contains("WRONGPASS"),
            "{err}"
        );
    }

    #[test]
    fn a_server_that_cannot_be_reached_is_told_apart() {
        // A port nothing listens on: bound, then closed.
        let addr = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap();
        let endpoint = Endpoint::Tcp {
            host: "127.0.0.1".into(),
            addr,
        };
        match query(&Plan::example(), &endpoint, &[&[b"PING"]]) {
            Err(QueryError::Unreachable { peer, why }) => {
                assert_eq!(peer, endpoint.name());
                assert_eq!(why, "connection refused");
            }
            other => panic!("{other:?}"),
        }
    }
}
