//! What every load command does around the engine: Ctrl-C handling, the descriptor
//! budget, turning the engine's output into a RunResult, judging it, printing, JSON.

use crate::config::OutputOptions;
use crate::engine::EngineOutput;
use crate::error::{Error, Result};
use crate::report::console::Console;
use crate::report::format::{count_of, group};
use crate::report::json::JsonSink;
use crate::report::text;
use crate::stats::rate::RateFigures;
use crate::stats::result::{error_map, ClientProcess, Totals, Warmup};
use crate::stats::{Counters, ErrorKind, LoopCounts, Measured, RunResult, Unit};
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

/// Why a run fell short, or None when it did all it was asked; `unit` names what counts.
pub fn judge(c: &Counters, expected: Option<u64>, unit: &Unit) -> Option<String> {
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
            why.push(format!(
                "expected {} {}, got {}",
                count_of(e, unit.one()),
                unit.counted,
                group(c.ok)
            ));
        }
    }
    if errs > 0 {
        why.push(format!("{} failed", count_of(errs, unit.one())));
    }
    if failed_connects > 0 {
        why.push(format!("{failed_connects} connections failed"));
    }
    if c.in_flight > 0 {
        why.push(format!(
            "{} got no reply",
            count_of(c.in_flight, unit.one())
        ));
    }
    if why.is_empty() && c.ok == 0 {
        why.push(format!("no {} {} at all", unit.noun, unit.counted));
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
    /// What a counted item is, in the protocol's words.
    pub unit: Unit,
    /// The protocol's own blocks, by name (`RunResultBuilder::extra`).
    pub extras: Vec<(&'static str, serde_json::Value)>,
}

/// The one sentence for a target where nothing ever accepted a connection, or None.
fn nothing_listens<X>(out: &EngineOutput<X>, target: &str, warmup: Duration) -> Option<String> {
    let (m, w) = (&out.measured, &out.warmup);
    let refused = m.errors_of(ErrorKind::ConnectRefused) + w.errors_of(ErrorKind::ConnectRefused);
    let attempts = m.connect_errors() + w.connect_errors();
    let opened = m.connections + w.connections;
    if opened > 0 || refused == 0 || refused != attempts {
        return None;
    }
    let secs = out.elapsed.as_secs_f64() + warmup.as_secs_f64();
    Some(format!(
        "nothing accepts connections at {target}: every attempt ({}) for {secs:.1} s was refused",
        group(attempts)
    ))
}

/// This process's peak memory, noting whether a built-in server shared it, and the
/// loops its load workers ran on.
pub fn client_process(
    includes_builtin_server: bool,
    event_loop: LoopCounts,
) -> Option<ClientProcess> {
    crate::sys::proc_fs::own_peak_rss_bytes().map(|peak_rss_bytes| ClientProcess {
        peak_rss_bytes,
        includes_builtin_server,
        event_loop: Some(event_loop),
    })
}

pub fn build_result<X>(inp: ResultInputs<'_>, out: &EngineOutput<X>) -> RunResult {
    let reason = match nothing_listens(out, &inp.target, inp.warmup) {
        Some(why) => Some(why),
        None => judge(&out.measured, out.expected, &inp.unit).map(|why| {
            match &out.first_connect_error {
                Some(first) if out.measured.connect_errors() > 0 => {
                    format!("{why} (first: {first})")
                }
                _ => why,
            }
        }),
    };
    let reason = match (
        reason,
        out.rate.as_ref().and_then(|r| rate_shortfall(r, &inp.unit)),
    ) {
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
    let builtin_server = inp.server.is_some();
    let mut b = RunResult::builder(Measured {
        kind: inp.kind,
        target: inp.target,
        config: inp.config,
        started_unix_ms: inp.started_unix_ms,
        elapsed_s: out.elapsed.as_secs_f64(),
        totals: Totals::from_counters(&out.measured, out.expected),
        errors: error_map(&out.measured),
        unit: inp.unit,
        latency: &out.latency,
        client_cpu_s: out.client_cpu.as_secs_f64(),
    })
    .uncorrected(out.uncorrected.as_ref())
    .intervals(&out.intervals)
    .warmup(Warmup::from_counters(inp.warmup.as_secs_f64(), &out.warmup))
    .error_texts(out.texts.clone())
    .server_cpu(inp.server.as_ref().map(|s| s.cpu.as_secs_f64()))
    .client_process(client_process(builtin_server, out.event_loop))
    .server(inp.server.map(|s| s.counters))
    .rate(out.rate.clone())
    .stages(out.stages.clone());
    for (name, block) in inp.extras {
        b = b.extra(name, block);
    }
    b.finish(reason)
}

/// "asked 300,000 messages/s, achieved 212,400 (the schedule fell 2.3 s behind)",
/// when an open loop did not keep its rate.
pub fn rate_shortfall(r: &RateFigures, unit: &Unit) -> Option<String> {
    (r.kept_up == Some(false)).then(|| {
        format!(
            "asked {} {}, achieved {} (the schedule fell {:.1} s behind)",
            crate::report::format::rate(r.asked_per_s),
            unit.per_s(),
            crate::report::format::rate(r.achieved_per_s),
            r.behind_s
        )
    })
}

/// Prints the summary (and histogram), writes the JSON, and maps the outcome to an exit.
pub fn report<X>(
    r: &RunResult,
    out: &EngineOutput<X>,
    opts: &OutputOptions,
    json: Option<JsonSink>,
) -> Result<()> {
    report_with(r, out, opts, json, "")
}

/// `report`, with protocol-specific lines (`extra`) printed right after the summary.
pub fn report_with<X>(
    r: &RunResult,
    out: &EngineOutput<X>,
    opts: &OutputOptions,
    json: Option<JsonSink>,
    extra: &str,
) -> Result<()> {
    // The file first: if stdout is a pipe closed early (| head), the result is kept.
    if let Some(sink) = json {
        sink.write(r)?;
    }
    let console = Console::for_json(opts.json.as_deref());
    console.print(&text::summary(r));
    console.print(extra);
    if let Some(bucket) = opts.histogram_bucket_us {
        console.print(&text::histogram(&out.latency, bucket));
    }
    match &r.outcome.reason {
        None => Ok(()),
        Some(why) => Err(Error::ShortFall(format!("the run fell short: {why}"))),
    }
}

pub use crate::clock::unix_ms;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shortfall_is_told_in_the_protocols_words() {
        let c = Counters {
            sent: 150,
            ok: 150,
            ..Default::default()
        };
        let confirmed = Unit::new("publishes", "confirmed", true);
        assert_eq!(
            judge(&c, Some(200), &confirmed).as_deref(),
            Some("expected 200 publishes confirmed, got 150")
        );
        let mut failed = c;
        failed.sent = 152;
        failed.in_flight = 1;
        failed.error(ErrorKind::Timeout, 1);
        assert_eq!(
            judge(&failed, None, &Unit::new("messages", "echoed", true)).as_deref(),
            Some("1 message failed; 1 message got no reply")
        );
        let none = Counters::default();
        assert_eq!(
            judge(&none, None, &Unit::new("requests", "answered", true)).as_deref(),
            Some("no requests answered at all")
        );
    }
}
