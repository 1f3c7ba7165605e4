//! The AMQP publisher the engine drives. Before the first request: the protocol header,
//! Start/StartOk (PLAIN), Tune/TuneOk, Open/OpenOk, Channel.Open per channel, an
//! optional Queue.Declare and, with confirms, Confirm.Select. A request is one
//! Basic.Publish with its content header and body frames, written from a template
//! built once per channel; its reply is the broker's confirm (one Basic.Ack may confirm
//! several). Without confirms there is no reply: a written publish counts only once its
//! connection ends with Connection.Close answered by CloseOk (then the broker has read
//! everything before it); a connection that ends any other way ends them as errors.

use super::client_figures::ClientFigures;
use super::codec::{self, write_frame, write_method, FrameKind, Split, PROTOCOL_HEADER};
use super::confirms::ChannelConfirms;
use crate::engine::session::{
    ClientSession, Decode, Exchanges, InFlight, Lane, SessionFactory, Setup, Verdict, Words,
};
use crate::stats::ErrorKind;
use amq_protocol::frame::AMQPFrame;
use amq_protocol::protocol::{basic, channel, confirm, connection, queue, AMQPClass};
use amq_protocol::types::{AMQPValue, FieldTable, LongString};
use std::sync::Arc;

/// The largest frame this client asks for (RabbitMQ's default too).
pub const CLIENT_FRAME_MAX: u32 = 131_072;

/// What every connection of a run does.
#[derive(Clone, Debug)]
pub struct ClientOptions {
    pub user: String,
    pub password: String,
    pub vhost: String,
    pub channels: u16,
    pub confirm: bool,
    pub exchange: String,
    pub routing_key: String,
    /// Body bytes per message.
    pub size: usize,
    /// Declared on channel 1 during the handshake (non-durable, not auto-deleted).
    pub declare_queue: Option<String>,
    /// Churn: messages per connection, after which it closes and a new one opens.
    pub per_connection: Option<u64>,
}

/// What every connection of a run shares, built once: the options, the StartOk frame
/// and the message templates for the frame size this client asks for. A connection
/// holds it by an `Arc`, so it copies no string and builds no template of its own.
struct Shared {
    opts: ClientOptions,
    /// Connection.StartOk (PLAIN with the run's user and password), as frame bytes.
    start_ok: Vec<u8>,
    /// Templates for `CLIENT_FRAME_MAX`, what every broker that does not tune the frame
    /// size down leaves it at.
    templates: Templates,
}

/// Publish + header + body frames of one message, per channel (index = channel - 1).
type Templates = Box<[Box<[u8]>]>;

impl Shared {
    fn new(opts: ClientOptions) -> Self {
        let mut start_ok = Vec::new();
        write_method(&mut start_ok, 0, start_ok_method(&opts));
        Shared {
            templates: build_templates(&opts, CLIENT_FRAME_MAX),
            start_ok,
            opts,
        }
    }
}

pub struct AmqpFactory {
    shared: Arc<Shared>,
}

impl AmqpFactory {
    pub fn new(opts: ClientOptions) -> Self {
        AmqpFactory {
            shared: Arc::new(Shared::new(opts)),
        }
    }

    /// Connection policy: churn sends this many messages per connection.
    pub fn per_connection(&self) -> Option<u64> {
        self.shared.opts.per_connection
    }
}

impl SessionFactory for AmqpFactory {
    type Session = AmqpClient;

    fn session(&self, _conn_id: u64) -> AmqpClient {
        AmqpClient::with(self.shared.clone())
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    SendHeader,
    AwaitStart,
    AwaitTune,
    AwaitOpenOk,
    AwaitChannels { left: u16 },
    AwaitDeclareOk,
    AwaitSelectOk { left: u16 },
    Ready,
    AwaitCloseOk,
    Closed,
}

/// One connection: the run's shared part and its own state, nothing more (its
/// handshake stage, the negotiated frame size, each channel's confirms).
pub struct AmqpClient {
    shared: Arc<Shared>,
    stage: Stage,
    frame_max: u32,
    /// Templates rebuilt for a frame size the broker tuned below `CLIENT_FRAME_MAX`;
    /// None: the shared ones.
    retuned: Option<Templates>,
    confirms: Box<[ChannelConfirms]>,
    /// Why the broker ended the connection (a Connection.Close or Channel.Close with
    /// its reason, a frame it should not have sent), until the engine asks for it.
    said: Option<String>,
}

impl AmqpClient {
    /// A connection of its own run (tests, one-off handshakes); a load's connections
    /// come from `AmqpFactory`, sharing one run's part.
    pub fn new(opts: ClientOptions) -> Self {
        AmqpClient::with(Arc::new(Shared::new(opts)))
    }

