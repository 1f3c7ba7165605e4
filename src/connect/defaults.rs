//! What `wirebench connect` chooses for itself when a flag is not given: source
//! addresses, worker processes and connection attempts in flight, sized for the
//! target and `-n`, so that the plain command reaches a million connections fast.
//! An explicit flag always wins. What was chosen is said in one line and put in the
//! JSON result (`config.chosen`).
//!
//! Why these values (measured on these machines:
//! BENCHMARKS.md#mass-connections-a-million-and-churn and
//! BENCHMARKS.md#design-choices-and-the-measurements-behind-them):
//! - Sources: every usable address of 127.0.0.2-127.0.0.255 for a loopback target, so
//!   that no (source, destination) pair fills up and the kernel's port walk stays
//!   short (`net::loopback`).
//! - Processes: just enough for the descriptor limit (`capacity::processes_for`),
//!   nothing to gain from more on 2 cores.
//! - In flight (loopback hold): somaxconn, the most a listener's accept queue holds, so
//!   the handshakes we have under way never outnumber it. It does not bound the queue
//!   itself: a finished connect leaves our count while it may still wait there to be
//!   accepted, so a server that falls far behind can overflow it (an overflow drops the
//!   handshake's last ACK and costs that connection a retransmitted SYN-ACK, a second
//!   or more). And no more than 1024: every attempt in flight waits its turn in the
//!   accept queue, so with a server slowed by a busy machine 4,096 attempts waited past
//!   the connect timeout (464 of 30,000 ended ETIMEDOUT in a test run while the server
//!   accepted them all), and 1,024 did not.

use crate::net::loopback::{span, Sources};
use crate::report::format::group;

/// Attempts in flight (hold) when somaxconn cannot be read: its value on these machines.
pub const IN_FLIGHT_FALLBACK: u64 = 4096;
/// The most attempts in flight (hold) chosen without a flag: see the module comment.
pub const IN_FLIGHT_MAX: u64 = 1024;
/// Attempts in flight with --churn, or to a target not on loopback, when none is given
/// (unchanged: churn's speed is set by the connect-echo-close cycle, not by the port
/// walk; a remote server's accept queue is not known here).
pub const CHURN_CONCURRENCY: usize = 1024;

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

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{IpAddr, Ipv4Addr};

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
}
