//! Server counters: one set per server thread, written by that thread only and read
//! by the stats printer. Single-writer updates are a plain load and store, no lock.

use crate::stats::{EventLoop, LoopCounts};
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering::Relaxed};

#[derive(Default)]
#[repr(align(128))]
pub struct ThreadCounters {
    pub accepts: AtomicU64,
    pub closes: AtomicU64,
    pub reads: AtomicU64,
    pub bytes_in: AtomicU64,
    pub bytes_out: AtomicU64,
    /// Connections closed at once because the thread was at `--max-conns-per-thread`.
    pub rejected: AtomicU64,
    pub tls_failures: AtomicU64,
    /// Requests answered, for protocols that have requests (HTTP).
    pub requests: AtomicU64,
    /// Connections closed because a request head did not arrive within --header-timeout.
    pub header_timeouts: AtomicU64,
    /// Connections closed after --idle-timeout without a byte in or out.
    pub idle_timeouts: AtomicU64,
    /// Times a connection stopped being read because the replies --delay/--stall held
    /// back reached their cap (`held::MAX_HELD_BYTES`).
    pub held_full: AtomicU64,
    /// Connections closed because the peer went past a documented cap (`Reply::TooLarge`).
    pub too_large: AtomicU64,
    /// The loop this thread runs on, set once before it starts (`ran_on`): 0 not yet,
    /// else `LOOP_EPOLL` or `LOOP_IO_URING`.
    pub event_loop: AtomicU8,
}

const LOOP_EPOLL: u8 = 1;
const LOOP_IO_URING: u8 = 2;

impl ThreadCounters {
    /// Notes the loop this thread runs on (once, before its loop starts).
    pub fn ran_on(&self, l: EventLoop) {
        let v = match l {
            EventLoop::Epoll => LOOP_EPOLL,
            EventLoop::IoUring => LOOP_IO_URING,
        };
        self.event_loop.store(v, Relaxed);
    }

    fn event_loop(&self) -> Option<EventLoop> {
        match self.event_loop.load(Relaxed) {
            LOOP_EPOLL => Some(EventLoop::Epoll),
            LOOP_IO_URING => Some(EventLoop::IoUring),
            _ => None,
        }
    }
}

/// Adds to a counter that only the calling thread writes.
#[inline]
pub fn bump(c: &AtomicU64, n: u64) {
    c.store(c.load(Relaxed).wrapping_add(n), Relaxed);
}

/// The per-request counts of one loop turn, added to the thread's counters once at
/// its end (`add_to`), not once a request.
#[derive(Default)]
pub struct TurnCounts {
    pub reads: u64,
    pub bytes_in: u64,
    pub bytes_out: u64,
    pub requests: u64,
}

impl TurnCounts {
    pub fn add_to(&mut self, c: &ThreadCounters) {
        let t = std::mem::take(self);
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
}

#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct ServerTotals {
    pub accepts: u64,
    pub closes: u64,
    pub active: u64,
    pub reads: u64,
    pub bytes_in: u64,
    pub bytes_out: u64,
    pub rejected: u64,
    pub tls_failures: u64,
    /// Requests answered (protocols with requests; 0 for byte echo).
    #[serde(default)]
    pub requests: u64,
    #[serde(default)]
    pub header_timeouts: u64,
    #[serde(default)]
    pub idle_timeouts: u64,
    #[serde(default)]
    pub held_full: u64,
    /// Connections closed because the peer went past a documented cap (a request head
    /// or body too large): a fault of the peer, counted, never buffered.
    #[serde(default)]
    pub too_large: u64,
    /// Server threads per event loop (io_uring or epoll).
    #[serde(default)]
    pub event_loop: LoopCounts,
}

impl ServerTotals {
    pub fn sum(threads: &[std::sync::Arc<ThreadCounters>]) -> Self {
        let mut t = ServerTotals::default();
        for c in threads {
            t.accepts += c.accepts.load(Relaxed);
            t.closes += c.closes.load(Relaxed);
            t.reads += c.reads.load(Relaxed);
            t.bytes_in += c.bytes_in.load(Relaxed);
            t.bytes_out += c.bytes_out.load(Relaxed);
            t.rejected += c.rejected.load(Relaxed);
            t.tls_failures += c.tls_failures.load(Relaxed);
            t.requests += c.requests.load(Relaxed);
            t.header_timeouts += c.header_timeouts.load(Relaxed);
            t.idle_timeouts += c.idle_timeouts.load(Relaxed);
            t.held_full += c.held_full.load(Relaxed);
            t.too_large += c.too_large.load(Relaxed);
            if let Some(l) = c.event_loop() {
                t.event_loop.count(l);
            }
        }
        t.active = t.accepts.saturating_sub(t.closes);
        t
    }

    /// The change since `earlier` (active and the loops stay as now).
    pub fn since(&self, earlier: &ServerTotals) -> ServerTotals {
        ServerTotals {
            accepts: self.accepts - earlier.accepts,
            closes: self.closes - earlier.closes,
            active: self.active,
            reads: self.reads - earlier.reads,
            bytes_in: self.bytes_in - earlier.bytes_in,
            bytes_out: self.bytes_out - earlier.bytes_out,
            rejected: self.rejected - earlier.rejected,
            tls_failures: self.tls_failures - earlier.tls_failures,
            requests: self.requests - earlier.requests,
            header_timeouts: self.header_timeouts - earlier.header_timeouts,
            idle_timeouts: self.idle_timeouts - earlier.idle_timeouts,
            held_full: self.held_full - earlier.held_full,
            too_large: self.too_large - earlier.too_large,
            event_loop: self.event_loop,
        }
    }
}
