//! The echo client protocol: random payload sizes, every reply checked byte for byte.

use super::codec::{self, Check, Expected};
use crate::engine::session::{ClientSession, Decode, InFlight, SessionFactory, Verdict};
use crate::rng::Rng;
use crate::stats::ErrorKind;
use std::sync::Arc;

pub struct EchoFactory {
    pub min_payload: usize,
    pub max_payload: usize,
    pattern: Arc<[u8]>,
}

impl EchoFactory {
    pub fn new(min_payload: usize, max_payload: usize) -> Self {
        EchoFactory {
            min_payload,
            max_payload,
            pattern: codec::pattern(max_payload).into(),
        }
    }
}

impl SessionFactory for EchoFactory {
    type Session = EchoClient;

    fn session(&self, conn_id: u64) -> EchoClient {
        EchoClient {
            conn_id,
            rng: Rng::new(conn_id),
            min: self.min_payload as u64,
            max: self.max_payload as u64,
            pattern: self.pattern.clone(),
        }
    }
}

pub struct EchoClient {
    conn_id: u64,
    rng: Rng,
    min: u64,
    max: u64,
    pattern: Arc<[u8]>,
}

impl ClientSession for EchoClient {
    type Figures = ();

    #[inline]
    fn encode(&mut self, seq: u64, sent_ns: u64, out: &mut Vec<u8>) -> u32 {
        let len = self.rng.range(self.min, self.max) as usize;
        codec::encode(out, self.conn_id, seq, sent_ns, len, &self.pattern);
        len as u32
    }

    #[inline]
    fn decode(
        &mut self,
        input: &[u8],
        oldest: Option<&InFlight>,
        _out: &mut Vec<u8>,
        _figures: &mut (),
    ) -> Decode {
        // An echo server never speaks first: bytes nobody asked for end the
        // connection, and keeping them would let a hostile server grow a buffer.
        let Some(req) = oldest else {
            return Decode::Fail {
                kind: ErrorKind::Unsolicited,
            };
        };
        let exp = Expected {
            conn_id: self.conn_id,
            seq: req.seq,
            sent_ns: req.sent_ns,
            payload_len: req.tag as usize,
        };
        match codec::check(input, &exp, &self.pattern) {
            Check::Incomplete => Decode::Incomplete,
            Check::Match { len } => Decode::reply(len, Verdict::Ok),
            Check::Mismatch { len } => Decode::reply(len, Verdict::Error(ErrorKind::Mismatch)),
            Check::BadLength => Decode::reply(0, Verdict::Fatal(ErrorKind::Mismatch)),
            Check::TooLarge => Decode::reply(0, Verdict::Fatal(ErrorKind::TooLarge)),
        }
    }
}
