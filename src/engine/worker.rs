//! One load worker: a thread running the reactor (`crate::reactor`) over its fixed
//! slab of connection slots (no runtime, no task, no per-connection allocation while
//! idle). What is the load's: which slot an event or timer is for, batch barriers, one
//! snapshot per interval, Ctrl-C. Nothing it does per request leaves the thread.

use super::admission::Admission;
use super::busy::BusyPool;
use super::coalesce::Coalesce;
use super::conn::{Conn, State};
use super::ctx::Ctx;
use super::limits::READ_BUFFER;
use super::ramp::Schedule;
use super::session::SessionFactory;
use super::spec::{LoadSpec, Plan};
use crate::clock::Clock;
use crate::net::epoll::Epoll;
use crate::reactor::uring_loop::{self, UringHandler, UringReactor, GEN_MASK};
use crate::reactor::{split, EpollHandler, Handler, Pending, Reactor, Stop, Timers};
use crate::stats::intervals::Returned;
use crate::stats::{ConnTally, Counters, EventLoop, Latency, LoopCounts, Snapshot, WorkerStats};
use io_uring::squeue;
use std::sync::atomic::Ordering;
use std::sync::mpsc::Sender;
use std::sync::Arc;
use std::time::Duration;

/// What a worker hands over while it runs.
pub enum WorkerReport {
    /// One interval's snapshot, for progress and the JSON series.
    Interval(Snapshot),
    /// The worker's connections so far, warm-up and measured phase together (sent with
    /// every interval, and at once when its every slot has had its first attempt
    /// settle: `up`).
    Connections {
        worker: usize,
        counters: Counters,
        /// Boxed: 1.2 KB, once per interval.
        conns: Box<ConnTally>,
        up: bool,
    },
}

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
    /// Where the interval tables it handed over come back, emptied (`stats::intervals`).
    pub returned: Returned,
}

/// The stop flag is set by a signal handler, which cannot wake the loop: it looks at
/// least this often.
const STOP_CHECK: Duration = Duration::from_millis(50);
const EVENTS: usize = 256;

pub(super) type Output<F> =
    WorkerOutput<<<F as SessionFactory>::Session as super::session::ClientSession>::Figures>;

pub fn run_worker<F: SessionFactory>(args: WorkerArgs<F>) -> std::io::Result<Output<F>> {
    // The worker makes every descriptor it uses (its epoll, its sockets): with a table
    // of its own, its system calls take no file reference (sys::fd_table).
    crate::sys::fd_table::own_fd_table();
    let spec = args.spec.clone();
    let deadline_ns = match spec.shape.plan {
        Plan::Duration(_) => spec.shape.deadline().map(|d| d.as_nanos() as u64),
        _ => None,
    };
    let mut ctx = new_ctx(&args, deadline_ns)?;
    let mut uring = pick_uring(&args, &mut ctx);
    let batch = batch_of(&spec.shape.plan);
    let conns = start_slots(&args, &mut ctx, batch.is_some());
    let vus =
        spec.shape.stages.is_connections().then(|| {
            super::vus::Vus::new(spec.shape.stages.list(), args.index, spec.shape.threads)
        });
    let mut w = Worker {
        vus,
        // An interval ends at a duration plan's end at the latest: what comes after it
        // is the drain, which is no interval of the measured phase's progress.
        next_tick: (args.measure_start_ns + spec.interval.as_nanos().max(1) as u64)
            .min(deadline_ns.unwrap_or(u64::MAX)),
        interval_ns: spec.interval.as_nanos().max(1) as u64,
        ticks: 0,
        batch,
        up_sent: false,
        index: args.index,
        snapshots: &args.snapshots,
        returned: &args.returned,
        ctx,
        conns,
    };
    let cpu = match uring.as_mut() {
        Some(r) => {
            r.measure_cpu_from(args.measure_start_ns);
            r.run(&mut w)?;
            r.cpu_measured()
        }
        None => {
            let mut reactor = Reactor::new(
                args.clock,
                &w.ctx.epoll,
                EVENTS,
                STOP_CHECK,
                Stop::Flag(spec.stop.clone()),
            )?;
            reactor.measure_cpu_from(args.measure_start_ns);
            reactor.run(&mut w);
            reactor.cpu_measured()
        }
    };
    let Worker { ctx, ticks, .. } = w;
    Ok(finish(ctx, &args, ticks, cpu))
}

