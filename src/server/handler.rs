//! The seam between the server runtime (sockets, buffers, TLS, backpressure) and a
//! protocol (bytes in, bytes out).

/// What a handler made of the bytes it was given.
#[derive(Debug, PartialEq, Eq)]
pub enum Reply {
    /// The whole input is the reply (echo): written straight from the read buffer.
    EchoInput,
    /// `used` bytes were consumed (the rest waits for more); the reply is in `out`.
    Consumed(usize),
    /// Write `out`, then close the connection (a protocol error, or the peer's request).
    Close,
    /// Write `out`, then close: the peer went past a documented cap (a head, a body);
    /// counted in the server's `too_large`.
    TooLarge,
    /// `used` bytes were consumed and the replies in `out` are as many as one call
    /// should make (pipelined requests asking for large replies): write them, then call
    /// again with the rest before reading more.
    More(usize),
}

/// One connection's protocol state on the server side.
pub trait Handler: 'static {
    /// `input` holds everything received and not yet consumed; append replies to `out`.
    fn on_bytes(&mut self, input: &[u8], out: &mut Vec<u8>) -> Reply;

    /// Requests answered since the last call, for the server's `requests` counter
    /// (asked after every `on_bytes`). Byte protocols without requests keep the default.
    #[inline]
    fn take_requests(&mut self) -> u64 {
        0
    }

    /// Whether the connection waits for (the rest of) a request head, given the
    /// `unconsumed` input bytes kept after `on_bytes`: --header-timeout runs then.
    /// Byte protocols have no heads and keep the default.
    #[inline]
    fn in_head(&self, _unconsumed: usize) -> bool {
        false
    }
}

pub trait HandlerFactory: Send + Sync + 'static {
    type Handler: Handler;

    fn handler(&self) -> Self::Handler;
}
