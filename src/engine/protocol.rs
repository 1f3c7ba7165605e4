//! The seam between the engine (connections, time, counting) and a protocol (bytes).
//! A protocol client encodes requests into the engine's output buffer and tells,
//! looking at the input buffer, whether the oldest request's reply is complete.

use crate::stats::ErrorKind;

/// A request on the wire, awaiting its reply. Kept by the engine in send order.
#[derive(Clone, Copy, Debug)]
pub struct InFlight {
    pub seq: u64,
    /// When the schedule wanted it sent (open loop); equal to `sent_ns` in closed loop.
    pub intended_ns: u64,
    pub sent_ns: u64,
    /// Protocol-owned detail of the request (for echo: its payload length).
    pub tag: u32,
    /// Sent after the warm-up, so it counts in the results.
    pub measured: bool,
}

/// What the protocol makes of the bytes received so far.
#[derive(Debug, PartialEq, Eq)]
pub enum Decode {
    /// The reply to the oldest request is not complete yet.
    Incomplete,
    /// It is: `used` bytes belong to it.
    Reply { used: usize, verdict: Verdict },
    /// Not complete, but its first `used` bytes (> 0) are checked and need not be kept
    /// (an interim HTTP 1xx response, body bytes already counted): the engine drops
    /// them, counts them with the reply, and asks again about the bytes after them. So a
    /// long or endless reply costs no more memory than its longest unparsed piece.
    Consumed { used: usize },
}

#[derive(Debug, PartialEq, Eq, Clone, Copy)]
pub enum Verdict {
    Ok,
    /// A wrong reply; the stream is still in step, so the connection goes on.
    Error(ErrorKind),
    /// A wrong reply after which the stream cannot be trusted: the connection is dropped.
    Fatal(ErrorKind),
}

/// Which connection-level exchange `ClientProtocol::setup` is asked about.
#[derive(Debug, PartialEq, Eq, Clone, Copy)]
pub enum SetupPhase {
    /// After connecting, before the first request (AMQP's connection handshake).
    Open,
    /// After the last reply, before the socket is dropped (AMQP's Connection.Close).
    Close,
}

/// One step of a connection-level exchange.
#[derive(Debug, PartialEq, Eq)]
pub enum Setup {
    /// More to come: `used` input bytes were consumed; with none used, more input is needed.
    Continue { used: usize },
    /// Finished after `used` bytes; anything after them belongs to the requests.
    Done { used: usize },
    /// The peer refused or broke the exchange; the connection counts as failed.
    Failed { kind: ErrorKind, detail: String },
}

/// One connection's protocol state.
pub trait ClientProtocol: 'static {
    /// Appends request `seq`, sent at `sent_ns`, to `out`; returns its tag.
    fn encode(&mut self, seq: u64, sent_ns: u64, out: &mut Vec<u8>) -> u32;

    /// Looks for the reply to `req` at the start of `input`.
    fn decode(&mut self, input: &[u8], req: &InFlight) -> Decode;

    /// The peer closed the connection with `input` (a partial reply to `req`) unread:
    /// a reply that runs to the close (an HTTP/1.0 body) is complete now. By default
    /// nothing is, and the request ends as `Closed`.
    fn decode_at_close(&mut self, _input: &[u8], _req: &InFlight) -> Decode {
        Decode::Incomplete
    }

    /// Asked after each decoded reply: the connection must be closed after it (HTTP's
    /// `Connection: close`). Requests still in flight on it end as `Closed`, and the
    /// slot opens a new connection if the plan goes on.
    #[inline]
    fn close_after_reply(&self) -> bool {
        false
    }

    /// Asked after each decoded reply: its class, counted per class in the results
    /// (`Counters::classes`; HTTP: the status code / 100). At most `REPLY_CLASSES - 1`.
    #[inline]
    fn reply_class(&self) -> Option<usize> {
        None
    }
    /// A handshake before the first request, or a goodbye after the last: given what
    /// was received so far (first with nothing), append what to send to `out`. The
    /// engine writes it, reads, and calls again until Done or Failed. Sans-IO, so it is
    /// tested with bytes alone. Default: nothing to exchange.
    fn setup(&mut self, _phase: SetupPhase, _input: &[u8], _out: &mut Vec<u8>) -> Setup {
        Setup::Done { used: 0 }
    }

    /// Requests that get no reply (AMQP publishes without confirms): once written they
    /// wait for the connection's closing handshake (`SetupPhase::Close`), and count as
    /// correct only if it completes; a connection that ends any other way ends them as
    /// an error. No latency is recorded for them.
    fn settles_on_write(&self) -> bool {
        false
    }

    /// Settles-on-write protocols only: bytes that arrived while no reply is awaited
    /// (AMQP without confirms hears only a heartbeat or the broker's Connection.Close).
    /// `Ok(n)`: `n` bytes were read past (0: a partial frame, more are needed; the
    /// protocol must refuse one larger than its cap). `Err(kind)`: the connection ends
    /// and its unsettled requests end as `kind`.
    fn decode_idle(&mut self, _input: &[u8]) -> Result<usize, ErrorKind> {
        Err(ErrorKind::Unsolicited)
    }
}

/// How many reply classes `Counters::classes` holds (HTTP: 0 unused, 1xx to 5xx).
pub const REPLY_CLASSES: usize = 6;

/// Makes a protocol client for each new connection.
pub trait ProtocolFactory: Send + Sync + 'static {
    type Client: ClientProtocol;

    /// `conn_id` is unique within the run.
    fn client(&self, conn_id: u64) -> Self::Client;

    /// Churn: each connection sends exactly this many requests (claimed from the plan
    /// before it opens), says goodbye, and its slot opens a new one while the plan lasts.
    fn requests_per_connection(&self) -> Option<u64> {
        None
    }

    /// How long connection slot `slot` (0-based over all threads) waits before its first
    /// connection (a ramp spreading client starts).
    fn start_delay(&self, _slot: usize) -> std::time::Duration {
        std::time::Duration::ZERO
    }
}