    fn with(shared: Arc<Shared>) -> Self {
        let channels = shared.opts.channels.max(1) as usize;
        AmqpClient {
            stage: Stage::SendHeader,
            frame_max: CLIENT_FRAME_MAX,
            retuned: None,
            confirms: vec![ChannelConfirms::default(); channels].into_boxed_slice(),
            said: None,
            shared,
        }
    }

    /// The broker ended the connection for `text`: the first such text of the phase
    /// goes to the figures, and this one waits for the engine (`error_words`).
    fn told(&mut self, figures: &mut ClientFigures, text: String) {
        figures.note_broker_close(&text);
        self.said = Some(text);
    }

    fn channels(&self) -> u16 {
        self.shared.opts.channels.max(1)
    }

    /// The channel (index = channel - 1) request `seq` is published on: round-robin.
    #[inline]
    fn channel_index(&self, seq: u64) -> usize {
        (seq % self.channels() as u64) as usize
    }

    fn templates(&self) -> &[Box<[u8]>] {
        self.retuned.as_deref().unwrap_or(&self.shared.templates)
    }
}

/// The per-channel message templates for a frame size.
fn build_templates(opts: &ClientOptions, frame_max: u32) -> Templates {
    let body = vec![0u8; opts.size];
    (1..=opts.channels.max(1))
        .map(|ch| {
            let mut t = Vec::with_capacity(opts.size + 128);
            write_method(
                &mut t,
                ch,
                AMQPClass::Basic(basic::AMQPMethod::Publish(basic::Publish {
                    exchange: opts.exchange.as_str().into(),
                    routing_key: opts.routing_key.as_str().into(),
                    mandatory: false,
                    immediate: false,
                })),
            );
            write_frame(
                &mut t,
                &AMQPFrame::Header(
                    ch,
                    60,
                    Box::new(amq_protocol::frame::AMQPContentHeader {
                        class_id: 60,
                        body_size: opts.size as u64,
                        properties: basic::AMQPProperties::default(),
                    }),
                ),
            );
            codec::write_body(&mut t, ch, &body, frame_max);
            t.into_boxed_slice()
        })
        .collect()
}

/// Connection.StartOk: PLAIN with the run's user and password.
fn start_ok_method(opts: &ClientOptions) -> AMQPClass {
    let mut caps = FieldTable::default();
    caps.insert("publisher_confirms".into(), AMQPValue::Boolean(true));
    caps.insert("basic.nack".into(), AMQPValue::Boolean(true));
    // Ask for a Connection.Close with the reason (e.g. 403) instead of a bare reset.
    caps.insert(
        "authentication_failure_close".into(),
        AMQPValue::Boolean(true),
    );
    let props = codec::peer_properties(caps);
    let mut response = Vec::with_capacity(opts.user.len() + opts.password.len() + 2);
    response.push(0);
    response.extend_from_slice(opts.user.as_bytes());
    response.push(0);
    response.extend_from_slice(opts.password.as_bytes());
    AMQPClass::Connection(connection::AMQPMethod::StartOk(connection::StartOk {
        client_properties: props,
        mechanism: "PLAIN".into(),
        response: LongString::from(response),
        locale: "en_US".into(),
    }))
}

impl AmqpClient {
    /// One step of the opening handshake, on one frame at most. `count`: each frame
    /// that asks for an answer (the protocol header, StartOk, Open, each Channel.Open,
    /// the Queue.Declare, each Confirm.Select) and each answer read (TuneOk has none).
    fn open_step(
        &mut self,
        input: &[u8],
        out: &mut Vec<u8>,
        figures: &mut ClientFigures,
        count: &mut Exchanges,
    ) -> Setup {
        if self.stage == Stage::SendHeader {
            out.extend_from_slice(&PROTOCOL_HEADER);
            count.sent += 1;
            self.stage = Stage::AwaitStart;
            return Setup::Continue { used: 0 };
        }
        if self.stage == Stage::AwaitStart && input.first() == Some(&b'A') {
            return foreign_header(input);
        }
        let (ch, m, used) = match self.next_method(input) {
            Next::Incomplete => return Setup::Continue { used: 0 },
            Next::Skip(used) => return Setup::Continue { used },
            Next::Bad(_, text) => return fail(ErrorKind::ConnectFailed, text),
            Next::Method(ch, m, used) => (ch, m, used),
        };
        count.answered += self.stage.awaits(&m) as u64;
        self.on_open_method(ch, m, used, out, figures, count)
    }

