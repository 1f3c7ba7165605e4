//! One HTTP/2 connection of `serve http`: the preface and SETTINGS, then every frame
//! the client sends, answered in the same call where the windows allow (a request
//! whose response fits is never kept). Its limits, each ending the connection with a
//! GOAWAY and a counted `Reason`: frames of at most 16 KiB, SETTINGS_MAX_CONCURRENT_
//! STREAMS (`--max-streams`; a stream past it is refused, not the connection), a
//! header list of `--max-header`, a header block of as many bytes and at most
//! `MAX_CONTINUATIONS` CONTINUATION frames, HPACK's table at 4 KiB, a budget of
//! stream resets (the "rapid reset" attack, CVE-2023-44487), and a response kept
//! waiting on a window of 0 for `--h2-window-timeout`. Memory per connection: a
//! partial frame (16 KiB), a header block (`--max-header`), echo bytes not yet sent
//! (at most the 1 MiB connection window this side gives).

use super::super::server::{route, Route, Shared, MAX_OUT_BATCH};
use super::figures::{H2Figures, Reason};
use super::grpc;
use super::head::{self, Method, Request, Response};
use super::streams::{self, Body, ConnSend, Fixed, Stream};
use crate::proto::h2::flow::{RecvWindow, SendWindow};
use crate::proto::h2::frame::{self, Frame, Parsed, DEFAULT_MAX_FRAME, PREFACE};
use crate::proto::h2::hpack::{Assembly, Block, HeaderDecoder};
use crate::proto::h2::settings::{self, Settings, DEFAULT_WINDOW};
use crate::proto::h2::{write, ErrorCode, FrameError};
use crate::server::session::Reply;
use std::sync::Arc;

/// SETTINGS_HEADER_TABLE_SIZE this side keeps (the RFC's default): HPACK's dynamic
/// table is capped at it, and a table size update past it is a COMPRESSION_ERROR.
const HEADER_TABLE: u32 = 4096;
/// The connection receive window offered (the RFC's 65,535 raised at the start):
/// the most echo bytes a connection can make the server keep.
pub const CONN_WINDOW: u32 = 1 << 20;
/// CONTINUATION frames one header block may take (the "CONTINUATION flood": empty
/// frames grow no buffer, so their number is capped as well as the block's bytes).
pub const MAX_CONTINUATIONS: u32 = 32;
/// Stream resets (RST_STREAM received, streams refused) a connection may make
/// before its resets are held to a tenth of its answered requests.
pub const FREE_RESETS: u64 = 1000;

/// Why the connection ends: the reason counted, the GOAWAY's code and debug text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fault {
    pub why: Reason,
    pub code: ErrorCode,
    pub what: &'static str,
}

impl Fault {
    const fn new(why: Reason, code: ErrorCode, what: &'static str) -> Fault {
        Fault { why, code, what }
    }

    fn protocol(what: &'static str) -> Fault {
        Fault::new(Reason::Protocol, ErrorCode::PROTOCOL_ERROR, what)
    }

    fn stream_id(what: &'static str) -> Fault {
        Fault::new(Reason::StreamId, ErrorCode::PROTOCOL_ERROR, what)
    }

    /// A frame the codec refused.
    fn of_frame(e: FrameError) -> Fault {
        let why = if e.too_large {
            Reason::FrameSize
        } else if e.code == ErrorCode::FLOW_CONTROL_ERROR {
            Reason::FlowControl
        } else {
            Reason::Protocol
        };
        Fault::new(why, e.code, e.what)
    }

    /// A header block the assembly refused (past its cap: the CONTINUATION flood).
    fn of_block(e: FrameError) -> Fault {
        Fault::by_size(e, Reason::ContinuationFlood, Reason::Protocol)
    }

    /// A header block HPACK refused.
    fn of_decode(e: FrameError) -> Fault {
        Fault::by_size(e, Reason::HeaderList, Reason::Hpack)
    }

    /// `e` counted as `past_cap` when the peer went past a cap, else as `other`.
    fn by_size(e: FrameError, past_cap: Reason, other: Reason) -> Fault {
        let why = if e.too_large { past_cap } else { other };
        Fault::new(why, e.code, e.what)
    }

    fn flow(e: FrameError) -> Fault {
        Fault::new(Reason::FlowControl, e.code, e.what)
    }
}

