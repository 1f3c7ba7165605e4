//! One server connection. Reads land in the thread's read buffer, so an idle
//! connection owns no buffer at all; a reply that cannot be written at once is kept in
//! a per-connection buffer, and the connection is not read again until it has gone out
//! (backpressure: a peer that does not read stops being read, nothing grows unbounded).
//! With --delay/--stall, replies are held back in a per-connection queue and written
//! when due, in order; with timeouts, a per-connection deadline closes starved reads.

use super::counters::{bump, ThreadCounters};
use super::handler::{Handler, Reply};
use super::pacing::Pacing;
use super::timeouts::{CoarseClock, ConnTimer, Expired, Timeouts};
use crate::rng::Rng;
use std::cell::RefCell;
use std::collections::VecDeque;
use std::future::{poll_fn, Future};
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};
use std::time::Instant;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::Sleep;

/// Buffers shared by all connections of one server thread.
pub struct ThreadBuffers {
    pub read: Vec<u8>,
    pub out: Vec<u8>,
}

/// What shapes the timing of one server thread's connections.
pub struct Timing {
    pub timeouts: Timeouts,
    /// The thread's coarse clock; None when no timeout is set.
    pub clock: Option<Rc<CoarseClock>>,
    pub pacing: Pacing,
}

/// Why a connection ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Closed {
    /// The peer closed (or half-closed) its side.
    Eof,
    /// The handler asked to close.
    Handler,
    /// A socket error.
    Error(std::io::ErrorKind),
    /// --header-timeout or --idle-timeout passed.
    Timeout(Expired),
}

/// Most reply bytes one connection holds back for --delay/--stall: past it the
/// connection is not read until some have gone out (counted in `held_full`).
pub const MAX_HELD_BYTES: usize = 1 << 20;
/// Most replies one connection holds back (same rule).
pub const MAX_HELD_REPLIES: usize = 4096;

/// Replies held back by --delay/--stall: their bytes back to back, and when each is due.
/// Made on a connection's first paced reply and reused: nothing is allocated per reply
/// once the buffers have grown.
struct Held {
    bytes: Vec<u8>,
    /// Where the first reply still held starts in `bytes`.
    start: usize,
    queue: VecDeque<(Instant, usize)>,
    sleep: Pin<Box<Sleep>>,
    armed: Option<Instant>,
    rng: Rng,
    /// At the cap now (counted once per time it fills).
    full: bool,
}

impl Held {
    fn new(seed: u64) -> Box<Held> {
        Box::new(Held {
            bytes: Vec::new(),
            start: 0,
            queue: VecDeque::new(),
            sleep: Box::pin(tokio::time::sleep(std::time::Duration::ZERO)),
            armed: None,
            rng: Rng::new(seed),
            full: false,
        })
    }

    fn push(&mut self, due: Instant, data: &[u8]) {
        if self.start > 0 && self.start >= self.bytes.len() / 2 {
            self.bytes.drain(..self.start);
            self.start = 0;
        }
        self.bytes.extend_from_slice(data);
        self.queue.push_back((due, data.len()));
    }

    fn over_cap(&self) -> bool {
        self.bytes.len() - self.start >= MAX_HELD_BYTES || self.queue.len() >= MAX_HELD_REPLIES
    }
}

const FAIRNESS_ROUNDS: u32 = 16;

struct ConnState<H> {
    handler: H,
    /// Input received but not consumed by the handler (a partial request).
    carry: Vec<u8>,
    /// Reply bytes not yet written.
    pending: Vec<u8>,
    ppos: usize,
    /// Written into a buffering layer (TLS) whose flush has not finished: it must be
    /// retried on every wake-up, or the bytes would sit there for good.
    flushing: bool,
    closing: bool,
    /// The peer closed its side while replies were held back: close once they are out.
    eof: bool,
    /// Head and idle deadlines (None: no timeout set).
    timer: Option<ConnTimer>,
    /// Replies held back by --delay/--stall (None until the first one).
    held: Option<Box<Held>>,
    /// The handler stopped early (`Reply::More`): call it on `carry` before reading.
    again: bool,
}

impl<H> ConnState<H> {
    fn holding(&self) -> bool {
        self.held.as_ref().is_some_and(|h| !h.queue.is_empty())
    }

    #[inline]
    fn touch(&mut self) {
        if let Some(t) = &mut self.timer {
            t.touch();
        }
    }
}

