//! The HTTP/1.1 load client: the same serialized request on every send, each response
//! parsed incrementally, its status judged, its body optionally checked against the
//! request body (`--expect-echo`). A response with a status the run does not accept
//! keeps the start of its body (decoded, however it was framed and split), so its
//! words (status line and body start) can be told.
//!
//! With a request set (`--request-set`) each connection walks the set's weight table
//! from a place of its own (`request_wire.rs`): a request's index in the set is its
//! tag, which judges its response (HEAD, the statuses it accepts, the substring its
//! body must hold) and files its figures (`entry_figures.rs`).

use super::entry_figures::HttpFigures;
use super::request_wire::WiredSet;
use super::response::{Parsed, ResponseParser};
use super::status::StatusSet;
use crate::engine::session::{
    ClientSession, Decode, InFlight, Lane, SessionFactory, Verdict, Words,
};
use crate::stats::ErrorKind;
use std::fmt::Write as _;
use std::sync::Arc;

pub struct HttpFactory {
    request: Arc<[u8]>,
    head: bool,
    accept: StatusSet,
    echo: Option<Arc<[u8]>>,
    keepalive: bool,
    set: Option<Arc<WiredSet>>,
}

impl HttpFactory {
    /// `request`: the serialized request. `head`: it is a HEAD (responses have no body).
    /// `echo`: the body every response must carry. `keepalive`: false closes after each reply.
    pub fn new(
        request: Vec<u8>,
        head: bool,
        accept: StatusSet,
        echo: Option<Vec<u8>>,
        keepalive: bool,
    ) -> Self {
        HttpFactory {
            request: request.into(),
            head,
            accept,
            echo: echo.map(Into::into),
            keepalive,
            set: None,
        }
    }

    /// Sends the requests of `set` by weight instead of `request`.
    pub fn with_set(mut self, set: WiredSet) -> Self {
        self.set = Some(Arc::new(set));
        self
    }
}

impl HttpFactory {
    /// Connection policy: keep-alive off is one request per connection.
    pub fn per_connection(&self) -> Option<u64> {
        (!self.keepalive).then_some(1)
    }
}

impl SessionFactory for HttpFactory {
    type Session = HttpClient;

    fn session(&self, conn_id: u64) -> HttpClient {
        HttpClient {
            request: self.request.clone(),
            head: self.head,
            accept: self.accept,
            echo: self.echo.clone(),
            keepalive: self.keepalive,
            parser: ResponseParser::default(),
            echo_pos: 0,
            echo_bad: false,
            said: Said::default(),
            cursor: self.set.as_ref().map(|set| Cursor {
                at: set.start_of(conn_id),
                set: set.clone(),
                clock_offset: None,
                found: 0,
            }),
        }
    }
}

/// A connection's walk through a request set's weight table.
struct Cursor {
    set: Arc<WiredSet>,
    /// Its next place in the table.
    at: u32,
    /// CLOCK_MONOTONIC minus the run's clock, read at the first request: a request's
    /// latency is taken as its response is parsed (one clock reading per response).
    clock_offset: Option<u64>,
    /// How much of the current response's expected substring is matched.
    found: u32,
}

impl Cursor {
    /// Latency of a response to a request meant to go at `intended_ns`, now.
    #[inline]
    fn latency(&self, intended_ns: u64) -> u64 {
        let now = crate::clock::monotonic_ns().saturating_sub(self.clock_offset.unwrap_or(0));
        now.saturating_sub(intended_ns)
    }
}

/// Body bytes of a response with a status the run does not accept kept for its words.
const BODY_WORDS: usize = 64;

/// What a wrong response said, kept until the engine asks (`error_words`): its
/// status, the start of its body, or why it could not be parsed. Only a response the
/// run does not accept writes here.
struct Said {
    /// The start of the current response's body (while its status is not accepted).
    body: [u8; BODY_WORDS],
    /// Bytes in `body` of the response being read.
    len: u8,
    /// The last wrong response: its status and how many body bytes it kept.
    status: u16,
    kept: u8,
    /// Why the last unparseable response could not be followed.
    problem: &'static str,
    /// The request of the set whose response lacked its `body_contains`.
    lacked: Option<u32>,
}

impl Default for Said {
    fn default() -> Self {
        Said {
            body: [0; BODY_WORDS],
            len: 0,
            status: 0,
            kept: 0,
            problem: "",
            lacked: None,
        }
    }
}

