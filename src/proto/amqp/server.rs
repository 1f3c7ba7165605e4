//! The dummy broker (`wirebench serve amqp`): walks the connection handshake, answers
//! the channel, exchange, queue, qos and confirm methods a publisher uses, parses and
//! counts every published message (method, header and body frames), and confirms them
//! when asked. Anything malformed or out of place gets a Connection.Close with the
//! spec's reply code; only that connection ends.

use super::codec::{self, reply, write_method, FrameKind, Split, PROTOCOL_HEADER};
use crate::server::session::{Reply, ServerFactory, ServerSession};
use crate::stats::Figures;
use amq_protocol::frame::parsing::parse_content_header;
use amq_protocol::protocol::{basic, channel, confirm, connection, exchange, queue, AMQPClass};
use amq_protocol::types::{AMQPValue, FieldTable, LongString};
use codec::Fault;

/// What `serve amqp` offers in Connection.Tune, and how it confirms.
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
pub struct BrokerConfig {
    pub channel_max: u16,
    pub frame_max: u32,
    pub heartbeat: u16,
    /// One Basic.Ack (multiple) per channel per read instead of one per message.
    pub ack_multiple: bool,
}

impl Default for BrokerConfig {
    fn default() -> Self {
        BrokerConfig {
            channel_max: 2047,
            frame_max: 131_072,
            heartbeat: 60,
            ack_multiple: false,
        }
    }
}

/// The broker's own figures (its server `Figures`): kept per server thread, added to
/// once per read (not per message), merged exactly over threads and worker processes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct BrokerTotals {
    /// Connections that completed the handshake (Connection.OpenOk sent).
    pub opened: u64,
    pub messages: u64,
    pub body_bytes: u64,
    /// Messages confirmed (by one Basic.Ack each, or several per multiple ack).
    pub confirmed: u64,
    pub ack_frames: u64,
    /// Connection.Close from the client, answered with CloseOk.
    pub clean_closes: u64,
    /// Connections this broker closed for a protocol error (wrong header included).
    pub faults: u64,
}

impl Figures for BrokerTotals {
    fn merge(&mut self, o: &BrokerTotals) {
        self.opened += o.opened;
        self.messages += o.messages;
        self.body_bytes += o.body_bytes;
        self.confirmed += o.confirmed;
        self.ack_frames += o.ack_frames;
        self.clean_closes += o.clean_closes;
        self.faults += o.faults;
    }
}

impl BrokerTotals {
    pub fn line(&self) -> String {
        use crate::report::format::group;
        format!(
            "amqp: connections opened {} messages {} body bytes {} confirmed {} ack frames {} clean closes {} faults {}",
            group(self.opened),
            group(self.messages),
            group(self.body_bytes),
            group(self.confirmed),
            group(self.ack_frames),
            group(self.clean_closes),
            group(self.faults)
        )
    }
}

#[derive(Clone)]
pub struct AmqpHandlerFactory {
    pub config: BrokerConfig,
}

impl AmqpHandlerFactory {
    pub fn new(config: BrokerConfig) -> Self {
        AmqpHandlerFactory { config }
    }
}

impl ServerFactory for AmqpHandlerFactory {
    type Session = AmqpHandler;
    type Thread = ();

    fn thread_state(&self) {}

    fn session(&self) -> AmqpHandler {
        AmqpHandler {
            cfg: self.config,
            stage: Stage::Header,
            frame_max: self.config.frame_max,
            channels: Vec::new(),
            dirty: Vec::new(),
            tally: BrokerTotals::default(),
            queues_named: 0,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    Header,
    StartOk,
    TuneOk,
    Open,
    Running,
}

/// Where a channel is in receiving a message's content.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Content {
    #[default]
    Idle,
    /// Basic.Publish seen; its content header comes next.
    AwaitHeader,
    /// Body frames still owe this many bytes of a message of `size`.
    Body { left: u64, size: u64 },
}

#[derive(Clone, Copy, Debug, Default)]
struct ChannelState {
    open: bool,
    confirm: bool,
    content: Content,
    /// Messages completed on this channel (their delivery tags are 1..=published).
    published: u64,
    acked: u64,
}

pub struct AmqpHandler {
    cfg: BrokerConfig,
    stage: Stage,
    /// Negotiated in Tune/TuneOk.
    frame_max: u32,
    /// Indexed by channel id - 1; grown to the highest channel opened, exactly (a
    /// one-channel publisher's connection holds one).
    channels: Vec<ChannelState>,
    /// Channels with unconfirmed messages, acked at the end of the read (--ack-multiple).
    dirty: Vec<u16>,
    /// Counts of the read under way, added to the thread's figures once at its end.
    tally: BrokerTotals,
    queues_named: u64,
}

/// What one frame asks of the connection.
enum Step {
    Continue,
    /// The client closed cleanly (CloseOk written): close after writing.
    Close,
}

impl ServerSession for AmqpHandler {
    type Figures = BrokerTotals;

