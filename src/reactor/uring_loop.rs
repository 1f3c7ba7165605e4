//! The loop on io_uring, under the load engine (the default for plain TCP closed-loop
//! plans; `WIREBENCH_LOAD_LOOP=epoll` keeps every worker on epoll) and the server (the
//! default for plain TCP; `WIREBENCH_SERVER_LOOP=epoll`). The same turn as
//! `Reactor::run` (the handler's timers, ready list, turn-end flush, stop signal,
//! measured CPU time and `after_wake`), but its wait is one `io_uring_enter` that
//! submits the turn's sends and receive arms and waits for the next completion or
//! deadline, and what it hands the handler are completions, not readiness: a receive's
//! bytes (straight from a provided buffer, given back once the handler returns), a
//! send's count, and the completions of the handler's own requests (a connecting
//! socket's poll, a listener's accept).
//!
//! Why a second core and not an `EpollHandler` of `Reactor::run`: completions carry
//! data and own buffers; readiness does not. Why io_uring at all: the epoll loop makes
//! one `recvfrom` and one `sendto` per request and one `epoll_pwait2` per turn; here a
//! turn is one system call whatever its number of connections (SINGLE_ISSUER +
//! DEFER_TASKRUN: completions are made in this thread, inside that call). The clock is
//! read once a turn, right after that call: the turn's work is short against the
//! deadlines it serves (ticks, timeouts, snapshots).
//!
//! Imports no engine or server type: what a slot is stays the handler's
//! (`UringHandler`).

use super::handler::Handler;
use super::token::split;
use super::turn::{Stop, Turn};
use super::uring::BufRing;
use crate::clock::Clock;
use io_uring::{cqueue, opcode, squeue, types, IoUring};
use std::time::Duration;

pub use super::uring::{KIND_SHIFT, TOKEN_MASK};
/// The loop's own completions: those nobody waits for (a cancel's, a shutdown's, a
/// close's) and the stop eventfd's read (`STOP_READ`).
pub const IGNORE: u64 = 0;
/// A multishot receive of a slot's socket.
pub const RECV: u64 = 1;
/// A send from a slot's send buffer.
pub const SEND: u64 = 2;
/// The handler's own requests (`UringHandler::on_own`): the load engine's connect
/// polls (by slot token), the server's accepts (by listener).
pub const OWN: u64 = 3;
/// Generations in a user_data token keep 30 bits (the kind takes the top two).
pub const GEN_MASK: u32 = (1 << 30) - 1;
/// The user_data of the read of a `Stop::Fd` eventfd.
const STOP_READ: u64 = TOKEN_MASK;

/// The buffer group of the provided receive buffers.
pub const BGID: u16 = 0;
/// Submission entries (a full queue is submitted on the way, no entry is lost) and
/// completion entries.
const ENTRIES: u32 = 1024;
const CQ_ENTRIES: u32 = 8 * ENTRIES;

/// user_data of kind `kind` for slot `slot`, generation `gen`.
#[inline]
pub fn user_data(kind: u64, slot: u32, gen: u32) -> u64 {
    super::uring::user_data(kind, super::token::token(slot, gen & GEN_MASK))
}

/// What a handler does with completions, beside what every handler does.
pub trait UringHandler: Handler {
    /// Where the handler's slots queue their submissions for the next enter.
    fn sqes(&mut self) -> &mut Vec<squeue::Entry>;
    /// Right after a wait returns, before its completions: `now` is the turn's clock
    /// reading (the one `after_wake` gets too).
    fn woke(&mut self, _now: u64) {}
    /// A receive of (slot, gen): `res` bytes in `data` (`res` <= 0: end of stream, or
    /// -errno); `more`: the multishot receive stays armed.
    fn on_recv(&mut self, slot: u32, gen: u32, res: i32, data: &[u8], more: bool);
    /// A send of (slot, gen) took `res` bytes (or failed: -errno).
    fn on_sent(&mut self, slot: u32, gen: u32, res: i32);
    /// A completion of the handler's own kind (`OWN`): `what` is the user_data below
    /// the kind, as the handler made it.
    fn on_own(&mut self, what: u64, res: i32, flags: u32);
}