/// Writes as much of `data` as the socket takes now; returns how much, or the error.
/// Whatever was written is also flushed; `flushing` says whether that is still under way.
fn write_now<S: AsyncWrite + Unpin>(
    io: &mut S,
    cx: &mut Context<'_>,
    data: &[u8],
    flushing: &mut bool,
) -> Result<usize, Closed> {
    let mut at = 0;
    while at < data.len() {
        match Pin::new(&mut *io).poll_write(cx, &data[at..]) {
            Poll::Ready(Ok(0)) => return Err(Closed::Error(std::io::ErrorKind::WriteZero)),
            Poll::Ready(Ok(n)) => at += n,
            Poll::Ready(Err(e)) => return Err(Closed::Error(e.kind())),
            Poll::Pending => break,
        }
    }
    if at > 0 {
        *flushing = true;
    }
    flush(io, cx, flushing)?;
    Ok(at)
}

/// Pushes out what a buffering layer (TLS) holds; a no-op for plain TCP.
fn flush<S: AsyncWrite + Unpin>(
    io: &mut S,
    cx: &mut Context<'_>,
    flushing: &mut bool,
) -> Result<(), Closed> {
    if *flushing {
        match Pin::new(&mut *io).poll_flush(cx) {
            Poll::Ready(Ok(())) => *flushing = false,
            Poll::Ready(Err(e)) => return Err(Closed::Error(e.kind())),
            Poll::Pending => {}
        }
    }
    Ok(())
}

pub async fn serve<S, H>(
    io: &mut S,
    handler: H,
    bufs: &RefCell<ThreadBuffers>,
    counters: &ThreadCounters,
    timing: &Timing,
) -> Closed
where
    S: AsyncRead + AsyncWrite + Unpin,
    H: Handler,
{
    let timer = timing
        .clock
        .as_ref()
        .map(|c| ConnTimer::new(c.clone(), &timing.timeouts, handler.in_head(0)));
    let mut st = ConnState {
        handler,
        carry: Vec::new(),
        pending: Vec::new(),
        ppos: 0,
        flushing: false,
        closing: false,
        eof: false,
        timer,
        held: None,
        again: false,
    };
    poll_fn(|cx| {
        let r = poll_serve(cx, io, &mut st, bufs, counters, &timing.pacing);
        if r.is_pending() {
            let idle = !st.holding();
            if let Some(expired) = st.timer.as_mut().and_then(|t| t.check(cx, idle)) {
                bump(
                    match expired {
                        Expired::Header => &counters.header_timeouts,
                        Expired::Idle => &counters.idle_timeouts,
                    },
                    1,
                );
                return Poll::Ready(Closed::Timeout(expired));
            }
        }
        r
    })
    .await
}

/// Writes the held replies that are due, in order; arms the timer for the next one.
/// A reply the socket does not take whole goes on to `pending`.
fn release<S: AsyncWrite + Unpin>(
    h: &mut Held,
    io: &mut S,
    cx: &mut Context<'_>,
    pending: &mut Vec<u8>,
    flushing: &mut bool,
    counters: &ThreadCounters,
) -> Result<(), Closed> {
    let mut now = Instant::now();
    while let Some(&(due, len)) = h.queue.front() {
        if due > now {
            if h.armed != Some(due) {
                h.sleep.as_mut().reset(due.into());
                h.armed = Some(due);
            }
            if h.sleep.as_mut().poll(cx).is_pending() {
                return Ok(());
            }
            // The timer says it is due (its clock rounds up to the millisecond).
            now = due;
        }
        h.queue.pop_front();
        let at = h.start;
        h.start += len;
        let data = &h.bytes[at..at + len];
        let n = write_now(io, cx, data, flushing)?;
        bump(&counters.bytes_out, n as u64);
        if n < len {
            pending.extend_from_slice(&data[n..]);
            break;
        }
    }
    if h.queue.is_empty() {
        h.bytes.clear();
        h.start = 0;
    }
    if h.full && !h.over_cap() {
        h.full = false;
    }
    Ok(())
}

