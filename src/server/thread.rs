//! One server thread, the same on both cores: its connections (a `reactor::Slab` of
//! `Conn`s, driven by `driver.rs`), accepting them (the limit per thread, a session
//! each), closing them (counted by why), the coarse tick of the timeouts (one pass
//! over the connections per tick, never per request), publishing the protocol's
//! figures and the turn's counts, and the reactor's `Handler`. What a core adds is
//! `epoll.rs` (`EpollHandler`: readiness, accept4, TLS) and `uring.rs`
//! (`UringHandler`: completions, multishot accept and receive).

use super::config::ServerConfig;
use super::conn::{Conn, Io};
use super::counters::{bump, ThreadCounters};
use super::driver::{self, Closed, Core, Ctx, Got};
use super::session::{ServerFactory, ServerSession};
use super::timeouts::{Expired, Ticker};
use crate::clock::Clock;
use crate::reactor::{token, Handler, Slab, Timers};
use std::net::SocketAddr;
use std::os::fd::OwnedFd;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A TLS handshake must finish within this.
pub const TLS_HANDSHAKE_LIMIT: Duration = Duration::from_secs(10);
/// How often the thread's protocol figures are published for the stats printer (and
/// the reactor's coarse tick).
pub const PUBLISH_EVERY: Duration = Duration::from_millis(50);
/// How long the listeners rest after accept fails for lack of descriptors or memory.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(10);

/// What a thread is given by `start_many`.
pub struct ThreadInput<G> {
    pub listeners: Vec<OwnedFd>,
    pub counters: Arc<ThreadCounters>,
    /// An eventfd: readable means stop.
    pub stop_fd: i32,
    /// Where the thread publishes its protocol figures.
    pub figures: Arc<Mutex<G>>,
}

pub type Figs<F> = <<F as ServerFactory>::Session as ServerSession>::Figures;

pub struct Thread<F: ServerFactory, K> {
    pub conns: Slab<Conn<F::Session>>,
    pub ctx: Ctx<Figs<F>>,
    /// What the core keeps for the thread (`Core`).
    pub core: K,
    pub cfg: ServerConfig,
    pub listeners: Vec<OwnedFd>,
    factory: Arc<F>,
    /// What this thread's sessions share (`ServerFactory::Thread`).
    shared: F::Thread,
    /// Timeouts and the TLS handshake limit, when either is on.
    ticker: Option<Ticker>,
    handshake_ticks: u32,
    /// When the next tick starts (ns on the clock).
    next_tick: Option<u64>,
    published: Arc<Mutex<Figs<F>>>,
    next_publish: u64,
    /// Connections whose timeouts passed this tick (kept to reuse its memory).
    expired: Vec<(u64, Closed)>,
    /// The listeners rest until then (ns), after accept failed.
    rest_until: Option<u64>,
}

impl<F: ServerFactory, K: Core> Thread<F, K> {
    /// A thread on `clock` (time zero: the pacing epoch, the sessions' clock), reading
    /// into a buffer of `read_buffer` bytes (a core that reads).
    pub fn new(
        cfg: ServerConfig,
        factory: Arc<F>,
        input: ThreadInput<Figs<F>>,
        clock: Clock,
        read_buffer: usize,
        core: K,
    ) -> Self {
        let now = clock.now_ns();
        let start = clock.instant_at(now);
        let ticker = if cfg.timeouts.any() {
            Some(Ticker::new(&cfg.timeouts, cfg.timeouts.tick(), start))
        } else if cfg.tls.is_some() {
            Some(Ticker::new(&cfg.timeouts, Duration::from_secs(1), start))
        } else {
            None
        };
        let handshake_ticks = ticker.map_or(0, |k| {
            (TLS_HANDSHAKE_LIMIT.as_nanos() / k.tick.as_nanos()).max(1) as u32
        });
        Thread {
            conns: Slab::new(),
            ctx: Ctx {
                read: vec![0; read_buffer],
                out: Vec::new(),
                figures: Default::default(),
                dirty: false,
                io: Io::default(),
                counters: input.counters,
                pacing: cfg.pacing,
                timers: Timers::default(),
                ready: Vec::new(),
                clock,
                heads: cfg.timeouts.header.is_some(),
            },
            core,
            listeners: input.listeners,
            shared: factory.thread_state(),
            factory,
            ticker,
            handshake_ticks,
            next_tick: ticker.map(|k| clock.ns_of(k.instant_of(1))),
            published: input.figures,
            next_publish: now + PUBLISH_EVERY.as_nanos() as u64,
            expired: Vec::new(),
            rest_until: None,
            cfg,
        }
    }

