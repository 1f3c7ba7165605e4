//! How a server connection is driven, on either core: the one place a session's bytes
//! go in and its `Reply` is carried out, held replies (--delay/--stall) go out when
//! due, wake-ups (`next_wake`/`on_wake`) are armed and run, request heads are timed,
//! and backpressure stops reading a connection that owes its peer too much. What a
//! core adds (how bytes are read and handed to the kernel, how reading stops and
//! resumes, how a connection ends) is `Core`: `epoll.rs` (readiness: reads and writes
//! now) and `uring.rs` (completions: receives into provided buffers, one SEND in
//! flight per connection).

use super::conn::{Conn, Io};
use super::counters::{bump, ThreadCounters};
use super::held::Held;
use super::pacing::Pacing;
use super::session::{Reply, ServerSession};
use super::timeouts::NO_TICK;
use crate::clock::Clock;
use crate::reactor::transport::Input;
use crate::reactor::{split, Timers};
use std::io::ErrorKind;
use std::os::fd::OwnedFd;
use std::sync::Arc;
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

/// Rounds (input, reply) one connection makes before the others get a turn.
const FAIRNESS_ROUNDS: u32 = 16;

/// What a thread's connections share while one of them is driven.
pub struct Ctx<G> {
    /// epoll: every read lands here (--read-buffer bytes, one per thread).
    pub read: Vec<u8>,
    /// Sessions append replies here; cleared before each call.
    pub out: Vec<u8>,
    pub figures: G,
    /// `figures` changed since they were last published.
    pub dirty: bool,
    pub io: Io,
    pub counters: Arc<ThreadCounters>,
    pub pacing: Pacing,
    /// Held replies and session wake-ups (the reactor's heap, ns on `clock`). Stale
    /// entries (the connection closed, the time moved) are skipped when they fire.
    pub timers: Timers,
    /// Connections that yielded (`FAIRNESS_ROUNDS`) and are driven again before the
    /// next wait: (slot, generation).
    pub ready: Vec<(u32, u32)>,
    /// The thread's clock; its time zero is the pacing epoch, so sessions' wake-up
    /// times are timer times as they are.
    pub clock: Clock,
    /// Head timeouts are on: track when heads start.
    pub heads: bool,
}

/// What a core hands the driver with a connection.
pub enum Got<'a> {
    /// Nothing new: the connection goes as far as it can (reading, if its core reads).
    Nothing,
    /// Bytes a receive completion brought.
    Data(&'a [u8]),
    /// The peer is done sending.
    Eof,
    Failed(ErrorKind),
}

/// Reply bytes for a core to send: the thread's output buffer (a core that keeps the
/// bytes until the kernel is done may take the buffer itself) or input bytes the
/// session reflects.
pub enum Bytes<'a> {
    Out(&'a mut Vec<u8>),
    Slice(&'a [u8]),
}

impl Bytes<'_> {
    #[inline]
    pub fn as_slice(&self) -> &[u8] {
        match self {
            Bytes::Out(v) => v,
            Bytes::Slice(s) => s,
        }
    }
}

/// What a core adds to the driver: how bytes move, how reading stops and resumes, how
/// a connection ends, how listeners resume.
pub trait Core {
    /// Reads what the socket holds into `buf`. A completion core has nothing to read
    /// (its bytes come as `Got::Data`): `WouldBlock`.
    fn read<S>(&mut self, c: &mut Conn<S>, buf: &mut [u8]) -> Input;
    /// Hands reply bytes to the kernel, or queues them behind what the connection owes.
    fn send<S>(
        &mut self,
        tok: u64,
        c: &mut Conn<S>,
        b: Bytes<'_>,
        io: &mut Io,
    ) -> Result<(), ErrorKind>;
    /// Moves what the connection owes on, as far as the kernel takes it now.
    fn flush<S>(&mut self, tok: u64, c: &mut Conn<S>, io: &mut Io) -> Result<(), ErrorKind>;
    /// The connection owes so much that it is not read until some is out.
    fn full<S>(&self, c: &Conn<S>) -> bool;
    /// Stop reading the connection (backpressure), and read it again.
    fn pause<S>(&mut self, tok: u64, c: &mut Conn<S>);
    fn resume<S>(&mut self, tok: u64, c: &mut Conn<S>);
    /// The connection is closed: true when it may be freed now, false when the core
    /// frees it once its operations in flight are done.
    fn end<S>(&mut self, tok: u64, c: &mut Conn<S>) -> bool;
    fn close_fd(&mut self, fd: i32);
    /// Asked when a timeout is about to close the connection: whether its socket holds
    /// input (bytes, its end, an error) the core has not handed to the server yet.
    /// A server thread that was starved of CPU (or stopped) wakes with its clock past
    /// deadlines whose events are still queued (epoll's ready list, io_uring's
    /// completions): such a connection was not silent.
    fn unreported_input<S>(&self, c: &Conn<S>) -> bool {
        !c.paused && socket_has_input(c.fd)
    }
    /// Asks for the connection's input again (a completion core's receive that stayed
    /// silent is replaced).
    fn read_again<S>(&mut self, _tok: u64, _c: &mut Conn<S>) {}
    /// The listeners accept again after resting (accept failed for lack of descriptors).
    fn listen(&mut self, listeners: &[OwnedFd]);
}

