//! One server thread on io_uring, the default for plain TCP (TLS, --delay/--stall,
//! --debug and `WIREBENCH_SERVER_LOOP=epoll` run on the epoll loop, `event_loop.rs`).
//! Its loop is the reactor's io_uring core (`reactor::uring_loop::UringReactor`, the
//! one under the load engine too); this file is what a server's slots are: a multishot
//! ACCEPT per listener (the handler's own completions), a multishot RECV per
//! connection into the thread's ring of provided buffers (an idle connection owns no
//! buffer), and each reply a SEND from a buffer the thread lends the connection until
//! the send completes. Connections are ordinary descriptors (direct ones, the ring's
//! file table, are `WIREBENCH_SERVER_LOOP=uring-fixed`: they measured no better).
//! Every loop turn is one io_uring_enter that submits the turn's sends and waits for
//! completions (or the next deadline), so a request costs no system call of its own.
//! Sessions are driven exactly as on the epoll loop (`ServerSession::on_bytes`, its
//! `Reply`, `next_wake`/`on_wake`); timeouts are the same coarse tick (one pass over
//! the connections per tick, never per request).

use super::config::ServerConfig;
use super::counters::{bump, ThreadCounters};
use super::event_loop::ThreadInput;
use super::session::{Reply, ServerFactory, ServerSession};
use super::timeouts::{Expired, Ticker, NO_TICK};
use crate::clock::Clock;
use crate::net::socket;
use crate::reactor::uring::user_data;
use crate::reactor::uring_loop::{UringHandler, UringReactor, BGID, IGNORE, OWN, RECV, SEND};
use crate::reactor::{split, token, Handler, Slab, Stop, Timers};
use io_uring::{cqueue, opcode, squeue, types};
use std::os::fd::AsRawFd;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The thread's receive buffers in its ring (a power of two). A loop turn gives back
/// every buffer it was handed, so this bounds the completions of one turn, not the
/// connections.
const BUFFERS: u16 = 256;
/// Largest receive buffer; --read-buffer above this is cut to it (the ring's memory is
/// `BUFFERS` times this).
const BUFFER_CAP: usize = 64 * 1024;
/// Reply bytes a connection may have queued behind its send in flight before it stops
/// being read (backpressure: a peer that does not read cannot grow this further).
const PENDING_CAP: usize = 1 << 20;
/// The largest send buffer the thread's pool keeps once its send is done (twice the
/// sessions' reply batches of about 256 KiB). A larger one (the replies a slow reader
/// let queue up) is freed: kept, it went from connection to connection, and under a
/// ping flood the pool's buffers grew one after another to the queue's size, the
/// thread's RSS with them (185 MB in 3 minutes of benchsuite/soak).
const POOL_KEEP: usize = 512 << 10;
/// How long a listener rests after its accept failed (EMFILE and friends).
const ACCEPT_BACKOFF: Duration = Duration::from_millis(10);
/// How often the figures are published (and the longest wait).
const PUBLISH_EVERY: Duration = Duration::from_millis(50);
/// Direct descriptors: at most this many connections per thread (and at most the
/// descriptor limit, which bounds the table).
const MAX_FILES: u64 = 1 << 20;

type Figs<F> = <<F as ServerFactory>::Session as ServerSession>::Figures;

struct Conn<S> {
    fd: i32,
    /// Tick of the last byte in or out (idle timeout).
    last_active: u32,
    /// Tick the request head now arriving started at (NO_TICK: not in a head).
    head_since: u32,
    /// The session asked to be woken then (ns on the thread's clock).
    wake_at: Option<u64>,
    session: S,
    /// Input not consumed by the session yet (a partial request).
    carry: Vec<u8>,
    /// The buffer of the send in flight (lent by the thread's pool), and how much of
    /// it the kernel has taken.
    sending: Option<(Vec<u8>, usize)>,
    /// Replies made while a send was in flight, sent in order after it.
    queued: Vec<u8>,
    /// The multishot receive is armed.
    receiving: bool,
    /// Stop reading until the queued replies are out (`PENDING_CAP`).
    paused: bool,
    /// The session stopped early (`Reply::More`) at the cap: go on with `carry` once
    /// the replies owed are out, before reading more.
    more: bool,
    /// The connection ends once its replies are out (the session asked).
    closing: bool,
    /// Shut down: waiting for its operations in flight to finish before close(2).
    dead: bool,
}

