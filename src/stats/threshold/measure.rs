//! What a threshold's figure measured in a result, and whether a run of this kind can
//! measure it at all (checked before a run starts, and again on a merged result).

use super::expr::Threshold;
use super::figure::{Figure, Side};
use crate::stats::result::RunResult;
use crate::stats::{ErrorKind, Latency, Unit};
use serde_json::Value;

/// What a run measures, known before it starts: its command, what it counts, whether
/// it runs open loop and measures its server's CPU, and its protocol's own blocks
/// (`{"block": schema}`, the protocol's `result_blocks_schema`).
pub struct Scope<'a> {
    pub kind: &'a str,
    pub unit: &'a Unit,
    pub open_loop: bool,
    pub server_cpu: bool,
    pub blocks: &'a str,
}

impl<'a> Scope<'a> {
    /// The scope of a finished result (a merged one: what it holds is what it measured).
    pub fn of(r: &'a RunResult, blocks: &'a str) -> Self {
        Scope {
            kind: &r.kind,
            unit: &r.unit,
            open_loop: r.rate.is_some(),
            server_cpu: r.cpu.server_s.is_some(),
            blocks,
        }
    }

    /// Why `t` cannot be measured by such a run, or Ok.
    pub fn check(&self, t: &Threshold) -> Result<(), String> {
        let no = |why: String| Err(format!("threshold '{}' does not apply: {why}", t.text));
        match &t.figure {
            f if f.is_latency() && !self.unit.replies => no(format!(
                "{}'s {} count once {}, with no reply to time, so it has no latency",
                self.kind, self.unit.noun, self.unit.counted
            )),
            Figure::Rate if !self.open_loop => no(
                "rate is the achieved share of the rate asked, and only an open loop (-R) asks one"
                    .into(),
            ),
            Figure::CpuPerItem(Side::Server) | Figure::CpuShare(Side::Server)
                if !self.server_cpu =>
            {
                no("the server's CPU is measured only for the built-in server (no target) or in a suite".into())
            }
            Figure::Errors(Some(kind)) if error_kind(kind).is_none() => no(format!(
                "there is no error kind {kind}; the kinds are {}",
                ErrorKind::ALL.map(|k| k.name()).join(", ")
            )),
            Figure::Block { name, key } if resolve(self.blocks, name, key).is_none() => {
                no(format!("{} has no figure {name}{{{key}}}{}", self.kind, own_blocks(self.blocks)))
            }
            _ => Ok(()),
        }
    }
}

/// The figure of `t` in `r`, in its base unit (microseconds, a fraction, a count, per
/// second), or None when the result has no such value (nothing was timed).
pub fn measured(t: &Threshold, r: &RunResult, blocks: &str) -> Option<f64> {
    let timed = r.latency_us.count > 0;
    let share = |n: f64| {
        if t.limit.share {
            (r.totals.sent > 0).then(|| n / r.totals.sent as f64)
        } else {
            Some(n)
        }
    };
    match &t.figure {
        Figure::Percentile(q) => {
            let h = Latency::decode(&r.histogram.data).ok()?;
            (h.count() > 0).then(|| h.quantile_ns(q / 100.0) as f64 / 1e3)
        }
        Figure::Min => timed.then_some(r.latency_us.min),
        Figure::Mean => timed.then_some(r.latency_us.mean),
        Figure::Max => timed.then_some(r.latency_us.max),
        Figure::Errors(None) => share(r.totals.errors as f64),
        Figure::Errors(Some(kind)) => share(*r.errors.get(kind.as_str()).unwrap_or(&0) as f64),
        Figure::Rate => r
            .rate
            .as_ref()
            .filter(|x| x.asked_per_s > 0.0)
            .map(|x| x.achieved_per_s / x.asked_per_s),
        Figure::Throughput => Some(r.throughput.msgs_per_s),
        Figure::CpuPerItem(Side::Client) => r.cpu.client_us_per_msg,
        Figure::CpuPerItem(Side::Server) => r.cpu.server_us_per_msg,
        Figure::CpuShare(side) => {
            let s = match side {
                Side::Client => Some(r.cpu.client_s),
                Side::Server => r.cpu.server_s,
            };
            s.filter(|_| r.elapsed_s > 0.0).map(|s| s / r.elapsed_s)
        }
        Figure::Block { name, key } => {
            let (block, path, counts) = resolve(blocks, name, key)?;
            let value = r.extras.get(&block)?;
            let n = match value.pointer(&path) {
                Some(v) => v.as_f64()?,
                // A block of counts by key (HTTP's status codes) leaves out what it never saw.
                None if counts => 0.0,
                None => return None,
            };
            share(n)
        }
    }
}

