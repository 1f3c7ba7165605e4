//! The HTTP/2 server session on exact bytes: a conversation fed split at every
//! point, flow control both ways, and each limit ending the connection with its own
//! counted reason.

use super::super::server::{HttpHandlerFactory, Limits};
use super::session::{FREE_RESETS, MAX_CONTINUATIONS};
use super::H2Figures;
use crate::proto::h2::frame::{self, Frame, Parsed, PREFACE};
use crate::proto::h2::hpack::{self, HeaderDecoder};
use crate::proto::h2::{settings, write, ErrorCode};
use crate::server::session::{Reply, ServerFactory, ServerSession};

/// A client's request header block.
fn request(method: &str, path: &str, extra: &[(&str, &str)]) -> Vec<u8> {
    let mut fields: Vec<(&[u8], &[u8])> = vec![
        (b":method", method.as_bytes()),
        (b":scheme", b"http"),
        (b":path", path.as_bytes()),
        (b":authority", b"localhost"),
    ];
    for (n, v) in extra {
        fields.push((n.as_bytes(), v.as_bytes()));
    }
    let mut block = Vec::new();
    hpack::encode(&fields, &mut block);
    block
}

fn get(out: &mut Vec<u8>, stream: u32, path: &str) {
    write::headers(out, stream, true, &request("GET", path, &[]), 16_384);
}

/// The preface and an empty SETTINGS.
fn opening() -> Vec<u8> {
    let mut b = PREFACE.to_vec();
    write::settings(&mut b, &[]);
    b
}

/// What the server did with a connection's bytes.
#[derive(Default)]
struct Seen {
    /// Per stream: status, body, whether it ended.
    streams: std::collections::BTreeMap<u32, (String, Vec<u8>, bool)>,
    resets: Vec<(u32, u32)>,
    goaway: Option<(u32, String)>,
    window_updates: u64,
    settings: u32,
    end: Option<Reply>,
    requests: u64,
    figures: H2Figures,
}

/// Feeds `pieces` as the server runtime does (unconsumed bytes carried, `More`
/// called again), then reads every frame the server wrote.
fn serve<'a>(limits: Limits, pieces: impl IntoIterator<Item = &'a [u8]>) -> Seen {
    let mut s = HttpHandlerFactory::new(limits).session();
    let mut seen = Seen::default();
    let mut written = Vec::new();
    let mut carry = Vec::new();
    'feed: for piece in pieces {
        carry.extend_from_slice(piece);
        loop {
            let mut out = Vec::new();
            let r = s.on_bytes(&carry, &mut out, &mut seen.figures);
            written.extend_from_slice(&out);
            seen.requests += s.take_requests();
            match r {
                Reply::Consumed(n) => {
                    carry.drain(..n);
                    break;
                }
                Reply::More(n) => {
                    carry.drain(..n);
                }
                other => {
                    seen.end = Some(other);
                    break 'feed;
                }
            }
        }
    }
    read_frames(&written, &mut seen);
    seen
}

fn read_frames(mut b: &[u8], seen: &mut Seen) {
    let mut dec = HeaderDecoder::new(4096, 1 << 20);
    while !b.is_empty() {
        let Ok(Parsed::Frame(f, used)) = frame::parse(b, 1 << 24) else {
            panic!("the server wrote a partial or bad frame");
        };
        match f {
            Frame::Headers {
                stream,
                end_stream,
                block,
                ..
            } => {
                let mut status = String::new();
                dec.decode(block, |n, v| {
                    if n == b":status" {
                        status = String::from_utf8_lossy(v).into_owned();
                    }
                })
                .unwrap();
                let e = seen.streams.entry(stream).or_default();
                e.0 = status;
                e.2 = end_stream;
            }
            Frame::Data {
                stream,
                end_stream,
                data,
                ..
            } => {
                let e = seen.streams.entry(stream).or_default();
                assert!(!e.2, "DATA after END_STREAM on {stream}");
                e.1.extend_from_slice(data);
                e.2 = end_stream;
            }
            Frame::RstStream { stream, code } => seen.resets.push((stream, code)),
            Frame::GoAway { code, debug, .. } => {
                seen.goaway = Some((code, String::from_utf8_lossy(debug).into_owned()))
            }
            Frame::WindowUpdate { .. } => seen.window_updates += 1,
            Frame::Settings { ack: false, .. } => seen.settings += 1,
            _ => {}
        }
        b = &b[used..];
    }
}