fn poll_serve<S, H>(
    cx: &mut Context<'_>,
    io: &mut S,
    st: &mut ConnState<H>,
    bufs: &RefCell<ThreadBuffers>,
    counters: &ThreadCounters,
    pacing: &Pacing,
) -> Poll<Closed>
where
    S: AsyncRead + AsyncWrite + Unpin,
    H: Handler,
{
    let mut rounds = 0;
    loop {
        // Finish the previous reply before reading anything more.
        if let Err(c) = flush(io, cx, &mut st.flushing) {
            return Poll::Ready(c);
        }
        if st.ppos < st.pending.len() {
            match write_now(io, cx, &st.pending[st.ppos..], &mut st.flushing) {
                Ok(n) => {
                    bump(&counters.bytes_out, n as u64);
                    st.ppos += n;
                    if n > 0 {
                        st.touch();
                    }
                    if st.ppos < st.pending.len() {
                        return Poll::Pending;
                    }
                    // Give the memory back: idle connections should cost nothing.
                    st.pending = Vec::new();
                    st.ppos = 0;
                }
                Err(c) => return Poll::Ready(c),
            }
        }
        if st.flushing {
            return Poll::Pending;
        }
        if st.holding() {
            let h = st.held.as_deref_mut().expect("holding");
            if let Err(c) = release(h, io, cx, &mut st.pending, &mut st.flushing, counters) {
                return Poll::Ready(c);
            }
            if !st.pending.is_empty() {
                continue;
            }
            if h.over_cap() {
                if !h.full {
                    h.full = true;
                    bump(&counters.held_full, 1);
                }
                // Not read again until some go out: the timer wakes the task.
                return Poll::Pending;
            }
        }
        if st.closing {
            return if st.holding() {
                Poll::Pending
            } else if st.eof {
                Poll::Ready(Closed::Eof)
            } else {
                Poll::Ready(Closed::Handler)
            };
        }

        let mut guard = bufs.borrow_mut();
        let b = &mut *guard;
        // After `Reply::More` the handler goes on with what it left in `carry` first.
        let n = if std::mem::take(&mut st.again) {
            0
        } else {
            let mut rb = ReadBuf::new(&mut b.read);
            let n = match Pin::new(&mut *io).poll_read(cx, &mut rb) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Err(e)) => return Poll::Ready(Closed::Error(e.kind())),
                Poll::Ready(Ok(())) => rb.filled().len(),
            };
            if n == 0 {
                if st.holding() {
                    // The peer is done sending; what it was promised still goes out.
                    st.closing = true;
                    st.eof = true;
                    continue;
                }
                return Poll::Ready(Closed::Eof);
            }
            bump(&counters.reads, 1);
            bump(&counters.bytes_in, n as u64);
            st.touch();
            n
        };

        let fresh = &b.read[..n];
        if !st.carry.is_empty() {
            st.carry.extend_from_slice(fresh);
        }
        let input: &[u8] = if st.carry.is_empty() {
            fresh
        } else {
            &st.carry
        };
        b.out.clear();
        let reply = st.handler.on_bytes(input, &mut b.out);
        let answered = st.handler.take_requests();
        if answered > 0 {
            bump(&counters.requests, answered);
        }
        let (to_write, used): (&[u8], usize) = match reply {
            Reply::EchoInput => (input, input.len()),
            Reply::Consumed(used) => (&b.out, used),
            Reply::Close => {
                st.closing = true;
                (&b.out, input.len())
            }
            Reply::TooLarge => {
                bump(&counters.too_large, 1);
                st.closing = true;
                (&b.out, input.len())
            }
            Reply::More(used) => {
                st.again = used < input.len();
                (&b.out, used)
            }
        };
        // --delay/--stall: a reply not due yet (or behind one that is not) waits.
        let mut now_due = true;
        if pacing.active() && !to_write.is_empty() {
            let now = Instant::now();
            let h = st.held.get_or_insert_with(|| {
                Held::new(now.duration_since(pacing.epoch).as_nanos() as u64 ^ n as u64)
            });
            let mut due = pacing.due(now, &mut h.rng);
            if let Some(&(last, _)) = h.queue.back() {
                due = due.max(last);
            }
            if due > now || !h.queue.is_empty() {
                h.push(due, to_write);
                now_due = false;
            }
        }
        if now_due {
            let written = match write_now(io, cx, to_write, &mut st.flushing) {
                Ok(w) => w,
                Err(c) => return Poll::Ready(c),
            };
            bump(&counters.bytes_out, written as u64);
            if written < to_write.len() {
                st.pending.extend_from_slice(&to_write[written..]);
            }
        }
        // Keep the unconsumed part of the input for the next read.
        if st.carry.is_empty() {
            if used < fresh.len() {
                st.carry.extend_from_slice(&fresh[used..]);
            }
        } else if used >= st.carry.len() {
            st.carry = Vec::new();
        } else {
            st.carry.drain(..used);
        }
        drop(guard);
        if let Some(t) = &mut st.timer {
            t.set_in_head(st.handler.in_head(st.carry.len()));
        }

        rounds += 1;
        if rounds >= FAIRNESS_ROUNDS {
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
    }
}