/// Whether socket `fd` holds bytes, its peer's end or an error: a zero-wait poll,
/// which consumes nothing.
pub fn socket_has_input(fd: i32) -> bool {
    let mut p = libc::pollfd {
        fd,
        events: libc::POLLIN | libc::POLLRDHUP,
        revents: 0,
    };
    // SAFETY: one valid pollfd, its count 1, no wait.
    let n = unsafe { libc::poll(&mut p, 1, 0) };
    n > 0 && p.revents != 0
}

/// Runs a connection as far as it can go now. Some: it must be closed.
pub fn drive<S: ServerSession, K: Core>(
    tok: u64,
    c: &mut Conn<S>,
    t: &mut Ctx<S::Figures>,
    core: &mut K,
    got: Got<'_>,
) -> Option<Closed> {
    let r = run(tok, c, t, core, got);
    if r.is_none() {
        // Idle again: the memory goes back to the pool.
        c.release_if_spare(&mut t.io.extras);
    }
    r
}

/// Where the session's input comes from this round.
enum Src<'a> {
    /// The first n bytes of the thread's read buffer.
    Read(usize),
    Given(&'a [u8]),
    /// Only what is left in `carry`.
    Carry,
}

fn run<S: ServerSession, K: Core>(
    tok: u64,
    c: &mut Conn<S>,
    t: &mut Ctx<S::Figures>,
    core: &mut K,
    mut got: Got<'_>,
) -> Option<Closed> {
    match std::mem::replace(&mut got, Got::Nothing) {
        Got::Eof => ended(c, t),
        Got::Failed(k) => return Some(failed(c, t, k)),
        g => got = g,
    }
    let mut rounds = 0;
    loop {
        // What is owed goes first, and past what the core allows nothing is read.
        if let Err(k) = core.flush(tok, c, &mut t.io) {
            return Some(Closed::Error(k));
        }
        let held_full = match release_held(tok, c, t, core) {
            Ok(full) => full,
            Err(k) => return Some(Closed::Error(k)),
        };
        if held_full || core.full(c) {
            if let Got::Data(d) = got {
                // Came before the pause took hold: the session gets it later, in order.
                c.extra(&mut t.io.extras).carry.extend_from_slice(d);
                c.again = true;
            }
            core.pause(tok, c);
            return None;
        }
        if c.closing {
            if !c.quiet() {
                return None;
            }
            return Some(if c.eof { Closed::Eof } else { Closed::Handler });
        }
        if !c.eof {
            core.resume(tok, c);
        }
        let src = match std::mem::replace(&mut got, Got::Nothing) {
            Got::Data(d) => Src::Given(d),
            _ if c.again => Src::Carry,
            _ if c.eof => {
                // Nothing more will come: the connection ends once its replies are out.
                c.closing = true;
                continue;
            }
            _ => match core.read(c, &mut t.read) {
                Input::Data { n, .. } => {
                    t.io.turn.reads += 1;
                    t.io.turn.bytes_in += n as u64;
                    c.last_active = t.io.tick;
                    Src::Read(n)
                }
                Input::WouldBlock => return None,
                Input::Eof => {
                    ended(c, t);
                    continue;
                }
                Input::Failed(k) => return Some(failed(c, t, k)),
            },
        };
        if let Err(k) = feed(tok, c, t, core, src) {
            return Some(Closed::Error(k));
        }
        rounds += 1;
        if rounds >= FAIRNESS_ROUNDS {
            t.ready.push(split(tok));
            return None;
        }
    }
}

