//! The codec on exact bytes: every frame type written and parsed back, `Incomplete`
//! at every split point, each refusal the RFC names, the windows, and HPACK on the
//! RFC 7541 test vectors.

use super::error::ErrorCode;
use super::flow::{RecvWindow, SendWindow};
use super::frame::{self, Frame, Parsed, PrioritySpec};
use super::hpack::{self, Assembly, Block, HeaderDecoder};
use super::settings::{self, Settings};
use super::write;

/// Parses `bytes` as exactly one frame, and checks every proper prefix is Incomplete.
fn whole(bytes: &[u8]) -> Frame<'_> {
    for cut in 0..bytes.len() {
        assert_eq!(
            frame::parse(&bytes[..cut], 1 << 14),
            Ok(Parsed::Incomplete),
            "cut at {cut}"
        );
    }
    match frame::parse(bytes, 1 << 14) {
        Ok(Parsed::Frame(f, used)) => {
            assert_eq!(used, bytes.len());
            f
        }
        other => panic!("not one frame: {other:?}"),
    }
}

fn err(bytes: &[u8]) -> &'static str {
    match frame::parse(bytes, 1 << 14) {
        Err(e) => e.what,
        other => panic!("accepted: {other:?}"),
    }
}

#[test]
fn data_frames_are_exact_and_parse_back() {
    let mut out = Vec::new();
    write::data(&mut out, 1, true, b"hello");
    assert_eq!(out, b"\x00\x00\x05\x00\x01\x00\x00\x00\x01hello");
    let want = Frame::Data {
        stream: 1,
        end_stream: true,
        data: b"hello",
        flow_len: 5,
    };
    assert_eq!(whole(&out), want);
    // Padded: 2 bytes of padding after a pad length byte; flow control counts all 8.
    let padded = b"\x00\x00\x08\x00\x09\x00\x00\x00\x03\x02hello\x00\x00";
    assert_eq!(
        whole(padded),
        Frame::Data {
            stream: 3,
            end_stream: true,
            data: b"hello",
            flow_len: 8
        }
    );
    let mut h = Vec::new();
    write::data_header(&mut h, 1, true, 5);
    assert_eq!(h, out[..9]);
}

#[test]
fn headers_split_into_continuations_at_the_max_frame_size() {
    let block: Vec<u8> = (0..40u8).collect();
    let mut out = Vec::new();
    write::headers(&mut out, 5, true, &block, 16);
    // HEADERS(16, END_STREAM) + CONTINUATION(16) + CONTINUATION(8, END_HEADERS).
    assert_eq!(out.len(), 3 * 9 + 40);
    assert_eq!(&out[..9], b"\x00\x00\x10\x01\x01\x00\x00\x00\x05");
    assert_eq!(&out[25..34], b"\x00\x00\x10\x09\x00\x00\x00\x00\x05");
    assert_eq!(&out[50..59], b"\x00\x00\x08\x09\x04\x00\x00\x00\x05");
    let mut asm = Assembly::new(64);
    let mut at = 0;
    let mut got = None;
    while at < out.len() {
        let Ok(Parsed::Frame(f, used)) = frame::parse(&out[at..], 1 << 14) else {
            panic!("bad frame at {at}")
        };
        at += used;
        let b = match f {
            Frame::Headers {
                stream,
                end_headers,
                block,
                end_stream: true,
                priority: None,
            } => asm.first(stream, end_headers, block).unwrap(),
            Frame::Continuation {
                stream,
                end_headers,
                block,
            } => asm.more(stream, end_headers, block).unwrap(),
            other => panic!("{other:?}"),
        };
        if let Block::Done(b) = b {
            got = Some(b.to_vec());
        }
    }
    assert_eq!(got.as_deref(), Some(&block[..]));
    assert_eq!(asm.open(), None);
    // One frame when it fits; HEADERS with priority and padding parse too.
    let mut one = Vec::new();
    write::headers(&mut one, 1, false, b"\x82", 16_384);
    assert_eq!(one, b"\x00\x00\x01\x01\x04\x00\x00\x00\x01\x82");
    let spec = PrioritySpec {
        exclusive: true,
        depends_on: 3,
        weight: 15,
    };
    let mut p = Vec::new();
    write::headers_with_priority(&mut p, 7, false, spec, b"\x82\x84", 16_384);
    assert_eq!(
        whole(&p),
        Frame::Headers {
            stream: 7,
            end_stream: false,
            end_headers: true,
            priority: Some(spec),
            block: b"\x82\x84"
        }
    );
}