impl Said {
    /// Keeps the start of a wrong response's body, piece by piece.
    #[inline]
    fn keep(&mut self, piece: &[u8]) {
        let at = self.len as usize;
        let n = piece.len().min(BODY_WORDS - at);
        self.body[at..at + n].copy_from_slice(&piece[..n]);
        self.len += n as u8;
    }
}

pub struct HttpClient {
    request: Arc<[u8]>,
    head: bool,
    accept: StatusSet,
    echo: Option<Arc<[u8]>>,
    keepalive: bool,
    parser: ResponseParser,
    /// `--expect-echo`: body bytes compared so far, and whether any differed.
    echo_pos: usize,
    echo_bad: bool,
    said: Said,
    cursor: Option<Cursor>,
}

/// Compares the next piece of a response body with the expected body.
#[inline]
fn check_piece(expected: &[u8], pos: &mut usize, bad: &mut bool, piece: &[u8]) {
    let end = *pos + piece.len();
    if end > expected.len() || expected[*pos..end] != *piece {
        *bad = true;
    }
    *pos = end;
}

impl HttpClient {
    /// A reply after which the stream cannot be followed: the connection is dropped.
    /// Unparseable replies are counted in no status class.
    fn fatal(&mut self, kind: ErrorKind) -> Decode {
        Decode::Reply {
            used: 0,
            settles: 1,
            lane: Lane::ANY,
            verdict: Verdict::Fatal(kind),
            close: true,
        }
    }

    /// What judges the response to `oldest`: (HEAD, accepted statuses).
    #[inline]
    fn judged_by(&self, oldest: &InFlight) -> (bool, StatusSet) {
        match &self.cursor {
            Some(c) => (c.set.head(oldest.tag), c.set.accept(oldest.tag)),
            None => (self.head, self.accept),
        }
    }

    fn finish(&mut self, parsed: Parsed, oldest: &InFlight, figs: &mut HttpFigures) -> Decode {
        match parsed {
            Parsed::Incomplete => Decode::Incomplete,
            Parsed::Consumed(used) => Decode::Consumed { used },
            Parsed::Invalid(why) => {
                self.said.problem = why;
                self.fatal(ErrorKind::Protocol)
            }
            Parsed::TooLarge(why) => {
                self.said.problem = why;
                self.fatal(ErrorKind::TooLarge)
            }
            Parsed::Done {
                used,
                status,
                close,
            } => {
                figs.codes.count(status);
                let (_, accept) = self.judged_by(oldest);
                // `--expect-echo`'s body, or the request's `body_contains`, not there.
                let wrong_body = self
                    .echo
                    .as_ref()
                    .is_some_and(|e| self.echo_bad || self.echo_pos != e.len())
                    || self.cursor.as_ref().is_some_and(|c| {
                        c.set
                            .needle(oldest.tag)
                            .is_some_and(|n| c.found != n.pattern_len())
                    });
                let verdict = if !accept.contains(status) {
                    let s = &mut self.said;
                    (s.status, s.kept, s.len) = (status, s.len, 0);
                    Verdict::Error(ErrorKind::Status)
                } else if wrong_body {
                    self.said.lacked = self.cursor.as_ref().map(|_| oldest.tag);
                    Verdict::Error(ErrorKind::Mismatch)
                } else {
                    Verdict::Ok
                };
                if let Some(c) = &mut self.cursor {
                    let latency = c.latency(oldest.intended_ns);
                    figs.entry_reply(oldest.tag, status, verdict == Verdict::Ok, latency);
                    c.found = 0;
                }
                self.parser.reset();
                self.echo_pos = 0;
                self.echo_bad = false;
                Decode::Reply {
                    used,
                    settles: 1,
                    lane: Lane::ANY,
                    verdict,
                    close: close || !self.keepalive,
                }
            }
        }
    }
}

/// A piece of a response body: checked against the echo, searched for the expected
/// substring, and kept for the words while its status is not accepted.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn body_piece(
    echo: &Option<Arc<[u8]>>,
    pos: &mut usize,
    bad: &mut bool,
    found: &mut Option<(&super::request_wire::Needle, &mut u32)>,
    status: u16,
    piece: &[u8],
    accept: StatusSet,
    said: &mut Said,
) {
    if let Some(e) = echo {
        check_piece(e, pos, bad, piece);
    }
    if let Some((needle, state)) = found {
        **state = needle.feed(**state, piece);
    }
    if !accept.contains(status) {
        said.keep(piece);
    }
}

