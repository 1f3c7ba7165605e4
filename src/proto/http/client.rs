//! The HTTP/1.1 load client: the same serialized request on every send, each response
//! parsed incrementally, its status judged, its body optionally checked against the
//! request body (`--expect-echo`).

use super::figures::StatusClasses;
use super::response::{Parsed, ResponseParser};
use super::status::StatusSet;
use crate::engine::session::{ClientSession, Decode, InFlight, Lane, SessionFactory, Verdict};
use crate::stats::ErrorKind;
use std::sync::Arc;

pub struct HttpFactory {
    request: Arc<[u8]>,
    head: bool,
    accept: StatusSet,
    echo: Option<Arc<[u8]>>,
    keepalive: bool,
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
        }
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

    fn session(&self, _conn_id: u64) -> HttpClient {
        HttpClient {
            request: self.request.clone(),
            head: self.head,
            accept: self.accept,
            echo: self.echo.clone(),
            keepalive: self.keepalive,
            parser: ResponseParser::default(),
            echo_pos: 0,
            echo_bad: false,
        }
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

    fn finish(&mut self, parsed: Parsed, classes: &mut StatusClasses) -> Decode {
        match parsed {
            Parsed::Incomplete => Decode::Incomplete,
            Parsed::Consumed(used) => Decode::Consumed { used },
            Parsed::Invalid(_) => self.fatal(ErrorKind::Protocol),
            Parsed::TooLarge(_) => self.fatal(ErrorKind::TooLarge),
            Parsed::Done {
                used,
                status,
                close,
            } => {
                classes.count(status);
                let verdict = if !self.accept.contains(status) {
                    Verdict::Error(ErrorKind::Status)
                } else if self
                    .echo
                    .as_ref()
                    .is_some_and(|e| self.echo_bad || self.echo_pos != e.len())
                {
                    Verdict::Error(ErrorKind::Mismatch)
                } else {
                    Verdict::Ok
                };
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

impl ClientSession for HttpClient {
    type Figures = StatusClasses;

    #[inline]
    fn encode(&mut self, _seq: u64, _sent_ns: u64, out: &mut Vec<u8>) -> u32 {
        out.extend_from_slice(&self.request);
        0
    }

    #[inline]
    fn decode(
        &mut self,
        input: &[u8],
        oldest: Option<&InFlight>,
        _out: &mut Vec<u8>,
        classes: &mut StatusClasses,
    ) -> Decode {
        // A server does not speak before it is asked.
        if oldest.is_none() {
            return Decode::Fail {
                kind: ErrorKind::Unsolicited,
            };
        }
        let (echo, pos, bad) = (&self.echo, &mut self.echo_pos, &mut self.echo_bad);
        let parsed = self.parser.parse(input, self.head, |piece| {
            if let Some(e) = echo {
                check_piece(e, pos, bad, piece);
            }
        });
        self.finish(parsed, classes)
    }

    fn decode_at_close(
        &mut self,
        input: &[u8],
        _oldest: &InFlight,
        classes: &mut StatusClasses,
    ) -> Decode {
        let (echo, pos, bad) = (&self.echo, &mut self.echo_pos, &mut self.echo_bad);
        let parsed = self.parser.parse_at_close(input, |piece| {
            if let Some(e) = echo {
                check_piece(e, pos, bad, piece);
            }
        });
        self.finish(parsed, classes)
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

    fn dec(c: &mut HttpClient, input: &[u8], classes: &mut StatusClasses) -> Decode {
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
            match dec(c, &input[at..], &mut StatusClasses::default()) {
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
        let mut classes = StatusClasses::default();
        let ok = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi";
        assert_eq!(
            dec(&mut c, ok, &mut classes),
            reply(ok.len(), Verdict::Ok, false)
        );
        assert_eq!(classes.0, [0, 0, 1, 0, 0, 0]);
        let nf = b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
        assert_eq!(
            dec(&mut c, nf, &mut classes),
            reply(nf.len(), Verdict::Error(ErrorKind::Status), true)
        );
        assert_eq!(classes.0, [0, 0, 1, 0, 1, 0]);
        assert_eq!(
            dec(&mut c, b"garbage\r\n\r\n", &mut classes),
            reply(0, Verdict::Fatal(ErrorKind::Protocol), true)
        );
        assert_eq!(
            classes.0,
            [0, 0, 1, 0, 1, 0],
            "no class for an unparseable reply"
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
                dec(&mut c, interim, &mut StatusClasses::default()),
                Decode::Consumed {
                    used: interim.len()
                }
            );
        }
        assert_eq!(
            dec(&mut c, interim, &mut StatusClasses::default()),
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
            dec(&mut c, short, &mut StatusClasses::default()),
            reply(short.len(), Verdict::Error(ErrorKind::Mismatch), false)
        );
    }
}
