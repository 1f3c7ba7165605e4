//! The HTTP/2 client session on bytes alone: the opening, streams answered out of
//! order settling their own requests, every split point, flow control both ways, the
//! server's stream limit, and each way a server ends a stream or the connection.

use super::*;
use crate::proto::h2::frame::HEADER_LEN;
use crate::proto::h2::hpack;
use crate::proto::http::figures::StatusCounts;
use crate::proto::http::status::StatusSet;

fn shared(body: &[u8], echo: bool, windows: u32) -> Arc<H2Shared> {
    let mut block = Vec::new();
    hpack::encode(&[(b":method", b"POST"), (b":path", b"/")], &mut block);
    Arc::new(H2Shared {
        block,
        body: body.to_vec(),
        head: false,
        accept: StatusSet::default(),
        echo,
        stream_window: windows,
        conn_window: windows,
    })
}

fn req() -> InFlight {
    InFlight {
        seq: 0,
        intended_ns: 0,
        sent_ns: 0,
        tag: 0,
        lane: Lane::ANY,
        measured: true,
        on_write: false,
    }
}

/// A session past its opening, given the server's SETTINGS `params`.
fn opened(s: Arc<H2Shared>, params: &[(u16, u32)]) -> H2Client {
    let mut c = H2Factory(s).session(1);
    let (mut out, mut count) = (Vec::new(), Exchanges::default());
    let mut codes = StatusCounts::default();
    assert_eq!(
        c.open(&[], &mut out, &mut codes, &mut count),
        Setup::Continue { used: 0 }
    );
    assert!(out.starts_with(PREFACE));
    assert_eq!(out[PREFACE.len() + 3], frame::SETTINGS);
    let mut server = Vec::new();
    write::settings(&mut server, params);
    out.clear();
    // Incomplete at every cut, then done with the whole frame, acknowledged.
    for cut in 0..server.len() {
        assert_eq!(
            c.open(&server[..cut], &mut out, &mut codes, &mut count),
            Setup::Continue { used: 0 }
        );
    }
    assert_eq!(
        c.open(&server, &mut out, &mut codes, &mut count),
        Setup::Done { used: server.len() }
    );
    assert_eq!(out, b"\x00\x00\x00\x04\x01\x00\x00\x00\x00");
    assert_eq!((count.sent, count.answered), (1, 1));
    c
}

fn head(status: &[u8]) -> Vec<u8> {
    let mut b = Vec::new();
    hpack::encode(&[(b":status", status)], &mut b);
    b
}

/// A whole response on `id`: HEADERS, then DATA with END_STREAM.
fn response(id: u32, status: &[u8], body: &[u8]) -> Vec<u8> {
    let mut r = Vec::new();
    write::headers(&mut r, id, false, &head(status), 16_384);
    write::data(&mut r, id, true, body);
    r
}

/// Decodes `input` whole: every step until its bytes are used.
fn steps(c: &mut H2Client, input: &[u8], out: &mut Vec<u8>) -> Vec<Decode> {
    let mut codes = StatusCounts::default();
    let (mut at, mut got) = (0, Vec::new());
    while at < input.len() {
        let d = c.decode(&input[at..], Some(&req()), out, &mut codes);
        match d {
            Decode::Consumed { used } | Decode::Event { used } | Decode::Reply { used, .. } => {
                at += used
            }
            Decode::Incomplete | Decode::Fail { .. } => {
                got.push(d);
                return got;
            }
        }
        got.push(d);
    }
    got
}

fn done(used: usize, id: u32, verdict: Verdict) -> Decode {
    Decode::Reply {
        used,
        settles: 1,
        lane: lane(id),
        verdict,
        close: false,
    }
}

#[test]
fn streams_answered_out_of_order_settle_their_own_requests() {
    let mut c = opened(shared(b"", false, RECV_WINDOW), &[]);
    let mut out = Vec::new();
    c.encode(0, 0, &mut out);
    let first = c.lane_of(0);
    c.encode(1, 0, &mut out);
    assert_ne!(first, c.lane_of(1));
    // Two HEADERS frames with END_STREAM | END_HEADERS on streams 1 and 3.
    let block_len = c.0.shared.block.len();
    assert_eq!(out.len(), 2 * (HEADER_LEN + block_len));
    assert_eq!(&out[3..9], b"\x01\x05\x00\x00\x00\x01");
    assert_eq!(
        &out[HEADER_LEN + block_len + 3..][..6],
        b"\x01\x05\x00\x00\x00\x03"
    );
    let r3 = response(3, b"200", b"three");
    let r1 = response(1, b"200", b"one");
    let mut both = r3.clone();
    both.extend_from_slice(&r1);
    let got = steps(&mut c, &both, &mut Vec::new());
    let h3 = HEADER_LEN + head(b"200").len();
    assert_eq!(
        got,
        [
            Decode::Consumed { used: h3 },
            done(HEADER_LEN + 5, 3, Verdict::Ok),
            Decode::Consumed { used: h3 },
            done(HEADER_LEN + 3, 1, Verdict::Ok),
        ]
    );
    assert_eq!((lane(3), lane(1)), (c.lane_of(1), first));
    // At every split point the session asks for more, never claims what is not there.
    let mut c = opened(shared(b"", false, RECV_WINDOW), &[]);
    c.encode(0, 0, &mut Vec::new());
    let r = response(1, b"200", b"one");
    let mut codes = StatusCounts::default();
    for cut in [1, 5, 8, h3 - 1] {
        assert_eq!(
            c.decode(&r[..cut], Some(&req()), &mut out, &mut codes),
            Decode::Incomplete
        );
    }
    assert_eq!(steps(&mut c, &r, &mut out).len(), 2);
}

