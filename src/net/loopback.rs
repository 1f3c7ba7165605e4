//! Loopback source addresses: which of 127.0.0.2-127.0.0.255 a client may connect
//! from here, chosen by `connect` and by the loads (`commands::load_sources`) when no
//! `--source` is given.
//!
//! Why: the kernel picks a connection's ephemeral port per (source, destination)
//! pair by walking the port range from a per-pair offset, and the fuller the pair,
//! the longer the walk. One source for a million connections is impossible (28,232
//! ports); 50 sources fill each pair to 70% and the walk dominates (a rerun of a
//! million connections stalled at 4,221 connects/s); all of 127.0.0.2-127.0.0.255 keep
//! every pair under 15% full
//! (BENCHMARKS.md#design-choices-and-the-measurements-behind-them). Loopback is
//! 127.0.0.0/8 on Linux, so these need no setup; they are probed anyway (one bind
//! each).

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

/// The loopback addresses a client uses as sources by default.
pub const LOOPBACK_FIRST: Ipv4Addr = Ipv4Addr::new(127, 0, 0, 2);
pub const LOOPBACK_LAST: Ipv4Addr = Ipv4Addr::new(127, 0, 0, 255);

/// Where the sources come from.
#[derive(Clone, Debug, PartialEq)]
pub enum Sources {
    /// `--source` was given.
    Given,
    /// Chosen: the usable loopback addresses.
    Loopback(Vec<IpAddr>),
    /// Left to the kernel, and why (not loopback, IPv6, none usable).
    Kernel(&'static str),
}

/// The sources for a target when no `--source` was given: every usable loopback
/// address when every destination is IPv4 loopback (None, a built-in server, is).
/// `usable` says whether an address can be bound here (`bindable`, or a test's answer).
pub fn sources(targets: Option<&[SocketAddr]>, usable: impl Fn(IpAddr) -> bool) -> Sources {
    let all_v4_loopback = targets.map_or(true, |t| {
        t.iter()
            .all(|a| matches!(a.ip(), IpAddr::V4(v) if v.is_loopback()))
    });
    if !all_v4_loopback {
        let v6_loopback = targets.is_some_and(|t| t.iter().all(|a| a.ip().is_loopback()));
        return Sources::Kernel(if v6_loopback {
            "IPv6 loopback has one address"
        } else {
            "not a loopback target: give --source to add addresses"
        });
    }
    let found: Vec<IpAddr> = (u32::from(LOOPBACK_FIRST)..=u32::from(LOOPBACK_LAST))
        .map(|v| IpAddr::V4(Ipv4Addr::from(v)))
        .filter(|a| usable(*a))
        .collect();
    if found.is_empty() {
        return Sources::Kernel("no loopback address besides 127.0.0.1 can be bound here");
    }
    Sources::Loopback(found)
}

/// Whether this machine lets a socket bind `addr` (port 0, released at once).
pub fn bindable(addr: IpAddr) -> bool {
    let domain = if addr.is_ipv4() {
        socket2::Domain::IPV4
    } else {
        socket2::Domain::IPV6
    };
    socket2::Socket::new(domain, socket2::Type::STREAM, None)
        .and_then(|s| s.bind(&SocketAddr::new(addr, 0).into()))
        .is_ok()
}

/// `first-last` of a list of addresses (the first one alone when it has one).
pub fn span(v: &[IpAddr]) -> String {
    match (v.first(), v.last()) {
        (Some(a), Some(b)) if a != b => format!("{a}-{b}"),
        (Some(a), _) => a.to_string(),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }

    #[test]
    fn loopback_targets_get_every_usable_loopback_source() {
        let all = sources(Some(&[at("127.0.0.1:9000")]), |_| true);
        let Sources::Loopback(v) = all else {
            panic!("{all:?}")
        };
        assert_eq!(v.len(), 254);
        assert_eq!(v[0], IpAddr::V4(Ipv4Addr::new(127, 0, 0, 2)));
        assert_eq!(v[253], IpAddr::V4(Ipv4Addr::new(127, 0, 0, 255)));
        // The built-in server (no target) listens on loopback too.
        assert_eq!(sources(None, |_| true), Sources::Loopback(v.clone()));
        // A range of loopback destinations.
        let range = [at("127.0.0.1:9000"), at("127.0.0.20:9000")];
        assert_eq!(sources(Some(&range), |_| true), Sources::Loopback(v));
        // Only what binds is used.
        let odd = sources(
            Some(&[at("127.0.0.1:9000")]),
            |a| matches!(a, IpAddr::V4(v) if v.octets()[3] % 2 == 1),
        );
        let Sources::Loopback(v) = odd else {
            panic!("{odd:?}")
        };
        assert_eq!(v.len(), 127);
        assert_eq!(span(&v), "127.0.0.3-127.0.0.255");
    }

    #[test]
    fn other_targets_keep_the_kernels_choice() {
        let remote = sources(Some(&[at("10.1.2.3:80")]), |_| true);
        assert_eq!(
            remote,
            Sources::Kernel("not a loopback target: give --source to add addresses")
        );
        // One loopback address among others is not a loopback plan.
        let mixed = sources(Some(&[at("127.0.0.1:80"), at("10.1.2.3:80")]), |_| true);
        assert!(matches!(mixed, Sources::Kernel(_)));
        let v6 = sources(Some(&[at("[::1]:80")]), |_| true);
        assert_eq!(v6, Sources::Kernel("IPv6 loopback has one address"));
        let none = sources(Some(&[at("127.0.0.1:80")]), |_| false);
        assert!(matches!(none, Sources::Kernel(w) if w.contains("127.0.0.1")));
    }

    #[test]
    fn the_probe_binds_loopback_and_refuses_foreign_addresses() {
        assert!(bindable(IpAddr::V4(Ipv4Addr::LOCALHOST)));
        // TEST-NET-1: never an address of this machine.
        assert!(!bindable(IpAddr::V4(Ipv4Addr::new(192, 0, 2, 1))));
    }
}
