//! One server connection. Reads land in the thread's read buffer, so an idle
//! connection owns no buffer at all; a reply that cannot be written at once is kept in
//! a per-connection buffer, and the connection is not read again until it has gone out
//! (backpressure: a peer that does not read stops being read, nothing grows unbounded).

use super::counters::{bump, ThreadCounters};
use super::handler::{Handler, Reply};
use std::cell::RefCell;
use std::future::poll_fn;
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// Buffers shared by all connections of one server thread.
pub struct ThreadBuffers {
    pub read: Vec<u8>,
    pub out: Vec<u8>,
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
    /// The handler stopped early (`Reply::More`): call it on `carry` before reading.
    again: bool,
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
) -> Closed
where
    S: AsyncRead + AsyncWrite + Unpin,
    H: Handler,
{
    let mut st = ConnState {
        handler,
        carry: Vec::new(),
        pending: Vec::new(),
        ppos: 0,
        flushing: false,
        closing: false,
        again: false,
    };
    poll_fn(|cx| poll_serve(cx, io, &mut st, bufs, counters)).await
}

fn poll_serve<S, H>(
    cx: &mut Context<'_>,
    io: &mut S,
    st: &mut ConnState<H>,
    bufs: &RefCell<ThreadBuffers>,
    counters: &ThreadCounters,
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
        if st.closing {
            return Poll::Ready(Closed::Handler);
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
                return Poll::Ready(Closed::Eof);
            }
            bump(&counters.reads, 1);
            bump(&counters.bytes_in, n as u64);
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
        let written = match write_now(io, cx, to_write, &mut st.flushing) {
            Ok(w) => w,
            Err(c) => return Poll::Ready(c),
        };
        bump(&counters.bytes_out, written as u64);
        if written < to_write.len() {
            st.pending.extend_from_slice(&to_write[written..]);
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

        rounds += 1;
        if rounds >= FAIRNESS_ROUNDS {
            cx.waker().wake_by_ref();
            return Poll::Pending;
        }
    }
}