/// What the worker's slots share, for its `n` connections of the run's `total`.
fn new_ctx<F: SessionFactory>(
    args: &WorkerArgs<F>,
    deadline_ns: Option<u64>,
) -> std::io::Result<Ctx<F>> {
    let spec = &args.spec;
    // This worker's connections, and where they sit among the run's (`LoadShape`).
    let n = spec.shape.connections_of(args.index);
    let total = spec.shape.connections;
    Ok(Ctx {
        factory: args.factory.clone(),
        spec: spec.clone(),
        worker: args.index,
        clock: args.clock,
        epoll: Epoll::new()?,
        stats: stats_for(spec, args.index),
        figures: Default::default(),
        timers: Timers::with_capacity(n * 2),
        // The interval and rate curve every slot's schedule shares (each keeps its
        // offset).
        schedule: spec
            .shape
            .rate
            .map(|r| Schedule::new(r, 0, total, spec.shape.curve())),
        busy: BusyPool::new(spec.shape.pipeline),
        kept: 0,
        kept_share: spec.shape.memory_budget / spec.shape.threads.max(1),
        rbuf: vec![0; READ_BUFFER],
        out: Vec::with_capacity(16 * 1024),
        pipeline: spec.shape.pipeline,
        timeout_ns: spec.shape.timeout.as_nanos() as u64,
        measure_start_ns: args.measure_start_ns,
        deadline_ns,
        budget: args.budget,
        stopping: false,
        per_connection: spec.per_connection,
        conn_stages: spec.shape.stages.is_connections(),
        max_lag_ns: 0,
        made: 0,
        live: n,
        parked: 0,
        open: 0,
        pending: Pending::with_capacity(n),
        ready: Vec::new(),
        admission: Admission::for_worker(
            &spec.attempts,
            spec.shape.threads,
            args.index,
            deadline_ns,
        ),
        released: spec.release.is_none(),
        unsettled: n,
        uring: None,
        coalesce: Coalesce::new(spec.shape.coalesce),
    })
}

/// The io_uring core, where it applies and the kernel gives a ring; `None`: epoll.
/// Said in the result either way (`client_process.event_loop`).
fn pick_uring<F: SessionFactory>(args: &WorkerArgs<F>, ctx: &mut Ctx<F>) -> Option<UringReactor> {
    let spec = &args.spec;
    // io_uring unless told otherwise, where it applies (plain TCP, closed loop; a hold
    // plan is connect's), and the kernel gives a ring;
    // else epoll. A plan that reconnects every n requests (AMQP churn, HTTP without
    // keep-alive) stays on epoll: AMQP churn with io_uring on both ends measured 0.92x
    // epoll on both ends (BENCHMARKS.md#design-choices-and-the-measurements-behind-them).
    let on_uring = uring_loop::wanted()
        && spec.connector.tls.is_none()
        && spec.connector.tunnel.is_none()
        && spec.shape.rate.is_none()
        && spec.per_connection.is_none()
        && !matches!(spec.shape.plan, Plan::Hold);
    let uring = on_uring
        .then(|| {
            UringReactor::new(
                args.clock,
                STOP_CHECK,
                Stop::Flag(spec.stop.clone()),
                super::uring_slots::BUFFERS,
                super::uring_slots::BUFFER_SIZE,
            )
            .ok()
        })
        .flatten();
    if uring.is_some() {
        let n = spec.shape.connections_of(args.index);
        ctx.uring = Some(Box::new(super::uring_slots::UringSlots::new(n)));
    }
    // Said in the result (`client_process.event_loop`): a ring refused here means epoll.
    ctx.stats.event_loop = LoopCounts::one(if uring.is_some() {
        EventLoop::IoUring
    } else {
        EventLoop::Epoll
    });
    uring
}

/// A batch plan's progress at its start; `None` for every other plan.
fn batch_of(plan: &Plan) -> Option<Batch> {
    match *plan {
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
    }
}

