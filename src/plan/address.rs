//! Which of the addresses a host name resolves to a connection goes to. Each tool kvbench
//! stands in for picks its own way, and on a machine whose `localhost` resolves to `::1`
//! first and `127.0.0.1` second the difference decides whether a server listening on one
//! family only is reached:
//!
//! ```text
//! memtier_benchmark   getaddrinfo's first address, or the first of -4's / -6's family;
//!                     its cluster nodes always the first (AF_UNSPEC)   -> AsResolved, Ipv4Only, Ipv6Only
//! redis-benchmark,    hiredis: getaddrinfo for IPv4 only, and for IPv6 only when the
//! redis-cli           name has no IPv4 address                          -> Ipv4First
//! redis-zbench-go     Go's net.Dial: each address in order until one connects, those of
//!                     the first one's family before the others (RFC 6555)  -> AsResolved
//! ```
//!
//! The lookup itself is the C library's (`getaddrinfo` for both families, through std),
//! so the order the choice starts from is the one memtier and hiredis see.

use std::net::SocketAddr;

/// How a front end's tool picks among a host name's addresses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AddressChoice {
    /// The resolver's first address, whatever its family (memtier; the first address Go's
    /// net.Dial tries).
    #[default]
    AsResolved,
    /// hiredis's: the first IPv4 address; an IPv6 one only when there is no IPv4 one.
    Ipv4First,
    /// IPv4 addresses only (`-4`).
    Ipv4Only,
    /// IPv6 addresses only (`-6`).
    Ipv6Only,
}

impl AddressChoice {
    /// The address a connection goes to: the first of [`AddressChoice::order`]; `None`
    /// when `resolved` holds none this choice accepts.
    pub fn pick(self, resolved: &[SocketAddr]) -> Option<SocketAddr> {
        self.order(resolved).first().copied()
    }

    /// The addresses of `resolved` (in the resolver's order) this choice accepts, in the
    /// order the tool would try them: for [`AddressChoice::AsResolved`] Go's order, the
    /// first address's family before the other (its primaries, then its fallbacks, each in
    /// the resolver's order); for [`AddressChoice::Ipv4First`] the IPv4 addresses, or the
    /// IPv6 ones when there is none, as hiredis's second lookup returns them.
    pub fn order(self, resolved: &[SocketAddr]) -> Vec<SocketAddr> {
        let of = |v4: bool| resolved.iter().filter(move |a| a.is_ipv4() == v4).copied();
        match self {
            AddressChoice::AsResolved => match resolved.first() {
                Some(first) => of(first.is_ipv4()).chain(of(!first.is_ipv4())).collect(),
                None => Vec::new(),
            },
            AddressChoice::Ipv4First => {
                let v4: Vec<SocketAddr> = of(true).collect();
                if v4.is_empty() {
                    of(false).collect()
                } else {
                    v4
                }
            }
            AddressChoice::Ipv4Only => of(true).collect(),
            AddressChoice::Ipv6Only => of(false).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addrs(list: &[&str]) -> Vec<SocketAddr> {
        list.iter().map(|a| a.parse().unwrap()).collect()
    }

    const V6_FIRST: [&str; 4] = [
        "[::1]:6379",
        "127.0.0.1:6379",
        "[fd00::2]:6379",
        "10.0.0.2:6379",
    ];

    #[test]
    fn hiredis_takes_ipv4_even_when_the_resolver_puts_ipv6_first() {
        let resolved = addrs(&V6_FIRST);
        assert_eq!(
            AddressChoice::Ipv4First.pick(&resolved),
            Some("127.0.0.1:6379".parse().unwrap())
        );
        assert_eq!(
            AddressChoice::Ipv4First.order(&resolved),
            addrs(&["127.0.0.1:6379", "10.0.0.2:6379"])
        );
    }

    #[test]
    fn hiredis_falls_back_to_ipv6_only_without_an_ipv4_address() {
        let resolved = addrs(&["[::1]:6379", "[fd00::2]:6379"]);
        assert_eq!(AddressChoice::Ipv4First.order(&resolved), resolved);
        assert_eq!(
            AddressChoice::Ipv4First.pick(&addrs(&["[::1]:7000"])),
            Some("[::1]:7000".parse().unwrap())
        );
    }

    #[test]
    fn as_resolved_takes_the_first_and_orders_the_rest_as_go_does() {
        let resolved = addrs(&V6_FIRST);
        assert_eq!(
            AddressChoice::AsResolved.pick(&resolved),
            Some("[::1]:6379".parse().unwrap())
        );
        // Go's primaries (the first address's family) before its fallbacks.
        assert_eq!(
            AddressChoice::AsResolved.order(&resolved),
            addrs(&[
                "[::1]:6379",
                "[fd00::2]:6379",
                "127.0.0.1:6379",
                "10.0.0.2:6379"
            ])
        );
        let v4_first = addrs(&["127.0.0.1:1", "[::1]:1", "10.0.0.2:1"]);
        assert_eq!(
            AddressChoice::AsResolved.order(&v4_first),
            addrs(&["127.0.0.1:1", "10.0.0.2:1", "[::1]:1"])
        );
    }

    #[test]
    fn one_family_only_keeps_that_family() {
        let resolved = addrs(&V6_FIRST);
        assert_eq!(
            AddressChoice::Ipv4Only.pick(&resolved),
            Some("127.0.0.1:6379".parse().unwrap())
        );
        assert_eq!(
            AddressChoice::Ipv6Only.order(&resolved),
            addrs(&["[::1]:6379", "[fd00::2]:6379"])
        );
        assert_eq!(AddressChoice::Ipv6Only.pick(&addrs(&["127.0.0.1:1"])), None);
        assert_eq!(AddressChoice::Ipv4Only.pick(&addrs(&["[::1]:1"])), None);
    }

    #[test]
    fn a_single_address_or_none() {
        for choice in [
            AddressChoice::AsResolved,
            AddressChoice::Ipv4First,
            AddressChoice::Ipv4Only,
            AddressChoice::Ipv6Only,
        ] {
            assert_eq!(choice.pick(&[]), None, "{choice:?}");
            assert!(choice.order(&[]).is_empty(), "{choice:?}");
        }
        let one = addrs(&["127.0.0.1:6379"]);
        assert_eq!(AddressChoice::AsResolved.order(&one), one);
        assert_eq!(AddressChoice::Ipv4First.order(&one), one);
    }
}
