//! Arbitrary bytes both ways: into the AMQP frame and method decoder, into the dummy
//! broker as a client's frames (server side), and into the publisher as a broker's
//! frames (client side: handshake, replies to publishes with confirms, goodbye).
//! Nothing may panic, and a decoder must never claim more bytes than it was given. Run: `cargo +nightly fuzz run amqp_frames` (builds on stable too).

use crate::engine::session::{ClientSession, Decode, InFlight, Lane, Setup};
use crate::proto::amqp::client::{AmqpClient, ClientOptions};
use crate::proto::amqp::client_figures::ClientFigures;
use crate::proto::amqp::codec::{parse_method, split_frame, FrameKind, Split, PROTOCOL_HEADER};
use crate::proto::amqp::server::{AmqpHandlerFactory, BrokerConfig};
use crate::server::session::{Reply, ServerFactory, ServerSession};

/// One input, as the fuzz target runs it.
pub fn run(data: &[u8]) {
    // The pure decoder, frame after frame.
    let mut at = 0;
    while at < data.len() {
        match split_frame(&data[at..], 131_072) {
            Split::Frame(f) => {
                assert!(f.used > 0 && f.used <= data.len() - at);
                if f.kind == FrameKind::Method {
                    let _ = parse_method(f.payload);
                }
                at += f.used;
            }
            Split::Incomplete | Split::Bad(_) | Split::TooLarge(_) => break,
        }
    }

    // The broker, after a valid header, fed the input in two pieces.
    let factory = AmqpHandlerFactory::new(BrokerConfig::default());
    let mut h = factory.session();
    let mut figures = Default::default();
    let mut input = PROTOCOL_HEADER.to_vec();
    let cut = data
        .first()
        .map(|&b| b as usize % (data.len() + 1))
        .unwrap_or(0);
    let mut out = Vec::new();
    for piece in [&data[..cut], &data[cut..]] {
        input.extend_from_slice(piece);
        out.clear();
        match h.on_bytes(&input, &mut out, &mut figures) {
            Reply::Consumed(n) | Reply::More(n) => {
                assert!(n <= input.len());
                input.drain(..n);
            }
            Reply::Close | Reply::TooLarge | Reply::Reflect(_) => break,
        }
    }

    // The publisher: the handshake, then replies to publishes.
    let mut c = AmqpClient::new(ClientOptions {
        user: "u".into(),
        password: "p".into(),
        vhost: "/".into(),
        channels: 2,
        confirm: true,
        exchange: String::new(),
        routing_key: "k".into(),
        size: 8,
        declare_queue: None,
        per_connection: None,
    });
    let mut figs = ClientFigures::default();
    let mut count = Default::default();
    // The handshake as the engine drives it: consumed bytes dropped, called again
    // until it is done, fails, or needs more input.
    let mut scratch = Vec::new();
    let _ = c.open(&[], &mut scratch, &mut figs, &mut count);
    let mut rest = data;
    let mut ready = false;
    for _ in 0..32 {
        scratch.clear();
        match c.open(rest, &mut scratch, &mut figs, &mut count) {
            // An event in the handshake (AMQP has none there) is skipped like used input.
            Setup::Continue { used } | Setup::Event { used } => {
                assert!(used <= rest.len());
                if used == 0 {
                    break;
                }
                rest = &rest[used..];
            }
            Setup::Done { used } => {
                assert!(used <= rest.len());
                rest = &rest[used..];
                ready = true;
                break;
            }
            Setup::Failed { .. } => break,
        }
    }
    if !ready {
        rest = data;
    }
    let mut pubs = Vec::new();
    for seq in 0..4 {
        c.encode(seq, 0, &mut pubs);
    }
    let req = InFlight {
        seq: 0,
        intended_ns: 0,
        sent_ns: 0,
        tag: 0,
        lane: Lane::ANY,
        measured: true,
        on_write: false,
    };
    for _ in 0..8 {
        scratch.clear();
        match c.decode(rest, Some(&req), &mut scratch, &mut figs) {
            Decode::Reply { used, .. } | Decode::Consumed { used } | Decode::Event { used } => {
                assert!(used <= rest.len());
                if used == 0 {
                    break;
                }
                rest = &rest[used..];
            }
            Decode::Incomplete | Decode::Fail { .. } => break,
        }
    }

    // The goodbye: whatever is left as the broker's answer to Connection.Close.
    scratch.clear();
    let _ = c.close(&[], &mut scratch, &mut figs, &mut count);
    match c.close(rest, &mut scratch, &mut figs, &mut count) {
        Setup::Continue { used } | Setup::Done { used } | Setup::Event { used } => {
            assert!(used <= rest.len())
        }
        Setup::Failed { .. } => {}
    }
}