/// The worker's slots, each started: at once, or spread over the ramp; with limits on
/// attempts and no ramp, they wait their turn in slot order (no queue entry each).
fn start_slots<F: SessionFactory>(
    args: &WorkerArgs<F>,
    ctx: &mut Ctx<F>,
    batch: bool,
) -> Vec<Conn<F::Session>> {
    let spec = &args.spec;
    let n = spec.shape.connections_of(args.index);
    let first = spec.shape.first_connection_of(args.index);
    let total = spec.shape.connections;
    let mut conns: Vec<Conn<F::Session>> = (0..n)
        .map(|slot| {
            let g = first + slot;
            let offset = ctx.schedule.as_ref().map(|s| s.offset_of(g, total));
            Conn::new(offset, ctx.schedule.as_ref())
        })
        .collect();
    // In open loop the ramp shapes the rate (`spec.curve`), not the connection starts:
    // every connection opens at once, so none skips a send the rate asked for.
    let spread = spec
        .shape
        .ramp
        .filter(|_| !batch && spec.shape.rate.is_none());
    if spec.shape.stages.is_connections() {
        // Connection stages: every slot rests until the count asks for it (`vus`).
        for (slot, c) in conns.iter_mut().enumerate() {
            c.leave(slot as u32, ctx);
        }
        return conns;
    }
    let fresh = spread.is_none() && !batch && ctx.admission.limited();
    if fresh {
        ctx.admission.wait_fresh(n as u32);
    }
    for (slot, c) in conns.iter_mut().enumerate().filter(|_| !fresh) {
        let at = spread.map_or(0, |r| r.start_of(first + slot, total));
        if at == 0 {
            c.begin(slot as u32, ctx);
        } else {
            c.wait_until(slot as u32, at, ctx);
        }
    }
    conns
}

/// The worker's last snapshot and connection counts sent, and its output.
fn finish<F: SessionFactory>(
    mut ctx: Ctx<F>,
    args: &WorkerArgs<F>,
    ticks: u64,
    cpu: Duration,
) -> Output<F> {
    let finish_ns = ctx.now();
    let _ = args.snapshots.send(WorkerReport::Interval(take_snapshot(
        &mut ctx,
        args.index,
        ticks,
        true,
        Latency::new(),
    )));
    send_connections(&ctx, args.index, &args.snapshots);
    let [_, measured] = std::mem::take(&mut ctx.figures);
    WorkerOutput {
        stats: std::mem::replace(&mut ctx.stats, WorkerStats::new(false)),
        figures: measured,
        finish_ns,
        cpu,
        max_lag_ns: ctx.max_lag_ns,
    }
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

/// The load's side of the reactor: its slots and what it does between waits.
struct Worker<'a, F: SessionFactory> {
    ctx: Ctx<F>,
    conns: Vec<Conn<F::Session>>,
    next_tick: u64,
    interval_ns: u64,
    ticks: u64,
    batch: Option<Batch>,
    /// Connection stages: which slots are wanted open, over time.
    vus: Option<super::vus::Vus>,
    /// The report that every slot's first attempt settled has gone.
    up_sent: bool,
    index: usize,
    snapshots: &'a Sender<WorkerReport>,
    returned: &'a Returned,
}

impl<F: SessionFactory> EpollHandler for Worker<'_, F> {
    fn epoll(&self) -> &Epoll {
        &self.ctx.epoll
    }

    fn on_event(&mut self, token: u64, events: u32) {
        let (slot, gen) = split(token);
        if let Some(c) = self.conns.get_mut(slot as usize) {
            if c.gen == gen {
                c.on_event(slot, events, &mut self.ctx);
            }
        }
    }
}