impl ClientSession for HttpClient {
    type Figures = HttpFigures;

    #[inline]
    fn encode(&mut self, _seq: u64, sent_ns: u64, out: &mut Vec<u8>) -> u32 {
        let Some(c) = &mut self.cursor else {
            out.extend_from_slice(&self.request);
            return 0;
        };
        if c.clock_offset.is_none() {
            c.clock_offset = Some(crate::clock::monotonic_ns().saturating_sub(sent_ns));
        }
        let i = c.set.at(c.at);
        c.at = if c.at + 1 == c.set.places() {
            0
        } else {
            c.at + 1
        };
        out.extend_from_slice(c.set.request(i));
        i
    }

    #[inline]
    fn decode(
        &mut self,
        input: &[u8],
        oldest: Option<&InFlight>,
        _out: &mut Vec<u8>,
        figs: &mut HttpFigures,
    ) -> Decode {
        // A server does not speak before it is asked.
        let Some(oldest) = oldest else {
            return Decode::Fail {
                kind: ErrorKind::Unsolicited,
            };
        };
        let (head, accept) = self.judged_by(oldest);
        let (echo, pos, bad) = (&self.echo, &mut self.echo_pos, &mut self.echo_bad);
        let said = &mut self.said;
        let mut found = self
            .cursor
            .as_mut()
            .and_then(|c| Some((c.set.needle(oldest.tag)?, &mut c.found)));
        let parsed = self.parser.parse(input, head, |status, piece| {
            body_piece(echo, pos, bad, &mut found, status, piece, accept, said);
        });
        self.finish(parsed, oldest, figs)
    }

    fn decode_at_close(
        &mut self,
        input: &[u8],
        oldest: &InFlight,
        figs: &mut HttpFigures,
    ) -> Decode {
        let (_, accept) = self.judged_by(oldest);
        let (echo, pos, bad) = (&self.echo, &mut self.echo_pos, &mut self.echo_bad);
        let said = &mut self.said;
        let mut found = self
            .cursor
            .as_mut()
            .and_then(|c| Some((c.set.needle(oldest.tag)?, &mut c.found)));
        let parsed = self.parser.parse_at_close(input, |status, piece| {
            body_piece(echo, pos, bad, &mut found, status, piece, accept, said);
        });
        self.finish(parsed, oldest, figs)
    }

