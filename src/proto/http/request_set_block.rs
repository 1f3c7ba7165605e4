//! The result's `request_set` block (with `--request-set`): per request of the set, its
//! settings (name, method, URL, weight) and figures (responses, correct ones, answered
//! errors, status codes, latency percentiles and the histogram they come from); its
//! merge over shards and rounds (counts summed, histograms added, percentiles read from
//! the sum); and the summary's table.

use super::entry_figures::{EntryFigures, EntryLatency, HttpFigures};
use super::request_set::RequestSet;
use crate::report::format::group;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// The block's name in the result.
pub const BLOCK: &str = "request_set";

/// Settings of an entry that every merged part must share.
const SETTINGS: [&str; 4] = ["name", "method", "url", "weight"];

fn entry_json(settings: Value, f: &EntryFigures) -> Value {
    let codes: BTreeMap<String, u64> = f
        .codes
        .iter()
        .map(|(c, n)| (format!("{c:03}"), *n))
        .collect();
    let summary = f.latency.summary();
    let mut v = settings;
    v["answered"] = json!(f.answered);
    v["ok"] = json!(f.ok);
    v["errors"] = json!(f.answered - f.ok);
    v["status_codes"] = json!(codes);
    v["latency_us"] = if summary.count > 0 {
        serde_json::to_value(summary).unwrap_or(Value::Null)
    } else {
        Value::Null
    };
    v["histogram"] = json!(f.latency.encode());
    v
}

/// The block for `set` from the measured phase's figures.
pub fn block(set: &RequestSet, figures: &HttpFigures) -> Value {
    let none = EntryFigures::default();
    let entries: Vec<Value> = set
        .entries
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let settings = json!({
                "name": e.name,
                "method": e.method,
                "url": format!("{}://{}{}", if e.url.tls { "https" } else { "http" }, e.url.authority(), e.url.path),
                "weight": e.weight,
            });
            entry_json(settings, figures.entries.get(i).unwrap_or(&none))
        })
        .collect();
    json!({ "file": set.file.display().to_string(), "entries": entries })
}

/// An entry's figures read back from a block.
fn figures_of(v: &Value, at: &str) -> Result<EntryFigures, String> {
    let count = |k: &str| {
        v[k].as_u64()
            .ok_or_else(|| format!("{at}.{k} is not a count"))
    };
    let mut codes = Vec::new();
    for (c, n) in v["status_codes"].as_object().into_iter().flatten() {
        let code: u16 = c
            .parse()
            .map_err(|_| format!("{at}.status_codes has the key '{c}', not a status"))?;
        codes.push((
            code,
            n.as_u64()
                .ok_or_else(|| format!("{at}.status_codes.{c} is not a count"))?,
        ));
    }
    let latency = EntryLatency::decode(v["histogram"].as_str().unwrap_or_default())
        .map_err(|e| format!("{at}.histogram: {e}"))?;
    Ok(EntryFigures {
        answered: count("answered")?,
        ok: count("ok")?,
        codes,
        latency,
    })
}

/// The blocks of every part merged: the same file and requests on each (else the
/// sentence naming what differs), counts summed, histograms added.
pub fn merge(blocks: &[&Value]) -> Result<Value, String> {
    let first = blocks.first().ok_or("request_set: nothing to merge")?;
    let n = first["entries"].as_array().map_or(0, Vec::len);
    let mut merged = Vec::with_capacity(n);
    for i in 0..n {
        let at = format!("{BLOCK}.entries[{i}]");
        let settings: serde_json::Map<String, Value> = SETTINGS
            .iter()
            .map(|k| (k.to_string(), first["entries"][i][*k].clone()))
            .collect();
        let mut sum = EntryFigures::default();
        for b in blocks {
            let e = &b["entries"][i];
            if b["file"] != first["file"] || SETTINGS.iter().any(|k| e[*k] != settings[*k]) {
                return Err(format!(
                    "{at} differs between the parts: they did not send the same request set"
                ));
            }
            sum.merge(&figures_of(e, &at)?);
        }
        merged.push(entry_json(Value::Object(settings), &sum));
    }
    if blocks
        .iter()
        .any(|b| b["entries"].as_array().map_or(0, Vec::len) != n)
    {
        return Err(format!(
            "{BLOCK}.entries differs in length between the parts: they did not send the same request set"
        ));
    }
    Ok(json!({ "file": first["file"], "entries": merged }))
}

/// Milliseconds with two decimals, or "n/a" for a request with no response.
fn ms(v: &Value) -> String {
    v.as_f64()
        .map_or("n/a".to_string(), |us| format!("{:.2}ms", us / 1000.0))
}

/// The summary's table: one row per request of the set.
pub fn table(block: &Value) -> String {
    let entries = block["entries"].as_array().cloned().unwrap_or_default();
    let total_w: u64 = entries.iter().filter_map(|e| e["weight"].as_u64()).sum();
    let answered: u64 = entries.iter().filter_map(|e| e["answered"].as_u64()).sum();
    let mut s = String::new();
    let _ = writeln!(
        s,
        "request set:  {} requests from {}",
        entries.len(),
        block["file"].as_str().unwrap_or("")
    );
    let width = entries
        .iter()
        .filter_map(|e| e["name"].as_str())
        .map(str::len)
        .max()
        .unwrap_or(4)
        .clamp(7, 40);
    let _ = writeln!(
        s,
        "  {:<width$}  {:>6} {:>6}  {:>10} {:>6}  {:>10} {:>10}  {:>9} {:>9}  codes",
        "request", "weight", "share", "answered", "share", "ok", "errors", "p50", "p99"
    );
    let pct = |n: u64, of: u64| match of {
        0 => "-".to_string(),
        _ => format!("{:.1}%", n as f64 * 100.0 / of as f64),
    };
    for e in &entries {
        let name: String = e["name"]
            .as_str()
            .unwrap_or("")
            .chars()
            .take(width)
            .collect();
        let (w, a) = (
            e["weight"].as_u64().unwrap_or(0),
            e["answered"].as_u64().unwrap_or(0),
        );
        let codes: Vec<String> = e["status_codes"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(c, n)| format!("{c} {}", group(n.as_u64().unwrap_or(0))))
            .collect();
        let _ = writeln!(
            s,
            "  {name:<width$}  {w:>6} {:>6}  {:>10} {:>6}  {:>10} {:>10}  {:>9} {:>9}  {}",
            pct(w, total_w),
            group(a),
            pct(a, answered),
            group(e["ok"].as_u64().unwrap_or(0)),
            group(e["errors"].as_u64().unwrap_or(0)),
            ms(&e["latency_us"]["p50"]),
            ms(&e["latency_us"]["p99"]),
            codes.join(", ")
        );
    }
    s
}