impl<F: SessionFactory> Handler for Worker<'_, F> {
    fn timers(&mut self) -> &mut Timers {
        &mut self.ctx.timers
    }

    fn ready(&mut self) -> &mut Vec<(u32, u32)> {
        &mut self.ctx.ready
    }

    fn pending(&mut self) -> Option<&mut Pending> {
        Some(&mut self.ctx.pending)
    }

    fn nap_ns(&self) -> u64 {
        self.ctx.coalesce.nap_ns()
    }

    fn on_flush(&mut self, slot: u32) {
        if let Some(c) = self.conns.get_mut(slot as usize) {
            c.on_flush(slot, &mut self.ctx);
        }
    }

    fn on_ready(&mut self, slot: u32, gen: u32) {
        // A connection that gave others a turn before its socket was drained.
        if let Some(c) = self.conns.get_mut(slot as usize) {
            if c.gen == gen && c.state == State::Running {
                // Read to EAGAIN: an edge it had may have been a hang-up.
                c.on_event(slot, libc::EPOLLRDHUP as u32, &mut self.ctx);
            }
        }
    }

    fn on_timer(&mut self, at: u64, slot: u32, gen: u32) {
        if let Some(c) = self.conns.get_mut(slot as usize) {
            if c.armed_for(at, gen) {
                c.on_timer(slot, &mut self.ctx);
            }
        }
    }

    fn on_stop(&mut self) -> bool {
        // Ctrl-C: stop sending, let the replies in flight drain.
        self.ctx.stopping = true;
        for (slot, c) in self.conns.iter_mut().enumerate() {
            c.on_stop(slot as u32, &mut self.ctx);
        }
        false
    }

    fn after_wake(&mut self, now: u64) -> Option<u64> {
        admit_waiting(&mut self.ctx, &mut self.conns);
        let vus_at = match self.vus.as_mut() {
            Some(v) => v.step(now, &mut self.ctx, &mut self.conns),
            None => u64::MAX,
        };
        if !self.up_sent && self.ctx.unsettled == 0 {
            self.up_sent = true;
            send_connections(&self.ctx, self.index, self.snapshots);
        }
        if now >= self.next_tick {
            let next = self.returned.next();
            let snap = take_snapshot(&mut self.ctx, self.index, self.ticks, false, next);
            self.ticks += 1;
            // Missed ticks are not made up: the next is an interval from now, and one
            // falls on a duration plan's end (`interval_end`).
            self.next_tick =
                interval_end(self.next_tick, self.interval_ns, now, self.ctx.deadline_ns);
            let _ = self.snapshots.send(WorkerReport::Interval(snap));
            send_connections(&self.ctx, self.index, self.snapshots);
        }
        if !self.ctx.released && !self.ctx.stopping && is_set(&self.ctx.spec.release) {
            release(&mut self.ctx, &mut self.conns);
        }
        self.advance_batch();
        // Entries superseded by an earlier one go once they pile up (reactor::timers).
        let conns = &self.conns;
        self.ctx.timers.sweep(|at, slot, gen| {
            conns
                .get(slot as usize)
                .is_some_and(|c| c.armed_for(at, gen))
        });
        if self.ctx.live == 0 {
            return None;
        }
        let mut next = self.next_tick.min(vus_at);
        if let Some(at) = self.batch.as_ref().and_then(|b| b.resume_at) {
            next = next.min(at);
        }
        if let Some(at) = self.ctx.admission.wake_at() {
            next = next.min(at);
        }
        Some(next)
    }
}

/// The same slots on io_uring (`reactor::uring_loop`): completions instead of readiness.
impl<F: SessionFactory> UringHandler for Worker<'_, F> {
    fn sqes(&mut self) -> &mut Vec<squeue::Entry> {
        // Only a worker with `ctx.uring` runs this loop.
        &mut self
            .ctx
            .uring
            .get_or_insert_with(|| Box::new(super::uring_slots::UringSlots::new(0)))
            .sqes
    }

    fn on_recv(&mut self, slot: u32, gen: u32, res: i32, data: &[u8], more: bool) {
        let Some(c) = self.conns.get_mut(slot as usize) else {
            return;
        };
        let Some(u) = self.ctx.uring.as_mut() else {
            return;
        };
        if !more {
            u.recv_ended(slot, gen);
        }
        if c.gen & GEN_MASK != gen || res == -libc::ECANCELED {
            return;
        }
        if res == -libc::ENOBUFS {
            // The buffers ran out this turn; they are back by the next enter.
            if c.fd >= 0 && !u.receiving(slot, gen) {
                u.arm_recv(slot, c.gen, c.fd);
            }
            return;
        }
        c.on_recv(slot, res, data, &mut self.ctx);
        // A multishot receive the kernel ended for its own reasons (not the stream's
        // end) is armed again while the connection lives.
        if !more && res > 0 && c.gen & GEN_MASK == gen && c.fd >= 0 {
            if let Some(u) = self.ctx.uring.as_mut() {
                if !u.receiving(slot, gen) {
                    u.arm_recv(slot, c.gen, c.fd);
                }
            }
        }
    }

    fn on_sent(&mut self, slot: u32, _gen: u32, res: i32) {
        if let Some(c) = self.conns.get_mut(slot as usize) {
            c.on_sent(slot, res, &mut self.ctx);
        }
    }

    /// Its own completions are connecting sockets' polls: `res` is the poll mask (in
    /// epoll's bits, the same values as poll's), or -errno.
    fn on_own(&mut self, what: u64, res: i32, _flags: u32) {
        let (slot, gen) = split(what);
        let revents = if res < 0 {
            libc::EPOLLERR as u32
        } else {
            res as u32
        };
        if let Some(u) = self.ctx.uring.as_mut() {
            u.poll_ended(slot, gen);
        }
        if let Some(c) = self.conns.get_mut(slot as usize) {
            if c.gen & GEN_MASK == gen {
                c.on_event(slot, revents, &mut self.ctx);
            }
        }
    }
}

