//! Frame-max, byte for byte: what the publisher answers to a broker's Connection.Tune,
//! how it splits a body to fit the negotiated size, what the dummy broker does with a
//! frame larger than negotiated, and what a publisher without confirms makes of the
//! bytes a broker sends it (a goodbye, an oversized frame).

use super::client::{AmqpClient, ClientOptions};
use super::client_figures::ClientFigures;
use super::codec::{self, split_frame, write_method, FrameKind, Split, PROTOCOL_HEADER};
use super::server::{AmqpHandlerFactory, BrokerConfig, BrokerTotals};
use crate::engine::session::{ClientSession, Decode, Setup};
use crate::server::session::{Reply, ServerFactory, ServerSession};

fn open(c: &mut AmqpClient, input: &[u8], out: &mut Vec<u8>) -> Setup {
    c.open(
        input,
        out,
        &mut ClientFigures::default(),
        &mut Default::default(),
    )
}

/// What the client makes of bytes with nothing awaited.
fn idle(c: &mut AmqpClient, input: &[u8]) -> Decode {
    c.decode(input, None, &mut Vec::new(), &mut ClientFigures::default())
}
use crate::stats::ErrorKind;
use amq_protocol::protocol::{connection, AMQPClass};

fn opts(size: usize, confirm: bool) -> ClientOptions {
    ClientOptions {
        user: "guest".into(),
        password: "guest".into(),
        vhost: "/".into(),
        channels: 1,
        confirm,
        exchange: String::new(),
        routing_key: "rk".into(),
        size,
        declare_queue: None,
        per_connection: None,
    }
}

fn tune(frame_max: u32) -> Vec<u8> {
    let mut v = Vec::new();
    write_method(
        &mut v,
        0,
        AMQPClass::Connection(connection::AMQPMethod::Tune(connection::Tune {
            channel_max: 0,
            frame_max,
            heartbeat: 0,
        })),
    );
    v
}

/// A client taken through header and Start/StartOk (the Start from the dummy broker),
/// then given a Tune offering `frame_max`: the client, that step, and what it wrote.
fn client_tuned(size: usize, frame_max: u32) -> (AmqpClient, Setup, Vec<u8>) {
    let mut c = AmqpClient::new(opts(size, false));
    let mut out = Vec::new();
    assert_eq!(open(&mut c, &[], &mut out), Setup::Continue { used: 0 });
    assert_eq!(out, PROTOCOL_HEADER);
    let mut start = Vec::new();
    let mut fig = BrokerTotals::default();
    let mut h = AmqpHandlerFactory::new(BrokerConfig::default()).session();
    h.on_bytes(&PROTOCOL_HEADER, &mut start, &mut fig);
    out.clear();
    assert_eq!(
        open(&mut c, &start, &mut out),
        Setup::Continue { used: start.len() }
    );
    out.clear();
    let step = open(&mut c, &tune(frame_max), &mut out);
    (c, step, out)
}

/// Connection.TuneOk, channel-max 1, heartbeat 0, as the client writes it.
fn tune_ok_bytes(frame_max: u32) -> Vec<u8> {
    let mut v = vec![1, 0, 0, 0, 0, 0, 12, 0, 10, 0, 31, 0, 1];
    v.extend_from_slice(&frame_max.to_be_bytes());
    v.extend_from_slice(&[0, 0, 0xCE]);
    v
}

#[test]
fn tune_ok_takes_the_smaller_frame_max_and_zero_means_ours() {
    for (offer, agreed) in [
        (4096, 4096),
        (10_000, 10_000),
        (0, 131_072),
        (1 << 20, 131_072),
    ] {
        let (_, step, out) = client_tuned(10, offer);
        assert!(matches!(step, Setup::Continue { .. }), "{offer}: {step:?}");
        assert_eq!(
            out[..tune_ok_bytes(agreed).len()],
            tune_ok_bytes(agreed),
            "offer {offer}"
        );
    }
}

