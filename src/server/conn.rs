//! One server connection, the same on both cores: its slab entry, and what only some
//! connections need some of the time (`Extra`: an unfinished request, reply bytes the
//! kernel has not taken, the io_uring send in flight, held replies, a TLS session, a
//! wake-up, the peer address for --debug), taken from the thread's pool when needed
//! and given back once drained, so an idle connection owns no buffer and a busy one
//! allocates nothing per request. How a connection is driven is `driver.rs`.

use super::counters::TurnCounts;
use super::held::Held;
use super::session::ServerSession;
use super::timeouts::NO_TICK;
use rustls::ServerConnection;
use std::net::SocketAddr;

/// One connection's slab entry. Flat, so an echo connection is 32 bytes: which flags
/// a core uses is said by each.
pub struct Conn<S> {
    pub fd: i32,
    /// Tick of the last byte in or out (idle timeout).
    pub last_active: u32,
    /// Tick the request head now arriving started at (NO_TICK: not in a head).
    pub head_since: u32,
    /// epoll: the socket may have bytes to read (edge-triggered: set by an event,
    /// cleared once a read finds it empty).
    pub readable: bool,
    /// epoll: the peer's FIN (or an error) was reported, so a short read no longer
    /// means the socket is done.
    pub hup: bool,
    /// io_uring: the multishot receive is armed.
    pub receiving: bool,
    /// io_uring: a SEND from `Extra::send` is with the kernel.
    pub sending: bool,
    /// Not read until what it owes is out (backpressure; io_uring: receive cancelled).
    pub paused: bool,
    /// `carry` holds input the session has not seen (after `Reply::More`, or bytes
    /// that came while paused): the session goes on with it before anything is read.
    pub again: bool,
    /// The connection ends once what it owes is out (the session or the peer ended it).
    pub closing: bool,
    /// The peer is done sending.
    pub eof: bool,
    /// Closed: waiting for its operations in flight to finish before close(2) (io_uring).
    pub ending: bool,
    /// Sweeps that found a timeout passed while the socket held input the core had not
    /// reported yet (`thread::check_deadlines` waits for it, within bounds).
    pub lagging: u8,
    pub session: S,
    pub extra: Option<Box<Extra>>,
}

/// What only some connections need, some of the time.
#[derive(Default)]
pub struct Extra {
    /// Input received but not consumed by the session (a partial request).
    pub carry: Vec<u8>,
    /// Reply bytes not handed to the kernel yet, from `owed_at` on.
    pub owed: Vec<u8>,
    pub owed_at: usize,
    /// io_uring: the bytes of the SEND in flight, and how many of them the kernel took.
    pub send: Vec<u8>,
    pub send_at: usize,
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
    #[inline]
    pub fn holding(&self) -> bool {
        self.held.as_ref().is_some_and(|h| h.holding())
    }

    #[inline]
    pub fn owes(&self) -> bool {
        self.owed_at < self.owed.len()
    }

    /// Everything owed went out: the buffer is emptied (its room kept, unless large).
    pub fn owed_out(&mut self) {
        empty(&mut self.owed);
        self.owed_at = 0;
    }
}

/// Room a pooled buffer keeps: a larger one is freed, so a burst of large replies
/// does not stay in the pool.
const KEEP_BYTES: usize = 64 * 1024;

fn empty(v: &mut Vec<u8>) {
    if v.capacity() > KEEP_BYTES {
        *v = Vec::new();
    } else {
        v.clear();
    }
}

/// The `Extra`s given back by a thread's connections, for the next that needs one.
/// It never holds more than were out at once (the peak of busy connections), each
/// with at most `KEEP_BYTES` of room per buffer.
#[derive(Default)]
pub struct ExtraPool {
    // Boxes: a connection holds its `Extra` by pointer (8 bytes in the slab), and the
    // io_uring send in flight points into it, so it must not move.
    #[allow(clippy::vec_box)]
    free: Vec<Box<Extra>>,
}

impl ExtraPool {
    #[inline]
    fn take(&mut self) -> Box<Extra> {
        self.free.pop().unwrap_or_default()
    }

    /// Takes back a connection's `Extra`, cleared.
    pub fn give(&mut self, mut x: Box<Extra>) {
        empty(&mut x.carry);
        x.owed_out();
        empty(&mut x.send);
        x.send_at = 0;
        x.held = None;
        x.tls = None;
        x.wake_at = None;
        x.peer = None;
        self.free.push(x);
    }
}

/// What the thread's connections share for their bytes: the pool of `Extra`s, the
/// turn's counts, the coarse tick.
#[derive(Default)]
pub struct Io {
    pub extras: ExtraPool,
    pub turn: TurnCounts,
    /// The thread's coarse clock (`timeouts::Ticker`), as of this turn.
    pub tick: u32,
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
            receiving: false,
            sending: false,
            paused: false,
            again: false,
            closing: false,
            eof: false,
            ending: false,
            lagging: 0,
            session,
            extra: None,
        }
    }
}

impl<S> Conn<S> {
    /// Its `Extra`, taken from the pool if it has none.
    #[inline]
    pub fn extra(&mut self, pool: &mut ExtraPool) -> &mut Extra {
        self.extra.get_or_insert_with(|| pool.take())
    }

    /// Gives its `Extra` back when nothing in it is needed any more.
    pub fn release_if_spare(&mut self, pool: &mut ExtraPool) {
        let spare = self.extra.as_ref().is_some_and(|x| {
            x.carry.is_empty()
                && !x.owes()
                && !self.sending
                && x.held.is_none()
                && x.tls.is_none()
                && x.wake_at.is_none()
                && x.peer.is_none()
        });
        if spare {
            if let Some(x) = self.extra.take() {
                pool.give(x);
            }
        }
    }

    /// Nothing owed, in flight or held back: a closing connection may close.
    pub fn quiet(&self) -> bool {
        !self.sending
            && self
                .extra
                .as_ref()
                .map_or(true, |x| !x.owes() && !x.holding())
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_idle_connection_is_a_few_words() {
        // The user-space cost of an idle connection is its slab entry: this, plus the
        // slot's generation. The goal is <= 256 bytes per idle connection, measured.
        let echo = std::mem::size_of::<Conn<crate::proto::echo::server::EchoSession>>();
        let http = std::mem::size_of::<Conn<crate::proto::http::serve_session::HttpSession>>();
        eprintln!("Conn<echo> {echo} bytes, Conn<http> {http} bytes");
        assert_eq!(echo, 32);
        // HTTP keeps an unfinished request's parse state inline (~160 bytes).
        assert!(http <= 192, "{http}");
    }
}