/// What the open header block is for.
#[derive(Clone, Copy, Debug)]
enum BlockFor {
    Request { stream: u32, end_stream: bool },
    Trailers { stream: u32 },
}

/// Whether responses wait on a window of 0, and since when (ns, the sessions' clock).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stall {
    Clear,
    /// Starved now; the next wake-up stamps the time.
    Starting,
    Since(u64),
}

pub struct H2Session {
    /// The limits and the `GET /bytes/N` pattern.
    shared: Arc<Shared>,
    /// The preface came and this side's SETTINGS went.
    started: bool,
    /// What the client announced.
    peer: Settings,
    decoder: HeaderDecoder,
    assembly: Assembly,
    block_for: BlockFor,
    /// CONTINUATION frames of the open block.
    continuations: u32,
    conn_send: ConnSend,
    conn_recv: RecvWindow,
    /// Streams whose response is not all written.
    streams: Vec<Stream>,
    /// The highest stream id the client opened.
    last_stream: u32,
    resets: u64,
    answered: u64,
    /// Responses completed since the server last asked.
    requests: u64,
    req: Request,
    stall: Stall,
    /// A GOAWAY went after a wake-up: the connection closes.
    ended: bool,
    /// The client sent GOAWAY: close once the streams are done.
    peer_left: bool,
}

impl H2Session {
    pub(in super::super) fn new(shared: Arc<Shared>) -> H2Session {
        let limits = shared.limits;
        H2Session {
            shared,
            started: false,
            peer: Settings::default(),
            decoder: HeaderDecoder::new(HEADER_TABLE, limits.max_head),
            assembly: Assembly::new(limits.max_head),
            block_for: BlockFor::Trailers { stream: 0 },
            continuations: 0,
            conn_send: ConnSend {
                window: SendWindow::new(DEFAULT_WINDOW),
                sent: 0,
            },
            conn_recv: RecvWindow::new(DEFAULT_WINDOW),
            streams: Vec::new(),
            last_stream: 0,
            resets: 0,
            answered: 0,
            requests: 0,
            req: Request::default(),
            stall: Stall::Clear,
            ended: false,
            peer_left: false,
        }
    }

    /// The session's input from the connection's first byte (the preface).
    pub fn on_bytes(&mut self, input: &[u8], out: &mut Vec<u8>, fig: &mut H2Figures) -> Reply {
        let mut at = 0;
        if !self.started {
            if input.len() < PREFACE.len() && PREFACE.starts_with(input) {
                return Reply::Consumed(0);
            }
            if !input.starts_with(PREFACE) {
                return self.fail(out, fig, Fault::protocol("not the HTTP/2 preface"));
            }
            at = PREFACE.len();
            self.started = true;
            self.greet(out);
        }
        let sent_before = self.conn_send.sent;
        let full = match self.frames(&input[at..], out, fig) {
            Ok((used, full)) => {
                at += used;
                full
            }
            Err(f) => return self.fail(out, fig, f),
        };
        let more = self.pump_all(out);
        self.give_back(out);
        self.watch(self.conn_send.sent != sent_before);
        if self.peer_left && self.streams.is_empty() {
            return Reply::Close;
        }
        if full || more {
            Reply::More(at)
        } else {
            Reply::Consumed(at)
        }
    }

    /// This side's SETTINGS and the connection window raised to `CONN_WINDOW`.
    fn greet(&mut self, out: &mut Vec<u8>) {
        write::settings(
            out,
            &[
                (
                    settings::MAX_CONCURRENT_STREAMS,
                    self.shared.limits.max_streams,
                ),
                (
                    settings::MAX_HEADER_LIST_SIZE,
                    self.shared.limits.max_head as u32,
                ),
            ],
        );
        if let Some(inc) = self.conn_recv.raise(CONN_WINDOW) {
            write::window_update(out, 0, inc);
        }
    }

    /// Writes the GOAWAY for `f`, counts it, and ends the connection.
    fn fail(&mut self, out: &mut Vec<u8>, fig: &mut H2Figures, f: Fault) -> Reply {
        write::goaway(out, self.last_stream, f.code.0, f.what.as_bytes());
        fig.closed(f.why);
        match f.why {
            Reason::FrameSize
            | Reason::ContinuationFlood
            | Reason::HeaderList
            | Reason::MessageSize => Reply::TooLarge,
            _ => Reply::Close,
        }
    }

