//! The result of one run: what was asked, where, what happened. Serialized as the
//! JSON described by schema/result.schema.json; every protocol fills the same shape,
//! and builds it through `RunResultBuilder` (result_builder.rs).

use super::error_texts::ErrorTexts;
use super::event_loop::LoopCounts;
pub use super::latency::HistogramBlob;
use super::latency::LatencySummary;
use super::outcome::{Counters, ErrorKind};
use super::snapshot::IntervalRow;
use super::unit::Unit;
use crate::sys::Environment;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub const SCHEMA_VERSION: u32 = 1;

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RunResult {
    pub schema_version: u32,
    /// The load command that produced it, as the protocol names itself.
    pub kind: String,
    pub started_unix_ms: u64,
    pub target: String,
    /// The validated run configuration, as the protocol describes it.
    pub config: serde_json::Value,
    pub environment: Environment,
    /// The measured phase only: warm-up and start-up excluded.
    pub elapsed_s: f64,
    pub totals: Totals,
    /// Request and connection errors by kind (only kinds that occurred).
    pub errors: BTreeMap<String, u64>,
    /// What the peers said when requests or connections failed: a bounded sample of
    /// distinct texts with their counts (`stats/error_texts.rs`); empty when no error
    /// came with words, and in results written before it was kept.
    #[serde(default)]
    pub error_texts: ErrorTexts,
    pub throughput: Throughput,
    /// What a counted item is in the protocol's words, and whether it has a reply.
    #[serde(default)]
    pub unit: Unit,
    /// Latency from the intended send time, microseconds; null when nothing was timed
    /// (no replies, or a protocol whose items settle on write).
    #[serde(with = "super::latency::null_when_empty")]
    pub latency_us: LatencySummary,
    /// Open loop only: latency from the actual send time (what a coordinated-omission tool would show).
    pub latency_uncorrected_us: Option<LatencySummary>,
    pub histogram: HistogramBlob,
    pub histogram_uncorrected: Option<HistogramBlob>,
    pub intervals: Vec<IntervalRow>,
    pub warmup: Warmup,
    pub cpu: Cpu,
    /// The load generator's own process (wirebench itself); None for external generators.
    #[serde(default)]
    pub client_process: Option<ClientProcess>,
    /// Counters of the built-in server, when the run started one.
    pub server: Option<serde_json::Value>,
    pub outcome: Outcome,
    /// A protocol's own named blocks, each at the top level under its name (HTTP's
    /// `status_classes`, AMQP's `amqp`, connect's `connect`): they enter through
    /// `RunResultBuilder::extra`, and code outside the protocol never looks inside them.
    /// Reading a result back, every top-level key this struct does not name lands here.
    #[serde(flatten)]
    pub extras: BTreeMap<String, serde_json::Value>,
    /// The run's thresholds (`--threshold`, docs/thresholds.md), each with what it
    /// measured and whether it passed; absent when none were given.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub thresholds: Vec<super::threshold::verdict::Verdict>,
    /// `--search` only: the capacity search this run was the best step of
    /// (docs/search.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub search: Option<super::search::SearchFigures>,
    /// Open loop (`--rate`) only: asked versus achieved, and the schedule's lag.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<super::rate::RateFigures>,
    /// `--stages` only: each stage's figures, requests by the stage they were meant to
    /// go in (docs/stages.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stages: Option<Vec<super::stages::StageFigures>>,
    /// This result is one shard of a larger run (`--shard I/N`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<super::shard::ShardInfo>,
    /// This result is an exact merge of several (shards, rounds, processes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merge: Option<super::shard::MergeInfo>,
    /// The machine while the run was measured: what other processes and the
    /// hypervisor took from the CPUs it used (absent where /proc/stat cannot be read,
    /// and in results written before it was recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine: Option<super::interference::Machine>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Totals {
    pub sent: u64,
    pub ok: u64,
    pub errors: u64,
    pub in_flight: u64,
    /// What the plan asked for, when it names a count.
    pub expected: Option<u64>,
    pub bytes_sent: u64,
    pub bytes_received: u64,
    /// Connections opened during the measured phase.
    pub connections: u64,
    /// Connections opened during the warm-up that carried on into the measured phase
    /// (they did measured work but were not opened in it).
    #[serde(default)]
    pub connections_from_warmup: u64,
    pub connect_errors: u64,
    /// Events from the peer that answered no request (pings, pushes, heartbeats).
    #[serde(default)]
    pub events: u64,
    /// Requests (commands) of the connections' opening and closing exchanges (a
    /// handshake's AUTH and SELECT, an upgrade, a goodbye), not counted in `sent`.
    #[serde(default)]
    pub exchange_sent: u64,
    /// Answers to them read (a refusal too).
    #[serde(default)]
    pub exchange_answered: u64,
    /// Connections dropped because the bytes all connections kept together reached
    /// the run's memory budget (`--memory-budget`, `config.memory_budget_bytes`); their
    /// requests are `too_large`.
    #[serde(default)]
    pub over_budget: u64,
    /// sent = ok + errors + in_flight, each counted on its own; for an external
    /// generator, whether the tool's own counts add up. Null when the producer
    /// does not report what the check needs.
    pub invariant_holds: Option<bool>,
}

