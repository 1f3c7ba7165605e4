//! One load worker: a thread with its own current-thread runtime and its own
//! connections, statistics and snapshot ticker. Nothing it does per request leaves the thread.

use super::conn::{Conn, End};
use super::connector::{ConnectError, Stream};
use super::protocol::ProtocolFactory;
use super::protocol::SetupPhase;
use super::setup::{self, SetupError};
use super::shared::Shared;
use super::{LoadSpec, Plan};
use crate::clock::Clock;
use crate::stats::{ErrorKind, Snapshot, WorkerStats};
use std::cell::Cell;
use std::rc::Rc;
use std::sync::mpsc::Sender;
use std::sync::Arc;
use std::time::Duration;
use tokio::task::LocalSet;

pub struct WorkerOutput {
    pub stats: WorkerStats,
    /// When the worker's last connection finished, ns on the run clock.
    pub finish_ns: u64,
    /// CPU time of the worker thread during the measured phase.
    pub cpu: Duration,
    /// Open loop: the furthest a connection's schedule fell behind, ns.
    pub max_lag_ns: u64,
}

pub struct WorkerArgs<F> {
    pub index: usize,
    pub spec: Arc<LoadSpec>,
    pub factory: Arc<F>,
    pub clock: Clock,
    pub measure_start_ns: u64,
    /// Count plans: this worker's share of the requests.
    pub budget: Option<u64>,
    pub snapshots: Sender<Snapshot>,
}

pub fn run_worker<F: ProtocolFactory>(args: WorkerArgs<F>) -> std::io::Result<WorkerOutput> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let local = LocalSet::new();
    Ok(local.block_on(&rt, worker_main(args)))
}

/// How long a worker whose every connection attempt was refused keeps trying: nothing
/// listens there, and running out the whole duration would only hide it.
pub const NOTHING_LISTENS: Duration = Duration::from_secs(3);

/// Global index of a connection slot, and the id of its `n`-th connection.
fn conn_id(worker: usize, counter: &Cell<u64>) -> u64 {
    let n = counter.get();
    counter.set(n + 1);
    ((worker as u64) << 40) | n
}

