//! What a `connect` run reports: the shared RunResult (echo/ping frames as its
//! requests) plus a `connect` section with connection counts, failures by errno,
//! the connect-latency histogram, rates, and memory per connection.

use super::messages::Counts;
use super::plan::{ConnectConfig, Mode};
use crate::report::format::group;
use crate::server::counters::ServerTotals;
use crate::stats::result::ClientProcess;
use crate::stats::result::{HistogramBlob, Totals, Warmup};
use crate::stats::Latency;
use crate::stats::{IntervalRow, LatencySummary, Measured, RunResult, Unit};
use crate::sys::limits::KernelLimits;
use serde::Serialize;
use std::collections::BTreeMap;
use std::net::SocketAddr;

/// What a run gathered from its workers, its server and /proc: what the report is made of.
pub struct Run {
    /// The measured phase's counts: the whole run's, unless a churn ramp was left out.
    pub counts: Counts,
    /// A churn ramp left out of the figures: what happened during it. None: the ramp,
    /// if any, is counted in `counts`.
    pub ramp: Option<Counts>,
    /// With `ramp`: the measured phase after it, seconds (the workers' longest).
    pub measured_s: Option<f64>,
    pub connect_hist: Latency,
    pub echo_hist: Latency,
    pub client_cpu_s: f64,
    pub server_cpu_s: Option<f64>,
    pub timeline: Timeline,
    pub memory: Memory,
    /// The series: one row per `--interval`, its histogram the connect latency
    /// (`series.rs`), every worker's merged.
    pub intervals: Vec<IntervalRow>,
    pub server: Option<ServerTotals>,
    pub targets: Vec<SocketAddr>,
    pub interrupted: bool,
    pub workers_failed: usize,
    /// The client worker processes' summed peak RSS (VmHWM), read once every
    /// connection was up; the built-in server runs in processes of its own.
    pub client_process: Option<ClientProcess>,
    /// `--stages` (churn): each stage's figures, every worker's added.
    pub stages: Option<Vec<crate::stats::stages::StageFigures>>,
}

#[derive(Default)]
pub struct Timeline {
    /// From "go" until every worker had settled all its connects.
    pub reached_s: f64,
    pub hold_s: f64,
    /// The measured phase: from "go" until the workers were told to stop (coming up,
    /// then the hold), or until churn ended; not the teardown after it.
    pub elapsed_s: f64,
    /// From "stop" until every worker had closed its connections and reported.
    pub teardown_s: f64,
    /// Wall clock when the workers were told to go (the measured phase began), Unix ms.
    pub go_unix_ms: u64,
}

/// Memory before the first connect and with every connection up.
#[derive(Default)]
pub struct Memory {
    pub held: u64,
    pub server_active: Option<u64>,
    pub server_processes: usize,
    pub server_rss_before: u64,
    pub server_rss_after: u64,
    pub client_rss_before: u64,
    pub client_rss_after: u64,
    pub slab_before: u64,
    pub slab_after: u64,
}

impl Run {
    /// The whole run's counts: the measured phase's and a ramp's left out.
    pub fn whole(&self) -> Counts {
        self.counts.clone().with_ramp(self.ramp.as_ref())
    }
}

pub struct Outcome {
    pub reason: Option<String>,
}

fn per(delta_after: u64, before: u64, n: u64) -> Option<f64> {
    (n > 0).then(|| (delta_after as f64 - before as f64) / n as f64)
}

#[derive(Serialize)]
pub struct MemorySection {
    /// Connections open when memory was read.
    pub connections: u64,
    pub server_processes: usize,
    pub server_rss_bytes_before: Option<u64>,
    pub server_rss_bytes_after: Option<u64>,
    /// (RSS with the connections up - RSS before) / connections, all server processes.
    pub server_rss_per_conn_bytes: Option<f64>,
    pub client_rss_bytes_before: u64,
    pub client_rss_bytes_after: u64,
    pub client_rss_per_conn_bytes: Option<f64>,
    pub slab_bytes_before: u64,
    pub slab_bytes_after: u64,
    /// /proc/meminfo Slab delta per connection: both ends when the server is on this machine.
    pub slab_per_conn_bytes: Option<f64>,
}

