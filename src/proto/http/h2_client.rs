//! The HTTP/2 load client (`wirebench http --h2`: h2c with prior knowledge). Each
//! request is a stream; a response settles its own request (its stream's lane), in
//! whatever order the streams end. The same request on every stream (its header
//! block HPACK-encoded once, statelessly), the same checks as HTTP/1.1 (the status,
//! `--expect-echo`), status codes counted alike.
//!
//! The connection: the preface, SETTINGS (no push, large receive windows, as h2load
//! gives) and a WINDOW_UPDATE for the connection; the server's SETTINGS answers the
//! opening. Then every frame the server sends is one `decode` step: SETTINGS are
//! applied and acknowledged, PING answered, WINDOW_UPDATE lets waiting body bytes go,
//! RST_STREAM ends its stream's request as `rst_stream` (the connection goes on),
//! GOAWAY ends the connection with its requests as `goaway`, a malformed frame or an
//! HPACK failure as `protocol`, a frame, header block or header list past its cap as
//! `too_large`.

pub use super::h2_exchange::H2Shared;
use super::h2_exchange::{Exchange, Head, NO_CODE};
use super::h2_streams::{lane, pump, Sender, Stream};
use crate::engine::session::{
    ClientSession, Decode, Exchanges, InFlight, Lane, SessionFactory, Setup, Verdict, Words,
};
use crate::proto::h2::flow::{RecvWindow, SendWindow};
use crate::proto::h2::frame::{self, Frame, Parsed, MAX_STREAM_ID, PREFACE};
use crate::proto::h2::hpack::{Assembly, Block, HeaderDecoder};
use crate::proto::h2::settings::{self, Settings, DEFAULT_WINDOW};
use crate::proto::h2::{write, ErrorCode, FrameError};
use crate::stats::ErrorKind;
use std::fmt::Write as _;
use std::sync::Arc;

/// The largest frame this side accepts (SETTINGS_MAX_FRAME_SIZE left at its initial
/// value): a larger one is `too_large` from its header.
const MAX_FRAME: u32 = frame::DEFAULT_MAX_FRAME;
/// The largest header block (HEADERS and its CONTINUATION frames) and decoded header
/// list a response may have.
pub const MAX_HEADER_BLOCK: usize = 64 << 10;
pub const MAX_HEADER_LIST: usize = 64 << 10;
/// The receive windows offered, per stream and for the connection (h2load's
/// defaults, 2^30 - 1): a response is never held back by this side.
pub const RECV_WINDOW: u32 = (1 << 30) - 1;

/// The client sessions of a run: HTTP's by default, any `Exchange`'s.
pub struct H2Factory<X: Exchange = H2Shared>(pub Arc<X>);

impl<X: Exchange> SessionFactory for H2Factory<X> {
    type Session = H2Client<X>;

    fn session(&self, _conn_id: u64) -> H2Client<X> {
        H2Client(Box::new(Conn::new(self.0.clone())))
    }
}

/// One connection: boxed, so an engine slot holds a pointer.
pub struct H2Client<X: Exchange = H2Shared>(Box<Conn<X>>);

/// What an error said, kept until the engine asks (`error_words`).
#[derive(Default)]
struct Said {
    status: u16,
    /// The protocol's own code of a response judged `Status`.
    app_code: u16,
    body: [u8; super::h2_streams::BODY_WORDS],
    body_len: u8,
    code: u32,
    what: &'static str,
    debug: Vec<u8>,
}

struct Conn<X: Exchange> {
    shared: Arc<X>,
    peer: Settings,
    send: SendWindow,
    recv: RecvWindow,
    next_id: u32,
    /// Streams open, in id order.
    streams: Vec<Stream>,
    active: u32,
    lane: Lane,
    asm: Assembly,
    hpack: HeaderDecoder,
    /// The preface and SETTINGS are written.
    greeted: bool,
    /// END_STREAM of the header block still open (its CONTINUATION frames to come).
    ends_open: bool,
    said: Said,
}

/// One frame's outcome.
enum Step {
    /// Bytes of a response still coming.
    Part,
    /// Bytes that belong to no request (SETTINGS, PING, WINDOW_UPDATE, ...).
    Event,
    /// Stream `id`'s response ended with this verdict.
    Done(u32, Verdict),
    Fail(ErrorKind),
}

impl<X: Exchange> Conn<X> {
    fn new(shared: Arc<X>) -> Conn<X> {
        Conn {
            shared,
            peer: Settings::default(),
            send: SendWindow::new(DEFAULT_WINDOW),
            recv: RecvWindow::new(DEFAULT_WINDOW),
            next_id: 1,
            streams: Vec::new(),
            active: 0,
            lane: Lane::ANY,
            asm: Assembly::new(MAX_HEADER_BLOCK),
            hpack: HeaderDecoder::remembering(4096, MAX_HEADER_LIST),
            greeted: false,
            ends_open: false,
            said: Said::default(),
        }
    }

