//! What the `connect` parent and its worker processes say to each other: the worker's
//! share of the plan (JSON in its environment), commands (lines on its stdin), and its
//! counters (JSON lines on its stdout).

use crate::stats::IntervalRow;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};

/// The environment variable that carries a worker's spec.
pub const SPEC_ENV: &str = "WIREBENCH_CONNECT_SPEC";

/// Commands on a worker's stdin (and `procs::group::STOP`, which stops it).
pub const CMD_GO: &str = "go";
pub const CMD_PING: &str = "ping";

#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum TlsSpec {
    Insecure,
    CaFile(String),
    CaPem(String),
    System,
}

/// One worker's share.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct WorkerSpec {
    pub index: usize,
    /// Global number of this worker's first connection: picks its source and destination.
    pub first: u64,
    /// Connections (hold) or cycles (churn); 0 with a churn duration.
    pub count: u64,
    pub churn: bool,
    pub duration_ms: Option<u64>,
    /// New connections per second in this worker; 0 = no limit.
    pub rate: f64,
    pub concurrency: usize,
    pub dests: Vec<SocketAddr>,
    pub sources: Vec<IpAddr>,
    pub timeout_ms: u64,
    pub ping_interval_ms: Option<u64>,
    pub tls: Option<TlsSpec>,
    pub server_name: String,
    /// Added to every connection id (a shard's index in the top bits, so ids are
    /// unique over a sharded run).
    #[serde(default)]
    pub id_base: u64,
    /// `--ramp`: this worker's connections (churn: slots) start spread over it.
    #[serde(default)]
    pub ramp: Option<crate::engine::Ramp>,
    /// `--interval`, ms: the length of one step of the series (`WorkerMsg::Interval`).
    #[serde(default = "default_step_ms")]
    pub step_ms: u64,
    /// `--stages` (churn): cycles started per second by stages, over every process;
    /// this worker starts the run's cycles `k processes + index` (`engine::Attempts`).
    #[serde(default)]
    pub stages: Vec<crate::engine::Stage>,
    /// The client processes sharing the stages.
    #[serde(default = "one")]
    pub processes: usize,
}

fn one() -> usize {
    1
}

fn default_step_ms() -> u64 {
    1000
}

/// A worker's counters; the parent adds them up.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Counts {
    /// connect() calls made (sockets that could not even be created count too).
    pub attempts: u64,
    /// Connections that came up (TCP, and TLS when asked).
    pub established: u64,
    /// Failed attempts by errno name (EMFILE, EADDRNOTAVAIL, ECONNREFUSED, ETIMEDOUT, ...).
    pub failures: BTreeMap<String, u64>,
    /// Established connections that ended while held, by why (reset, closed, ...).
    pub lost: BTreeMap<String, u64>,
    /// Open right now.
    pub open: u64,
    /// Echo frames: pings (hold) or the one round trip per cycle (churn).
    pub sent: u64,
    pub ok: u64,
    /// Failed echo frames by kind (mismatch, timeout, reset, closed, io).
    pub errors: BTreeMap<String, u64>,
    /// Echo frames written whose reply had not come back (nor failed) when counted:
    /// counted by the worker from its waiting slots, not derived from the others, so
    /// sent = ok + errors + in_flight is a check that can fail.
    #[serde(default)]
    pub in_flight: u64,
    /// Churn: cycles that went through connect, echo and close.
    pub cycles_ok: u64,
    pub bytes_sent: u64,
    pub bytes_received: u64,
}

/// A count by kind as every line of connect's text says it, each kind by its name in
/// the JSON (`failures`, `lost`, `errors`): "timeout 30,000, reset 2"; "none" when empty.
pub fn by_kind(m: &BTreeMap<String, u64>) -> String {
    if m.is_empty() {
        return "none".into();
    }
    m.iter()
        .map(|(k, v)| format!("{k} {}", crate::report::format::group(*v)))
        .collect::<Vec<_>>()
        .join(", ")
}

fn add_map(a: &mut BTreeMap<String, u64>, b: &BTreeMap<String, u64>) {
    for (k, v) in b {
        *a.entry(k.clone()).or_default() += v;
    }
}

impl Counts {
    /// These counts and a ramp's left out of the figures, when there is one: the
    /// whole run's.
    pub fn with_ramp(mut self, ramp: Option<&Counts>) -> Counts {
        if let Some(r) = ramp {
            self.add(r);
        }
        self
    }

    pub fn add(&mut self, o: &Counts) {
        self.attempts += o.attempts;
        self.established += o.established;
        add_map(&mut self.failures, &o.failures);
        add_map(&mut self.lost, &o.lost);
        self.open += o.open;
        self.sent += o.sent;
        self.ok += o.ok;
        add_map(&mut self.errors, &o.errors);
        self.in_flight += o.in_flight;
        self.cycles_ok += o.cycles_ok;
        self.bytes_sent += o.bytes_sent;
        self.bytes_received += o.bytes_received;
    }

    pub fn failed(&self) -> u64 {
        self.failures.values().sum()
    }

    pub fn lost_total(&self) -> u64 {
        self.lost.values().sum()
    }

    pub fn echo_errors(&self) -> u64 {
        self.errors.values().sum()
    }

    /// Every echo frame sent ended in exactly one place: ok, an error, or still out.
    pub fn invariant_holds(&self) -> bool {
        self.sent == self.ok + self.echo_errors() + self.in_flight
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "k", rename_all = "snake_case")]
pub enum WorkerMsg {
    Ready,
    Progress {
        c: Counts,
    },
    /// Every connection of this worker's share was attempted and settled.
    Connected {
        c: Counts,
        /// A churn ramp left out of the figures: what happened during it (`c` is then
        /// the time after it). None: the ramp, if any, is counted in `c`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ramp: Option<Counts>,
    },
    /// Step `step` of the series (the measured phase in steps of `--interval`, from
    /// the worker's start): its counts and its connect-latency histogram, encoded in
    /// `row.histogram` when it timed any. Sent once a step is over, in order.
    Interval {
        step: u64,
        row: IntervalRow,
    },
    /// `c` (and `ramp`) as in `Connected`; `Progress` counts the ramp in its `c`.
    Final {
        c: Counts,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ramp: Option<Counts>,
        /// Seconds of the measured phase, the engine's (`EngineOutput::elapsed`): from
        /// the end of a ramp left out to the last reply; from the start otherwise.
        #[serde(default)]
        measured_s: f64,
        /// Connect latency (socket to established), HdrHistogram V2 base64.
        connect_hist: String,
        /// Echo/ping latency.
        echo_hist: String,
        cpu_s: f64,
        /// The worker's own RSS while it held its connections.
        rss_bytes: u64,
        /// The worker's own peak RSS (VmHWM) by its final report: read by the worker,
        /// since a churn worker may be gone before the parent could read it.
        #[serde(default)]
        peak_rss_bytes: Option<u64>,
        /// Its engine threads per event loop.
        #[serde(default)]
        event_loop: crate::stats::LoopCounts,
        /// `--stages`: its figures per stage, its part of each stage's targets.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        stages: Option<Vec<crate::stats::stages::StageFigures>>,
    },
}
