//! What redis-benchmark reads from the servers before the tests, through the engine's
//! one-shot queries: `CONFIG GET save` / `appendonly` for each block's "host
//! configuration" lines (per master in cluster mode; a server that refuses is left out
//! with a warning, but a refused `AUTH` or a `NOAUTH` ends the run before any test, as
//! redis-benchmark does), and in cluster mode each master's node ID for the banner
//! (`CLUSTER NODES`).

use super::render::{HostConfig, MasterInfo, ServerInfo};
use crate::engine::Prepared;
use crate::engine::cluster::Node;
use crate::engine::query::{QueryError, query, query_with_auth};
use crate::error::Error;
use crate::plan::{Endpoint, Plan};
use crate::protocol::resp_value::{Value, value};
use crate::signals;

/// The configuration of the server (or of each master), warning on stderr, in
/// redis-benchmark's words, about any that could not be read. `Err` is redis-benchmark's
/// text for a server that refused the credentials (or wants some): `Node host:port
/// replied with error:` and the server's error on the next line, or for one it could not
/// reach (`Could not connect to Redis at host:port: why`); the run ends there.
/// `masters` is [`ordered_masters`]'s list (empty for one server).
pub fn read_server_info(plan: &Plan, masters: &[Master]) -> Result<ServerInfo, String> {
    if !plan.server.cluster_mode {
        let config = host_config(plan, &plan.server.endpoint)?;
        if config.is_none() {
            eprintln_safe!("WARNING: Could not fetch server CONFIG");
        }
        return Ok(ServerInfo::Single(config));
    }
    let mut configs = Vec::new();
    for (node, _) in masters {
        let config = host_config(plan, &node.endpoint())?;
        if config.is_none() {
            eprintln_safe!("WARNING: Could not fetch node CONFIG {}", node.name());
        }
        configs.push(config);
    }
    Ok(ServerInfo::Cluster(configs))
}

/// The server as redis-benchmark names it in `Could not connect to Redis at …`: the host
/// as given and the port, an IPv6 address without brackets (`::1:6379`), or the socket
/// path.
pub fn hiredis_name(endpoint: &Endpoint) -> String {
    match endpoint {
        Endpoint::Tcp { host, addr } => format!("{host}:{}", addr.port()),
        Endpoint::Unix(_) => endpoint.name(),
    }
}

/// A reason in kvbench's words (`connection refused`) as strerror words it and
/// redis-benchmark prints it (`Connection refused`).
pub fn as_strerror(why: impl Into<String>) -> String {
    let mut why = why.into();
    if let Some(first) = why.get_mut(..1) {
        first.make_ascii_uppercase();
    }
    why
}

/// `CONFIG GET save` and `CONFIG GET appendonly` from one server, after `AUTH` when the
/// plan has credentials; `Ok(None)` when they cannot be read, `Err` when the server
/// cannot be reached, refused the `AUTH` or answered `NOAUTH`.
fn host_config(plan: &Plan, endpoint: &Endpoint) -> Result<Option<HostConfig>, String> {
    let config_get: [&[&[u8]]; 2] = [
        &[b"CONFIG", b"GET", b"save"],
        &[b"CONFIG", b"GET", b"appendonly"],
    ];
    // The AUTH's own reply, so that a refusal is shown in the server's words.
    let (auth_reply, replies) = match query_with_auth(plan, endpoint, &config_get) {
        Ok(answered) => answered,
        // redis-benchmark's line for a server it cannot reach; the tests would connect
        // the same way, so the run ends here rather than after a second wait.
        Err(QueryError::Unreachable { why, .. }) => {
            // One line, whatever the socket path holds (control characters escaped).
            let why = as_strerror(why);
            let peer = hiredis_name(endpoint);
            let line = Error::run(format!("Could not connect to Redis at {peer}: {why}"));
            return Err(line.to_string());
        }
        // Ctrl-C ended the wait: no warning about the CONFIG, the caller stops.
        Err(QueryError::Failed(why)) if signals::received().is_some() => return Err(why),
        Err(QueryError::Failed(_)) => return Ok(None),
    };
    if let Some(text) = auth_reply.as_deref().and_then(error_text) {
        return Err(refused(endpoint, &text));
    }
    let Some(save_reply) = replies.first() else {
        return Ok(None);
    };
    if let Some(text) = error_text(save_reply) {
        return if text.starts_with("NOAUTH") {
            Err(refused(endpoint, &text))
        } else {
            Ok(None)
        };
    }
    Ok(host_config_from(&replies))
}

