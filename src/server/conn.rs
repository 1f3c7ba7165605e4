//! One server connection on the event loop: its slab entry and how it is driven when
//! it is ready. An idle connection owns no buffer: reads land in the thread's buffer,
//! and only an unfinished request (`carry`), replies the socket did not take
//! (`pending`), replies held back by --delay/--stall, a TLS session or a wake-up live in
//! `Extra`, allocated on demand and freed once drained. A connection with replies owed
//! is not read (backpressure: a peer that does not read stops being read, nothing grows
//! unbounded); a connection that made `FAIRNESS_ROUNDS` replies in a row yields.

use super::counters::{bump, ThreadCounters};
use super::held::Held;
use super::pacing::Pacing;
use super::session::{Reply, ServerSession};
use super::timeouts::NO_TICK;
use crate::clock::Clock;
use crate::reactor::transport::{self, Input};
use crate::reactor::{split, Timers};
use rustls::ServerConnection;
use std::io::ErrorKind;
use std::net::SocketAddr;
use std::time::Instant;

/// Why a connection ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Closed {
    /// The peer closed (or half-closed) its side.
    Eof,
    /// The session asked to close.
    Handler,
    /// A socket error.
    Error(ErrorKind),
    /// --header-timeout or --idle-timeout passed.
    Timeout(super::timeouts::Expired),
    /// The TLS handshake did not finish within `TLS_HANDSHAKE_LIMIT`.
    HandshakeTimeout,
    /// The server shut down.
    Shutdown,
}

impl std::fmt::Display for Closed {
    /// Why, in words (`serve --debug` prints it for each connection it closes).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use super::timeouts::Expired;
        match self {
            Closed::Eof => f.write_str("the client closed"),
            Closed::Handler => f.write_str("closed by the protocol"),
            Closed::Error(k) => write!(f, "{}", std::io::Error::from(*k)),
            Closed::Timeout(Expired::Header) => f.write_str("--header-timeout passed"),
            Closed::Timeout(Expired::Idle) => f.write_str("--idle-timeout passed"),
            Closed::HandshakeTimeout => f.write_str("the TLS handshake took too long"),
            Closed::Shutdown => f.write_str("the server shut down"),
        }
    }
}

/// Rounds (read, reply) one connection makes before the others get a turn.
const FAIRNESS_ROUNDS: u32 = 16;

/// What the thread's connections share while one of them is driven.
pub struct LoopState<G> {
    /// Every read lands here (--read-buffer bytes, one per thread).
    pub read: Vec<u8>,
    /// Sessions append replies here; cleared before each call.
    pub out: Vec<u8>,
    pub figures: G,
    /// `figures` changed since they were last published.
    pub dirty: bool,
    pub counters: std::sync::Arc<ThreadCounters>,
    pub pacing: Pacing,
    /// Held replies and session wake-ups (the reactor's heap, ns on `clock`). Stale
    /// entries (the connection closed, the time moved) are skipped when they fire.
    pub timers: Timers,
    /// Connections that yielded (`FAIRNESS_ROUNDS`) and must be driven again:
    /// (slot, generation).
    pub ready: Vec<(u32, u32)>,
    /// The thread's clock; its time zero is `epoch`, so sessions' wake-up times are
    /// timer times as they are.
    pub clock: Clock,
    /// The thread's coarse clock (`timeouts::Ticker`), as of the last wake-up.
    pub tick: u32,
    /// Head timeouts are on: track when heads start.
    pub heads: bool,
    /// Time zero of the sessions' clock (`next_wake`, `on_wake`).
    pub epoch: Instant,
}

/// Wakes connection `tok` at `due` (fields, not the `LoopState`: a reply being
/// written may still borrow its output buffer).
#[inline]
fn arm_at(timers: &mut Timers, clock: &Clock, due: Instant, tok: u64) {
    let (slot, gen) = split(tok);
    timers.arm(clock.ns_of(due), slot, gen);
}

/// What only some connections need, some of the time.
#[derive(Default)]
pub struct Extra {
    /// Input received but not consumed by the session (a partial request).
    pub carry: Vec<u8>,
    /// Reply bytes the socket has not taken yet.
    pub pending: Vec<u8>,
    pub ppos: usize,
    /// Replies held back by --delay/--stall (kept once made: a paced server's
    /// connections reply again soon).
    pub held: Option<Box<Held>>,
    pub tls: Option<Box<ServerConnection>>,
    /// The tick the TLS handshake started at.
    pub handshake_since: u32,
    /// The session asked to be woken at this time (ns on its clock).
    pub wake_at: Option<u64>,
    /// The peer's address, kept only for --debug lines.
    pub peer: Option<SocketAddr>,
}

