//! The load engine, shared by every protocol: worker threads (one io_uring or epoll loop each)
//! own the connections and drive the protocol's client sessions (`session.rs`); this
//! module starts them, gathers their interval snapshots for progress, and merges their
//! statistics and the protocol's figures exactly at the end.

pub mod admission;
pub(crate) mod busy;
pub mod coalesce;
pub mod conn;
pub mod connector;
mod ctx;
mod limits;
mod opt_u64;
pub mod ramp;
pub mod refill;
pub mod session;
pub(crate) mod settle;
mod spec;
pub mod stages;
pub(crate) mod tally;
pub mod transport;
mod uring_slots;
pub mod vus;
pub mod worker;

pub use admission::Attempts;
pub use limits::{DEFAULT_MEMORY_BUDGET, DRAIN_GRACE, MAX_READ_BUFFER, NOTHING_LISTENS};
pub use ramp::{Ramp, Share};
pub use refill::Refill;
pub use spec::{LoadShape, LoadSpec, Plan};
pub use stages::{Stage, Stages};

use crate::clock::Clock;
use crate::error::{Error, Result};
use crate::stats::intervals::Returned;
use crate::stats::rate::RateFigures;
use crate::stats::snapshot::IntervalAggregator;
use crate::stats::Figures;
use crate::stats::{ConnTally, Counters, ErrorTexts, IntervalRow, Latency, LoopCounts};
use session::{ClientSession, SessionFactory};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};
use worker::{run_worker, WorkerArgs, WorkerReport};

use crate::stats::stages::StageFigures;
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
    /// Failed attempts by errno and connections lost while held, measured phase (in
    /// the phase `measured` counts them in).
    pub conns: ConnTally,
    /// The same of the warm-up (with `warmup`).
    pub warmup_conns: ConnTally,
    /// Worker threads per event loop (io_uring or epoll).
    pub event_loop: LoopCounts,
    /// What the peers said when things failed, measured phase, merged over workers.
    pub texts: ErrorTexts,
    /// `--stages`: the figures of each stage, requests by the stage they were meant to
    /// go in.
    pub stages: Option<Vec<crate::stats::stages::StageFigures>>,
}

/// Whether an interval row starts at or after a duration plan's end (`drain_from_s`,
/// seconds into the measured phase): the drain's.
fn is_drain(row: &IntervalRow, drain_from_s: Option<f64>) -> bool {
    // Rows end on whole nanoseconds: a row that starts at the end exactly is the drain's.
    drain_from_s.is_some_and(|d| row.t_s - row.duration_s >= d - 1e-9)
}

/// Runs the load to its end: start the workers, gather their reports while they run,
/// then merge what each hands back.
pub fn run<F: SessionFactory>(
    spec: LoadSpec,
    factory: F,
    observer: &mut dyn Observer,
) -> Result<EngineOutput<<F::Session as ClientSession>::Figures>> {
    let spec = Arc::new(spec);
    let factory = Arc::new(factory);
    let clock = Clock::new();
    let measure_start_ns = spec.shape.measure_start().as_nanos() as u64;
    let (tx, rx) = mpsc::channel();
    // The aggregator first: each worker gets the channel its emptied interval tables
    // come back on.
    let (agg, returned) =
        IntervalAggregator::new(spec.shape.threads, spec.keep_interval_histograms);
    let handles = start_workers(&spec, &factory, clock, measure_start_ns, tx, returned)?;
    let agg = gather(agg, &spec, clock, measure_start_ns, &rx, observer);
    let mut out = merge_workers::<F>(&spec, measure_start_ns, handles)?;
    out.interrupted = spec.stop.load(std::sync::atomic::Ordering::Relaxed);
    out.intervals = agg.into_rows();
    Ok(out)
}

/// What a worker thread hands back when it ends.
type Worker<F> = std::thread::JoinHandle<std::io::Result<worker::Output<F>>>;

