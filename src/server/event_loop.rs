//! One server thread: the reactor (`crate::reactor`) over its SO_REUSEPORT listeners
//! and its connections. Connections are registered edge-triggered for reading and
//! writing once, so readiness never costs an epoll_ctl; listeners are level-triggered
//! and accept in batches. What is the server's: accepting, a coarse tick for timeouts
//! (checked by one pass over the connections per tick, never per request), publishing
//! the figures; held replies and session wake-ups are the reactor's timers.

use super::config::ServerConfig;
use super::conn::{self, Closed, Conn, LoopState};
use super::counters::{bump, ThreadCounters};
use super::session::{ServerFactory, ServerSession};
use super::timeouts::{Expired, Ticker};
use crate::clock::Clock;
use crate::net::epoll::Epoll;
use crate::net::socket::{self, errno};
use crate::reactor::{token, EpollHandler, Handler, Reactor, Slab, Stop, Timers, OWN_TOKENS};
use std::os::fd::AsRawFd;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Listener `i` has token `LISTENER + i` (`OWN_TOKENS` itself is the reactor's stop).
const LISTENER: u64 = OWN_TOKENS + 1;
/// Connections accepted per listener event before the others get a turn.
const ACCEPT_BATCH: usize = 128;
/// How long the listeners rest after accept fails for lack of descriptors or memory.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(10);
/// A TLS handshake must finish within this.
pub const TLS_HANDSHAKE_LIMIT: Duration = Duration::from_secs(10);
/// How often the thread's protocol figures are published for the stats printer (and
/// the reactor's coarse tick).
const PUBLISH_EVERY: Duration = Duration::from_millis(50);
/// Events taken per epoll_wait.
const EVENTS: usize = 512;

/// What a thread is given by `start_many`.
pub struct ThreadInput<G> {
    pub listeners: Vec<std::net::TcpListener>,
    pub counters: Arc<ThreadCounters>,
    /// An eventfd: readable means stop.
    pub stop_fd: i32,
    /// Where the thread publishes its protocol figures.
    pub figures: Arc<Mutex<G>>,
}

type Figs<F> = <<F as ServerFactory>::Session as ServerSession>::Figures;

struct Thread<F: ServerFactory> {
    ep: Epoll,
    cfg: ServerConfig,
    factory: Arc<F>,
    listeners: Vec<std::net::TcpListener>,
    conns: Slab<Conn<F::Session>>,
    /// What this thread's sessions share (`ServerFactory::Thread`).
    shared: F::Thread,
    st: LoopState<Figs<F>>,
    /// Timeouts and the TLS handshake limit, when either is on.
    ticker: Option<Ticker>,
    handshake_ticks: u32,
    next_tick: Option<Instant>,
    /// Listeners rest until then (EMFILE and friends).
    paused_until: Option<Instant>,
    published: Arc<Mutex<Figs<F>>>,
    next_publish: Instant,
    /// Connections whose timeouts passed this tick (kept to reuse its memory).
    expired: Vec<(u64, Closed)>,
}

/// Runs one server thread until it is told to stop; `ready` is called once its epoll
/// instance exists with its listeners in it, before the first wait.
pub fn run<F: ServerFactory>(
    cfg: ServerConfig,
    factory: Arc<F>,
    input: ThreadInput<Figs<F>>,
    ready: &mut dyn FnMut(),
) -> std::io::Result<()> {
    let ep = Epoll::new()?;
    for (i, l) in input.listeners.iter().enumerate() {
        ep.add(l.as_raw_fd(), libc::EPOLLIN as u32, LISTENER + i as u64)
            .map_err(std::io::Error::from_raw_os_error)?;
    }
    // Time zero is the pacing epoch, the sessions' clock.
    let clock = Clock::since(cfg.pacing.epoch);
    let mut reactor = Reactor::new(clock, &ep, EVENTS, PUBLISH_EVERY, Stop::Fd(input.stop_fd))?;
    let start = Instant::now();
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
    let mut t = Thread {
        st: LoopState {
            read: vec![0; cfg.read_buffer.max(1)],
            out: Vec::new(),
            figures: Default::default(),
            dirty: false,
            counters: input.counters,
            pacing: cfg.pacing,
            timers: Timers::default(),
            ready: Vec::new(),
            clock,
            tick: 0,
            heads: cfg.timeouts.header.is_some(),
            epoch: cfg.pacing.epoch,
        },
        ep,
        cfg,
        shared: factory.thread_state(),
        factory,
        listeners: input.listeners,
        conns: Slab::new(),
        ticker,
        handshake_ticks,
        next_tick: ticker.map(|k| k.instant_of(1)),
        paused_until: None,
        published: input.figures,
        next_publish: Instant::now() + PUBLISH_EVERY,
        expired: Vec::new(),
    };
    ready();
    reactor.run(&mut t);
    // Shutdown: every connection is closed (and counted), the figures published.
    let all: Vec<u64> = t.conns.iter().map(|(tok, _)| tok).collect();
    for tok in all {
        t.close(tok, Closed::Shutdown);
    }
    publish(&t.published, &t.st.figures);
    Ok(())
}

fn publish<G: Clone>(to: &Mutex<G>, f: &G) {
    if let Ok(mut g) = to.lock() {
        *g = f.clone();
    }
}

impl<F: ServerFactory> EpollHandler for Thread<F> {
    fn epoll(&self) -> &Epoll {
        &self.ep
    }

    fn woke(&mut self) {
        // Connections stamp their activity with the tick of this wake-up (the clock is
        // read only when timeouts are on).
        if let Some(k) = &self.ticker {
            self.st.tick = k.at(Instant::now());
        }
    }

    fn on_event(&mut self, tok: u64, bits: u32) {
        if tok >= LISTENER {
            self.accept((tok - LISTENER) as usize);
            return;
        }
        let Some(c) = self.conns.get_mut(tok) else {
            return;
        };
        let readable = (libc::EPOLLIN | libc::EPOLLRDHUP | libc::EPOLLHUP | libc::EPOLLERR) as u32;
        if bits & readable != 0 {
            c.readable = true;
        }
        if bits & (libc::EPOLLRDHUP | libc::EPOLLHUP | libc::EPOLLERR) as u32 != 0 {
            c.hup = true;
        }
        if let Some(why) = conn::drive(tok, c, &mut self.st) {
            self.close(tok, why);
        }
    }
}

impl<F: ServerFactory> Handler for Thread<F> {
    fn timers(&mut self) -> &mut Timers {
        &mut self.st.timers
    }

    fn ready(&mut self) -> &mut Vec<(u32, u32)> {
        &mut self.st.ready
    }

    fn on_ready(&mut self, slot: u32, gen: u32) {
        // A connection that yielded for fairness goes on now.
        let tok = token(slot, gen);
        if let Some(c) = self.conns.get_mut(tok) {
            if let Some(why) = conn::drive(tok, c, &mut self.st) {
                self.close(tok, why);
            }
        }
    }

    fn on_timer(&mut self, _at: u64, slot: u32, gen: u32) {
        let tok = token(slot, gen);
        if let Some(c) = self.conns.get_mut(tok) {
            if let Some(why) = conn::on_timer(tok, c, &mut self.st, Instant::now()) {
                self.close(tok, why);
            }
        }
    }

    fn on_stop(&mut self) -> bool {
        true
    }

    fn after_wake(&mut self, now: u64) -> Option<u64> {
        let now = self.st.clock.instant_at(now);
        if let (Some(at), Some(k)) = (self.next_tick, self.ticker) {
            if now >= at {
                let mut expired = std::mem::take(&mut self.expired);
                self.check_deadlines(&k, &mut expired);
                for (tok, why) in expired.drain(..) {
                    self.close(tok, why);
                }
                self.expired = expired;
                self.next_tick = Some(k.instant_of(self.st.tick + 1));
            }
        }
        if self.paused_until.is_some_and(|p| now >= p) {
            self.paused_until = None;
            self.set_listening(true);
        }
        if now >= self.next_publish {
            if self.st.dirty {
                publish(&self.published, &self.st.figures);
                self.st.dirty = false;
            }
            self.next_publish = now + PUBLISH_EVERY;
        }
        let mut next = self.next_publish;
        for d in [self.next_tick, self.paused_until].into_iter().flatten() {
            next = next.min(d);
        }
        Some(self.st.clock.ns_of(next))
    }
}

impl<F: ServerFactory> Thread<F> {
    /// One pass over the connections per tick: head and idle timeouts, TLS handshakes.
    fn check_deadlines(&self, k: &Ticker, expired: &mut Vec<(u64, Closed)>) {
        let now = self.st.tick;
        for (tok, c) in self.conns.iter() {
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
    }

    fn set_listening(&self, on: bool) {
        let events = if on { libc::EPOLLIN as u32 } else { 0 };
        for (i, l) in self.listeners.iter().enumerate() {
            let _ = self.ep.modify(l.as_raw_fd(), events, LISTENER + i as u64);
        }
    }

    fn accept(&mut self, which: usize) {
        let Some(lfd) = self.listeners.get(which).map(|l| l.as_raw_fd()) else {
            return;
        };
        let counters = self.st.counters.clone();
        for _ in 0..ACCEPT_BATCH {
            // SAFETY: an all-zero sockaddr_storage is valid; accept4 writes at most len bytes.
            let mut sa: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
            let mut len = std::mem::size_of::<libc::sockaddr_storage>() as libc::socklen_t;
            // SAFETY: sa and len are valid for accept4 to write.
            let fd = unsafe {
                libc::accept4(
                    lfd,
                    &mut sa as *mut _ as *mut libc::sockaddr,
                    &mut len,
                    libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
                )
            };
            if fd < 0 {
                match errno() {
                    libc::EAGAIN => return,
                    libc::EINTR | libc::ECONNABORTED => continue,
                    e => {
                        // EMFILE and friends: rest instead of spinning on accept.
                        if self.cfg.debug {
                            eprintln!("accept failed: {}", std::io::Error::from_raw_os_error(e));
                        }
                        self.paused_until = Some(Instant::now() + ACCEPT_BACKOFF);
                        self.set_listening(false);
                        return;
                    }
                }
            }
            bump(&counters.accepts, 1);
            let peer = self.cfg.debug.then(|| peer_of(&sa, len)).flatten();
            let active = counters.accepts.load(Relaxed) - counters.closes.load(Relaxed);
            let max = self.cfg.max_conns_per_thread;
            if max > 0 && active as usize > max {
                bump(&counters.rejected, 1);
                bump(&counters.closes, 1);
                if let Some(p) = peer {
                    eprintln!("reject {p}: thread at --max-conns-per-thread {max}");
                }
                socket::close(fd);
                continue;
            }
            if self.cfg.nodelay {
                socket::set_nodelay(fd);
            }
            // The sessions' clock, so a session can arm its first wake-up at once.
            let now_ns = Instant::now()
                .saturating_duration_since(self.st.epoch)
                .as_nanos() as u64;
            let mut c = Conn::new(
                fd,
                self.factory.session_in(&self.shared, now_ns),
                self.st.tick,
                self.st.heads,
            );
            if let Some(p) = peer {
                eprintln!("accept {p}");
                c.extra().peer = Some(p);
            }
            if let Some(tls) = &self.cfg.tls {
                match rustls::ServerConnection::new(tls.clone()) {
                    Ok(s) => {
                        let x = c.extra();
                        x.tls = Some(Box::new(s));
                        x.handshake_since = self.st.tick;
                    }
                    Err(_) => {
                        bump(&counters.tls_failures, 1);
                        bump(&counters.closes, 1);
                        socket::close(fd);
                        continue;
                    }
                }
            }
            let tok = self.conns.insert(c);
            let interest =
                (libc::EPOLLIN | libc::EPOLLOUT | libc::EPOLLRDHUP | libc::EPOLLET) as u32;
            if let Err(e) = self.ep.add(fd, interest, tok) {
                self.close(
                    tok,
                    Closed::Error(std::io::Error::from_raw_os_error(e).kind()),
                );
                continue;
            }
            if let Some(c) = self.conns.get_mut(tok) {
                conn::start(tok, c, &mut self.st);
            }
        }
    }

    fn close(&mut self, tok: u64, why: Closed) {
        let Some(c) = self.conns.remove(tok) else {
            return;
        };
        let counters = &self.st.counters;
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
        socket::close(c.fd);
        bump(&counters.closes, 1);
    }
}

fn peer_of(sa: &libc::sockaddr_storage, len: libc::socklen_t) -> Option<std::net::SocketAddr> {
    // SAFETY: accept4 filled `len` bytes of a socket address into sa.
    let a = unsafe { socket2::SockAddr::new(*sa, len) };
    a.as_socket()
}
