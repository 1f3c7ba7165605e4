//! A stream whose response is not all written: what is left of its body, and the
//! DATA it may send now. A response goes out as far as the peer's windows (the
//! stream's and the connection's) and one output batch allow; the rest waits for a
//! WINDOW_UPDATE or the next call. An echo stream's body is the request's DATA:
//! what cannot go out at once is kept, at most the receive window this side gave
//! the stream, which it gives back only once the bytes went out again.

use super::super::server::MAX_OUT_BATCH;
use super::head;
use crate::proto::h2::flow::{RecvWindow, SendWindow};
use crate::proto::h2::frame::DEFAULT_MAX_FRAME;
use crate::proto::h2::write;

/// The largest DATA frame sent, whatever max frame size the peer allows: a 16 KiB
/// slice of the pattern or of an echo's bytes.
pub const DATA_FRAME: usize = DEFAULT_MAX_FRAME as usize;

/// A fixed body: its bytes, wherever they are.
#[derive(Debug)]
pub enum Fixed {
    Static(&'static [u8]),
    /// "status NNN\n".
    Status([u8; 11]),
    /// `GET /bytes/N`: the a-z cycle from the shared pattern.
    Pattern,
}

#[derive(Debug)]
pub enum Body {
    /// `len` bytes, `pos` of them sent.
    Fixed {
        bytes: Fixed,
        pos: usize,
        len: usize,
    },
    /// The request's DATA not yet echoed.
    Echo(Vec<u8>),
}

#[derive(Debug)]
pub struct Stream {
    pub id: u32,
    /// What the peer lets this side send on the stream.
    pub send: SendWindow,
    /// What this side lets the peer send on it.
    pub recv: RecvWindow,
    pub body: Body,
    /// The request's DATA is still coming (no END_STREAM yet).
    pub input_open: bool,
    /// Request body bytes received (an echo's cap is `--max-body`).
    pub received: u64,
    /// A gRPC call (`serve grpc`): the response ends with trailers (grpc-status 0),
    /// not END_STREAM on its last DATA.
    pub trailers: bool,
    /// A gRPC call: the request's message prefix, as far as it came (`received`).
    pub prefix: [u8; 5],
}

/// The response's end: END_STREAM on its last DATA, or gRPC's trailers after it.
fn end_response(out: &mut Vec<u8>, s: &Stream) {
    head::trailers(out, s.id, 0, b"");
}

impl Stream {
    /// Body bytes still to send.
    pub fn left(&self) -> usize {
        match &self.body {
            Body::Fixed { pos, len, .. } => len - pos,
            Body::Echo(buf) => buf.len(),
        }
    }

    /// Bytes wait and a window of 0 keeps them: the peer, not the batch, holds it up.
    pub fn starved(&self, conn: &ConnSend) -> bool {
        self.left() > 0 && (self.send.available() == 0 || conn.window.available() == 0)
    }
}

/// The connection's send window, and the DATA bytes sent on it in all (so the
/// session tells a peer that lets responses move from one that does not).
#[derive(Clone, Copy, Debug)]
pub struct ConnSend {
    pub window: SendWindow,
    pub sent: u64,
}

/// How much of `want` bytes may go now on `s`.
fn room(s: &Stream, conn: &ConnSend, want: usize) -> usize {
    want.min(s.send.available())
        .min(conn.window.available())
        .min(DATA_FRAME)
}

/// Writes `bytes` (all of which may go: `room`) as one DATA frame on `s`.
fn data(out: &mut Vec<u8>, s: &mut Stream, conn: &mut ConnSend, bytes: &[u8], end: bool) {
    write::data_header(out, s.id, end && !s.trailers, bytes.len());
    out.extend_from_slice(bytes);
    if end && s.trailers {
        end_response(out, s);
    }
    s.send.take(bytes.len());
    conn.window.take(bytes.len());
    conn.sent += bytes.len() as u64;
}

/// Echoes a DATA payload at once as far as the windows allow, without copying it
/// into the stream first; the rest is kept. True when it wrote the response's end
/// (the request's last DATA, all of it sent).
pub fn echo_now(out: &mut Vec<u8>, s: &mut Stream, conn: &mut ConnSend, mut bytes: &[u8]) -> bool {
    let Body::Echo(kept) = &s.body else {
        return false;
    };
    if kept.is_empty() {
        while !bytes.is_empty() && out.len() < MAX_OUT_BATCH {
            let n = room(s, conn, bytes.len());
            if n == 0 {
                break;
            }
            let (now, rest) = bytes.split_at(n);
            let end = rest.is_empty() && !s.input_open;
            data(out, s, conn, now, end);
            if end {
                return true;
            }
            bytes = rest;
        }
    }
    if let Body::Echo(kept) = &mut s.body {
        kept.extend_from_slice(bytes);
    }
    false
}

/// Sends what `s` may send now. True when its response is complete (END_STREAM
/// written): the stream is done.
pub fn pump(out: &mut Vec<u8>, s: &mut Stream, conn: &mut ConnSend, pattern: &[u8]) -> bool {
    loop {
        let left = s.left();
        let last = !s.input_open;
        if left == 0 {
            if last && s.trailers {
                end_response(out, s);
            } else if last {
                // An echo whose last DATA came after its bytes went: an empty END_STREAM.
                write::data(out, s.id, true, &[]);
            }
            return last;
        }
        if out.len() >= MAX_OUT_BATCH {
            return false;
        }
        let n = room(s, conn, left);
        if n == 0 {
            return false;
        }
        let end = n == left && last;
        match std::mem::replace(&mut s.body, Body::Echo(Vec::new())) {
            Body::Fixed { bytes, pos, len } => {
                let slice = match &bytes {
                    Fixed::Static(b) => &b[pos..pos + n],
                    Fixed::Status(b) => &b[pos..pos + n],
                    Fixed::Pattern => &pattern[pos % 26..pos % 26 + n],
                };
                data(out, s, conn, slice, end);
                s.body = Body::Fixed {
                    bytes,
                    pos: pos + n,
                    len,
                };
            }
            Body::Echo(mut kept) => {
                data(out, s, conn, &kept[..n], end);
                kept.drain(..n);
                s.body = Body::Echo(kept);
            }
        }
        if end {
            return true;
        }
    }
}