    /// The handshake's answer to method `m` (on channel `ch`, `used` bytes) in its
    /// stage: the next frames out and the next stage, or why it ends.
    fn on_open_method(
        &mut self,
        ch: u16,
        m: AMQPClass,
        used: usize,
        out: &mut Vec<u8>,
        figures: &mut ClientFigures,
        count: &mut Exchanges,
    ) -> Setup {
        use connection::AMQPMethod as C;
        match (self.stage, m) {
            (_, AMQPClass::Connection(C::Close(c))) => {
                write_method(
                    out,
                    0,
                    AMQPClass::Connection(C::CloseOk(connection::CloseOk {})),
                );
                let text = format!(
                    "the broker closed the connection during the handshake: {} {}",
                    c.reply_code, c.reply_text
                );
                figures.note_broker_close(&text);
                fail(ErrorKind::ConnectFailed, text)
            }
            (_, AMQPClass::Channel(channel::AMQPMethod::Close(c))) => {
                let text = format!(
                    "the broker closed channel {ch} during the handshake: {} {}",
                    c.reply_code, c.reply_text
                );
                figures.note_broker_close(&text);
                fail(ErrorKind::ConnectFailed, text)
            }
            (Stage::AwaitStart, AMQPClass::Connection(C::Start(s))) => {
                self.on_start(&s, used, out, count)
            }
            (Stage::AwaitTune, AMQPClass::Connection(C::Tune(t))) => {
                self.on_tune(&t, used, out, count)
            }
            (Stage::AwaitOpenOk, AMQPClass::Connection(C::OpenOk(_))) => {
                self.open_channels(used, out, count)
            }
            (Stage::AwaitChannels { left }, AMQPClass::Channel(channel::AMQPMethod::OpenOk(_))) => {
                self.on_channel_open(left, used, out, count)
            }
            (Stage::AwaitDeclareOk, AMQPClass::Queue(queue::AMQPMethod::DeclareOk(_))) => {
                self.after_declare(used, out, count)
            }
            (
                Stage::AwaitSelectOk { left },
                AMQPClass::Confirm(confirm::AMQPMethod::SelectOk(_)),
            ) => {
                if left > 1 {
                    self.stage = Stage::AwaitSelectOk { left: left - 1 };
                    Setup::Continue { used }
                } else {
                    self.ready(used)
                }
            }
            (stage, m) => fail(
                ErrorKind::ConnectFailed,
                format!(
                    "unexpected method {}.{} from the broker while {}",
                    m.get_amqp_class_id(),
                    m.get_amqp_method_id(),
                    stage.awaiting()
                ),
            ),
        }
    }

    /// Connection.Start: StartOk with PLAIN, which the broker must offer.
    fn on_start(
        &mut self,
        s: &connection::Start,
        used: usize,
        out: &mut Vec<u8>,
        count: &mut Exchanges,
    ) -> Setup {
        let mechs = String::from_utf8_lossy(s.mechanisms.as_bytes()).to_string();
        if !mechs.split(' ').any(|m| m == "PLAIN") {
            return fail(
                ErrorKind::ConnectFailed,
                format!("the broker does not offer PLAIN authentication (only {mechs})"),
            );
        }
        out.extend_from_slice(&self.shared.start_ok);
        count.sent += 1;
        self.stage = Stage::AwaitTune;
        Setup::Continue { used }
    }

