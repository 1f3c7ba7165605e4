//! Arbitrary bytes as WebSocket frames, both ways: the header parser, the load
//! client's decoder and closing exchange, and `serve ws`'s session must not panic,
//! never claim more bytes than they were given, and keep their caps (a length past
//! the cap is refused from the header alone). Frames the encoder wrote parse back.
//! Run: `cargo +nightly fuzz run ws_frames`.

use crate::engine::session::{ClientSession, Decode, InFlight, Lane, SessionFactory, Setup};
use crate::proto::ws::client::{Shared, WsFactory};
use crate::proto::ws::codec::{self, Parsed};
use crate::proto::ws::handshake;
use crate::proto::ws::server::{Limits, WsServerFactory};
use crate::server::session::{Reply, ServerFactory, ServerSession};
use std::sync::Arc;

const CAP: usize = 4096;

/// One input, as the fuzz target runs it.
pub fn run(data: &[u8]) {
    // The parser: a whole header never says more than the cap, nor more than 14 bytes.
    if let Parsed::Header(h) = codec::parse_header(data, CAP) {
        assert!(h.payload_len <= CAP && h.header_len <= codec::MAX_HEADER);
        assert!(h.header_len <= data.len());
        // Round trip of the same header.
        let mut out = Vec::new();
        codec::write_header(&mut out, h.fin, h.opcode, h.mask, h.payload_len);
        match codec::parse_header(&out, CAP) {
            Parsed::Header(b) => assert_eq!(
                (b.fin, b.opcode, b.mask, b.payload_len),
                (h.fin, h.opcode, h.mask, h.payload_len)
            ),
            found => panic!("the header written back reads as {found:?}"),
        }
    }
    let _ = codec::close_body(data);

    // The client, as the engine drives it: replies and events never claim too much.
    let size = data.first().map_or(0, |&b| b as usize * 8);
    let factory = WsFactory(Arc::new(Shared::new(
        "h:1".into(),
        "/".into(),
        None,
        (size, size),
        data.get(1).map_or(1, |&b| b as usize + 1),
        data.get(2).is_some_and(|&b| b & 1 == 1),
    )));
    let mut c = factory.session(7);
    let mut out = Vec::new();
    let tag = c.encode(3, 0, &mut out);
    let req = InFlight {
        seq: 3,
        intended_ns: 0,
        sent_ns: 0,
        tag,
        lane: Lane::ANY,
        measured: true,
        on_write: false,
    };
    let mut f = Default::default();
    let mut at = 0;
    while at < data.len() {
        match c.decode(&data[at..], Some(&req), &mut out, &mut f) {
            Decode::Incomplete | Decode::Fail { .. } => break,
            Decode::Consumed { used } | Decode::Event { used } => {
                assert!(used > 0 && used <= data.len() - at);
                at += used;
            }
            Decode::Reply { used, .. } => {
                assert!(used <= data.len() - at);
                if used == 0 {
                    break;
                }
                at += used;
            }
        }
    }
    let mut c = factory.session(8);
    match c.close(data, &mut out, &mut f, &mut Default::default()) {
        Setup::Continue { used } | Setup::Done { used } | Setup::Event { used } => {
            assert!(used <= data.len())
        }
        Setup::Failed { .. } => {}
    }

    // The server, upgraded, fed the bytes in two pieces as the runtime would: the
    // unconsumed rest is what it keeps, and it never exceeds the cap plus a header.
    let server = WsServerFactory(Arc::new(Limits {
        max_message: CAP,
        ping_every_ns: 0,
        subprotocol: None,
    }));
    let mut s = server.session();
    let mut req = Vec::new();
    handshake::write_request(&mut req, "h", "/", &handshake::client_key(1), None);
    let mut figures = Default::default();
    assert_eq!(
        s.on_bytes(&req, &mut Vec::new(), &mut figures),
        Reply::Consumed(req.len())
    );
    let mut carry: Vec<u8> = Vec::new();
    for piece in [&data[..data.len() / 2], &data[data.len() / 2..]] {
        carry.extend_from_slice(piece);
        let mut out = Vec::new();
        loop {
            // The runtime clears its output buffer before every call.
            out.clear();
            match s.on_bytes(&carry, &mut out, &mut figures) {
                Reply::Consumed(n) | Reply::Reflect(n) => {
                    assert!(n <= carry.len());
                    carry.drain(..n);
                    break;
                }
                Reply::More(n) => {
                    assert!(n > 0 && n <= carry.len());
                    carry.drain(..n);
                }
                Reply::Close | Reply::TooLarge => return,
            }
        }
        // A frame is judged from its header: what waits is at most one capped frame
        // (reassembled fragments live in the session, capped the same way).
        assert!(
            carry.len() <= CAP + codec::MAX_HEADER,
            "kept {}",
            carry.len()
        );
    }
    // A fresh session fed everything as the upgrade request never panics either.
    let mut fresh = server.session();
    let _ = fresh.on_bytes(data, &mut Vec::new(), &mut figures);
}
