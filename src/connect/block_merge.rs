//! The `connect` block of several results as one (shards of one run, rounds): counts
//! summed, the connect histograms added (the latency summary read from the sum, never
//! averaged), rates and memory per connection recomputed from the merged figures, the
//! settings checked equal. The generic counter sum cannot do this: the block holds
//! rates, times, a latency summary and a histogram.

use crate::stats::merge::{counters, histograms};
use crate::stats::result::HistogramBlob;
use crate::stats::RunResult;
use serde_json::{json, Value};

const BLOCK: &str = "connect";

/// The block's own merge, for `Entry::block_merge`: only the `connect` block is ours.
pub fn block_merge(
    name: &str,
    blocks: &[&Value],
    _merged: &RunResult,
) -> Option<Result<Value, String>> {
    (name == BLOCK).then(|| merge(blocks))
}

/// The block against its part's totals (`Entry::block_check`): its established
/// connections are `totals.connections`, its failed ones `totals.connect_errors` and
/// the sum of its failures by errno.
pub fn block_check(name: &str, block: &Value, part: &RunResult) -> Result<(), String> {
    if name != BLOCK {
        return Ok(());
    }
    let n = |k: &str| block.get(k).and_then(Value::as_u64).unwrap_or(0);
    let t = &part.totals;
    let by_errno: u64 = block
        .get("failures")
        .and_then(Value::as_object)
        .map_or(0, |m| m.values().filter_map(Value::as_u64).sum());
    let wrong = [
        (
            "established",
            n("established"),
            "totals.connections",
            t.connections,
        ),
        (
            "failed",
            n("failed"),
            "totals.connect_errors",
            t.connect_errors,
        ),
        (
            "failed",
            n("failed"),
            "the sum of connect.failures",
            by_errno,
        ),
    ]
    .into_iter()
    .find(|(_, a, _, b)| a != b);
    match wrong {
        None => Ok(()),
        Some((field, a, other, b)) => Err(format!("connect.{field} {a} is not {other} {b}")),
    }
}

/// The leaves that are not counters: taken out before the counter sum, then set from
/// the merged figures (or checked equal, for settings).
const NOT_COUNTERS: [&str; 7] = [
    "mode",
    "hold_s",
    "teardown_s",
    "time_to_establish_s",
    "connect_rate_per_s",
    "connect_latency_us",
    "connect_histogram",
];

/// The merged block, or the one sentence saying why the blocks do not merge.
pub fn merge(blocks: &[&Value]) -> Result<Value, String> {
    let first = *blocks.first().ok_or("no \"connect\" block to merge")?;
    if let Some(b) = blocks.iter().find(|b| !b.is_object()) {
        return Err(format!("a \"connect\" block is not an object: {b}"));
    }
    same(blocks, "mode", |b| &b["mode"])?;
    same(blocks, "ping.interval_s", |b| &b["ping"]["interval_s"])?;
    let kernels: Vec<Value> = blocks.iter().map(|b| kernel_limits(b)).collect();
    if let Some(k) = kernels.iter().find(|k| *k != &kernels[0]) {
        return Err(format!(
            "connect.kernel differs between the parts ({} and {k}): only parts run under the same kernel limits merge",
            kernels[0]
        ));
    }

    let stripped: Vec<Value> = blocks.iter().map(|b| counters_of(b)).collect();
    let mut out = counters::sum(BLOCK, &stripped.iter().collect::<Vec<_>>())?;

    let hists: Vec<HistogramBlob> = blocks
        .iter()
        .map(|b| serde_json::from_value(b["connect_histogram"].clone()))
        .collect::<Result<_, _>>()
        .map_err(|e| format!("a \"connect.connect_histogram\" does not read: {e}"))?;
    let connect = histograms::add_blobs("connect.connect_histogram", &hists)?;

    // Shards start together (`--start-at`; `merge.start_spread_ms` says how closely),
    // so the time until every attempt of the whole run had settled is the slowest
    // shard's, counted from that common start.
    let reach = blocks
        .iter()
        .map(|b| b["time_to_establish_s"].as_f64().unwrap_or(0.0))
        .fold(0.0, f64::max);
    // The block's rates are over its own time to establish (report.rs), not over
    // `elapsed_s`: so the merged ones are the summed counts over the merged `reach`.
    let per_reach = |n: &Value| match n.as_u64() {
        Some(n) if reach > 0.0 => n as f64 / reach,
        _ => 0.0,
    };
    out["mode"] = first["mode"].clone();
    out["time_to_establish_s"] = json!(reach);
    out["connect_rate_per_s"] = json!(per_reach(&out["attempts"]));
    // The hold is measured on each part (from all up to the stop); the hold asked for
    // is `config.hold_s`, checked equal with the config. Every part held its
    // connections at least the shortest of them.
    out["hold_s"] = json!(blocks
        .iter()
        .map(|b| b["hold_s"].as_f64().unwrap_or(0.0))
        .fold(f64::INFINITY, f64::min));
    // The teardown ends when the last part's does (parts without one, older files: 0).
    out["teardown_s"] = json!(blocks
        .iter()
        .map(|b| b["teardown_s"].as_f64().unwrap_or(0.0))
        .fold(0.0, f64::max));
    out["connect_latency_us"] = if connect.count() > 0 {
        serde_json::to_value(connect.summary()).map_err(|e| e.to_string())?
    } else {
        Value::Null
    };
    out["connect_histogram"] =
        serde_json::to_value(HistogramBlob::of(&connect)).map_err(|e| e.to_string())?;
    if out["churn"].is_object() {
        out["churn"]["connections_per_s"] = json!(per_reach(&out["churn"]["cycles_ok"]));
    }
    if let Some(ping) = out["ping"].as_object_mut() {
        ping.insert("interval_s".into(), first["ping"]["interval_s"].clone());
        // Files from before pings ran on the engine carry a `skipped` that is always 0
        // now (a late ping goes when the previous returns): not carried on.
        ping.remove("skipped");
    }
    out["kernel"] = first["kernel"].clone();
    out["kernel"]["nf_conntrack_count"] = blocks
        .iter()
        .filter_map(|b| b["kernel"]["nf_conntrack_count"].as_u64())
        .max()
        .map_or(Value::Null, Value::from);
    memory_per_connection(&mut out["memory"]);
    Ok(out)
}

