//! The HTTP/1.1 server handler (`wirebench serve http`): POST (any path) echoes the
//! body as text/plain (hertz-benchmark's echo scenario), `GET /` says hello,
//! `GET /bytes/N` returns N bytes, `GET /status/N` answers with status N.
//! Keep-alive, pipelining, HTTP/1.0, chunked request bodies and `Expect: 100-continue`;
//! a head or body past its limit gets 431 or 413, a malformed request 400, and a close.

use super::chunked::{self, Chunked};
use super::h2serve::H2Figures;
use super::request::pattern_body;
use crate::server::session::{Reply, ServerSession};
use std::mem::MaybeUninit;
use std::sync::Arc;

/// Largest `GET /bytes/N`.
pub const MAX_BYTES_ROUTE: usize = 64 << 20;
/// Most header fields in a request head; past it: 431 and `too_large`.
const MAX_HEADERS: usize = 64;
/// Replies made from one read before the handler yields (`Reply::More`) so they are
/// written before the next pipelined request is answered: pipelined `GET /bytes/N`
/// cannot make the output grow past this plus one reply.
pub const MAX_OUT_BATCH: usize = 256 * 1024;

/// What a connection may make the server hold. Past either: 431 or 413, the connection
/// is closed and counted in the server's `too_large`; other connections go on.
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
pub struct Limits {
    /// Most bytes of a request head (`--max-header`, default 16 KiB).
    pub max_head: usize,
    /// Most bytes of a request body, decoded (`--max-body`, default 16 MiB). A
    /// Content-Length body is held whole until complete; a chunked one is decoded as it
    /// arrives (its framing is dropped), so at most this plus a 4 KiB chunk-size line
    /// or 16 KiB of trailers is held.
    pub max_body: usize,
    /// HTTP/2: SETTINGS_MAX_CONCURRENT_STREAMS (`--max-streams`, default 100).
    #[serde(default = "default_max_streams")]
    pub max_streams: u32,
    /// HTTP/2: how long a response may wait on a flow-control window of 0 before
    /// the connection is closed (`--h2-window-timeout`, default 10 s; 0: never).
    #[serde(default = "default_window_timeout_ms")]
    pub window_timeout_ms: u64,
}

fn default_max_streams() -> u32 {
    100
}

fn default_window_timeout_ms() -> u64 {
    10_000
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_head: 16 * 1024,
            max_body: 16 << 20,
            max_streams: default_max_streams(),
            window_timeout_ms: default_window_timeout_ms(),
        }
    }
}

pub struct HttpHandlerFactory {
    shared: Arc<Shared>,
}

/// What every connection of a server reads and none changes, behind one pointer so
/// an idle connection's session stays small.
pub(super) struct Shared {
    pub limits: Limits,
    /// The bytes `GET /bytes/N` slices from (grown once).
    pub pattern: Box<[u8]>,
    /// `serve grpc`: HTTP/2 only, every stream a gRPC call (`h2serve/grpc.rs`).
    pub grpc: bool,
}

impl HttpHandlerFactory {
    pub fn new(limits: Limits) -> Self {
        HttpHandlerFactory {
            shared: Arc::new(Shared {
                limits,
                pattern: pattern_body(64 * 1024 + 26).into(),
                grpc: false,
            }),
        }
    }

    /// `serve grpc`'s: the HTTP/2 session in its gRPC mode, no HTTP/1.1.
    pub fn grpc(limits: Limits) -> Self {
        HttpHandlerFactory {
            shared: Arc::new(Shared {
                limits,
                pattern: Box::new([]),
                grpc: true,
            }),
        }
    }
}

