//! What every load command does around the engine: Ctrl-C handling, the descriptor
//! budget, turning the engine's output into a RunResult, judging it, printing, JSON.

use crate::config::OutputOptions;
use crate::engine::EngineOutput;
use crate::error::{Error, Result};
use crate::report::json::JsonSink;
use crate::report::text;
use crate::stats::rate::RateFigures;
use crate::stats::result::{
    error_map, Cpu, HistogramBlob, Outcome, Throughput, Totals, Warmup, SCHEMA_VERSION,
};
use crate::stats::{Counters, RunResult};
use crate::sys::Environment;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

/// A flag set by the first SIGINT/SIGTERM (stop, drain, report); a second one exits at once.
pub fn stop_flag() -> Result<Arc<AtomicBool>> {
    let flag = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register_conditional_shutdown(sig, 130, flag.clone())
            .and_then(|_| signal_hook::flag::register(sig, flag.clone()))
            .map_err(|e| Error::runtime(format!("cannot handle signals: {e}")))?;
    }
    Ok(flag)
}

/// Refuses a plan that needs more sockets than this process may open.
pub fn check_fd_budget(sockets: u64) -> Result<()> {
    let limit = crate::sys::raise_nofile_limit();
    let margin = 64;
    if sockets + margin > limit {
        return Err(Error::usage(format!(
            "this plan needs {sockets} sockets at once but a process may open only {limit} files here (ulimit -n); use fewer connections"
        )));
    }
    Ok(())
}

/// Why a run fell short, or None when it did all it was asked.
pub fn judge(c: &Counters, expected: Option<u64>) -> Option<String> {
    if !c.invariant_holds() {
        return Some(format!(
            "accounting does not add up: sent {} != ok {} + errors {} + in flight {}",
            c.sent,
            c.ok,
            c.request_errors(),
            c.in_flight
        ));
    }
    let errs = c.request_errors();
    let failed_connects = c.connect_errors();
    let mut why = Vec::new();
    if let Some(e) = expected {
        if c.ok < e {
            why.push(format!("expected {e} correct replies, received {}", c.ok));
        }
    }
    if errs > 0 {
        why.push(format!("{errs} requests failed"));
    }
    if failed_connects > 0 {
        why.push(format!("{failed_connects} connections failed"));
    }
    if c.in_flight > 0 {
        why.push(format!("{} requests got no reply", c.in_flight));
    }
    if why.is_empty() && c.ok == 0 {
        why.push("no replies at all".to_string());
    }
    (!why.is_empty()).then(|| why.join("; "))
}

/// What the run measured about a server it started itself.
pub struct ServerFigures {
    pub counters: serde_json::Value,
    pub cpu: Duration,
}

pub struct ResultInputs<'a> {
    pub kind: &'a str,
    pub target: String,
    pub config: serde_json::Value,
    pub started_unix_ms: u64,
    pub warmup: Duration,
    pub server: Option<ServerFigures>,
}

pub fn build_result(inp: ResultInputs<'_>, out: &EngineOutput) -> RunResult {
    let secs = out.elapsed.as_secs_f64();
    let per_sec = |v: u64| if secs > 0.0 { v as f64 / secs } else { 0.0 };
    let ok = out.measured.ok;
    let per_msg = |d: Duration| {
        if ok > 0 {
            d.as_secs_f64() * 1e6 / ok as f64
        } else {
            0.0
        }
    };
    let reason = judge(&out.measured, out.expected).map(|why| match &out.first_connect_error {
        Some(first) if out.measured.connect_errors() > 0 => format!("{why} (first: {first})"),
        _ => why,
    });
    let reason = match (reason, out.rate.as_ref().and_then(rate_shortfall)) {
        (r, None) => r,
        (None, Some(short)) => Some(short),
        (Some(r), Some(short)) => Some(format!("{short}; {r}")),
    };
    let reason = match (out.interrupted, reason) {
        (false, r) => r,
        (true, None) => Some("interrupted by a signal before the plan was done".to_string()),
        (true, Some(r)) => Some(format!(
            "interrupted by a signal before the plan was done; {r}"
        )),
    };
    RunResult {
        schema_version: SCHEMA_VERSION,
        kind: inp.kind.to_string(),
        started_unix_ms: inp.started_unix_ms,
        target: inp.target,
        config: inp.config,
        environment: Environment::capture(),
        elapsed_s: secs,
        totals: Totals::from_counters(&out.measured, out.expected),
        errors: error_map(&out.measured),
        throughput: Throughput {
            msgs_per_s: per_sec(ok),
            mb_per_s: per_sec(out.measured.bytes_received) / 1e6,
            mb_sent_per_s: per_sec(out.measured.bytes_sent) / 1e6,
        },
        latency_us: out.latency.summary(),
        latency_uncorrected_us: out.uncorrected.as_ref().map(|u| u.summary()),
        histogram: HistogramBlob::of(&out.latency),
        histogram_uncorrected: out.uncorrected.as_ref().map(HistogramBlob::of),
        intervals: out.intervals.clone(),
        warmup: Warmup::from_counters(inp.warmup.as_secs_f64(), &out.warmup),
        cpu: Cpu {
            client_s: out.client_cpu.as_secs_f64(),
            client_us_per_msg: per_msg(out.client_cpu),
            server_s: inp.server.as_ref().map(|s| s.cpu.as_secs_f64()),
            server_us_per_msg: inp.server.as_ref().map(|s| per_msg(s.cpu)),
        },
        server: inp.server.map(|s| s.counters),
        outcome: Outcome {
            success: reason.is_none(),
            reason,
        },
        status_classes: None,
        amqp: None,
        rate: out.rate.clone(),
    }
}

/// "asked 300,000 requests/s, achieved 212,400 (the schedule fell 2.3 s behind)",
/// when an open loop did not keep its rate.
pub fn rate_shortfall(r: &RateFigures) -> Option<String> {
    (r.kept_up == Some(false)).then(|| {
        format!(
            "asked {} requests/s, achieved {} (the schedule fell {:.1} s behind)",
            crate::report::format::rate(r.asked_per_s),
            crate::report::format::rate(r.achieved_per_s),
            r.behind_s
        )
    })
}

/// Prints the summary (and histogram), writes the JSON, and maps the outcome to an exit.
pub fn report(
    r: &RunResult,
    out: &EngineOutput,
    opts: &OutputOptions,
    json: Option<JsonSink>,
) -> Result<()> {
    report_with(r, out, opts, json, "")
}

/// `report`, with protocol-specific lines (`extra`) printed right after the summary.
pub fn report_with(
    r: &RunResult,
    out: &EngineOutput,
    opts: &OutputOptions,
    json: Option<JsonSink>,
    extra: &str,
) -> Result<()> {
    // The file first: if stdout is a pipe closed early (| head), the result is kept.
    if let Some(sink) = json {
        sink.write(r)?;
    }
    print!("{}", text::summary(r));
    print!("{extra}");
    if let Some(bucket) = opts.histogram_bucket_us {
        print!("{}", text::histogram(&out.latency, bucket));
    }
    match &r.outcome.reason {
        None => Ok(()),
        Some(why) => Err(Error::ShortFall(format!("the run fell short: {why}"))),
    }
}

pub fn unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}