    fn pump(&mut self, out: &mut Vec<u8>) {
        let sender = Sender {
            block: self.shared.block(),
            body: self.shared.body(),
            max_frame: self.peer.max_frame_size,
            max_streams: self.peer.max_concurrent_streams,
        };
        pump(
            &sender,
            &mut self.streams,
            &mut self.send,
            &mut self.active,
            out,
        );
    }

    /// The kind a refused frame counts as (`too_large` past a cap), its words kept.
    fn failure(&mut self, e: FrameError) -> ErrorKind {
        self.said.code = e.code.0;
        self.said.what = e.what;
        if e.too_large {
            ErrorKind::TooLarge
        } else {
            ErrorKind::Protocol
        }
    }

    fn fail(&mut self, e: FrameError) -> Step {
        Step::Fail(self.failure(e))
    }

    fn stream(&mut self, id: u32) -> Option<&mut Stream> {
        self.streams.iter_mut().find(|s| s.id == id)
    }

    /// A stream id this side never opened (a closed one is not: frames may cross).
    fn never_opened(&self, id: u32) -> bool {
        id % 2 == 0 || id >= self.next_id
    }

    fn on_frame(&mut self, f: Frame<'_>, out: &mut Vec<u8>, codes: &mut X::Figures) -> Step {
        if self.asm.open().is_some() && !matches!(f, Frame::Continuation { .. }) {
            return self.fail(FrameError::protocol(
                "a header block interrupted by another frame",
            ));
        }
        match f {
            Frame::Data {
                stream,
                end_stream,
                data,
                flow_len,
            } => self.on_data(stream, end_stream, data, flow_len, out, codes),
            Frame::Headers {
                stream,
                end_stream,
                end_headers,
                block,
                ..
            } => match self.asm.first(stream, end_headers, block) {
                Ok(Block::Done(b)) => {
                    let head = head_of(&mut self.hpack, &*self.shared, b);
                    self.on_headers(stream, end_stream, head, out, codes)
                }
                Ok(Block::Open) => {
                    self.ends_open = end_stream;
                    Step::Part
                }
                Err(e) => self.fail(e),
            },
            Frame::Continuation {
                stream,
                end_headers,
                block,
            } => match self.asm.more(stream, end_headers, block) {
                Ok(Block::Done(b)) => {
                    let head = head_of(&mut self.hpack, &*self.shared, b);
                    self.on_headers(stream, self.ends_open, head, out, codes)
                }
                Ok(Block::Open) => Step::Part,
                Err(e) => self.fail(e),
            },
            Frame::Settings { ack: true, .. } | Frame::Priority { .. } | Frame::Unknown { .. } => {
                Step::Event
            }
            Frame::Settings { ack: false, params } => self.on_settings(params, out),
            Frame::Ping { ack, data } => {
                if !ack {
                    write::ping(out, true, data);
                }
                Step::Event
            }
            Frame::WindowUpdate { stream, increment } => self.on_window(stream, increment, out),
            Frame::RstStream { stream, code } => self.on_reset(stream, code, out),
            Frame::GoAway {
                last_stream: _,
                code,
                debug,
            } => {
                self.said.code = code;
                self.said.debug.clear();
                self.said
                    .debug
                    .extend_from_slice(&debug[..debug.len().min(64)]);
                Step::Fail(ErrorKind::Goaway)
            }
            Frame::PushPromise { .. } => self.fail(FrameError::protocol(
                "a PUSH_PROMISE, which this client disabled",
            )),
        }
    }
}

/// What a whole header block said: its `:status` (0 when it has none) and what the
/// exchange reads from its other fields, every field decoded so the HPACK table
/// stays in step.
fn head_of<X: Exchange>(
    hpack: &mut HeaderDecoder,
    x: &X,
    block: &[u8],
) -> Result<Head, FrameError> {
    let mut head = Head::default();
    hpack.decode(block, |name, value| {
        if name == b":status" {
            head.status = match value {
                [a @ b'1'..=b'9', b @ b'0'..=b'9', c @ b'0'..=b'9'] => {
                    u16::from(a - b'0') * 100 + u16::from(b - b'0') * 10 + u16::from(c - b'0')
                }
                _ => u16::MAX,
            };
        } else {
            x.field(name, value, &mut head);
        }
    })?;
    Ok(head)
}