    fn on_bytes(&mut self, input: &[u8], out: &mut Vec<u8>, figures: &mut BrokerTotals) -> Reply {
        let reply = self.process(input, out);
        self.flush_acks(out);
        figures.merge(&std::mem::take(&mut self.tally));
        reply
    }
}

impl AmqpHandler {
    fn process(&mut self, input: &[u8], out: &mut Vec<u8>) -> Reply {
        let mut pos = 0;
        if self.stage == Stage::Header {
            let n = input.len().min(PROTOCOL_HEADER.len());
            if input[..n] != PROTOCOL_HEADER[..n] {
                // The spec's answer to a header it does not support: its own header, then close.
                out.extend_from_slice(&PROTOCOL_HEADER);
                self.tally.faults += 1;
                return Reply::Close;
            }
            if n < PROTOCOL_HEADER.len() {
                return Reply::Consumed(0);
            }
            out.extend_from_slice(&START);
            self.stage = Stage::StartOk;
            pos = PROTOCOL_HEADER.len();
        }
        loop {
            match codec::split_frame(&input[pos..], self.frame_max) {
                Split::Incomplete => return Reply::Consumed(pos),
                Split::Bad(f) | Split::TooLarge(f) => return self.fail(f, out),
                Split::Frame(frame) => {
                    pos += frame.used;
                    match self.on_frame(frame, out) {
                        Ok(Step::Continue) => {}
                        Ok(Step::Close) => return Reply::Close,
                        Err(f) => return self.fail(f, out),
                    }
                }
            }
        }
    }

