//! What `wirebench connect` chooses for itself when a flag is not given: source
//! addresses, worker processes and connection attempts in flight, sized for the
//! target and `-n`, so that the plain command reaches a million connections fast.
//! An explicit flag always wins. What was chosen is said in one line and put in the
//! JSON result (`config.chosen`).
//!
//! Why these values (measured on these machines, BENCHMARKS.md "Connect defaults"):
//! - Sources: the kernel picks a connection's ephemeral port per (source,
//!   destination) pair by walking the port range from a per-pair offset; the fuller a
//!   pair, the longer the walk. One source for a million connections is impossible
//!   (28,232 ports), 50 sources fill each pair to 70% and the walk dominates (the
//!   37 s run of issue 13; a rerun here stalled at 4,221 connects/s), all of
//!   127.0.0.2-127.0.0.255 keep every pair under 15% full. Loopback is 127.0.0.0/8 on
//!   Linux, so these need no setup; they are probed anyway (one bind each).
//! - Processes: just enough for the descriptor limit (plan.rs), nothing to gain from
//!   more on 2 cores.
//! - In flight (loopback hold): somaxconn, the most a listener's accept queue holds, so
//!   the handshakes we have under way never outnumber it. It does not bound the queue
//!   itself: a finished connect leaves our count while it may still wait there to be
//!   accepted, so a server that falls far behind can overflow it (an overflow drops the
//!   handshake's last ACK and costs that connection a retransmitted SYN-ACK, a second
//!   or more). And no more than 1024: every attempt in flight waits its turn in the
//!   accept queue, so with a server slowed by a busy machine 4,096 attempts waited past
//!   the connect timeout (464 of 30,000 ended ETIMEDOUT in a test run while the server
//!   accepted them all), and 1,024 did not.

use crate::report::format::group;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};

/// The loopback addresses `connect` uses as sources by default.
pub const LOOPBACK_FIRST: Ipv4Addr = Ipv4Addr::new(127, 0, 0, 2);
pub const LOOPBACK_LAST: Ipv4Addr = Ipv4Addr::new(127, 0, 0, 255);
/// Attempts in flight (hold) when somaxconn cannot be read: its value on these machines.
pub const IN_FLIGHT_FALLBACK: u64 = 4096;
/// The most attempts in flight (hold) chosen without a flag: see the module comment.
pub const IN_FLIGHT_MAX: u64 = 1024;
/// Attempts in flight with --churn, or to a target not on loopback, when none is given
/// (unchanged: churn's speed is set by the connect-echo-close cycle, not by the port
/// walk; a remote server's accept queue is not known here).
pub const CHURN_CONCURRENCY: usize = 1024;

/// Where the sources come from.
#[derive(Clone, Debug, PartialEq)]
pub enum Sources {
    /// `--source` was given.
    Given,
    /// Chosen: the usable loopback addresses (first, last, count).
    Loopback(Vec<IpAddr>),
    /// Left to the kernel, and why (not loopback, IPv6, none usable).
    Kernel(&'static str),
}

/// The sources for a target when no `--source` was given: every usable loopback
/// address when every destination is IPv4 loopback (the built-in server is: None).
/// `usable` says whether an address can be bound here.
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

/// Attempts in flight over all processes when `--concurrency` is not given.
/// Hold against loopback: up to somaxconn, at most IN_FLIGHT_MAX (never more than the
/// connections). Churn,
/// and other targets (whose accept queue this machine's somaxconn says nothing
/// about): 1024, as before.
pub fn in_flight(churn: bool, loopback: bool, total: u64, somaxconn: Option<u64>) -> usize {
    if churn || !loopback {
        return CHURN_CONCURRENCY;
    }
    let cap = somaxconn
        .filter(|v| *v > 0)
        .unwrap_or(IN_FLIGHT_FALLBACK)
        .min(IN_FLIGHT_MAX);
    total.min(cap).max(1) as usize
}

/// What connect chose itself; None where the user's flag decided.
#[derive(Clone, Debug, PartialEq)]
pub struct Chosen {
    pub sources: Sources,
    pub processes: Option<usize>,
    pub concurrency: Option<usize>,
}

impl Chosen {
    /// The one line that says what was chosen (None when every flag was given).
    pub fn line(&self) -> Option<String> {
        let mut parts = Vec::new();
        match &self.sources {
            Sources::Given => {}
            Sources::Loopback(v) => parts.push(format!(
                "sources {} ({} loopback addresses)",
                span(v),
                v.len()
            )),
            Sources::Kernel(why) => parts.push(format!("sources: the kernel's ({why})")),
        }
        if let Some(p) = self.processes {
            parts.push(format!(
                "{p} client process{}",
                if p == 1 { "" } else { "es" }
            ));
        }
        if let Some(c) = self.concurrency {
            parts.push(format!("{} attempts in flight", group(c as u64)));
        }
        (!parts.is_empty()).then(|| {
            format!(
                "connect chose: {} (a flag given overrides each)",
                parts.join(", ")
            )
        })
    }

    /// `config.chosen` in the JSON result: what connect chose, null where a flag decided.
    pub fn json(&self) -> serde_json::Value {
        let sources = match &self.sources {
            Sources::Given => serde_json::Value::Null,
            Sources::Loopback(v) => serde_json::json!({
                "from": "loopback", "range": span(v), "count": v.len()
            }),
            Sources::Kernel(why) => serde_json::json!({"from": "kernel", "why": why}),
        };
        serde_json::json!({
            "sources": sources,
            "processes": self.processes,
            "concurrency": self.concurrency,
            "line": self.line(),
        })
    }
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
    fn in_flight_is_somaxconn_at_most_1024_for_loopback_hold_and_unchanged_otherwise() {
        assert_eq!(in_flight(false, true, 1_000_000, Some(4096)), 1024);
        assert_eq!(in_flight(false, true, 1_000_000, Some(128)), 128);
        assert_eq!(in_flight(false, true, 1_000_000, None), 1024);
        assert_eq!(in_flight(false, true, 1_000_000, Some(0)), 1024);
        assert_eq!(in_flight(false, true, 1000, Some(4096)), 1000);
        assert_eq!(in_flight(true, true, 1_000_000, Some(4096)), 1024);
        assert_eq!(in_flight(false, false, 1_000_000, Some(4096)), 1024);
    }

    #[test]
    fn the_line_names_only_what_was_chosen() {
        let v: Vec<IpAddr> = (2..=255)
            .map(|i| IpAddr::V4(Ipv4Addr::new(127, 0, 0, i)))
            .collect();
        let c = Chosen {
            sources: Sources::Loopback(v),
            processes: Some(51),
            concurrency: Some(4096),
        };
        assert_eq!(
            c.line().unwrap(),
            "connect chose: sources 127.0.0.2-127.0.0.255 (254 loopback addresses), 51 client processes, 4,096 attempts in flight (a flag given overrides each)"
        );
        let j = c.json();
        assert_eq!(j["sources"]["count"], 254);
        assert_eq!(j["sources"]["range"], "127.0.0.2-127.0.0.255");
        assert_eq!(j["processes"], 51);
        let all_given = Chosen {
            sources: Sources::Given,
            processes: None,
            concurrency: None,
        };
        assert_eq!(all_given.line(), None);
        assert!(all_given.json()["sources"].is_null());
    }

    #[test]
    fn the_probe_binds_loopback_and_refuses_foreign_addresses() {
        assert!(bindable(IpAddr::V4(Ipv4Addr::LOCALHOST)));
        // TEST-NET-1: never an address of this machine.
        assert!(!bindable(IpAddr::V4(Ipv4Addr::new(192, 0, 2, 1))));
    }
}