    /// Connection.Tune: the channels and the frame size agreed (templates rebuilt for
    /// a smaller frame), then TuneOk and Open.
    fn on_tune(
        &mut self,
        t: &connection::Tune,
        used: usize,
        out: &mut Vec<u8>,
        count: &mut Exchanges,
    ) -> Setup {
        use connection::AMQPMethod as C;
        if t.channel_max != 0 && self.channels() > t.channel_max {
            return fail(
                ErrorKind::ConnectFailed,
                format!(
                    "the broker allows {} channels per connection, fewer than --channels {}",
                    t.channel_max,
                    self.channels()
                ),
            );
        }
        if t.frame_max != 0 && t.frame_max < codec::FRAME_MIN_SIZE {
            return fail(
                ErrorKind::ConnectFailed,
                format!(
                    "the broker offered frame-max {} bytes in Connection.Tune, below the AMQP 0-9-1 minimum of {}",
                    t.frame_max,
                    codec::FRAME_MIN_SIZE
                ),
            );
        }
        self.frame_max = codec::negotiate_frame_max(CLIENT_FRAME_MAX, t.frame_max);
        // Heartbeats off: a benchmark connection is never idle for long, and a
        // heartbeat frame would be a reply nobody asked for.
        write_method(
            out,
            0,
            AMQPClass::Connection(C::TuneOk(connection::TuneOk {
                channel_max: self.channels(),
                frame_max: self.frame_max,
                heartbeat: 0,
            })),
        );
        write_method(
            out,
            0,
            AMQPClass::Connection(C::Open(connection::Open {
                virtual_host: self.shared.opts.vhost.as_str().into(),
            })),
        );
        count.sent += 1;
        if self.frame_max != CLIENT_FRAME_MAX {
            self.retuned = Some(build_templates(&self.shared.opts, self.frame_max));
        }
        self.stage = Stage::AwaitOpenOk;
        Setup::Continue { used }
    }

    /// Connection.OpenOk: Channel.Open on every channel.
    fn open_channels(&mut self, used: usize, out: &mut Vec<u8>, count: &mut Exchanges) -> Setup {
        for ch in 1..=self.channels() {
            write_method(
                out,
                ch,
                AMQPClass::Channel(channel::AMQPMethod::Open(channel::Open {})),
            );
        }
        count.sent += self.channels() as u64;
        self.stage = Stage::AwaitChannels {
            left: self.channels(),
        };
        Setup::Continue { used }
    }

    /// A Channel.OpenOk, `left` of them awaited: after the last, the queue's
    /// declaration when one is asked for.
    fn on_channel_open(
        &mut self,
        left: u16,
        used: usize,
        out: &mut Vec<u8>,
        count: &mut Exchanges,
    ) -> Setup {
        if left > 1 {
            self.stage = Stage::AwaitChannels { left: left - 1 };
            return Setup::Continue { used };
        }
        let Some(q) = self.shared.opts.declare_queue.as_deref() else {
            return self.after_declare(used, out, count);
        };
        write_method(
            out,
            1,
            AMQPClass::Queue(queue::AMQPMethod::Declare(queue::Declare {
                queue: q.into(),
                ..Default::default()
            })),
        );
        count.sent += 1;
        self.stage = Stage::AwaitDeclareOk;
        Setup::Continue { used }
    }

    fn after_declare(&mut self, used: usize, out: &mut Vec<u8>, count: &mut Exchanges) -> Setup {
        if !self.shared.opts.confirm {
            return self.ready(used);
        }
        for ch in 1..=self.channels() {
            write_method(
                out,
                ch,
                AMQPClass::Confirm(confirm::AMQPMethod::Select(confirm::Select {
                    nowait: false,
                })),
            );
        }
        count.sent += self.channels() as u64;
        self.stage = Stage::AwaitSelectOk {
            left: self.channels(),
        };
        Setup::Continue { used }
    }

    fn ready(&mut self, used: usize) -> Setup {
        self.stage = Stage::Ready;
        Setup::Done { used }
    }

