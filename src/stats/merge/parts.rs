//! The plain sums of a merge (totals, errors), the environment, the protocol blocks,
//! and what each part keeps of its own in `merge.parts`.

use super::{counters, input::BlockMerge};
use crate::stats::result::{RunResult, Totals};
use crate::sys::Environment;
use serde_json::{json, Value};
use std::collections::BTreeMap;

fn add(a: u64, b: u64, what: &str) -> Result<u64, String> {
    a.checked_add(b)
        .ok_or_else(|| format!("the merged {what} overflows"))
}

/// Every counter summed; the expected count too when every part names one; the
/// invariant holds when it holds on every part (null when a part cannot tell).
pub fn totals(rs: &[&RunResult]) -> Result<Totals, String> {
    let mut t = Totals {
        expected: Some(0),
        invariant_holds: Some(true),
        ..Totals::default()
    };
    for r in rs {
        let p = &r.totals;
        t.sent = add(t.sent, p.sent, "sent count")?;
        t.ok = add(t.ok, p.ok, "ok count")?;
        t.errors = add(t.errors, p.errors, "error count")?;
        t.in_flight = add(t.in_flight, p.in_flight, "in-flight count")?;
        t.expected = match (t.expected, p.expected) {
            (Some(a), Some(b)) => Some(add(a, b, "expected count")?),
            _ => None,
        };
        t.bytes_sent = add(t.bytes_sent, p.bytes_sent, "bytes sent")?;
        t.bytes_received = add(t.bytes_received, p.bytes_received, "bytes received")?;
        t.connections = add(t.connections, p.connections, "connection count")?;
        t.connections_from_warmup = add(
            t.connections_from_warmup,
            p.connections_from_warmup,
            "connection count",
        )?;
        t.connect_errors = add(t.connect_errors, p.connect_errors, "connect error count")?;
        t.events = add(t.events, p.events, "event count")?;
        t.over_budget = add(t.over_budget, p.over_budget, "over-budget count")?;
        t.exchange_sent = add(t.exchange_sent, p.exchange_sent, "exchange request count")?;
        t.exchange_answered = add(
            t.exchange_answered,
            p.exchange_answered,
            "exchange answer count",
        )?;
        t.invariant_holds = match (t.invariant_holds, p.invariant_holds) {
            (Some(a), Some(b)) => Some(a && b),
            (Some(false), None) => Some(false),
            _ => None,
        };
    }
    Ok(t)
}

/// Errors by kind, summed over the kinds any part saw.
pub fn errors(rs: &[&RunResult]) -> Result<BTreeMap<String, u64>, String> {
    let mut m: BTreeMap<String, u64> = BTreeMap::new();
    for r in rs {
        for (k, n) in &r.errors {
            let e = m.entry(k.clone()).or_insert(0);
            *e = add(*e, *n, "error count")?;
        }
    }
    Ok(m)
}

/// The first part's environment; the host names of all parts, when they differ.
pub fn environment(rs: &[&RunResult]) -> Environment {
    let mut env = rs[0].environment.clone();
    let mut hosts: Vec<&str> = Vec::new();
    for r in rs {
        if !hosts.contains(&r.environment.hostname.as_str()) {
            hosts.push(&r.environment.hostname);
        }
    }
    env.hostname = hosts.join(", ");
    env
}

/// Each protocol block, merged by its protocol (`blocks`) or, when it brings no merge
/// of its own for it, by the generic counter sum. A block on some parts only does not
/// merge.
pub fn extras(
    rs: &[&RunResult],
    merged: &RunResult,
    blocks: BlockMerge,
) -> Result<BTreeMap<String, Value>, String> {
    let mut out = BTreeMap::new();
    for name in rs[0].extras.keys() {
        let vals: Vec<&Value> = rs.iter().filter_map(|r| r.extras.get(name)).collect();
        if vals.len() != rs.len() {
            return Err(format!("the \"{name}\" block is in some parts only"));
        }
        let v = match blocks(name, &vals, merged) {
            Some(v) => v?,
            None => counters::sum(name, &vals)?,
        };
        out.insert(name.clone(), v);
    }
    if let Some(extra) = rs
        .iter()
        .flat_map(|r| r.extras.keys())
        .find(|k| !out.contains_key(*k))
    {
        return Err(format!("the \"{extra}\" block is in some parts only"));
    }
    Ok(out)
}

/// What a part keeps of its own in the merged result: its figures as it gave them.
pub fn own_figures(r: &RunResult) -> Value {
    json!({
        "hostname": r.environment.hostname,
        "started_unix_ms": r.started_unix_ms,
        "measured_start_unix_ms": super::input::measured_start_ms(r),
        "elapsed_s": r.elapsed_s,
        "totals": r.totals,
        "errors": r.errors,
        "throughput": r.throughput,
        "latency_us": (r.latency_us.count > 0).then_some(r.latency_us),
        "cpu": r.cpu,
        "client_process": r.client_process,
        "server": r.server,
        "outcome": r.outcome,
        "shard": r.shard,
        "machine": r.machine,
    })
}
