//! `serve ws`: the upgrade, then every message echoed with its opcode (text stays
//! text), fragmented messages reassembled up to `--max-message`, pings answered (one
//! pong for pings read back to back),
//! server pings every `--ping-every`, and the close codes of RFC 6455 7.4: 1000 (or
//! the client's own valid code) echoed, 1002 for an unmasked client frame, a bad
//! opcode, reserved bits or a bad close code, 1007 for text that is not UTF-8, 1009
//! for a message past the cap.
//!
//! Memory per connection: the session (no buffer) while messages come in one frame;
//! a reassembly buffer only while a fragmented message is open (at most the cap);
//! an unfinished frame waits in the runtime's carry, bounded by the cap plus its
//! header because a frame's length is judged from its header alone.

use super::codec::{
    self, CloseBody, Header, Parsed, BINARY, CLOSE, CONTINUATION, PING, PONG, TEXT,
};
use super::figures::ServerFigures;
use super::handshake::{self, Request};
use crate::server::session::{Reply, ServerFactory, ServerSession};
use std::sync::Arc;

/// Replies one call makes before handing them to the runtime (`Reply::More`).
const OUT_BATCH: usize = 256 << 10;
/// A reassembly buffer larger than this is freed after its message, not kept.
const KEEP_REASSEMBLY: usize = 64 << 10;

/// `serve ws`, validated (also the built-in server's, and what `--processes` workers get).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Limits {
    /// Largest message (one frame, or a reassembled one).
    pub max_message: usize,
    /// Server pings every this many ns; 0: none.
    pub ping_every_ns: u64,
    /// The subprotocol chosen when a client offers it.
    pub subprotocol: Option<String>,
}

pub struct WsServerFactory(pub Arc<Limits>);

impl ServerFactory for WsServerFactory {
    type Session = WsSession;
    type Thread = ();

    fn thread_state(&self) {}

    /// A session whose clock starts at 0 (the runtime uses `session_in`).
    fn session(&self) -> WsSession {
        self.session_in(&(), 0)
    }