fn pattern(n: usize) -> Vec<u8> {
    (0..n).map(|i| b'a' + (i % 26) as u8).collect()
}

/// Every route once, a 100,000-byte body past the default 65,535-byte windows, and
/// an echo in three DATA frames: fed whole and split at every byte.
#[test]
fn a_conversation_split_anywhere_gets_the_same_answers() {
    let mut c = opening();
    get(&mut c, 1, "/");
    get(&mut c, 3, "/bytes/1000");
    get(&mut c, 5, "/status/503");
    get(&mut c, 7, "/nope");
    write::headers(&mut c, 9, true, &request("DELETE", "/", &[]), 16_384);
    write::headers(&mut c, 11, true, &request("HEAD", "/", &[]), 16_384);
    write::headers(
        &mut c,
        13,
        false,
        &request("POST", "/echo", &[("content-length", "11")]),
        16_384,
    );
    write::data(&mut c, 13, false, b"hello");
    write::data(&mut c, 13, false, b" ");
    write::data(&mut c, 13, true, b"world");
    let want = |s: &Seen| {
        let st = |id: u32| s.streams.get(&id).cloned().unwrap_or_default();
        assert_eq!(st(1), ("200".into(), b"hello".to_vec(), true));
        assert_eq!(st(3), ("200".into(), pattern(1000), true));
        assert_eq!(st(5), ("503".into(), b"status 503\n".to_vec(), true));
        assert_eq!(st(7), ("404".into(), b"not found\n".to_vec(), true));
        assert_eq!(
            st(9),
            ("405".into(), b"method not allowed\n".to_vec(), true)
        );
        assert_eq!(st(11), ("200".into(), Vec::new(), true));
        assert_eq!(st(13), ("200".into(), b"hello world".to_vec(), true));
        assert_eq!((s.requests, s.settings, s.end.is_none()), (7, 1, true));
        assert_eq!(s.figures.connections, 1);
    };
    want(&serve(Limits::default(), [&c[..]]));
    for cut in 1..c.len() {
        let s = serve(Limits::default(), [&c[..cut], &c[cut..]]);
        want(&s);
    }
}

/// A body past the initial windows waits for WINDOW_UPDATE, and flows once given
/// room; a body past one output batch comes out over several calls (`More`).
#[test]
fn bodies_follow_the_windows_both_ways() {
    let mut c = opening();
    get(&mut c, 1, "/bytes/100000");
    let s = serve(Limits::default(), [&c[..]]);
    assert_eq!(s.streams[&1].1.len(), 65_535, "the default window");
    assert!(!s.streams[&1].2);
    write::window_update(&mut c, 0, 1 << 20);
    write::window_update(&mut c, 1, 1 << 20);
    let s = serve(Limits::default(), [&c[..]]);
    assert_eq!(s.streams[&1], ("200".into(), pattern(100_000), true));
    assert_eq!(s.requests, 1);

    // 3 MiB with large windows: past one batch, all of it, in order.
    let mut c = PREFACE.to_vec();
    write::settings(&mut c, &[(settings::INITIAL_WINDOW_SIZE, 1 << 30)]);
    write::window_update(&mut c, 0, 1 << 30);
    get(&mut c, 1, "/bytes/3145728");
    let s = serve(Limits::default(), [&c[..]]);
    assert_eq!(s.streams[&1], ("200".into(), pattern(3 << 20), true));

    // An echo of 300,000 bytes: its window is given back as the bytes go out again.
    let body: Vec<u8> = (0..300_000u32).map(|i| (i * 7 % 251) as u8).collect();
    let mut c = PREFACE.to_vec();
    write::settings(&mut c, &[(settings::INITIAL_WINDOW_SIZE, 1 << 30)]);
    write::window_update(&mut c, 0, 1 << 30);
    write::headers(&mut c, 1, false, &request("POST", "/", &[]), 16_384);
    let mut pieces = vec![c];
    for chunk in body.chunks(16_384) {
        let mut d = Vec::new();
        write::data(&mut d, 1, false, chunk);
        pieces.push(d);
    }
    let mut end = Vec::new();
    write::data(&mut end, 1, true, b"");
    pieces.push(end);
    let s = serve(Limits::default(), pieces.iter().map(|p| &p[..]));
    assert_eq!(s.streams[&1], ("200".into(), body, true));
    assert!(s.window_updates >= 4, "{} window updates", s.window_updates);
}