#[test]
fn the_control_frames_are_exact_and_parse_back() {
    let spec = PrioritySpec {
        exclusive: false,
        depends_on: 1,
        weight: 200,
    };
    let mut out = Vec::new();
    write::priority(&mut out, 3, spec);
    assert_eq!(
        out,
        b"\x00\x00\x05\x02\x00\x00\x00\x00\x03\x00\x00\x00\x01\xc8"
    );
    assert_eq!(whole(&out), Frame::Priority { stream: 3, spec });

    out.clear();
    write::rst_stream(&mut out, 3, ErrorCode::CANCEL.0);
    assert_eq!(out, b"\x00\x00\x04\x03\x00\x00\x00\x00\x03\x00\x00\x00\x08");
    assert_eq!(whole(&out), Frame::RstStream { stream: 3, code: 8 });

    out.clear();
    write::settings(&mut out, &[(settings::INITIAL_WINDOW_SIZE, 1 << 20)]);
    assert_eq!(
        out,
        b"\x00\x00\x06\x04\x00\x00\x00\x00\x00\x00\x04\x00\x10\x00\x00"
    );
    let Frame::Settings { ack: false, params } = whole(&out) else {
        panic!("not settings")
    };
    assert_eq!(settings::params(params).collect::<Vec<_>>(), [(4, 1 << 20)]);

    out.clear();
    write::settings_ack(&mut out);
    assert_eq!(out, b"\x00\x00\x00\x04\x01\x00\x00\x00\x00");
    assert_eq!(
        whole(&out),
        Frame::Settings {
            ack: true,
            params: b""
        }
    );

    out.clear();
    write::push_promise(&mut out, 1, 2, b"\x82", 16_384);
    assert_eq!(
        out,
        b"\x00\x00\x05\x05\x04\x00\x00\x00\x01\x00\x00\x00\x02\x82"
    );
    assert_eq!(
        whole(&out),
        Frame::PushPromise {
            stream: 1,
            promised: 2,
            end_headers: true,
            block: b"\x82"
        }
    );

    out.clear();
    write::ping(&mut out, true, *b"12345678");
    assert_eq!(out, b"\x00\x00\x08\x06\x01\x00\x00\x00\x0012345678");
    assert_eq!(
        whole(&out),
        Frame::Ping {
            ack: true,
            data: *b"12345678"
        }
    );

    out.clear();
    write::goaway(&mut out, 9, ErrorCode::ENHANCE_YOUR_CALM.0, b"calm");
    assert_eq!(
        out,
        b"\x00\x00\x0c\x07\x00\x00\x00\x00\x00\x00\x00\x00\x09\x00\x00\x00\x0bcalm"
    );
    assert_eq!(
        whole(&out),
        Frame::GoAway {
            last_stream: 9,
            code: 11,
            debug: b"calm"
        }
    );

    out.clear();
    write::window_update(&mut out, 0, 1000);
    assert_eq!(out, b"\x00\x00\x04\x08\x00\x00\x00\x00\x00\x00\x00\x03\xe8");
    assert_eq!(
        whole(&out),
        Frame::WindowUpdate {
            stream: 0,
            increment: 1000
        }
    );

    out.clear();
    write::continuation(&mut out, 1, true, b"\x84");
    assert_eq!(
        whole(&out),
        Frame::Continuation {
            stream: 1,
            end_headers: true,
            block: b"\x84"
        }
    );
    // An unknown type is skipped whole; the reserved bit of a stream id is cleared.
    assert_eq!(
        whole(b"\x00\x00\x02\xfa\x00\x80\x00\x00\x01ab"),
        Frame::Unknown {
            kind: 0xfa,
            stream: 1
        }
    );
}