    /// A status the run does not accept: the status line and the start of the body
    /// ("HTTP/1.1 503 Service Unavailable: busy, retry later"). A response that could
    /// not be followed: why. A body without its request's `body_contains`: that. A
    /// wrong echo: nothing (its kind says it).
    fn error_words(&mut self, kind: ErrorKind, _input: &[u8], words: &mut Words) {
        let s = &self.said;
        match kind {
            ErrorKind::Status => {
                match self.parser.status_line() {
                    Some(line) => words.push(line),
                    None => {
                        let _ = write!(words, "HTTP status {}", s.status);
                    }
                }
                if s.kept > 0 {
                    words.push(b": ");
                    words.push(&s.body[..s.kept as usize]);
                }
            }
            ErrorKind::Protocol | ErrorKind::TooLarge => words.push(s.problem.as_bytes()),
            ErrorKind::Mismatch => {
                let needle = self.cursor.as_ref().zip(s.lacked);
                if let Some(n) = needle.and_then(|(c, i)| c.set.needle(i)) {
                    words.push(b"the body does not hold ");
                    words.push(n.pattern());
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req() -> InFlight {
        InFlight {
            seq: 0,
            intended_ns: 0,
            sent_ns: 0,
            tag: 0,
            lane: Lane::ANY,
            measured: true,
            on_write: false,
        }
    }

    fn dec(c: &mut HttpClient, input: &[u8], classes: &mut HttpFigures) -> Decode {
        c.decode(input, Some(&req()), &mut Vec::new(), classes)
    }

    fn reply(used: usize, verdict: Verdict, close: bool) -> Decode {
        Decode::Reply {
            used,
            settles: 1,
            lane: Lane::ANY,
            verdict,
            close,
        }
    }

    /// Decodes as the engine does: consumed bytes are dropped and decode asked again.
    /// Returns the bytes consumed and the first other answer.
    fn drive(c: &mut HttpClient, input: &[u8]) -> (usize, Decode) {
        let mut at = 0;
        loop {
            match dec(c, &input[at..], &mut HttpFigures::default()) {
                Decode::Consumed { used } => at += used,
                other => return (at, other),
            }
        }
    }

    fn client(echo: Option<&[u8]>, keepalive: bool) -> HttpClient {
        HttpFactory::new(
            b"GET / HTTP/1.1\r\n\r\n".to_vec(),
            false,
            StatusSet::default(),
            echo.map(<[u8]>::to_vec),
            keepalive,
        )
        .session(0)
    }

    #[test]
    fn verdicts() {
        let mut c = client(None, true);
        let mut classes = HttpFigures::default();
        let ok = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi";
        assert_eq!(
            dec(&mut c, ok, &mut classes),
            reply(ok.len(), Verdict::Ok, false)
        );
        assert_eq!(
            classes.codes.by_code().into_iter().collect::<Vec<_>>(),
            [("200".to_string(), 1)]
        );
        let nf = b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
        assert_eq!(
            dec(&mut c, nf, &mut classes),
            reply(nf.len(), Verdict::Error(ErrorKind::Status), true)
        );
        assert_eq!((classes.codes.of(200), classes.codes.of(404)), (1, 1));
        assert_eq!(
            dec(&mut c, b"garbage\r\n\r\n", &mut classes),
            reply(0, Verdict::Fatal(ErrorKind::Protocol), true)
        );
        assert_eq!(
            classes.codes.by_code().values().sum::<u64>(),
            2,
            "no code for an unparseable reply"
        );
        assert_eq!(
            c.decode(ok, None, &mut Vec::new(), &mut classes),
            Decode::Fail {
                kind: ErrorKind::Unsolicited
            }
        );
    }

    #[test]
    fn endless_interim_replies_end_as_too_large() {
        let mut c = client(None, true);
        let interim = b"HTTP/1.1 100 Continue\r\n\r\n";
        for _ in 0..super::super::response::MAX_INTERIM {
            assert_eq!(
                dec(&mut c, interim, &mut HttpFigures::default()),
                Decode::Consumed {
                    used: interim.len()
                }
            );
        }
        assert_eq!(
            dec(&mut c, interim, &mut HttpFigures::default()),
            reply(0, Verdict::Fatal(ErrorKind::TooLarge), true)
        );
    }

    #[test]
    fn echo_checked_across_splits() {
        let good = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
        let bad = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhellO";
        let short = b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nhell";
        for cut in 0..good.len() {
            let mut c = client(Some(b"hello"), false);
            let (at, first) = drive(&mut c, &good[..cut]);
            assert_eq!(first, Decode::Incomplete);
            assert_eq!(
                drive(&mut c, &good[at..]),
                (0, reply(good.len() - at, Verdict::Ok, true)),
                "keep-alive off closes after each reply"
            );
            let mut c = client(Some(b"hello"), true);
            let (at, first) = drive(&mut c, &bad[..cut]);
            assert_eq!(first, Decode::Incomplete);
            assert_eq!(
                drive(&mut c, &bad[at..]).1,
                reply(bad.len() - at, Verdict::Error(ErrorKind::Mismatch), false)
            );
        }
        let mut c = client(Some(b"hello"), true);
        assert_eq!(
            dec(&mut c, short, &mut HttpFigures::default()),
            reply(short.len(), Verdict::Error(ErrorKind::Mismatch), false)
        );
    }

    /// The words the engine would record after each reply of `stream`, fed in two
    /// pieces cut at `cut`, as it does: (verdict, words) per reply.
    fn told(c: &mut HttpClient, stream: &[u8], cut: usize) -> Vec<(Verdict, String)> {
        let mut out = Vec::new();
        let mut kept: Vec<u8> = Vec::new();
        for piece in [&stream[..cut], &stream[cut..]] {
            kept.extend_from_slice(piece);
            loop {
                match dec(c, &kept, &mut HttpFigures::default()) {
                    Decode::Consumed { used } => drop(kept.drain(..used)),
                    Decode::Reply { used, verdict, .. } => {
                        let mut w = Words::new();
                        if let Verdict::Error(k) | Verdict::Fatal(k) = verdict {
                            c.error_words(k, &kept, &mut w);
                        }
                        out.push((verdict, w.as_str().to_string()));
                        kept.drain(..used);
                        if used == 0 {
                            return out;
                        }
                    }
                    _ => break,
                }
            }
        }
        out
    }

    #[test]
    fn a_wrong_status_tells_its_status_line_and_body_start_however_it_is_split() {
        let stream: &[u8] =
            b"HTTP/1.1 503 Service Unavailable\r\nTransfer-Encoding: chunked\r\n\r\n\
            6\r\nbusy, \r\nb\r\nretry later\r\n0\r\n\r\n\
            HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok\
            HTTP/1.1 404 Not Found\r\nContent-Length: 100\r\n\r\n";
        let mut stream = stream.to_vec();
        stream.extend_from_slice(&[b'x'; 100]);
        let body64 = format!("HTTP/1.1 404 Not Found: {}", "x".repeat(64));
        for cut in 0..stream.len() {
            let mut c = client(None, true);
            let said = told(&mut c, &stream, cut);
            let want = [
                (
                    Verdict::Error(ErrorKind::Status),
                    "HTTP/1.1 503 Service Unavailable: busy, retry later".to_string(),
                ),
                (Verdict::Ok, String::new()),
                (Verdict::Error(ErrorKind::Status), body64.clone()),
            ];
            assert_eq!(said, want, "cut at {cut}");
        }
        let mut c = client(None, true);
        assert_eq!(
            told(&mut c, b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n", 0),
            [(
                Verdict::Fatal(ErrorKind::Protocol),
                "a Content-Length header is not a number".to_string()
            )]
        );
    }

    /// A set of two requests weighted 1:1: /a accepts 404 only, /b must hold "yes".
    fn set_client() -> HttpClient {
        use super::super::raw_entry::RawEntry;
        use super::super::request_set::RequestSet;
        let mut a = RawEntry::new(1, "GET", "http://h/a");
        a.status = Some(("404".into(), 1));
        let mut b = RawEntry::new(2, "GET", "http://h/b");
        b.body_contains = Some(("yes".into(), 2));
        let set = RequestSet::from_raw(std::path::Path::new("t"), vec![a, b]).unwrap();
        let wired = WiredSet::new(&set, &[], false, StatusSet::default());
        HttpFactory::new(Vec::new(), false, StatusSet::default(), None, true)
            .with_set(wired)
            .session(0)
    }

    #[test]
    fn a_set_sends_by_weight_and_judges_each_response_by_its_request() {
        let mut c = set_client();
        let mut out = Vec::new();
        let tags: Vec<u32> = (0..4).map(|i| c.encode(i, 0, &mut out)).collect();
        let a = b"GET /a HTTP/1.1\r\nHost: h\r\n\r\n".as_slice();
        let b = b"GET /b HTTP/1.1\r\nHost: h\r\n\r\n".as_slice();
        let want: Vec<u8> = tags
            .iter()
            .flat_map(|&t| if t == 0 { a } else { b })
            .copied()
            .collect();
        assert_eq!(out, want);
        assert_eq!(tags.iter().filter(|&&t| t == 0).count(), 2, "{tags:?}");
        let mut figs = HttpFigures::default();
        let mut judge = |tag: u32, reply: &[u8]| {
            let req = InFlight { tag, ..req() };
            let d = c.decode(reply, Some(&req), &mut Vec::new(), &mut figs);
            let mut w = Words::new();
            if let Decode::Reply {
                verdict: Verdict::Error(k),
                ..
            } = d
            {
                c.error_words(k, reply, &mut w);
            }
            (d, w.as_str().to_string())
        };
        let nf = b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n";
        assert_eq!(judge(0, nf).0, reply(nf.len(), Verdict::Ok, false));
        let ok = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
        assert_eq!(
            judge(0, ok).0,
            reply(ok.len(), Verdict::Error(ErrorKind::Status), false)
        );
        let yes = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nayesb";
        assert_eq!(judge(1, yes).0, reply(yes.len(), Verdict::Ok, false));
        let no = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nay-es";
        assert_eq!(
            judge(1, no),
            (
                reply(no.len(), Verdict::Error(ErrorKind::Mismatch), false),
                "the body does not hold yes".to_string()
            )
        );
        let e = &figs.entries;
        assert_eq!(
            (e[0].answered, e[0].ok, e[1].answered, e[1].ok),
            (2, 1, 2, 1)
        );
        assert_eq!(e[0].codes, [(404, 1), (200, 1)]);
        assert_eq!((e[0].latency.count(), e[1].latency.count()), (2, 2));
        assert_eq!((figs.codes.of(200), figs.codes.of(404)), (3, 1));
    }
}
