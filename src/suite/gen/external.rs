//! What wrk, ab and h2load report, in one shape, turned into the shared RunResult so
//! a report treats every generator alike. Latency comes from each tool's own
//! per-request or per-bucket data (wrk: a Lua dump of its histogram, 1 us buckets;
//! ab: its -g file, 1 ms resolution; h2load: its --log-file, 1 us), never guessed
//! from a few printed percentiles.

use crate::stats::latency::Latency;
use crate::stats::result::{RunResult, Totals, Warmup};
use crate::stats::{Measured, Unit};
use std::collections::BTreeMap;

/// Whether a tool's own counts add up, each parser checking the identity its tool
/// prints (sent = ok + errors + in flight, in that tool's terms).
#[derive(Debug, Default, Clone, PartialEq)]
pub enum Accounting {
    /// The tool does not print what the check needs.
    #[default]
    NotCheckable,
    Holds,
    /// They do not add up: the sentence says which counts disagree.
    Broken(String),
}

impl Accounting {
    /// Holds when `whole` = `parts`, else Broken with `what` and both sides.
    pub fn check(whole: u64, parts: u64, what: &str) -> Accounting {
        if whole == parts {
            Accounting::Holds
        } else {
            Accounting::Broken(format!("{what}: {whole} != {parts}"))
        }
    }

    fn holds(&self) -> Option<bool> {
        match self {
            Accounting::NotCheckable => None,
            Accounting::Holds => Some(true),
            Accounting::Broken(_) => Some(false),
        }
    }
}

#[derive(Debug, Default)]
pub struct ExternalRun {
    pub tool: &'static str,
    pub elapsed_s: f64,
    /// Responses with a 2xx status.
    pub ok: u64,
    /// Failed requests by kind (names as in the JSON: lowercase, underscores).
    pub errors: BTreeMap<String, u64>,
    /// Failed connection attempts.
    pub connect_errors: u64,
    pub bytes_received: u64,
    pub bytes_sent: u64,
    pub latency: Latency,
    /// Smallest latency step the tool can tell apart, microseconds.
    pub resolution_us: u64,
    /// Whether the tool's own counts add up.
    pub accounting: Accounting,
}

impl ExternalRun {
    pub fn add_error(&mut self, kind: &str, n: u64) {
        if n > 0 {
            *self.errors.entry(kind.to_string()).or_insert(0) += n;
        }
    }

    pub fn request_errors(&self) -> u64 {
        self.errors.values().sum()
    }
}

/// What the runner knows about the point, for the result's config and target.
pub struct Context {
    /// The load command the suite stands the tool in for (the result's `kind`).
    pub kind: &'static str,
    pub target: String,
    pub config: serde_json::Value,
    pub started_unix_ms: u64,
    pub warmup_s: f64,
    pub client_cpu_s: f64,
}

/// Finds the first whitespace-separated number after `key` on a line starting with it.
pub fn field_after(text: &str, key: &str) -> Option<f64> {
    text.lines().find_map(|l| {
        let rest = l.trim_start().strip_prefix(key)?;
        rest.split_whitespace().next()?.parse::<f64>().ok()
    })
}

pub fn to_result(run: &ExternalRun, cx: Context) -> RunResult {
    let errors = run.request_errors();
    let mut err_map = run.errors.clone();
    if run.connect_errors > 0 {
        err_map.insert("connect_failed".into(), run.connect_errors);
    }
    let list: Vec<String> = err_map.iter().map(|(k, v)| format!("{v} {k}")).collect();
    let reason = if run.ok == 0 && list.is_empty() {
        Some(format!("{} got no successful response", run.tool))
    } else if run.ok == 0 {
        Some(format!(
            "{} got no successful response ({})",
            run.tool,
            list.join(", ")
        ))
    } else if !list.is_empty() {
        Some(format!("{} saw errors: {}", run.tool, list.join(", ")))
    } else {
        None
    };
    let reason = match (&run.accounting, reason) {
        (Accounting::Broken(why), r) => Some(format!(
            "{}'s own counts do not add up ({why}){}",
            run.tool,
            r.map(|r| format!("; {r}")).unwrap_or_default()
        )),
        (_, r) => r,
    };
    let mut config = cx.config;
    if let Some(m) = config.as_object_mut() {
        m.insert("generator".into(), run.tool.into());
        m.insert("latency_resolution_us".into(), run.resolution_us.into());
    }
    RunResult::builder(Measured {
        kind: cx.kind,
        target: cx.target,
        config,
        started_unix_ms: cx.started_unix_ms,
        elapsed_s: run.elapsed_s,
        totals: Totals {
            sent: run.ok + errors,
            ok: run.ok,
            errors,
            in_flight: 0,
            expected: None,
            bytes_sent: run.bytes_sent,
            bytes_received: run.bytes_received,
            connections: 0,
            connections_from_warmup: 0,
            connect_errors: run.connect_errors,
            events: 0,
            exchange_sent: 0,
            exchange_answered: 0,
            over_budget: 0,
            invariant_holds: run.accounting.holds(),
        },
        errors: err_map,
        unit: Unit::new("requests", "answered", true),
        latency: &run.latency,
        client_cpu_s: cx.client_cpu_s,
    })
    .warmup(Warmup {
        duration_s: cx.warmup_s,
        ..Default::default()
    })
    .finish(reason)
}