struct Thread<F: ServerFactory> {
    cfg: ServerConfig,
    factory: Arc<F>,
    /// What this thread's sessions share (`ServerFactory::Thread`).
    shared: F::Thread,
    listeners: Vec<std::net::TcpListener>,
    conns: Slab<Conn<F::Session>>,
    counters: Arc<ThreadCounters>,
    figures: Figs<F>,
    dirty: bool,
    /// Where the figures are published, every `PUBLISH_EVERY` (ns on `clock`).
    published: Arc<Mutex<Figs<F>>>,
    next_publish: u64,
    /// Sessions append replies here; cleared before each call.
    out: Vec<u8>,
    /// Send buffers not lent to any connection (reused: no allocation per reply).
    pool: Vec<Vec<u8>>,
    /// Entries made during a turn, pushed to the ring before its enter.
    sqes: Vec<squeue::Entry>,
    /// Session wake-ups (ns on `clock`); stale entries are skipped when they fire.
    timers: Timers,
    /// The reactor's ready list: always empty (a turn serves every completion).
    ready: Vec<(u32, u32)>,
    /// The sessions' clock (time zero is the pacing epoch), and this turn's reading.
    clock: Clock,
    now: u64,
    /// Timeouts (and their tick), when any is on.
    ticker: Option<Ticker>,
    tick: u32,
    heads: bool,
    next_tick: Option<u64>,
    /// Listeners whose accept ended in an error, re-armed at `rearm_at`.
    rearm: Vec<usize>,
    rearm_at: Option<u64>,
    /// Connections are direct descriptors (the ring's file table), not the process's.
    fixed: bool,
    /// Connections whose timeouts passed this tick (kept to reuse its memory).
    expired: Vec<(u64, Expired)>,
    /// This turn's per-request counts, added to `counters` once at its end.
    turn: TurnCounts,
}

/// The per-request counters of one loop turn.
#[derive(Default)]
struct TurnCounts {
    reads: u64,
    bytes_in: u64,
    bytes_out: u64,
    requests: u64,
}

/// Makes a server thread's loop: its ring and receive buffers, before the loop takes
/// its listeners, so that a kernel or a seccomp policy that refuses them leaves the
/// thread on the epoll loop (`server::start_many`). Single issuer: call it on the
/// thread that runs it. Readable `stop_fd` (an eventfd) ends the loop.
pub fn setup(cfg: &ServerConfig, fixed: bool, stop_fd: i32) -> std::io::Result<UringReactor> {
    let reactor = UringReactor::new(
        // Time zero is the pacing epoch, the sessions' clock.
        Clock::since(cfg.pacing.epoch),
        PUBLISH_EVERY,
        Stop::Fd(stop_fd),
        BUFFERS,
        cfg.read_buffer.clamp(1, BUFFER_CAP),
    )?;
    if fixed {
        let n = crate::sys::raise_nofile_limit().clamp(64, MAX_FILES) as u32;
        reactor.register_files_sparse(n)?;
    }
    Ok(reactor)
}