fn goaway(s: &Seen) -> (u32, &str) {
    let (code, text) = s.goaway.as_ref().expect("a GOAWAY");
    (*code, text.as_str())
}

/// Each hostile input ends its connection with a GOAWAY and its own counted reason.
#[test]
fn each_abuse_ends_the_connection_with_its_reason() {
    let limits = Limits::default();
    // A frame header announcing 2^24 - 1 bytes: refused from the header alone.
    let mut c = opening();
    c.extend_from_slice(&[0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 1]);
    let s = serve(limits, [&c[..]]);
    assert_eq!(goaway(&s).0, ErrorCode::FRAME_SIZE_ERROR.0);
    assert_eq!((s.figures.frame_size, s.end), (1, Some(Reply::TooLarge)));

    // CONTINUATION frames without end, empty ones: capped by their number.
    let mut c = opening();
    frame_header(&mut c, 0, frame::HEADERS, frame::END_STREAM, 1);
    for _ in 0..=MAX_CONTINUATIONS {
        write::continuation(&mut c, 1, false, &[]);
    }
    let s = serve(limits, [&c[..]]);
    assert_eq!(goaway(&s).0, ErrorCode::ENHANCE_YOUR_CALM.0);
    assert_eq!(s.figures.continuation_flood, 1);
    // ... and by their bytes.
    let mut c = opening();
    frame_header(&mut c, 16_000, frame::HEADERS, frame::END_STREAM, 1);
    c.extend(std::iter::repeat_n(0x40u8, 16_000));
    write::continuation(&mut c, 1, false, &[0x40; 1000]);
    let s = serve(limits, [&c[..]]);
    assert_eq!(s.figures.continuation_flood, 1, "{:?}", s.goaway);

    // An HPACK index out of range (indexed field 70, the dynamic table empty).
    let mut c = opening();
    write::headers(&mut c, 1, true, &[0x80 | 70], 16_384);
    let s = serve(limits, [&c[..]]);
    assert_eq!(goaway(&s).0, ErrorCode::COMPRESSION_ERROR.0);
    assert_eq!(s.figures.hpack, 1);

    // A stream id going backwards.
    let mut c = opening();
    get(&mut c, 5, "/");
    get(&mut c, 3, "/");
    let s = serve(limits, [&c[..]]);
    assert_eq!(goaway(&s).0, ErrorCode::PROTOCOL_ERROR.0);
    assert_eq!((s.figures.stream_id, s.requests), (1, 1));

    // A header list past --max-header.
    let long = "x".repeat(20_000);
    let mut c = opening();
    write::headers(
        &mut c,
        1,
        true,
        &request("GET", "/", &[("x-long", &long)]),
        16_384,
    );
    let s = serve(limits, [&c[..]]);
    assert_eq!(
        s.figures.header_list + s.figures.continuation_flood,
        1,
        "{:?}",
        s.goaway
    );
}

/// The frame header of a frame whose payload the caller writes (or never does).
fn frame_header(out: &mut Vec<u8>, len: u32, kind: u8, flags: u8, stream: u32) {
    write::header(
        out,
        frame::FrameHeader {
            len,
            kind,
            flags,
            stream,
        },
    );
}