#[derive(Serialize)]
pub struct ChurnSection {
    pub cycles: u64,
    pub cycles_ok: u64,
    pub connections_per_s: f64,
}

/// A churn ramp left out of the figures (`connect.ramp`): what happened during it,
/// counted apart so that it and the rest of the section add up to the whole run (its
/// established plus the section's are the server's accepts). All counters, so that
/// results merge by summing them; its length is `config.ramp.seconds`. A cycle counts
/// where each of its parts happened: its attempt when it began, its echo when it was
/// sent, so one that began during the ramp and echoed after it has its attempt here and
/// its echo in the figures (at most one per slot in flight at the ramp's end).
#[derive(Serialize)]
pub struct RampSection {
    pub attempts: u64,
    pub established: u64,
    pub failed: u64,
    pub failures: BTreeMap<String, u64>,
    pub lost: BTreeMap<String, u64>,
    pub cycles_ok: u64,
    pub sent: u64,
    pub ok: u64,
    pub errors: BTreeMap<String, u64>,
    pub in_flight: u64,
}

impl RampSection {
    fn of(c: &Counts) -> Self {
        RampSection {
            attempts: c.attempts,
            established: c.established,
            failed: c.failed(),
            failures: c.failures.clone(),
            lost: c.lost.clone(),
            cycles_ok: c.cycles_ok,
            sent: c.sent,
            ok: c.ok,
            errors: c.errors.clone(),
            in_flight: c.in_flight,
        }
    }
}

#[derive(Serialize)]
pub struct PingSection {
    pub interval_s: f64,
    pub sent: u64,
    pub ok: u64,
}

#[derive(Serialize)]
pub struct ConnectSection {
    pub mode: &'static str,
    pub requested: u64,
    pub attempts: u64,
    pub established: u64,
    pub failed: u64,
    /// Failed attempts by errno name.
    pub failures: BTreeMap<String, u64>,
    /// Established connections that ended early, by why.
    pub lost: BTreeMap<String, u64>,
    /// From the start until every attempt had settled.
    pub time_to_establish_s: f64,
    /// Attempts per second over that time.
    pub connect_rate_per_s: f64,
    pub hold_s: f64,
    /// From the stop until every worker had closed its connections and reported: not
    /// in `elapsed_s`, which is the phases the run names (establish, hold; churn).
    pub teardown_s: f64,
    pub processes: usize,
    pub server_processes: Option<usize>,
    pub server_active: Option<u64>,
    /// Null when no connection was established.
    #[serde(with = "crate::stats::latency::null_when_empty")]
    pub connect_latency_us: LatencySummary,
    pub connect_histogram: HistogramBlob,
    pub churn: Option<ChurnSection>,
    /// A churn ramp left out of the figures (null when there is none, or it is counted).
    pub ramp: Option<RampSection>,
    pub ping: Option<PingSection>,
    pub memory: MemorySection,
    pub kernel: KernelLimits,
}

/// The shared result plus the `connect` section, as one JSON object.
#[derive(Serialize)]
pub struct ConnectResult {
    #[serde(flatten)]
    pub base: RunResult,
    pub connect: ConnectSection,
}

/// The echo frames' accounting, each term counted on its own by the workers.
fn totals(c: &Counts) -> Totals {
    Totals {
        sent: c.sent,
        ok: c.ok,
        errors: c.echo_errors(),
        in_flight: c.in_flight,
        expected: None,
        bytes_sent: c.bytes_sent,
        bytes_received: c.bytes_received,
        connections: c.established,
        connections_from_warmup: 0,
        connect_errors: c.failed(),
        events: 0,
        exchange_sent: 0,
        exchange_answered: 0,
        over_budget: 0,
        invariant_holds: Some(c.invariant_holds()),
    }
}