/// Runs one server thread on `reactor` until it is told to stop; `ready` is called
/// once its listeners' accepts are submitted, before the first wait.
pub fn run<F: ServerFactory>(
    cfg: ServerConfig,
    factory: Arc<F>,
    input: ThreadInput<Figs<F>>,
    mut reactor: UringReactor,
    fixed: bool,
    ready: &mut dyn FnMut(),
) -> std::io::Result<()> {
    if fixed && cfg.nodelay {
        // Accepted connections inherit it (no setsockopt on a direct descriptor).
        for l in &input.listeners {
            socket::set_nodelay(l.as_raw_fd());
        }
    }
    // The reactor's clock (made in `setup` on the pacing epoch, the sessions' clock):
    // the turns' readings and the sessions' times are on one clock.
    let clock = reactor.clock();
    let now = clock.now_ns();
    let ticker = cfg
        .timeouts
        .any()
        .then(|| Ticker::new(&cfg.timeouts, cfg.timeouts.tick(), clock.instant_at(now)));
    let mut t = Thread {
        shared: factory.thread_state(),
        factory,
        listeners: input.listeners,
        conns: Slab::new(),
        counters: input.counters,
        figures: Default::default(),
        dirty: false,
        published: input.figures,
        next_publish: now + PUBLISH_EVERY.as_nanos() as u64,
        out: Vec::new(),
        pool: Vec::new(),
        sqes: Vec::new(),
        timers: Timers::default(),
        ready: Vec::new(),
        clock,
        now,
        ticker,
        tick: 0,
        heads: cfg.timeouts.header.is_some(),
        next_tick: ticker.map(|k| clock.ns_of(k.instant_of(1))),
        rearm: Vec::new(),
        rearm_at: None,
        fixed,
        expired: Vec::new(),
        turn: TurnCounts::default(),
        cfg,
    };
    for i in 0..t.listeners.len() {
        t.arm_accept(i);
    }
    // Armed before `ready`: once it is said, every listener has an accept in the kernel.
    let r = reactor.submit(&mut t).and_then(|()| {
        ready();
        reactor.run(&mut t)
    });
    t.count_turn();
    // Shutdown: the kernel lets go of every listener and socket first (so the port is
    // free once this returns), then every connection is closed (and counted), the
    // figures published.
    reactor.cancel_all();
    let all: Vec<u64> = t.conns.tokens().collect();
    for tok in all {
        if let Some(c) = t.conns.remove(tok) {
            // Direct descriptors close with the ring, below.
            if !t.fixed {
                socket::close(c.fd);
            }
            bump(&t.counters.closes, 1);
        }
    }
    publish(&t.published, &t.figures);
    drop(reactor);
    r
}

/// Ends connection `tok`'s multishot receive (backpressure pauses it, a kill ends it);
/// the cancel's own completion needs nothing.
fn cancel_recv(tok: u64) -> squeue::Entry {
    opcode::AsyncCancel::new(user_data(RECV, tok))
        .build()
        .user_data(user_data(IGNORE, 0))
}

fn publish<G: Clone>(to: &Mutex<G>, f: &G) {
    if let Ok(mut g) = to.lock() {
        *g = f.clone();
    }
}

impl<F: ServerFactory> Handler for Thread<F> {
    fn timers(&mut self) -> &mut Timers {
        &mut self.timers
    }

    fn ready(&mut self) -> &mut Vec<(u32, u32)> {
        &mut self.ready
    }

    fn on_ready(&mut self, _slot: u32, _gen: u32) {}

    fn on_timer(&mut self, _at: u64, slot: u32, gen: u32) {
        self.on_wake_due(token(slot, gen));
    }

    fn on_stop(&mut self) -> bool {
        true
    }

    /// The turn's end: ticks, listeners to re-arm, publishing, the turn's counts.
    fn after_wake(&mut self, now: u64) -> Option<u64> {
        if let (Some(at), Some(k)) = (self.next_tick, self.ticker) {
            if now >= at {
                self.check_deadlines(&k);
                self.next_tick = Some(self.clock.ns_of(k.instant_of(self.tick + 1)));
            }
        }
        if self.rearm_at.is_some_and(|at| now >= at) {
            self.rearm_at = None;
            for i in std::mem::take(&mut self.rearm) {
                self.arm_accept(i);
            }
        }
        if now >= self.next_publish {
            if self.dirty {
                publish(&self.published, &self.figures);
                self.dirty = false;
            }
            self.next_publish = now + PUBLISH_EVERY.as_nanos() as u64;
        }
        self.count_turn();
        let mut next = self.next_publish;
        for d in [self.next_tick, self.rearm_at].into_iter().flatten() {
            next = next.min(d);
        }
        Some(next)
    }
}

impl<F: ServerFactory> UringHandler for Thread<F> {
    fn sqes(&mut self) -> &mut Vec<squeue::Entry> {
        &mut self.sqes
    }

    fn woke(&mut self, now: u64) {
        self.now = now;
        if let Some(k) = &self.ticker {
            // Connections stamp their activity with the tick of this turn.
            self.tick = k.at(self.clock.instant_at(now));
        }
    }

