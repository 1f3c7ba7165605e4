//! What an external generator reported (`proto::generator::ExternalRun`, read by the
//! parser its protocol declares) turned into the shared RunResult, so a report treats
//! every generator alike. Latency comes from each tool's own per-request or
//! per-bucket data, never guessed from a few printed percentiles; a tool whose own
//! counts do not add up (`Accounting::Broken`) makes the point fall short, saying
//! which counts disagree, and one that does not print what the check needs leaves
//! `invariant_holds` null.

pub use crate::proto::generator::{Accounting, ExternalRun};
use crate::stats::result::{RunResult, Totals, Warmup};
use crate::stats::{Measured, Unit};

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
    let mut builder = RunResult::builder(Measured {
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
        unit: run
            .unit
            .clone()
            .unwrap_or_else(|| Unit::new("requests", "answered", true)),
        latency: &run.latency,
        client_cpu_s: cx.client_cpu_s,
    })
    .warmup(Warmup {
        duration_s: cx.warmup_s,
        ..Default::default()
    });
    for (name, block) in &run.blocks {
        builder = builder.extra(name, block.clone());
    }
    builder.finish(reason)
}
