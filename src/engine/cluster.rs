//! Redis Cluster: key slots (CRC16 with `{hash tags}`), the topology read from
//! `CLUSTER SLOTS`, and parsing of `MOVED` / `ASK` redirections.
//!
//! ```text
//! slot(key) = CRC16-XMODEM(tag or key) mod 16384
//!   tag = the bytes between the first '{' and the next '}' when that is non-empty
//! CLUSTER SLOTS -> *N of [start, end, [host, port, id, ...], replica, ...]
//! -MOVED 3999 127.0.0.1:6381   (the slot lives there now: update the map, resend)
//! -ASK 3999 127.0.0.1:6381     (this one request: send ASKING + it there)
//! ```

use std::io::{self, Read, Write};
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::Arc;
use std::time::Duration;

use rustls::Error as TlsError;

use crate::engine::deadline_stream::{self, DeadlineStream};
use crate::engine::failure::describe;
use crate::engine::tls;
use crate::plan::{AddressChoice, Endpoint, Plan};
use crate::protocol::decimal;
use crate::protocol::resp::RespDecoder;
use crate::protocol::resp_value::{Value, value};
use crate::protocol::{Decode, Protocol, encode_auth, resp_encode};

/// Number of hash slots in a Redis Cluster.
pub const SLOTS: usize = 16384;

/// How long discovery may wait on the seed node, unless the plan's connection timeout
/// (`--connection-timeout`) says otherwise.
const DISCOVERY_TIMEOUT: Duration = Duration::from_secs(5);

/// The discovery's timeout: the plan's connection timeout, else [`DISCOVERY_TIMEOUT`].
fn discovery_timeout(plan: &Plan) -> Duration {
    plan.load
        .shape
        .connection_timeout
        .unwrap_or(DISCOVERY_TIMEOUT)
}

/// CRC16-XMODEM of every byte value: the bit-by-bit division by the polynomial
/// (0x1021), done once at compile time.
const CRC16_TABLE: [u16; 256] = {
    let mut table = [0u16; 256];
    let mut byte = 0;
    while byte < 256 {
        let mut crc = (byte as u16) << 8;
        let mut bit = 0;
        while bit < 8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ 0x1021
            } else {
                crc << 1
            };
            bit += 1;
        }
        table[byte] = crc;
        byte += 1;
    }
    table
};

/// CRC16-XMODEM (polynomial 0x1021), the checksum Redis Cluster hashes keys with: one
/// table lookup per byte. (Bit by bit, eight data-dependent branches per byte, it took
/// a third of a cluster client's user time at pipeline 16.)
fn crc16(data: &[u8]) -> u16 {
    crc16_from(0, data)
}

/// [`crc16`] of what came before (`crc`) followed by `data`.
#[inline]
fn crc16_from(crc: u16, data: &[u8]) -> u16 {
    data.iter().fold(crc, |crc, &byte| {
        (crc << 8) ^ CRC16_TABLE[usize::from((crc >> 8) as u8 ^ byte)]
    })
}

/// Hash slots of keys that start with a known prefix (`--key-prefix`): the prefix's
/// CRC is taken once, and a key hashes only what follows it. A generated key, the
/// prefix and an id of a few digits, then costs about half the table lookups.
#[derive(Clone, Debug)]
pub struct PrefixedSlots {
    prefix: Box<[u8]>,
    crc: u16,
}

impl PrefixedSlots {
    /// For keys starting with `prefix`; `None` when the prefix holds a `{` (a hash tag
    /// may open in it, so a key's slot needs all of it).
    pub fn new(prefix: &[u8]) -> Option<PrefixedSlots> {
        (!prefix.contains(&b'{')).then(|| PrefixedSlots {
            prefix: prefix.into(),
            crc: crc16(prefix),
        })
    }

    /// [`key_slot`]`(key)`.
    #[inline]
    pub fn key_slot(&self, key: &[u8]) -> u16 {
        match key.strip_prefix(&*self.prefix) {
            // No `{` in the prefix or after it: no hash tag.
            Some(rest) if !rest.contains(&b'{') => crc16_from(self.crc, rest) % SLOTS as u16,
            _ => key_slot(key),
        }
    }

    /// The slot of a generated key: the prefix and `key_id`'s decimal digits, hashed
    /// without the key being written out (the plain path writes it straight into the
    /// request, after routing).
    #[inline]
    pub fn id_slot(&self, key_id: u64) -> u16 {
        let mut digits = [0u8; 24];
        let len = decimal::decimal_digits(key_id);
        decimal::write_digits(&mut digits, 0, key_id, len);
        crc16_from(self.crc, &digits[..len]) % SLOTS as u16
    }
}

