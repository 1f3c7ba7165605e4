//! What a load is, as the engine takes it: the plan (when a run stops), the load's
//! shape, and the validated `LoadSpec` every protocol's load command hands
//! `engine::run`. Its own file so that the engine's parts (worker, ctx, conn) read it
//! without importing the engine's `mod.rs`, which imports them.

use super::admission::Attempts;
use super::connector::Connector;
use super::ramp::Ramp;
use super::refill::Refill;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

/// When a run stops.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Plan {
    /// Send for this long (after the warm-up), then collect the replies in flight.
    Duration(Duration),
    /// Send exactly this many measured requests in total.
    Count(u64),
    /// evh_perf's plan: per reconnect round open the connections; per iteration send
    /// `pipeline` requests on each and wait for every reply; sleep between rounds.
    Batch {
        iterations: u64,
        reconnects: u64,
        sleep: Duration,
    },
    /// Open every connection and hold it until the stop flag: no request in closed
    /// loop; in open loop (`rate`) requests by the schedule once `LoadSpec::release`
    /// is set (at once without one), each connection's every `connections / rate`.
    /// A held connection that ends is tallied as lost (`ConnTally::lost`).
    Hold,
}

/// How much load and when it stops: threads, connections, what each keeps in flight,
/// the plan, the pacing and the timing. The validated config holds it and hands the
/// engine the same value (`LoadSpec::shape`), so the two never copy it field by field.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LoadShape {
    pub threads: usize,
    /// Connections per thread.
    pub connections: usize,
    /// Requests in flight per connection.
    pub pipeline: usize,
    /// Closed loop: refill the window on each reply, or send it whole once it is
    /// empty (`refill.rs`).
    pub refill: Refill,
    pub plan: Plan,
    /// Open loop: requests per second over all connections.
    pub rate: Option<f64>,
    pub warmup: Duration,
    /// Connection starts (and the rate, in open loop) spread over a ramp.
    pub ramp: Option<Ramp>,
    pub timeout: Duration,
    /// `--memory-budget`: most bytes the load's connections keep together (unfinished
    /// replies, output not written yet), each worker thread an equal share; a
    /// connection that would take its worker past it is dropped (`over_budget`).
    pub memory_budget: usize,
}

impl LoadShape {
    /// When the measured phase begins: after the warm-up, and after the ramp unless
    /// the ramp is measured.
    pub fn measure_start(&self) -> Duration {
        match self.ramp {
            Some(r) if !r.measured => self.warmup.max(r.over),
            _ => self.warmup,
        }
    }

    /// The number of correct replies the plan asks for, when it names one.
    pub fn expected(&self) -> Option<u64> {
        match self.plan {
            Plan::Duration(_) | Plan::Hold => None,
            Plan::Count(n) => Some(n),
            Plan::Batch {
                iterations,
                reconnects,
                ..
            } => Some(
                self.threads as u64
                    * self.connections as u64
                    * self.pipeline as u64
                    * iterations
                    * reconnects,
            ),
        }
    }
}

/// A validated load: what every protocol's load command hands the engine.
pub struct LoadSpec {
    pub connector: Connector,
    pub shape: LoadShape,
    /// Snapshot and progress interval.
    pub interval: Duration,
    /// Set it (Ctrl-C) to stop sending and let replies drain.
    pub stop: Arc<AtomicBool>,
    /// Connection policy: each connection sends exactly this many requests (claimed
    /// from the plan before it opens), says goodbye, and its slot opens a new one while
    /// the plan lasts (HTTP keep-alive off = 1, AMQP churn = n).
    pub per_connection: Option<u64>,
    /// Limits on connection attempts: in flight at once, a rate, whether to retry.
    pub attempts: Attempts,
    /// Hold plans: requests (open loop) begin once this is set.
    pub release: Option<Arc<AtomicBool>>,
}
