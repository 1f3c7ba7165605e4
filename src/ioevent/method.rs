//! The libev benchmark method, independent of the event loop: N socketpairs, A active
//! pairs that get one byte each, and a read callback that reads its byte and, while
//! writes remain, writes one byte to the next pair. An iteration ends when every byte
//! that was fired has been read (reads == fired == A + W).

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::time::Instant;

/// What one iteration asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    pub pairs: usize,
    pub active: usize,
    pub writes: u64,
}

/// N AF_UNIX stream socketpairs, both ends non-blocking; index i reads on `rx(i)`.
pub struct Pairs {
    ends: Vec<(OwnedFd, OwnedFd)>,
}

impl Pairs {
    pub fn new(n: usize) -> std::io::Result<Pairs> {
        let mut ends = Vec::with_capacity(n);
        for _ in 0..n {
            let mut fds = [0 as libc::c_int; 2];
            // SAFETY: fds is a valid array of two ints for socketpair to fill.
            let rc = unsafe {
                libc::socketpair(
                    libc::AF_UNIX,
                    libc::SOCK_STREAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
                    0,
                    fds.as_mut_ptr(),
                )
            };
            if rc != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // SAFETY: both descriptors are fresh and owned by nobody else.
            ends.push(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) });
        }
        Ok(Pairs { ends })
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The end pair `i` is read from.
    pub fn rx(&self, i: usize) -> RawFd {
        self.ends[i].0.as_raw_fd()
    }

    /// The end written to make pair `i` readable.
    pub fn tx(&self, i: usize) -> RawFd {
        self.ends[i].1.as_raw_fd()
    }
}

/// A ready count from epoll_wait or poll: an interrupted call saw nothing.
pub fn ready_count(n: libc::c_int) -> std::io::Result<usize> {
    if n >= 0 {
        return Ok(n as usize);
    }
    let e = std::io::Error::last_os_error();
    if e.kind() == std::io::ErrorKind::Interrupted {
        Ok(0)
    } else {
        Err(e)
    }
}

/// The pair after `idx`, wrapping around.
#[inline]
pub fn next_pair(pairs: &Pairs, idx: usize) -> usize {
    if idx + 1 == pairs.len() {
        0
    } else {
        idx + 1
    }
}

/// Reads up to `buf.len()` bytes; 0 on EAGAIN, -1 on another error.
#[inline]
pub fn recv_some(fd: RawFd, buf: &mut [u8]) -> isize {
    // SAFETY: buf is valid writable memory of buf.len() bytes.
    let n = unsafe { libc::recv(fd, buf.as_mut_ptr().cast(), buf.len(), 0) };
    if n < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::WouldBlock {
        0
    } else {
        n
    }
}

/// The bytes written: "e", as libevent's bench.c writes.
pub static E: [u8; 16] = [b'e'; 16];

/// Writes `n` bytes of "e"; returns whether they all went.
#[inline]
pub fn send_bytes(fd: RawFd, n: usize) -> bool {
    let n = n.min(E.len());
    // SAFETY: E is valid readable memory of at least n bytes.
    let sent = unsafe { libc::send(fd, E.as_ptr().cast(), n, libc::MSG_NOSIGNAL) };
    sent == n as isize
}

/// The counters of one iteration, as libevent's bench.c keeps them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Bytes read by the callbacks.
    pub reads: u64,
    /// Bytes written: the A initial ones plus one per forwarded read.
    pub fired: u64,
    /// Writes still allowed.
    pub writes_left: u64,
    pub failures: u64,
}

impl Tally {
    pub fn done(&self) -> bool {
        self.reads == self.fired
    }

    /// Counts `n` bytes read and returns how many to forward to the next pair.
    #[inline]
    pub fn settle(&mut self, n: isize) -> u64 {
        if n < 0 {
            self.failures += 1;
            return 0;
        }
        self.reads += n as u64;
        let forward = (n as u64).min(self.writes_left);
        self.writes_left -= forward;
        self.fired += forward;
        forward
    }

    /// `n` bytes were read on pair `idx`: forward as many (while writes remain) to the next pair.
    #[inline]
    pub fn on_read(&mut self, pairs: &Pairs, idx: usize, n: isize) {
        let forward = self.settle(n);
        if forward > 0 && !send_bytes(pairs.tx(next_pair(pairs, idx)), forward as usize) {
            self.failures += 1;
        }
    }

    /// Starts an iteration: one byte to each active pair, spread evenly.
    pub fn kickoff(pairs: &Pairs, shape: &Shape) -> Tally {
        let mut t = Tally::default();
        let space = (shape.pairs / shape.active).max(1);
        for i in 0..shape.active {
            if !send_bytes(pairs.tx((i * space) % pairs.len()), 1) {
                t.failures += 1;
            }
            t.fired += 1;
        }
        t.writes_left = shape.writes;
        t
    }
}

/// One measured iteration.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Timing {
    /// Including re-arming the N watchers.
    pub total_ns: u64,
    /// Event processing only: from the first write to the last read.
    pub loop_ns: u64,
    pub reads: u64,
    pub fired: u64,
    /// Reads or writes that failed.
    pub failures: u64,
}

impl Timing {
    /// `t0` before re-arming, `t1` after the first writes, `t2` when every byte is read.
    pub fn new(t0: Instant, t1: Instant, t2: Instant, tally: &Tally) -> Timing {
        Timing {
            total_ns: (t2 - t0).as_nanos() as u64,
            loop_ns: (t2 - t1).as_nanos() as u64,
            reads: tally.reads,
            fired: tally.fired,
            failures: tally.failures,
        }
    }
}

/// An event loop under test. Each owns its own socketpairs.
pub trait Backend {
    fn name(&self) -> &'static str;
    /// Re-arms all watchers, fires the active pairs and runs until every byte is read.
    fn iterate(&mut self, shape: &Shape) -> std::io::Result<Timing>;
}

/// A loop driven by explicit non-blocking passes (epoll, poll, io_uring): the method's
/// iteration is the same for all of them, so it is written once, in the `Backend` impl.
pub trait PassLoop {
    const NAME: &'static str;
    fn pairs(&self) -> &Pairs;
    /// Re-arms every read watcher, as the method does at the start of each iteration.
    fn rearm(&mut self) -> std::io::Result<()>;
    /// One non-blocking pass: runs every ready callback; returns how many events it saw.
    fn pass(&mut self, tally: &mut Tally) -> std::io::Result<usize>;
}

impl<L: PassLoop> Backend for L {
    fn name(&self) -> &'static str {
        L::NAME
    }

    fn iterate(&mut self, shape: &Shape) -> std::io::Result<Timing> {
        let t0 = Instant::now();
        self.rearm()?;
        self.pass(&mut Tally::default())?;
        let mut tally = Tally::kickoff(self.pairs(), shape);
        let t1 = Instant::now();
        let mut last_progress = t1;
        while !tally.done() {
            if self.pass(&mut tally)? > 0 {
                last_progress = Instant::now();
            } else if last_progress.elapsed() > STALL_LIMIT {
                return Err(stalled(L::NAME));
            }
        }
        Ok(Timing::new(t0, t1, Instant::now(), &tally))
    }
}

/// A loop that made no progress this long has lost an event: fail rather than hang.
pub const STALL_LIMIT: std::time::Duration = std::time::Duration::from_secs(5);

pub fn stalled(what: &str) -> std::io::Error {
    std::io::Error::other(format!(
        "the {what} backend stopped seeing events before every byte was read"
    ))
}