impl<X: Exchange> Conn<X> {
    fn on_data(
        &mut self,
        id: u32,
        end: bool,
        data: &[u8],
        flow_len: u32,
        out: &mut Vec<u8>,
        codes: &mut X::Figures,
    ) -> Step {
        if let Err(e) = self.recv.receive(flow_len) {
            return self.fail(e);
        }
        if let Some(inc) = self.recv.credit() {
            write::window_update(out, 0, inc);
        }
        if self.never_opened(id) {
            return self.fail(FrameError::protocol(
                "DATA on a stream this client never opened",
            ));
        }
        let shared = self.shared.clone();
        let Some(st) = self.stream(id) else {
            // A stream this side already ended (a reset crossing it): only the
            // connection's window counted it.
            return Step::Event;
        };
        if st.status == 0 {
            return self.fail(FrameError::protocol("DATA before the response's HEADERS"));
        }
        if let Err(e) = st.recv.receive(flow_len) {
            return self.fail(e);
        }
        shared.data(st, data);
        if end {
            return self.complete(id, out, codes);
        }
        if let Some(inc) = st.recv.credit() {
            write::window_update(out, id, inc);
        }
        Step::Part
    }

    fn on_headers(
        &mut self,
        id: u32,
        end: bool,
        head: Result<Head, FrameError>,
        out: &mut Vec<u8>,
        codes: &mut X::Figures,
    ) -> Step {
        let head = match head {
            Ok(h) => h,
            Err(e) => return self.fail(e),
        };
        let status = head.status;
        if self.never_opened(id) {
            return self.fail(FrameError::protocol(
                "HEADERS on a stream this client never opened",
            ));
        }
        let Some(st) = self.stream(id) else {
            return Step::Event;
        };
        match (st.status, status) {
            // An interim response (1xx): the final one follows.
            (0, 100..=199) if !end => return Step::Part,
            (0, 200..=999) => st.status = status,
            // Trailers after the response's HEADERS.
            (s, 0) if s != 0 => {}
            _ => return self.fail(FrameError::protocol("a response without a valid :status")),
        }
        if head.code != NO_CODE {
            st.code = head.code;
            st.words = head.words;
            st.words_len = head.words_len;
        }
        if end {
            return self.complete(id, out, codes);
        }
        Step::Part
    }

    /// Stream `id`'s response is whole: its verdict, the stream gone (and a stream
    /// waiting for its place under the server's limit started).
    fn complete(&mut self, id: u32, out: &mut Vec<u8>, codes: &mut X::Figures) -> Step {
        let Some(at) = self.streams.iter().position(|s| s.id == id) else {
            return Step::Event;
        };
        let st = self.streams.remove(at);
        if st.started {
            self.active -= 1;
            if self.streams.len() > self.active as usize {
                self.pump(out);
            }
        }
        let verdict = self.shared.verdict(&st, codes);
        if verdict == Verdict::Error(ErrorKind::Status) {
            let s = &mut self.said;
            (s.status, s.app_code, s.body, s.body_len) =
                (st.status, st.code, st.words, st.words_len);
        }
        Step::Done(id, verdict)
    }

    fn on_settings(&mut self, params: &[u8], out: &mut Vec<u8>) -> Step {
        let delta = match self.peer.apply(params) {
            Ok(d) => d,
            Err(e) => return self.fail(e),
        };
        for st in &mut self.streams {
            if let Err(e) = st.send.shift(delta) {
                return self.fail(e);
            }
        }
        write::settings_ack(out);
        self.pump(out);
        Step::Event
    }

    fn on_window(&mut self, id: u32, increment: u32, out: &mut Vec<u8>) -> Step {
        let grown = match id {
            0 => self.send.grow(increment),
            _ => match self.stream(id) {
                Some(st) => st.send.grow(increment),
                None => Ok(()),
            },
        };
        if let Err(e) = grown {
            return self.fail(e);
        }
        self.pump(out);
        Step::Event
    }

    fn on_reset(&mut self, id: u32, code: u32, out: &mut Vec<u8>) -> Step {
        if self.never_opened(id) {
            return self.fail(FrameError::protocol(
                "RST_STREAM on a stream this client never opened",
            ));
        }
        let Some(at) = self.streams.iter().position(|s| s.id == id) else {
            return Step::Event;
        };
        let st = self.streams.remove(at);
        if st.started {
            self.active -= 1;
        }
        self.said.code = code;
        // A place under the server's stream limit is free: a waiting stream may start.
        self.pump(out);
        Step::Done(id, Verdict::Error(ErrorKind::RstStream))
    }
}

impl<X: Exchange> H2Client<X> {
    /// The request's stream: its id, or none when the connection ran out of ids.
    fn open_stream(&mut self, out: &mut Vec<u8>) {
        let c = &mut *self.0;
        let id = c.next_id;
        c.lane = lane(id);
        if id > MAX_STREAM_ID {
            // 2^30 requests on one connection: the request waits for its timeout.
            return;
        }
        c.next_id += 2;
        c.streams.push(Stream::new(
            id,
            c.peer.initial_window_size,
            c.shared.windows().0,
        ));
        c.pump(out);
    }
}