/// The peer is done sending (a TLS handshake cut short counts as a failure).
fn ended<S, G>(c: &mut Conn<S>, t: &Ctx<G>) {
    if c.handshaking_since().is_some() {
        bump(&t.counters.tls_failures, 1);
    }
    c.eof = true;
    c.readable = false;
}

fn failed<S, G>(c: &Conn<S>, t: &Ctx<G>, k: ErrorKind) -> Closed {
    if c.handshaking_since().is_some() {
        bump(&t.counters.tls_failures, 1);
    }
    Closed::Error(k)
}

/// One call of the session on its input (`carry` first, then what `src` brought):
/// its `Reply` carried out, the rest kept, its head timed, its wake-up armed.
fn feed<S: ServerSession, K: Core>(
    tok: u64,
    c: &mut Conn<S>,
    t: &mut Ctx<S::Figures>,
    core: &mut K,
    src: Src<'_>,
) -> Result<(), ErrorKind> {
    let Ctx {
        read,
        out,
        figures,
        dirty,
        io,
        counters,
        pacing,
        timers,
        clock,
        heads,
        ..
    } = t;
    let fresh: &[u8] = match src {
        Src::Read(n) => &read[..n],
        Src::Given(d) => d,
        Src::Carry => &[],
    };
    c.again = false;
    let mut carry = match c.extra.as_deref_mut() {
        Some(x) => std::mem::take(&mut x.carry),
        None => Vec::new(),
    };
    if !carry.is_empty() {
        carry.extend_from_slice(fresh);
    }
    let input: &[u8] = if carry.is_empty() { fresh } else { &carry };
    out.clear();
    let reply = c.session.on_bytes(input, out, figures);
    *dirty = true;
    io.turn.requests += c.session.take_requests();
    let (used, reflect) = what_it_asks(c, reply, input.len(), counters);
    let bytes = if reflect {
        Bytes::Slice(&input[..used])
    } else {
        Bytes::Out(out)
    };
    let reply = bytes.as_slice();
    let empty = reply.is_empty();
    let held = !empty && pacing.active() && hold(tok, c, pacing, io, (timers, clock), reply);
    if !empty && !held {
        core.send(tok, c, bytes, io)?;
    }
    // Keep the unconsumed part of the input for the next round.
    if carry.is_empty() {
        carry.extend_from_slice(&fresh[used..]);
    } else {
        carry.drain(..used);
    }
    let kept = carry.len();
    if kept > 0 || c.extra.is_some() {
        c.extra(&mut io.extras).carry = carry;
    }
    if *heads {
        // A head's time runs from its first byte (or the accept) to its end.
        c.head_since = match (c.session.in_head(kept), c.head_since) {
            (false, _) => NO_TICK,
            (true, NO_TICK) => io.tick,
            (true, since) => since,
        };
    }
    arm_wake(tok, c, t);
    Ok(())
}

/// What a session's `Reply` on `all` input bytes asks: the bytes it used, and whether
/// its reply is those bytes themselves. A session never claims more than it was given;
/// clamped all the same, so a protocol's bug cannot become a panic that takes the
/// thread's connections.
fn what_it_asks<S>(
    c: &mut Conn<S>,
    reply: Reply,
    all: usize,
    counters: &ThreadCounters,
) -> (usize, bool) {
    match reply {
        Reply::Consumed(u) => (u.min(all), false),
        Reply::Reflect(u) => (u.min(all), true),
        Reply::Close => {
            c.closing = true;
            (all, false)
        }
        Reply::TooLarge => {
            bump(&counters.too_large, 1);
            c.closing = true;
            (all, false)
        }
        Reply::More(u) => {
            // Called again before reading more, with the rest of the input or with
            // none: a session with replies left to make (an HTTP/2 stream's body past
            // one batch) makes them before the peer's next bytes.
            c.again = true;
            (u.min(all), false)
        }
    }
}

