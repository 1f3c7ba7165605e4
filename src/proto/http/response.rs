//! The client's response parser: httparse for the head, our own body framing
//! (Content-Length, chunked, close-delimited), interim 1xx responses skipped. It is
//! incremental: called again with the same response's bytes plus more, it goes on
//! where it stopped, so a response split at any byte is parsed in linear time.
//!
//! Memory stays bounded whatever the server sends: what is parsed (an interim
//! response, body bytes handed to the sink) is given back as `Consumed` for the caller
//! to drop, so only an unfinished head (at most `MAX_HEAD`) or an unfinished chunk-size
//! line (at most `chunked::MAX_LINE`) is ever held. An endless body is counted and
//! discarded as it arrives, not buffered.

use super::chunked::{self, Chunked};
use std::mem::MaybeUninit;

/// Most bytes of a response head (status line and headers); past it: `TooLarge`.
pub const MAX_HEAD: usize = 64 * 1024;
/// Most header fields in a response head; past it: `TooLarge`.
const MAX_HEADERS: usize = 64;
/// Most interim (1xx) responses before the final one; past it: `TooLarge`. Each is
/// consumed as soon as it is parsed, so they never pile up in memory either.
pub const MAX_INTERIM: u32 = 16;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Framing {
    /// No body (HEAD, 204, 304).
    Empty,
    /// This many body bytes still to come (after those already consumed).
    Length(u64),
    Chunked,
    /// The body runs to the end of the connection.
    UntilClose,
}