/// The hash slot of `key`, honouring `{hash tags}`.
#[inline]
pub fn key_slot(key: &[u8]) -> u16 {
    let hashed = match key.iter().position(|&b| b == b'{') {
        Some(open) => match key[open + 1..].iter().position(|&b| b == b'}') {
            Some(len) if len > 0 => &key[open + 1..open + 1 + len],
            _ => key,
        },
        None => key,
    };
    crc16(hashed) % SLOTS as u16
}

/// A hash tag of 1 to 3 bytes: `bytes[..len]`.
pub type SlotTag = ([u8; 3], u8);

/// For every hash slot, the first tag that hashes to it in shortlex order over
/// `alphabet`: one-character tags first, then two, then three, each length in the
/// alphabet's order with the last character varying fastest. Load tools name keys
/// `{tag}` to aim them at a slot; which tag each tool picks is this search over its own
/// alphabet (which must not hold `{` or `}`). `None` when three characters of `alphabet`
/// do not reach every slot.
pub fn shortest_slot_tags(alphabet: &[u8]) -> Option<Vec<SlotTag>> {
    let mut tags = vec![([0u8; 3], 0u8); SLOTS];
    let mut missing = SLOTS;
    let mut candidate = [0u8; 3];
    for len in 1..=3usize {
        let combinations = alphabet.len().pow(len as u32);
        for mut n in 0..combinations {
            for i in (0..len).rev() {
                candidate[i] = alphabet[n % alphabet.len()];
                n /= alphabet.len();
            }
            let slot = usize::from(key_slot(&candidate[..len]));
            if tags[slot].1 == 0 {
                tags[slot] = (candidate, len as u8);
                missing -= 1;
                if missing == 0 {
                    return Some(tags);
                }
            }
        }
    }
    None
}

/// One master node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    pub host: String,
    pub port: u16,
    pub addr: SocketAddr,
}

impl Node {
    /// `host:port`, for messages and for matching redirections.
    pub fn name(&self) -> String {
        format!("{}:{}", self.host, self.port)
    }

    pub fn endpoint(&self) -> Endpoint {
        Endpoint::Tcp {
            host: self.host.clone(),
            addr: self.addr,
        }
    }
}

/// Which master owns each slot.
#[derive(Clone, Debug)]
pub struct Topology {
    pub nodes: Vec<Node>,
    /// Index into `nodes` per slot; `u16::MAX` for a slot no master serves. Shared: a
    /// cluster client routes by it until a redirection makes it keep its own, so one
    /// 32 KB map stays in the cache for all of a run's clients, not one per client.
    pub slot_owner: Arc<Vec<u16>>,
}

/// A `MOVED` or `ASK` error reply, parsed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Redirect {
    Moved {
        slot: u16,
        host: String,
        port: u16,
    },
    Ask {
        slot: u16,
        host: String,
        port: u16,
    },
    /// `-TRYAGAIN`: a multi-key request whose keys are split by a slot migration; the
    /// same node, later.
    TryAgain,
}

/// Parses the text of an error reply as a redirection, if it is one.
pub fn parse_redirect(text: &[u8]) -> Option<Redirect> {
    if text.starts_with(b"TRYAGAIN") {
        return Some(Redirect::TryAgain);
    }
    let text = std::str::from_utf8(text).ok()?;
    let mut parts = text.split_ascii_whitespace();
    let kind = parts.next()?;
    let slot: u16 = parts
        .next()?
        .parse()
        .ok()
        .filter(|&s| usize::from(s) < SLOTS)?;
    let (host, port) = parts.next()?.rsplit_once(':')?;
    let port: u16 = port.parse().ok()?;
    let host = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_string();
    match kind {
        "MOVED" => Some(Redirect::Moved { slot, host, port }),
        "ASK" => Some(Redirect::Ask { slot, host, port }),
        _ => None,
    }
}

/// Resolves a node's address, picked among the name's as `choice` says (blocking: before
/// the run only; the event loops ask [`crate::engine::resolver::Resolver`]).
fn resolve_node(host: &str, port: u16, choice: AddressChoice) -> Option<Node> {
    let resolved: Vec<SocketAddr> = (host, port).to_socket_addrs().ok()?.collect();
    let addr = choice.pick(&resolved)?;
    Some(Node {
        host: host.to_string(),
        port,
        addr,
    })
}