#[test]
fn request_bodies_wait_for_window_updates_and_responses_give_room_back() {
    // The server's stream window is 10 bytes; the body is 25.
    let body = b"abcdefghijklmnopqrstuvwxy";
    let mut c = opened(
        shared(body, true, 100),
        &[(settings::INITIAL_WINDOW_SIZE, 10)],
    );
    let mut out = Vec::new();
    c.encode(0, 0, &mut out);
    let hb = c.0.shared.block.len();
    // HEADERS without END_STREAM, then 10 bytes of DATA.
    assert_eq!(out[4], frame::END_HEADERS);
    assert_eq!(
        &out[HEADER_LEN + hb..],
        b"\x00\x00\x0a\x00\x00\x00\x00\x00\x01abcdefghij"
    );
    let mut upd = Vec::new();
    write::window_update(&mut upd, 1, 15);
    out.clear();
    assert_eq!(steps(&mut c, &upd, &mut out), [Decode::Event { used: 13 }]);
    // The rest, with END_STREAM.
    assert_eq!(out, b"\x00\x00\x0f\x00\x01\x00\x00\x00\x01klmnopqrstuvwxy");
    // The echo comes back in two frames, checked; 25 of the 100-byte receive window
    // used gives no room back yet.
    let mut r = Vec::new();
    write::headers(&mut r, 1, false, &head(b"200"), 16_384);
    write::data(&mut r, 1, false, &body[..20]);
    write::data(&mut r, 1, true, &body[20..]);
    out.clear();
    let got = steps(&mut c, &r, &mut out);
    assert_eq!(got.last(), Some(&done(HEADER_LEN + 5, 1, Verdict::Ok)));
    assert!(out.is_empty(), "25 of 100 bytes: no room to give back yet");
    // A wrong echo is a mismatch.
    c.encode(1, 0, &mut out);
    write::window_update(&mut upd, 3, 15);
    steps(&mut c, &upd[13..], &mut Vec::new());
    let got = steps(
        &mut c,
        &response(3, b"200", b"abcdefghijklmnopqrstuvwxZ"),
        &mut out,
    );
    assert_eq!(
        got.last(),
        Some(&done(
            HEADER_LEN + 25,
            3,
            Verdict::Error(ErrorKind::Mismatch)
        ))
    );
    // A stream that read 60 of its 100-byte window gets the room back at once (the
    // connection's window is the RFC's 65,535 bytes: the test's 100 is smaller).
    c.encode(2, 0, &mut Vec::new());
    let mut r = Vec::new();
    write::headers(&mut r, 5, false, &head(b"200"), 16_384);
    write::data(&mut r, 5, false, &[b'x'; 60]);
    out.clear();
    steps(&mut c, &r, &mut out);
    let mut want = Vec::new();
    write::window_update(&mut want, 5, 60);
    assert_eq!(out, want);
}

#[test]
fn streams_past_the_servers_limit_start_as_others_end() {
    let mut c = opened(
        shared(b"", false, RECV_WINDOW),
        &[(settings::MAX_CONCURRENT_STREAMS, 1)],
    );
    let mut out = Vec::new();
    c.encode(0, 0, &mut out);
    let one = out.len();
    c.encode(1, 0, &mut out);
    assert_eq!(out.len(), one, "stream 3 waits for stream 1");
    out.clear();
    let got = steps(&mut c, &response(1, b"200", b""), &mut out);
    assert_eq!(got.last(), Some(&done(HEADER_LEN, 1, Verdict::Ok)));
    // Its place is stream 3's: its HEADERS go with stream 1's end.
    assert_eq!(out.len(), one);
    assert_eq!(&out[3..9], b"\x01\x05\x00\x00\x00\x03");
}