impl<X: Exchange> ClientSession for H2Client<X> {
    type Figures = X::Figures;

    /// The preface, SETTINGS and the connection's WINDOW_UPDATE; done when the
    /// server's SETTINGS (its first frame) came and was acknowledged.
    fn open(
        &mut self,
        input: &[u8],
        out: &mut Vec<u8>,
        _codes: &mut X::Figures,
        count: &mut Exchanges,
    ) -> Setup {
        let c = &mut *self.0;
        if !c.greeted {
            c.greeted = true;
            out.extend_from_slice(PREFACE);
            write::settings(
                out,
                &[
                    (settings::ENABLE_PUSH, 0),
                    (settings::INITIAL_WINDOW_SIZE, c.shared.windows().0),
                    (settings::MAX_HEADER_LIST_SIZE, MAX_HEADER_LIST as u32),
                ],
            );
            if let Some(inc) = c.recv.raise(c.shared.windows().1) {
                write::window_update(out, 0, inc);
            }
            count.sent += 1;
            return Setup::Continue { used: 0 };
        }
        let failed = |e: FrameError| Setup::Failed {
            kind: if e.too_large {
                ErrorKind::TooLarge
            } else {
                ErrorKind::Protocol
            },
            detail: format!("{} ({})", e.what, e.code.name()),
        };
        if input.starts_with(b"HTTP/") {
            return failed(FrameError::protocol(
                "the server answered in HTTP/1: it does not speak h2c by prior knowledge",
            ));
        }
        match frame::parse(input, MAX_FRAME) {
            Ok(Parsed::Incomplete) => Setup::Continue { used: 0 },
            Ok(Parsed::Frame(Frame::Settings { ack: false, params }, used)) => {
                count.answered += 1;
                match c.on_settings(params, out) {
                    Step::Event => Setup::Done { used },
                    _ => failed(FrameError::protocol(c.said.what)),
                }
            }
            Ok(Parsed::Frame(..)) => failed(FrameError::protocol(
                "the server's first frame is not SETTINGS (is it an HTTP/2 server?)",
            )),
            Err(e) => failed(e),
        }
    }

    #[inline]
    fn encode(&mut self, _seq: u64, _sent_ns: u64, out: &mut Vec<u8>) -> u32 {
        self.open_stream(out);
        0
    }

    #[inline]
    fn lane_of(&self, _seq: u64) -> Lane {
        self.0.lane
    }

    fn decode(
        &mut self,
        input: &[u8],
        _oldest: Option<&InFlight>,
        out: &mut Vec<u8>,
        codes: &mut X::Figures,
    ) -> Decode {
        let c = &mut *self.0;
        let (f, used) = match frame::parse(input, MAX_FRAME) {
            Ok(Parsed::Incomplete) => return Decode::Incomplete,
            Ok(Parsed::Frame(f, used)) => (f, used),
            Err(e) => return Decode::Fail { kind: c.failure(e) },
        };
        match c.on_frame(f, out, codes) {
            Step::Part => Decode::Consumed { used },
            Step::Event => Decode::Event { used },
            Step::Done(id, verdict) => Decode::Reply {
                used,
                settles: 1,
                lane: lane(id),
                verdict,
                close: false,
            },
            Step::Fail(kind) => Decode::Fail { kind },
        }
    }

    /// A status the run does not accept: `:status 503` and the start of the body. A
    /// reset stream or a GOAWAY: the frame and its code (and GOAWAY's debug text). A
    /// frame or block refused: why, and the code this side would send.
    fn error_words(&mut self, kind: ErrorKind, _input: &[u8], words: &mut Words) {
        let s = &self.0.said;
        let code = ErrorCode(s.code);
        match kind {
            ErrorKind::Status => {
                let kept = &s.body[..s.body_len as usize];
                self.0
                    .shared
                    .status_words(s.status, s.app_code, kept, words);
            }
            ErrorKind::RstStream => {
                let _ = write!(words, "RST_STREAM {} (0x{:x})", code.name(), s.code);
            }
            ErrorKind::Goaway => {
                let _ = write!(words, "GOAWAY {} (0x{:x})", code.name(), s.code);
                if !s.debug.is_empty() {
                    words.push(b": ");
                    words.push(&s.debug);
                }
            }
            ErrorKind::Protocol | ErrorKind::TooLarge => {
                let _ = write!(words, "{} ({})", s.what, code.name());
            }
            _ => {}
        }
    }
}

#[cfg(test)]
#[path = "h2_client_tests.rs"]
mod tests;