impl Totals {
    pub fn from_counters(c: &Counters, expected: Option<u64>) -> Self {
        Totals {
            sent: c.sent,
            ok: c.ok,
            errors: c.request_errors(),
            in_flight: c.in_flight,
            expected,
            bytes_sent: c.bytes_sent,
            bytes_received: c.bytes_received,
            connections: c.connections,
            connections_from_warmup: c.connections_carried,
            connect_errors: c.connect_errors(),
            events: c.events,
            exchange_sent: c.exchanges.sent,
            exchange_answered: c.exchanges.answered,
            over_budget: c.over_budget,
            invariant_holds: Some(c.invariant_holds()),
        }
    }
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Throughput {
    /// Correct replies per second.
    pub msgs_per_s: f64,
    /// Reply bytes per second, 10^6 bytes; null when the counted items have no reply.
    pub mb_per_s: Option<f64>,
    /// Request bytes per second, 10^6 bytes.
    pub mb_sent_per_s: f64,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Warmup {
    pub duration_s: f64,
    pub sent: u64,
    pub ok: u64,
    pub errors: u64,
}

impl Warmup {
    pub fn from_counters(duration_s: f64, c: &Counters) -> Self {
        Warmup {
            duration_s,
            sent: c.sent,
            ok: c.ok,
            errors: c.request_errors(),
        }
    }
}

/// CPU time spent during the measured phase, and per correct reply.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Cpu {
    pub client_s: f64,
    /// Null when nothing counted: there is nothing to divide by.
    pub client_us_per_msg: Option<f64>,
    /// Only when the run started its own server.
    pub server_s: Option<f64>,
    pub server_us_per_msg: Option<f64>,
}

/// What the load generator's own process cost, and which loops it ran: its CPU is in
/// `Cpu` (worker threads, measured phase); this is its memory. Peak RSS is the process's VmHWM, so when the
/// built-in server ran on threads of the same process, it is included.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ClientProcess {
    /// VmHWM of the wirebench process at the end of the run, bytes.
    pub peak_rss_bytes: u64,
    /// True when a built-in server ran in this process, so its memory is in the figure.
    pub includes_builtin_server: bool,
    /// The generator's worker threads per event loop (io_uring or epoll); absent in
    /// results written before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_loop: Option<LoopCounts>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Outcome {
    pub success: bool,
    /// Why the run fell short, in one sentence, when it did.
    pub reason: Option<String>,
}

/// Error counts by name, only the kinds that occurred.
pub fn error_map(c: &Counters) -> BTreeMap<String, u64> {
    c.error_list()
        .into_iter()
        .map(|(k, n): (ErrorKind, u64)| (k.name().to_string(), n))
        .collect()
}

impl RunResult {
    /// The protocol block named `name`, when the run has one.
    pub fn extra(&self, name: &str) -> Option<&serde_json::Value> {
        self.extras.get(name)
    }

    /// The measured server's CPU time, seconds, and per counted item; set when known
    /// (the suite samples its server around each point).
    pub fn set_server_cpu(&mut self, server_s: Option<f64>) {
        self.cpu.server_s = server_s;
        self.cpu.server_us_per_msg = server_s.and_then(|s| per_item(self.totals.ok, s));
    }

    /// The interference measured over the run, when it was.
    pub fn interference(&self) -> Option<&super::interference::Interference> {
        self.machine.as_ref().map(|m| &m.interference)
    }

    /// Sets the interference measured over the run (None: not measured).
    pub fn set_interference(&mut self, i: Option<super::interference::Interference>) {
        self.machine = i.map(|interference| super::interference::Machine { interference });
    }

    /// Marks the run as fallen short for `why`, unless it already is.
    pub fn fall_short(&mut self, why: String) {
        if self.outcome.reason.is_none() {
            self.outcome = Outcome {
                success: false,
                reason: Some(why),
            };
        }
    }
}

/// Microseconds of `cpu_s` per counted item; None when nothing counted.
pub(super) fn per_item(ok: u64, cpu_s: f64) -> Option<f64> {
    (ok > 0).then(|| cpu_s * 1e6 / ok as f64)
}