/// The prefix of a failed attempt's entry in the result's `errors` (by errno).
const CONNECT_PREFIX: &str = "connect_";
/// The prefix of a lost connection's entry in the result's `errors` (by kind).
const LOST_PREFIX: &str = "lost_";

/// The result's `errors`: the echo frames' by kind, each failed attempt as
/// `connect_<errno>` and each lost connection as `lost_<kind>`.
fn error_totals(c: &Counts) -> BTreeMap<String, u64> {
    let mut m: BTreeMap<String, u64> = c.errors.clone();
    for (k, v) in &c.failures {
        *m.entry(format!(
            "{CONNECT_PREFIX}{}",
            k.to_lowercase().replace(' ', "_")
        ))
        .or_default() += v;
    }
    for (k, v) in &c.lost {
        *m.entry(format!("{LOST_PREFIX}{k}")).or_default() += v;
    }
    m.retain(|_, v| *v > 0);
    m
}

/// The echo frames' errors by kind, out of the result's `errors` (`error_totals`).
pub fn frame_errors(errors: &BTreeMap<String, u64>) -> BTreeMap<String, u64> {
    errors
        .iter()
        .filter(|(k, _)| !k.starts_with(CONNECT_PREFIX) && !k.starts_with(LOST_PREFIX))
        .map(|(k, v)| (k.clone(), *v))
        .collect()
}

pub fn build(
    cfg: &ConnectConfig,
    r: &Run,
    outcome: Outcome,
    started_unix_ms: u64,
    kernel: KernelLimits,
) -> ConnectResult {
    let elapsed_s = r.measured_s.unwrap_or(r.timeline.elapsed_s);
    let mut base = RunResult::builder(Measured {
        kind: "connect",
        target: r.targets.first().map(|a| a.to_string()).unwrap_or_default(),
        config: config_json(cfg, r),
        started_unix_ms,
        // A churn ramp left out: the figures are over the measured phase after it.
        elapsed_s,
        totals: totals(&r.counts),
        errors: error_totals(&r.counts),
        unit: Unit::new("pings", "echoed", true),
        latency: &r.echo_hist,
        client_cpu_s: r.client_cpu_s,
    })
    .server_cpu(r.server_cpu_s)
    .client_process(r.client_process.clone())
    .warmup(ramp_warmup(cfg, r.ramp.as_ref()))
    .intervals(&r.intervals)
    .stages(r.stages.clone())
    .server(
        r.server
            .as_ref()
            .map(|t| serde_json::to_value(t).unwrap_or_default()),
    )
    .finish(with_accounting(outcome.reason, &r.whole()));
    // A churn ramp left out: the measured phase starts once it is over, as the loads'
    // (`LoadShape::measure_start`), so that shards line up by it in a merge.
    let ramp_ms = match (cfg.ramp, &r.ramp) {
        (Some(rp), Some(_)) => rp.over.as_millis() as u64,
        _ => 0,
    };
    base.shard = cfg
        .coordination
        .info(r.timeline.go_unix_ms + ramp_ms, portion_json(cfg));
    ConnectResult {
        base,
        connect: section(cfg, r, kernel),
    }
}

/// The plan as the config block says it, with the hold and the ping interval.
fn plan_json(cfg: &ConnectConfig) -> (serde_json::Value, f64, Option<f64>) {
    // A shard's config block is the whole run as given, the same on every shard; what
    // this shard did is its `portion`.
    let total = cfg.whole.as_ref().map_or(cfg.total, |w| w.total);
    match &cfg.mode {
        Mode::Hold { hold, ping } => (
            serde_json::json!({"type": "count", "connections": total}),
            hold.as_secs_f64(),
            ping.map(|p| p.as_secs_f64()),
        ),
        Mode::Churn { duration: Some(d) } => (
            serde_json::json!({"type": "duration", "duration_s": d.as_secs_f64()}),
            0.0,
            None,
        ),
        Mode::Churn { duration: None } => (
            serde_json::json!({"type": "count", "cycles": total}),
            0.0,
            None,
        ),
    }
}