fn error_kind(name: &str) -> Option<ErrorKind> {
    ErrorKind::ALL.into_iter().find(|k| k.name() == name)
}

/// The block `name` or `name_*` whose schema has the number `key` (`a.b` goes into
/// nested objects): its name, the JSON pointer of the key, and whether the block counts
/// by open-ended keys (a key it never saw is 0).
fn resolve(blocks: &str, name: &str, key: &str) -> Option<(String, String, bool)> {
    let all: Value = serde_json::from_str(blocks).ok()?;
    let mut names: Vec<&String> = all.as_object()?.keys().collect();
    names.sort();
    names
        .into_iter()
        .filter(|b| b.as_str() == name || b.strip_prefix(name).is_some_and(|r| r.starts_with('_')))
        .find_map(|b| {
            let (path, counts) = key_in(&all[b], key)?;
            Some((b.clone(), path, counts))
        })
}

/// The pointer of `key` in a block of schema `s` when it names a number there.
fn key_in(s: &Value, key: &str) -> Option<(String, bool)> {
    let mut at = s;
    let mut path = String::new();
    for part in key.split('.') {
        path.push('/');
        path.push_str(part);
        if let Some(p) = at.get("properties").and_then(|p| p.get(part)) {
            at = p;
        } else if at.get("additionalProperties").is_some_and(Value::is_object) {
            let fits = at
                .pointer("/propertyNames/pattern")
                .and_then(Value::as_str)
                .map_or(true, |p| fits_digits(p, part));
            return (fits && !key.contains('.')).then_some((path, true));
        } else {
            return None;
        }
    }
    let kind = at.get("type").and_then(Value::as_str);
    let numeric = matches!(kind, Some("integer" | "number"))
        || at
            .get("$ref")
            .and_then(Value::as_str)
            .is_some_and(|r| r.ends_with("/count") || r.ends_with("/rate"));
    numeric.then_some((path, false))
}

/// `^[0-9]{N}$`, the one key pattern a block schema uses; another pattern lets any key by.
fn fits_digits(pattern: &str, key: &str) -> bool {
    let Some(n) = pattern
        .strip_prefix("^[0-9]{")
        .and_then(|p| p.strip_suffix("}$"))
        .and_then(|n| n.parse::<usize>().ok())
    else {
        return true;
    };
    key.len() == n && key.chars().all(|c| c.is_ascii_digit())
}

/// ": its own blocks are a, b" or "; it has no blocks of its own".
fn own_blocks(blocks: &str) -> String {
    let all: Value = serde_json::from_str(blocks).unwrap_or_default();
    match all
        .as_object()
        .map(|o| o.keys().cloned().collect::<Vec<_>>())
    {
        Some(names) if !names.is_empty() => format!(" (its own blocks: {})", names.join(", ")),
        _ => " (it has no blocks of its own)".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HTTP: &str = include_str!("../../proto/http/figures.schema.json");

    #[test]
    fn a_protocols_figure_is_found_in_its_blocks() {
        let r = |k: &str| resolve(HTTP, "status", k);
        assert_eq!(
            r("5xx"),
            Some(("status_classes".into(), "/5xx".into(), false))
        );
        assert_eq!(r("503"), Some(("status_codes".into(), "/503".into(), true)));
        assert_eq!(r("50x"), None);
        assert_eq!(
            resolve(HTTP, "status_codes", "200").map(|x| x.0).as_deref(),
            Some("status_codes")
        );
        assert_eq!(resolve("", "status", "5xx"), None);
    }
}