impl Extra {
    fn spare(&self) -> bool {
        self.carry.is_empty()
            && self.ppos >= self.pending.len()
            && self.held.is_none()
            && self.tls.is_none()
            && self.wake_at.is_none()
            && self.peer.is_none()
    }

    #[inline]
    fn holding(&self) -> bool {
        self.held.as_ref().is_some_and(|h| h.holding())
    }
}

/// One connection's slab entry.
pub struct Conn<S> {
    pub fd: i32,
    /// Tick of the last byte in or out (idle timeout).
    pub last_active: u32,
    /// Tick the request head now arriving started at (NO_TICK: not in a head).
    pub head_since: u32,
    /// The socket may have bytes to read (edge-triggered: set by an event, cleared once
    /// a read finds it empty).
    pub readable: bool,
    /// The peer's FIN (or an error) was reported: a short read no longer means the
    /// socket is done, the end of stream is still to be read.
    pub hup: bool,
    /// The session stopped early (`Reply::More`): call it on `carry` before reading.
    again: bool,
    closing: bool,
    /// The peer closed its side while replies were held back: close once they are out.
    eof: bool,
    pub session: S,
    pub extra: Option<Box<Extra>>,
}

impl<S: ServerSession> Conn<S> {
    pub fn new(fd: i32, session: S, tick: u32, heads: bool) -> Conn<S> {
        let head_since = if heads && session.in_head(0) {
            tick
        } else {
            NO_TICK
        };
        Conn {
            fd,
            last_active: tick,
            head_since,
            // Not read before its first event: the registration (edge-triggered, with
            // EPOLLOUT) always reports one, with EPOLLIN if bytes are already there.
            // Reading at once cost every accepted connection a read that found
            // nothing (EAGAIN), a million times for `connect -n 1000000`.
            readable: false,
            hup: false,
            again: false,
            closing: false,
            eof: false,
            session,
            extra: None,
        }
    }

    pub fn extra(&mut self) -> &mut Extra {
        self.extra.get_or_insert_with(Default::default)
    }

    /// The idle timeout applies: the server is not itself holding replies back.
    pub fn idle_applies(&self) -> bool {
        !self.extra.as_ref().is_some_and(|x| x.holding())
    }

    pub fn handshaking_since(&self) -> Option<u32> {
        let x = self.extra.as_ref()?;
        x.tls
            .as_ref()
            .filter(|s| s.is_handshaking())
            .map(|_| x.handshake_since)
    }

    fn handshaking(&self) -> bool {
        self.handshaking_since().is_some()
    }
}

/// Writes through TLS when the connection has it.
#[inline]
fn send(fd: i32, tls: Option<&mut ServerConnection>, data: &[u8]) -> Result<usize, ErrorKind> {
    match tls {
        None => transport::write_plain(fd, data),
        Some(s) => transport::write_tls(s, fd, data),
    }
}

/// Asks the session when it wants waking and arms a timer if that changed.
#[inline]
fn arm_wake<S: ServerSession>(tok: u64, c: &mut Conn<S>, t: &mut LoopState<S::Figures>) {
    let want = c.session.next_wake();
    let had = c.extra.as_ref().and_then(|x| x.wake_at);
    if want == had {
        return;
    }
    c.extra().wake_at = want;
    if let Some(ns) = want {
        let (slot, gen) = split(tok);
        t.timers.arm(ns, slot, gen);
    }
}

/// A new connection: arms the session's first wake-up, if it wants one.
pub fn start<S: ServerSession>(tok: u64, c: &mut Conn<S>, t: &mut LoopState<S::Figures>) {
    arm_wake(tok, c, t);
}

/// A timer fired for this connection: a session wake-up that is due runs, then the
/// connection is driven (held replies that are due go out).
pub fn on_timer<S: ServerSession>(
    tok: u64,
    c: &mut Conn<S>,
    t: &mut LoopState<S::Figures>,
    now: Instant,
) -> Option<Closed> {
    if let Some(h) = c.extra.as_mut().and_then(|x| x.held.as_mut()) {
        // Re-armed by the next release.
        h.armed = None;
    }
    let wake = c.extra.as_ref().and_then(|x| x.wake_at);
    if let Some(ns) = wake {
        let now_ns = now.saturating_duration_since(t.epoch).as_nanos() as u64;
        if ns <= now_ns {
            c.extra().wake_at = None;
            t.out.clear();
            c.session.on_wake(now_ns, &mut t.out, &mut t.figures);
            t.dirty = true;
            if !t.out.is_empty() {
                let fd = c.fd;
                let x = c.extra();
                if x.ppos < x.pending.len() {
                    // Behind replies still owed: in order.
                    x.pending.extend_from_slice(&t.out);
                } else {
                    match send(fd, x.tls.as_deref_mut(), &t.out) {
                        Ok(n) => {
                            bump(&t.counters.bytes_out, n as u64);
                            if n < t.out.len() {
                                x.pending.clear();
                                x.ppos = 0;
                                x.pending.extend_from_slice(&t.out[n..]);
                            }
                        }
                        Err(k) => return Some(Closed::Error(k)),
                    }
                }
            }
            arm_wake(tok, c, t);
        }
    }
    drive(tok, c, t)
}

