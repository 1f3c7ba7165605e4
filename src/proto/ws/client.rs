//! The WebSocket load client: the upgrade as the session's opening exchange, one
//! masked message per request (in frames of `--fragment` bytes), every echo checked
//! (bytes, length, opcode), server pings answered with pongs as events, and the close
//! handshake (1000) as the closing exchange.
//!
//! A pong answers the latest ping only (RFC 6455 5.5.3 allows it): the session holds
//! one pong owed, for the latest ping, and gives it to the engine (`owed`) once
//! everything written before it is out. A server that floods pings while it reads
//! slowly is owed one pong, not one per ping, so what a connection queues stays
//! bounded whatever the server sends.

use super::codec::{self, Header, Parsed, BINARY, CLOSE, CONTINUATION, PING, PONG, TEXT};
use super::figures::ClientFigures;
use super::handshake::{self, Answer};
use super::message;
use crate::engine::session::{
    ClientSession, Decode, Exchanges, InFlight, Lane, SessionFactory, Setup, Verdict, Words,
};
use crate::rng::Rng;
use crate::stats::ErrorKind;
use std::fmt::Write as _;
use std::sync::Arc;

/// What every session of a run shares.
pub struct Shared {
    /// Host header and request path of the upgrade.
    pub authority: String,
    pub path: String,
    pub subprotocol: Option<String>,
    pub min: usize,
    pub max: usize,
    /// Payload bytes per frame (a message longer than this goes in several).
    pub fragment: usize,
    pub text: bool,
    pattern: Box<[u8]>,
}

impl Shared {
    pub fn new(
        authority: String,
        path: String,
        subprotocol: Option<String>,
        (min, max): (usize, usize),
        fragment: usize,
        text: bool,
    ) -> Self {
        Shared {
            authority,
            path,
            subprotocol,
            min,
            max,
            fragment: fragment.max(1),
            text,
            pattern: crate::proto::echo::codec::pattern(max).into(),
        }
    }
}

pub struct WsFactory(pub Arc<Shared>);

impl SessionFactory for WsFactory {
    type Session = WsClient;

    fn session(&self, conn_id: u64) -> WsClient {
        WsClient {
            s: self.0.clone(),
            rng: Rng::new(conn_id),
            key: None,
            closing: false,
            off: 0,
            bad: false,
            pong: Vec::new(),
            owes_pong: false,
        }
    }
}

pub struct WsClient {
    s: Arc<Shared>,
    /// Message sizes and masking keys.
    rng: Rng,
    /// The Sec-WebSocket-Key sent, until the upgrade is answered.
    key: Option<String>,
    /// Our close frame went out.
    closing: bool,
    /// Bytes of the oldest reply received so far (it came in fragments), and whether
    /// any of them differed.
    off: usize,
    bad: bool,
    /// The payload of the latest ping, whose pong is owed while `owes_pong`.
    pong: Vec<u8>,
    owes_pong: bool,
}

/// A frame's payload can be judged: it is whole in `input`.
enum Frame {
    Incomplete,
    Whole(Header),
    Fail(ErrorKind),
}

/// The whole frame at the start of `input`, a server's: unmasked, no reserved bit.
#[inline]
fn frame(input: &[u8]) -> Frame {
    match codec::parse_header(input, codec::MAX_MESSAGE) {
        Parsed::Incomplete => Frame::Incomplete,
        Parsed::TooLarge => Frame::Fail(ErrorKind::TooLarge),
        Parsed::Header(h) if h.mask.is_some() || h.rsv != 0 => Frame::Fail(ErrorKind::Protocol),
        Parsed::Header(h) if h.is_control() && (!h.fin || h.payload_len > codec::MAX_CONTROL) => {
            Frame::Fail(ErrorKind::Protocol)
        }
        Parsed::Header(h) if input.len() < h.frame_len() => Frame::Incomplete,
        Parsed::Header(h) => Frame::Whole(h),
    }
}

impl WsClient {
    #[inline]
    fn mask(&mut self) -> [u8; 4] {
        (self.rng.next_u64() as u32).to_ne_bytes()
    }

    /// A ping: its pong is owed, in place of any pong still owed for an earlier one.
    fn ping(&mut self, payload: &[u8], f: &mut ClientFigures) {
        self.pong.clear();
        self.pong.extend_from_slice(payload);
        f.pings_superseded += u64::from(self.owes_pong);
        self.owes_pong = true;
        f.pings_answered += 1;
    }