    fn on_recv(&mut self, slot: u32, gen: u32, res: i32, data: &[u8], more: bool) {
        self.received(token(slot, gen), res, data, more);
    }

    fn on_sent(&mut self, slot: u32, gen: u32, res: i32) {
        self.on_send(token(slot, gen), res);
    }

    /// Its own completions are its listeners' accepts (`what`: the listener).
    fn on_own(&mut self, what: u64, res: i32, flags: u32) {
        self.on_accept(what as usize, res, flags);
    }
}

impl<F: ServerFactory> Thread<F> {
    /// Adds the turn's per-request counts to the thread's counters: once a turn, not
    /// once a request.
    fn count_turn(&mut self) {
        let t = std::mem::take(&mut self.turn);
        let c = &self.counters;
        if t.reads > 0 {
            bump(&c.reads, t.reads);
            bump(&c.bytes_in, t.bytes_in);
        }
        if t.requests > 0 {
            bump(&c.requests, t.requests);
        }
        if t.bytes_out > 0 {
            bump(&c.bytes_out, t.bytes_out);
        }
    }

    /// One pass over the connections per tick: head and idle timeouts.
    fn check_deadlines(&mut self, k: &Ticker) {
        let now = self.tick;
        let mut expired = std::mem::take(&mut self.expired);
        for (tok, c) in self.conns.iter() {
            if c.dead {
                continue;
            }
            if let Some(e) = k.expired(now, c.head_since, c.last_active, true) {
                expired.push((tok, e));
            }
        }
        for (tok, e) in expired.drain(..) {
            match e {
                Expired::Header => bump(&self.counters.header_timeouts, 1),
                Expired::Idle => bump(&self.counters.idle_timeouts, 1),
            }
            self.kill(tok);
        }
        self.expired = expired;
    }

    /// A session wake-up that is due: what it makes goes out after any replies owed.
    fn on_wake_due(&mut self, tok: u64) {
        let now_ns = self.now;
        let Some(c) = self.conns.get_mut(tok) else {
            return;
        };
        match c.wake_at {
            Some(ns) if ns <= now_ns && !c.dead && !c.closing => {}
            _ => return,
        }
        c.wake_at = None;
        self.out.clear();
        c.session.on_wake(now_ns, &mut self.out, &mut self.figures);
        self.dirty = true;
        self.send_out(tok);
        self.arm_wake(tok);
    }

    /// Asks the session when it wants waking and arms a timer if that changed.
    fn arm_wake(&mut self, tok: u64) {
        let Some(c) = self.conns.get_mut(tok) else {
            return;
        };
        let want = c.session.next_wake();
        if want == c.wake_at {
            return;
        }
        c.wake_at = want;
        if let Some(ns) = want {
            let (slot, gen) = split(tok);
            self.timers.arm(ns, slot, gen);
        }
    }

    /// Sends `out` on connection `tok`, or queues it behind the send in flight.
    fn send_out(&mut self, tok: u64) {
        if self.out.is_empty() {
            return;
        }
        let Some(c) = self.conns.get_mut(tok) else {
            return;
        };
        send_or_queue(
            c,
            tok,
            self.fixed,
            &mut self.out,
            &mut self.pool,
            &mut self.sqes,
        );
    }

    fn arm_accept(&mut self, i: usize) {
        if let Some(l) = self.listeners.get(i) {
            self.sqes.push(
                opcode::AcceptMulti::new(types::Fd(l.as_raw_fd()))
                    // A direct descriptor is in no process's table: no CLOEXEC (EINVAL).
                    .flags(if self.fixed {
                        libc::SOCK_NONBLOCK
                    } else {
                        libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC
                    })
                    .allocate_file_index(self.fixed)
                    .build()
                    .user_data(user_data(OWN, i as u64)),
            );
        }
    }

    fn arm_recv(&mut self, tok: u64, fd: i32) {
        let e = if self.fixed {
            opcode::RecvMulti::new(types::Fixed(fd as u32), BGID).build()
        } else {
            opcode::RecvMulti::new(types::Fd(fd), BGID).build()
        };
        self.sqes.push(e.user_data(user_data(RECV, tok)));
    }