    /// One step of the closing handshake: Close out, then everything up to CloseOk
    /// (late confirms, heartbeats) is read past.
    fn close_step(
        &mut self,
        input: &[u8],
        out: &mut Vec<u8>,
        figures: &mut ClientFigures,
        count: &mut Exchanges,
    ) -> Setup {
        use connection::AMQPMethod as C;
        if self.stage != Stage::AwaitCloseOk {
            write_method(
                out,
                0,
                AMQPClass::Connection(C::Close(connection::Close {
                    reply_code: codec::reply::SUCCESS,
                    reply_text: "done".into(),
                    class_id: 0,
                    method_id: 0,
                })),
            );
            count.sent += 1;
            self.stage = Stage::AwaitCloseOk;
            return Setup::Continue { used: 0 };
        }
        match self.next_method(input) {
            Next::Incomplete => Setup::Continue { used: 0 },
            Next::Skip(used) => Setup::Continue { used },
            Next::Bad(_, text) => fail(ErrorKind::ConnectFailed, text),
            Next::Method(_, AMQPClass::Connection(C::CloseOk(_)), used) => {
                count.answered += 1;
                self.stage = Stage::Closed;
                figures.clean_closes += 1;
                Setup::Done { used }
            }
            Next::Method(_, AMQPClass::Connection(C::Close(c)), _) => {
                // The broker closed first (an error it found in what we sent, or its own
                // shutdown): answered, but not a clean close, so nothing unconfirmed counts.
                write_method(
                    out,
                    0,
                    AMQPClass::Connection(C::CloseOk(connection::CloseOk {})),
                );
                self.stage = Stage::Closed;
                let text = format!(
                    "the broker closed the connection: {} {}",
                    c.reply_code, c.reply_text
                );
                figures.note_broker_close(&text);
                fail(ErrorKind::ConnectFailed, text)
            }
            Next::Method(_, _, used) => Setup::Continue { used },
        }
    }

    /// The next frame as a method; heartbeats are skipped, content frames are an error.
    fn next_method(&self, input: &[u8]) -> Next {
        match codec::split_frame(input, self.frame_max) {
            Split::Incomplete => Next::Incomplete,
            Split::Bad(f) => Next::Bad(
                ErrorKind::Protocol,
                format!("the broker sent a bad frame: {}", f.text),
            ),
            Split::TooLarge(_) => Next::Bad(
                ErrorKind::TooLarge,
                format!(
                    "the broker sent a frame larger than the negotiated frame-max of {} bytes",
                    self.frame_max
                ),
            ),
            Split::Frame(f) => match f.kind {
                FrameKind::Heartbeat => Next::Skip(f.used),
                FrameKind::Method => match codec::parse_method(f.payload) {
                    Ok(m) => Next::Method(f.channel, m, f.used),
                    Err(e) => Next::Bad(
                        ErrorKind::Protocol,
                        format!(
                            "the broker sent a method this client cannot parse ({} {}.{})",
                            e.text, e.class_id, e.method_id
                        ),
                    ),
                },
                FrameKind::Header | FrameKind::Body => Next::Bad(
                    ErrorKind::Protocol,
                    "the broker sent message content to a publisher".into(),
                ),
            },
        }
    }
}

enum Next {
    Incomplete,
    Skip(usize),
    /// The connection cannot go on: what its requests end as, and why.
    Bad(ErrorKind, String),
    Method(u16, AMQPClass, usize),
}

fn fail(kind: ErrorKind, detail: String) -> Setup {
    Setup::Failed { kind, detail }
}

/// A server that does not speak 0-9-1 answers the header with the one it does speak.
fn foreign_header(input: &[u8]) -> Setup {
    if input.len() < PROTOCOL_HEADER.len() {
        return Setup::Continue { used: 0 };
    }
    fail(
        ErrorKind::ConnectFailed,
        format!(
            "the server does not speak AMQP 0-9-1 (it answered with protocol header {})",
            header_words(&input[..PROTOCOL_HEADER.len()])
        ),
    )
}

/// A protocol header in words: "AMQP 0.1.0.0" (AMQP 1.0's).
fn header_words(h: &[u8]) -> String {
    let name: String = h[..4]
        .iter()
        .map(|&b| if b.is_ascii_graphic() { b as char } else { '?' })
        .collect();
    let numbers: Vec<String> = h[4..].iter().map(u8::to_string).collect();
    format!("{name} {}", numbers.join("."))
}

impl Stage {
    /// Whether `m` is the answer this stage waits for (an exchange's round trip ends).
    fn awaits(self, m: &AMQPClass) -> bool {
        use connection::AMQPMethod as C;
        matches!(
            (self, m),
            (Stage::AwaitStart, AMQPClass::Connection(C::Start(_)))
                | (Stage::AwaitTune, AMQPClass::Connection(C::Tune(_)))
                | (Stage::AwaitOpenOk, AMQPClass::Connection(C::OpenOk(_)))
                | (
                    Stage::AwaitChannels { .. },
                    AMQPClass::Channel(channel::AMQPMethod::OpenOk(_))
                )
                | (
                    Stage::AwaitDeclareOk,
                    AMQPClass::Queue(queue::AMQPMethod::DeclareOk(_))
                )
                | (
                    Stage::AwaitSelectOk { .. },
                    AMQPClass::Confirm(confirm::AMQPMethod::SelectOk(_))
                )
        )
    }