impl<F: SessionFactory> Worker<'_, F> {
    /// Batch plans: once every slot waits at the barrier, the next step.
    fn advance_batch(&mut self) {
        let (ctx, conns) = (&mut self.ctx, &mut self.conns);
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
                    for (slot, c) in conns.iter_mut().enumerate() {
                        c.finish(slot as u32, ctx);
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

/// The end of the interval after the one that ended at `tick` (the worker saw it at
/// `now`): an interval later, or the duration plan's end (`deadline`) when that comes
/// first and has not passed, so the last interval of the measured phase ends there.
fn interval_end(tick: u64, interval: u64, now: u64, deadline: Option<u64>) -> u64 {
    let next = (tick + interval).max(now + 1);
    match deadline {
        Some(d) if now < d => next.min(d),
        _ => next,
    }
}

fn take_snapshot<F: SessionFactory>(
    ctx: &mut Ctx<F>,
    worker: usize,
    index: u64,
    last: bool,
    next: Latency,
) -> Snapshot {
    let latency = ctx.stats.close_interval(next);
    Snapshot {
        worker,
        index,
        at_ns: ctx.now().saturating_sub(ctx.measure_start_ns),
        counters: ctx.stats.measured,
        latency,
        last,
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

/// A worker's statistics: open loop keeps the uncorrected latency too; stages, a
/// tally per stage made here, before the run (connection stages: aiming at worker
/// `worker`'s share of each stage's target).
fn stats_for(spec: &LoadSpec, worker: usize) -> WorkerStats {
    let shape = &spec.shape;
    let mut stats = WorkerStats::new(shape.rate.is_some());
    if spec.interval_handshakes {
        stats.interval_handshake = Some(Latency::new());
    }
    if !shape.stages.is_empty() {
        let mut t = crate::stats::stages::StageTally::new(shape.stages.ends_ns());
        if shape.stages.is_connections() {
            let share = |s: &super::stages::Stage| {
                super::vus::share(s.target as usize, worker, shape.threads) as u64
            };
            t.aim_at(shape.stages.list().iter().map(share).collect());
        }
        stats.stages = Some(t);
    } else if !spec.attempts.stages.is_empty() {
        // Attempts by stages (connect's churn): each stage's cycles and their connect
        // latency too.
        let mut t = crate::stats::stages::StageTally::new(spec.attempts.stages.ends_ns());
        t.time_connects();
        stats.stages = Some(t);
    }
    stats
}

/// Hold plans: requests may go from now; every held connection starts its schedule
/// here (what it would have sent before is no backlog).
fn release<F: SessionFactory>(ctx: &mut Ctx<F>, conns: &mut [Conn<F::Session>]) {
    ctx.released = true;
    let now = ctx.now();
    for (slot, c) in conns.iter_mut().enumerate() {
        c.skip_schedule_until(now, ctx.schedule.as_ref());
        if c.state == State::Running {
            c.on_timer(slot as u32, ctx);
        }
    }
}

fn send_connections<F: SessionFactory>(
    ctx: &Ctx<F>,
    worker: usize,
    snapshots: &Sender<WorkerReport>,
) {
    // Progress counts what happened so far, the warm-up (connect's ramp) included.
    let mut counters = ctx.stats.measured;
    counters.add(&ctx.stats.warmup);
    let mut conns = Box::new(ctx.stats.conns);
    conns.add(&ctx.stats.warmup_conns);
    conns.open = ctx.open;
    let _ = snapshots.send(WorkerReport::Connections {
        worker,
        counters,
        conns,
        up: ctx.unsettled == 0,
    });
}

#[cfg(test)]
mod tests {
    use super::interval_end;

    #[test]
    fn an_interval_ends_on_a_duration_plans_end() {
        // Ticks every 300 on a plan that ends at 1,000: 300, 600, 900, then 1,000.
        assert_eq!(interval_end(600, 300, 600, Some(1_000)), 900);
        assert_eq!(interval_end(900, 300, 900, Some(1_000)), 1_000);
        // After the end (the drain): an interval on, never back to the end.
        assert_eq!(interval_end(1_000, 300, 1_000, Some(1_000)), 1_300);
        // A late tick is not made up; without a deadline, as before.
        assert_eq!(interval_end(300, 300, 750, Some(1_000)), 751);
        assert_eq!(interval_end(900, 300, 900, None), 1_200);
    }
}