/// Starts one worker thread per `spec.shape.threads`, each with its share of a count
/// plan's requests; their reports come over `tx`.
fn start_workers<F: SessionFactory>(
    spec: &Arc<LoadSpec>,
    factory: &Arc<F>,
    clock: Clock,
    measure_start_ns: u64,
    tx: mpsc::Sender<WorkerReport>,
    returned: Vec<Returned>,
) -> Result<Vec<Worker<F>>> {
    let budgets: Vec<Option<u64>> = (0..spec.shape.threads)
        .map(|w| match spec.shape.plan {
            Plan::Count(n) => Some(spec.shape.requests_of(w, n)),
            _ => None,
        })
        .collect();

    let mut handles = Vec::with_capacity(spec.shape.threads);
    for ((index, budget), returned) in budgets.into_iter().enumerate().zip(returned) {
        let args = WorkerArgs {
            index,
            spec: spec.clone(),
            factory: factory.clone(),
            clock,
            measure_start_ns,
            budget,
            snapshots: tx.clone(),
            returned,
        };
        let h = std::thread::Builder::new()
            .name(format!("wb-load-{index}"))
            .spawn(move || run_worker(args))
            .map_err(|e| Error::runtime(format!("cannot start a load thread: {e}")))?;
        handles.push(h);
    }
    Ok(handles)
}