    fn on_accept(&mut self, which: usize, res: i32, flags: u32) {
        if !cqueue::more(flags) {
            if res < 0 {
                // Out of descriptors (or worse): rest instead of spinning on accept.
                self.rearm_at = Some(self.now + ACCEPT_BACKOFF.as_nanos() as u64);
                self.rearm.push(which);
                return;
            }
            self.arm_accept(which);
        }
        if res < 0 {
            return;
        }
        let fd = res;
        let counters = &self.counters;
        bump(&counters.accepts, 1);
        let active = counters.accepts.load(Relaxed) - counters.closes.load(Relaxed);
        let max = self.cfg.max_conns_per_thread;
        if max > 0 && active as usize > max {
            bump(&counters.rejected, 1);
            bump(&counters.closes, 1);
            self.close_fd(fd);
            return;
        }
        if self.cfg.nodelay && !self.fixed {
            socket::set_nodelay(fd);
        }
        // The sessions' clock, so a session can arm its first wake-up at once.
        let now_ns = self.clock.now_ns();
        let session = self.factory.session_in(&self.shared, now_ns);
        let head_since = if self.heads && session.in_head(0) {
            self.tick
        } else {
            NO_TICK
        };
        let tok = self.conns.insert(Conn {
            fd,
            last_active: self.tick,
            head_since,
            wake_at: None,
            session,
            carry: Vec::new(),
            sending: None,
            queued: Vec::new(),
            receiving: true,
            paused: false,
            more: false,
            closing: false,
            dead: false,
        });
        self.arm_recv(tok, fd);
        self.arm_wake(tok);
    }

    /// A receive completion: `res` bytes in `data` (the reactor gives its buffer back
    /// once this returns), or the stream's end, or -errno; `more`: still armed.
    fn received(&mut self, tok: u64, res: i32, data: &[u8], more: bool) {
        let Some(c) = self.conns.get_mut(tok) else {
            return;
        };
        if !more {
            c.receiving = false;
        }
        if c.dead {
            self.maybe_free(tok);
            return;
        }
        if res == -libc::ENOBUFS {
            // The ring ran dry this turn: read again once the buffers are back.
            if !c.receiving && !c.paused {
                c.receiving = true;
                let fd = c.fd;
                self.arm_recv(tok, fd);
            }
            return;
        }
        if res == -libc::ECANCELED {
            // Our own cancel, for backpressure: re-armed once the replies owed are out.
            // They may be out already (their sends completed before this completion
            // came): then read again now.
            if !c.receiving && !c.paused && !c.closing {
                c.receiving = true;
                let fd = c.fd;
                self.arm_recv(tok, fd);
            }
            return;
        }
        if res == 0 && c.sending.is_some() {
            // The peer is done sending; the replies already made still go out.
            c.closing = true;
            return;
        }
        if res <= 0 {
            self.kill(tok);
            return;
        }
        if data.is_empty() {
            // Bytes with no buffer named: nothing to read them from.
            self.kill(tok);
            return;
        }
        let n = res as usize;
        c.last_active = self.tick;
        self.turn.reads += 1;
        self.turn.bytes_in += n as u64;
        self.feed(tok, data);
        if let Some(c) = self.conns.get_mut(tok) {
            if !c.receiving && !c.paused && !c.closing && !c.dead {
                c.receiving = true;
                let fd = c.fd;
                self.arm_recv(tok, fd);
            }
        }
    }