/// Runs a connection as far as it can go now. Some: it must be closed.
pub fn drive<S: ServerSession>(
    tok: u64,
    c: &mut Conn<S>,
    t: &mut LoopState<S::Figures>,
) -> Option<Closed> {
    let r = run(tok, c, t);
    if r.is_none() && c.extra.as_ref().is_some_and(|x| x.spare()) {
        // Idle again: give the memory back.
        c.extra = None;
    }
    r
}

fn run<S: ServerSession>(
    tok: u64,
    c: &mut Conn<S>,
    t: &mut LoopState<S::Figures>,
) -> Option<Closed> {
    let fd = c.fd;
    let mut rounds = 0;
    loop {
        // Finish what is owed before reading anything more.
        if let Some(x) = c.extra.as_deref_mut() {
            if let Some(s) = x.tls.as_deref_mut() {
                match transport::flush_tls(s, fd) {
                    Ok(true) => {}
                    Ok(false) => return None,
                    Err(k) => return Some(Closed::Error(k)),
                }
            }
            if x.ppos < x.pending.len() {
                match send(fd, x.tls.as_deref_mut(), &x.pending[x.ppos..]) {
                    Ok(n) => {
                        bump(&t.counters.bytes_out, n as u64);
                        x.ppos += n;
                        if n > 0 {
                            c.last_active = t.tick;
                        }
                    }
                    Err(k) => return Some(Closed::Error(k)),
                }
                if x.ppos < x.pending.len() || x.tls.as_ref().is_some_and(|s| s.wants_write()) {
                    return None;
                }
                x.pending = Vec::new();
                x.ppos = 0;
            }
            if let Some(h) = x.held.as_deref_mut().filter(|h| h.holding()) {
                let now = Instant::now();
                while let Some(data) = h.due(now) {
                    let n = match send(fd, x.tls.as_deref_mut(), data) {
                        Ok(n) => n,
                        Err(k) => return Some(Closed::Error(k)),
                    };
                    bump(&t.counters.bytes_out, n as u64);
                    if n < data.len() {
                        x.pending.extend_from_slice(&data[n..]);
                        h.pop();
                        break;
                    }
                    h.pop();
                }
                if let Some(due) = h.next_due() {
                    if h.armed != Some(due) {
                        h.armed = Some(due);
                        arm_at(&mut t.timers, &t.clock, due, tok);
                    }
                }
                if !x.pending.is_empty() {
                    continue;
                }
                if h.over_cap() {
                    if !h.full {
                        h.full = true;
                        bump(&t.counters.held_full, 1);
                    }
                    // Not read again until some go out: the timer drives it.
                    return None;
                }
            }
        }
        if c.closing {
            if c.extra.as_ref().is_some_and(|x| x.holding()) {
                return None;
            }
            return Some(if c.eof { Closed::Eof } else { Closed::Handler });
        }

        // After `Reply::More` the session goes on with what it left in `carry` first.
        let n = if std::mem::take(&mut c.again) {
            0
        } else {
            if !c.readable {
                return None;
            }
            let got = match c.extra.as_mut().and_then(|x| x.tls.as_deref_mut()) {
                None => transport::read_plain(fd, &mut t.read),
                Some(s) => transport::read_tls(s, fd, &mut t.read),
            };
            match got {
                Input::Data { n, drained } => {
                    if drained && !c.hup {
                        c.readable = false;
                    }
                    bump(&t.counters.reads, 1);
                    bump(&t.counters.bytes_in, n as u64);
                    c.last_active = t.tick;
                    n
                }
                Input::WouldBlock => {
                    c.readable = false;
                    // A TLS handshake may owe the peer a reply the socket did not take.
                    return None;
                }
                Input::Eof => {
                    if c.handshaking() {
                        bump(&t.counters.tls_failures, 1);
                    }
                    if c.extra.as_ref().is_some_and(|x| x.holding()) {
                        // The peer is done sending; what it was promised still goes out.
                        c.closing = true;
                        c.eof = true;
                        c.readable = false;
                        continue;
                    }
                    return Some(Closed::Eof);
                }
                Input::Failed(k) => {
                    if c.handshaking() {
                        bump(&t.counters.tls_failures, 1);
                    }
                    return Some(Closed::Error(k));
                }
            }
        };

        let mut carry = match c.extra.as_deref_mut() {
            Some(x) => std::mem::take(&mut x.carry),
            None => Vec::new(),
        };
        let fresh = &t.read[..n];
        if !carry.is_empty() {
            carry.extend_from_slice(fresh);
        }
        let input: &[u8] = if carry.is_empty() { fresh } else { &carry };
        t.out.clear();
        let reply = c.session.on_bytes(input, &mut t.out, &mut t.figures);
        t.dirty = true;
        let answered = c.session.take_requests();
        if answered > 0 {
            bump(&t.counters.requests, answered);
        }
        // A session never claims more than it was given; clamped all the same, so a
        // protocol's bug cannot become a panic that takes the thread's connections.
        let (to_write, used): (&[u8], usize) = match reply {
            Reply::Consumed(used) => (&t.out, used.min(input.len())),
            Reply::Reflect(used) => {
                let used = used.min(input.len());
                (&input[..used], used)
            }
            Reply::Close => {
                c.closing = true;
                (&t.out, input.len())
            }
            Reply::TooLarge => {
                bump(&t.counters.too_large, 1);
                c.closing = true;
                (&t.out, input.len())
            }
            Reply::More(used) => {
                let used = used.min(input.len());
                c.again = used < input.len();
                (&t.out, used)
            }
        };
        // --delay/--stall: a reply not due yet (or behind one that is not) waits.
        let mut now_due = true;
        if t.pacing.active() && !to_write.is_empty() {
            let now = Instant::now();
            let epoch = t.pacing.epoch;
            let x = c.extra.get_or_insert_with(Default::default);
            let h = x.held.get_or_insert_with(|| {
                Held::new(now.duration_since(epoch).as_nanos() as u64 ^ n as u64)
            });
            let mut due = t.pacing.due(now, &mut h.rng);
            if let Some(last) = h.last_due() {
                due = due.max(last);
            }
            if due > now || h.holding() {
                h.push(due, to_write);
                now_due = false;
                if let Some(first) = h.next_due() {
                    if h.armed != Some(first) {
                        h.armed = Some(first);
                        arm_at(&mut t.timers, &t.clock, first, tok);
                    }
                }
            }
        }
        if now_due && !to_write.is_empty() {
            let tls = c.extra.as_mut().and_then(|x| x.tls.as_deref_mut());
            let written = match send(fd, tls, to_write) {
                Ok(w) => w,
                Err(k) => return Some(Closed::Error(k)),
            };
            bump(&t.counters.bytes_out, written as u64);
            if written < to_write.len() {
                let x = c.extra.get_or_insert_with(Default::default);
                x.pending.extend_from_slice(&to_write[written..]);
            }
        }
        // Keep the unconsumed part of the input for the next read.
        if carry.is_empty() {
            if used < n {
                carry.extend_from_slice(&t.read[used..n]);
            }
        } else if used >= carry.len() {
            carry = Vec::new();
        } else {
            carry.drain(..used);
        }
        let kept = carry.len();
        if !carry.is_empty() {
            c.extra().carry = carry;
        }
        if t.heads {
            c.head_since = if !c.session.in_head(kept) {
                NO_TICK
            } else if c.head_since == NO_TICK {
                t.tick
            } else {
                c.head_since
            };
        }
        arm_wake(tok, c, t);

        rounds += 1;
        if rounds >= FAIRNESS_ROUNDS {
            t.ready.push(split(tok));
            return None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_idle_connection_is_a_few_words() {
        // The user-space cost of an idle connection is its slab entry: this, plus the
        // slot's generation. The goal is <= 256 bytes per idle connection, measured.
        let echo = std::mem::size_of::<Conn<crate::proto::echo::server::EchoSession>>();
        let http = std::mem::size_of::<Conn<crate::proto::http::server::HttpHandler>>();
        eprintln!("Conn<echo> {echo} bytes, Conn<http> {http} bytes");
        assert_eq!(echo, 32);
        // HTTP keeps an unfinished request's parse state inline (~160 bytes).
        assert!(http <= 192, "{http}");
    }
}
