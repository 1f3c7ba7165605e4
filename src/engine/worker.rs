//! One load worker: a thread with one raw epoll loop over its slab of connection slots
//! (no runtime, no task, no per-connection allocation while idle). Nothing it does per
//! request leaves the thread; it sends one snapshot per interval.

use super::busy::BusyPool;
use super::admission::Admission;
use super::conn::{Conn, State};
use super::ctx::{Ctx, READ_BUFFER};
use super::ramp::Schedule;
use super::session::SessionFactory;
use super::timers::Timers;
use super::WorkerReport;
use super::{LoadSpec, Plan};
use crate::clock::Clock;
use crate::net::epoll::Epoll;
use crate::stats::{Snapshot, WorkerStats};
use std::sync::atomic::Ordering;
use std::sync::mpsc::Sender;
use std::sync::Arc;
use std::time::Duration;

pub struct WorkerOutput<X> {
    pub stats: WorkerStats,
    /// The protocol's figures of the measured phase.
    pub figures: X,
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
    pub snapshots: Sender<WorkerReport>,
}

/// The stop flag is set by a signal handler, which cannot wake the loop: it looks at
/// least this often.
const STOP_CHECK_NS: u64 = 50_000_000;
const EVENTS: usize = 256;

type Output<F> =
    WorkerOutput<<<F as SessionFactory>::Session as super::session::ClientSession>::Figures>;

pub fn run_worker<F: SessionFactory>(args: WorkerArgs<F>) -> std::io::Result<Output<F>> {
    let spec = args.spec.clone();
    let deadline_ns = match spec.plan {
        Plan::Duration(d) => Some(args.measure_start_ns + d.as_nanos() as u64),
        _ => None,
    };
    let n = spec.connections;
    let mut ctx = Ctx {
        factory: args.factory.clone(),
        spec: spec.clone(),
        worker: args.index,
        clock: args.clock,
        epoll: Epoll::new()?,
        stats: WorkerStats::new(spec.rate.is_some()),
        figures: Default::default(),
        timers: Timers::with_capacity(n * 2),
        busy: BusyPool::new(spec.pipeline),
        rbuf: vec![0; READ_BUFFER],
        out: Vec::with_capacity(16 * 1024),
        pipeline: spec.pipeline,
        timeout_ns: spec.timeout.as_nanos() as u64,
        measure_start_ns: args.measure_start_ns,
        deadline_ns,
        budget: args.budget,
        stopping: false,
        settles_on_write: args.factory.settles_on_write(),
        per_connection: spec.per_connection,
        max_lag_ns: 0,
        made: 0,
        live: n,
        parked: 0,
        ready: Vec::new(),
        admission: Admission::new(&spec.attempts, spec.threads),
        released: spec.release.is_none(),
        unsettled: n,
    };
    let total = spec.threads * n;
    let mut conns: Vec<Conn<F::Session>> = (0..n)
        .map(|slot| {
            let g = args.index * n + slot;
            Conn::new(spec.rate.map(|r| Schedule::new(r, g, total, spec.ramp)))
        })
        .collect();
    let batch = match spec.plan {
        Plan::Batch {
            iterations,
            reconnects,
            sleep,
        } => Some(Batch {
            iterations,
            reconnects,
            sleep_ns: sleep.as_nanos() as u64,
            round: 0,
            iteration: 0,
            closing: false,
            resume_at: None,
        }),
        _ => None,
    };

    // Start every slot: at once, or spread over the ramp; with limits on attempts and
    // no ramp, they wait their turn in slot order (no queue entry each).
    let fresh = spec.ramp.is_none() && batch.is_none() && ctx.admission.limited();
    if fresh {
        ctx.admission.wait_fresh(n as u32);
    }
    for (slot, c) in conns.iter_mut().enumerate().filter(|_| !fresh) {
        let g = args.index * n + slot;
        let at = match (batch.is_some(), spec.ramp) {
            (false, Some(r)) => r.start_of(g, total),
            _ => 0,
        };
        c.skip_schedule_until(at);
        if at == 0 {
            c.begin(slot as u32, &mut ctx);
        } else {
            c.wait_until(slot as u32, at, &mut ctx);
        }
    }

    let mut lp = Loop {
        up_sent: false,
        cpu_at_start: None,
        next_tick: args.measure_start_ns + spec.interval.as_nanos().max(1) as u64,
        ticks: 0,
        batch,
    };
    lp.run(&mut ctx, &mut conns, &args);

    let finish_ns = ctx.now();
    let cpu = lp
        .cpu_at_start
        .map(|s| crate::sys::thread_cpu_time().saturating_sub(s))
        .unwrap_or(Duration::ZERO);
    let _ = args.snapshots.send(WorkerReport::Interval(take_snapshot(
        &mut ctx, args.index, lp.ticks, true,
    )));
    send_connections(&ctx, &args);
    let [_, measured] = std::mem::take(&mut ctx.figures);
    Ok(WorkerOutput {
        stats: std::mem::replace(&mut ctx.stats, WorkerStats::new(false)),
        figures: measured,
        finish_ns,
        cpu,
        max_lag_ns: ctx.max_lag_ns,
    })
}