    /// Ends the connection with Connection.Close carrying the fault's reply code.
    fn fail(&mut self, f: Fault, out: &mut Vec<u8>) -> Reply {
        // Nothing is confirmed after a Connection.Close.
        self.dirty.clear();
        self.tally.faults += 1;
        write_method(
            out,
            0,
            AMQPClass::Connection(connection::AMQPMethod::Close(connection::Close {
                reply_code: f.code,
                reply_text: f.text.into(),
                class_id: f.class_id,
                method_id: f.method_id,
            })),
        );
        Reply::Close
    }
}

/// Connection.Start as frame bytes: the same for every connection (it depends on no
/// setting), so built once, not per accept.
static START: std::sync::LazyLock<Vec<u8>> = std::sync::LazyLock::new(|| {
    let mut out = Vec::new();
    write_method(&mut out, 0, start_method());
    out
});

/// Where channel `id` sits in a connection's `channels`: ids run from 1, channel 0 is
/// the connection's own and has none.
fn channel_index(id: u16) -> Option<usize> {
    (id as usize).checked_sub(1)
}

fn start_method() -> AMQPClass {
    let mut caps = FieldTable::default();
    for cap in [
        "publisher_confirms",
        "basic.nack",
        "exchange_exchange_bindings",
        "consumer_cancel_notify",
        "authentication_failure_close",
    ] {
        caps.insert(cap.into(), AMQPValue::Boolean(true));
    }
    let mut props = codec::peer_properties(caps);
    props.insert(
        "platform".into(),
        AMQPValue::LongString(LongString::from("Rust")),
    );
    AMQPClass::Connection(connection::AMQPMethod::Start(connection::Start {
        version_major: 0,
        version_minor: 9,
        server_properties: props,
        mechanisms: "PLAIN".into(),
        locales: "en_US".into(),
    }))
}

impl AmqpHandler {
    fn on_frame(&mut self, frame: codec::Frame<'_>, out: &mut Vec<u8>) -> Result<Step, Fault> {
        match frame.kind {
            FrameKind::Heartbeat => {
                if frame.channel != 0 {
                    return Err(Fault::frame(
                        reply::FRAME_ERROR,
                        "heartbeat on a channel other than 0",
                    ));
                }
                // The runtime gives a handler no timer, so the broker answers each
                // heartbeat with one: an idle client (pika) still hears from it in time.
                codec::write_frame(out, &amq_protocol::frame::AMQPFrame::Heartbeat(0));
                Ok(Step::Continue)
            }
            FrameKind::Method => {
                let m = codec::parse_method(frame.payload)?;
                self.on_method(frame.channel, m, out)
            }
            FrameKind::Header => {
                let ch = self.channel_for_content(frame.channel)?;
                if ch.content != Content::AwaitHeader {
                    return Err(Fault::frame(
                        reply::UNEXPECTED_FRAME,
                        "content header without Basic.Publish",
                    ));
                }
                let h = match parse_content_header(frame.payload) {
                    Ok(([], h)) => h,
                    _ => return Err(Fault::frame(reply::FRAME_ERROR, "malformed content header")),
                };
                if h.class_id != 60 {
                    return Err(Fault::frame(
                        reply::FRAME_ERROR,
                        "content header of a class other than basic",
                    ));
                }
                ch.content = Content::Body {
                    left: h.body_size,
                    size: h.body_size,
                };
                if h.body_size == 0 {
                    self.message_done(frame.channel, 0, out);
                }
                Ok(Step::Continue)
            }
            FrameKind::Body => {
                let ch = self.channel_for_content(frame.channel)?;
                let Content::Body { left, size } = ch.content else {
                    return Err(Fault::frame(
                        reply::UNEXPECTED_FRAME,
                        "content body without a content header",
                    ));
                };
                let n = frame.payload.len() as u64;
                if n > left {
                    return Err(Fault::frame(
                        reply::FRAME_ERROR,
                        "content body longer than its header said",
                    ));
                }
                ch.content = Content::Body {
                    left: left - n,
                    size,
                };
                if n == left {
                    self.message_done(frame.channel, size, out);
                }
                Ok(Step::Continue)
            }
        }
    }

    /// Channel `id`'s state, if it was ever opened on this connection.
    fn channel_mut(&mut self, id: u16) -> Option<&mut ChannelState> {
        self.channels.get_mut(channel_index(id)?)
    }

    /// The open channel a content frame belongs to (channel id already range-checked by open).
    fn channel_for_content(&mut self, id: u16) -> Result<&mut ChannelState, Fault> {
        if self.stage != Stage::Running {
            return Err(Fault::frame(
                reply::UNEXPECTED_FRAME,
                "content before the connection is open",
            ));
        }
        match self.channel_mut(id) {
            Some(c) if c.open => Ok(c),
            _ => Err(Fault::frame(
                reply::CHANNEL_ERROR,
                "content on a channel that is not open",
            )),
        }
    }

    fn message_done(&mut self, id: u16, size: u64, out: &mut Vec<u8>) {
        // An open channel's (channel_for_content found it), so ids run from 1.
        let ch = &mut self.channels[id as usize - 1];
        ch.content = Content::Idle;
        ch.published += 1;
        self.tally.messages += 1;
        self.tally.body_bytes += size;
        if !ch.confirm {
            return;
        }
        if self.cfg.ack_multiple {
            if ch.published == ch.acked + 1 {
                self.dirty.push(id);
            }
        } else {
            ch.acked = ch.published;
            self.tally.confirmed += 1;
            self.tally.ack_frames += 1;
            write_ack(out, id, ch.published, false);
        }
    }

    /// --ack-multiple: one Basic.Ack per channel for everything completed in this read.
    fn flush_acks(&mut self, out: &mut Vec<u8>) {
        for id in self.dirty.drain(..) {
            let Some(ch) = channel_index(id).and_then(|i| self.channels.get_mut(i)) else {
                continue;
            };
            if ch.open && ch.published > ch.acked {
                self.tally.confirmed += ch.published - ch.acked;
                self.tally.ack_frames += 1;
                ch.acked = ch.published;
                write_ack(out, id, ch.published, true);
            }
        }
    }

