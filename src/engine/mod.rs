//! The load engine, shared by every protocol: worker threads (one io_uring or epoll loop each)
//! own the connections and drive the protocol's client sessions (`session.rs`); this
//! module starts them, gathers their interval snapshots for progress, and merges their
//! statistics and the protocol's figures exactly at the end.

pub mod admission;
mod busy;
pub mod conn;
pub mod connector;
mod ctx;
mod opt_u64;
pub mod ramp;
pub mod refill;
pub mod session;
mod tally;
pub mod transport;
mod uring_slots;
pub mod worker;

pub use admission::Attempts;
pub use ctx::{DRAIN_GRACE, MAX_READ_BUFFER, NOTHING_LISTENS};
pub use ramp::{Ramp, Share};
pub use refill::Refill;

use crate::clock::Clock;
use crate::error::{Error, Result};
use crate::stats::rate::RateFigures;
use crate::stats::snapshot::IntervalAggregator;
use crate::stats::{ConnTally, Counters, IntervalRow, Latency, LoopCounts, Snapshot};
use connector::Connector;
use session::{ClientSession, Figures, SessionFactory};
use std::sync::atomic::AtomicBool;
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};
use worker::{run_worker, WorkerArgs};

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

/// A validated load: what every protocol's load command hands the engine.
pub struct LoadSpec {
    pub connector: Connector,
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
    pub timeout: Duration,
    /// Snapshot and progress interval.
    pub interval: Duration,
    /// Set it (Ctrl-C) to stop sending and let replies drain.
    pub stop: Arc<AtomicBool>,
    /// Connection policy: each connection sends exactly this many requests (claimed
    /// from the plan before it opens), says goodbye, and its slot opens a new one while
    /// the plan lasts (HTTP keep-alive off = 1, AMQP churn = n).
    pub per_connection: Option<u64>,
    /// Connection starts (and the rate, in open loop) spread over a ramp.
    pub ramp: Option<Ramp>,
    /// Limits on connection attempts: in flight at once, a rate, whether to retry.
    pub attempts: Attempts,
    /// Hold plans: requests (open loop) begin once this is set.
    pub release: Option<Arc<AtomicBool>>,
}