    /// Every whole frame of `input`: the bytes used, and whether the output batch
    /// filled before the input was all read.
    fn frames(
        &mut self,
        input: &[u8],
        out: &mut Vec<u8>,
        fig: &mut H2Figures,
    ) -> Result<(usize, bool), Fault> {
        let mut at = 0;
        loop {
            if out.len() >= MAX_OUT_BATCH {
                return Ok((at, at < input.len()));
            }
            match frame::parse(&input[at..], DEFAULT_MAX_FRAME).map_err(Fault::of_frame)? {
                Parsed::Incomplete => return Ok((at, false)),
                Parsed::Frame(f, used) => {
                    self.frame(f, out, fig)?;
                    at += used;
                }
            }
        }
    }

    fn frame(&mut self, f: Frame<'_>, out: &mut Vec<u8>, fig: &mut H2Figures) -> Result<(), Fault> {
        if self.assembly.open().is_some() {
            return match f {
                Frame::Continuation {
                    stream,
                    end_headers,
                    block,
                } => self.continuation(stream, end_headers, block, out, fig),
                _ => Err(Fault::protocol(
                    "a header block interrupted by another frame",
                )),
            };
        }
        match f {
            Frame::Data {
                stream,
                end_stream,
                data,
                flow_len,
            } => self.data(stream, end_stream, data, flow_len, out, fig),
            Frame::Headers {
                stream,
                end_stream,
                end_headers,
                block,
                ..
            } => self.headers(stream, end_stream, end_headers, block, out, fig),
            Frame::Continuation { .. } => Err(Fault::protocol(
                "a CONTINUATION frame outside a header block",
            )),
            Frame::Priority { .. } | Frame::Unknown { .. } => Ok(()),
            Frame::RstStream { stream, .. } => self.reset(stream, fig),
            Frame::Settings { ack, params } => self.settings(ack, params, out),
            Frame::PushPromise { .. } => Err(Fault::protocol("a client sent PUSH_PROMISE")),
            Frame::Ping { ack, data } => {
                if !ack {
                    write::ping(out, true, data);
                }
                Ok(())
            }
            Frame::GoAway { .. } => {
                self.peer_left = true;
                Ok(())
            }
            Frame::WindowUpdate { stream, increment } => self.window_update(stream, increment),
        }
    }

    fn find(&self, stream: u32) -> Option<usize> {
        self.streams.iter().position(|s| s.id == stream)
    }

    fn headers(
        &mut self,
        stream: u32,
        end_stream: bool,
        end_headers: bool,
        block: &[u8],
        out: &mut Vec<u8>,
        fig: &mut H2Figures,
    ) -> Result<(), Fault> {
        if self.find(stream).is_some() {
            if !end_stream {
                return Err(Fault::protocol("trailers without END_STREAM"));
            }
            self.block_for = BlockFor::Trailers { stream };
        } else {
            if stream % 2 == 0 || stream <= self.last_stream {
                return Err(Fault::stream_id(
                    "a new stream's id is even or not above the last one",
                ));
            }
            self.last_stream = stream;
            self.block_for = BlockFor::Request { stream, end_stream };
        }
        self.continuations = 0;
        let step = self.assembly.first(stream, end_headers, block);
        if decode_when_whole(&mut self.decoder, &mut self.req, step)? {
            self.block_done(out, fig)?;
        }
        Ok(())
    }

    fn continuation(
        &mut self,
        stream: u32,
        end: bool,
        block: &[u8],
        out: &mut Vec<u8>,
        fig: &mut H2Figures,
    ) -> Result<(), Fault> {
        self.continuations += 1;
        if self.continuations > MAX_CONTINUATIONS {
            return Err(Fault::new(
                Reason::ContinuationFlood,
                ErrorCode::ENHANCE_YOUR_CALM,
                "more CONTINUATION frames than a header block may take",
            ));
        }
        let step = self.assembly.more(stream, end, block);
        if decode_when_whole(&mut self.decoder, &mut self.req, step)? {
            self.block_done(out, fig)?;
        }
        Ok(())
    }

    /// A header block is whole and decoded into `req`.
    fn block_done(&mut self, out: &mut Vec<u8>, fig: &mut H2Figures) -> Result<(), Fault> {
        match self.block_for {
            BlockFor::Trailers { stream } => {
                // The request's end: an echo's END_STREAM goes with its last bytes.
                if let Some(i) = self.find(stream) {
                    self.streams[i].input_open = false;
                }
                Ok(())
            }
            BlockFor::Request { stream, end_stream } => self.open(stream, end_stream, out, fig),
        }
    }