impl HttpHandlerFactory {
    /// An HTTP/1.1 handler for a new connection.
    pub(super) fn handler(&self) -> HttpHandler {
        HttpHandler {
            shared: self.shared.clone(),
            partial: None,
            requests: 0,
            answered_any: false,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Route {
    Echo,
    Hello,
    Bytes(usize),
    Status(u16),
    NotFound,
    NotAllowed,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BodyFraming {
    Length(usize),
    Chunked,
}

/// A request whose head is parsed and whose body is still arriving.
struct Partial {
    head_len: usize,
    route: Route,
    head_only: bool,
    keep_alive: bool,
    http10: bool,
    framing: BodyFraming,
    chunked: Chunked,
    /// Decoded chunked body so far (echo only).
    body: Vec<u8>,
}

pub struct HttpHandler {
    shared: Arc<Shared>,
    partial: Option<Partial>,
    /// Requests answered since the server last asked.
    requests: u64,
    /// Whether any request was answered: until then the head timeout runs from the accept.
    answered_any: bool,
}

fn eq(a: &[u8], b: &[u8]) -> bool {
    a.eq_ignore_ascii_case(b)
}

fn has_token(value: &[u8], token: &[u8]) -> bool {
    value
        .split(|&b| b == b',')
        .any(|t| eq(t.trim_ascii(), token))
}

pub(super) fn push_decimal(out: &mut Vec<u8>, mut v: usize) {
    if v < 10 {
        // Content-Length of `GET /`'s "hello": one digit, no loop (~40 instructions
        // a request under callgrind for the loop and its slice copy).
        out.push(b'0' + v as u8);
        return;
    }
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    out.extend_from_slice(&buf[i..]);
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        201 => "Created",
        202 => "Accepted",
        204 => "No Content",
        301 => "Moved Permanently",
        302 => "Found",
        304 => "Not Modified",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        413 => "Content Too Large",
        417 => "Expectation Failed",
        429 => "Too Many Requests",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        505 => "HTTP Version Not Supported",
        _ => "Status",
    }
}

/// Appends a whole response. `close`: say `Connection: close`; `keep_alive_10`: an
/// HTTP/1.0 client asked to keep the connection, so say `Connection: keep-alive`.
fn respond(
    out: &mut Vec<u8>,
    status: u16,
    body: &[u8],
    head_only: bool,
    close: bool,
    keep_alive_10: bool,
) {
    out.reserve(160 + body.len());
    if status == 200 {
        // The common reply's first lines as one constant: no digits to format.
        out.extend_from_slice(b"HTTP/1.1 200 OK\r\nServer: wirebench\r\nDate: ");
    } else {
        out.extend_from_slice(b"HTTP/1.1 ");
        push_decimal(out, status as usize);
        out.push(b' ');
        out.extend_from_slice(reason(status).as_bytes());
        out.extend_from_slice(b"\r\nServer: wirebench\r\nDate: ");
    }
    out.extend_from_slice(&super::date::now());
    let no_body = status == 204 || status == 304 || (100..200).contains(&status);
    if !no_body {
        out.extend_from_slice(b"\r\nContent-Type: text/plain\r\nContent-Length: ");
        push_decimal(out, body.len());
    }
    if status == 405 {
        out.extend_from_slice(b"\r\nAllow: GET, HEAD, POST, PUT");
    }
    if close {
        out.extend_from_slice(b"\r\nConnection: close");
    } else if keep_alive_10 {
        out.extend_from_slice(b"\r\nConnection: keep-alive");
    }
    out.extend_from_slice(b"\r\n\r\n");
    if !head_only && !no_body {
        out.extend_from_slice(body);
    }
}

/// Where a request goes, from its method and target. Byte scans, not `str` pattern
/// searches: building a substring searcher for "://" cost ~170 instructions a request.
pub(super) fn route(method: &str, target: &str) -> Route {
    let t = target.as_bytes();
    // Absolute form (a proxy-style request): route on the path.
    let path = match t.windows(3).position(|w| w == b"://") {
        Some(i) => {
            let rest = &t[i + 3..];
            rest.iter()
                .position(|&b| b == b'/')
                .map_or(&b"/"[..], |j| &rest[j..])
        }
        None => t,
    };
    let path = match path.iter().position(|&b| b == b'?') {
        Some(q) => &path[..q],
        None => path,
    };
    match method {
        "POST" | "PUT" => Route::Echo,
        "GET" | "HEAD" => {
            if path == b"/" {
                Route::Hello
            } else if let Some(n) = path.strip_prefix(b"/bytes/") {
                match parse_decimal(n) {
                    Some(n) if n <= MAX_BYTES_ROUTE as u64 => Route::Bytes(n as usize),
                    _ => Route::NotFound,
                }
            } else if let Some(n) = path.strip_prefix(b"/status/") {
                match parse_decimal(n) {
                    Some(s) if (200..=599).contains(&s) => Route::Status(s as u16),
                    _ => Route::NotFound,
                }
            } else {
                Route::NotFound
            }
        }
        _ => Route::NotAllowed,
    }
}

/// A decimal as `str::parse::<u64>` reads it (an optional `+`, then digits), None
/// for anything else or past u64.
fn parse_decimal(text: &[u8]) -> Option<u64> {
    let digits = text.strip_prefix(b"+").unwrap_or(text);
    if digits.is_empty() {
        return None;
    }
    digits.iter().try_fold(0u64, |n, &d| {
        if d.is_ascii_digit() {
            n.checked_mul(10)?.checked_add(u64::from(d - b'0'))
        } else {
            None
        }
    })
}

/// The result of looking at the start of the input for a request head.
enum Head {
    Incomplete,
    Bad(u16, &'static str),
    /// The head is parsed; `expect_continue`: the client waits for 100 Continue.
    Parsed(Partial, bool),
}

/// A refusal that means a cap was hit (431, 413): counted as `too_large`.
fn is_too_large(status: u16) -> bool {
    status == 413 || status == 431
}

fn parse_head(input: &[u8], limits: &Limits) -> Head {
    // Uninitialized: zeroing 64 headers (2 KiB) per request is measurable.
    let mut headers = [const { MaybeUninit::<httparse::Header>::uninit() }; MAX_HEADERS];
    let mut req = httparse::Request::new(&mut []);
    let head_len = match req.parse_with_uninit_headers(input, &mut headers) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => {
            return if input.len() > limits.max_head {
                Head::Bad(431, "request head too large\n")
            } else {
                Head::Incomplete
            }
        }
        Err(httparse::Error::TooManyHeaders) => return Head::Bad(431, "too many header fields\n"),
        Err(_) => return Head::Bad(400, "malformed request\n"),
    };
    if head_len > limits.max_head {
        return Head::Bad(431, "request head too large\n");
    }
    let method = req.method.unwrap_or("");
    let http10 = req.version == Some(0);
    let mut keep_alive = !http10;
    let mut length: Option<usize> = None;
    let mut chunked = false;
    let mut te = false;
    let mut expect_continue = false;
    for h in req.headers.iter() {
        let name = h.name.as_bytes();
        if eq(name, b"content-length") {
            let v = h.value.trim_ascii();
            let n = if !v.is_empty() && v.len() <= 19 && v.iter().all(u8::is_ascii_digit) {
                std::str::from_utf8(v)
                    .ok()
                    .and_then(|s| s.parse::<u64>().ok())
            } else {
                None
            };
            let Some(n) = n else {
                return Head::Bad(400, "bad Content-Length\n");
            };
            if length.is_some_and(|l| l as u64 != n) {
                return Head::Bad(400, "conflicting Content-Length headers\n");
            }
            if n > limits.max_body as u64 {
                return Head::Bad(413, "request body too large\n");
            }
            length = Some(n as usize);
        } else if eq(name, b"transfer-encoding") {
            te = true;
            chunked = h
                .value
                .rsplit(|&b| b == b',')
                .next()
                .is_some_and(|t| eq(t.trim_ascii(), b"chunked"));
        } else if eq(name, b"connection") {
            if has_token(h.value, b"close") {
                keep_alive = false;
            } else if has_token(h.value, b"keep-alive") {
                keep_alive = true;
            }
        } else if eq(name, b"expect") {
            if !eq(h.value.trim_ascii(), b"100-continue") {
                return Head::Bad(417, "only Expect: 100-continue is understood\n");
            }
            expect_continue = !http10;
        }
    }
    let framing = match (te, chunked, length) {
        // A body with both framings is how request smuggling starts: refuse it.
        (true, _, Some(_)) => return Head::Bad(400, "both Transfer-Encoding and Content-Length\n"),
        (true, false, _) => return Head::Bad(400, "unsupported Transfer-Encoding\n"),
        (true, true, None) => {
            if http10 {
                return Head::Bad(400, "chunked body in an HTTP/1.0 request\n");
            }
            BodyFraming::Chunked
        }
        (false, _, n) => BodyFraming::Length(n.unwrap_or(0)),
    };
    let route = route(method, req.path.unwrap_or("/"));
    Head::Parsed(
        Partial {
            head_len,
            route,
            head_only: method == "HEAD",
            keep_alive,
            http10,
            framing,
            chunked: Chunked::default(),
            body: Vec::new(),
        },
        expect_continue && framing != BodyFraming::Length(0),
    )
}

impl HttpHandler {
    /// Answers a complete request whose body (for echo) is `body`; false: close after it.
    fn answer(&mut self, p: &Partial, body: &[u8], out: &mut Vec<u8>) -> bool {
        self.requests += 1;
        self.answered_any = true;
        let close = !p.keep_alive;
        let ka10 = p.http10 && p.keep_alive;
        match p.route {
            Route::Echo => respond(out, 200, body, p.head_only, close, ka10),
            Route::Hello => respond(out, 200, b"hello", p.head_only, close, ka10),
            Route::Bytes(n) => {
                let pattern = &self.shared.pattern;
                if n <= pattern.len() - 26 {
                    respond(out, 200, &pattern[..n], p.head_only, close, ka10)
                } else {
                    respond(out, 200, &pattern_body(n), p.head_only, close, ka10)
                }
            }
            Route::Status(s) => {
                // "status NNN\n", built on the stack: no allocation per request.
                let mut text = *b"status 000\n";
                text[7] = b'0' + (s / 100) as u8;
                text[8] = b'0' + (s / 10 % 10) as u8;
                text[9] = b'0' + (s % 10) as u8;
                respond(out, s, &text, p.head_only, close, ka10)
            }
            Route::NotFound => respond(out, 404, b"not found\n", p.head_only, close, ka10),
            Route::NotAllowed => {
                respond(out, 405, b"method not allowed\n", p.head_only, close, ka10)
            }
        }
        !close
    }
}

fn refuse(out: &mut Vec<u8>, status: u16, text: &str) -> Reply {
    respond(out, status, text.as_bytes(), false, true, false);
    if is_too_large(status) {
        Reply::TooLarge
    } else {
        Reply::Close
    }
}

impl HttpHandler {
    /// Nothing of a request seen yet: the connection's first bytes may still be the
    /// HTTP/2 preface.
    #[inline]
    pub(super) fn fresh(&self) -> bool {
        !self.answered_any && self.partial.is_none()
    }

    /// What an HTTP/2 session of this connection takes over: the limits and the
    /// `GET /bytes/N` pattern.
    pub(super) fn shared(&self) -> Arc<Shared> {
        self.shared.clone()
    }

    /// A `serve grpc` connection (HTTP/2 only).
    pub(super) fn grpc(&self) -> bool {
        self.shared.grpc
    }
}

impl ServerSession for HttpHandler {
    type Figures = H2Figures;

    fn on_bytes(&mut self, input: &[u8], out: &mut Vec<u8>, _figures: &mut H2Figures) -> Reply {
        let mut at = 0;
        loop {
            let rest = &input[at..];
            if rest.is_empty() {
                return Reply::Consumed(at);
            }
            if out.len() >= MAX_OUT_BATCH {
                return Reply::More(at);
            }
            let mut p = match self.partial.take() {
                Some(p) => p,
                None => match parse_head(rest, &self.shared.limits) {
                    Head::Incomplete => return Reply::Consumed(at),
                    Head::Bad(status, text) => return refuse(out, status, text),
                    Head::Parsed(p, expect_continue) => {
                        if expect_continue && rest.len() == p.head_len {
                            // The client waits for this before it sends the body.
                            out.extend_from_slice(b"HTTP/1.1 100 Continue\r\n\r\n");
                        }
                        p
                    }
                },
            };
            let body_in = &rest[p.head_len..];
            let used = match p.framing {
                BodyFraming::Length(n) => {
                    if body_in.len() < n {
                        self.partial = Some(p);
                        return Reply::Consumed(at);
                    }
                    let keep = self.answer(&p, &body_in[..n], out);
                    if !keep {
                        return Reply::Close;
                    }
                    p.head_len + n
                }
                BodyFraming::Chunked => {
                    let echo = p.route == Route::Echo;
                    let body = &mut p.body;
                    let step = p.chunked.advance(body_in, |piece| {
                        if echo {
                            body.extend_from_slice(piece)
                        }
                    });
                    if p.chunked.data_len > self.shared.limits.max_body as u64 {
                        return refuse(out, 413, "request body too large\n");
                    }
                    match step {
                        chunked::Step::Incomplete => {
                            // The framing decoded so far is dropped (its data is in
                            // `p.body`), so only an unfinished line is carried over.
                            let used = at + p.head_len + p.chunked.decoded();
                            p.head_len = 0;
                            p.chunked.rebase();
                            self.partial = Some(p);
                            return Reply::Consumed(used);
                        }
                        chunked::Step::Invalid(_) => {
                            return refuse(out, 400, "malformed chunked body\n")
                        }
                        chunked::Step::TooLarge(_) => {
                            return refuse(out, 431, "chunk-size line or trailers too large\n")
                        }
                        chunked::Step::Done(n) => {
                            let body = std::mem::take(&mut p.body);
                            if !self.answer(&p, &body, out) {
                                return Reply::Close;
                            }
                            p.head_len + n
                        }
                    }
                }
            };
            at += used;
        }
    }

    fn take_requests(&mut self) -> u64 {
        std::mem::take(&mut self.requests)
    }

    /// A head is arriving when bytes wait and no body is; before the first request,
    /// the wait for its head counts from the accept (as nginx's client_header_timeout).
    fn in_head(&self, unconsumed: usize) -> bool {
        self.partial.is_none() && (unconsumed > 0 || !self.answered_any)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::session::ServerFactory;

    #[test]
    fn decimals_are_written_whole() {
        for v in [0, 5, 9, 10, 99, 100, 65_536, usize::MAX] {
            let mut out = b"x".to_vec();
            push_decimal(&mut out, v);
            assert_eq!(out, format!("x{v}").into_bytes());
        }
    }

    /// What a connection made of the pieces it was fed.
    struct Run {
        written: Vec<u8>,
        /// How it ended: Close or TooLarge, or None (still open).
        end: Option<Reply>,
        requests: u64,
        /// Most input bytes carried over between calls (what the server holds).
        most_held: usize,
    }

    /// Feeds `pieces` as the server runtime would: unconsumed bytes carried over, the
    /// handler called again after `More` before the next piece.
    fn run<'a>(limits: Limits, pieces: impl IntoIterator<Item = &'a [u8]>) -> Run {
        let mut h = HttpHandlerFactory::new(limits).session();
        let mut written = Vec::new();
        let mut carry: Vec<u8> = Vec::new();
        let mut most_held = 0;
        for piece in pieces {
            carry.extend_from_slice(piece);
            loop {
                let mut out = Vec::new();
                let r = h.on_bytes(&carry, &mut out, &mut H2Figures::default());
                written.extend_from_slice(&out);
                match r {
                    Reply::Consumed(n) => {
                        carry.drain(..n);
                        break;
                    }
                    Reply::More(n) => {
                        carry.drain(..n);
                    }
                    Reply::Close | Reply::TooLarge => {
                        let requests = h.take_requests();
                        return Run {
                            written,
                            end: Some(r),
                            requests,
                            most_held,
                        };
                    }
                    Reply::Reflect(_) => panic!("http never reflects raw input"),
                }
            }
            most_held = most_held.max(carry.len());
        }
        let requests = h.take_requests();
        Run {
            written,
            end: None,
            requests,
            most_held,
        }
    }

    /// Feeds `input` split at `cut`; returns everything written, whether the handler
    /// asked to close, and the requests answered.
    fn serve(input: &[u8], cut: usize) -> (Vec<u8>, bool, u64) {
        let r = run(Limits::default(), [&input[..cut], &input[cut..]]);
        (r.written, r.end.is_some(), r.requests)
    }

    /// Strips the Date header (it changes every second) for comparisons.
    fn undated(b: &[u8]) -> String {
        let s = String::from_utf8_lossy(b).into_owned();
        s.split("\r\n")
            .filter(|l| !l.starts_with("Date: "))
            .collect::<Vec<_>>()
            .join("\r\n")
    }

    const PIPELINE: &[u8] = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n\
POST /echo HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello\
POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n\
GET /bytes/3 HTTP/1.1\r\n\r\n\
HEAD / HTTP/1.1\r\n\r\n\
GET /nope HTTP/1.1\r\n\r\n\
GET /status/500 HTTP/1.1\r\n\r\n\
DELETE / HTTP/1.1\r\n\r\n\
GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n\
GET / HTTP/1.0\r\n\r\n";

    /// The byte-level router reads targets exactly as the `str` parser did: absolute
    /// form, queries, a leading `+`, leading zeros, overflow and the caps.
    #[test]
    fn routes_read_targets_exactly() {
        let cases: &[(&str, &str, Route)] = &[
            ("GET", "/", Route::Hello),
            ("HEAD", "/?x=1", Route::Hello),
            ("GET", "http://h:8080/bytes/12?q", Route::Bytes(12)),
            ("GET", "http://h", Route::Hello),
            ("GET", "/bytes/+7", Route::Bytes(7)),
            ("GET", "/bytes/000000000000000000000009", Route::Bytes(9)),
            ("GET", "/bytes/67108864", Route::Bytes(MAX_BYTES_ROUTE)),
            ("GET", "/bytes/67108865", Route::NotFound),
            ("GET", "/bytes/99999999999999999999999", Route::NotFound),
            ("GET", "/bytes/", Route::NotFound),
            ("GET", "/bytes/+", Route::NotFound),
            ("GET", "/bytes/1x", Route::NotFound),
            ("GET", "/bytes/-1", Route::NotFound),
            ("GET", "/status/404", Route::Status(404)),
            ("GET", "/status/199", Route::NotFound),
            ("GET", "/status/600", Route::NotFound),
            ("GET", "/status/65936", Route::NotFound),
            ("GET", "/elsewhere", Route::NotFound),
            ("POST", "/anything", Route::Echo),
            ("PUT", "/", Route::Echo),
            ("DELETE", "/", Route::NotAllowed),
        ];
        for (method, target, want) in cases {
            assert_eq!(route(method, target), *want, "{method} {target}");
        }
    }

    #[test]
    fn pipelined_requests_split_at_every_byte() {
        let expected = "HTTP/1.1 200 OK\r\nServer: wirebench\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello\
HTTP/1.1 200 OK\r\nServer: wirebench\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello\
HTTP/1.1 200 OK\r\nServer: wirebench\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nabcde\
HTTP/1.1 200 OK\r\nServer: wirebench\r\nContent-Type: text/plain\r\nContent-Length: 3\r\n\r\nabc\
HTTP/1.1 200 OK\r\nServer: wirebench\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\n\
HTTP/1.1 404 Not Found\r\nServer: wirebench\r\nContent-Type: text/plain\r\nContent-Length: 10\r\n\r\nnot found\n\
HTTP/1.1 500 Internal Server Error\r\nServer: wirebench\r\nContent-Type: text/plain\r\nContent-Length: 11\r\n\r\nstatus 500\n\
HTTP/1.1 405 Method Not Allowed\r\nServer: wirebench\r\nContent-Type: text/plain\r\nContent-Length: 19\r\nAllow: GET, HEAD, POST, PUT\r\n\r\nmethod not allowed\n\
HTTP/1.1 200 OK\r\nServer: wirebench\r\nContent-Type: text/plain\r\nContent-Length: 5\r\nConnection: keep-alive\r\n\r\nhello\
HTTP/1.1 200 OK\r\nServer: wirebench\r\nContent-Type: text/plain\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello";
        for cut in 0..=PIPELINE.len() {
            let (out, closed, n) = serve(PIPELINE, cut);
            assert_eq!(undated(&out), expected, "cut {cut}");
            assert!(
                closed,
                "an HTTP/1.0 request without keep-alive closes (cut {cut})"
            );
            assert_eq!(n, 10);
        }
    }

    #[test]
    fn limits_and_malformed() {
        let (out, closed, _) = serve(b"GARBAGE\r\n\r\nGET / HTTP/1.1\r\n\r\n", 0);
        assert!(closed);
        assert!(
            undated(&out).starts_with("HTTP/1.1 400 Bad Request\r\n"),
            "{}",
            undated(&out)
        );
        assert!(undated(&out).contains("Connection: close"));

        let mut big = b"GET / HTTP/1.1\r\nX: ".to_vec();
        big.extend(std::iter::repeat_n(b'a', 20_000));
        let (out, closed, _) = serve(&big, 100);
        assert!(closed);
        assert!(
            undated(&out).starts_with("HTTP/1.1 431 "),
            "{}",
            undated(&out)
        );

        let (out, closed, _) = serve(b"POST / HTTP/1.1\r\nContent-Length: 999999999\r\n\r\n", 0);
        assert!(closed);
        assert!(undated(&out).starts_with("HTTP/1.1 413 "));

        let (out, closed, _) = serve(
            b"POST / HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n",
            0,
        );
        assert!(closed);
        assert!(undated(&out).starts_with("HTTP/1.1 400 "));
    }

    #[test]
    fn caps_end_as_too_large() {
        let limits = Limits {
            max_head: 1024,
            max_body: 4096,
            ..Limits::default()
        };
        let mut head = b"GET / HTTP/1.1\r\nX: ".to_vec();
        head.extend(std::iter::repeat_n(b'a', 2000));
        let many = format!(
            "GET / HTTP/1.1\r\n{}\r\n",
            "X: 1\r\n".repeat(MAX_HEADERS + 1)
        );
        let long = b"POST / HTTP/1.1\r\nContent-Length: 4097\r\n\r\n".to_vec();
        let mut chunked = b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
        for _ in 0..5 {
            chunked.extend_from_slice(b"400\r\n");
            chunked.extend(std::iter::repeat_n(b'x', 1024));
            chunked.extend_from_slice(b"\r\n");
        }
        let mut line = b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n1;".to_vec();
        line.extend(std::iter::repeat_n(b'e', 5000));
        for (input, status) in [
            (head, "431"),
            (many.into_bytes(), "431"),
            (long, "413"),
            (chunked, "413"),
            (line, "431"),
        ] {
            let r = run(limits, input.chunks(100));
            assert_eq!(r.end, Some(Reply::TooLarge), "{}", undated(&r.written));
            assert!(undated(&r.written).starts_with(&format!("HTTP/1.1 {status} ")));
        }
        // A malformed request is a plain close, not a cap.
        let r = run(limits, [&b"GARBAGE\r\n\r\n"[..]]);
        assert_eq!(r.end, Some(Reply::Close));
    }

    #[test]
    fn chunked_framing_is_not_held() {
        // 4 KiB of data in 1-byte chunks with 100-byte extensions (about 430 KiB on
        // the wire): only the decoded body and an unfinished line are held, not the framing.
        let mut req = b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
        let ext = "e".repeat(100);
        for _ in 0..4096 {
            req.extend_from_slice(format!("1;{ext}\r\nx\r\n").as_bytes());
        }
        req.extend_from_slice(b"0\r\n\r\n");
        let r = run(Limits::default(), req.chunks(1000));
        assert_eq!((r.end, r.requests), (None, 1));
        assert!(undated(&r.written).ends_with(&"x".repeat(4096)));
        assert!(r.most_held < 2000, "held {}", r.most_held);
    }

    #[test]
    fn pipelined_large_replies_yield_between_batches() {
        // 20 pipelined requests for 100 KiB each, in one read: answered in batches of
        // about MAX_OUT_BATCH, every one of them, in order.
        let reqs = b"GET /bytes/102400 HTTP/1.1\r\n\r\n".repeat(20);
        let mut h = HttpHandlerFactory::new(Limits::default()).session();
        let mut carry = reqs.clone();
        let mut calls = 0;
        let mut total = 0;
        loop {
            let mut out = Vec::new();
            let r = h.on_bytes(&carry, &mut out, &mut H2Figures::default());
            assert!(out.len() < MAX_OUT_BATCH + 103_000, "{}", out.len());
            total += out.len();
            calls += 1;
            match r {
                Reply::More(n) => {
                    carry.drain(..n);
                }
                Reply::Consumed(n) => {
                    assert_eq!(n, carry.len());
                    break;
                }
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(h.take_requests(), 20);
        assert!(calls >= 7, "{calls} calls");
        assert!(total > 20 * 102_400);
    }

    #[test]
    fn expect_continue_once() {
        let req = b"POST / HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\nok";
        let head = req.len() - 2;
        let (out, closed, n) = serve(req, head);
        assert!(!closed);
        assert_eq!(n, 1);
        let text = undated(&out);
        assert!(
            text.starts_with("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n"),
            "{text}"
        );
        assert!(text.ends_with("\r\n\r\nok"), "{text}");
        assert_eq!(text.matches("100 Continue").count(), 1);
    }
}
