//! Arbitrary bytes as RESP: the reply scanner and the Redis client's decoder (replies
//! from a server), and the request parser and `serve redis`'s session (requests from a
//! client), fed whole and split in two as the server runtime carries unconsumed bytes.
//! None may panic or claim more bytes than it was given; a whole reply's every prefix
//! is incomplete; the session answers the same requests however the bytes arrive. The
//! resumable scan (`ReplyScan`, and the client that keeps one) is fed the bytes in
//! pieces, as the engine appends each read to an unfinished reply: at every piece it
//! says what a scan from the first byte says, so resuming never changes a verdict.
//! Run: `cargo +nightly fuzz run redis_resp`.

use crate::engine::session::{ClientSession, Decode, InFlight, Lane, SessionFactory};
use crate::proto::redis::client::{Plan, RedisFactory, REPLY_LIMITS};
use crate::proto::redis::codec::{parse_request, scan_reply, Args, ReplyScan, RequestLimits, Scan};
use crate::proto::redis::command::{Values, Workload};
use crate::proto::redis::keys::Distribution;
use crate::proto::redis::server::RedisHandlerFactory;
use crate::server::session::{Reply, ServerFactory, ServerSession};

/// Small caps, so the fuzzer reaches the too-large paths with small inputs.
const LIMITS: RequestLimits = RequestLimits {
    max_args: 16,
    max_bulk: 256,
    max_request: 1024,
};

/// Requests answered and whether the session closed, feeding `pieces` in turn.
fn serve(f: &RedisHandlerFactory, pieces: &[&[u8]]) -> (u64, bool) {
    let mut s = f.session();
    let mut carry: Vec<u8> = Vec::new();
    let mut requests = 0;
    let mut figures = Default::default();
    for piece in pieces {
        carry.extend_from_slice(piece);
        loop {
            let mut out = Vec::new();
            let reply = s.on_bytes(&carry, &mut out, &mut figures);
            requests += s.take_requests();
            match reply {
                Reply::Consumed(n) => {
                    assert!(n <= carry.len());
                    carry.drain(..n);
                    break;
                }
                Reply::More(n) => {
                    assert!(n > 0 && n <= carry.len());
                    carry.drain(..n);
                }
                Reply::Close | Reply::TooLarge => return (requests, true),
                Reply::Reflect(_) => panic!("serve redis never reflects"),
            }
        }
    }
    (requests, false)
}

/// Piece sizes the engine's reads may cut a reply into: a byte at a time, a few, and
/// one from the input itself, so the fuzzer picks where the cuts fall.
fn steps(data: &[u8]) -> [usize; 3] {
    [1, 7, 1 + data.first().map_or(0, |&b| b as usize)]
}

/// A `ReplyScan` given `input` one `step` more each time, from its first byte (as the
/// engine keeps an unfinished reply and appends a read): each answer is the one a
/// scan from the first byte gives the same bytes, until the reply is whole or refused.
fn scan_in_pieces(input: &[u8], step: usize) {
    let mut scan = ReplyScan::default();
    let mut upto = 0;
    while upto < input.len() {
        upto = (upto + step).min(input.len());
        let resumed = scan.scan(&input[..upto], &REPLY_LIMITS);
        assert_eq!(resumed, scan_reply(&input[..upto], &REPLY_LIMITS));
        if resumed != Scan::Incomplete {
            return;
        }
    }
}

/// The client (keeping its scan between calls) given `input` in growing pieces for one
/// GET: its first answer that is not `Incomplete` is a fresh client's on those bytes.
fn decode_in_pieces(factory: &RedisFactory, input: &[u8], step: usize) {
    let (mut pieced, mut fresh) = (factory.session(1), factory.session(1));
    let mut figures = Default::default();
    let tag = pieced.encode(1, 0, &mut Vec::new());
    assert_eq!(tag, fresh.encode(1, 0, &mut Vec::new()));
    let req = InFlight {
        seq: 1,
        intended_ns: 0,
        sent_ns: 0,
        tag,
        lane: Lane::ANY,
        measured: true,
        on_write: false,
    };
    let mut upto = 0;
    while upto < input.len() {
        upto = (upto + step).min(input.len());
        let got = pieced.decode(&input[..upto], Some(&req), &mut Vec::new(), &mut figures);
        if got != Decode::Incomplete {
            let whole = fresh.decode(&input[..upto], Some(&req), &mut Vec::new(), &mut figures);
            assert_eq!(got, whole);
            return;
        }
    }
}

/// One input, as the fuzz target runs it.
pub fn run(data: &[u8]) {
    for step in steps(data) {
        scan_in_pieces(data, step);
    }

    // Replies, back to back, as a pipelined connection receives them.
    let mut at = 0;
    while at < data.len() {
        match scan_reply(&data[at..], &REPLY_LIMITS) {
            Scan::Whole { len, .. } => {
                assert!(len > 0 && len <= data.len() - at);
                for cut in [0, 1, len / 2, len - 1] {
                    if cut < len {
                        assert_eq!(
                            scan_reply(&data[at..at + cut], &REPLY_LIMITS),
                            Scan::Incomplete
                        );
                    }
                }
                at += len;
            }
            _ => break,
        }
    }

    // The client, as the engine drives it, for a GET and a SET in turn.
    let factory = RedisFactory::new(Plan {
        workload: Workload::parse("mixed:1:1").expect("preset"),
        values: Values::new(1, 64),
        keyspace: 100,
        distribution: Distribution::Uniform,
        auth: None,
        db: 0,
        resp3: true,
    });
    for step in steps(data) {
        decode_in_pieces(&factory, data, step);
    }
    let mut client = factory.session(1);
    let mut figures = Default::default();
    client.open(&[], &mut Vec::new(), &mut figures, &mut Default::default());
    let _ = client.open(data, &mut Vec::new(), &mut figures, &mut Default::default());
    for seq in 0..2 {
        let tag = client.encode(seq, 0, &mut Vec::new());
        let req = InFlight {
            seq,
            intended_ns: 0,
            sent_ns: 0,
            tag,
            lane: Lane::ANY,
            measured: true,
            on_write: false,
        };
        match client.decode(data, Some(&req), &mut Vec::new(), &mut figures) {
            Decode::Reply { used, .. } | Decode::Consumed { used } | Decode::Event { used } => {
                assert!(used > 0 && used <= data.len())
            }
            Decode::Incomplete | Decode::Fail { .. } => {}
        }
    }

    // Requests: the parser, then the server's session whole and split.
    let mut args = Args::new();
    if let Scan::Whole { len, .. } = parse_request(data, &LIMITS, &mut args) {
        assert!(len <= data.len());
        for &(a, l) in &args {
            assert!((a + l) as usize <= len);
        }
    }
    let f = RedisHandlerFactory::new(LIMITS);
    let (whole, closed) = serve(&f, &[data]);
    let mid = data.len() / 2;
    let (split, closed_split) = serve(&f, &[&data[..mid], &data[mid..]]);
    if !closed && !closed_split {
        assert_eq!(whole, split);
    }
}