    /// A request: refused past `--max-streams`, else answered as far as the windows
    /// allow, the rest kept.
    fn open(
        &mut self,
        stream: u32,
        end_stream: bool,
        out: &mut Vec<u8>,
        fig: &mut H2Figures,
    ) -> Result<(), Fault> {
        if self.streams.len() >= self.shared.limits.max_streams as usize {
            write::rst_stream(out, stream, ErrorCode::REFUSED_STREAM.0);
            fig.refused += 1;
            return self.count_reset();
        }
        if self.shared.grpc {
            return self.open_call(stream, end_stream, out);
        }
        let (status, bytes, len, allow) = match self.route() {
            Some(Route::Echo) if self.echo_too_large() => {
                fig.body_too_large += 1;
                (413, Fixed::Static(b"request body too large\n"), 23, false)
            }
            Some(Route::Echo) => return self.open_echo(stream, end_stream, out),
            Some(r) => answer(r),
            None => (400, Fixed::Static(b"malformed request\n"), 18, false),
        };
        let no_body = status == 204 || status == 304;
        let head_only = self.req.method == Some(Method::Head);
        let send = if head_only || no_body { 0 } else { len };
        let r = Response {
            status,
            typed: !no_body,
            grpc: false,
            length: (!no_body).then_some(len),
            allow,
        };
        head::headers(out, stream, send == 0, r);
        if send == 0 {
            self.done_stream();
            return Ok(());
        }
        let mut s = self.stream(
            stream,
            Body::Fixed {
                bytes,
                pos: 0,
                len: send,
            },
        );
        s.input_open = false;
        if streams::pump(out, &mut s, &mut self.conn_send, &self.shared.pattern) {
            self.done_stream();
        } else {
            self.streams.push(s);
        }
        Ok(())
    }

    /// The request's route, None when it is malformed (400).
    fn route(&self) -> Option<Route> {
        let req = &self.req;
        let method = req
            .method
            .filter(|_| !req.malformed && !req.path.is_empty())?;
        let path = std::str::from_utf8(&req.path).ok()?;
        Some(route(method.name(), path))
    }

    /// An echo whose content-length is past `--max-body`: 413.
    fn echo_too_large(&self) -> bool {
        self.req
            .content_length
            .is_some_and(|n| n > self.shared.limits.max_body as u64)
    }

    fn stream(&self, id: u32, body: Body) -> Stream {
        Stream {
            id,
            send: SendWindow::new(self.peer.initial_window_size),
            recv: RecvWindow::new(DEFAULT_WINDOW),
            body,
            input_open: true,
            received: 0,
            trailers: self.shared.grpc,
            prefix: [0; 5],
        }
    }

    /// A gRPC call (`serve grpc`): the health check answered now, any other method
    /// echoed as its message comes.
    fn open_call(&mut self, stream: u32, end_stream: bool, out: &mut Vec<u8>) -> Result<(), Fault> {
        if self.req.path == grpc::HEALTH_CHECK {
            grpc::serving(out, stream);
        } else if end_stream {
            grpc::empty(out, stream);
        } else {
            grpc::response_head(out, stream);
            let s = self.stream(stream, Body::Echo(Vec::new()));
            self.streams.push(s);
            return Ok(());
        }
        self.done_stream();
        Ok(())
    }

    /// An echo: its head now, its body as the request's DATA comes.
    fn open_echo(&mut self, stream: u32, end_stream: bool, out: &mut Vec<u8>) -> Result<(), Fault> {
        let length = self.req.content_length.map(|n| n as usize);
        let r = Response {
            status: 200,
            typed: true,
            grpc: false,
            length: if end_stream { Some(0) } else { length },
            allow: false,
        };
        head::headers(out, stream, end_stream, r);
        if end_stream {
            self.done_stream();
        } else {
            let s = self.stream(stream, Body::Echo(Vec::new()));
            self.streams.push(s);
        }
        Ok(())
    }

    fn done_stream(&mut self) {
        self.answered += 1;
        self.requests += 1;
    }