#[derive(Clone, Copy, Debug)]
struct Head {
    status: u16,
    /// Offset of the body in the input (0 once the head was consumed).
    body_at: usize,
    framing: Framing,
    /// The connection ends after this response.
    close: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Parsed {
    /// More bytes are needed.
    Incomplete,
    /// The first `n` bytes (> 0) are parsed and done with (an interim response, body
    /// bytes handed to the sink): drop them and call again with what follows.
    Consumed(usize),
    /// A whole response of `used` bytes (after any consumed before).
    Done {
        used: usize,
        status: u16,
        close: bool,
    },
    /// Not a valid response: the stream cannot be trusted any more.
    Invalid(&'static str),
    /// Past a documented cap (`MAX_HEAD`, `MAX_HEADERS`, `MAX_INTERIM`, a chunked line
    /// or trailers): the stream is not followed further.
    TooLarge(&'static str),
}

/// What the start of the input holds, head-wise.
enum HeadStep {
    Incomplete,
    /// An interim response of this many bytes.
    Interim(usize),
    Final(Head),
}

/// Most bytes of a final head kept to recognise the next one (`SameHead`); a longer
/// head is parsed every time.
pub const MAX_SAME_HEAD: usize = 1024;

#[derive(Clone, Debug, Default)]
pub struct ResponseParser {
    head: Option<Head>,
    /// Interim responses skipped so far.
    interim: u32,
    /// Body bytes of the input handed to the sink so far (Length and UntilClose).
    fed: usize,
    chunked: Chunked,
    /// The connection's last final head (kept across responses).
    last: SameHead,
}

/// The last final head parsed on a connection, byte for byte, with what it parsed to.
/// A keep-alive server repeats its head (nginx changes only its `Date`, once a
/// second): a head that starts the input with exactly these bytes parses exactly the
/// same, so httparse (about 1,900 instructions for nginx's head, more than half of
/// the client's per-request work) runs once per change instead of once per response.
/// At most `MAX_SAME_HEAD` bytes, allocated once per connection.
#[derive(Clone, Debug, Default)]
struct SameHead {
    bytes: Vec<u8>,
    /// Parsed for a HEAD request (no body whatever the head says).
    head_request: bool,
    head: Option<Head>,
}

impl SameHead {
    /// The head at the start of `input`, if it is the one kept.
    #[inline]
    fn recognise(&self, input: &[u8], head_request: bool) -> Option<Head> {
        let h = self.head?;
        (self.head_request == head_request && input.starts_with(&self.bytes)).then_some(h)
    }

    fn keep(&mut self, input: &[u8], head_request: bool, head: Head) {
        self.head = None;
        if head.body_at > MAX_SAME_HEAD {
            return;
        }
        self.bytes.clear();
        self.bytes.extend_from_slice(&input[..head.body_at]);
        self.head_request = head_request;
        self.head = Some(head);
    }
}

fn eq_ignore_case(a: &[u8], b: &[u8]) -> bool {
    a.eq_ignore_ascii_case(b)
}

/// Whether a comma-separated header value holds `token` (any case).
fn has_token(value: &[u8], token: &[u8]) -> bool {
    value
        .split(|&b| b == b',')
        .any(|t| eq_ignore_case(t.trim_ascii(), token))
}

fn parse_length(v: &[u8]) -> Option<u64> {
    let v = v.trim_ascii();
    if v.is_empty() || v.len() > 19 || !v.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(v).ok()?.parse().ok()
}

impl ResponseParser {
    /// The status line of the connection's last final head (without its CRLF), when it
    /// was kept (a head of at most `MAX_SAME_HEAD` bytes): after `Done`, the line of
    /// the response just parsed, whether its head was consumed before or not.
    pub fn status_line(&self) -> Option<&[u8]> {
        self.last.head?;
        let b = &self.last.bytes;
        let end = b
            .iter()
            .position(|&c| c == b'\r' || c == b'\n')
            .unwrap_or(b.len());
        Some(&b[..end])
    }

    /// Ready for the next response on the connection.
    #[inline]
    pub fn reset(&mut self) {
        let last = std::mem::take(&mut self.last);
        *self = ResponseParser {
            last,
            ..ResponseParser::default()
        };
    }

    /// Parses the response at the start of `input`, which holds everything received
    /// since it began, less what earlier calls returned as `Consumed`. `head_request`:
    /// it answers a HEAD (no body, whatever the head says). Each body byte is handed
    /// to `sink` once, in order, across calls, with the response's status.
    pub fn parse(
        &mut self,
        input: &[u8],
        head_request: bool,
        mut sink: impl FnMut(u16, &[u8]),
    ) -> Parsed {
        let head = match self.head {
            Some(h) => h,
            None => match self.last.recognise(input, head_request) {
                Some(h) => {
                    self.head = Some(h);
                    h
                }
                None => match self.parse_head(input, head_request) {
                    Ok(HeadStep::Final(h)) => {
                        self.head = Some(h);
                        self.last.keep(input, head_request, h);
                        h
                    }
                    Ok(HeadStep::Interim(len)) => return Parsed::Consumed(len),
                    Ok(HeadStep::Incomplete) => return Parsed::Incomplete,
                    Err(e) => return e,
                },
            },
        };
        let body = &input[head.body_at..];
        let done = |used: usize| Parsed::Done {
            used,
            status: head.status,
            close: head.close,
        };
        match head.framing {
            Framing::Empty => done(head.body_at),
            Framing::Length(left) => {
                let have = (body.len() as u64).min(left) as usize;
                if have > self.fed {
                    sink(head.status, &body[self.fed..have]);
                    self.fed = have;
                }
                if (have as u64) < left {
                    self.consume(head.body_at + have, Framing::Length(left - have as u64))
                } else {
                    done(head.body_at + have)
                }
            }
            Framing::Chunked => match self.chunked.advance(body, |p| sink(head.status, p)) {
                chunked::Step::Incomplete => {
                    let decoded = self.chunked.decoded();
                    self.chunked.rebase();
                    self.consume(head.body_at + decoded, Framing::Chunked)
                }
                chunked::Step::Done(n) => done(head.body_at + n),
                chunked::Step::Invalid(why) => Parsed::Invalid(why),
                chunked::Step::TooLarge(why) => Parsed::TooLarge(why),
            },
            Framing::UntilClose => {
                if body.len() > self.fed {
                    sink(head.status, &body[self.fed..]);
                }
                self.consume(input.len(), Framing::UntilClose)
            }
        }
    }

    /// The first `n` bytes of the input are parsed (the head and the body bytes fed so
    /// far): offsets restart after them, and `framing` is what is left of the body.
    fn consume(&mut self, n: usize, framing: Framing) -> Parsed {
        if n == 0 {
            return Parsed::Incomplete;
        }
        if let Some(h) = self.head.as_mut() {
            h.body_at = 0;
            h.framing = framing;
        }
        self.fed = 0;
        Parsed::Consumed(n)
    }

    /// The peer closed the connection: a body that runs to the close is complete now;
    /// anything else still incomplete was cut short.
    pub fn parse_at_close(&mut self, input: &[u8], mut sink: impl FnMut(u16, &[u8])) -> Parsed {
        match self.head {
            Some(h) if h.framing == Framing::UntilClose => {
                let body = &input[h.body_at..];
                if body.len() > self.fed {
                    sink(h.status, &body[self.fed..]);
                    self.fed = body.len();
                }
                Parsed::Done {
                    used: input.len(),
                    status: h.status,
                    close: true,
                }
            }
            _ => Parsed::Incomplete,
        }
    }

    /// Parses the head at the start of `input`: an interim (1xx) one to skip, the
    /// final one, or not complete yet.
    fn parse_head(&mut self, input: &[u8], head_request: bool) -> Result<HeadStep, Parsed> {
        // Uninitialized: zeroing 64 headers (2 KiB) per response is measurable.
        let mut headers = [const { MaybeUninit::<httparse::Header>::uninit() }; MAX_HEADERS];
        let mut r = httparse::Response::new(&mut []);
        let parsed = httparse::ParserConfig::default().parse_response_with_uninit_headers(
            &mut r,
            input,
            &mut headers,
        );
        let len = match parsed {
            Ok(httparse::Status::Complete(n)) => n,
            Ok(httparse::Status::Partial) => {
                return if input.len() > MAX_HEAD {
                    Err(Parsed::TooLarge("the response head is larger than 64 KiB"))
                } else {
                    Ok(HeadStep::Incomplete)
                };
            }
            Err(httparse::Error::TooManyHeaders) => {
                return Err(Parsed::TooLarge(
                    "the response has more than 64 header fields",
                ))
            }
            Err(_) => return Err(Parsed::Invalid("the response head is not valid HTTP/1.x")),
        };
        if len > MAX_HEAD {
            return Err(Parsed::TooLarge("the response head is larger than 64 KiB"));
        }
        let status = r.code.unwrap_or(0);
        let http10 = r.version == Some(0);
        if status == 101 {
            return Err(Parsed::Invalid("the server switched protocols (101)"));
        }
        if (100..200).contains(&status) {
            // Interim response (100 Continue, 103 Early Hints): the final one follows.
            self.interim += 1;
            if self.interim > MAX_INTERIM {
                return Err(Parsed::TooLarge(
                    "more than 16 interim (1xx) responses to one request",
                ));
            }
            return Ok(HeadStep::Interim(len));
        }
        let mut length: Option<u64> = None;
        let mut chunked = false;
        let mut has_te = false;
        let mut close = http10;
        for h in r.headers.iter() {
            let name = h.name.as_bytes();
            if eq_ignore_case(name, b"content-length") {
                let Some(n) = parse_length(h.value) else {
                    return Err(Parsed::Invalid("a Content-Length header is not a number"));
                };
                if length.is_some_and(|l| l != n) {
                    return Err(Parsed::Invalid(
                        "the response has conflicting Content-Length headers",
                    ));
                }
                length = Some(n);
            } else if eq_ignore_case(name, b"transfer-encoding") {
                has_te = true;
                // Chunked only if it is the last coding applied.
                chunked = h
                    .value
                    .rsplit(|&b| b == b',')
                    .next()
                    .is_some_and(|t| eq_ignore_case(t.trim_ascii(), b"chunked"));
            } else if eq_ignore_case(name, b"connection") {
                if has_token(h.value, b"close") {
                    close = true;
                } else if http10 && has_token(h.value, b"keep-alive") {
                    close = false;
                }
            }
        }
        let framing = if head_request || status == 204 || status == 304 {
            Framing::Empty
        } else if has_te {
            if chunked {
                Framing::Chunked
            } else {
                Framing::UntilClose
            }
        } else if let Some(n) = length {
            // Any length: the body is consumed as it arrives, never held whole.
            Framing::Length(n)
        } else {
            Framing::UntilClose
        };
        let close = close || framing == Framing::UntilClose;
        Ok(HeadStep::Final(Head {
            status,
            body_at: len,
            framing,
            close,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Parses `input` as the engine does: drops what is `Consumed` and asks again.
    /// Returns the bytes consumed and the first other answer.
    fn drive(
        p: &mut ResponseParser,
        input: &[u8],
        head: bool,
        body: &mut Vec<u8>,
    ) -> (usize, Parsed) {
        let mut at = 0;
        loop {
            match p.parse(&input[at..], head, |_, b| body.extend_from_slice(b)) {
                Parsed::Consumed(n) => {
                    assert!(n > 0 && at + n <= input.len());
                    at += n;
                }
                other => return (at, other),
            }
        }
    }

    /// Parses `stream` as back-to-back responses fed `cut` bytes first, then all;
    /// returns (status, body, close) per response.
    fn parse_stream(stream: &[u8], cut: usize, heads: &[bool]) -> Vec<(u16, Vec<u8>, bool)> {
        let mut out = Vec::new();
        let mut p = ResponseParser::default();
        let mut at = 0;
        for &head in heads {
            let mut body = Vec::new();
            // First only what has "arrived" (up to cut), then everything.
            let limit = cut.max(at);
            let (c, mut r) = drive(&mut p, &stream[at..limit], head, &mut body);
            at += c;
            if r == Parsed::Incomplete {
                let (c, r2) = drive(&mut p, &stream[at..], head, &mut body);
                at += c;
                r = r2;
            }
            match r {
                Parsed::Done {
                    used,
                    status,
                    close,
                } => {
                    out.push((status, body, close));
                    at += used;
                    p.reset();
                }
                other => panic!("cut {cut}: {other:?} at {at}"),
            }
        }
        assert_eq!(at, stream.len(), "cut {cut}");
        out
    }

    /// A head recognised as the last one parses as it did; one that differs in any
    /// byte (a length, a status, a `Connection: close`), is split, or answers a HEAD
    /// request is parsed afresh. Every split point of each stream is tried.
    #[test]
    fn a_repeated_head_parses_as_the_first() {
        let same = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
        let longer = b"HTTP/1.1 200 OK\r\nContent-Length: 7\r\n\r\nhello!!";
        let closing = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello";
        let other = b"HTTP/1.1 503 Busy\r\nContent-Length: 5\r\n\r\nhello";
        let mut stream = Vec::new();
        for r in [
            &same[..],
            same,
            longer,
            same,
            closing,
            same,
            other,
            same,
            same,
        ] {
            stream.extend_from_slice(r);
        }
        let heads = [false; 9];
        for cut in 0..=stream.len() {
            let got = parse_stream(&stream, cut, &heads);
            let want = |s: u16, b: &[u8], c: bool| (s, b.to_vec(), c);
            assert_eq!(
                got,
                vec![
                    want(200, b"hello", false),
                    want(200, b"hello", false),
                    want(200, b"hello!!", false),
                    want(200, b"hello", false),
                    want(200, b"hello", true),
                    want(200, b"hello", false),
                    want(503, b"hello", false),
                    want(200, b"hello", false),
                    want(200, b"hello", false),
                ],
                "cut {cut}"
            );
        }
        // The same head answering a HEAD request has no body.
        let mut p = ResponseParser::default();
        let mut body = Vec::new();
        assert!(matches!(
            drive(&mut p, same, false, &mut body).1,
            Parsed::Done { used: 43, .. }
        ));
        p.reset();
        let head_only = &same[..same.len() - 5];
        assert!(
            matches!(drive(&mut p, same, true, &mut body).1, Parsed::Done { used, .. } if used == head_only.len())
        );
    }

    const PIPELINED: &[u8] = b"HTTP/1.1 100 Continue\r\n\r\n\
HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Type: text/plain\r\n\r\nhello\
HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n\
HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;x=y\r\nde\r\n0\r\nTrailer: t\r\n\r\n\
HTTP/1.1 200 OK\r\nContent-Length: 7\r\n\r\n\
HTTP/1.1 204 No Content\r\n\r\n\
HTTP/1.1 500 Internal Server Error\r\nContent-Length: 3\r\nConnection: close\r\n\r\nbad";

    #[test]
    fn pipelined_responses_split_at_every_byte() {
        // The fifth answers a HEAD: its Content-Length announces a body that is not sent.
        let heads = [false, false, false, true, false, false];
        for cut in 0..=PIPELINED.len() {
            let r = parse_stream(PIPELINED, cut, &heads);
            assert_eq!(
                r,
                vec![
                    (200, b"hello".to_vec(), false),
                    (404, vec![], false),
                    (200, b"abcde".to_vec(), false),
                    (200, vec![], false),
                    (204, vec![], false),
                    (500, b"bad".to_vec(), true),
                ],
                "cut {cut}"
            );
        }
    }

    #[test]
    fn every_byte_fed_one_at_a_time() {
        let heads = [false, false, false, true, false, false];
        let mut p = ResponseParser::default();
        let mut at = 0;
        let mut n = 0;
        let mut bodies = Vec::new();
        let mut body = Vec::new();
        for end in 1..=PIPELINED.len() {
            let (c, r) = drive(&mut p, &PIPELINED[at..end], heads[n], &mut body);
            at += c;
            if let Parsed::Done { used, .. } = r {
                at += used;
                n += 1;
                p.reset();
                bodies.push(std::mem::take(&mut body));
            }
        }
        assert_eq!(n, 6);
        assert_eq!(bodies[0], b"hello");
        assert_eq!(bodies[2], b"abcde");
    }

    #[test]
    fn http10_and_close_delimited() {
        let s = b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok";
        assert_eq!(
            parse_stream(s, 0, &[false]),
            vec![(200, b"ok".to_vec(), true)]
        );
        let s = b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nok";
        assert_eq!(
            parse_stream(s, 0, &[false]),
            vec![(200, b"ok".to_vec(), false)]
        );

        let s = b"HTTP/1.0 200 OK\r\nServer: x\r\n\r\nuntil the end";
        let mut p = ResponseParser::default();
        let mut body = Vec::new();
        let mut at = 0;
        for end in 0..=s.len() {
            let (c, r) = drive(&mut p, &s[at..end], false, &mut body);
            at += c;
            assert_eq!(r, Parsed::Incomplete);
            // A body that runs to the close is counted and dropped as it comes.
            assert_eq!(at, if end >= 30 { end } else { 0 }, "end {end}");
        }
        assert_eq!(
            p.parse_at_close(&s[at..], |_, b| body.extend_from_slice(b)),
            Parsed::Done {
                used: 0,
                status: 200,
                close: true
            }
        );
        assert_eq!(body, b"until the end");

        // Cut short: a Content-Length body is not complete at the close.
        let mut p = ResponseParser::default();
        let s = b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort";
        let (c, r) = drive(&mut p, s, false, &mut Vec::new());
        assert_eq!((c, r), (s.len(), Parsed::Incomplete));
        assert_eq!(p.parse_at_close(&s[c..], |_, _| {}), Parsed::Incomplete);
    }

    #[test]
    fn endless_interim_responses_are_capped_and_never_held() {
        let interim = b"HTTP/1.1 100 Continue\r\n\r\n";
        let mut p = ResponseParser::default();
        for _ in 0..MAX_INTERIM {
            assert_eq!(
                p.parse(interim, false, |_, _| {}),
                Parsed::Consumed(interim.len())
            );
        }
        assert!(matches!(
            p.parse(interim, false, |_, _| {}),
            Parsed::TooLarge(_)
        ));
        // Up to the cap the final response still parses.
        let mut stream = interim.repeat(MAX_INTERIM as usize);
        stream.extend_from_slice(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
        assert_eq!(
            parse_stream(&stream, 0, &[false]),
            vec![(200, b"ok".to_vec(), false)]
        );
    }

    #[test]
    fn long_bodies_are_consumed_as_they_arrive() {
        // A 1 MiB Content-Length body and a chunked one, fed 1000 bytes at a time: what
        // is held between calls never exceeds one piece (plus a chunk-size line).
        let mut length = b"HTTP/1.1 200 OK\r\nContent-Length: 1048576\r\n\r\n".to_vec();
        length.extend(std::iter::repeat_n(b'x', 1 << 20));
        let mut chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
        for _ in 0..256 {
            chunked.extend_from_slice(b"1000\r\n");
            chunked.extend(std::iter::repeat_n(b'x', 4096));
            chunked.extend_from_slice(b"\r\n");
        }
        chunked.extend_from_slice(b"0\r\n\r\n");
        for stream in [length, chunked] {
            let mut p = ResponseParser::default();
            let mut held: Vec<u8> = Vec::new();
            let mut body = 0usize;
            let mut most = 0;
            let mut done = false;
            for piece in stream.chunks(1000) {
                held.extend_from_slice(piece);
                most = most.max(held.len());
                let mut sink = Vec::new();
                let (c, r) = drive(&mut p, &held, false, &mut sink);
                body += sink.len();
                held.drain(..c);
                if let Parsed::Done { used, status, .. } = r {
                    assert_eq!((used, status), (held.len(), 200));
                    done = true;
                }
            }
            assert!(done);
            assert_eq!(body, 1 << 20);
            assert!(most < 2000, "held {most} bytes");
        }
    }

    #[test]
    fn refuses_invalid_responses() {
        for bad in [
            &b"HTTX/1.1 200 OK\r\n\r\n"[..],
            b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
            b"HTTP/1.1 101 Switching Protocols\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nxyz\r\n",
        ] {
            let mut p = ResponseParser::default();
            assert!(
                matches!(p.parse(bad, false, |_, _| {}), Parsed::Invalid(_)),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
        let mut p = ResponseParser::default();
        let huge = vec![b'a'; MAX_HEAD + 10];
        let mut head = b"HTTP/1.1 200 OK\r\nX: ".to_vec();
        head.extend_from_slice(&huge);
        assert!(matches!(
            p.parse(&head, false, |_, _| {}),
            Parsed::TooLarge(_)
        ));
        let mut p = ResponseParser::default();
        let many = format!(
            "HTTP/1.1 200 OK\r\n{}\r\n",
            "X: 1\r\n".repeat(MAX_HEADERS + 1)
        );
        assert!(matches!(
            p.parse(many.as_bytes(), false, |_, _| {}),
            Parsed::TooLarge(_)
        ));
    }

    /// Found with the fuzz target's whole-versus-split check (fuzz/fuzz_targets/
    /// http_response.rs): a head past MAX_HEAD was refused when it arrived in pieces
    /// but accepted when one read held all of it.
    #[test]
    fn a_long_head_is_refused_however_it_arrives() {
        let mut r = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nX: ".to_vec();
        r.extend_from_slice(&vec![b'a'; MAX_HEAD]);
        r.extend_from_slice(b"\r\n\r\n");
        let too_large = Parsed::TooLarge("the response head is larger than 64 KiB");
        assert_eq!(
            ResponseParser::default().parse(&r, false, |_, _| {}),
            too_large
        );
        let mut p = ResponseParser::default();
        assert_eq!(p.parse(&r[..MAX_HEAD + 1], false, |_, _| {}), too_large);
        // A head of MAX_HEAD bytes exactly is a response both ways.
        let mut r = r[..MAX_HEAD - 4].to_vec();
        r.extend_from_slice(b"\r\n\r\n");
        assert_eq!(r.len(), MAX_HEAD);
        let done = Parsed::Done {
            used: MAX_HEAD,
            status: 200,
            close: false,
        };
        assert_eq!(ResponseParser::default().parse(&r, false, |_, _| {}), done);
        let mut p = ResponseParser::default();
        assert_eq!(
            p.parse(&r[..MAX_HEAD - 1], false, |_, _| {}),
            Parsed::Incomplete
        );
        assert_eq!(p.parse(&r, false, |_, _| {}), done);
    }
}
