//! A pool of servers without a cluster protocol (memcached pools, client-side sharded
//! Redis): its members and where each key goes, as libmemcached computes it, so keys
//! land where production clients put them.
//!
//! ```text
//! ketama (libmemcached's MEMCACHED_BEHAVIOR_KETAMA_WEIGHTED, twemproxy's ketama + md5):
//!   points per server  floor(w / W * 160 / 4 * servers + 1e-10) * 4   (f32, as in C)
//!   point names        "host:port-i" for i in 0..points/4  ("host-i" on port 11211)
//!   point values       MD5(name), the 4 little-endian u32 words of the digest
//!   key hash           the first little-endian u32 word of MD5(key)
//!   key -> server      the first point >= hash on the sorted ring, else the first
//! modula (libmemcached's default distribution and hash):
//!   key -> server      one_at_a_time(key) mod servers (weights not used)
//! ```
//!
//! twemproxy names a server "host:port" on every port, so on port 11211 its ring
//! differs from libmemcached's; on every other port the two agree.

mod md5;

use crate::plan::Endpoint;

/// memcached's port, which libmemcached leaves out of ketama point names.
const MEMCACHED_DEFAULT_PORT: u16 = 11211;
/// Points per server on an unweighted ring (40 digests of 4 points).
const POINTS_PER_SERVER: f32 = 160.0;
/// Points taken from one MD5 digest.
const POINTS_PER_HASH: u32 = 4;

/// How keys are spread over the pool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Distribution {
    /// Consistent hashing on an MD5 ring (weights honoured).
    Ketama,
    /// Hash modulo the number of servers.
    Modula,
}

impl Distribution {
    /// The name the flags use.
    pub fn name(self) -> &'static str {
        match self {
            Distribution::Ketama => "ketama",
            Distribution::Modula => "modula",
        }
    }
}

/// One server of a pool.
#[derive(Clone, Debug)]
pub struct Member {
    pub endpoint: Endpoint,
    /// Its share of the ring relative to the others (1 when not given).
    pub weight: u32,
}

/// The pool: its members in the order given and the ring that places keys.
#[derive(Clone, Debug)]
pub struct Pool {
    pub members: Vec<Member>,
    pub distribution: Distribution,
    /// Ketama: (point, member index), sorted by point.
    ring: Vec<(u32, u16)>,
}

impl Pool {
    /// A pool of `members` (at least one, TCP, weights at least 1), its ring computed.
    pub fn new(members: Vec<Member>, distribution: Distribution) -> Pool {
        let ring = match distribution {
            Distribution::Ketama => ketama_ring(&members),
            Distribution::Modula => Vec::new(),
        };
        Pool {
            members,
            distribution,
            ring,
        }
    }

    /// The member a key belongs to.
    pub fn member_of(&self, key: &[u8]) -> usize {
        if self.members.len() <= 1 {
            return 0;
        }
        match self.distribution {
            Distribution::Ketama => {
                let hash = ketama_word(&md5::digest(key), 0);
                let i = self.ring.partition_point(|&(point, _)| point < hash);
                let (_, member) = self
                    .ring
                    .get(i)
                    .or(self.ring.first())
                    .copied()
                    .unwrap_or((0, 0));
                usize::from(member)
            }
            Distribution::Modula => (one_at_a_time(key) % self.members.len() as u32) as usize,
        }
    }

    /// Each member's `host:port`, in order (the report's per-server row names).
    pub fn names(&self) -> Vec<String> {
        self.members.iter().map(|m| m.endpoint.name()).collect()
    }
}

/// Word `n` (0..4) of a digest, little endian: ketama's point value.
fn ketama_word(digest: &[u8; 16], n: usize) -> u32 {
    u32::from_le_bytes([
        digest[n * 4],
        digest[n * 4 + 1],
        digest[n * 4 + 2],
        digest[n * 4 + 3],
    ])
}