#[test]
fn resets_goaway_pings_and_refused_frames_each_say_what_they_are() {
    let mut c = opened(shared(b"", false, RECV_WINDOW), &[]);
    let mut out = Vec::new();
    c.encode(0, 0, &mut out);
    c.encode(1, 0, &mut out);
    let mut f = Vec::new();
    write::rst_stream(&mut f, 3, ErrorCode::REFUSED_STREAM.0);
    assert_eq!(
        steps(&mut c, &f, &mut out),
        [done(13, 3, Verdict::Error(ErrorKind::RstStream))]
    );
    let mut w = Words::new();
    c.error_words(ErrorKind::RstStream, &[], &mut w);
    assert_eq!(w.as_str(), "RST_STREAM REFUSED_STREAM (0x7)");
    // A PING is answered with the same bytes.
    f.clear();
    write::ping(&mut f, false, *b"pingpong");
    out.clear();
    assert_eq!(steps(&mut c, &f, &mut out), [Decode::Event { used: 17 }]);
    assert_eq!(out, b"\x00\x00\x08\x06\x01\x00\x00\x00\x00pingpong");
    // A 503 says its status and body.
    let got = steps(&mut c, &response(1, b"503", b"busy"), &mut out);
    assert_eq!(
        got.last(),
        Some(&done(HEADER_LEN + 4, 1, Verdict::Error(ErrorKind::Status)))
    );
    let mut w = Words::new();
    c.error_words(ErrorKind::Status, &[], &mut w);
    assert_eq!(w.as_str(), ":status 503: busy");
    // GOAWAY ends the connection.
    f.clear();
    write::goaway(&mut f, 1, ErrorCode::ENHANCE_YOUR_CALM.0, b"too many");
    assert_eq!(
        steps(&mut c, &f, &mut out),
        [Decode::Fail {
            kind: ErrorKind::Goaway
        }]
    );
    let mut w = Words::new();
    c.error_words(ErrorKind::Goaway, &[], &mut w);
    assert_eq!(w.as_str(), "GOAWAY ENHANCE_YOUR_CALM (0xb): too many");
}

#[test]
fn hostile_frames_end_the_connection_with_their_kind() {
    let fail = |input: &[u8]| {
        let mut c = opened(shared(b"", false, RECV_WINDOW), &[]);
        c.encode(0, 0, &mut Vec::new());
        let got = steps(&mut c, input, &mut Vec::new());
        let mut w = Words::new();
        let Some(Decode::Fail { kind }) = got.last() else {
            panic!("not refused: {got:?}")
        };
        c.error_words(*kind, &[], &mut w);
        (*kind, w.as_str().to_string())
    };
    // A 2^24 - 1 byte frame, refused from its header.
    assert_eq!(
        fail(b"\xff\xff\xff\x00\x00\x00\x00\x00\x01"),
        (
            ErrorKind::TooLarge,
            "a frame longer than the max frame size (FRAME_SIZE_ERROR)".into()
        )
    );
    // An HPACK index out of range.
    let mut f = Vec::new();
    write::headers(&mut f, 1, true, b"\xc6", 16_384);
    assert_eq!(
        fail(&f),
        (
            ErrorKind::Protocol,
            "an HPACK index out of range (COMPRESSION_ERROR)".into()
        )
    );
    // A header block that never ends: CONTINUATION after CONTINUATION past the cap.
    let mut f = Vec::new();
    write::headers(&mut f, 1, false, &[0x82; 100], 100);
    f.truncate(HEADER_LEN + 100);
    f[4] = 0; // no END_HEADERS
    for _ in 0..(MAX_HEADER_BLOCK / 16_000 + 1) {
        write::continuation(&mut f, 1, false, &[0x82; 16_000]);
    }
    assert_eq!(
        fail(&f),
        (
            ErrorKind::TooLarge,
            "a header block longer than its cap (ENHANCE_YOUR_CALM)".into()
        )
    );
    // DATA on a stream never opened.
    let mut f = Vec::new();
    write::data(&mut f, 5, true, b"x");
    assert_eq!(fail(&f).0, ErrorKind::Protocol);
    // A PUSH_PROMISE, disabled in SETTINGS.
    let mut f = Vec::new();
    write::push_promise(&mut f, 1, 2, &head(b"200"), 16_384);
    assert_eq!(fail(&f).0, ErrorKind::Protocol);
}

#[test]
fn a_server_that_does_not_open_with_settings_is_refused() {
    let mut c = H2Factory(shared(b"", false, RECV_WINDOW)).session(1);
    let (mut out, mut count) = (Vec::new(), Exchanges::default());
    let mut codes = StatusCounts::default();
    c.open(&[], &mut out, &mut codes, &mut count);
    let Setup::Failed { kind, detail } = c.open(
        b"HTTP/1.1 400 Bad Request\r\n\r\n",
        &mut out,
        &mut codes,
        &mut count,
    ) else {
        panic!("accepted")
    };
    assert_eq!(kind, ErrorKind::Protocol);
    assert!(
        detail.starts_with("the server answered in HTTP/1"),
        "{detail}"
    );
}