fn mode_name(cfg: &ConnectConfig) -> &'static str {
    match cfg.mode {
        Mode::Hold { .. } => "hold",
        Mode::Churn { .. } => "churn",
    }
}

/// The result's `config`: for a shard, the whole run as given.
fn config_json(cfg: &ConnectConfig, r: &Run) -> serde_json::Value {
    let (plan, hold_s, ping_s) = plan_json(cfg);
    let mut config = serde_json::json!({
        "threads": 1,
        "connections_per_thread": cfg.total.div_ceil(cfg.processes as u64).max(1),
        "pipeline": 1,
        "plan": plan,
        "mode": mode_name(cfg),
        "connections": cfg.total,
        "processes": cfg.processes,
        "server_processes": cfg.builtin().then_some(cfg.server_processes),
        "builtin_server": cfg.builtin(),
        "targets": r.targets.iter().map(|a| a.to_string()).collect::<Vec<_>>(),
        "sources": cfg.sources.len(),
        "connect_rate": cfg.rate,
        "concurrency": cfg.concurrency,
        "ramp": cfg.ramp.map(|r| r.to_json()),
        "chosen": cfg.chosen.json(),
        "hold_s": hold_s,
        "ping_interval_s": ping_s,
        "timeout_s": cfg.timeout.as_secs_f64(),
        "interval_s": cfg.interval.as_secs_f64(),
        "tls": cfg.tls.is_some(),
        "echo_payload_bytes": super::worker::PING_PAYLOAD,
    });
    if !cfg.stages.is_empty() {
        // The whole run's stages, as given (every shard the same).
        let whole = cfg.whole.as_ref().map_or(cfg.stages, |w| w.stages);
        config["stages"] = whole
            .list()
            .iter()
            .map(|s| serde_json::json!({"seconds": s.over.as_secs_f64(), "target_per_s": s.target}))
            .collect();
    }
    if let Some(w) = &cfg.whole {
        config["connections"] = serde_json::json!(w.total);
        config["connections_per_thread"] =
            serde_json::json!(w.total.div_ceil(w.processes.unwrap_or(1) as u64).max(1));
        config["processes"] = serde_json::json!(w.processes);
        config["sources"] = serde_json::json!(w.sources);
        config["connect_rate"] = serde_json::json!(w.rate);
        config["concurrency"] = serde_json::json!(w.concurrency);
        // What this shard chose for itself is its own, not the whole run's (its
        // sources are in `portion`): the key is left out, as the schema has no null
        // for it and the config must be the same on every shard.
        if let Some(o) = config.as_object_mut() {
            o.remove("chosen");
        }
        config["shards"] = serde_json::json!(cfg.coordination.shard.as_ref().map(|s| s.count));
    }
    config
}

/// A shard's `portion`: its share of what the config block gives whole.
fn portion_json(cfg: &ConnectConfig) -> serde_json::Value {
    serde_json::json!({
        "connections": cfg.total,
        "processes": cfg.processes,
        "sources": cfg.sources.len(),
        "source_first": cfg.sources.first().map(|a| a.to_string()),
        "source_last": cfg.sources.last().map(|a| a.to_string()),
        "connect_rate": cfg.rate,
        "concurrency": cfg.concurrency,
        "connection_id_base": cfg.coordination.shard.as_ref().map(|s| s.connection_id_base()),
    })
}