    /// A loop turn began: connections stamp their activity with its tick (the clock
    /// is read, by `now`, only when timeouts are on).
    pub fn stamp_tick(&mut self, now: impl FnOnce() -> Instant) {
        if let Some(k) = &self.ticker {
            self.ctx.io.tick = k.at(now());
        }
    }

    /// A connection accepted on `fd` (`peer`: for --debug): counted, closed at once
    /// past --max-conns-per-thread, else given its session and slab entry. The core
    /// then registers it and calls `started`.
    pub fn admit(&mut self, fd: i32, peer: Option<SocketAddr>) -> Option<u64> {
        let counters = &self.ctx.counters;
        bump(&counters.accepts, 1);
        let active = counters.accepts.load(Relaxed) - counters.closes.load(Relaxed);
        let max = self.cfg.max_conns_per_thread;
        if max > 0 && active as usize > max {
            bump(&counters.rejected, 1);
            bump(&counters.closes, 1);
            if let Some(p) = peer {
                eprintln!("reject {p}: thread at --max-conns-per-thread {max}");
            }
            self.core.close_fd(fd);
            return None;
        }
        // The sessions' clock, so a session can arm its first wake-up at once.
        let now_ns = self.ctx.clock.now_ns();
        let session = self.factory.session_in(&self.shared, now_ns);
        let mut c = Conn::new(fd, session, self.ctx.io.tick, self.ctx.heads);
        if let Some(p) = peer {
            eprintln!("accept {p}");
            c.extra(&mut self.ctx.io.extras).peer = Some(p);
        }
        Some(self.conns.insert(c))
    }

    /// A registered connection: the session's first wake-up is armed.
    pub fn started(&mut self, tok: u64) {
        if let Some(c) = self.conns.get_mut(tok) {
            driver::arm_wake(tok, c, &mut self.ctx);
        }
    }

    /// Drives connection `tok` with what its core got, and closes it if it ended.
    pub fn drive(&mut self, tok: u64, got: Got<'_>) {
        let Some(c) = self.conns.get_mut(tok).filter(|c| !c.ending) else {
            return;
        };
        if let Some(why) = driver::drive(tok, c, &mut self.ctx, &mut self.core, got) {
            self.close(tok, why);
        }
    }

    /// Closes connection `tok`, counted by why; its core frees it now or once its
    /// operations in flight are done (`free`).
    pub fn close(&mut self, tok: u64, why: Closed) {
        let Some(c) = self.conns.get_mut(tok).filter(|c| !c.ending) else {
            return;
        };
        let counters = &self.ctx.counters;
        match why {
            Closed::Timeout(Expired::Header) => bump(&counters.header_timeouts, 1),
            Closed::Timeout(Expired::Idle) => bump(&counters.idle_timeouts, 1),
            Closed::HandshakeTimeout => bump(&counters.tls_failures, 1),
            _ => {}
        }
        if let Some(p) = c.extra.as_ref().and_then(|x| x.peer) {
            if why != Closed::Shutdown {
                eprintln!("close {p}: {why}");
            }
        }
        if self.core.end(tok, c) {
            self.free(tok);
        }
    }

    /// Removes connection `tok` and closes its descriptor.
    pub fn free(&mut self, tok: u64) {
        if let Some(mut c) = self.conns.remove(tok) {
            self.core.close_fd(c.fd);
            bump(&self.ctx.counters.closes, 1);
            if let Some(x) = c.extra.take() {
                self.ctx.io.extras.give(x);
            }
        }
    }

    /// Accept failed for lack of descriptors or memory: the listeners rest a while
    /// (the core has stopped them) instead of spinning on accept.
    pub fn rest_listeners(&mut self, now: u64) {
        self.rest_until = Some(now + ACCEPT_BACKOFF.as_nanos() as u64);
    }