    /// Runs the session over `fresh` (after what it left last time) and sends its replies.
    fn feed(&mut self, tok: u64, fresh: &[u8]) {
        let Some(c) = self.conns.get_mut(tok) else {
            return;
        };
        if c.closing {
            return;
        }
        let mut carry = std::mem::take(&mut c.carry);
        if !carry.is_empty() {
            carry.extend_from_slice(fresh);
        }
        let mut at = 0;
        loop {
            let input: &[u8] = if carry.is_empty() {
                &fresh[at..]
            } else {
                &carry[at..]
            };
            self.out.clear();
            let reply = c.session.on_bytes(input, &mut self.out, &mut self.figures);
            self.dirty = true;
            let answered = c.session.take_requests();
            if answered > 0 {
                self.turn.requests += answered;
            }
            let (used, again) = match reply {
                Reply::Consumed(u) => (u.min(input.len()), false),
                Reply::Reflect(u) => {
                    let u = u.min(input.len());
                    self.out.clear();
                    self.out.extend_from_slice(&input[..u]);
                    (u, false)
                }
                Reply::Close => {
                    c.closing = true;
                    (input.len(), false)
                }
                Reply::TooLarge => {
                    bump(&self.counters.too_large, 1);
                    c.closing = true;
                    (input.len(), false)
                }
                Reply::More(u) => {
                    let u = u.min(input.len());
                    (u, u < input.len())
                }
            };
            at += used;
            if !self.out.is_empty() {
                send_or_queue(
                    c,
                    tok,
                    self.fixed,
                    &mut self.out,
                    &mut self.pool,
                    &mut self.sqes,
                );
            }
            if !again || c.closing {
                break;
            }
            if c.queued.len() > PENDING_CAP {
                // Enough owed: the rest waits in `carry` until the replies are out.
                c.more = true;
                break;
            }
        }
        let rest_len = if carry.is_empty() {
            fresh.len()
        } else {
            carry.len()
        };
        if !c.closing && at < rest_len {
            if carry.is_empty() {
                carry.extend_from_slice(&fresh[at..]);
            } else {
                carry.drain(..at);
            }
            c.carry = carry;
        }
        if self.heads {
            c.head_since = if !c.session.in_head(c.carry.len()) {
                NO_TICK
            } else if c.head_since == NO_TICK {
                self.tick
            } else {
                c.head_since
            };
        }
        if c.queued.len() > PENDING_CAP && !c.paused {
            c.paused = true;
            if c.receiving {
                self.sqes.push(cancel_recv(tok));
            }
        }
        if c.closing {
            if c.sending.is_none() {
                self.kill(tok);
            }
            return;
        }
        self.arm_wake(tok);
    }

    fn on_send(&mut self, tok: u64, res: i32) {
        let Some(c) = self.conns.get_mut(tok) else {
            return;
        };
        let Some((mut b, at)) = c.sending.take() else {
            return;
        };
        if c.dead || res <= 0 {
            give_back(&mut self.pool, b);
            if !c.dead {
                self.kill(tok);
            } else {
                self.maybe_free(tok);
            }
            return;
        }
        let at = at + res as usize;
        c.last_active = self.tick;
        self.turn.bytes_out += res as u64;
        if at < b.len() {
            self.sqes.push(send_entry(self.fixed, tok, c.fd, &b, at));
            c.sending = Some((b, at));
            return;
        }
        if c.queued.is_empty() {
            give_back(&mut self.pool, b);
        } else {
            // The queued replies go next, in the buffer just freed.
            b.clear();
            std::mem::swap(&mut b, &mut c.queued);
            if c.queued.capacity() > PENDING_CAP {
                c.queued = Vec::new();
            }
            self.sqes.push(send_entry(self.fixed, tok, c.fd, &b, 0));
            c.sending = Some((b, 0));
            return;
        }
        if c.closing {
            self.kill(tok);
            return;
        }
        if std::mem::take(&mut c.more) {
            self.feed(tok, &[]);
            match self.conns.get_mut(tok) {
                Some(c) if c.sending.is_none() => {}
                _ => return,
            }
        }
        let Some(c) = self.conns.get_mut(tok) else {
            return;
        };
        if c.paused {
            c.paused = false;
            if !c.receiving {
                c.receiving = true;
                let fd = c.fd;
                self.arm_recv(tok, fd);
            }
        }
    }

    /// Ends a connection: shut down (so its receive completes), closed and freed once
    /// nothing of it is in flight.
    fn kill(&mut self, tok: u64) {
        let Some(c) = self.conns.get_mut(tok) else {
            return;
        };
        if !c.dead {
            c.dead = true;
            let fd = c.fd;
            if c.receiving {
                // A peer that keeps sending would keep a shut-down receive going: end it,
                // so the close comes (with a reset if bytes are left unread).
                self.sqes.push(cancel_recv(tok));
            }
            if self.fixed {
                self.sqes.push(
                    opcode::Shutdown::new(types::Fixed(fd as u32), libc::SHUT_RDWR)
                        .build()
                        .user_data(user_data(IGNORE, 0)),
                );
                // Shut down at the next enter: nothing completes before it.
                return;
            }
            // SAFETY: the connection's own descriptor, still open.
            unsafe { libc::shutdown(fd, libc::SHUT_RDWR) };
        }
        self.maybe_free(tok);
    }