/// Reads the topology from the seed node with `CLUSTER SLOTS` (authenticating first
/// when `-a` was given). A blocking exchange, done once before the run starts.
pub fn discover(plan: &Plan) -> Result<Topology, String> {
    let Endpoint::Tcp { host, addr } = &plan.server.endpoint else {
        return Err("cluster mode needs a TCP server address, not a Unix socket".to_string());
    };
    let peer = format!("{host}:{}", addr.port());
    let timeout = discovery_timeout(plan);
    let stream = deadline_stream::connect(addr, timeout)
        .map_err(|e| format!("cannot connect to {peer}: {}", describe(&e)))?;
    let _ = stream.set_nodelay(true);
    // The handshake, then the CLUSTER SLOTS exchange, each within the timeout as a whole.
    let mut stream = DeadlineStream::new(stream, timeout);
    match &plan.server.tls {
        Some(tls) => {
            let mut session = rustls::ClientConnection::new(
                Arc::clone(&tls.client_config),
                tls.server_name.clone(),
            )
            .map_err(|e| format!("TLS with {peer} failed: {e}"))?;
            // The handshake on its own, so that a failure reads as one (a plaintext port
            // stays silent until the timeout), not as a failed CLUSTER SLOTS.
            while session.is_handshaking() {
                session.complete_io(&mut stream).map_err(|e| {
                    format!(
                        "TLS handshake with {peer} failed: {}",
                        tls::blocking_handshake_problem(
                            tls,
                            plan.names,
                            &e,
                            discovery_timeout(plan)
                        )
                    )
                })?;
            }
            stream.restart();
            let mut stream = rustls::StreamOwned::new(session, stream);
            ask_slots(&mut stream, plan, host, &peer)
        }
        None => ask_slots(&mut stream, plan, host, &peer),
    }
}

/// Sends AUTH (if any) and `CLUSTER SLOTS` over `stream` and builds the topology.
fn ask_slots(
    stream: &mut (impl Read + Write),
    plan: &Plan,
    host: &str,
    peer: &str,
) -> Result<Topology, String> {
    let mut request = Vec::new();
    if let Some(credentials) = &plan.server.credentials {
        encode_auth(&mut request, Protocol::Redis, credentials);
    }
    resp_encode::encode_command(&mut request, &[b"CLUSTER", b"SLOTS"]);
    stream
        .write_all(&request)
        .map_err(|e| format!("cannot send CLUSTER SLOTS to {peer}: {e}"))?;
    let replies = if plan.server.credentials.is_some() {
        2
    } else {
        1
    };
    let mut buf = Vec::with_capacity(16 * 1024);
    let mut chunk = [0u8; 16 * 1024];
    let mut decoder = RespDecoder::new();
    // Where each complete reply ends in `buf`.
    let mut ends = Vec::new();
    while ends.len() < replies {
        let n = stream.read(&mut chunk).map_err(|e| match e.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => format!(
                "no answer to CLUSTER SLOTS from {peer} within {} s ({})",
                discovery_timeout(plan).as_secs_f64(),
                plan.names.connection_timeout
            ),
            // TLS 1.3 finishes the client's handshake before the server has judged its
            // certificate: a refusal comes as an alert on this first read.
            _ => match &plan.server.tls {
                Some(tls) if e.get_ref().is_some_and(|inner| inner.is::<TlsError>()) => format!(
                    "TLS handshake with {peer} failed: {}",
                    tls::blocking_handshake_problem(tls, plan.names, &e, discovery_timeout(plan))
                ),
                None if e.kind() == io::ErrorKind::ConnectionReset && buf.is_empty() => format!(
                    "no answer to CLUSTER SLOTS from {peer}: {}; if this port expects TLS, add {}",
                    describe(&e),
                    plan.names.tls
                ),
                _ => format!("no answer to CLUSTER SLOTS from {peer}: {}", describe(&e)),
            },
        })?;
        if n == 0 {
            let hint = match (&plan.server.tls, buf.is_empty()) {
                (None, true) => format!(
                    " before any reply; if this port expects TLS, add {}",
                    plan.names.tls
                ),
                _ => String::new(),
            };
            return Err(format!(
                "{peer} closed the connection during cluster discovery{hint}"
            ));
        }
        buf.extend_from_slice(&chunk[..n]);
        while ends.len() < replies {
            let start = ends.last().copied().unwrap_or(0);
            match decoder.decode(&buf[start..]) {
                Decode::Complete(reply) => ends.push(start + reply.len),
                Decode::Incomplete => break,
                Decode::Invalid(why) => {
                    return Err(format!(
                        "invalid reply from {peer} during cluster discovery: {why}"
                    ));
                }
            }
        }
    }
    let reply_at = |i: usize| {
        let start = if i == 0 { 0 } else { ends[i - 1] };
        value(&buf[start..ends[i]]).map(|(v, _)| v)
    };
    if replies == 2
        && let Some(Value::Error(e)) = reply_at(0)
    {
        return Err(format!(
            "authentication with {peer} failed: {}",
            String::from_utf8_lossy(e)
        ));
    }
    match reply_at(replies - 1) {
        Some(Value::Error(e)) if e.starts_with(b"NOAUTH") => Err(format!(
            "server {peer} requires authentication: use {}",
            plan.names.authenticate
        )),
        Some(Value::Error(e)) => Err(format!(
            "CLUSTER SLOTS failed on {peer}: {} (is it a cluster node? drop {} otherwise)",
            String::from_utf8_lossy(e),
            plan.names.cluster_mode
        )),
        Some(value) => slot_map(&value, host)
            .and_then(|map| Topology::resolve(map, plan.server.address_choice)),
        None => Err(format!("no answer to CLUSTER SLOTS from {peer}")),
    }
}