    /// Shutdown: every connection is closed (and counted), the figures published.
    pub fn shut_down(&mut self) {
        let all: Vec<u64> = self.conns.tokens().collect();
        for tok in all {
            self.free(tok);
        }
        self.ctx.io.turn.add_to(&self.ctx.counters);
        publish(&self.published, &self.ctx.figures);
    }

    /// One pass over the connections per tick: head and idle timeouts, TLS handshakes.
    fn check_deadlines(&mut self, k: &Ticker) {
        let now = self.ctx.io.tick;
        let mut expired = std::mem::take(&mut self.expired);
        for (tok, c) in self.conns.iter().filter(|(_, c)| !c.ending) {
            if let Some(since) = c.handshaking_since() {
                if now >= since.saturating_add(self.handshake_ticks) {
                    expired.push((tok, Closed::HandshakeTimeout));
                    continue;
                }
            }
            if let Some(e) = k.expired(now, c.head_since, c.last_active, c.idle_applies()) {
                expired.push((tok, Closed::Timeout(e)));
            }
        }
        // A connection whose socket holds input the core has not handed over was not
        // silent: the server is behind (a thread starved of CPU, or stopped, wakes past
        // deadlines whose events are still queued), or a receive stalled. It waits a
        // timeout's length more (LAGGING_WAIT sweeps), has its receive asked again, and
        // is closed after as long again.
        let core = &mut self.core;
        let conns = &mut self.conns;
        expired.retain(|(tok, why)| {
            let Some(c) = conns.get_mut(*tok) else {
                return false;
            };
            if !matches!(why, Closed::Timeout(_))
                || c.lagging >= 2 * LAGGING_WAIT
                || !core.unreported_input(c)
            {
                return true;
            }
            c.lagging += 1;
            if c.lagging == LAGGING_WAIT {
                core.read_again(*tok, c);
            }
            false
        });
        for (tok, why) in expired.drain(..) {
            self.close(tok, why);
        }
        self.expired = expired;
    }
}

/// Sweeps (a tenth of the shortest timeout each) a timed-out connection whose socket
/// holds unreported input waits before its receive is replaced, and again before it is
/// closed all the same.
const LAGGING_WAIT: u8 = 10;

fn publish<G: Clone>(to: &Mutex<G>, f: &G) {
    if let Ok(mut g) = to.lock() {
        *g = f.clone();
    }
}

impl<F: ServerFactory, K: Core> Handler for Thread<F, K> {
    fn timers(&mut self) -> &mut Timers {
        &mut self.ctx.timers
    }

    fn ready(&mut self) -> &mut Vec<(u32, u32)> {
        &mut self.ctx.ready
    }

    fn on_ready(&mut self, slot: u32, gen: u32) {
        // A connection that yielded for fairness goes on now.
        self.drive(token(slot, gen), Got::Nothing);
    }

    fn on_timer(&mut self, _at: u64, slot: u32, gen: u32) {
        let tok = token(slot, gen);
        let Some(c) = self.conns.get_mut(tok).filter(|c| !c.ending) else {
            return;
        };
        let now_ns = self.ctx.clock.now_ns();
        if let Some(why) = driver::on_timer(tok, c, &mut self.ctx, &mut self.core, now_ns) {
            self.close(tok, why);
        }
    }

    fn on_stop(&mut self) -> bool {
        true
    }

    /// The turn's end: the tick's timeouts, listeners back from resting, publishing,
    /// the turn's counts.
    fn after_wake(&mut self, now: u64) -> Option<u64> {
        if let (Some(at), Some(k)) = (self.next_tick, self.ticker) {
            if now >= at {
                self.check_deadlines(&k);
                let next = k.instant_of(self.ctx.io.tick + 1);
                self.next_tick = Some(self.ctx.clock.ns_of(next));
            }
        }
        if self.rest_until.is_some_and(|at| now >= at) {
            self.rest_until = None;
            self.core.listen(&self.listeners);
        }
        if now >= self.next_publish {
            if self.ctx.dirty {
                publish(&self.published, &self.ctx.figures);
                self.ctx.dirty = false;
            }
            self.next_publish = now + PUBLISH_EVERY.as_nanos() as u64;
        }
        self.ctx.io.turn.add_to(&self.ctx.counters);
        let mut next = self.next_publish;
        for d in [self.next_tick, self.rest_until].into_iter().flatten() {
            next = next.min(d);
        }
        Some(next)
    }
}