#[test]
fn an_offer_below_the_spec_minimum_is_refused_in_one_sentence() {
    for offer in [1, 4095] {
        let (_, step, out) = client_tuned(10, offer);
        match step {
            Setup::Failed { kind, detail } => {
                assert_eq!(kind, ErrorKind::ConnectFailed);
                assert_eq!(
                    detail,
                    format!("the broker offered frame-max {offer} bytes in Connection.Tune, below the AMQP 0-9-1 minimum of 4096")
                );
            }
            other => panic!("offer {offer}: {other:?}"),
        }
        assert!(out.is_empty(), "no TuneOk to a refused offer");
    }
}

/// Payload sizes of the body frames in `bytes` (every frame checked against `frame_max`).
fn body_frames(mut bytes: &[u8], frame_max: u32) -> Vec<usize> {
    let mut sizes = Vec::new();
    while !bytes.is_empty() {
        match split_frame(bytes, frame_max) {
            Split::Frame(f) => {
                assert!(
                    frame_max == 0 || f.used <= frame_max as usize,
                    "frame of {} bytes",
                    f.used
                );
                if f.kind == FrameKind::Body {
                    sizes.push(f.payload.len());
                }
                bytes = &bytes[f.used..];
            }
            other => panic!("{other:?}"),
        }
    }
    sizes
}

#[test]
fn a_10000_byte_body_goes_in_frames_of_frame_max_minus_8() {
    let (mut c, _, _) = client_tuned(10_000, 4096);
    let mut publish = Vec::new();
    c.encode(0, 0, &mut publish);
    assert_eq!(body_frames(&publish, 4096), [4088, 4088, 1824]);
    // The first body frame's header, exactly: type 3, channel 1, size 4088.
    let first = publish
        .windows(7)
        .position(|w| w == [3, 0, 1, 0, 0, 0x0F, 0xF8])
        .expect("a body frame of 4088 bytes");
    assert_eq!(publish[first + 7 + 4088], 0xCE);
    // The codec alone, and no limit (0): one frame.
    let mut v = Vec::new();
    codec::write_body(&mut v, 1, &[7; 10_000], 4096);
    assert_eq!(body_frames(&v, 4096), [4088, 4088, 1824]);
    v.clear();
    codec::write_body(&mut v, 1, &[7; 10_000], 0);
    assert_eq!(body_frames(&v, 0), [10_000]);
}

/// The dummy broker offering `offer`, opened by a client whose TuneOk says `tune_ok`.
fn broker_opened(
    offer: u32,
    tune_ok: u32,
) -> (AmqpHandlerFactory, crate::proto::amqp::server::AmqpHandler) {
    let f = AmqpHandlerFactory::new(BrokerConfig {
        frame_max: offer,
        ..BrokerConfig::default()
    });
    let mut h = f.session();
    let mut fig = BrokerTotals::default();
    let mut out = Vec::new();
    let mut c = AmqpClient::new(opts(10, false));
    let mut hello = PROTOCOL_HEADER.to_vec();
    let mut start_ok = Vec::new();
    // StartOk from the real client, then our own TuneOk and Open, then Channel.Open.
    let mut start = Vec::new();
    f.session().on_bytes(&PROTOCOL_HEADER, &mut start, &mut fig);
    open(&mut c, &[], &mut Vec::new());
    open(&mut c, &start, &mut start_ok);
    hello.extend_from_slice(&start_ok);
    write_method(
        &mut hello,
        0,
        AMQPClass::Connection(connection::AMQPMethod::TuneOk(connection::TuneOk {
            channel_max: 1,
            frame_max: tune_ok,
            heartbeat: 0,
        })),
    );
    write_method(
        &mut hello,
        0,
        AMQPClass::Connection(connection::AMQPMethod::Open(connection::Open {
            virtual_host: "/".into(),
        })),
    );
    hello.extend_from_slice(&[1, 0, 1, 0, 0, 0, 5, 0, 20, 0, 10, 0, 0xCE]);
    assert_eq!(
        h.on_bytes(&hello, &mut out, &mut fig),
        Reply::Consumed(hello.len())
    );
    (f, h)
}