/// `field` (read by `get`) must be the same on every part.
fn same(blocks: &[&Value], field: &str, get: fn(&Value) -> &Value) -> Result<(), String> {
    let first = get(blocks[0]).clone();
    if blocks.iter().any(|b| *get(b) != first) {
        return Err(format!(
            "connect.{field} differs between the parts: only parts of one run merge"
        ));
    }
    Ok(())
}

/// The kernel block as limits: `nf_conntrack_count` is a reading of the moment, not a
/// limit, so it is left out of the comparison (the merge keeps the largest).
fn kernel_limits(b: &Value) -> Value {
    let mut k = b["kernel"].clone();
    if let Some(o) = k.as_object_mut() {
        o.remove("nf_conntrack_count");
    }
    k
}

/// The block with every leaf that is not a counter taken out.
fn counters_of(b: &Value) -> Value {
    let mut c = b.clone();
    if let Some(o) = c.as_object_mut() {
        for k in NOT_COUNTERS.iter().chain(&["kernel"]) {
            o.remove(*k);
        }
    }
    if let Some(o) = c["churn"].as_object_mut() {
        o.remove("connections_per_s");
    }
    if let Some(o) = c["ping"].as_object_mut() {
        o.remove("interval_s");
    }
    if let Some(o) = c["memory"].as_object_mut() {
        for k in PER_CONNECTION {
            o.remove(k);
        }
    }
    c
}

/// Figures of the `memory` block recomputed or set by `memory_per_connection`.
const PER_CONNECTION: [&str; 5] = [
    "server_rss_per_conn_bytes",
    "client_rss_per_conn_bytes",
    "slab_per_conn_bytes",
    "slab_bytes_before",
    "slab_bytes_after",
];

/// Memory per connection from the summed readings: RSS is each part's own processes,
/// so the sums are what all of them held, over all their connections. The slab is a
/// reading of the whole machine: parts side by side on one host each see the others'
/// sockets in their own readings, and readings of different hosts at different moments
/// do not add up, so the merged slab figures are null rather than a guess (each part's
/// own file keeps its readings).
fn memory_per_connection(m: &mut Value) {
    let conns = m["connections"].as_u64().unwrap_or(0);
    let per = |after: &Value, before: &Value| match (after.as_u64(), before.as_u64()) {
        (Some(a), Some(b)) if conns > 0 => json!((a as f64 - b as f64) / conns as f64),
        _ => Value::Null,
    };
    m["server_rss_per_conn_bytes"] =
        per(&m["server_rss_bytes_after"], &m["server_rss_bytes_before"]);
    m["client_rss_per_conn_bytes"] =
        per(&m["client_rss_bytes_after"], &m["client_rss_bytes_before"]);
    for k in [
        "slab_bytes_before",
        "slab_bytes_after",
        "slab_per_conn_bytes",
    ] {
        m[k] = Value::Null;
    }
}

#[cfg(test)]
mod tests;