/// Which node owns each slot, by name: a `CLUSTER SLOTS` reply read, nothing resolved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SlotMap {
    /// `(host, port)` of each master.
    pub nodes: Vec<(String, u16)>,
    /// Index into `nodes` per slot; `u16::MAX` for a slot no master serves.
    pub slot_owner: Vec<u16>,
}

/// Reads the slot map of a `CLUSTER SLOTS` reply; `seed_host` stands in for the empty
/// host name a node reports for itself.
pub fn slot_map(reply: &Value, seed_host: &str) -> Result<SlotMap, String> {
    let Value::Array(ranges) = reply else {
        return Err("CLUSTER SLOTS did not answer an array".to_string());
    };
    let mut map = SlotMap {
        nodes: Vec::new(),
        slot_owner: vec![u16::MAX; SLOTS],
    };
    for range in ranges {
        let Value::Array(fields) = range else {
            continue;
        };
        let (Some(Value::Int(start)), Some(Value::Int(end)), Some(Value::Array(master))) =
            (fields.first(), fields.get(1), fields.get(2))
        else {
            return Err("CLUSTER SLOTS entry is not [start, end, [host, port, ...]]".to_string());
        };
        let host = match master.first() {
            Some(Value::Bulk(h)) if !h.is_empty() && *h != b"?" => {
                String::from_utf8_lossy(h).into_owned()
            }
            _ => seed_host.to_string(),
        };
        let Some(Value::Int(port)) = master.get(1) else {
            return Err("CLUSTER SLOTS node has no port".to_string());
        };
        let port = u16::try_from(*port).map_err(|_| format!("bad port {port} in CLUSTER SLOTS"))?;
        let index = match map.nodes.iter().position(|(h, p)| *h == host && *p == port) {
            Some(i) => i,
            None => {
                // Owners are u16 indices and u16::MAX means "no master": a reply naming
                // more nodes than that (later ranges taking the slots of earlier ones)
                // would wrap an index onto another node.
                if map.nodes.len() >= usize::from(u16::MAX - 1) {
                    return Err(format!(
                        "CLUSTER SLOTS names more than {} nodes",
                        u16::MAX - 1
                    ));
                }
                map.nodes.push((host, port));
                map.nodes.len() - 1
            }
        };
        if *start < 0 || *end < 0 {
            return Err(format!("bad slot range {start}-{end} in CLUSTER SLOTS"));
        }
        let (start, end) = (*start as usize, *end as usize);
        if start > end || end >= SLOTS {
            return Err(format!("bad slot range {start}-{end} in CLUSTER SLOTS"));
        }
        for owner in &mut map.slot_owner[start..=end] {
            *owner = index as u16;
        }
    }
    if map.nodes.is_empty() {
        return Err("the cluster has no slots assigned (CLUSTER SLOTS is empty)".to_string());
    }
    Ok(map)
}