/// Basic.Publish, content header and one body frame on channel 1; the body frame,
/// header and end octet included, is `total` bytes.
fn publish_with_body_frame(total: usize) -> Vec<u8> {
    let payload = total - 8;
    let mut v = vec![1, 0, 1, 0, 0, 0, 9, 0, 60, 0, 40, 0, 0, 0, 0, 0, 0xCE];
    // Content header: class 60, weight 0, body size, no properties.
    v.extend_from_slice(&[2, 0, 1, 0, 0, 0, 14, 0, 60, 0, 0]);
    v.extend_from_slice(&(payload as u64).to_be_bytes());
    v.extend_from_slice(&[0, 0, 0xCE]);
    v.extend_from_slice(&[3, 0, 1]);
    v.extend_from_slice(&(payload as u32).to_be_bytes());
    v.extend_from_slice(&vec![b'x'; payload]);
    v.push(0xCE);
    v
}

#[test]
fn the_broker_holds_the_client_to_its_tune_ok_frame_max() {
    // The broker offers 131072; the client asks for 4096: a 4096-byte frame is fine.
    let (_, mut h) = broker_opened(131_072, 4096);
    // The figures of the connection from here on, as its server thread keeps them.
    let mut fig = BrokerTotals::default();
    let ok = publish_with_body_frame(4096);
    let mut out = Vec::new();
    assert_eq!(
        h.on_bytes(&ok, &mut out, &mut fig),
        Reply::Consumed(ok.len())
    );
    assert_eq!(fig.messages, 1);
    // One byte more is a frame error, refused from its header alone.
    let big = publish_with_body_frame(4097);
    // Publish (17 bytes) and content header (22 bytes) come before the body frame.
    let body_at = 17 + 22;
    out.clear();
    assert_eq!(
        h.on_bytes(&big[..body_at + 7], &mut out, &mut fig),
        Reply::Close
    );
    let close_at = out
        .windows(4)
        .position(|w| w == [0, 10, 0, 50])
        .expect("a Connection.Close");
    assert_eq!(out[close_at + 4..close_at + 6], 501u16.to_be_bytes());
    assert_eq!(fig.faults, 1);
    // TuneOk 0 (no limit of the client's own) leaves the broker's offer in force.
    let (_, mut h) = broker_opened(8192, 0);
    out.clear();
    let fits = publish_with_body_frame(8192);
    assert_eq!(
        h.on_bytes(&fits, &mut out, &mut fig),
        Reply::Consumed(fits.len())
    );
    let big = publish_with_body_frame(8193);
    assert_eq!(h.on_bytes(&big, &mut out, &mut fig), Reply::Close);
}

#[test]
fn without_confirms_a_broker_goodbye_or_oversized_frame_ends_the_connection() {
    let (mut c, _, _) = client_tuned(10, 4096);
    // Heartbeats are read past; a partial frame waits.
    let hb = [8, 0, 0, 0, 0, 0, 0, 0xCE];
    assert_eq!(idle(&mut c, &hb), Decode::Event { used: 8 });
    assert_eq!(idle(&mut c, &hb[..5]), Decode::Incomplete);
    let mut close = Vec::new();
    write_method(
        &mut close,
        0,
        AMQPClass::Connection(connection::AMQPMethod::Close(connection::Close {
            reply_code: 320,
            reply_text: "CONNECTION_FORCED".into(),
            class_id: 0,
            method_id: 0,
        })),
    );
    assert_eq!(
        idle(&mut c, &close),
        Decode::Fail {
            kind: ErrorKind::Closed
        }
    );
    // A frame announcing more than the negotiated 4096, refused from its header.
    assert_eq!(
        idle(&mut c, &[1, 0, 0, 0, 0, 0x10, 0]),
        Decode::Fail {
            kind: ErrorKind::TooLarge
        }
    );
    assert_eq!(
        idle(&mut c, &[1, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF]),
        Decode::Fail {
            kind: ErrorKind::TooLarge
        }
    );
    assert_eq!(
        idle(&mut c, b"garbage!"),
        Decode::Fail {
            kind: ErrorKind::Protocol
        }
    );
}