    fn on_method(&mut self, ch: u16, m: AMQPClass, out: &mut Vec<u8>) -> Result<Step, Fault> {
        use connection::AMQPMethod as C;
        let unexpected = |m: &AMQPClass| Fault {
            code: reply::COMMAND_INVALID,
            text: "method not valid here",
            class_id: m.get_amqp_class_id(),
            method_id: m.get_amqp_method_id(),
        };
        // A method on a channel whose message content is incomplete breaks the content.
        if let Some(c) = channel_index(ch).and_then(|i| self.channels.get(i)) {
            if c.content != Content::Idle {
                return Err(Fault::frame(
                    reply::UNEXPECTED_FRAME,
                    "method frame inside message content",
                ));
            }
        }
        match (self.stage, &m) {
            (Stage::StartOk, AMQPClass::Connection(C::StartOk(_))) if ch == 0 => {
                write_method(
                    out,
                    0,
                    AMQPClass::Connection(C::Tune(connection::Tune {
                        channel_max: self.cfg.channel_max,
                        frame_max: self.cfg.frame_max,
                        heartbeat: self.cfg.heartbeat,
                    })),
                );
                self.stage = Stage::TuneOk;
                Ok(Step::Continue)
            }
            (Stage::TuneOk, AMQPClass::Connection(C::TuneOk(t))) if ch == 0 => {
                if t.frame_max != 0 && t.frame_max < codec::FRAME_MIN_SIZE {
                    return Err(Fault::frame(
                        reply::SYNTAX_ERROR,
                        "frame_max below the spec's minimum",
                    ));
                }
                // From here on a frame larger than the client's own limit is a 501.
                self.frame_max = codec::negotiate_frame_max(self.cfg.frame_max, t.frame_max);
                self.stage = Stage::Open;
                Ok(Step::Continue)
            }
            (Stage::Open, AMQPClass::Connection(C::Open(_))) if ch == 0 => {
                write_method(
                    out,
                    0,
                    AMQPClass::Connection(C::OpenOk(connection::OpenOk {})),
                );
                self.stage = Stage::Running;
                self.tally.opened += 1;
                Ok(Step::Continue)
            }
            (_, AMQPClass::Connection(C::Close(_))) if ch == 0 => {
                // Confirms of this read go out before the CloseOk.
                self.flush_acks(out);
                write_method(
                    out,
                    0,
                    AMQPClass::Connection(C::CloseOk(connection::CloseOk {})),
                );
                self.tally.clean_closes += 1;
                Ok(Step::Close)
            }
            (Stage::Running, AMQPClass::Connection(_)) => Err(unexpected(&m)),
            (Stage::Running, _) => self.on_channel_method(ch, m, out),
            _ => Err(unexpected(&m)),
        }
    }