async fn worker_main<F: ProtocolFactory>(args: WorkerArgs<F>) -> WorkerOutput {
    let spec = args.spec.clone();
    let deadline_ns = match spec.plan {
        Plan::Duration(d) => Some(args.measure_start_ns + d.as_nanos() as u64),
        _ => None,
    };
    let shared = Rc::new(Shared {
        clock: args.clock,
        stats: std::cell::RefCell::new(WorkerStats::new(spec.rate.is_some())),
        pipeline: spec.pipeline,
        timeout_ns: spec.timeout.as_nanos() as u64,
        measure_start_ns: args.measure_start_ns,
        deadline_ns,
        budget: args.budget.map(Cell::new),
        stop: spec.stop.clone(),
        // Without a timerfd (never seen on Linux) pacing falls back to the runtime's timers.
        pacer: spec
            .rate
            .and_then(|_| super::pacer::Pacer::new(args.clock).ok()),
        stop_wake: tokio::sync::Notify::new(),
        max_lag_ns: Cell::new(0),
    });
    // The stop flag is set by a signal handler, which cannot wake tasks: look every
    // 50 ms and wake whoever waits on a timer of ours (paced sends, back-off sleeps).
    let stop_watch = {
        let shared = shared.clone();
        tokio::task::spawn_local(async move {
            while !shared.stopping() {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            if let Some(p) = shared.pacer.as_ref() {
                p.wake_all();
            }
            shared.stop_wake.notify_waiters();
        })
    };
    let pacer_task = shared.pacer.is_some().then(|| {
        let shared = shared.clone();
        tokio::task::spawn_local(async move {
            if let Some(p) = shared.pacer.as_ref() {
                p.run().await;
            }
        })
    });

    // CPU time is counted from the start of the measured phase.
    let cpu_at_start = Rc::new(Cell::new(None));
    let cpu_probe = {
        let (shared, cpu_at_start) = (shared.clone(), cpu_at_start.clone());
        tokio::task::spawn_local(async move {
            tokio::time::sleep_until(shared.clock.instant_at(shared.measure_start_ns).into()).await;
            cpu_at_start.set(Some(crate::sys::thread_cpu_time()));
        })
    };

    let ticks = Rc::new(Cell::new(0u64));
    let ticker = {
        let (shared, ticks, tx, interval) = (
            shared.clone(),
            ticks.clone(),
            args.snapshots.clone(),
            spec.interval,
        );
        let worker = args.index;
        tokio::task::spawn_local(async move {
            let first = shared.clock.instant_at(shared.measure_start_ns) + interval;
            let mut iv = tokio::time::interval_at(first.into(), interval);
            iv.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                iv.tick().await;
                let snap = take_snapshot(&shared, worker, ticks.get(), false);
                ticks.set(ticks.get() + 1);
                if tx.send(snap).is_err() {
                    return;
                }
            }
        })
    };

    let ids = Rc::new(Cell::new(0u64));
    match spec.plan {
        Plan::Duration(_) | Plan::Count(_) => {
            let handles: Vec<_> = (0..spec.connections)
                .map(|slot| {
                    let (shared, spec, factory, ids) = (
                        shared.clone(),
                        spec.clone(),
                        args.factory.clone(),
                        ids.clone(),
                    );
                    tokio::task::spawn_local(slot_loop(
                        args.index, slot, shared, spec, factory, ids,
                    ))
                })
                .collect();
            for h in handles {
                let _ = h.await;
            }
        }
        Plan::Batch {
            iterations,
            reconnects,
            sleep,
        } => {
            for round in 0..reconnects {
                if shared.stopping() {
                    break;
                }
                let barrier = Rc::new(tokio::sync::Barrier::new(spec.connections));
                let handles: Vec<_> = (0..spec.connections)
                    .map(|_| {
                        let (shared, spec, factory, ids, barrier) = (
                            shared.clone(),
                            spec.clone(),
                            args.factory.clone(),
                            ids.clone(),
                            barrier.clone(),
                        );
                        tokio::task::spawn_local(batch_conn(
                            args.index, shared, spec, factory, ids, barrier, iterations,
                        ))
                    })
                    .collect();
                for h in handles {
                    let _ = h.await;
                }
                if round + 1 < reconnects && !sleep.is_zero() {
                    shared.sleep_unless_stopped(sleep).await;
                }
            }
        }
    }

    let finish_ns = shared.clock.now_ns();
    ticker.abort();
    cpu_probe.abort();
    stop_watch.abort();
    if let Some(t) = pacer_task {
        t.abort();
    }
    let cpu_end = crate::sys::thread_cpu_time();
    let cpu = cpu_at_start
        .get()
        .map(|s| cpu_end.saturating_sub(s))
        .unwrap_or(Duration::ZERO);
    let _ = args
        .snapshots
        .send(take_snapshot(&shared, args.index, ticks.get(), true));
    // Aborted tasks still hold the Rc until the LocalSet drops them: take the stats out.
    let stats = shared.stats.replace(WorkerStats::new(false));
    WorkerOutput {
        stats,
        finish_ns,
        cpu,
        max_lag_ns: shared.max_lag_ns.get(),
    }
}

fn take_snapshot(shared: &Shared, worker: usize, index: u64, last: bool) -> Snapshot {
    let mut stats = shared.stats.borrow_mut();
    let latency = stats.close_interval();
    Snapshot {
        worker,
        index,
        at_ns: shared
            .clock
            .now_ns()
            .saturating_sub(shared.measure_start_ns),
        counters: stats.measured,
        latency,
        last,
    }
}

/// Open-loop schedule of connection slot `g` of `total`: (interval, first intended send).
fn schedule(spec: &LoadSpec, g: usize) -> Option<(u64, u64)> {
    let rate = spec.rate?;
    let total = (spec.threads * spec.connections) as f64;
    let interval = (total * 1e9 / rate).max(1.0);
    Some((interval as u64, (interval * g as f64 / total) as u64))
}

async fn drive<P: super::protocol::ClientProtocol>(
    conn: &mut Conn<P>,
    stream: &mut Stream,
    shared: &Shared,
) -> End {
    match stream {
        Stream::Plain(s) => conn.run(s, shared).await,
        Stream::Tls(s) => conn.run(&mut **s, shared).await,
    }
}