    /// Pings (when on) start one period after the connection was accepted.
    fn session_in(&self, _thread: &(), now_ns: u64) -> WsSession {
        WsSession {
            limits: self.0.clone(),
            state: State::Handshake,
            msg_opcode: 0,
            reassembly: Vec::new(),
            answered: 0,
            ping_at: now_ns + self.0.ping_every_ns,
            pings: 0,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    Handshake,
    Open,
    /// Our close frame went out; nothing more is read.
    Closed,
}

pub struct WsSession {
    limits: Arc<Limits>,
    state: State,
    /// The opcode of the fragmented message being reassembled; 0: none open.
    msg_opcode: u8,
    reassembly: Vec<u8>,
    /// Messages echoed since the runtime last asked.
    answered: u64,
    /// When the next ping is due (ns on the server's clock).
    ping_at: u64,
    pings: u64,
}

/// Why a connection is closed by the server, and with which code.
#[derive(Clone, Copy)]
enum Refusal {
    Unmasked,
    BadFrame,
    BadCloseCode,
    InvalidUtf8,
    TooBig,
}

impl WsSession {
    /// Sends a close with the refusal's code, counts it, and ends the connection.
    fn refuse(&mut self, why: Refusal, out: &mut Vec<u8>, f: &mut ServerFigures) -> Reply {
        let code = match why {
            Refusal::Unmasked => {
                f.unmasked += 1;
                1002
            }
            Refusal::BadFrame => {
                f.bad_frames += 1;
                1002
            }
            Refusal::BadCloseCode => {
                f.bad_close_codes += 1;
                1002
            }
            Refusal::InvalidUtf8 => {
                f.invalid_utf8 += 1;
                1007
            }
            Refusal::TooBig => {
                f.too_big += 1;
                1009
            }
        };
        codec::write_close(out, code, None);
        self.state = State::Closed;
        self.free_reassembly();
        if code == 1009 {
            Reply::TooLarge
        } else {
            Reply::Close
        }
    }

    fn free_reassembly(&mut self) {
        self.msg_opcode = 0;
        if self.reassembly.capacity() > KEEP_REASSEMBLY {
            self.reassembly = Vec::new();
        } else {
            self.reassembly.clear();
        }
    }

    /// What a frame's header alone says is wrong with it, before its payload comes.
    fn judge(&self, h: &Header) -> Option<Refusal> {
        if h.mask.is_none() {
            return Some(Refusal::Unmasked);
        }
        let bad = h.rsv != 0
            || match h.opcode {
                TEXT | BINARY => self.msg_opcode != 0,
                CONTINUATION => self.msg_opcode == 0,
                CLOSE | PING | PONG => !h.fin || h.payload_len > codec::MAX_CONTROL,
                _ => true,
            };
        if bad {
            return Some(Refusal::BadFrame);
        }
        let open = if h.opcode == CONTINUATION {
            self.reassembly.len()
        } else {
            0
        };
        (open + h.payload_len > self.limits.max_message).then_some(Refusal::TooBig)
    }

    /// Echoes one message: its frame header, then its payload (already unmasked at
    /// `out[at..]` for a one-frame message).
    fn frames(&mut self, input: &[u8], out: &mut Vec<u8>, f: &mut ServerFigures) -> Reply {
        let mut at = 0;
        // Where the pong for the previous frame starts, when that frame was a ping and
        // nothing was written after its pong.
        let mut pong_at: Option<usize> = None;
        loop {
            if out.len() >= OUT_BATCH {
                return Reply::More(at);
            }
            let h = match codec::parse_header(&input[at..], self.limits.max_message) {
                Parsed::Incomplete => return Reply::Consumed(at),
                Parsed::TooLarge => return self.refuse(Refusal::TooBig, out, f),
                Parsed::Header(h) => h,
            };
            if let Some(why) = self.judge(&h) {
                return self.refuse(why, out, f);
            }
            if input.len() - at < h.frame_len() {
                return Reply::Consumed(at);
            }
            if h.opcode != PING {
                pong_at = None;
            }
            let key = h.mask.unwrap_or_default();
            let payload = &input[at + h.header_len..at + h.frame_len()];
            at += h.frame_len();
            match h.opcode {
                TEXT | BINARY if h.fin => {
                    // One frame: unmasked straight into the reply, no copy kept.
                    let start = out.len();
                    codec::write_header(out, true, h.opcode, None, payload.len());
                    let body = out.len();
                    out.extend_from_slice(payload);
                    codec::apply_mask(&mut out[body..], key);
                    if h.opcode == TEXT && std::str::from_utf8(&out[body..]).is_err() {
                        out.truncate(start);
                        return self.refuse(Refusal::InvalidUtf8, out, f);
                    }
                    f.messages += 1;
                    self.answered += 1;
                }
                TEXT | BINARY | CONTINUATION => {
                    if h.opcode != CONTINUATION {
                        self.msg_opcode = h.opcode;
                    }
                    let from = self.reassembly.len();
                    self.reassembly.extend_from_slice(payload);
                    codec::apply_mask(&mut self.reassembly[from..], key);
                    if h.fin {
                        let op = self.msg_opcode;
                        if op == TEXT && std::str::from_utf8(&self.reassembly).is_err() {
                            return self.refuse(Refusal::InvalidUtf8, out, f);
                        }
                        codec::write_header(out, true, op, None, self.reassembly.len());
                        out.extend_from_slice(&self.reassembly);
                        self.free_reassembly();
                        f.messages += 1;
                        f.fragmented += 1;
                        self.answered += 1;
                    }
                }
                PING => {
                    let mut p = [0u8; codec::MAX_CONTROL];
                    let p = &mut p[..payload.len()];
                    p.copy_from_slice(payload);
                    codec::apply_mask(p, key);
                    // Pings read back to back get one pong, for the latest (RFC 6455
                    // 5.5.3): a flooder that reads slowly is owed one pong per read,
                    // not one per ping held in user space.
                    if let Some(start) = pong_at {
                        out.truncate(start);
                    }
                    pong_at = Some(out.len());
                    codec::write_control(out, PONG, p, None);
                    f.pings_answered += 1;
                }
                PONG => f.pongs += 1,
                _ => {
                    // CLOSE: echo a valid code (none: 1000), refuse an invalid one.
                    let mut p = [0u8; codec::MAX_CONTROL];
                    let p = &mut p[..payload.len()];
                    p.copy_from_slice(payload);
                    codec::apply_mask(p, key);
                    return match codec::close_body(p) {
                        CloseBody::NoCode | CloseBody::Code(_) => {
                            let code = match codec::close_body(p) {
                                CloseBody::Code(c) => c,
                                _ => 1000,
                            };
                            codec::write_close(out, code, None);
                            f.clean_closes += 1;
                            self.state = State::Closed;
                            Reply::Close
                        }
                        CloseBody::Invalid(1007) => self.refuse(Refusal::InvalidUtf8, out, f),
                        CloseBody::Invalid(_) => self.refuse(Refusal::BadCloseCode, out, f),
                    };
                }
            }
        }
    }
}

impl ServerSession for WsSession {
    type Figures = ServerFigures;

    fn on_bytes(&mut self, input: &[u8], out: &mut Vec<u8>, f: &mut ServerFigures) -> Reply {
        match self.state {
            State::Open => self.frames(input, out, f),
            State::Closed => Reply::Consumed(input.len()),
            State::Handshake => {
                match handshake::answer_request(input, out, self.limits.subprotocol.as_deref()) {
                    Request::Incomplete => Reply::Consumed(0),
                    Request::TooLarge => {
                        f.bad_handshakes += 1;
                        Reply::TooLarge
                    }
                    Request::Bad => {
                        f.bad_handshakes += 1;
                        Reply::Close
                    }
                    Request::Upgraded { used } => {
                        f.upgrades += 1;
                        self.state = State::Open;
                        // Frames sent right behind the request are answered now.
                        match self.frames(&input[used..], out, f) {
                            Reply::Consumed(n) => Reply::Consumed(used + n),
                            Reply::More(n) => Reply::More(used + n),
                            other => other,
                        }
                    }
                }
            }
        }
    }

    #[inline]
    fn take_requests(&mut self) -> u64 {
        std::mem::take(&mut self.answered)
    }

    #[inline]
    fn in_head(&self, _unconsumed: usize) -> bool {
        self.state == State::Handshake
    }

    fn next_wake(&self) -> Option<u64> {
        (self.state == State::Open && self.limits.ping_every_ns > 0).then_some(self.ping_at)
    }

    fn on_wake(&mut self, now_ns: u64, out: &mut Vec<u8>, f: &mut ServerFigures) {
        if self.state == State::Open {
            self.pings += 1;
            codec::write_control(out, PING, &self.pings.to_be_bytes(), None);
            f.pings_sent += 1;
        }
        self.ping_at = now_ns + self.limits.ping_every_ns;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(max_message: usize) -> WsSession {
        WsServerFactory(Arc::new(Limits {
            max_message,
            ping_every_ns: 0,
            subprotocol: None,
        }))
        .session()
    }

    fn upgraded(max_message: usize) -> WsSession {
        let mut s = session(max_message);
        let mut req = Vec::new();
        handshake::write_request(&mut req, "h", "/", &handshake::client_key(1), None);
        let mut f = ServerFigures::default();
        let mut out = Vec::new();
        assert_eq!(
            s.on_bytes(&req, &mut out, &mut f),
            Reply::Consumed(req.len())
        );
        assert!(out.starts_with(b"HTTP/1.1 101 "));
        s
    }

    fn masked(fin: bool, opcode: u8, payload: &[u8]) -> Vec<u8> {
        let k = [9, 8, 7, 6];
        let mut out = Vec::new();
        codec::write_header(&mut out, fin, opcode, Some(k), payload.len());
        let at = out.len();
        out.extend_from_slice(payload);
        codec::apply_mask(&mut out[at..], k);
        out
    }

    #[test]
    fn echoes_whole_and_fragmented_messages_at_every_split_point() {
        let mut input = masked(true, TEXT, "héllo".as_bytes());
        input.extend(masked(false, BINARY, b"ab"));
        input.extend(masked(true, PING, b"p"));
        input.extend(masked(false, CONTINUATION, b"cd"));
        input.extend(masked(true, CONTINUATION, b"e"));
        let mut want = Vec::new();
        codec::write_header(&mut want, true, TEXT, None, 6);
        want.extend_from_slice("héllo".as_bytes());
        codec::write_control(&mut want, PONG, b"p", None);
        codec::write_header(&mut want, true, BINARY, None, 5);
        want.extend_from_slice(b"abcde");
        for cut in 0..=input.len() {
            let mut s = upgraded(100);
            let mut f = ServerFigures::default();
            let mut out = Vec::new();
            let Reply::Consumed(n) = s.on_bytes(&input[..cut], &mut out, &mut f) else {
                panic!()
            };
            let mut rest = input[n..].to_vec();
            let Reply::Consumed(m) = s.on_bytes(&rest, &mut out, &mut f) else {
                panic!()
            };
            rest.drain(..m);
            assert!(rest.is_empty(), "cut {cut}");
            assert_eq!(out, want, "cut {cut}");
            assert_eq!(s.take_requests(), 2);
            assert_eq!((f.messages, f.fragmented, f.pings_answered), (2, 1, 1));
        }
    }

    #[test]
    fn pings_read_back_to_back_get_one_pong_for_the_latest() {
        let mut input = masked(true, PING, b"1");
        input.extend(masked(true, PING, b"22"));
        input.extend(masked(true, PING, b"333"));
        input.extend(masked(true, TEXT, b"m"));
        input.extend(masked(true, PING, b"4"));
        let mut want = Vec::new();
        codec::write_control(&mut want, PONG, b"333", None);
        codec::write_header(&mut want, true, TEXT, None, 1);
        want.extend_from_slice(b"m");
        codec::write_control(&mut want, PONG, b"4", None);
        let mut s = upgraded(100);
        let mut f = ServerFigures::default();
        let mut out = b"owed".to_vec();
        assert_eq!(
            s.on_bytes(&input, &mut out, &mut f),
            Reply::Consumed(input.len())
        );
        assert_eq!(&out[..4], b"owed", "what was owed before the read stays");
        assert_eq!(out[4..], want[..]);
        assert_eq!((f.pings_answered, f.messages), (4, 1));
    }

    fn closed_with(input: &[u8], max: usize) -> (Reply, u16, ServerFigures) {
        let mut s = upgraded(max);
        let mut f = ServerFigures::default();
        let mut out = Vec::new();
        let r = s.on_bytes(input, &mut out, &mut f);
        let Parsed::Header(h) = codec::parse_header(&out, 125) else {
            panic!("{out:?}")
        };
        assert_eq!(h.opcode, CLOSE);
        let code = u16::from_be_bytes([out[h.header_len], out[h.header_len + 1]]);
        (r, code, f)
    }

    #[test]
    fn close_codes_for_each_kind_of_bad_frame() {
        let (r, code, f) = closed_with(&masked(true, CLOSE, &1000u16.to_be_bytes()), 100);
        assert_eq!((r, code, f.clean_closes), (Reply::Close, 1000, 1));
        let (r, code, f) = closed_with(&[0x82, 0x01, b'x'], 100);
        assert_eq!((r, code, f.unmasked), (Reply::Close, 1002, 1));
        let (_, code, f) = closed_with(&masked(true, 0x3, b""), 100);
        assert_eq!((code, f.bad_frames), (1002, 1));
        let (_, code, f) = closed_with(&masked(true, CONTINUATION, b"x"), 100);
        assert_eq!((code, f.bad_frames), (1002, 1));
        let (_, code, f) = closed_with(&masked(true, CLOSE, &1005u16.to_be_bytes()), 100);
        assert_eq!((code, f.bad_close_codes), (1002, 1));
        let (_, code, f) = closed_with(&masked(true, TEXT, &[0xff, 0xfe]), 100);
        assert_eq!((code, f.invalid_utf8), (1007, 1));
        let (r, code, f) = closed_with(&masked(true, BINARY, &[0; 101]), 100);
        assert_eq!((r, code, f.too_big), (Reply::TooLarge, 1009, 1));
        // A 2^63 length: refused from its header alone.
        let mut huge = vec![0x82, 0xff];
        huge.extend_from_slice(&(1u64 << 63).to_be_bytes());
        let (r, code, _) = closed_with(&huge, 100);
        assert_eq!((r, code), (Reply::TooLarge, 1009));
        // Fragments adding up past the cap.
        let mut two = masked(false, BINARY, &[0; 60]);
        two.extend(masked(true, CONTINUATION, &[0; 60]));
        let (r, code, _) = closed_with(&two, 100);
        assert_eq!((r, code), (Reply::TooLarge, 1009));
    }

    #[test]
    fn pings_start_one_period_after_the_accept() {
        let mut s = WsServerFactory(Arc::new(Limits {
            max_message: 100,
            ping_every_ns: 10,
            subprotocol: None,
        }))
        .session_in(&(), 100);
        assert_eq!(s.next_wake(), None);
        let mut req = Vec::new();
        handshake::write_request(&mut req, "h", "/", &handshake::client_key(1), None);
        let mut f = ServerFigures::default();
        s.on_bytes(&req, &mut Vec::new(), &mut f);
        assert_eq!(s.next_wake(), Some(110));
        let mut out = Vec::new();
        s.on_wake(110, &mut out, &mut f);
        assert_eq!(&out[..2], [0x89, 8]);
        assert_eq!((f.pings_sent, s.next_wake()), (1, Some(120)));
        s.on_wake(125, &mut out, &mut f);
        assert_eq!((f.pings_sent, s.next_wake()), (2, Some(135)));
    }
}