/// HEADERS and RST_STREAM pairs: the budget ends the connection after about
/// `FREE_RESETS`, whatever the burst's length; streams past `--max-streams` are refused.
#[test]
fn rapid_resets_and_refused_streams_are_bounded() {
    let mut c = opening();
    for i in 0..100_000u32 {
        let id = 2 * i + 1;
        get(&mut c, id, "/");
        write::rst_stream(&mut c, id, ErrorCode::CANCEL.0);
    }
    let s = serve(Limits::default(), [&c[..]]);
    assert_eq!(goaway(&s).0, ErrorCode::ENHANCE_YOUR_CALM.0);
    assert_eq!(s.figures.rapid_reset, 1);
    assert_eq!(s.figures.client_resets, FREE_RESETS + 1);

    // Two streams allowed: echo streams that stay open fill them, the third is refused.
    let limits = Limits {
        max_streams: 2,
        ..Limits::default()
    };
    let mut c = opening();
    for id in [1, 3, 5] {
        write::headers(&mut c, id, false, &request("POST", "/", &[]), 16_384);
    }
    let s = serve(limits, [&c[..]]);
    assert_eq!(s.resets, vec![(5, ErrorCode::REFUSED_STREAM.0)]);
    assert_eq!((s.figures.refused, s.end), (1, None));
}

/// A client that gives a window of 0 and never more: the session asks to be woken,
/// and past `--h2-window-timeout` it sends GOAWAY and ends.
#[test]
fn a_window_of_zero_forever_ends_at_the_timeout() {
    let limits = Limits {
        window_timeout_ms: 1000,
        ..Limits::default()
    };
    let mut s = HttpHandlerFactory::new(limits).session();
    let mut c = PREFACE.to_vec();
    write::settings(&mut c, &[(settings::INITIAL_WINDOW_SIZE, 0)]);
    get(&mut c, 1, "/bytes/10");
    let mut fig = H2Figures::default();
    let mut out = Vec::new();
    assert_eq!(s.on_bytes(&c, &mut out, &mut fig), Reply::Consumed(c.len()));
    assert_eq!(
        s.next_wake(),
        Some(0),
        "starved: a wake-up to stamp the time"
    );
    s.on_wake(5_000, &mut out, &mut fig);
    assert_eq!(s.next_wake(), Some(5_000 + 1_000_000_000));
    s.on_wake(900_000_000, &mut out, &mut fig);
    assert!(!s.ends());
    out.clear();
    s.on_wake(1_000_005_000, &mut out, &mut fig);
    assert!(s.ends());
    assert_eq!(fig.window_stall, 1);
    let mut seen = Seen::default();
    read_frames(&out, &mut seen);
    assert_eq!(goaway(&seen).0, ErrorCode::ENHANCE_YOUR_CALM.0);

    // Room given in time: no stall.
    let mut s = HttpHandlerFactory::new(limits).session();
    let mut out = Vec::new();
    s.on_bytes(&c, &mut out, &mut fig);
    let mut more = Vec::new();
    write::window_update(&mut more, 1, 100);
    s.on_bytes(&more, &mut out, &mut fig);
    assert_eq!(s.next_wake(), None);
    assert_eq!(s.take_requests(), 1);
}

/// HTTP/1.1 is untouched: a request starting like the preface but not it, and a
/// preface cut short waiting for its rest.
#[test]
fn the_preface_decides_and_only_it() {
    let mut s = HttpHandlerFactory::new(Limits::default()).session();
    let mut out = Vec::new();
    let mut fig = H2Figures::default();
    assert_eq!(
        s.on_bytes(b"PRI * HT", &mut out, &mut fig),
        Reply::Consumed(0)
    );
    assert!(s.in_head(8));
    let r = s.on_bytes(b"PRI * HTTP/1.1\r\n\r\n", &mut out, &mut fig);
    assert_eq!(
        r,
        Reply::Consumed(18),
        "not the preface: an HTTP/1.1 request"
    );
    assert!(String::from_utf8_lossy(&out).starts_with("HTTP/1.1 405"));
    assert_eq!(fig.connections, 0);
}

/// An idle HTTP/2 session holds little: the session's own size and its boxes.
#[test]
fn sessions_are_small() {
    let http1 = std::mem::size_of::<super::super::serve_session::HttpSession>();
    let handler = std::mem::size_of::<super::super::server::HttpHandler>();
    assert!(http1 <= handler + 8, "{http1} vs {handler}");
    let two = std::mem::size_of::<super::H2Session>();
    assert!(two <= 512, "{two}");
}