#[test]
fn a_frame_over_the_max_size_is_refused_from_its_header_alone() {
    // 2^24 - 1 bytes announced, none of them sent.
    let e = frame::parse(b"\xff\xff\xff\x00\x00\x00\x00\x00\x01", 1 << 14).unwrap_err();
    assert!(e.too_large);
    assert_eq!(e.code, ErrorCode::FRAME_SIZE_ERROR);
    // Exactly the max is fine (and incomplete until whole).
    assert_eq!(
        frame::parse(b"\x00\x40\x00\x00\x00\x00\x00\x00\x01", 1 << 14),
        Ok(Parsed::Incomplete)
    );
}

#[test]
fn malformed_frames_are_the_errors_the_rfc_names() {
    assert_eq!(
        err(b"\x00\x00\x00\x00\x00\x00\x00\x00\x00"),
        "a DATA frame on stream 0"
    );
    assert_eq!(
        err(b"\x00\x00\x01\x00\x08\x00\x00\x00\x01\x05"),
        "padding as long as the frame"
    );
    assert_eq!(
        err(b"\x00\x00\x00\x01\x04\x00\x00\x00\x00"),
        "a HEADERS frame on stream 0"
    );
    assert_eq!(
        err(b"\x00\x00\x04\x02\x00\x00\x00\x00\x01\x00\x00\x00\x00"),
        "a PRIORITY frame not 5 bytes long"
    );
    assert_eq!(
        err(b"\x00\x00\x03\x03\x00\x00\x00\x00\x01\x00\x00\x00"),
        "an RST_STREAM frame not 4 bytes long"
    );
    assert_eq!(
        err(b"\x00\x00\x06\x04\x01\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00"),
        "a SETTINGS acknowledgement with a payload"
    );
    assert_eq!(
        err(b"\x00\x00\x05\x04\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00"),
        "a SETTINGS frame not a multiple of 6 bytes"
    );
    assert_eq!(
        err(b"\x00\x00\x00\x04\x00\x00\x00\x00\x01"),
        "a SETTINGS frame on a stream"
    );
    assert_eq!(
        err(b"\x00\x00\x08\x06\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00"),
        "a PING frame on a stream"
    );
    assert_eq!(
        err(b"\x00\x00\x07\x06\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"),
        "a PING frame not 8 bytes long"
    );
    assert_eq!(
        err(b"\x00\x00\x04\x07\x00\x00\x00\x00\x00\x00\x00\x00\x00"),
        "a GOAWAY frame shorter than 8 bytes"
    );
    assert_eq!(
        err(b"\x00\x00\x04\x08\x00\x00\x00\x00\x00\x00\x00\x00\x00"),
        "a WINDOW_UPDATE of 0"
    );
    assert_eq!(
        err(b"\x00\x00\x00\x09\x04\x00\x00\x00\x00"),
        "a CONTINUATION frame on stream 0"
    );
    assert_eq!(
        err(b"\x00\x00\x03\x05\x04\x00\x00\x00\x01\x00\x00\x00"),
        "a PUSH_PROMISE frame too short for its stream id"
    );
}

#[test]
fn settings_apply_in_order_with_the_rfcs_checks() {
    let mut s = Settings::default();
    let mut f = Vec::new();
    write::settings(
        &mut f,
        &[
            (settings::MAX_CONCURRENT_STREAMS, 100),
            (settings::INITIAL_WINDOW_SIZE, 1000),
            (settings::MAX_FRAME_SIZE, 1 << 20),
            (settings::ENABLE_PUSH, 0),
            (0x99, 7),
        ],
    );
    assert_eq!(s.apply(&f[9..]), Ok(1000 - 65_535));
    assert_eq!(
        (
            s.max_concurrent_streams,
            s.initial_window_size,
            s.max_frame_size,
            s.enable_push
        ),
        (100, 1000, 1 << 20, false)
    );
    for (id, v, code) in [
        (settings::ENABLE_PUSH, 2, ErrorCode::PROTOCOL_ERROR),
        (
            settings::INITIAL_WINDOW_SIZE,
            1 << 31,
            ErrorCode::FLOW_CONTROL_ERROR,
        ),
        (settings::MAX_FRAME_SIZE, 16_383, ErrorCode::PROTOCOL_ERROR),
        (settings::MAX_FRAME_SIZE, 1 << 24, ErrorCode::PROTOCOL_ERROR),
    ] {
        let mut f = Vec::new();
        write::settings(&mut f, &[(id, v)]);
        assert_eq!(
            Settings::default().apply(&f[9..]).map_err(|e| e.code),
            Err(code),
            "{id} = {v}"
        );
    }
}