/// A protocol's connection-level exchange (handshake or goodbye) on either kind of stream.
async fn exchange<P: super::protocol::ClientProtocol>(
    conn: &mut Conn<P>,
    stream: &mut Stream,
    phase: SetupPhase,
    timeout: Duration,
) -> Result<(), SetupError> {
    let rest = match stream {
        Stream::Plain(s) => setup::exchange(conn.proto_mut(), s, phase, timeout).await?,
        Stream::Tls(s) => setup::exchange(conn.proto_mut(), &mut **s, phase, timeout).await?,
    };
    conn.preload(&rest);
    Ok(())
}

/// Churn: takes this connection's requests from the plan before it opens.
/// Returns false when the plan has none left.
fn claim<P: super::protocol::ClientProtocol>(conn: &mut Conn<P>, shared: &Shared, n: u64) -> bool {
    let got = match shared.budget.as_ref() {
        Some(b) => {
            let got = n.min(b.get());
            b.set(b.get() - got);
            got
        }
        None => n,
    };
    conn.local_budget = Some(got);
    conn.prepaid = shared.budget.is_some();
    got > 0
}

/// Churn: gives back what a failed connection claimed and did not send.
fn refund<P: super::protocol::ClientProtocol>(conn: &mut Conn<P>, shared: &Shared) {
    if conn.prepaid {
        if let (Some(b), Some(left)) = (shared.budget.as_ref(), conn.local_budget.take()) {
            b.set(b.get() + left);
        }
    }
}

/// A connection slot for duration and count plans: connect, run, reconnect after a failure.
async fn slot_loop<F: ProtocolFactory>(
    worker: usize,
    slot: usize,
    shared: Rc<Shared>,
    spec: Arc<LoadSpec>,
    factory: Arc<F>,
    ids: Rc<Cell<u64>>,
) {
    let g = worker * spec.connections + slot;
    let mut conn = Conn::new(
        factory.client(conn_id(worker, &ids)),
        spec.pipeline,
        schedule(&spec, g),
    );
    let mut failing_since: Option<u64> = None;
    let mut backoff = Duration::from_millis(10);
    let mut first = true;
    let per_connection = factory.requests_per_connection();
    let delay = factory.start_delay(g);
    if !delay.is_zero() {
        shared.sleep_unless_stopped(delay).await;
    }
    loop {
        let now = shared.clock.now_ns();
        if shared.stopping()
            || shared.deadline_ns.is_some_and(|d| now >= d)
            || shared.budget.as_ref().is_some_and(|b| b.get() == 0)
        {
            break;
        }
        if !first {
            conn.reset(factory.client(conn_id(worker, &ids)));
        }
        first = false;
        if let Some(n) = per_connection {
            if !claim(&mut conn, &shared, n) {
                break;
            }
        }
        let began = shared.clock.now_ns();
        let opened_in_warmup = began < shared.measure_start_ns;
        let connected = match spec.connector.connect().await {
            Ok(mut stream) => {
                let measured = began >= shared.measure_start_ns;
                shared.stats.borrow_mut().phase(measured).connections += 1;
                match exchange(&mut conn, &mut stream, SetupPhase::Open, spec.timeout).await {
                    Ok(()) => {
                        if measured {
                            let took = shared.clock.now_ns().saturating_sub(began);
                            shared.stats.borrow_mut().handshake.record(took);
                        }
                        Ok(stream)
                    }
                    Err(e) => Err(ConnectError {
                        kind: e.kind,
                        detail: e.detail,
                    }),
                }
            }
            Err(e) => Err(e),
        };
        match connected {
            Ok(mut stream) => {
                failing_since = None;
                let end = drive(&mut conn, &mut stream, &shared).await;
                if opened_in_warmup && shared.clock.now_ns() >= shared.measure_start_ns {
                    shared.stats.borrow_mut().measured.connections_carried += 1;
                }
                match end {
                    End::Done => {
                        match exchange(&mut conn, &mut stream, SetupPhase::Close, spec.timeout)
                            .await
                        {
                            // Requests settled on write count only now: the peer has read them.
                            Ok(()) => conn.settle_written_at_close(&shared),
                            Err(e) => {
                                conn.abandon(e.request_kind(), &shared);
                                let measured = shared.clock.now_ns() >= shared.measure_start_ns;
                                shared
                                    .stats
                                    .borrow_mut()
                                    .record_connect_error(measured, e.kind, e.detail);
                            }
                        }
                        if per_connection.is_none() {
                            break;
                        }
                        backoff = Duration::from_millis(10);
                    }
                    // Past the drain grace: what is unanswered stays in flight (counted
                    // after the loop); no goodbye, it could wait as long again.
                    End::Cut => break,
                    End::Reconnect => {
                        // Closed on the protocol's word (HTTP's Connection: close): reopen
                        // at once, no back-off.
                        conn.abandon(ErrorKind::Closed, &shared);
                        refund(&mut conn, &shared);
                        backoff = Duration::from_millis(10);
                    }
                    End::Failed(kind) => {
                        conn.abandon(kind, &shared);
                        refund(&mut conn, &shared);
                        // A server that accepts and closes at once must not make us spin.
                        if conn.answered() == 0 {
                            shared.sleep_unless_stopped(backoff).await;
                            backoff = (backoff * 2).min(Duration::from_millis(500));
                        } else {
                            backoff = Duration::from_millis(10);
                        }
                    }
                }
            }
            Err(e) => {
                refund(&mut conn, &shared);
                let now = shared.clock.now_ns();
                let refused = e.kind == ErrorKind::ConnectRefused;
                let never_connected = {
                    let mut st = shared.stats.borrow_mut();
                    st.record_connect_error(now >= shared.measure_start_ns, e.kind, e.detail);
                    st.warmup.connections + st.measured.connections == 0
                };
                // A slot that cannot connect for a whole timeout gives up, so a dead
                // target ends the run instead of spinning until the deadline; a port
                // where nothing ever accepted gives up sooner (NOTHING_LISTENS).
                let since = *failing_since.get_or_insert(now);
                let failing = now - since;
                if failing >= shared.timeout_ns
                    || (refused && never_connected && failing >= NOTHING_LISTENS.as_nanos() as u64)
                {
                    break;
                }
                shared.sleep_unless_stopped(backoff).await;
                backoff = (backoff * 2).min(Duration::from_millis(500));
            }
        }
    }
    conn.leave_in_flight(&shared);
}

