//! The HTTP/1.1 load client: the same serialized request on every send, each response
//! parsed incrementally, its status judged, its body optionally checked against the
//! request body (`--expect-echo`).

use super::response::{Parsed, ResponseParser};
use super::status::StatusSet;
use crate::engine::protocol::{ClientProtocol, Decode, InFlight, ProtocolFactory, Verdict};
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

impl ProtocolFactory for HttpFactory {
    type Client = HttpClient;

    fn client(&self, _conn_id: u64) -> HttpClient {
        HttpClient {
            request: self.request.clone(),
            head: self.head,
            accept: self.accept,
            echo: self.echo.clone(),
            keepalive: self.keepalive,
            parser: ResponseParser::default(),
            echo_pos: 0,
            echo_bad: false,
            close: false,
            class: 0,
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
    /// About the last response: the connection ends after it; its status class.
    close: bool,
    class: usize,
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
    fn fatal(&mut self, kind: ErrorKind) -> Decode {
        self.close = true;
        // Class 0: not a status class (unparseable replies are not counted in one).
        self.class = 0;
        Decode::Reply {
            used: 0,
            verdict: Verdict::Fatal(kind),
        }
    }

    fn finish(&mut self, parsed: Parsed) -> Decode {
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
                self.close = close || !self.keepalive;
                self.class = (status / 100) as usize;
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
                Decode::Reply { used, verdict }
            }
        }
    }
}

impl ClientProtocol for HttpClient {
    #[inline]
    fn encode(&mut self, _seq: u64, _sent_ns: u64, out: &mut Vec<u8>) -> u32 {
        out.extend_from_slice(&self.request);
        0
    }

    #[inline]
    fn decode(&mut self, input: &[u8], _req: &InFlight) -> Decode {
        let (echo, pos, bad) = (&self.echo, &mut self.echo_pos, &mut self.echo_bad);
        let parsed = self.parser.parse(input, self.head, |piece| {
            if let Some(e) = echo {
                check_piece(e, pos, bad, piece);
            }
        });
        self.finish(parsed)
    }

    fn decode_at_close(&mut self, input: &[u8], _req: &InFlight) -> Decode {
        let (echo, pos, bad) = (&self.echo, &mut self.echo_pos, &mut self.echo_bad);
        let parsed = self.parser.parse_at_close(input, |piece| {
            if let Some(e) = echo {
                check_piece(e, pos, bad, piece);
            }
        });
        self.finish(parsed)
    }

    #[inline]
    fn close_after_reply(&self) -> bool {
        self.close
    }

    #[inline]
    fn reply_class(&self) -> Option<usize> {
        Some(self.class)
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
            measured: true,
        }
    }

    /// Decodes as the engine does: consumed bytes are dropped and decode asked again.
    /// Returns the bytes consumed and the first other answer.
    fn drive(c: &mut HttpClient, input: &[u8]) -> (usize, Decode) {
        let mut at = 0;
        loop {
            match c.decode(&input[at..], &req()) {
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
        .client(0)
    }

    #[test]
    fn verdicts() {
        let mut c = client(None, true);
        let ok = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi";
        assert_eq!(
            c.decode(ok, &req()),
            Decode::Reply {
                used: ok.len(),
                verdict: Verdict::Ok
            }
        );
        assert!(!c.close_after_reply());
        assert_eq!(c.reply_class(), Some(2));
        let nf = b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
        assert_eq!(
            c.decode(nf, &req()),
            Decode::Reply {
                used: nf.len(),
                verdict: Verdict::Error(ErrorKind::Status)
            }
        );
        assert!(c.close_after_reply());
        assert_eq!(c.reply_class(), Some(4));
        assert_eq!(
            c.decode(b"garbage\r\n\r\n", &req()),
            Decode::Reply {
                used: 0,
                verdict: Verdict::Fatal(ErrorKind::Protocol)
            }
        );
    }

    #[test]
    fn endless_interim_replies_end_as_too_large() {
        let mut c = client(None, true);
        let interim = b"HTTP/1.1 100 Continue\r\n\r\n";
        for _ in 0..super::super::response::MAX_INTERIM {
            assert_eq!(
                c.decode(interim, &req()),
                Decode::Consumed {
                    used: interim.len()
                }
            );
        }
        assert_eq!(
            c.decode(interim, &req()),
            Decode::Reply {
                used: 0,
                verdict: Verdict::Fatal(ErrorKind::TooLarge)
            }
        );
        assert!(c.close_after_reply());
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
                (
                    0,
                    Decode::Reply {
                        used: good.len() - at,
                        verdict: Verdict::Ok
                    }
                )
            );
            assert!(
                c.close_after_reply(),
                "keep-alive off closes after each reply"
            );
            let mut c = client(Some(b"hello"), true);
            let (at, first) = drive(&mut c, &bad[..cut]);
            assert_eq!(first, Decode::Incomplete);
            assert_eq!(
                drive(&mut c, &bad[at..]).1,
                Decode::Reply {
                    used: bad.len() - at,
                    verdict: Verdict::Error(ErrorKind::Mismatch)
                }
            );
        }
        let mut c = client(Some(b"hello"), true);
        assert_eq!(
            c.decode(short, &req()),
            Decode::Reply {
                used: short.len(),
                verdict: Verdict::Error(ErrorKind::Mismatch)
            }
        );
    }
}