/// --delay/--stall: a reply not due yet (or behind one that is not) is held back
/// (copied); true when it was.
fn hold<S>(
    tok: u64,
    c: &mut Conn<S>,
    pacing: &Pacing,
    io: &mut Io,
    (timers, clock): (&mut Timers, &Clock),
    reply: &[u8],
) -> bool {
    let now = Instant::now();
    let x = c.extra(&mut io.extras);
    let h = x.held.get_or_insert_with(|| {
        Held::new(now.duration_since(pacing.epoch).as_nanos() as u64 ^ reply.len() as u64)
    });
    let mut due = pacing.due(now, &mut h.rng);
    if let Some(last) = h.last_due() {
        due = due.max(last);
    }
    if due <= now && !h.holding() {
        return false;
    }
    h.push(due, reply);
    arm_held(tok, h, timers, clock);
    true
}

/// Wakes connection `tok` when its first held reply is due, if not armed for it yet.
fn arm_held(tok: u64, h: &mut Held, timers: &mut Timers, clock: &Clock) {
    if let Some(first) = h.next_due() {
        if h.armed != Some(first) {
            h.armed = Some(first);
            let (slot, gen) = split(tok);
            timers.arm(clock.ns_of(first), slot, gen);
        }
    }
}

/// Sends the held replies that are due, in order, while the core takes them. Ok(true):
/// the connection holds as much as it may (`held_full`), so it is not read.
fn release_held<S, G, K: Core>(
    tok: u64,
    c: &mut Conn<S>,
    t: &mut Ctx<G>,
    core: &mut K,
) -> Result<bool, ErrorKind> {
    let Some(mut h) = c
        .extra
        .as_mut()
        .filter(|x| x.holding())
        .and_then(|x| x.held.take())
    else {
        return Ok(false);
    };
    let now = Instant::now();
    let mut sent = Ok(());
    while let Some(data) = h.due(now) {
        sent = core.send(tok, c, Bytes::Slice(data), &mut t.io);
        h.pop();
        if sent.is_err() || core.full(c) {
            break;
        }
    }
    arm_held(tok, &mut h, &mut t.timers, &t.clock);
    let full = h.over_cap();
    if full && !h.full {
        h.full = true;
        bump(&t.counters.held_full, 1);
    }
    c.extra(&mut t.io.extras).held = Some(h);
    sent.map(|()| full)
}

/// Asks the session when it wants waking and arms a timer if that changed.
pub fn arm_wake<S: ServerSession>(tok: u64, c: &mut Conn<S>, t: &mut Ctx<S::Figures>) {
    let want = c.session.next_wake();
    let had = c.extra.as_ref().and_then(|x| x.wake_at);
    if want == had {
        return;
    }
    c.extra(&mut t.io.extras).wake_at = want;
    if let Some(ns) = want {
        let (slot, gen) = split(tok);
        t.timers.arm(ns, slot, gen);
    }
}

/// A timer fired for this connection (`now_ns` on the sessions' clock): a session
/// wake-up that is due runs (what it makes goes out after any replies owed), then
/// the connection is driven (held replies that are due go out).
pub fn on_timer<S: ServerSession, K: Core>(
    tok: u64,
    c: &mut Conn<S>,
    t: &mut Ctx<S::Figures>,
    core: &mut K,
    now_ns: u64,
) -> Option<Closed> {
    if let Some(h) = c.extra.as_mut().and_then(|x| x.held.as_mut()) {
        // Re-armed by the next release.
        h.armed = None;
    }
    let due = c.extra.as_ref().and_then(|x| x.wake_at);
    if due.is_some_and(|ns| ns <= now_ns) && !c.closing {
        c.extra(&mut t.io.extras).wake_at = None;
        t.out.clear();
        c.session.on_wake(now_ns, &mut t.out, &mut t.figures);
        t.dirty = true;
        if c.session.ends() {
            // Its last words (an HTTP/2 GOAWAY) go out, then the connection closes.
            c.closing = true;
        }
        if !t.out.is_empty() {
            if let Err(k) = core.send(tok, c, Bytes::Out(&mut t.out), &mut t.io) {
                return Some(Closed::Error(k));
            }
        }
        arm_wake(tok, c, t);
    }
    drive(tok, c, t, core, Got::Nothing)
}