impl LoadSpec {
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

pub use crate::stats::Observer;

/// Everything the engine measured; protocols turn it into a `RunResult`. `X`: the
/// protocol's own figures of the measured phase, merged over workers.
pub struct EngineOutput<X = ()> {
    pub figures: X,
    pub measured: Counters,
    pub warmup: Counters,
    pub latency: Latency,
    pub uncorrected: Option<Latency>,
    pub intervals: Vec<IntervalRow>,
    /// The measured phase: from the end of the warm-up to the last reply.
    pub elapsed: Duration,
    /// CPU time of the worker threads during the measured phase.
    pub client_cpu: Duration,
    pub expected: Option<u64>,
    /// The text of the first failed connection attempt of any worker.
    pub first_connect_error: Option<String>,
    /// A signal stopped the run before its plan was done.
    pub interrupted: bool,
    /// Connection handshakes of protocols that have one (connect to ready), measured phase.
    pub handshake: Latency,
    /// Open loop: what was asked and how far the schedule fell behind.
    pub rate: Option<RateFigures>,
    /// Failed attempts by errno and connections lost while held, whole run.
    pub conns: ConnTally,
    /// Worker threads per event loop (io_uring or epoll).
    pub event_loop: LoopCounts,
}

/// What a worker hands over while it runs.
pub enum WorkerReport {
    /// One interval's snapshot, for progress and the JSON series.
    Interval(Snapshot),
    /// The worker's connections so far (sent with every interval, and at once when its
    /// every slot has had its first attempt settle: `up`).
    Connections {
        worker: usize,
        counters: Counters,
        /// Boxed: 1.2 KB, once per interval.
        conns: Box<ConnTally>,
        up: bool,
    },
}

/// Runs the load to its end.
pub fn run<F: SessionFactory>(
    spec: LoadSpec,
    factory: F,
    observer: &mut dyn Observer,
) -> Result<EngineOutput<<F::Session as ClientSession>::Figures>> {
    let spec = Arc::new(spec);
    let factory = Arc::new(factory);
    let clock = Clock::new();
    let measure_start_ns = spec.measure_start().as_nanos() as u64;
    let (tx, rx) = mpsc::channel();
    let budgets: Vec<Option<u64>> = (0..spec.threads)
        .map(|w| match spec.plan {
            Plan::Count(n) => {
                let t = spec.threads as u64;
                Some(n / t + u64::from((w as u64) < n % t))
            }
            _ => None,
        })
        .collect();

    let mut handles = Vec::with_capacity(spec.threads);
    for (index, budget) in budgets.into_iter().enumerate() {
        let args = WorkerArgs {
            index,
            spec: spec.clone(),
            factory: factory.clone(),
            clock,
            measure_start_ns,
            budget,
            snapshots: tx.clone(),
        };
        let h = std::thread::Builder::new()
            .name(format!("wb-load-{index}"))
            .spawn(move || run_worker(args))
            .map_err(|e| Error::runtime(format!("cannot start a load thread: {e}")))?;
        handles.push(h);
    }
    drop(tx);

    let mut agg = IntervalAggregator::new(spec.threads);
    let mut latest = vec![(Counters::default(), ConnTally::default(), false); spec.threads];
    let measure_at = clock.instant_at(measure_start_ns);
    let mut started = false;
    loop {
        let wait = if started {
            Duration::from_secs(1)
        } else {
            measure_at.saturating_duration_since(Instant::now())
        };
        match rx.recv_timeout(wait) {
            Ok(WorkerReport::Interval(snap)) => {
                for (row, lat) in agg.push(snap) {
                    observer.on_interval(&row, &lat);
                }
            }
            Ok(WorkerReport::Connections {
                worker,
                counters,
                conns,
                up,
            }) => {
                latest[worker] = (counters, *conns, up);
                let mut sum = (Counters::default(), ConnTally::default());
                for (c, t, _) in &latest {
                    sum.0.add(c);
                    sum.1.add(t);
                }
                let all_up = latest.iter().all(|(_, _, u)| *u);
                observer.on_connections(&sum.0, &sum.1, all_up);
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
        if !started && Instant::now() >= measure_at {
            started = true;
            observer.on_measure_start();
        }
    }

    let mut out = EngineOutput {
        figures: <F::Session as ClientSession>::Figures::default(),
        measured: Counters::default(),
        warmup: Counters::default(),
        latency: Latency::new(),
        uncorrected: spec.rate.map(|_| Latency::new()),
        intervals: Vec::new(),
        elapsed: Duration::ZERO,
        client_cpu: Duration::ZERO,
        expected: spec.expected(),
        first_connect_error: None,
        interrupted: false,
        handshake: Latency::new(),
        rate: None,
        conns: ConnTally::default(),
        event_loop: LoopCounts::default(),
    };
    let mut finish_ns = measure_start_ns;
    let mut max_lag_ns = 0;
    for h in handles {
        let w = h
            .join()
            .map_err(|_| Error::runtime("a load thread failed unexpectedly"))?
            .map_err(|e| Error::runtime(format!("cannot start a load event loop: {e}")))?;
        out.figures.merge(&w.figures);
        out.measured.add(&w.stats.measured);
        out.warmup.add(&w.stats.warmup);
        out.latency.add(&w.stats.latency);
        out.handshake.add(&w.stats.handshake);
        out.conns.add(&w.stats.conns);
        out.event_loop.add(&w.stats.event_loop);
        if let (Some(all), Some(u)) = (out.uncorrected.as_mut(), w.stats.uncorrected.as_ref()) {
            all.add(u);
        }
        out.client_cpu += w.cpu;
        if out.first_connect_error.is_none() {
            out.first_connect_error = w.stats.first_connect_error.clone();
        }
        finish_ns = finish_ns.max(w.finish_ns);
        max_lag_ns = max_lag_ns.max(w.max_lag_ns);
    }
    out.elapsed = Duration::from_nanos(finish_ns - measure_start_ns);
    out.rate = spec.rate.map(|asked| {
        // Requests were sent until the deadline at most: the grace for replies after
        // it is no sending time.
        let (window, judged) = match spec.plan {
            Plan::Duration(d) => (out.elapsed.min(d), true),
            Plan::Count(n) => (
                out.elapsed,
                n as f64 / asked >= crate::stats::rate::SHORTEST_JUDGED.as_secs_f64(),
            ),
            Plan::Batch { .. } | Plan::Hold => (out.elapsed, false),
        };
        // A measured ramp inside the window asks for less than the full rate.
        let asked = spec.ramp.map_or(asked, |r| {
            ramp::average_rate(asked, r, spec.measure_start(), window)
        });
        RateFigures::new(
            asked,
            out.measured.sent,
            window,
            Duration::from_nanos(max_lag_ns),
            judged,
        )
    });
    out.interrupted = spec.stop.load(std::sync::atomic::Ordering::Relaxed);
    out.intervals = agg.into_rows();
    Ok(out)
}