#[test]
fn windows_count_and_give_room_back_at_half() {
    let mut w = SendWindow::new(100);
    w.take(60);
    assert_eq!(w.available(), 40);
    // A smaller initial window may take it below zero; it sends nothing until updated.
    w.shift(-50).unwrap();
    assert_eq!(w.available(), 0);
    w.grow(20).unwrap();
    assert_eq!(w.available(), 10);
    assert_eq!(
        w.grow(u32::MAX >> 1).map_err(|e| e.code),
        Err(ErrorCode::FLOW_CONTROL_ERROR)
    );

    let mut r = RecvWindow::new(100);
    r.receive(49).unwrap();
    assert_eq!(r.credit(), None);
    r.receive(1).unwrap();
    assert_eq!(r.credit(), Some(50));
    assert_eq!(r.left(), 100);
    assert_eq!(
        r.receive(101).map_err(|e| e.code),
        Err(ErrorCode::FLOW_CONTROL_ERROR)
    );
    let mut c = RecvWindow::new(65_535);
    assert_eq!(c.raise(1 << 24), Some((1 << 24) - 65_535));
    assert_eq!((c.size(), c.left()), (1 << 24, 1 << 24));
    assert_eq!(c.raise(100), None);
}

fn decoded(d: &mut HeaderDecoder, block: &[u8]) -> Vec<(String, String)> {
    let mut got = Vec::new();
    d.decode(block, |n, v| {
        got.push((
            String::from_utf8_lossy(n).into_owned(),
            String::from_utf8_lossy(v).into_owned(),
        ))
    })
    .expect("block decodes");
    got
}

fn pairs(p: &[(&str, &str)]) -> Vec<(String, String)> {
    p.iter()
        .map(|(n, v)| (n.to_string(), v.to_string()))
        .collect()
}

#[test]
fn hpack_decodes_the_rfc_7541_vectors_with_their_dynamic_table() {
    // C.4: requests with Huffman coding, the second and third using the dynamic table.
    let mut d = HeaderDecoder::new(4096, 1 << 16);
    let c41 = b"\x82\x86\x84\x41\x8c\xf1\xe3\xc2\xe5\xf2\x3a\x6b\xa0\xab\x90\xf4\xff";
    assert_eq!(
        decoded(&mut d, c41),
        pairs(&[
            (":method", "GET"),
            (":scheme", "http"),
            (":path", "/"),
            (":authority", "www.example.com")
        ])
    );
    let c42 = b"\x82\x86\x84\xbe\x58\x86\xa8\xeb\x10\x64\x9c\xbf";
    assert_eq!(
        decoded(&mut d, c42),
        pairs(&[
            (":method", "GET"),
            (":scheme", "http"),
            (":path", "/"),
            (":authority", "www.example.com"),
            ("cache-control", "no-cache")
        ])
    );
}

