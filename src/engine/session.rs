//! The client session seam: what a protocol gives the engine for one connection.
//!
//! Sans-IO: a session sees bytes and appends bytes; the engine owns sockets, time,
//! counting and connection policy (requests per connection, reconnects, the ramp).
//! One mechanism per need:
//! - open and close exchanges (a handshake, a goodbye): `open`, `close`, on every plan,
//!   their requests and answers counted for every protocol alike (`Exchanges`);
//! - replies, one or several requests settled at once with one verdict
//!   (`Decode::Reply { settles }`: an AMQP multiple ack or nack), the oldest in send
//!   order or the oldest of one lane (`Lane`: an AMQP channel);
//! - requests that settle on write, request by request (`ClientSession::settles_on_write`:
//!   an AMQP publish without confirms, a memcached `noreply`, an MQTT QoS 0 publish
//!   beside QoS 1);
//! - events that arrive with or without anything in flight (`Decode::Event`: a ping,
//!   a push, a heartbeat), answered through `out` without dropping the connection;
//! - replies that run to the close (`decode_at_close`);
//! - the protocol's own figures (`Figures`), kept per worker and phase, merged exactly;
//! - a failed opening exchange with any kind (`Setup::Failed`, `opening_failure`);
//! - the peer's words for an error (`ClientSession::error_words`), kept as a bounded
//!   sample of error texts (`tell`).

use crate::stats::{ErrorKind, ErrorTexts, Figures};
pub use crate::stats::{Exchanges, Words};

/// Which of a connection's independent reply streams a request belongs to: replies
/// of one lane come in its send order, but lanes may answer in any order between
/// them (AMQP confirms per channel). Most protocols have one stream: every request
/// goes on `Lane::ANY` and every reply settles the oldest in send order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Lane(pub u16);

impl Lane {
    /// As a request's lane: the protocol has one stream. As a reply's: it settles the
    /// oldest requests in send order, whatever their lane.
    pub const ANY: Lane = Lane(0);
}

/// A request on the wire, awaiting its reply. Kept by the engine in send order.
#[derive(Clone, Copy, Debug)]
pub struct InFlight {
    pub seq: u64,
    /// When the schedule wanted it sent (open loop); equal to `sent_ns` in closed loop.
    pub intended_ns: u64,
    pub sent_ns: u64,
    /// Protocol-owned detail of the request (for echo: its payload length).
    pub tag: u32,
    /// The lane it went out on (`ClientSession::lane_of`); in the entry's padding.
    pub lane: Lane,
    /// Sent after the warm-up, so it counts in the results.
    pub measured: bool,
    /// It gets no reply (`ClientSession::settles_on_write`): it leaves the queue once
    /// written; in the entry's padding.
    pub on_write: bool,
}

#[derive(Debug, PartialEq, Eq, Clone, Copy)]
pub enum Verdict {
    Ok,
    /// A wrong reply; the stream is still in step, so the connection goes on.
    Error(ErrorKind),
    /// A wrong reply after which the stream cannot be trusted: the connection is dropped.
    Fatal(ErrorKind),
}

/// One step of a connection-level exchange (`open`, `close`).
#[derive(Debug, PartialEq, Eq)]
pub enum Setup {
    /// More to come: `used` input bytes were consumed; with none used, more input is needed.
    Continue { used: usize },
    /// Finished after `used` bytes; anything after them belongs to the requests.
    Done { used: usize },
    /// `used` bytes (> 0) are an event from the peer in the middle of the exchange (a
    /// push before the answer, a ping before the close): counted as an event, as
    /// `Decode::Event` is while requests run, and the session is asked again about the
    /// bytes after them.
    Event { used: usize },
    /// The peer refused or broke the exchange; the connection counts as failed.
    /// `kind` is the protocol's own (a refusal is `Status`, a broken answer `Protocol`,
    /// an answer past a cap `TooLarge`): see `opening_failure` for how it is counted.
    Failed { kind: ErrorKind, detail: String },
}