/// Whether the load engine may run on io_uring: unless `WIREBENCH_LOAD_LOOP=epoll`
/// (measured ahead of epoll in 9 of 12 medians,
/// BENCHMARKS.md#design-choices-and-the-measurements-behind-them). The worker still
/// falls back to epoll, silently, when this kernel gives no ring with a single issuer
/// and deferred task work (6.1+; refused by a sysctl or seccomp).
pub fn wanted() -> bool {
    std::env::var("WIREBENCH_LOAD_LOOP").map_or(true, |v| v != "epoll")
}

impl Drop for UringReactor {
    /// Requests still in flight let go of their sockets before the ring closes.
    fn drop(&mut self) {
        super::uring::cancel_all(&mut self.ring);
    }
}

pub struct UringReactor {
    // Dropped before `bufs`: the kernel lets go of the buffers with the ring.
    ring: IoUring,
    bufs: BufRing,
    clock: Clock,
    /// This turn's completions (user_data, result, flags), copied out of the ring so the
    /// handler can queue submissions while they are served.
    cqes: Vec<(u64, i32, u32)>,
    /// What the turn does around its wait, as on epoll.
    turn: Turn,
    /// Where a `Stop::Fd` read puts its count (boxed: the kernel writes there while the
    /// reactor moves), and whether that read is with the kernel.
    stop_buf: Box<[u8; 8]>,
    stop_armed: bool,
}

impl UringReactor {
    /// A ring for this thread with `buffers` (a power of two) provided receive buffers
    /// of `buffer_size` bytes, waking at least every `coarse`; or the reason there is
    /// none (the caller stays on epoll).
    pub fn new(
        clock: Clock,
        coarse: Duration,
        stop: Stop,
        buffers: u16,
        buffer_size: usize,
    ) -> std::io::Result<Self> {
        let ring = IoUring::builder()
            .setup_single_issuer()
            .setup_defer_taskrun()
            .setup_cqsize(CQ_ENTRIES)
            .build(ENTRIES)?;
        let bufs = BufRing::new(&ring, buffers, buffer_size, BGID)?;
        Ok(UringReactor {
            ring,
            bufs,
            clock,
            cqes: Vec::with_capacity(CQ_ENTRIES as usize),
            turn: Turn::new(coarse.as_nanos() as u64, stop),
            stop_buf: Box::new([0; 8]),
            stop_armed: false,
        })
    }

    /// A sparse table of `n` direct descriptors (for accepts into the ring's table).
    pub fn register_files_sparse(&self, n: u32) -> std::io::Result<()> {
        self.ring.submitter().register_files_sparse(n)
    }

    /// The loop's clock (its turns' readings, `woke` and `after_wake`, are on it).
    pub fn clock(&self) -> Clock {
        self.clock
    }

    pub fn measure_cpu_from(&mut self, at: u64) {
        self.turn.cpu.start_at(at);
    }

    pub fn cpu_measured(&self) -> Duration {
        self.turn.cpu.measured()
    }

    /// Ends every request still with the kernel and waits until they are gone (their
    /// sockets let go): before a server closes its connections at shutdown.
    pub fn cancel_all(&mut self) {
        super::uring::cancel_all(&mut self.ring);
    }

    /// Submits what the handler has queued (and the stop read), without waiting: a
    /// server says it is ready once its accepts are with the kernel.
    pub fn submit<H: UringHandler>(&mut self, h: &mut H) -> std::io::Result<()> {
        self.push(h.sqes())?;
        self.ring.submit().map(drop)
    }

    /// Moves the handler's queued submissions into the ring (submitting on the way
    /// when it is full), and the stop eventfd's read once.
    fn push(&mut self, sqes: &mut Vec<squeue::Entry>) -> std::io::Result<()> {
        if let (Stop::Fd(fd), false) = (self.turn.stop(), self.stop_armed) {
            self.stop_armed = true;
            sqes.push(
                opcode::Read::new(types::Fd(*fd), self.stop_buf.as_mut_ptr(), 8)
                    .build()
                    .user_data(super::uring::user_data(IGNORE, STOP_READ)),
            );
        }
        let mut at = 0;
        while at < sqes.len() {
            // SAFETY: every entry's buffers outlive its completion: a send's buffer is
            // its slot's and kept until the send completes, receive buffers are the
            // ring's, the stop read's is boxed in the reactor (cancelled with the ring),
            // polls, accepts and cancels carry none.
            let pushed = unsafe {
                let mut sq = self.ring.submission();
                let mut n = 0;
                for e in &sqes[at..] {
                    if sq.push(e).is_err() {
                        break;
                    }
                    n += 1;
                }
                n
            };
            at += pushed;
            if at < sqes.len() {
                self.ring.submit()?;
            }
        }
        sqes.clear();
        Ok(())
    }

