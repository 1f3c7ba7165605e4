//! Arbitrary bytes as HTTP/2 frames (`proto::h2`): the parser never claims more bytes
//! than it was given nor lets a frame past the max frame size through; every frame
//! written back parses to the same frame; header blocks go through the CONTINUATION
//! assembly and the HPACK decoder under their caps (nothing past them is kept or
//! handed out); SETTINGS and WINDOW_UPDATE go through their checks. Run:
//! `cargo +nightly fuzz run h2_frames`.

use crate::proto::h2::flow::SendWindow;
use crate::proto::h2::frame::{self, Frame, Parsed};
use crate::proto::h2::hpack::{Assembly, Block, HeaderDecoder};
use crate::proto::h2::settings::Settings;
use crate::proto::h2::write;

const MAX_FRAME: u32 = 1 << 14;
const BLOCK_CAP: usize = 4096;
const LIST_CAP: usize = 8192;

/// One input, as the fuzz target runs it.
pub fn run(data: &[u8]) {
    let mut asm = Assembly::new(BLOCK_CAP);
    let mut hpack = HeaderDecoder::new(4096, LIST_CAP);
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
                let decoded = hpack.decode(b, |n, v| list += n.len() + v.len() + 32);
                assert!(list <= LIST_CAP, "{list} bytes handed out");
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
