//! The server session seam: what a protocol gives the server runtime for one accepted
//! connection. Sans-IO like the client's (`engine/session.rs`): bytes in, bytes out;
//! the runtime owns sockets, buffers, TLS, backpressure, timeouts and counting.

use crate::stats::Figures;

/// What a session made of the bytes it was given.
#[derive(Debug, PartialEq, Eq)]
pub enum Reply {
    /// `used` bytes were consumed (the rest waits for more); the reply is in `out`.
    Consumed(usize),
    /// The reply is the first `n` input bytes themselves, which are consumed (`out` is
    /// ignored): the runtime writes them from where they already are, so a protocol
    /// whose reply repeats its input (echo, a reflector, a loopback test peer) costs no
    /// copy. Generic: nothing in the runtime knows which protocol does this.
    Reflect(usize),
    /// Write `out`, then close the connection (a protocol error, or the peer's request).
    Close,
    /// Write `out`, then close: the peer went past a documented cap (a head, a body);
    /// counted in the server's `too_large`.
    TooLarge,
    /// `used` bytes were consumed and the replies in `out` are as many as one call
    /// should make (pipelined requests asking for large replies, an HTTP/2 body past
    /// one batch): write them, then call again with the rest (possibly none) before
    /// reading more.
    More(usize),
}

/// One connection's protocol state on the server side.
pub trait ServerSession: 'static {
    type Figures: Figures;

    /// `input` holds everything received and not yet consumed; append replies to `out`.
    fn on_bytes(&mut self, input: &[u8], out: &mut Vec<u8>, figures: &mut Self::Figures) -> Reply;

    /// Requests answered since the last call, for the server's `requests` counter
    /// (asked after every `on_bytes`). Byte protocols without requests keep the default.
    #[inline]
    fn take_requests(&mut self) -> u64 {
        0
    }

    /// Whether the connection waits for (the rest of) a request head, given the
    /// `unconsumed` input bytes kept after `on_bytes`: --header-timeout runs then, so
    /// a peer that trickles an unfinished request is closed however slowly its bytes
    /// keep the idle timeout away. Default: while an unfinished request is kept. A
    /// protocol that waits for its first request from the accept (HTTP), or whose
    /// head is a handshake (WebSocket's upgrade), says so.
    #[inline]
    fn in_head(&self, unconsumed: usize) -> bool {
        unconsumed > 0
    }

    /// Server-initiated frames (a WebSocket ping every N ms): when this session next
    /// wants `on_wake`, in ns on the server's clock. None: never.
    #[inline]
    fn next_wake(&self) -> Option<u64> {
        None
    }

    /// Called at or after `next_wake`; append what to send to `out` (written in order
    /// after any replies still owed). `next_wake` is asked again afterwards.
    fn on_wake(&mut self, _now_ns: u64, _out: &mut Vec<u8>, _figures: &mut Self::Figures) {}

    /// Asked after `on_wake`: true when what it wrote was the connection's last (a
    /// GOAWAY to a peer that stopped making progress), so the runtime closes the
    /// connection once `out` is written, without waiting for the peer's next bytes.
    #[inline]
    fn ends(&self) -> bool {
        false
    }
}

/// Makes a session for each accepted connection.
pub trait ServerFactory: Send + Sync + 'static {
    type Session: ServerSession;
    /// What the sessions of one server thread share (a keyspace): made once per
    /// server thread by `thread_state`, on that thread, so it needs no lock and may be
    /// `Rc<RefCell<_>>` (borrowed per call, never across threads). `()` when nothing is
    /// shared.
    type Thread: 'static;

    fn session(&self) -> Self::Session;

    /// The state of a new server thread, made once when the thread starts.
    fn thread_state(&self) -> Self::Thread;

    /// A session for a connection accepted at `now_ns` (the sessions' clock, as in
    /// `next_wake`) on the thread that owns `thread`: what the runtime calls, so a
    /// session can arm its first wake-up from the start. Default: `session`.
    #[inline]
    fn session_in(&self, _thread: &Self::Thread, _now_ns: u64) -> Self::Session {
        self.session()
    }
}