    /// What the handshake was waiting for, in words.
    fn awaiting(self) -> &'static str {
        match self {
            Stage::SendHeader => "about to send its protocol header",
            Stage::AwaitStart => "waiting for Connection.Start",
            Stage::AwaitTune => "waiting for Connection.Tune",
            Stage::AwaitOpenOk => "waiting for Connection.OpenOk",
            Stage::AwaitChannels { .. } => "waiting for Channel.OpenOk",
            Stage::AwaitDeclareOk => "waiting for Queue.DeclareOk",
            Stage::AwaitSelectOk { .. } => "waiting for Confirm.SelectOk",
            Stage::Ready => "publishing",
            Stage::AwaitCloseOk => "waiting for Connection.CloseOk",
            Stage::Closed => "closed",
        }
    }
}

impl ClientSession for AmqpClient {
    type Figures = ClientFigures;

    fn open(
        &mut self,
        input: &[u8],
        out: &mut Vec<u8>,
        figures: &mut ClientFigures,
        count: &mut Exchanges,
    ) -> Setup {
        self.open_step(input, out, figures, count)
    }

    fn close(
        &mut self,
        input: &[u8],
        out: &mut Vec<u8>,
        figures: &mut ClientFigures,
        count: &mut Exchanges,
    ) -> Setup {
        self.close_step(input, out, figures, count)
    }

    #[inline]
    fn encode(&mut self, seq: u64, _sent_ns: u64, out: &mut Vec<u8>) -> u32 {
        let idx = self.channel_index(seq);
        out.extend_from_slice(&self.templates()[idx]);
        self.confirms[idx].published += 1;
        idx as u32
    }

    /// Each channel is a lane: its confirms count its own delivery tags, and channels
    /// confirm in any order between them.
    #[inline]
    fn lane_of(&self, seq: u64) -> Lane {
        Lane(self.channel_index(seq) as u16 + 1)
    }

    /// Without confirms a publish gets no reply: it counts once its connection closes
    /// cleanly.
    const SETTLES_ON_WRITE: bool = true;

    #[inline]
    fn settles_on_write(&self, _seq: u64) -> bool {
        !self.shared.opts.confirm
    }

    /// One confirm settles the oldest publishes it covers on its channel (a multiple
    /// ack or nack several at once); with nothing awaited, only heartbeats and flow
    /// notices.
    fn decode(
        &mut self,
        input: &[u8],
        oldest: Option<&InFlight>,
        _out: &mut Vec<u8>,
        figures: &mut ClientFigures,
    ) -> Decode {
        if oldest.is_none() {
            return self.decode_idle(input, figures);
        }
        let mut at = 0;
        loop {
            let (ch, m, used) = match self.next_method(&input[at..]) {
                Next::Incomplete if at > 0 => return Decode::Event { used: at },
                Next::Incomplete => return Decode::Incomplete,
                Next::Skip(n) => {
                    at += n;
                    continue;
                }
                Next::Bad(kind, text) => {
                    self.told(figures, text);
                    return Decode::reply(at, Verdict::Fatal(kind));
                }
                Next::Method(ch, m, n) => (ch, m, n),
            };
            at += used;
            let idx = (ch as usize).wrapping_sub(1);
            let (tag, multiple, nack) = match m {
                AMQPClass::Basic(basic::AMQPMethod::Ack(a)) => (a.delivery_tag, a.multiple, false),
                AMQPClass::Basic(basic::AMQPMethod::Nack(n)) => (n.delivery_tag, n.multiple, true),
                // Flow control notices change nothing here.
                AMQPClass::Connection(connection::AMQPMethod::Blocked(_))
                | AMQPClass::Connection(connection::AMQPMethod::Unblocked(_)) => continue,
                AMQPClass::Connection(connection::AMQPMethod::Close(c)) => {
                    self.told(
                        figures,
                        format!(
                            "the broker closed the connection: {} {}",
                            c.reply_code, c.reply_text
                        ),
                    );
                    return fatal(at);
                }
                AMQPClass::Channel(channel::AMQPMethod::Close(c)) => {
                    self.told(
                        figures,
                        format!(
                            "the broker closed channel {ch}: {} {}",
                            c.reply_code, c.reply_text
                        ),
                    );
                    return fatal(at);
                }
                m => {
                    self.told(figures, unexpected(&m));
                    return fatal(at);
                }
            };
            let Some(n) = self
                .confirms
                .get_mut(idx)
                .and_then(|c| c.settle(tag, multiple))
            else {
                self.told(figures, format!(
                    "the broker confirmed delivery tag {tag} on channel {ch}, which was never published"
                ));
                return fatal(at);
            };
            if n == 0 {
                // A repeated confirm: nothing new; look at the next frame.
                continue;
            }
            // At most the publishes in flight (ChannelConfirms checks the tag), so u32.
            let settles = n.min(u32::MAX as u64) as u32;
            let verdict = if nack {
                figures.nacked += n;
                Verdict::Error(ErrorKind::Nack)
            } else {
                Verdict::Ok
            };
            return Decode::Reply {
                used: at,
                settles,
                // `ch` named a channel this connection publishes on (1..=channels).
                lane: Lane(ch),
                verdict,
                close: false,
            };
        }
    }