    fn data(
        &mut self,
        stream: u32,
        end_stream: bool,
        data: &[u8],
        flow_len: u32,
        out: &mut Vec<u8>,
        fig: &mut H2Figures,
    ) -> Result<(), Fault> {
        self.conn_recv.receive(flow_len).map_err(Fault::flow)?;
        let Some(i) = self.find(stream) else {
            if stream > self.last_stream {
                return Err(Fault::stream_id("DATA on a stream never opened"));
            }
            // A stream already answered: dropped, its room given back with the connection's.
            return Ok(());
        };
        let max_body = self.shared.limits.max_body as u64;
        let s = &mut self.streams[i];
        if !matches!(s.body, Body::Echo(_)) {
            return Ok(());
        }
        if !s.input_open {
            return Err(Fault::protocol("DATA after END_STREAM"));
        }
        s.recv.receive(flow_len).map_err(Fault::flow)?;
        if s.trailers {
            let limit = self.shared.limits.max_body as u64 - 5;
            if grpc::message_length(s, data).is_some_and(|n| u64::from(n) > limit) {
                grpc::refuse_message(out, stream);
                return Err(Fault::new(
                    Reason::MessageSize,
                    ErrorCode::NO_ERROR,
                    "a gRPC message past --max-message",
                ));
            }
        }
        s.received += data.len() as u64;
        if s.received > max_body {
            write::rst_stream(out, stream, ErrorCode::ENHANCE_YOUR_CALM.0);
            fig.body_too_large += 1;
            self.streams.swap_remove(i);
            return Ok(());
        }
        s.input_open = !end_stream;
        if streams::echo_now(out, s, &mut self.conn_send, data) {
            self.streams.swap_remove(i);
            self.done_stream();
        }
        Ok(())
    }

    fn reset(&mut self, stream: u32, fig: &mut H2Figures) -> Result<(), Fault> {
        fig.client_resets += 1;
        if stream > self.last_stream {
            return Err(Fault::stream_id("RST_STREAM on a stream never opened"));
        }
        if let Some(i) = self.find(stream) {
            self.streams.swap_remove(i);
        }
        self.count_reset()
    }

    /// One more reset against the budget: `FREE_RESETS`, then a tenth of the
    /// requests answered (a burst of HEADERS and RST_STREAM pairs goes past it at
    /// about 1,100).
    fn count_reset(&mut self) -> Result<(), Fault> {
        self.resets += 1;
        if self.resets > FREE_RESETS && self.resets * 10 > self.answered {
            return Err(Fault::new(
                Reason::RapidReset,
                ErrorCode::ENHANCE_YOUR_CALM,
                "more stream resets than the connection's budget",
            ));
        }
        Ok(())
    }

    fn settings(&mut self, ack: bool, params: &[u8], out: &mut Vec<u8>) -> Result<(), Fault> {
        if ack {
            return Ok(());
        }
        let delta = self.peer.apply(params).map_err(Fault::of_frame)?;
        if delta != 0 {
            for s in &mut self.streams {
                s.send.shift(delta).map_err(Fault::flow)?;
            }
        }
        write::settings_ack(out);
        Ok(())
    }

    fn window_update(&mut self, stream: u32, increment: u32) -> Result<(), Fault> {
        if stream == 0 {
            return self.conn_send.window.grow(increment).map_err(Fault::flow);
        }
        match self.find(stream) {
            Some(i) => self.streams[i].send.grow(increment).map_err(Fault::flow),
            None if stream > self.last_stream => {
                Err(Fault::stream_id("WINDOW_UPDATE on a stream never opened"))
            }
            None => Ok(()),
        }
    }

    /// Sends what the kept streams may send now. True when one could send more but
    /// the batch is full (`Reply::More`).
    fn pump_all(&mut self, out: &mut Vec<u8>) -> bool {
        let mut i = 0;
        while i < self.streams.len() && out.len() < MAX_OUT_BATCH {
            if streams::pump(
                out,
                &mut self.streams[i],
                &mut self.conn_send,
                &self.shared.pattern,
            ) {
                self.streams.swap_remove(i);
                self.done_stream();
            } else {
                i += 1;
            }
        }
        let more = self
            .streams
            .iter()
            .any(|s| s.left() > 0 && !s.starved(&self.conn_send));
        if more && self.streams.len() > 1 {
            // The next batch starts with the next stream.
            self.streams.rotate_left(1);
        }
        if self.streams.is_empty() && self.streams.capacity() > 8 {
            // An idle connection keeps no table.
            self.streams = Vec::new();
        }
        more
    }

