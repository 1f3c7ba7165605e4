//! The session of one `serve http` connection: HTTP/1.1 until its first bytes are
//! the HTTP/2 client preface, then HTTP/2 for good. One check covers h2c by prior
//! knowledge on the HTTP/1.1 port and h2 chosen by ALPN under `--tls`: the client
//! sends the preface either way. An HTTP/1.1 request cannot start with it (`PRI` is
//! no method any route takes), and a first read holding only part of it waits for
//! the rest.

use super::h2serve::{H2Figures, H2Session};
use super::server::{HttpHandler, HttpHandlerFactory};
use crate::proto::h2::PREFACE;
use crate::server::session::{Reply, ServerFactory, ServerSession};

/// Every `serve http` connection starts as HTTP/1.1 and may turn HTTP/2 (here, not in
/// server.rs, so the two files do not import each other).
impl ServerFactory for HttpHandlerFactory {
    type Session = HttpSession;
    type Thread = ();

    fn thread_state(&self) {}

    fn session(&self) -> HttpSession {
        HttpSession::One(self.handler())
    }
}

pub enum HttpSession {
    One(HttpHandler),
    /// Boxed: an HTTP/1.1 connection pays one pointer for it, not its size.
    Two(Box<H2Session>),
}

/// Whether `input`, a connection's first bytes, are (the start of) the preface.
enum Opening {
    H2,
    /// Too few bytes to tell, all of them the preface's.
    Unsure,
    H1,
}

fn opening(input: &[u8]) -> Opening {
    if input.len() >= PREFACE.len() {
        if input.starts_with(PREFACE) {
            Opening::H2
        } else {
            Opening::H1
        }
    } else if PREFACE.starts_with(input) {
        Opening::Unsure
    } else {
        Opening::H1
    }
}

impl ServerSession for HttpSession {
    type Figures = H2Figures;

    #[inline]
    fn on_bytes(&mut self, input: &[u8], out: &mut Vec<u8>, figures: &mut H2Figures) -> Reply {
        match self {
            HttpSession::One(h) => {
                if h.fresh() && !input.is_empty() {
                    // `serve grpc` speaks HTTP/2 alone: anything else is refused there.
                    let two = match opening(input) {
                        Opening::Unsure => return Reply::Consumed(0),
                        Opening::H2 => true,
                        Opening::H1 => h.grpc(),
                    };
                    if two {
                        figures.connections += 1;
                        let mut two = Box::new(H2Session::new(h.shared()));
                        let reply = two.on_bytes(input, out, figures);
                        *self = HttpSession::Two(two);
                        return reply;
                    }
                }
                h.on_bytes(input, out, figures)
            }
            HttpSession::Two(s) => s.on_bytes(input, out, figures),
        }
    }

    #[inline]
    fn take_requests(&mut self) -> u64 {
        match self {
            HttpSession::One(h) => h.take_requests(),
            HttpSession::Two(s) => s.take_requests(),
        }
    }

    fn in_head(&self, unconsumed: usize) -> bool {
        match self {
            HttpSession::One(h) => h.in_head(unconsumed),
            HttpSession::Two(s) => s.in_head(unconsumed),
        }
    }

    fn next_wake(&self) -> Option<u64> {
        match self {
            HttpSession::One(_) => None,
            HttpSession::Two(s) => s.next_wake(),
        }
    }

    fn on_wake(&mut self, now_ns: u64, out: &mut Vec<u8>, figures: &mut H2Figures) {
        if let HttpSession::Two(s) = self {
            s.on_wake(now_ns, out, figures);
        }
    }

    fn ends(&self) -> bool {
        matches!(self, HttpSession::Two(s) if s.ends())
    }
}