/// How a failed opening exchange is counted. No request went out on the connection,
/// so a request-level kind cannot be counted as one (sent = ok + errors + in_flight
/// would break): the connection counts as a failed attempt, `connect_failed`, like
/// any other connection that never became ready, and the protocol's kind leads its
/// detail (`handshake failed (status): ...`), which the report shows for the first
/// one. A connection-level kind (`ConnectTimeout`, `Tls`, ...) is counted as itself.
pub fn opening_failure(kind: ErrorKind, detail: String) -> (ErrorKind, String) {
    if kind.is_connect() {
        (kind, detail)
    } else {
        let why = kind.name();
        (
            ErrorKind::ConnectFailed,
            format!("handshake failed ({why}): {detail}"),
        )
    }
}

/// What the session makes of the bytes received so far.
#[derive(Debug, PartialEq, Eq)]
pub enum Decode {
    /// Nothing complete yet: read more.
    Incomplete,
    /// `used` bytes complete the replies to the oldest `settles` requests in flight
    /// (>= 1; more than one for a multiple acknowledgement) on `lane` (`Lane::ANY`:
    /// the oldest in send order; another lane: the oldest of that lane, in order,
    /// the others left in place), all judged `verdict`. Fewer than `settles` on
    /// the lane is a reply nobody asked for (`unsolicited`).
    /// With `close`, the connection is closed after it (HTTP `Connection: close`):
    /// requests still in flight end as `closed` and the slot reconnects if the plan
    /// goes on.
    Reply {
        used: usize,
        settles: u32,
        lane: Lane,
        verdict: Verdict,
        close: bool,
    },
    /// Not complete, but its first `used` bytes (> 0) are checked and need not be
    /// kept (an interim HTTP 1xx, body bytes already counted): dropped, counted with
    /// the oldest reply, and the session is asked again about the bytes after them.
    Consumed { used: usize },
    /// `used` bytes (> 0) are an event from the peer, not a reply (a ping, a push, a
    /// heartbeat): counted as an event; what the session appended to `out` is written.
    /// Allowed with or without requests in flight. An answer that a later event
    /// supersedes (a pong: RFC 6455 5.5.3) is better held and given in `owed`.
    Event { used: usize },
    /// The connection cannot go on (bytes nobody asked for, the peer's goodbye in the
    /// middle of the run): it is dropped and its unsettled requests end as `kind`.
    Fail { kind: ErrorKind },
}

impl Decode {
    /// One reply settling the oldest request.
    #[inline]
    pub fn reply(used: usize, verdict: Verdict) -> Decode {
        Decode::Reply {
            used,
            settles: 1,
            lane: Lane::ANY,
            verdict,
            close: false,
        }
    }
}

