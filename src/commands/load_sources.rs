//! Where a load's connections come from: `--source`, or a choice made for the target.
//!
//! Why a load spreads over loopback sources by default: the kernel picks a connection's
//! ephemeral port per (source, destination) pair by walking the port range from a
//! per-pair offset, and the fuller the pair the longer the walk (net/loopback.rs).
//! Past ~14,000 connections from 127.0.0.1 to one port, connect() blocked the worker
//! in that walk, the open-loop schedule fell seconds behind, and ~8,000 connections
//! were busy at once on catching up; their buffers left the worker's malloc arena
//! ~30 bytes a connection fuller for the rest of the run
//! (BENCHMARKS.md#memory-per-idle-connection). Spread over 127.0.0.2-127.0.0.255 (what
//! `connect` already does), no pair holds more than a few hundred. Loads under `SPREAD_FROM`
//! connections keep the kernel's choice (one source, as before: nothing to gain).
//! The choice is said in the plan (`sources:`) and in the JSON (`config.sources`).

use crate::config::SourceFlag;
use crate::error::{Error, Result};
use crate::net::loopback::{self, span, Sources};
use std::net::{IpAddr, SocketAddr};

/// Connections (all threads) from which a load to an IPv4 loopback target spreads
/// over the loopback sources when `--source` is not given: 1,024 from one source
/// take under 4% of a pair's 28,232 ports, far below where the walk grows.
pub const SPREAD_FROM: usize = 1024;

/// What a load connects from.
#[derive(Debug, PartialEq)]
pub struct LoadSources {
    /// Empty: the kernel picks.
    pub addrs: Vec<IpAddr>,
    how: How,
}

#[derive(Debug, PartialEq)]
enum How {
    /// Nothing chosen and nothing said: a small load, or a target not on loopback.
    Unsaid,
    /// `--source kernel`.
    KernelAsked,
    Given,
    /// Chosen: every usable loopback source.
    Loopback,
    /// Left to the kernel though the load is large, and why.
    Kernel(&'static str),
}

impl LoadSources {
    /// The sources of `connections` (all threads) to `target`, given `--source`;
    /// `usable` says whether an address can be bound here (`loopback::bindable`).
    pub fn choose(
        flag: Option<&SourceFlag>,
        target: SocketAddr,
        connections: usize,
        usable: impl Fn(IpAddr) -> bool,
    ) -> Result<LoadSources> {
        let (addrs, how) = match flag {
            Some(SourceFlag::Kernel) => (Vec::new(), How::KernelAsked),
            Some(SourceFlag::Addrs(v)) => {
                if v.iter().any(|a| a.is_ipv4() != target.is_ipv4()) {
                    return Err(Error::usage(
                        "--source and the target must both be IPv4 or both IPv6",
                    ));
                }
                (v.clone(), How::Given)
            }
            None if connections < SPREAD_FROM || !target.ip().is_loopback() => {
                (Vec::new(), How::Unsaid)
            }
            None => match loopback::sources(Some(&[target]), usable) {
                Sources::Loopback(v) => (v, How::Loopback),
                Sources::Kernel(why) => (Vec::new(), How::Kernel(why)),
                Sources::Given => (Vec::new(), How::Unsaid),
            },
        };
        Ok(LoadSources { addrs, how })
    }

    /// The sources of a load to a unix socket: none, as such a socket has no source
    /// address; `--source` with addresses asks for the impossible and is refused.
    pub fn for_unix(flag: Option<&SourceFlag>) -> Result<LoadSources> {
        match flag {
            Some(SourceFlag::Addrs(_)) => Err(Error::usage(
                "--source does not apply to a unix: target (a unix socket connection has no source address)",
            )),
            Some(SourceFlag::Kernel) => Ok(LoadSources {
                addrs: Vec::new(),
                how: How::KernelAsked,
            }),
            None => Ok(LoadSources {
                addrs: Vec::new(),
                how: How::Unsaid,
            }),
        }
    }

    /// The plan's `sources:` row, when there is something to say.
    pub fn row(&self) -> Option<String> {
        let n = self.addrs.len();
        match self.how {
            How::Unsaid => None,
            How::KernelAsked => Some("the kernel's (--source kernel)".into()),
            How::Given => Some(format!("{} ({n} given)", span(&self.addrs))),
            How::Loopback => Some(format!(
                "{} ({n} loopback addresses, chosen for {} connections or more; --source overrides)",
                span(&self.addrs),
                crate::report::format::group(SPREAD_FROM as u64)
            )),
            How::Kernel(why) => Some(format!("the kernel's ({why})")),
        }
    }

    /// `config.sources` in the JSON result: null when nothing was chosen or given.
    pub fn json(&self) -> serde_json::Value {
        let n = self.addrs.len();
        match self.how {
            How::Unsaid => serde_json::Value::Null,
            How::KernelAsked => serde_json::json!({"from": "kernel", "why": "--source kernel"}),
            How::Given => {
                serde_json::json!({"from": "given", "range": span(&self.addrs), "count": n})
            }
            How::Loopback => {
                serde_json::json!({"from": "loopback", "range": span(&self.addrs), "count": n})
            }
            How::Kernel(why) => serde_json::json!({"from": "kernel", "why": why}),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }

    #[test]
    fn a_large_loopback_load_spreads_and_says_so() {
        let t = at("127.0.0.1:9");
        let s = LoadSources::choose(None, t, SPREAD_FROM, |_| true).unwrap();
        assert_eq!(s.addrs.len(), 254);
        assert_eq!(
            s.row().unwrap(),
            "127.0.0.2-127.0.0.255 (254 loopback addresses, chosen for 1,024 connections or more; --source overrides)"
        );
        assert_eq!(s.json()["count"], 254);
        assert_eq!(s.json()["from"], "loopback");
        // Below the threshold, or not loopback: the kernel's, unsaid.
        for (t, c) in [(t, SPREAD_FROM - 1), (at("10.0.0.1:9"), 100_000)] {
            let s = LoadSources::choose(None, t, c, |_| true).unwrap();
            assert!(s.addrs.is_empty() && s.row().is_none() && s.json().is_null());
        }
        // IPv6 loopback has one address: said, left to the kernel.
        let v6 = LoadSources::choose(None, at("[::1]:9"), 5000, |_| true).unwrap();
        assert!(v6.addrs.is_empty());
        assert_eq!(v6.json()["why"], "IPv6 loopback has one address");
    }

    #[test]
    fn a_flag_overrides_and_must_match_the_target() {
        let t = at("127.0.0.1:9");
        let k = LoadSources::choose(Some(&SourceFlag::Kernel), t, 50_000, |_| true).unwrap();
        assert!(k.addrs.is_empty());
        assert_eq!(k.row().unwrap(), "the kernel's (--source kernel)");
        let given = SourceFlag::parse("127.0.0.7-127.0.0.9").unwrap();
        let g = LoadSources::choose(Some(&given), t, 3, |_| true).unwrap();
        assert_eq!(g.addrs.len(), 3);
        assert_eq!(g.row().unwrap(), "127.0.0.7-127.0.0.9 (3 given)");
        let v6 = SourceFlag::parse("::1").unwrap();
        let e = LoadSources::choose(Some(&v6), t, 3, |_| true).unwrap_err();
        assert!(
            e.to_string().contains("must both be IPv4 or both IPv6"),
            "{e}"
        );
        assert!(SourceFlag::parse("127.0.0.1,::1").is_err());
        assert!(SourceFlag::parse("nonsense").is_err());
    }
}