    /// The turn's wait, its completions taken into `cqes`. Without a nap, one enter:
    /// it submits the turn's sends and arms, runs the deferred task work (the
    /// completions), and sleeps only when there is none. With one: an enter that does
    /// not sleep; if it brought nothing but sends that went whole, the nap (`nap.rs`)
    /// and another such enter; and only if nothing at all has come, the wait for what
    /// is left of the timeout. A send's completion may free bytes queued behind it
    /// (`UringSlots`): it waits at most the nap, never a blocking wait.
    fn wait(&mut self, timeout: u64, nap: u64) -> std::io::Result<()> {
        if nap == 0 {
            super::uring::enter_for(&self.ring, Duration::from_nanos(timeout))?;
            self.take_completions();
            return Ok(());
        }
        super::uring::enter_for(&self.ring, Duration::ZERO)?;
        self.take_completions();
        if self.something_to_do() {
            return Ok(());
        }
        super::nap::nap(nap);
        super::uring::enter_for(&self.ring, Duration::ZERO)?;
        self.take_completions();
        if !self.cqes.is_empty() {
            return Ok(());
        }
        super::uring::enter_for(&self.ring, Duration::from_nanos(timeout - nap))?;
        self.take_completions();
        Ok(())
    }

    fn take_completions(&mut self) {
        self.cqes.extend(
            self.ring
                .completion()
                .map(|c| (c.user_data(), c.result(), c.flags())),
        );
    }

    /// A completion besides a whole send's: bytes received, a failed send, a
    /// handler's own, a stop.
    fn something_to_do(&self) -> bool {
        self.cqes
            .iter()
            .any(|&(ud, res, _)| ud >> KIND_SHIFT != SEND || res < 0)
    }

    /// Runs until the handler ends the loop (`after_wake` says `None`, or `on_stop`
    /// says true).
    pub fn run<H: UringHandler>(&mut self, h: &mut H) -> std::io::Result<()> {
        let mut now = self.clock.now_ns();
        let Some(mut next) = h.after_wake(now) else {
            return Ok(());
        };
        loop {
            // `now` is the last turn's reading: the deadlines are coarse against a
            // turn's work, and a late one is served at the next wake-up (one turn's
            // work late at most).
            let timeout = self.turn.timeout(h, next, now);
            self.push(h.sqes())?;
            self.cqes.clear();
            self.wait(timeout, super::nap::nap_before(h, timeout))?;
            now = self.clock.now_ns();
            if let Some(p) = h.pending() {
                p.start();
            }
            h.woke(now);
            let mut gave = false;
            let mut stop = false;
            for &(ud, res, flags) in &self.cqes {
                let what = ud & TOKEN_MASK;
                match ud >> KIND_SHIFT {
                    RECV => {
                        let (slot, gen) = split(what);
                        let bid = cqueue::buffer_select(flags);
                        let data = match bid {
                            Some(b) if res > 0 => self.bufs.data(b, res as usize),
                            _ => &[],
                        };
                        h.on_recv(slot, gen, res, data, cqueue::more(flags));
                        if let Some(b) = bid {
                            self.bufs.give(b);
                            gave = true;
                        }
                    }
                    SEND => {
                        let (slot, gen) = split(what);
                        h.on_sent(slot, gen, res);
                    }
                    OWN => h.on_own(what, res, flags),
                    _ => stop |= what == STOP_READ && self.stop_armed,
                }
            }
            if gave {
                self.bufs.publish();
            }
            match self.turn.end(h, || now, stop) {
                Some(n) => next = n,
                None => return Ok(()),
            }
        }
    }
}