/// A batch plan's progress: per reconnect round, `iterations` steps at which every
/// connection of the worker waits for the others, then the goodbyes, then a sleep.
struct Batch {
    iterations: u64,
    reconnects: u64,
    sleep_ns: u64,
    round: u64,
    iteration: u64,
    closing: bool,
    /// Sleeping between rounds until then.
    resume_at: Option<u64>,
}

struct Loop {
    /// The report that every slot's first attempt settled has gone.
    up_sent: bool,
    cpu_at_start: Option<Duration>,
    next_tick: u64,
    ticks: u64,
    batch: Option<Batch>,
}

impl Loop {
    fn run<F: SessionFactory>(
        &mut self,
        ctx: &mut Ctx<F>,
        conns: &mut [Conn<F::Session>],
        args: &WorkerArgs<F>,
    ) {
        let mut events = vec![libc::epoll_event { events: 0, u64: 0 }; EVENTS];
        let interval_ns = ctx.spec.interval.as_nanos().max(1) as u64;
        loop {
            self.advance_batch(ctx, conns);
            if ctx.live == 0 {
                return;
            }
            let now = ctx.now();
            let mut wake = now + STOP_CHECK_NS;
            if let Some(t) = ctx.timers.next() {
                wake = wake.min(t);
            }
            wake = wake.min(self.next_tick);
            if self.cpu_at_start.is_none() {
                wake = wake.min(ctx.measure_start_ns);
            }
            if let Some(at) = self.batch.as_ref().and_then(|b| b.resume_at) {
                wake = wake.min(at);
            }
            if let Some(at) = ctx.admission.wake_at() {
                wake = wake.min(at);
            }
            let timeout = if ctx.ready.is_empty() {
                wake.saturating_sub(now)
            } else {
                0
            };
            let n = ctx.epoll.wait(&mut events, timeout);
            for ev in &events[..n] {
                let (slot, gen) = (ev.u64 as u32, (ev.u64 >> 32) as u32);
                if let Some(c) = conns.get_mut(slot as usize) {
                    if c.gen == gen {
                        c.on_event(slot, ev.events, ctx);
                    }
                }
            }
            // Connections that gave others a turn before their socket was drained.
            for (slot, gen) in std::mem::take(&mut ctx.ready) {
                let c = &mut conns[slot as usize];
                if c.gen == gen && c.state == State::Running {
                    // Read to EAGAIN: an edge it had may have been a hang-up.
                    c.on_event(slot, libc::EPOLLRDHUP as u32, ctx);
                }
            }
            let now = ctx.now();
            while let Some((at, slot, gen)) = ctx.timers.pop_due(now) {
                let c = &mut conns[slot as usize];
                if c.gen == gen && c.wake_at == at {
                    c.on_timer(slot, ctx);
                }
            }
            admit_waiting(ctx, conns);
            if !self.up_sent && ctx.unsettled == 0 {
                self.up_sent = true;
                send_connections(ctx, args);
            }
            if self.cpu_at_start.is_none() && now >= ctx.measure_start_ns {
                self.cpu_at_start = Some(crate::sys::thread_cpu_time());
            }
            if now >= self.next_tick {
                let snap = take_snapshot(ctx, args.index, self.ticks, false);
                self.ticks += 1;
                // Missed ticks are not made up: the next is an interval from now.
                self.next_tick = (self.next_tick + interval_ns).max(now + 1);
                let _ = args.snapshots.send(WorkerReport::Interval(snap));
                send_connections(ctx, args);
            }
            if !ctx.released && !ctx.stopping && is_set(&ctx.spec.release) {
                release(ctx, conns);
            }
            if !ctx.stopping && ctx.spec.stop.load(Ordering::Relaxed) {
                ctx.stopping = true;
                for (slot, c) in conns.iter_mut().enumerate() {
                    c.on_stop(slot as u32, ctx);
                }
            }
        }
    }