/// Hands the workers' reports to `observer` (intervals, connections, the measured
/// phase's start) until every worker has ended; returns the intervals gathered.
fn gather(
    mut agg: IntervalAggregator,
    spec: &LoadSpec,
    clock: Clock,
    measure_start_ns: u64,
    rx: &mpsc::Receiver<WorkerReport>,
    observer: &mut dyn Observer,
) -> IntervalAggregator {
    let mut latest = vec![(Counters::default(), ConnTally::default(), false); spec.shape.threads];
    let measure_at = clock.instant_at(measure_start_ns);
    let mut started = false;
    // A duration plan's drain (replies still coming after its end) is kept in the
    // interval rows, so they add up to the totals, but it is no interval of progress:
    // its rate is the tail's, not the load's (workers end an interval at the plan's end).
    let drain_from_s = match spec.shape.plan {
        Plan::Duration(d) => Some(d.as_secs_f64()),
        _ => None,
    };
    loop {
        let wait = if started {
            Duration::from_secs(1)
        } else {
            measure_at.saturating_duration_since(Instant::now())
        };
        match rx.recv_timeout(wait) {
            Ok(WorkerReport::Interval(snap)) => {
                for (row, lat) in agg.push(snap) {
                    if is_drain(&row, drain_from_s) {
                        observer.on_drain(&row, &lat);
                    } else {
                        observer.on_interval(&row, &lat);
                    }
                    agg.recycle(lat);
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

    agg
}

/// Joins the workers and merges what each measured into one output (its rate
/// figures too); the intervals and the stop flag are the caller's to add.
fn merge_workers<F: SessionFactory>(
    spec: &LoadSpec,
    measure_start_ns: u64,
    handles: Vec<Worker<F>>,
) -> Result<EngineOutput<<F::Session as ClientSession>::Figures>> {
    let mut out = EngineOutput {
        figures: <F::Session as ClientSession>::Figures::default(),
        measured: Counters::default(),
        warmup: Counters::default(),
        latency: Latency::new(),
        uncorrected: spec.shape.rate.map(|_| Latency::new()),
        intervals: Vec::new(),
        elapsed: Duration::ZERO,
        client_cpu: Duration::ZERO,
        expected: spec.shape.expected(),
        first_connect_error: None,
        interrupted: false,
        handshake: Latency::new(),
        rate: None,
        conns: ConnTally::default(),
        warmup_conns: ConnTally::default(),
        event_loop: LoopCounts::default(),
        texts: ErrorTexts::default(),
        stages: None,
    };
    let mut stages: Option<crate::stats::stages::StageTally> = None;
    let mut texts = Vec::with_capacity(handles.len());
    let mut finish_ns = measure_start_ns;
    let mut max_lag_ns = 0;
    for h in handles {
        let mut w = h
            .join()
            .map_err(|_| Error::runtime("a load thread failed unexpectedly"))?
            .map_err(|e| Error::runtime(format!("cannot start a load event loop: {e}")))?;
        out.figures.merge(&w.figures);
        out.measured.add(&w.stats.measured);
        out.warmup.add(&w.stats.warmup);
        out.latency.add(&w.stats.latency);
        out.handshake.add(&w.stats.handshake);
        out.conns.add(&w.stats.conns);
        out.warmup_conns.add(&w.stats.warmup_conns);
        out.event_loop.add(&w.stats.event_loop);
        if let (Some(all), Some(u)) = (out.uncorrected.as_mut(), w.stats.uncorrected.as_ref()) {
            all.add(u);
        }
        out.client_cpu += w.cpu;
        texts.push(std::mem::take(&mut w.stats.texts));
        let tally = w.stats.stages.take().map(|mut t| {
            t.finish_open();
            t
        });
        match (stages.as_mut(), tally) {
            (Some(all), Some(t)) => all.add(&t),
            (None, t) => stages = t,
            _ => {}
        }
        if out.first_connect_error.is_none() {
            out.first_connect_error = w.stats.first_connect_error.clone();
        }
        finish_ns = finish_ns.max(w.finish_ns);
        max_lag_ns = max_lag_ns.max(w.max_lag_ns);
    }
    out.texts = ErrorTexts::merge_all(&texts);
    out.elapsed = Duration::from_nanos(finish_ns - measure_start_ns);
    out.rate = rate_figures(spec, &out, max_lag_ns);
    out.stages = stages.map(|t| stage_figures(spec, &t));
    Ok(out)
}

/// Each stage's figures: its counts and latency, the rate its curve asked over it (rate
/// stages) and the rate sent in it, its connections.
fn stage_figures(spec: &LoadSpec, t: &crate::stats::stages::StageTally) -> Vec<StageFigures> {
    // Attempts by stages (connect's churn): this process's part of the targets, so
    // that the processes' figures add up to the whole run's.
    let share = 1.0 / spec.attempts.place.1.max(1) as f64;
    let by_attempts = spec.attempts.stages.scaled(share);
    let stages = match spec.shape.stages.is_empty() {
        true => &by_attempts,
        false => &spec.shape.stages,
    };
    let list = stages.list();
    if stages.is_connections() {
        return list
            .iter()
            .zip(&t.per)
            .map(|(s, c)| StageFigures::of_connections(s.over.as_secs_f64(), s.target as u64, c))
            .collect();
    }
    let curve = stages::Curve::new(list);
    let mut from = 0.0;
    list.iter()
        .zip(&t.per)
        .map(|(s, c)| {
            let to = from + s.over.as_nanos() as f64;
            let asked = curve.asked_by(to) - curve.asked_by(from);
            from = to;
            StageFigures::new(s.over.as_secs_f64(), s.target, asked, c)
        })
        .collect()
}

/// Open loop: what was asked against what was sent, over the sending window, and how
/// far the schedule fell behind (`max_lag_ns`).
fn rate_figures<Fig>(
    spec: &LoadSpec,
    out: &EngineOutput<Fig>,
    max_lag_ns: u64,
) -> Option<RateFigures> {
    spec.shape.rate.map(|asked| {
        // Requests were sent until the deadline at most: the grace for replies after
        // it is no sending time.
        let (window, judged) = match spec.shape.plan {
            Plan::Duration(_) => {
                let sending = spec.shape.deadline().unwrap_or_default();
                (
                    out.elapsed
                        .min(sending.saturating_sub(spec.shape.measure_start())),
                    true,
                )
            }
            Plan::Count(n) => (
                out.elapsed,
                n as f64 / asked >= crate::stats::rate::SHORTEST_JUDGED.as_secs_f64(),
            ),
            Plan::Batch { .. } | Plan::Hold => (out.elapsed, false),
        };
        // A measured ramp or stages inside the window ask for what their curve asks.
        let curve = spec.shape.curve();
        let asked = ramp::average_rate(asked, curve.as_deref(), spec.shape.measure_start(), window);
        RateFigures::new(
            asked,
            out.measured.sent,
            window,
            Duration::from_nanos(max_lag_ns),
            judged,
        )
    })
}