/// A connection of one reconnect round of a batch plan: per iteration, send `pipeline`
/// requests, wait for every reply, then wait for the worker's other connections.
async fn batch_conn<F: ProtocolFactory>(
    worker: usize,
    shared: Rc<Shared>,
    spec: Arc<LoadSpec>,
    factory: Arc<F>,
    ids: Rc<Cell<u64>>,
    barrier: Rc<tokio::sync::Barrier>,
    iterations: u64,
) {
    let mut conn = Conn::new(factory.client(conn_id(worker, &ids)), spec.pipeline, None);
    let mut stream: Option<Stream> = None;
    let mut used = false;
    for _ in 0..iterations {
        if stream.is_none() && !shared.stopping() {
            if used {
                conn.reset(factory.client(conn_id(worker, &ids)));
            }
            used = true;
            match spec.connector.connect().await {
                Ok(s) => {
                    shared.stats.borrow_mut().measured.connections += 1;
                    stream = Some(s);
                }
                Err(e) => shared
                    .stats
                    .borrow_mut()
                    .record_connect_error(true, e.kind, e.detail),
            }
        }
        if let Some(s) = stream.as_mut() {
            conn.local_budget = Some(spec.pipeline as u64);
            let end = match s {
                Stream::Plain(s) => conn.run(s, &shared).await,
                Stream::Tls(s) => conn.run(&mut **s, &shared).await,
            };
            match end {
                End::Failed(kind) => {
                    conn.abandon(kind, &shared);
                    stream = None;
                }
                End::Reconnect => {
                    conn.abandon(ErrorKind::Closed, &shared);
                    stream = None;
                }
                End::Done | End::Cut => {}
            }
        }
        barrier.wait().await;
    }
    conn.leave_in_flight(&shared);
}