/// The configuration in the replies to `CONFIG GET save` and `CONFIG GET appendonly`.
fn host_config_from(replies: &[Vec<u8>]) -> Option<HostConfig> {
    Some(HostConfig {
        save: config_value(replies.first()?)?,
        appendonly: config_value(replies.get(1)?)?,
    })
}

/// The text of an error reply; `None` for any other reply.
fn error_text(reply: &[u8]) -> Option<String> {
    match value(reply)?.0 {
        Value::Error(text) => Some(String::from_utf8_lossy(text).into_owned()),
        _ => None,
    }
}

/// redis-benchmark's two lines for a server that refused to let it in.
fn refused(endpoint: &Endpoint, error: &str) -> String {
    format!("Node {} replied with error:\n{error}", endpoint.name())
}

/// The value of a `CONFIG GET name` reply (`*2 name value`, or a RESP3 map).
fn config_value(reply: &[u8]) -> Option<String> {
    match value(reply)?.0 {
        Value::Array(items) => match items.get(1)? {
            Value::Bulk(v) | Value::Simple(v) => Some(String::from_utf8_lossy(v).into_owned()),
            _ => None,
        },
        _ => None,
    }
}

/// The `--cluster` banner's lines for [`ordered_masters`]'s list.
pub fn banner_masters(masters: &[Master]) -> Vec<MasterInfo> {
    masters
        .iter()
        .map(|(node, name)| MasterInfo {
            name: name.clone(),
            host: node.host.clone(),
            port: node.port,
        })
        .collect()
}

/// A cluster master and its node ID, when `CLUSTER NODES` names it.
pub type Master<'a> = (&'a Node, Option<String>);

/// The cluster's masters in redis-benchmark's order (its banner's `Master i`, its blocks'
/// `node [i]`, and which master its `i`-th client talks to): as the seed's
/// `CLUSTER NODES` lists them, the seed itself where its `myself` line falls. Puts the
/// prepared masters in that order and returns them with their node IDs.
/// Asked once, before the banner: the banner and the blocks' lines share the list.
pub fn order_masters<'a>(plan: &Plan, prepared: &'a mut Prepared) -> Vec<Master<'a>> {
    let nodes_text = query(plan, &plan.server.endpoint, &[&[b"CLUSTER", b"NODES"]])
        .ok()
        .and_then(|replies| {
            replies.first().and_then(|r| match value(r)?.0 {
                Value::Bulk(text) | Value::Other(text) => {
                    Some(String::from_utf8_lossy(text).into_owned())
                }
                _ => None,
            })
        })
        .unwrap_or_default();
    for node in slotless_masters(&nodes_text) {
        eprintln_safe!("WARNING: Master node {node} has no slots, skipping...");
    }
    let mut listed: Vec<(Option<NodeLine>, usize)> = prepared
        .masters()
        .iter()
        .enumerate()
        .map(|(i, node)| (node_line(&nodes_text, &node.host, node.port), i))
        .collect();
    // Stable: masters CLUSTER NODES does not name keep their order, after the rest.
    listed.sort_by_key(|(line, _)| line.as_ref().map_or(usize::MAX, |l| l.index));
    let order: Vec<usize> = listed.iter().map(|(_, i)| *i).collect();
    prepared.order_masters(&order);
    prepared
        .masters()
        .iter()
        .zip(listed)
        .map(|(node, (line, _))| (node, line.map(|l| l.id)))
        .collect()
}