    fn on_channel_method(
        &mut self,
        id: u16,
        m: AMQPClass,
        out: &mut Vec<u8>,
    ) -> Result<Step, Fault> {
        let ids = (m.get_amqp_class_id(), m.get_amqp_method_id());
        let fault = |code, text| Fault {
            code,
            text,
            class_id: ids.0,
            method_id: ids.1,
        };
        if id == 0 || id > self.cfg.channel_max {
            return Err(fault(reply::CHANNEL_ERROR, "channel id out of range"));
        }
        // Channel ids run from 1 (checked above).
        let idx = id as usize - 1;
        if let AMQPClass::Channel(channel::AMQPMethod::Open(_)) = m {
            if self.channels.len() <= idx {
                // Exactly: a connection keeps this while idle, so no growth slack.
                self.channels.reserve_exact(idx + 1 - self.channels.len());
                self.channels.resize(idx + 1, ChannelState::default());
            }
            if self.channels[idx].open {
                return Err(fault(reply::CHANNEL_ERROR, "channel already open"));
            }
            self.channels[idx] = ChannelState {
                open: true,
                ..ChannelState::default()
            };
            write_method(
                out,
                id,
                AMQPClass::Channel(channel::AMQPMethod::OpenOk(channel::OpenOk {})),
            );
            return Ok(Step::Continue);
        }
        if !self.channels.get(idx).is_some_and(|c| c.open) {
            return Err(fault(reply::CHANNEL_ERROR, "channel not open"));
        }
        let ch = &mut self.channels[idx];
        match m {
            AMQPClass::Basic(basic::AMQPMethod::Publish(_)) => ch.content = Content::AwaitHeader,
            AMQPClass::Channel(channel::AMQPMethod::Close(_)) => {
                *ch = ChannelState::default();
                write_method(
                    out,
                    id,
                    AMQPClass::Channel(channel::AMQPMethod::CloseOk(channel::CloseOk {})),
                );
            }
            // This broker never closes a channel by itself, so a CloseOk has nothing to answer.
            AMQPClass::Channel(channel::AMQPMethod::CloseOk(_)) => {}
            AMQPClass::Exchange(exchange::AMQPMethod::Declare(d)) => {
                if !d.nowait {
                    write_method(
                        out,
                        id,
                        AMQPClass::Exchange(exchange::AMQPMethod::DeclareOk(
                            exchange::DeclareOk {},
                        )),
                    );
                }
            }
            AMQPClass::Queue(queue::AMQPMethod::Declare(d)) => {
                if !d.nowait {
                    // A server-named queue gets a fresh name, as RabbitMQ's amq.gen-*.
                    let name = if d.queue.as_str().is_empty() {
                        self.queues_named += 1;
                        format!("amq.gen-wirebench-{}", self.queues_named).into()
                    } else {
                        d.queue
                    };
                    write_method(
                        out,
                        id,
                        AMQPClass::Queue(queue::AMQPMethod::DeclareOk(queue::DeclareOk {
                            queue: name,
                            message_count: 0,
                            consumer_count: 0,
                        })),
                    );
                }
            }
            AMQPClass::Queue(queue::AMQPMethod::Bind(b)) => {
                if !b.nowait {
                    write_method(
                        out,
                        id,
                        AMQPClass::Queue(queue::AMQPMethod::BindOk(queue::BindOk {})),
                    );
                }
            }
            AMQPClass::Basic(basic::AMQPMethod::Qos(_)) => {
                write_method(
                    out,
                    id,
                    AMQPClass::Basic(basic::AMQPMethod::QosOk(basic::QosOk {})),
                );
            }
            AMQPClass::Confirm(confirm::AMQPMethod::Select(s)) => {
                ch.confirm = true;
                if !s.nowait {
                    write_method(
                        out,
                        id,
                        AMQPClass::Confirm(confirm::AMQPMethod::SelectOk(confirm::SelectOk {})),
                    );
                }
            }
            _ => {
                return Err(fault(
                    reply::NOT_IMPLEMENTED,
                    "method not implemented by this broker",
                ))
            }
        }
        Ok(Step::Continue)
    }
}

fn write_ack(out: &mut Vec<u8>, channel: u16, tag: u64, multiple: bool) {
    write_method(
        out,
        channel,
        AMQPClass::Basic(basic::AMQPMethod::Ack(basic::Ack {
            delivery_tag: tag,
            multiple,
        })),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_one_channel_connection_holds_one_channel_state() {
        let mut h = AmqpHandlerFactory::new(BrokerConfig::default()).session();
        let mut input = PROTOCOL_HEADER.to_vec();
        use connection::AMQPMethod as C;
        let start_ok = connection::StartOk {
            client_properties: FieldTable::default(),
            mechanism: "PLAIN".into(),
            response: LongString::from(b"\0guest\0guest".to_vec()),
            locale: "en_US".into(),
        };
        let tune_ok = connection::TuneOk {
            channel_max: 1,
            frame_max: 131_072,
            heartbeat: 0,
        };
        for m in [
            AMQPClass::Connection(C::StartOk(start_ok)),
            AMQPClass::Connection(C::TuneOk(tune_ok)),
            AMQPClass::Connection(C::Open(connection::Open {
                virtual_host: "/".into(),
            })),
        ] {
            write_method(&mut input, 0, m);
        }
        write_method(
            &mut input,
            1,
            AMQPClass::Channel(channel::AMQPMethod::Open(channel::Open {})),
        );
        let mut out = Vec::new();
        let reply = h.on_bytes(&input, &mut out, &mut BrokerTotals::default());
        assert!(matches!(reply, Reply::Consumed(n) if n == input.len()));
        assert_eq!(h.stage, Stage::Running);
        assert_eq!((h.channels.len(), h.channels.capacity()), (1, 1));
        assert!(h.channels[0].open);
        // The Start every connection gets is the one built once.
        assert!(out.starts_with(&START));
    }
}