impl Topology {
    /// Resolves every master of `map`, each name's address picked as `choice` says (a
    /// blocking lookup: before the run only).
    pub fn resolve(map: SlotMap, choice: AddressChoice) -> Result<Topology, String> {
        let nodes = map
            .nodes
            .iter()
            .map(|(host, port)| {
                resolve_node(host, *port, choice)
                    .ok_or_else(|| format!("cannot resolve cluster node {host}:{port}"))
            })
            .collect::<Result<_, _>>()?;
        Ok(Topology {
            nodes,
            slot_owner: Arc::new(map.slot_owner),
        })
    }

    /// The same cluster with its masters in the order `order` gives (positions in
    /// `nodes`; masters it leaves out follow in their own order), the slot map renumbered
    /// to match. Which master a client pinned by its index gets follows this order.
    pub fn reordered(&self, order: &[usize]) -> Topology {
        let n = self.nodes.len();
        let mut new_order: Vec<usize> = Vec::with_capacity(n);
        for i in order.iter().copied().chain(0..n) {
            if i < n && !new_order.contains(&i) {
                new_order.push(i);
            }
        }
        let mut new_index = vec![u16::MAX; self.nodes.len()];
        for (new, &old) in new_order.iter().enumerate() {
            new_index[old] = new as u16;
        }
        Topology {
            nodes: new_order.iter().map(|&i| self.nodes[i].clone()).collect(),
            slot_owner: Arc::new(
                self.slot_owner
                    .iter()
                    .map(|&owner| new_index.get(usize::from(owner)).copied().unwrap_or(owner))
                    .collect(),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_crc_is_the_bitwise_one() {
        // The definition, bit by bit, against the table over every one- and two-byte
        // input and a memtier-style key.
        fn bitwise(data: &[u8]) -> u16 {
            let mut crc: u16 = 0;
            for &byte in data {
                crc ^= u16::from(byte) << 8;
                for _ in 0..8 {
                    crc = if crc & 0x8000 != 0 {
                        (crc << 1) ^ 0x1021
                    } else {
                        crc << 1
                    };
                }
            }
            crc
        }
        for a in 0..=255u8 {
            assert_eq!(crc16(&[a]), bitwise(&[a]));
            for b in 0..=255u8 {
                assert_eq!(crc16(&[a, b]), bitwise(&[a, b]));
            }
        }
        assert_eq!(crc16(b"memtier-1234567"), bitwise(b"memtier-1234567"));
        assert_eq!(crc16(b""), 0);
    }

    #[test]
    fn a_prefix_hashed_once_gives_every_key_its_slot() {
        let slots = PrefixedSlots::new(b"memtier-").expect("no brace");
        for key in [
            &b"memtier-1"[..],
            b"memtier-1234567",
            b"memtier-",
            b"memtier-{tag}x",
            b"memtier-12{}3",
            b"memtie",
            b"other-99",
            b"{user1000}.following",
        ] {
            assert_eq!(slots.key_slot(key), key_slot(key), "{key:?}");
        }
        for id in decimal::test_ids() {
            let key = format!("memtier-{id}");
            assert_eq!(slots.id_slot(id), key_slot(key.as_bytes()), "{key}");
        }
        assert!(PrefixedSlots::new(b"{tag}-").is_none());
        let empty = PrefixedSlots::new(b"").expect("no brace");
        assert_eq!(empty.key_slot(b"foo"), 12182);
    }

    #[test]
    fn slots_match_redis() {
        // Values from the Redis Cluster specification and `CLUSTER KEYSLOT`.
        assert_eq!(crc16(b"123456789"), 0x31C3);
        assert_eq!(key_slot(b"foo"), 12182);
        assert_eq!(key_slot(b"bar"), 5061);
        assert_eq!(key_slot(b"{user1000}.following"), key_slot(b"user1000"));
        assert_eq!(
            key_slot(b"{user1000}.followers"),
            key_slot(b"{user1000}.following")
        );
        // An empty tag hashes the whole key.
        assert_eq!(key_slot(b"foo{}{bar}"), crc16(b"foo{}{bar}") % 16384);
        assert_eq!(key_slot(b"foo{{bar}}zap"), key_slot(b"{bar"));
    }

    #[test]
    fn shortest_slot_tags_reach_every_slot_in_shortlex_order() {
        let alphanumerics = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
        let tags = shortest_slot_tags(alphanumerics).expect("62^3 tags reach every slot");
        for (slot, (bytes, len)) in tags.iter().enumerate() {
            let tag = &bytes[..usize::from(*len)];
            assert_eq!(usize::from(key_slot(tag)), slot, "{tag:?}");
        }
        // A one-digit tag keeps its own slot; no slot gets a longer tag than it needs.
        let seven = usize::from(key_slot(b"7"));
        assert_eq!(tags[seven], (*b"7\0\0", 1));
        // 10 + 100 + 1000 tags cannot reach 16384 slots.
        assert_eq!(shortest_slot_tags(b"0123456789"), None);
    }

    /// Found reviewing what the cluster fuzz target asserts (every owner a listed node or
    /// none), out of its reach (the reply is megabytes): 65 535 nodes, each given slot 0
    /// in turn, wrapped the last index onto the "no master" mark.
    #[test]
    fn a_reply_naming_more_nodes_than_indices_is_refused() {
        let hosts: Vec<Vec<u8>> = (0..u32::from(u16::MAX) + 1)
            .map(|i| format!("10.{}.{}.1", i >> 8, i & 0xff).into_bytes())
            .collect();
        fn range(host: &[u8]) -> Value<'_> {
            Value::Array(vec![
                Value::Int(0),
                Value::Int(0),
                Value::Array(vec![Value::Bulk(host), Value::Int(7000)]),
            ])
        }
        let reply = |n: usize| Value::Array(hosts[..n].iter().map(|h| range(h)).collect());
        let map = slot_map(&reply(usize::from(u16::MAX) - 1), "seed").expect("65534 nodes");
        assert_eq!(usize::from(map.slot_owner[0]), map.nodes.len() - 1);
        let err = slot_map(&reply(usize::from(u16::MAX)), "seed").expect_err("65535 nodes");
        assert!(err.contains("more than 65534 nodes"), "{err}");
    }

    #[test]
    fn redirects_parse() {
        assert_eq!(
            parse_redirect(b"MOVED 3999 127.0.0.1:6381"),
            Some(Redirect::Moved {
                slot: 3999,
                host: "127.0.0.1".into(),
                port: 6381
            })
        );
        assert_eq!(
            parse_redirect(b"ASK 12 [::1]:7000"),
            Some(Redirect::Ask {
                slot: 12,
                host: "::1".into(),
                port: 7000
            })
        );
        assert_eq!(parse_redirect(b"ERR unknown command"), None);
        // Redis 7 may leave the host out: "the address you reached me by".
        assert_eq!(
            parse_redirect(b"MOVED 7 :7001"),
            Some(Redirect::Moved {
                slot: 7,
                host: String::new(),
                port: 7001
            })
        );
    }

    #[test]
    fn cluster_slots_reply_builds_the_map() {
        let reply = b"*2\r\n*3\r\n:0\r\n:8191\r\n*3\r\n$9\r\n127.0.0.1\r\n:7000\r\n$4\r\nabcd\r\n\
*4\r\n:8192\r\n:16383\r\n*2\r\n$0\r\n\r\n:7001\r\n*2\r\n$9\r\n127.0.0.1\r\n:7002\r\n";
        let (slots, used) = value(reply).expect("complete reply");
        assert_eq!(used, reply.len());
        let map = slot_map(&slots, "127.0.0.1").expect("valid slot map");
        assert_eq!(
            map.nodes,
            [
                ("127.0.0.1".to_string(), 7000),
                ("127.0.0.1".to_string(), 7001)
            ]
        );
        let topo = Topology::resolve(map, AddressChoice::AsResolved).expect("resolves");
        assert_eq!(topo.nodes[1].port, 7001);
        assert_eq!(topo.slot_owner[0], 0);
        assert_eq!(topo.slot_owner[8191], 0);
        assert_eq!(topo.slot_owner[8192], 1);
        assert_eq!(topo.slot_owner[16383], 1);
        // Reordered: the second master first, the slot map renumbered with it.
        let swapped = topo.reordered(&[1]);
        assert_eq!(swapped.nodes[0].port, topo.nodes[1].port);
        assert_eq!(swapped.nodes[1].port, topo.nodes[0].port);
        assert_eq!(swapped.slot_owner[0], 1);
        assert_eq!(swapped.slot_owner[16383], 0);
        assert_eq!(topo.reordered(&[0, 1, 7]).slot_owner, topo.slot_owner);
        assert!(value(&reply[..reply.len() - 3]).is_none());
        assert_eq!(parse_redirect(b"MOVED 20000 127.0.0.1:7000"), None);
    }
}