/// A node's line in `CLUSTER NODES`.
struct NodeLine {
    /// Its place among the lines.
    index: usize,
    id: String,
}

/// The line `CLUSTER NODES` gives the node at `host:port`
/// (`<id> <ip:port@cport[,hostname]> <flags> ...`): `host` is its address, or the
/// hostname it announces (what `CLUSTER SLOTS` gives under
/// `cluster-preferred-endpoint-type hostname`).
fn node_line(nodes: &str, host: &str, port: u16) -> Option<NodeLine> {
    let wanted = format!("{host}:{port}");
    nodes.lines().enumerate().find_map(|(index, line)| {
        let mut fields = line.split_whitespace();
        let id = fields.next()?;
        let addr = fields.next()?;
        let ip_port = addr.split(['@', ',']).next()?;
        let announced = addr.split_once(',').map(|(_, name)| name);
        let by_name = announced.is_some_and(|name| {
            ip_port
                .rsplit_once(':')
                .is_some_and(|(_, p)| format!("{name}:{p}") == wanted)
        });
        (ip_port == wanted || by_name).then(|| NodeLine {
            index,
            id: id.to_string(),
        })
    })
}

/// The masters `CLUSTER NODES` lists without a slot (`ip:port`): no client is given
/// one, and redis-benchmark says so.
fn slotless_masters(nodes: &str) -> Vec<&str> {
    nodes
        .lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let master = fields.get(2)?.split(',').any(|flag| flag == "master");
            let ip_port = fields.get(1)?.split(['@', ',']).next()?;
            (master && fields.len() <= 8).then_some(ip_port)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_replies_and_node_ids() {
        assert_eq!(
            config_value(b"*2\r\n$4\r\nsave\r\n$0\r\n\r\n").as_deref(),
            Some("")
        );
        assert_eq!(
            config_value(b"%1\r\n$10\r\nappendonly\r\n$2\r\nno\r\n").as_deref(),
            Some("no")
        );
        assert_eq!(config_value(b"-ERR unknown\r\n"), None);
        assert_eq!(
            error_text(b"-NOAUTH Authentication required.\r\n").as_deref(),
            Some("NOAUTH Authentication required.")
        );
        assert_eq!(error_text(b"+OK\r\n"), None);
        let nodes = "b596 127.0.0.1:17103@27103 myself,master - 0 0 1 connected 0-5460\n\
                     c1d2 127.0.0.1:17102@27102,host.example master - 0 0 2 connected 5461-10922\n";
        let c1d2 = node_line(nodes, "127.0.0.1", 17102).expect("c1d2's line");
        assert_eq!((c1d2.index, c1d2.id.as_str()), (1, "c1d2"));
        let b596 = node_line(nodes, "127.0.0.1", 17103).expect("b596's line");
        assert_eq!((b596.index, b596.id.as_str()), (0, "b596"));
        assert!(node_line(nodes, "127.0.0.1", 1).is_none());
        // By the hostname it announces, as CLUSTER SLOTS names it then.
        let by_name = node_line(nodes, "host.example", 17102).expect("c1d2 by its hostname");
        assert_eq!(by_name.id, "c1d2");
        assert!(node_line(nodes, "host.example", 17103).is_none());
    }

    #[test]
    fn masters_without_slots_are_named() {
        let nodes = "b596 127.0.0.1:17103@27103 myself,master - 0 0 1 connected 0-16383
                     c1d2 127.0.0.1:17102@27102 master - 0 0 2 connected
                     e3f4 127.0.0.1:17104@27104 slave b596 0 0 1 connected
";
        assert_eq!(slotless_masters(nodes), ["127.0.0.1:17102"]);
    }
}