/// One connection's protocol state on the client side.
pub trait ClientSession: 'static {
    type Figures: Figures;

    /// The opening exchange (a handshake), before the first request: given what was
    /// received so far (first with nothing), append what to send to `out`. Called
    /// again only with more input (or after `Continue` used some), until `Done` or
    /// `Failed`. `figures`: those of the phase now (a broker's refusal is noted there).
    /// `count`: add to `sent` each request (command) appended to `out` that expects an
    /// answer, and to `answered` each answer consumed (a refusal too), so every
    /// protocol's handshake round trips are counted the same way (the result's
    /// `totals.exchange_sent` and `exchange_answered`). Default: nothing to exchange.
    fn open(
        &mut self,
        _input: &[u8],
        _out: &mut Vec<u8>,
        _figures: &mut Self::Figures,
        _count: &mut Exchanges,
    ) -> Setup {
        Setup::Done { used: 0 }
    }

    /// The closing exchange (a goodbye) after the last reply, same rules as `open`.
    fn close(
        &mut self,
        _input: &[u8],
        _out: &mut Vec<u8>,
        _figures: &mut Self::Figures,
        _count: &mut Exchanges,
    ) -> Setup {
        Setup::Done { used: 0 }
    }

    /// Appends request `seq`, sent at `sent_ns`, to `out`; returns its tag.
    fn encode(&mut self, seq: u64, sent_ns: u64, out: &mut Vec<u8>) -> u32;

    /// The lane request `seq` goes out on, asked once per request as it is encoded:
    /// a reply that names a lane settles that lane's oldest. Default: one lane, so
    /// every reply settles the oldest in send order.
    #[inline(always)]
    fn lane_of(&self, _seq: u64) -> Lane {
        Lane::ANY
    }

    /// Whether request `seq` gets no reply (an AMQP publish without confirms, a
    /// memcached `noreply`, an MQTT QoS 0 publish): asked once per request as it is
    /// encoded, as `lane_of`. Such a request leaves the pipeline once written and waits
    /// for the closing exchange: it counts as correct only if that completes, and a
    /// connection that ends any other way ends it as an error; no latency is recorded
    /// for it. Replies settle the requests that wait for one, in their order, passing
    /// over these. Asked only of a protocol that says `SETTLES_ON_WRITE`. Default:
    /// every request gets a reply.
    #[inline(always)]
    fn settles_on_write(&self, _seq: u64) -> bool {
        false
    }

    /// Whether any request of this protocol may settle on write (`settles_on_write`):
    /// the engine's bookkeeping for such requests compiles away for a protocol whose
    /// requests all get replies (measured: 25 instructions per echo message when it
    /// was asked at run time).
    const SETTLES_ON_WRITE: bool = false;

    /// Looks at the start of `input`. `oldest` is the oldest request awaiting a reply,
    /// or None when none is (nothing in flight, or only requests that settle on write): then
    /// only an `Event`, `Incomplete` or `Fail` makes sense. `figures` are those of the
    /// oldest request's phase (warm-up or measured).
    fn decode(
        &mut self,
        input: &[u8],
        oldest: Option<&InFlight>,
        out: &mut Vec<u8>,
        figures: &mut Self::Figures,
    ) -> Decode;

    /// Answers the session holds back until everything the connection wrote before
    /// them is out (a pong owed for the latest ping only, so a peer that floods pings
    /// while it reads slowly is owed one pong, not one per ping): appended to `out`.
    /// Asked whenever the connection's earlier output has gone, in every phase.
    /// Default: none held.
    #[inline(always)]
    fn owed(&mut self, _out: &mut Vec<u8>) {}

    /// The peer closed with `input` (a partial reply to `oldest`) unread: a reply that
    /// runs to the close (an HTTP/1.0 body) is complete now. Default: none is.
    fn decode_at_close(
        &mut self,
        _input: &[u8],
        _oldest: &InFlight,
        _figures: &mut Self::Figures,
    ) -> Decode {
        Decode::Incomplete
    }

    /// The peer's words for the error of `kind` the last `decode` (or
    /// `decode_at_close`) reported: a reply judged `Error` or `Fatal`, or a `Fail`.
    /// Asked once, right after it, only in the measured phase, never for a correct
    /// reply; `input` is what that call was given (the reply starts it). Put the words
    /// in `words` (an HTTP status line and the start of its body, a Redis error reply,
    /// a close code and reason): a fixed buffer, which cuts what does not fit. Leave it
    /// empty when the kind says it all. Default: no words.
    fn error_words(&mut self, _kind: ErrorKind, _input: &[u8], _words: &mut Words) {}
}

/// Asks `session` for its words about an error of `kind` that ended `n` requests (or
/// a connection, `n` = 1) and counts them in `texts`. Off the success path, and out of
/// line so its buffer is not in the decode loop's frame.
#[cold]
#[inline(never)]
pub fn tell<S: ClientSession>(
    session: &mut S,
    input: &[u8],
    kind: ErrorKind,
    n: u64,
    texts: &mut ErrorTexts,
) {
    let mut words = Words::new();
    session.error_words(kind, input, &mut words);
    texts.note(kind, &words, n);
}

/// Makes a session for each new connection of a run.
pub trait SessionFactory: Send + Sync + 'static {
    type Session: ClientSession;

    /// `conn_id` is unique within the run.
    fn session(&self, conn_id: u64) -> Self::Session;
}

/// A factory whose connection ids all carry `base` (a shard's index in the top bits,
/// `shard::Shard::connection_id_base`), so ids stay unique over every generator of a
/// sharded run: echo frames carry them, and they seed each connection's sizes.
pub struct OffsetIds<F> {
    pub inner: F,
    pub base: u64,
}

impl<F: SessionFactory> SessionFactory for OffsetIds<F> {
    type Session = F::Session;

    #[inline]
    fn session(&self, conn_id: u64) -> F::Session {
        self.inner.session(self.base | conn_id)
    }
}