/// The sorted ketama ring of `members`.
fn ketama_ring(members: &[Member]) -> Vec<(u32, u16)> {
    let total: u64 = members.iter().map(|m| u64::from(m.weight)).sum();
    let servers = members.len() as f32;
    let mut ring = Vec::new();
    for (index, member) in members.iter().enumerate() {
        // Single-precision as libmemcached computes it, so rounding agrees.
        let pct = member.weight as f32 / total.max(1) as f32;
        let scaled = f64::from(pct * POINTS_PER_SERVER / POINTS_PER_HASH as f32 * servers);
        let points = (scaled + 0.000_000_000_1).floor() as u32 * POINTS_PER_HASH;
        let (host, port) = match &member.endpoint {
            Endpoint::Tcp { host, addr } => (host.as_str(), addr.port()),
            Endpoint::Unix(_) => ("", 0),
        };
        for i in 0..points / POINTS_PER_HASH {
            let name = if port == MEMCACHED_DEFAULT_PORT {
                format!("{host}-{i}")
            } else {
                format!("{host}:{port}-{i}")
            };
            let digest = md5::digest(name.as_bytes());
            for n in 0..POINTS_PER_HASH as usize {
                ring.push((ketama_word(&digest, n), index as u16));
            }
        }
    }
    ring.sort_unstable();
    ring
}

/// Bob Jenkins' one-at-a-time hash, libmemcached's default key hash.
fn one_at_a_time(key: &[u8]) -> u32 {
    let mut value: u32 = 0;
    for &b in key {
        value = value.wrapping_add(u32::from(b));
        value = value.wrapping_add(value << 10);
        value ^= value >> 6;
    }
    value = value.wrapping_add(value << 3);
    value ^= value >> 11;
    value.wrapping_add(value << 15)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::SocketAddr;

    fn member(port: u16, weight: u32) -> Member {
        Member {
            endpoint: Endpoint::Tcp {
                host: "127.0.0.1".to_string(),
                addr: SocketAddr::from(([127, 0, 0, 1], port)),
            },
            weight,
        }
    }

    #[test]
    fn equal_weights_give_160_points_each() {
        let pool = Pool::new(
            vec![member(11211, 1), member(11212, 1), member(11213, 1)],
            Distribution::Ketama,
        );
        assert_eq!(pool.ring.len(), 480);
        for m in 0..3u16 {
            assert_eq!(pool.ring.iter().filter(|p| p.1 == m).count(), 160);
        }
        assert!(pool.ring.windows(2).all(|w| w[0] <= w[1]));
    }

    #[test]
    fn weights_share_the_points() {
        let pool = Pool::new(vec![member(7001, 1), member(7002, 3)], Distribution::Ketama);
        let first = pool.ring.iter().filter(|p| p.1 == 0).count();
        let second = pool.ring.iter().filter(|p| p.1 == 1).count();
        assert_eq!((first, second), (80, 240));
    }

    #[test]
    fn a_key_goes_to_the_first_point_at_or_after_its_hash() {
        let pool = Pool::new(vec![member(7001, 1), member(7002, 1)], Distribution::Ketama);
        for key in [&b"a"[..], b"memtier-1", b"memtier-99999", b""] {
            let hash = ketama_word(&md5::digest(key), 0);
            let want = pool
                .ring
                .iter()
                .find(|p| p.0 >= hash)
                .unwrap_or(&pool.ring[0])
                .1;
            assert_eq!(pool.member_of(key), usize::from(want));
        }
    }

    #[test]
    fn one_at_a_time_known_values() {
        // Values from the published algorithm (Bob Jenkins): "a" and the empty key.
        assert_eq!(one_at_a_time(b""), 0);
        assert_eq!(one_at_a_time(b"a"), 0xca2e_9442);
    }

    #[test]
    fn modula_spreads_and_one_server_takes_all() {
        let pool = Pool::new(
            vec![member(1, 1), member(2, 1), member(3, 1)],
            Distribution::Modula,
        );
        let mut seen = [0; 3];
        for i in 0..300 {
            seen[pool.member_of(format!("memtier-{i}").as_bytes())] += 1;
        }
        assert!(seen.iter().all(|&n| n > 50), "{seen:?}");
        let single = Pool::new(vec![member(1, 1)], Distribution::Ketama);
        assert_eq!(single.member_of(b"anything"), 0);
    }
}