/// The judge's reason, with the accounting first when it does not add up.
fn with_accounting(reason: Option<String>, whole: &Counts) -> Option<String> {
    if whole.invariant_holds() {
        return reason;
    }
    let why = format!(
        "accounting does not add up: sent {} != ok {} + errors {} + in flight {}",
        group(whole.sent),
        group(whole.ok),
        group(whole.echo_errors()),
        group(whole.in_flight)
    );
    Some(match reason {
        Some(r) => format!("{why}; {r}"),
        None => why,
    })
}

/// The `connect` block.
fn section(cfg: &ConnectConfig, r: &Run, kernel: KernelLimits) -> ConnectSection {
    let c = &r.counts;
    let m = &r.memory;
    // Churn with its ramp left out: its attempts, cycles and rates are the measured
    // phase's, over its time.
    let reach = r.measured_s.unwrap_or(r.timeline.reached_s);
    let per_reach = |n: u64| if reach > 0.0 { n as f64 / reach } else { 0.0 };
    ConnectSection {
        mode: mode_name(cfg),
        requested: cfg.total,
        attempts: c.attempts,
        established: c.established,
        failed: c.failed(),
        failures: c.failures.clone(),
        lost: c.lost.clone(),
        time_to_establish_s: reach,
        connect_rate_per_s: per_reach(c.attempts),
        hold_s: r.timeline.hold_s,
        teardown_s: r.timeline.teardown_s,
        processes: cfg.processes,
        server_processes: (m.server_processes > 0).then_some(m.server_processes),
        server_active: m.server_active,
        connect_latency_us: r.connect_hist.summary(),
        connect_histogram: HistogramBlob::of(&r.connect_hist),
        churn: cfg.is_churn().then(|| ChurnSection {
            cycles: c.attempts,
            cycles_ok: c.cycles_ok,
            connections_per_s: per_reach(c.cycles_ok),
        }),
        ramp: r.ramp.as_ref().map(RampSection::of),
        ping: plan_json(cfg).2.map(|iv| PingSection {
            interval_s: iv,
            sent: c.sent,
            ok: c.ok,
        }),
        memory: MemorySection::of(m),
        kernel,
    }
}

impl MemorySection {
    fn of(m: &Memory) -> Self {
        let server_known = m.server_processes > 0;
        MemorySection {
            connections: m.held,
            server_processes: m.server_processes,
            server_rss_bytes_before: server_known.then_some(m.server_rss_before),
            server_rss_bytes_after: server_known.then_some(m.server_rss_after),
            server_rss_per_conn_bytes: if server_known {
                per(m.server_rss_after, m.server_rss_before, m.held)
            } else {
                None
            },
            client_rss_bytes_before: m.client_rss_before,
            client_rss_bytes_after: m.client_rss_after,
            client_rss_per_conn_bytes: per(m.client_rss_after, m.client_rss_before, m.held),
            slab_bytes_before: m.slab_before,
            slab_bytes_after: m.slab_after,
            slab_per_conn_bytes: per(m.slab_after, m.slab_before, m.held),
        }
    }
}

/// The result's `warmup`: the echo frames of a churn ramp left out (as the loads' ramp
/// is their warm-up), or nothing.
fn ramp_warmup(cfg: &ConnectConfig, ramp: Option<&Counts>) -> Warmup {
    match (cfg.ramp, ramp) {
        (Some(rp), Some(c)) => Warmup {
            duration_s: rp.over.as_secs_f64(),
            sent: c.sent,
            ok: c.ok,
            errors: c.echo_errors(),
        },
        _ => Warmup::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn in_flight_is_counted_not_derived_so_the_invariant_can_fail() {
        let mut c = Counts {
            sent: 10,
            ok: 7,
            in_flight: 2,
            ..Default::default()
        };
        c.errors.insert("timeout".into(), 1);
        assert_eq!(totals(&c).invariant_holds, Some(true));
        // A frame lost from the books: sent, but neither settled nor awaited.
        c.in_flight = 1;
        assert_eq!(totals(&c).invariant_holds, Some(false));
        assert_eq!(totals(&c).in_flight, 1);
    }
}