#[test]
fn hpack_refuses_a_bad_index_and_a_list_over_its_cap() {
    let mut d = HeaderDecoder::new(4096, 1 << 16);
    // Index 70: past the static table (61) with an empty dynamic table.
    let e = d.decode(b"\xc6", |_, _| {}).unwrap_err();
    assert_eq!(
        (e.code, e.what),
        (ErrorCode::COMPRESSION_ERROR, "an HPACK index out of range")
    );
    // A table size update over the 4096 announced.
    let e = HeaderDecoder::new(4096, 1 << 16)
        .decode(b"\x3f\xe2\x1f", |_, _| {})
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::COMPRESSION_ERROR);
    // One 4000-byte entry in the table, then indexed 100 times: ~400 KB from 100 bytes.
    let mut big = Vec::new();
    big.extend_from_slice(b"\x40\x01x\x7f\xa1\x1e"); // literal with indexing, name "x", value len 4000
    big.extend(std::iter::repeat_n(b'v', 4000));
    big.extend(std::iter::repeat_n(0xbe, 100)); // index 62: that entry
    let mut d = HeaderDecoder::new(4096, 64 << 10);
    let mut fields = 0;
    let e = d.decode(&big, |_, _| fields += 1).unwrap_err();
    assert!(e.too_large);
    assert!(fields <= 16, "{fields} fields handed out before the cap");
}

#[test]
fn a_header_block_that_never_ends_costs_its_cap_then_fails() {
    let mut asm = Assembly::new(100);
    assert_eq!(asm.first(1, false, &[0; 60]), Ok(Block::Open));
    assert_eq!(asm.open(), Some(1));
    let e = asm.more(1, false, &[0; 60]).unwrap_err();
    assert!(e.too_large);
    // CONTINUATION of another stream, or none open, is a protocol error.
    let mut asm = Assembly::new(100);
    asm.first(1, false, b"a").unwrap();
    assert_eq!(
        asm.more(3, true, b"b").unwrap_err().code,
        ErrorCode::PROTOCOL_ERROR
    );
    assert_eq!(
        Assembly::new(9).more(1, true, b"b").unwrap_err().code,
        ErrorCode::PROTOCOL_ERROR
    );
    let mut asm = Assembly::new(100);
    asm.first(1, false, b"a").unwrap();
    assert_eq!(
        asm.first(3, true, b"b").unwrap_err().code,
        ErrorCode::PROTOCOL_ERROR
    );
}

#[test]
fn hpack_encodes_statelessly_and_decodes_back() {
    let fields: [(&[u8], &[u8]); 5] = [
        (b":method", b"POST"),
        (b":scheme", b"http"),
        (b":authority", b"127.0.0.1:8080"),
        (b":path", b"/echo?x=1"),
        (b"content-length", b"12"),
    ];
    let mut a = Vec::new();
    hpack::encode(&fields, &mut a);
    let mut b = Vec::new();
    hpack::encode(&fields, &mut b);
    assert_eq!(a, b);
    // :method POST is static index 3, :scheme http index 6.
    assert_eq!(&a[..2], b"\x83\x86");
    let mut d = HeaderDecoder::new(4096, 1 << 16);
    for _ in 0..3 {
        let got = decoded(&mut d, &a);
        let want: Vec<(String, String)> = fields
            .iter()
            .map(|(n, v)| {
                (
                    String::from_utf8_lossy(n).into_owned(),
                    String::from_utf8_lossy(v).into_owned(),
                )
            })
            .collect();
        assert_eq!(got, want);
    }
}

#[test]
fn every_code_has_its_rfc_name() {
    assert_eq!(ErrorCode::NO_ERROR.name(), "NO_ERROR");
    assert_eq!(ErrorCode::HTTP_1_1_REQUIRED.name(), "HTTP_1_1_REQUIRED");
    assert_eq!(ErrorCode(0x99).name(), "unknown");
}

#[test]
fn blocks_cut_inside_a_field_are_a_compression_error_not_a_panic() {
    // An integer whose continuation bytes run off the block; a literal with a new name
    // and no value length byte. httlib-hpack indexes past the end of both unless the
    // block is checked whole first (hpack_walk.rs).
    for block in [&b"\x82\xff\xff\xff"[..], b"\x40\x01a"] {
        let mut d = HeaderDecoder::new(4096, 1 << 16);
        let e = d.decode(block, |_, _| {}).unwrap_err();
        assert_eq!(e.code, ErrorCode::COMPRESSION_ERROR, "{block:?}");
    }
}