    /// A control frame from the server: a ping is owed its pong; a close ends the run
    /// for this connection (an invalid code is a protocol error).
    fn control(&mut self, h: &Header, payload: &[u8], f: &mut ClientFigures) -> Decode {
        let used = h.frame_len();
        match h.opcode {
            PING => {
                self.ping(payload, f);
                Decode::Event { used }
            }
            PONG => {
                f.pongs += 1;
                Decode::Event { used }
            }
            CLOSE => {
                f.server_closes += 1;
                match codec::close_body(payload) {
                    codec::CloseBody::Invalid(_) => Decode::Fail {
                        kind: ErrorKind::Protocol,
                    },
                    _ => Decode::Fail {
                        kind: ErrorKind::Closed,
                    },
                }
            }
            _ => Decode::Fail {
                kind: ErrorKind::Protocol,
            },
        }
    }
}

impl ClientSession for WsClient {
    type Figures = ClientFigures;

    /// The upgrade request and its answer: one exchange round trip (`count`), a
    /// refusal being an answer too.
    fn open(
        &mut self,
        input: &[u8],
        out: &mut Vec<u8>,
        f: &mut ClientFigures,
        count: &mut Exchanges,
    ) -> Setup {
        let Some(key) = &self.key else {
            let key = handshake::client_key(self.rng.next_u64());
            handshake::write_request(
                out,
                &self.s.authority,
                &self.s.path,
                &key,
                self.s.subprotocol.as_deref(),
            );
            self.key = Some(key);
            count.sent += 1;
            return Setup::Continue { used: 0 };
        };
        match handshake::check_answer(input, key, self.s.subprotocol.as_deref()) {
            Answer::Incomplete => Setup::Continue { used: 0 },
            Answer::Upgraded { used } => {
                count.answered += 1;
                self.key = None;
                f.upgrades += 1;
                Setup::Done { used }
            }
            // The engine counts a failed opening as a failed connection attempt and
            // keeps the kind in its detail (`engine::session::opening_failure`).
            Answer::TooLarge => Setup::Failed {
                kind: ErrorKind::TooLarge,
                detail: format!(
                    "the server's answer to the WebSocket upgrade is longer than {} bytes",
                    handshake::MAX_HEAD
                ),
            },
            Answer::Refused(detail) => {
                count.answered += 1;
                Setup::Failed {
                    kind: ErrorKind::Protocol,
                    detail,
                }
            }
            Answer::NotUpgraded(detail) => {
                count.answered += 1;
                Setup::Failed {
                    kind: ErrorKind::Status,
                    detail,
                }
            }
        }
    }

    /// The close frame and the server's close: one exchange round trip (`count`).
    fn close(
        &mut self,
        input: &[u8],
        out: &mut Vec<u8>,
        f: &mut ClientFigures,
        count: &mut Exchanges,
    ) -> Setup {
        if !self.closing {
            self.closing = true;
            let m = self.mask();
            codec::write_close(out, 1000, Some(m));
            count.sent += 1;
        }
        // Until the server's close comes back: pings and pongs are events as before
        // (a ping is still answered: RFC 6455 5.5.2), anything else is skipped.
        let mut at = 0;
        loop {
            let h = match frame(&input[at..]) {
                Frame::Incomplete => return Setup::Continue { used: at },
                Frame::Fail(kind) => {
                    return Setup::Failed {
                        kind,
                        detail: "the server sent a bad frame during the closing handshake".into(),
                    }
                }
                Frame::Whole(h) => h,
            };
            let payload = &input[at + h.header_len..at + h.frame_len()];
            at += h.frame_len();
            match h.opcode {
                CLOSE => {
                    count.answered += 1;
                    f.clean_closes += 1;
                    return Setup::Done { used: at };
                }
                PING => {
                    self.ping(payload, f);
                    f.pings_answered_closing += 1;
                    return Setup::Event { used: at };
                }
                PONG => {
                    f.pongs += 1;
                    return Setup::Event { used: at };
                }
                _ => {}
            }
        }
    }