    /// Batch plans: once every slot waits at the barrier, the next step.
    fn advance_batch<F: SessionFactory>(
        &mut self,
        ctx: &mut Ctx<F>,
        conns: &mut [Conn<F::Session>],
    ) {
        let Some(b) = self.batch.as_mut() else {
            return;
        };
        if let Some(at) = b.resume_at {
            if ctx.now() < at && !ctx.stopping {
                return;
            }
            b.resume_at = None;
            b.iteration = 0;
            b.closing = false;
            ctx.parked = 0;
            for (slot, c) in conns.iter_mut().enumerate() {
                c.begin(slot as u32, ctx);
            }
        }
        while ctx.parked == conns.len() && ctx.live > 0 {
            ctx.parked = 0;
            if b.closing {
                b.round += 1;
                if b.round >= b.reconnects || ctx.stopping {
                    for c in conns.iter_mut() {
                        c.finish(ctx);
                    }
                    return;
                }
                if b.sleep_ns > 0 {
                    b.resume_at = Some(ctx.now() + b.sleep_ns);
                    return;
                }
                b.iteration = 0;
                b.closing = false;
                for (slot, c) in conns.iter_mut().enumerate() {
                    c.begin(slot as u32, ctx);
                }
                continue;
            }
            b.iteration += 1;
            if b.iteration < b.iterations && !ctx.stopping {
                for (slot, c) in conns.iter_mut().enumerate() {
                    c.next_iteration(slot as u32, ctx);
                }
            } else {
                b.closing = true;
                for (slot, c) in conns.iter_mut().enumerate() {
                    c.end_round(slot as u32, ctx);
                }
            }
        }
    }
}

/// Slots that waited for their turn to connect (LoadSpec::attempts) start while the
/// limits allow.
fn admit_waiting<F: SessionFactory>(ctx: &mut Ctx<F>, conns: &mut [Conn<F::Session>]) {
    let now = ctx.now();
    while let Some((slot, gen)) = ctx.admission.next(now) {
        if let Some(c) = conns.get_mut(slot as usize) {
            if c.gen == gen && c.state == State::Waiting {
                c.begin(slot, ctx);
            }
        }
    }
}

fn is_set(flag: &Option<Arc<std::sync::atomic::AtomicBool>>) -> bool {
    flag.as_ref().is_some_and(|f| f.load(Ordering::Relaxed))
}

/// Hold plans: requests may go from now; every held connection starts its schedule
/// here (what it would have sent before is no backlog).
fn release<F: SessionFactory>(ctx: &mut Ctx<F>, conns: &mut [Conn<F::Session>]) {
    ctx.released = true;
    let now = ctx.now();
    for (slot, c) in conns.iter_mut().enumerate() {
        c.skip_schedule_until(now);
        if c.state == State::Running {
            c.on_timer(slot as u32, ctx);
        }
    }
}

fn send_connections<F: SessionFactory, A>(ctx: &Ctx<F>, args: &WorkerArgs<A>) {
    let _ = args.snapshots.send(WorkerReport::Connections {
        worker: args.index,
        counters: ctx.stats.measured,
        conns: Box::new(ctx.stats.conns),
        up: ctx.unsettled == 0,
    });
}

fn take_snapshot<F: SessionFactory>(
    ctx: &mut Ctx<F>,
    worker: usize,
    index: u64,
    last: bool,
) -> Snapshot {
    let latency = ctx.stats.close_interval();
    Snapshot {
        worker,
        index,
        at_ns: ctx.now().saturating_sub(ctx.measure_start_ns),
        counters: ctx.stats.measured,
        latency,
        last,
    }
}