    /// Room given back for what was read: a stream's once its echo bytes went out,
    /// the connection's once no echo bytes are kept.
    fn give_back(&mut self, out: &mut Vec<u8>) {
        let mut kept = 0;
        for s in &mut self.streams {
            if let Body::Echo(k) = &s.body {
                kept += k.len();
                if k.is_empty() && s.input_open {
                    if let Some(inc) = s.recv.credit() {
                        write::window_update(out, s.id, inc);
                    }
                }
            }
        }
        if kept == 0 {
            if let Some(inc) = self.conn_recv.credit() {
                write::window_update(out, 0, inc);
            }
        }
    }

    /// Notes whether responses wait on a window of 0; `moved`: DATA went this call.
    fn watch(&mut self, moved: bool) {
        let starved = self.streams.iter().any(|s| s.starved(&self.conn_send));
        self.stall = match (starved, self.stall) {
            (false, _) => Stall::Clear,
            (true, Stall::Clear) => Stall::Starting,
            (true, _) if moved => Stall::Starting,
            (true, s) => s,
        };
    }

    pub fn take_requests(&mut self) -> u64 {
        std::mem::take(&mut self.requests)
    }

    /// The preface, an open header block or a partial frame is a head:
    /// `--header-timeout` runs.
    pub fn in_head(&self, unconsumed: usize) -> bool {
        !self.started || self.assembly.open().is_some() || unconsumed > 0
    }

    pub fn next_wake(&self) -> Option<u64> {
        let limit = self
            .shared
            .limits
            .window_timeout_ms
            .checked_mul(1_000_000)?;
        match self.stall {
            _ if limit == 0 || self.ended => None,
            Stall::Clear => None,
            Stall::Starting => Some(0),
            Stall::Since(t) => Some(t.saturating_add(limit)),
        }
    }

    /// A response starved past `--h2-window-timeout`: GOAWAY, and the connection ends.
    pub fn on_wake(&mut self, now_ns: u64, out: &mut Vec<u8>, fig: &mut H2Figures) {
        let limit = self
            .shared
            .limits
            .window_timeout_ms
            .saturating_mul(1_000_000);
        match self.stall {
            Stall::Starting => self.stall = Stall::Since(now_ns),
            Stall::Since(t) if now_ns >= t.saturating_add(limit) => {
                let f = Fault::new(
                    Reason::WindowStall,
                    ErrorCode::ENHANCE_YOUR_CALM,
                    "a response waited on a flow-control window of 0 too long",
                );
                self.fail(out, fig, f);
                self.ended = true;
                self.stall = Stall::Clear;
            }
            _ => {}
        }
    }

    pub fn ends(&self) -> bool {
        self.ended
    }
}

/// Decodes a whole header block into `req`.
/// A HEADERS or CONTINUATION frame's step of its header block: once the block is whole,
/// decoded into `req`. Whether it is whole.
fn decode_when_whole(
    decoder: &mut HeaderDecoder,
    req: &mut Request,
    step: Result<Block<'_>, FrameError>,
) -> Result<bool, Fault> {
    match step.map_err(Fault::of_block)? {
        Block::Open => Ok(false),
        Block::Done(b) => {
            decode(decoder, req, b)?;
            Ok(true)
        }
    }
}

fn decode(decoder: &mut HeaderDecoder, req: &mut Request, block: &[u8]) -> Result<(), Fault> {
    req.clear();
    decoder
        .decode(block, |name, value| req.field(name, value))
        .map_err(Fault::of_decode)
}

/// A route's response other than echo: status, body, body length, and 405's allow.
fn answer(r: Route) -> (u16, Fixed, usize, bool) {
    match r {
        Route::Hello => (200, Fixed::Static(b"hello"), 5, false),
        Route::Bytes(n) => (200, Fixed::Pattern, n, false),
        Route::Status(s) => {
            let mut text = *b"status 000\n";
            text[7] = b'0' + (s / 100) as u8;
            text[8] = b'0' + (s / 10 % 10) as u8;
            text[9] = b'0' + (s % 10) as u8;
            (s, Fixed::Status(text), 11, false)
        }
        Route::NotFound => (404, Fixed::Static(b"not found\n"), 10, false),
        Route::NotAllowed => (405, Fixed::Static(b"method not allowed\n"), 19, true),
        Route::Echo => (200, Fixed::Static(b""), 0, false),
    }
}