    fn maybe_free(&mut self, tok: u64) {
        let Some(c) = self.conns.get_mut(tok) else {
            return;
        };
        if c.receiving || c.sending.is_some() {
            return;
        }
        if let Some(c) = self.conns.remove(tok) {
            self.close_fd(c.fd);
            bump(&self.counters.closes, 1);
        }
    }

    fn close_fd(&mut self, fd: i32) {
        if self.fixed {
            self.sqes.push(
                opcode::Close::new(types::Fixed(fd as u32))
                    .build()
                    .user_data(user_data(IGNORE, 0)),
            );
        } else {
            socket::close(fd);
        }
    }
}

/// Sends the replies in `out` on connection `c` (`tok`), or queues them behind its send
/// in flight. A send goes from `out` itself, swapped for a free buffer of the pool that
/// the next replies are made in (no copy of the replies, no allocation while the pool
/// has a buffer).
fn send_or_queue<S>(
    c: &mut Conn<S>,
    tok: u64,
    fixed: bool,
    out: &mut Vec<u8>,
    pool: &mut Vec<Vec<u8>>,
    sqes: &mut Vec<squeue::Entry>,
) {
    if c.sending.is_some() {
        c.queued.extend_from_slice(out);
        return;
    }
    let mut b = pool.pop().unwrap_or_default();
    b.clear();
    std::mem::swap(&mut b, out);
    sqes.push(send_entry(fixed, tok, c.fd, &b, 0));
    c.sending = Some((b, 0));
}

/// A send buffer back to the pool, unless it grew past `POOL_KEEP`.
fn give_back(pool: &mut Vec<Vec<u8>>, b: Vec<u8>) {
    if b.capacity() <= POOL_KEEP {
        pool.push(b);
    }
}

