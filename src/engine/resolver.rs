//! Host names looked up off the event loop: a worker meeting a new node name (a MOVED to a
//! host it has no connection to, a refreshed slot map) asks here and goes on; a thread of
//! its own does the blocking DNS lookup, and the answer waits in a shared cache.
//!
//! IP literals need no lookup and are answered at once; so are the names cluster
//! discovery resolved before the run. Among a name's addresses the one the front end's
//! tool would take is kept ([`AddressChoice`]: IPv4 first for redis-benchmark's).

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::sync::{Arc, Mutex};
use std::thread;

use crossbeam_channel::Sender;

use crate::plan::AddressChoice;

/// What is known of a `host:port`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lookup {
    Ready(SocketAddr),
    /// Being looked up: ask again later.
    Pending,
    /// The name does not resolve.
    Failed,
}

/// A handle on the shared cache and its lookup thread; cheap to clone. The thread ends
/// when the last handle is dropped.
#[derive(Clone)]
pub struct Resolver {
    cache: Arc<Mutex<HashMap<(String, u16), Lookup>>>,
    requests: Sender<(String, u16)>,
}

impl Resolver {
    /// A resolver that already knows `known` (names resolved before the run) and picks
    /// among a new name's addresses as `choice` says.
    pub fn start(
        known: impl IntoIterator<Item = (String, u16, SocketAddr)>,
        choice: AddressChoice,
    ) -> Resolver {
        let cache: HashMap<(String, u16), Lookup> = known
            .into_iter()
            .map(|(host, port, addr)| ((host, port), Lookup::Ready(addr)))
            .collect();
        let cache = Arc::new(Mutex::new(cache));
        let (tx, rx) = crossbeam_channel::unbounded::<(String, u16)>();
        let shared = Arc::clone(&cache);
        // Without its thread a name would stay pending for ever: a failed spawn makes
        // every later name fail instead (the receiver is dropped, sends fail).
        let _ = thread::Builder::new()
            .name("kvbench-resolver".to_string())
            .spawn(move || {
                for (host, port) in rx {
                    let resolved: Vec<SocketAddr> = (host.as_str(), port)
                        .to_socket_addrs()
                        .map(Iterator::collect)
                        .unwrap_or_default();
                    let found = choice.pick(&resolved);
                    let answer = found.map_or(Lookup::Failed, Lookup::Ready);
                    shared
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .insert((host, port), answer);
                }
            });
        Resolver {
            cache,
            requests: tx,
        }
    }

    /// The address of `host:port` if known; otherwise starts its lookup and says
    /// [`Lookup::Pending`]. Never blocks on DNS.
    pub fn lookup(&self, host: &str, port: u16) -> Lookup {
        if let Ok(ip) = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<IpAddr>()
        {
            return Lookup::Ready(SocketAddr::new(ip, port));
        }
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        let key = (host.to_string(), port);
        if let Some(known) = cache.get(&key) {
            return *known;
        }
        if self.requests.send(key.clone()).is_err() {
            cache.insert(key, Lookup::Failed);
            return Lookup::Failed;
        }
        cache.insert(key, Lookup::Pending);
        Lookup::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    #[test]
    fn ip_literals_and_known_names_answer_at_once() {
        let seed: SocketAddr = ([10, 0, 0, 1], 7000).into();
        let r = Resolver::start(
            [("node-a".to_string(), 7000, seed)],
            AddressChoice::AsResolved,
        );
        assert_eq!(
            r.lookup("127.0.0.1", 7001),
            Lookup::Ready(([127, 0, 0, 1], 7001).into())
        );
        assert_eq!(
            r.lookup("::1", 7002),
            Lookup::Ready(SocketAddr::new("::1".parse().unwrap(), 7002))
        );
        assert_eq!(r.lookup("node-a", 7000), Lookup::Ready(seed));
    }

    fn settle(r: &Resolver, host: &str, port: u16) -> Lookup {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            match r.lookup(host, port) {
                Lookup::Pending if Instant::now() < deadline => {
                    thread::sleep(Duration::from_millis(5))
                }
                other => return other,
            }
        }
    }

    #[test]
    fn names_resolve_in_the_background() {
        let r = Resolver::start([], AddressChoice::Ipv4First);
        match settle(&r, "localhost", 6379) {
            Lookup::Ready(addr) => assert!(addr.ip().is_loopback()),
            other => panic!("localhost: {other:?}"),
        }
        assert_eq!(settle(&r, "no-such-host.invalid", 1), Lookup::Failed);
    }
}
