//! Arbitrary bytes as HTTP/2 frames (`proto::h2`): the parser never claims more bytes
//! than it was given nor lets a frame past the max frame size through; every frame
//! written back parses to the same frame; header blocks go through the CONTINUATION
//! assembly and the HPACK decoder under their caps (nothing past them is kept or
//! handed out), a remembering decoder handing out exactly what the crate does; SETTINGS and WINDOW_UPDATE go through their checks; the HTTP/2
//! client session takes the same bytes as a server's. Run:
//! `cargo +nightly fuzz run h2_frames`.

use crate::proto::h2::flow::SendWindow;
use crate::proto::h2::frame::{self, Frame, Parsed};
use crate::proto::h2::hpack::{Assembly, Block, HeaderDecoder};
use crate::proto::h2::settings::Settings;
use crate::proto::h2::write;

const MAX_FRAME: u32 = 1 << 14;
const BLOCK_CAP: usize = 4096;
const LIST_CAP: usize = 8192;

/// One input, as the fuzz target runs it: through the codec, then as what a server
/// sends the HTTP/2 client session.
pub fn run(data: &[u8]) {
    codec(data);
    client(data);
}

/// The HTTP/2 client after its opening, with three streams open and a small request
/// body waiting on the windows: replies and events never claim more bytes than they
/// were given, and a reply names a lane of a stream it opened.
fn client(data: &[u8]) {
    use crate::engine::session::{
        ClientSession, Decode, Exchanges, InFlight, Lane, SessionFactory, Setup,
    };
    use crate::proto::http::h2_client::{H2Factory, H2Shared};
    use crate::proto::http::h2_streams::lane;
    use std::sync::Arc;
    let mut block = Vec::new();
    crate::proto::h2::hpack::encode(&[(b":method", b"POST"), (b":path", b"/")], &mut block);
    let factory = H2Factory(Arc::new(H2Shared {
        block,
        body: vec![b'x'; 100],
        head: false,
        accept: Default::default(),
        echo: true,
        stream_window: 1000,
        conn_window: 70_000,
    }));
    let mut c = factory.session(1);
    let (mut out, mut figures) = (Vec::new(), Default::default());
    let mut count = Exchanges::default();
    let _ = c.open(&[], &mut out, &mut figures, &mut count);
    let mut settings = Vec::new();
    write::settings(&mut settings, &[]);
    if c.open(&settings, &mut out, &mut figures, &mut count)
        != (Setup::Done {
            used: settings.len(),
        })
    {
        panic!("the opening did not complete");
    }
    for seq in 0..3 {
        c.encode(seq, 0, &mut out);
    }
    let lanes = [lane(1), lane(3), lane(5)];
    let req = InFlight {
        seq: 0,
        intended_ns: 0,
        sent_ns: 0,
        tag: 0,
        lane: Lane::ANY,
        measured: true,
        on_write: false,
    };
    let mut at = 0;
    while at < data.len() {
        out.clear();
        match c.decode(&data[at..], Some(&req), &mut out, &mut figures) {
            Decode::Incomplete | Decode::Fail { .. } => return,
            Decode::Consumed { used } | Decode::Event { used } => {
                assert!(used > 0 && used <= data.len() - at);
                at += used;
            }
            Decode::Reply { used, lane, .. } => {
                assert!(used > 0 && used <= data.len() - at);
                assert!(lanes.contains(&lane), "a reply on a lane never opened");
                at += used;
            }
        }
    }
}

fn codec(data: &[u8]) {
    let mut asm = Assembly::new(BLOCK_CAP);
    let mut hpack = HeaderDecoder::new(4096, LIST_CAP);
    let mut remembering = HeaderDecoder::remembering(4096, LIST_CAP);
    let mut settings = Settings::default();
    let mut window = SendWindow::new(65_535);
    let mut at = 0;
    while at < data.len() {
        let (f, used) = match frame::parse(&data[at..], MAX_FRAME) {
            Ok(Parsed::Frame(f, used)) => (f, used),
            Ok(Parsed::Incomplete) | Err(_) => return,
        };
        assert!(used <= data.len() - at && used >= frame::HEADER_LEN);
        assert!(used - frame::HEADER_LEN <= MAX_FRAME as usize);
        round_trip(f);
        let block = match f {
            Frame::Headers {
                stream,
                end_headers,
                block,
                ..
            }
            | Frame::PushPromise {
                stream,
                end_headers,
                block,
                ..
            } => asm.first(stream, end_headers, block),
            Frame::Continuation {
                stream,
                end_headers,
                block,
            } => asm.more(stream, end_headers, block),
            Frame::Settings { ack: false, params } => settings.apply(params).map(|_| Block::Open),
            Frame::WindowUpdate { increment, .. } => window.grow(increment).map(|_| Block::Open),
            _ => Ok(Block::Open),
        };
        match block {
            Ok(Block::Done(b)) => {
                assert!(b.len() <= BLOCK_CAP.max(MAX_FRAME as usize));
                let mut list = 0;
                let mut fields = Vec::new();
                let decoded = hpack.decode(b, |n, v| {
                    list += n.len() + v.len() + 32;
                    fields.push((n.to_vec(), v.to_vec()));
                });
                assert!(list <= LIST_CAP, "{list} bytes handed out");
                // A decoder remembering its last block hands out what the crate does.
                let mut again = Vec::new();
                let remembered = remembering.decode(b, |n, v| again.push((n.to_vec(), v.to_vec())));
                assert_eq!(fields, again);
                let words = |e: crate::proto::h2::FrameError| (e.code, e.what, e.too_large);
                assert_eq!(decoded.map_err(words), remembered.map_err(words));
                if decoded.is_err() {
                    return;
                }
            }
            Ok(Block::Open) => {}
            Err(_) => return,
        }
        at += used;
    }
}

/// The frame written back reads as the same frame (padding aside).
fn round_trip(f: Frame<'_>) {
    let mut out = Vec::new();
    match f {
        Frame::Data {
            stream,
            end_stream,
            data,
            ..
        } => write::data(&mut out, stream, end_stream, data),
        Frame::Headers {
            stream,
            end_stream,
            end_headers: true,
            priority: None,
            block,
        } => write::headers(&mut out, stream, end_stream, block, u32::MAX),
        Frame::Priority { stream, spec } => write::priority(&mut out, stream, spec),
        Frame::RstStream { stream, code } => write::rst_stream(&mut out, stream, code),
        Frame::Settings { ack: true, .. } => write::settings_ack(&mut out),
        Frame::Ping { ack, data } => write::ping(&mut out, ack, data),
        Frame::GoAway {
            last_stream,
            code,
            debug,
        } => write::goaway(&mut out, last_stream, code, debug),
        Frame::WindowUpdate { stream, increment } => {
            write::window_update(&mut out, stream, increment)
        }
        Frame::Continuation {
            stream,
            end_headers,
            block,
        } => write::continuation(&mut out, stream, end_headers, block),
        _ => return,
    }
    match frame::parse(&out, frame::MAX_FRAME_CEILING) {
        Ok(Parsed::Frame(back, used)) => {
            assert_eq!(used, out.len());
            let same = match (f, back) {
                (
                    Frame::Data {
                        stream,
                        end_stream,
                        data,
                        ..
                    },
                    Frame::Data {
                        stream: s,
                        end_stream: e,
                        data: d,
                        ..
                    },
                ) => (stream, end_stream, data) == (s, e, d),
                (a, b) => a == b,
            };
            assert!(same, "{f:?} written back reads as {back:?}");
        }
        found => panic!("{f:?} written back reads as {found:?}"),
    }
}
