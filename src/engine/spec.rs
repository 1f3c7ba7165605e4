//! What a load is, as the engine takes it: the plan (when a run stops), the load's
//! shape, and the validated `LoadSpec` every protocol's load command hands
//! `engine::run`. Its own file so that the engine's parts (worker, ctx, conn) read it
//! without importing the engine's `mod.rs`, which imports them.

use super::admission::Attempts;
use super::connector::Connector;
use super::ramp::Ramp;
use super::refill::Refill;
use super::stages::{Curve, Stages};
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
    /// Worker threads: never more than `connections` (the config sees to it).
    pub threads: usize,
    /// Connections in total, spread over the threads (`connections_of`), as wrk, oha
    /// and redis-benchmark count them.
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
    /// Closed loop: connection starts spread over a ramp; open loop: the rate rising
    /// over it (every connection open from the start).
    pub ramp: Option<Ramp>,
    /// Open loop: the rate by stages (`--stages`), `rate` their highest target; empty
    /// for a flat rate.
    pub stages: Stages,
    pub timeout: Duration,
    /// `--memory-budget`: most bytes the load's connections keep together (unfinished
    /// replies, output not written yet), each worker thread an equal share; a
    /// connection that would take its worker past it is dropped (`over_budget`).
    pub memory_budget: usize,
    /// `--coalesce`: a worker with nothing to do naps before it waits for replies
    /// (`engine::coalesce`), so replies are read in bursts.
    pub coalesce: bool,
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

    /// When a duration plan stops sending, from the run's start: the duration after
    /// the warm-up and after the ramp, whether the ramp is measured or not.
    pub fn deadline(&self) -> Option<Duration> {
        match self.plan {
            Plan::Duration(d) => Some(
                self.warmup
                    .max(self.ramp.map_or(Duration::ZERO, |r| r.over))
                    + d,
            ),
            _ => None,
        }
    }

    /// Open loop: the rate as a function of time when it is not flat (stages, or a
    /// ramp, which is the stage that rises to `rate`).
    pub fn curve(&self) -> Option<Arc<Curve>> {
        let rate = self.rate?;
        if !self.stages.is_empty() {
            return Some(Arc::new(Curve::new(self.stages.list())));
        }
        self.ramp.map(|r| Arc::new(Curve::new(&[r.as_stage(rate)])))
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
            } => Some(self.connections as u64 * self.pipeline as u64 * iterations * reconnects),
        }
    }

    /// The connections worker `w` holds: `connections / threads`, and one more for
    /// the lowest `connections % threads` workers.
    pub fn connections_of(&self, w: usize) -> usize {
        let t = self.threads.max(1);
        self.connections / t + usize::from(w < self.connections % t)
    }

    /// The run-wide number of worker `w`'s first connection slot (its slots follow it):
    /// where its connections sit in the ramp's and the open loop's order.
    pub fn first_connection_of(&self, w: usize) -> usize {
        let t = self.threads.max(1);
        w * (self.connections / t) + w.min(self.connections % t)
    }

    /// Worker `w`'s share of `n` requests in proportion to its connections: each
    /// connection's share is `n / connections`, one more for the lowest `n %
    /// connections` connections of the run.
    pub fn requests_of(&self, w: usize, n: u64) -> u64 {
        let c = self.connections.max(1) as u64;
        let (first, mine) = (
            self.first_connection_of(w) as u64,
            self.connections_of(w) as u64,
        );
        let extra = (n % c).saturating_sub(first).min(mine);
        mine * (n / c) + extra
    }
}

/// A validated load: what every protocol's load command hands the engine.
pub struct LoadSpec {
    pub connector: Connector,
    pub shape: LoadShape,
    /// The interval of the series: one snapshot per worker, one row and one histogram.
    pub interval: Duration,
    /// Each interval row keeps its histogram, encoded (a shard's result, for the merge).
    pub keep_interval_histograms: bool,
    /// The series' histograms hold connection handshakes (connect to ready), not
    /// replies: `wirebench connect`, whose figure is the connect latency. The replies'
    /// latency is still the run's `latency`.
    pub interval_handshakes: bool,
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

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(threads: usize, connections: usize) -> LoadShape {
        LoadShape {
            threads,
            connections,
            pipeline: 1,
            refill: Refill::default(),
            plan: Plan::Count(1),
            rate: None,
            warmup: Duration::ZERO,
            ramp: None,
            stages: Stages::default(),
            timeout: Duration::from_secs(1),
            memory_budget: crate::engine::limits::DEFAULT_MEMORY_BUDGET,
            coalesce: true,
        }
    }

    #[test]
    fn connections_spread_over_threads_remainders_to_the_lowest() {
        let s = shape(3, 10);
        let of: Vec<usize> = (0..3).map(|w| s.connections_of(w)).collect();
        assert_eq!(of, [4, 3, 3]);
        let first: Vec<usize> = (0..3).map(|w| s.first_connection_of(w)).collect();
        assert_eq!(first, [0, 4, 7]);
        let even = shape(2, 10);
        assert_eq!((even.connections_of(0), even.connections_of(1)), (5, 5));
        assert_eq!(even.first_connection_of(1), 5);
    }

    #[test]
    fn requests_follow_the_connections() {
        let s = shape(3, 10);
        // 25 over 10 connections: 3 for the first five, 2 for the others; worker 0
        // holds connections 0-3, worker 1 4-6, worker 2 7-9.
        let of: Vec<u64> = (0..3).map(|w| s.requests_of(w, 25)).collect();
        assert_eq!(of, [12, 7, 6]);
        assert_eq!(of.iter().sum::<u64>(), 25);
        for n in [0, 1, 9, 10, 11, 1_000_003] {
            let sum: u64 = (0..3).map(|w| s.requests_of(w, n)).sum();
            assert_eq!(sum, n, "{n}");
        }
    }
}