fn send_entry(fixed: bool, tok: u64, fd: i32, b: &[u8], at: usize) -> squeue::Entry {
    let rest = &b[at..];
    let e = if fixed {
        opcode::Send::new(types::Fixed(fd as u32), rest.as_ptr(), rest.len() as u32)
    } else {
        opcode::Send::new(types::Fd(fd), rest.as_ptr(), rest.len() as u32)
    };
    e.flags(libc::MSG_NOSIGNAL)
        .build()
        .user_data(user_data(SEND, tok))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::session::Figures;

    /// Echoes what it reads: its replies queue up as fast as a peer sends.
    struct Echo;

    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
    struct NoFigures;

    impl Figures for NoFigures {
        fn merge(&mut self, _: &Self) {}
    }

    impl ServerSession for Echo {
        type Figures = NoFigures;

        fn on_bytes(&mut self, input: &[u8], _: &mut Vec<u8>, _: &mut NoFigures) -> Reply {
            Reply::Reflect(input.len())
        }
    }

    struct EchoFactory;

    impl ServerFactory for EchoFactory {
        type Session = Echo;
        type Thread = ();

        fn thread_state(&self) {}

        fn session(&self) -> Echo {
            Echo
        }
    }

    /// A thread (no ring: its handlers only push entries) with one connection whose
    /// receive is armed and a send of 10 bytes in flight; its descriptor is one end of
    /// a socket pair, the other end returned.
    fn thread_with_a_sending_conn() -> (Thread<EchoFactory>, u64, std::os::unix::net::UnixStream) {
        use std::os::fd::IntoRawFd;
        let (ours, peer) = std::os::unix::net::UnixStream::pair().unwrap();
        let clock = Clock::new();
        let mut t = Thread {
            shared: (),
            factory: Arc::new(EchoFactory),
            listeners: Vec::new(),
            conns: Slab::new(),
            counters: Arc::default(),
            figures: NoFigures,
            dirty: false,
            published: Arc::default(),
            next_publish: 0,
            out: Vec::new(),
            pool: Vec::new(),
            sqes: Vec::new(),
            timers: Timers::default(),
            ready: Vec::new(),
            clock,
            now: clock.now_ns(),
            ticker: None,
            tick: 0,
            heads: false,
            next_tick: None,
            rearm: Vec::new(),
            rearm_at: None,
            fixed: false,
            expired: Vec::new(),
            turn: TurnCounts::default(),
            cfg: ServerConfig {
                listen: "127.0.0.1:0".parse().unwrap(),
                threads: 1,
                max_conns_per_thread: 0,
                read_buffer: BUFFER_CAP,
                tls: None,
                nodelay: true,
                debug: false,
                timeouts: Default::default(),
                pacing: super::super::pacing::Pacing::off(),
                one_of_processes: false,
            },
        };
        let tok = t.conns.insert(Conn {
            fd: ours.into_raw_fd(),
            last_active: 0,
            head_since: NO_TICK,
            wake_at: None,
            session: Echo,
            carry: Vec::new(),
            sending: Some((vec![b'x'; 10], 0)),
            queued: Vec::new(),
            receiving: true,
            paused: false,
            more: false,
            closing: false,
            dead: false,
        });
        (t, tok, peer)
    }

    /// A peer's bytes, echoed behind the send in flight, past `PENDING_CAP`: the
    /// connection stops being read (its receive cancelled). Returns their length.
    fn fill_past_the_cap(t: &mut Thread<EchoFactory>, tok: u64) -> usize {
        let input = vec![b'p'; PENDING_CAP + 1];
        t.received(tok, input.len() as i32, &input, true);
        let c = t.conns.get_mut(tok).unwrap();
        assert!(c.paused && c.receiving);
        assert_eq!(c.queued.len(), input.len());
        input.len()
    }

    /// The replies go out: the send in flight (10 bytes), then the `queued` behind it.
    fn replies_out(t: &mut Thread<EchoFactory>, tok: u64, queued: usize) {
        t.on_send(tok, 10);
        t.on_send(tok, queued as i32);
    }

    #[test]
    fn a_receive_cancelled_for_backpressure_reads_again_once_the_replies_are_out() {
        let (mut t, tok, _peer) = thread_with_a_sending_conn();
        let queued = fill_past_the_cap(&mut t, tok);
        // The replies go out before the cancelled receive's completion comes, as under
        // load in the soak.
        replies_out(&mut t, tok, queued);
        assert!(!t.conns.get_mut(tok).unwrap().paused);
        t.sqes.clear();
        t.received(tok, -libc::ECANCELED, &[], false);
        // Still served, and read again: not ended as if the peer had failed.
        let c = t.conns.get_mut(tok).expect("the connection is still there");
        assert!(!c.dead && c.receiving);
        assert_eq!(t.counters.closes.load(Relaxed), 0);
        assert_eq!(t.sqes.len(), 1, "one receive armed");
    }

    #[test]
    fn the_cancel_completing_first_waits_for_the_replies() {
        let (mut t, tok, _peer) = thread_with_a_sending_conn();
        let queued = fill_past_the_cap(&mut t, tok);
        t.sqes.clear();
        t.received(tok, -libc::ECANCELED, &[], false);
        let c = t.conns.get_mut(tok).unwrap();
        assert!(c.paused && !c.receiving && !c.dead);
        assert!(t.sqes.is_empty(), "no receive while replies are owed");
        replies_out(&mut t, tok, queued);
        let c = t.conns.get_mut(tok).unwrap();
        assert!(!c.paused && c.receiving);
    }

    #[test]
    fn the_pool_keeps_no_buffer_a_slow_reader_grew() {
        let (mut t, tok, _peer) = thread_with_a_sending_conn();
        let queued = fill_past_the_cap(&mut t, tok);
        replies_out(&mut t, tok, queued);
        // The 10-byte buffer stays as the connection's queue; the grown one is freed.
        assert!(
            t.pool.iter().all(|b| b.capacity() <= POOL_KEEP),
            "pooled: {:?}",
            t.pool.iter().map(Vec::capacity).collect::<Vec<_>>()
        );
        // A small send's buffer is kept.
        t.out = b"small".to_vec();
        let c = t.conns.get_mut(tok).unwrap();
        send_or_queue(c, tok, false, &mut t.out, &mut t.pool, &mut t.sqes);
        t.on_send(tok, 5);
        assert_eq!(t.pool.len(), 1);
    }
}
