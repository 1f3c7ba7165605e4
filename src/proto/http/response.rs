//! The client's response parser: httparse for the head, our own body framing
//! (Content-Length, chunked, close-delimited), interim 1xx responses skipped. It is
//! incremental: called again with the same response's bytes plus more, it goes on
//! where it stopped, so a response split at any byte is parsed in linear time.

use super::chunked::{self, Chunked};
use std::mem::MaybeUninit;

/// Most bytes of a response head (status line and headers).
pub const MAX_HEAD: usize = 64 * 1024;
/// Most bytes of one response, head and body: the engine keeps a response whole
/// until it is complete, so a hostile server must not grow that buffer without end.
pub const MAX_RESPONSE: u64 = 256 << 20;
const MAX_HEADERS: usize = 64;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Framing {
    /// No body (HEAD, 204, 304).
    Empty,
    Length(u64),
    Chunked,
    /// The body runs to the end of the connection.
    UntilClose,
}

#[derive(Clone, Copy, Debug)]
struct Head {
    status: u16,
    /// Offset of the body in the input.
    body_at: usize,
    framing: Framing,
    /// The connection ends after this response.
    close: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Parsed {
    /// More bytes are needed.
    Incomplete,
    /// A whole response of `used` bytes (interim responses included).
    Done {
        used: usize,
        status: u16,
        close: bool,
    },
    /// Not a valid response: the stream cannot be trusted any more.
    Invalid(&'static str),
}

#[derive(Clone, Debug, Default)]
pub struct ResponseParser {
    /// Where the current head starts (after any interim 1xx responses).
    base: usize,
    head: Option<Head>,
    /// Body bytes handed to the sink so far (Length and UntilClose framing).
    fed: usize,
    chunked: Chunked,
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
    /// Ready for the next response on the connection.
    #[inline]
    pub fn reset(&mut self) {
        *self = ResponseParser::default();
    }

    /// Parses the response at the start of `input`, which holds everything received
    /// since it began. `head_request`: it answers a HEAD (no body, whatever the head says).
    /// Each body byte is handed to `sink` once, in order, across calls.
    pub fn parse(
        &mut self,
        input: &[u8],
        head_request: bool,
        mut sink: impl FnMut(&[u8]),
    ) -> Parsed {
        let head = match self.head {
            Some(h) => h,
            None => match self.parse_head(input, head_request) {
                Ok(Some(h)) => {
                    self.head = Some(h);
                    h
                }
                Ok(None) => return Parsed::Incomplete,
                Err(why) => return Parsed::Invalid(why),
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
            Framing::Length(n) => {
                let n = n as usize;
                let have = body.len().min(n);
                if have > self.fed {
                    sink(&body[self.fed..have]);
                    self.fed = have;
                }
                if have < n {
                    Parsed::Incomplete
                } else {
                    done(head.body_at + n)
                }
            }
            Framing::Chunked => match self.chunked.advance(body, sink) {
                chunked::Step::Incomplete => {
                    if input.len() as u64 > MAX_RESPONSE {
                        Parsed::Invalid("the response is larger than 256 MiB")
                    } else {
                        Parsed::Incomplete
                    }
                }
                chunked::Step::Done(n) => done(head.body_at + n),
                chunked::Step::Invalid(why) => Parsed::Invalid(why),
            },
            Framing::UntilClose => {
                if body.len() > self.fed {
                    sink(&body[self.fed..]);
                    self.fed = body.len();
                }
                if input.len() as u64 > MAX_RESPONSE {
                    Parsed::Invalid("the response is larger than 256 MiB")
                } else {
                    Parsed::Incomplete
                }
            }
        }
    }

    /// The peer closed the connection: a body that runs to the close is complete now;
    /// anything else still incomplete was cut short.
    pub fn parse_at_close(&mut self, input: &[u8], mut sink: impl FnMut(&[u8])) -> Parsed {
        match self.head {
            Some(h) if h.framing == Framing::UntilClose => {
                let body = &input[h.body_at..];
                if body.len() > self.fed {
                    sink(&body[self.fed..]);
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

    /// Parses heads from `self.base`, skipping interim (1xx) responses; Ok(None) if
    /// the final head is not complete yet.
    fn parse_head(
        &mut self,
        input: &[u8],
        head_request: bool,
    ) -> Result<Option<Head>, &'static str> {
        loop {
            let at = self.base;
            // Uninitialized: zeroing 64 headers (2 KiB) per response is measurable.
            let mut headers = [const { MaybeUninit::<httparse::Header>::uninit() }; MAX_HEADERS];
            let mut r = httparse::Response::new(&mut []);
            let parsed = httparse::ParserConfig::default().parse_response_with_uninit_headers(
                &mut r,
                &input[at..],
                &mut headers,
            );
            let len = match parsed {
                Ok(httparse::Status::Complete(n)) => n,
                Ok(httparse::Status::Partial) => {
                    return if input.len() - at > MAX_HEAD {
                        Err("the response head is larger than 64 KiB")
                    } else {
                        Ok(None)
                    };
                }
                Err(httparse::Error::TooManyHeaders) => {
                    return Err("the response has more than 64 header fields")
                }
                Err(_) => return Err("the response head is not valid HTTP/1.x"),
            };
            // The same cap when the head arrives whole as when it arrives in pieces.
            if len > MAX_HEAD {
                return Err("the response head is larger than 64 KiB");
            }
            let status = r.code.unwrap_or(0);
            let http10 = r.version == Some(0);
            if status == 101 {
                return Err("the server switched protocols (101)");
            }
            if (100..200).contains(&status) {
                // Interim response (100 Continue, 103 Early Hints): the final one follows.
                self.base = at + len;
                continue;
            }
            let mut length: Option<u64> = None;
            let mut chunked = false;
            let mut has_te = false;
            let mut close = http10;
            for h in r.headers.iter() {
                let name = h.name.as_bytes();
                if eq_ignore_case(name, b"content-length") {
                    let Some(n) = parse_length(h.value) else {
                        return Err("a Content-Length header is not a number");
                    };
                    if length.is_some_and(|l| l != n) {
                        return Err("the response has conflicting Content-Length headers");
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
                if n > MAX_RESPONSE {
                    return Err("the response is larger than 256 MiB");
                }
                Framing::Length(n)
            } else {
                Framing::UntilClose
            };
            let close = close || framing == Framing::UntilClose;
            return Ok(Some(Head {
                status,
                body_at: at + len,
                framing,
                close,
            }));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
            let mut r = p.parse(&stream[at..limit], head, |b| body.extend_from_slice(b));
            if r == Parsed::Incomplete {
                r = p.parse(&stream[at..], head, |b| body.extend_from_slice(b));
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
            if let Parsed::Done { used, .. } =
                p.parse(&PIPELINED[at..end], heads[n], |b| body.extend_from_slice(b))
            {
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
        for cut in 0..s.len() {
            assert_eq!(
                p.parse(&s[..cut], false, |b| body.extend_from_slice(b)),
                Parsed::Incomplete
            );
        }
        assert_eq!(
            p.parse(s, false, |b| body.extend_from_slice(b)),
            Parsed::Incomplete
        );
        assert_eq!(
            p.parse_at_close(s, |b| body.extend_from_slice(b)),
            Parsed::Done {
                used: s.len(),
                status: 200,
                close: true
            }
        );
        assert_eq!(body, b"until the end");

        // Cut short: a Content-Length body is not complete at the close.
        let mut p = ResponseParser::default();
        let s = b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort";
        assert_eq!(p.parse(s, false, |_| {}), Parsed::Incomplete);
        assert_eq!(p.parse_at_close(s, |_| {}), Parsed::Incomplete);
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
                matches!(p.parse(bad, false, |_| {}), Parsed::Invalid(_)),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
        let mut p = ResponseParser::default();
        let huge = vec![b'a'; MAX_HEAD + 10];
        let mut head = b"HTTP/1.1 200 OK\r\nX: ".to_vec();
        head.extend_from_slice(&huge);
        assert!(matches!(p.parse(&head, false, |_| {}), Parsed::Invalid(_)));
    }

    /// Found with the fuzz target's whole-versus-split check (fuzz/fuzz_targets/
    /// http_response.rs): a head past MAX_HEAD was refused when it arrived in pieces
    /// but accepted when one read held all of it.
    #[test]
    fn a_long_head_is_refused_however_it_arrives() {
        let mut r = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nX: ".to_vec();
        r.extend_from_slice(&vec![b'a'; MAX_HEAD]);
        r.extend_from_slice(b"\r\n\r\n");
        let too_large = Parsed::Invalid("the response head is larger than 64 KiB");
        assert_eq!(
            ResponseParser::default().parse(&r, false, |_| {}),
            too_large
        );
        let mut p = ResponseParser::default();
        assert_eq!(p.parse(&r[..MAX_HEAD + 1], false, |_| {}), too_large);
        // A head of MAX_HEAD bytes exactly is a response both ways.
        let mut r = r[..MAX_HEAD - 4].to_vec();
        r.extend_from_slice(b"\r\n\r\n");
        assert_eq!(r.len(), MAX_HEAD);
        let done = Parsed::Done {
            used: MAX_HEAD,
            status: 200,
            close: false,
        };
        assert_eq!(ResponseParser::default().parse(&r, false, |_| {}), done);
        let mut p = ResponseParser::default();
        assert_eq!(
            p.parse(&r[..MAX_HEAD - 1], false, |_| {}),
            Parsed::Incomplete
        );
        assert_eq!(p.parse(&r, false, |_| {}), done);
    }
}