    /// The pong for the latest ping, once the engine has written everything before it.
    #[inline]
    fn owed(&mut self, out: &mut Vec<u8>) {
        if self.owes_pong {
            self.owes_pong = false;
            let m = self.mask();
            codec::write_control(out, PONG, &self.pong, Some(m));
        }
    }

    #[inline]
    fn encode(&mut self, seq: u64, _sent_ns: u64, out: &mut Vec<u8>) -> u32 {
        let len = self.rng.range(self.s.min as u64, self.s.max as u64) as usize;
        let first = if self.s.text { TEXT } else { BINARY };
        let mut off = 0;
        // An empty message is one empty frame.
        loop {
            let n = (len - off).min(self.s.fragment);
            let fin = off + n == len;
            let m = self.mask();
            codec::write_header(
                out,
                fin,
                if off == 0 { first } else { CONTINUATION },
                Some(m),
                n,
            );
            let at = out.len();
            message::fill(out, seq, off, n, &self.s.pattern);
            codec::apply_mask(&mut out[at..], m);
            off += n;
            if fin {
                return len as u32;
            }
        }
    }

    #[inline]
    fn decode(
        &mut self,
        input: &[u8],
        oldest: Option<&InFlight>,
        _out: &mut Vec<u8>,
        f: &mut ClientFigures,
    ) -> Decode {
        let h = match frame(input) {
            Frame::Incomplete => return Decode::Incomplete,
            Frame::Fail(kind) => return Decode::Fail { kind },
            Frame::Whole(h) => h,
        };
        let payload = &input[h.header_len..h.frame_len()];
        if h.is_control() {
            return self.control(&h, payload, f);
        }
        // An echo server never speaks first.
        let Some(req) = oldest else {
            return Decode::Fail {
                kind: ErrorKind::Unsolicited,
            };
        };
        let want = if self.s.text { TEXT } else { BINARY };
        let in_step = match (self.off, h.opcode) {
            (0, op) if op == TEXT || op == BINARY => {
                // Text stays text: a binary echo of a text message is a wrong reply.
                self.bad = op != want;
                true
            }
            (_, CONTINUATION) if self.off > 0 => true,
            _ => false,
        };
        let len = req.tag as usize;
        if !in_step || self.off + payload.len() > len {
            // Frames out of order, or more bytes than the message sent: the stream
            // cannot be followed.
            self.off = 0;
            return Decode::Reply {
                used: 0,
                settles: 1,
                lane: Lane::ANY,
                verdict: Verdict::Fatal(if in_step {
                    ErrorKind::Mismatch
                } else {
                    ErrorKind::Protocol
                }),
                close: true,
            };
        }
        if !message::matches(payload, req.seq, self.off, &self.s.pattern) {
            self.bad = true;
        }
        self.off += payload.len();
        if !h.fin {
            f.continuation_frames += u64::from(self.off > payload.len());
            return Decode::Consumed {
                used: h.frame_len(),
            };
        }
        if self.off > payload.len() {
            f.continuation_frames += 1;
        }
        let whole = self.off == len && !self.bad;
        self.off = 0;
        self.bad = false;
        Decode::reply(
            h.frame_len(),
            if whole {
                Verdict::Ok
            } else {
                Verdict::Error(ErrorKind::Mismatch)
            },
        )
    }

    /// The server's close in the middle of the run, in its words: "the server closed
    /// with code 1013: try again later".
    fn error_words(&mut self, _kind: ErrorKind, input: &[u8], words: &mut Words) {
        match frame(input) {
            Frame::Whole(h) if h.opcode == CLOSE => {
                close_words(&input[h.header_len..h.frame_len()], words)
            }
            _ => {}
        }
    }
}