    /// The broker's close with its reply code and text ("the broker closed channel 1:
    /// 404 NOT_FOUND - no exchange 'x' in vhost '/'"), or what it sent that a
    /// publisher cannot follow. A nack has no words.
    fn error_words(&mut self, _kind: ErrorKind, _input: &[u8], words: &mut Words) {
        if let Some(text) = self.said.take() {
            words.push(text.as_bytes());
        }
    }
}

impl AmqpClient {
    /// Nothing awaited (no confirms, or all confirmed): heartbeats and flow notices are
    /// read past; the broker's Connection.Close or Channel.Close means it dropped what
    /// it had not read.
    fn decode_idle(&mut self, input: &[u8], figures: &mut ClientFigures) -> Decode {
        let (ch, m, used) = match self.next_method(input) {
            Next::Incomplete => return Decode::Incomplete,
            Next::Skip(n) => return Decode::Event { used: n },
            Next::Bad(kind, text) => {
                self.told(figures, text);
                return Decode::Fail { kind };
            }
            Next::Method(ch, m, n) => (ch, m, n),
        };
        let text = match m {
            AMQPClass::Connection(connection::AMQPMethod::Blocked(_))
            | AMQPClass::Connection(connection::AMQPMethod::Unblocked(_)) => {
                return Decode::Event { used }
            }
            AMQPClass::Connection(connection::AMQPMethod::Close(c)) => format!(
                "the broker closed the connection: {} {}",
                c.reply_code, c.reply_text
            ),
            AMQPClass::Channel(channel::AMQPMethod::Close(c)) => format!(
                "the broker closed channel {ch}: {} {}",
                c.reply_code, c.reply_text
            ),
            m => {
                self.told(figures, unexpected(&m));
                return Decode::Fail {
                    kind: ErrorKind::Protocol,
                };
            }
        };
        self.told(figures, text);
        Decode::Fail {
            kind: ErrorKind::Closed,
        }
    }
}

/// A method a publisher does not expect, in words.
fn unexpected(m: &AMQPClass) -> String {
    format!(
        "the broker sent method {}.{} to a publisher",
        m.get_amqp_class_id(),
        m.get_amqp_method_id()
    )
}

fn fatal(used: usize) -> Decode {
    Decode::reply(used, Verdict::Fatal(ErrorKind::Protocol))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_runs_connections_share_its_options_and_templates_and_hold_only_their_confirms() {
        let f = AmqpFactory::new(ClientOptions {
            user: "guest".into(),
            password: "guest".into(),
            vhost: "/".into(),
            channels: 3,
            confirm: true,
            exchange: String::new(),
            routing_key: "rk".into(),
            size: 100_000,
            declare_queue: Some("q".into()),
            per_connection: None,
        });
        let (a, b) = (f.session(0), f.session(1));
        assert!(Arc::ptr_eq(&a.shared, &b.shared));
        assert_eq!(Arc::strong_count(&f.shared), 3);
        // The shared templates, one per channel; none of the connection's own.
        assert!(a.retuned.is_none());
        assert_eq!(a.templates().len(), 3);
        assert!(std::ptr::eq(a.templates(), b.templates()));
        assert_eq!(a.confirms.len(), 3);
    }
}