/// A close frame's payload in words.
fn close_words(payload: &[u8], words: &mut Words) {
    match codec::close_body(payload) {
        codec::CloseBody::NoCode => words.push(b"the server closed without a code"),
        codec::CloseBody::Code(code) => {
            let _ = write!(words, "the server closed with code {code}");
            if payload.len() > 2 {
                words.push(b": ");
                words.push(&payload[2..]);
            }
        }
        codec::CloseBody::Invalid(_) => words.push(b"the server sent an invalid close frame"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn factory(text: bool, fragment: usize, size: usize) -> WsFactory {
        WsFactory(Arc::new(Shared::new(
            "h:1".into(),
            "/".into(),
            None,
            (size, size),
            fragment,
            text,
        )))
    }

    fn inflight(seq: u64, tag: u32) -> InFlight {
        InFlight {
            seq,
            intended_ns: 0,
            sent_ns: 0,
            tag,
            lane: Lane::ANY,
            measured: true,
            on_write: false,
        }
    }

    /// What an echo server sends back for the client's frames: each unmasked, as one
    /// unfragmented message.
    fn echo_of(frames: &[u8]) -> Vec<u8> {
        let mut at = 0;
        let mut payload = Vec::new();
        let mut op = 0;
        while at < frames.len() {
            let Parsed::Header(h) = codec::parse_header(&frames[at..], usize::MAX) else {
                panic!()
            };
            let mut p = frames[at + h.header_len..at + h.frame_len()].to_vec();
            codec::apply_mask(&mut p, h.mask.expect("client frames are masked"));
            if h.opcode != CONTINUATION {
                op = h.opcode;
            }
            payload.extend_from_slice(&p);
            at += h.frame_len();
        }
        let mut out = Vec::new();
        codec::write_header(&mut out, true, op, None, payload.len());
        out.extend_from_slice(&payload);
        out
    }

    #[test]
    fn fragmented_masked_messages_and_their_echoes_check_at_every_split() {
        let fac = factory(true, 7, 30);
        let mut c = fac.session(1);
        let mut out = Vec::new();
        let tag = c.encode(5, 0, &mut out);
        assert_eq!(tag, 30);
        // 30 bytes in frames of 7: 5 frames, the first TEXT, the last FIN.
        assert_eq!(out[0], TEXT);
        // ...and the last is a FIN continuation.
        assert!(out.contains(&(0x80 | CONTINUATION)));
        let echo = echo_of(&out);
        let mut f = ClientFigures::default();
        for cut in 0..echo.len() {
            assert_eq!(
                c.decode(
                    &echo[..cut],
                    Some(&inflight(5, tag)),
                    &mut Vec::new(),
                    &mut f
                ),
                Decode::Incomplete
            );
        }
        assert_eq!(
            c.decode(&echo, Some(&inflight(5, tag)), &mut Vec::new(), &mut f),
            Decode::reply(echo.len(), Verdict::Ok)
        );
        // Another sequence number's echo, a binary echo of text: in step, wrong.
        assert_eq!(
            c.decode(&echo, Some(&inflight(6, tag)), &mut Vec::new(), &mut f),
            Decode::reply(echo.len(), Verdict::Error(ErrorKind::Mismatch))
        );
        let mut bin = echo.clone();
        bin[0] = 0x80 | BINARY;
        assert_eq!(
            c.decode(&bin, Some(&inflight(5, tag)), &mut Vec::new(), &mut f),
            Decode::reply(echo.len(), Verdict::Error(ErrorKind::Mismatch))
        );
    }

    #[test]
    fn pings_are_answered_as_events_and_closes_end_the_connection() {
        let fac = factory(false, 1 << 20, 10);
        let mut c = fac.session(1);
        let mut f = ClientFigures::default();
        let mut out = Vec::new();
        let ping = [0x89, 0x02, b'h', b'i'];
        assert_eq!(
            c.decode(&ping, None, &mut out, &mut f),
            Decode::Event { used: 4 }
        );
        // The pong is owed, and given when the engine asks for it.
        assert!(out.is_empty());
        c.owed(&mut out);
        let Parsed::Header(h) = codec::parse_header(&out, 125) else {
            panic!()
        };
        assert_eq!((h.opcode, h.payload_len, h.mask.is_some()), (PONG, 2, true));
        let mut p = out[h.header_len..].to_vec();
        codec::apply_mask(&mut p, h.mask.unwrap());
        assert_eq!(p, b"hi");
        assert_eq!(f.pings_answered, 1);
        let mut close = Vec::new();
        codec::write_close(&mut close, 1001, None);
        assert_eq!(
            c.decode(&close, Some(&inflight(0, 10)), &mut out, &mut f),
            Decode::Fail {
                kind: ErrorKind::Closed
            }
        );
        let bad_close = [0x88, 0x02, 0x03, 0xed]; // 1005 may not be sent
        assert_eq!(
            c.decode(&bad_close, None, &mut out, &mut f),
            Decode::Fail {
                kind: ErrorKind::Protocol
            }
        );
        // A masked server frame, a 2^63 length, data nobody asked for.
        assert_eq!(
            c.decode(
                &[0x82, 0x80, 1, 2, 3, 4],
                Some(&inflight(0, 10)),
                &mut out,
                &mut f
            ),
            Decode::Fail {
                kind: ErrorKind::Protocol
            }
        );
        let mut huge = vec![0x82, 0x7f];
        huge.extend_from_slice(&(1u64 << 63).to_be_bytes());
        assert_eq!(
            c.decode(&huge, Some(&inflight(0, 10)), &mut out, &mut f),
            Decode::Fail {
                kind: ErrorKind::TooLarge
            }
        );
        assert_eq!(
            c.decode(&[0x82, 0x00], None, &mut out, &mut f),
            Decode::Fail {
                kind: ErrorKind::Unsolicited
            }
        );
    }

    #[test]
    fn the_opening_and_closing_exchanges() {
        let fac = factory(false, 100, 10);
        let mut c = fac.session(9);
        let mut f = ClientFigures::default();
        let mut n = Exchanges::default();
        let mut req = Vec::new();
        assert_eq!(
            c.open(&[], &mut req, &mut f, &mut n),
            Setup::Continue { used: 0 }
        );
        let mut resp = Vec::new();
        assert_eq!(
            handshake::answer_request(&req, &mut resp, None),
            handshake::Request::Upgraded { used: req.len() }
        );
        assert_eq!(
            c.open(&resp[..5], &mut Vec::new(), &mut f, &mut n),
            Setup::Continue { used: 0 }
        );
        assert_eq!(
            c.open(&resp, &mut Vec::new(), &mut f, &mut n),
            Setup::Done { used: resp.len() }
        );
        let mut out = Vec::new();
        assert_eq!(
            c.close(&[], &mut out, &mut f, &mut n),
            Setup::Continue { used: 0 }
        );
        let Parsed::Header(h) = codec::parse_header(&out, 125) else {
            panic!()
        };
        assert_eq!((h.opcode, h.payload_len), (CLOSE, 2));
        let mut back = vec![0x89, 0x00];
        codec::write_close(&mut back, 1000, None);
        let mut pong = Vec::new();
        // A ping in the closing handshake is an event, answered as ever.
        assert_eq!(
            c.close(&back, &mut pong, &mut f, &mut n),
            Setup::Event { used: 2 }
        );
        c.owed(&mut pong);
        assert_eq!(pong[0], 0x80 | PONG);
        assert_eq!(
            c.close(&back[2..], &mut Vec::new(), &mut f, &mut n),
            Setup::Done {
                used: back.len() - 2
            }
        );
        assert_eq!((f.upgrades, f.clean_closes), (1, 1));
        assert_eq!((f.pings_answered, f.pings_answered_closing), (1, 1));
        // The upgrade and the close, each answered; the pong is no exchange request.
        let two = Exchanges {
            sent: 2,
            answered: 2,
        };
        assert_eq!(n, two);
    }

    #[test]
    fn a_flood_of_pings_is_owed_one_pong_for_the_latest() {
        let fac = factory(false, 1 << 20, 10);
        let mut c = fac.session(1);
        let mut f = ClientFigures::default();
        let mut out = Vec::new();
        for i in 0..1000u16 {
            let mut ping = Vec::new();
            codec::write_control(&mut ping, PING, &i.to_be_bytes(), None);
            assert_eq!(
                c.decode(&ping, None, &mut out, &mut f),
                Decode::Event { used: 4 }
            );
        }
        assert!(out.is_empty(), "nothing written per ping");
        c.owed(&mut out);
        let Parsed::Header(h) = codec::parse_header(&out, 125) else {
            panic!()
        };
        assert_eq!((h.opcode, h.frame_len()), (PONG, out.len()));
        let mut p = out[h.header_len..].to_vec();
        codec::apply_mask(&mut p, h.mask.unwrap());
        assert_eq!(p, 999u16.to_be_bytes(), "the latest ping's payload");
        // Owed once: asked again, nothing more.
        let before = out.len();
        c.owed(&mut out);
        assert_eq!(out.len(), before);
        assert_eq!((f.pings_answered, f.pings_superseded), (1000, 999));
    }
}
