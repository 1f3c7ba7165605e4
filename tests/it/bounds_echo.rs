//! Bounded memory against hostile echo peers: a server whose reply announces a frame
//! no client sent (a huge length) and then floods, a byte-echo peer that floods after
//! echoing, and a client that floods `wirebench serve echo` without reading. Each run
//! ends in the right error kinds with every process's peak RSS far below what
//! buffering would take, and the server goes on serving others.

use crate::common::*;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// Peak RSS allowed to any process here (buffering the floods would take gigabytes).
const RSS_BOUND: u64 = 200 << 20;
/// How long a hostile peer goes on at most (the runs end well before).
const PEER_LIMIT: Duration = Duration::from_secs(20);

/// Writes `block` again and again until the peer goes away or `PEER_LIMIT` passes.
fn flood(s: &mut TcpStream, block: &[u8]) {
    let end = Instant::now() + PEER_LIMIT;
    while Instant::now() < end && s.write_all(block).is_ok() {}
}

/// Waits for a request frame's first bytes, then announces a 4 GiB reply and floods.
fn huge_length(mut s: TcpStream) {
    let mut buf = [0u8; 4096];
    if matches!(s.read(&mut buf), Ok(n) if n > 0) && s.write_all(&u32::MAX.to_be_bytes()).is_ok() {
        flood(&mut s, &[b'z'; 65536]);
    }
}

/// Echoes the first read back, then sends bytes nobody asked for, without end.
fn echo_then_flood(mut s: TcpStream) {
    let mut buf = [0u8; 4096];
    if let Ok(n) = s.read(&mut buf) {
        if n > 0 && s.write_all(&buf[..n]).is_ok() {
            flood(&mut s, &[b'z'; 65536]);
        }
    }
}

#[test]
fn reply_announcing_a_huge_frame_is_too_large() {
    let peer = Foreign::start(huge_length);
    let (r, peak) = run_json_watching_memory(&[
        "echo",
        &peer.addr_string(),
        "-t",
        "1",
        "-c",
        "2",
        "-n",
        "4",
        "--timeout",
        "3s",
    ]);
    assert_eq!(r.code, 1, "{}", r.explain());
    assert_eq!(r.u("/totals/ok"), 0, "{}", r.explain());
    assert_eq!(r.u("/errors/too_large"), 4, "{}", r.explain());
    assert_eq!(r.u("/totals/errors"), 4, "{}", r.explain());
    assert!(peak < RSS_BOUND, "client peak RSS {} MiB", peak >> 20);
}

#[test]
fn flooding_byte_echo_peer_is_cut_off() {
    let peer = Foreign::start(echo_then_flood);
    let (r, peak) = run_json_watching_memory(&[
        "echo",
        &peer.addr_string(),
        "-t",
        "1",
        "-c",
        "2",
        "-d",
        "2s",
        "--timeout",
        "2s",
    ]);
    let j = r.json();
    assert_eq!(j["totals"]["invariant_holds"], true, "{}", r.explain());
    // Whatever follows an echoed frame is refused at once: as bytes nobody asked for
    // (no request in flight) or as a frame announcing 2 GB ('zzzz'); never kept.
    let errors = j["errors"].as_object().expect("errors object");
    assert!(!errors.is_empty(), "{}", r.explain());
    for kind in errors.keys() {
        assert!(
            ["unsolicited", "too_large", "dropped"].contains(&kind.as_str()),
            "unexpected {kind}: {}",
            r.explain()
        );
    }
    assert!(peak < RSS_BOUND, "client peak RSS {} MiB", peak >> 20);
}

#[test]
fn server_flooded_by_a_client_that_never_reads_stays_small() {
    let mut server = Served::start(&["--threads", "1"]);
    let mut flooder = TcpStream::connect(server.addr()).expect("connect");
    flooder
        .set_write_timeout(Some(Duration::from_secs(2)))
        .unwrap();
    // Writes until the server stops reading (its replies are never read): then the
    // kernel buffers are full and the write times out. Bounded at 4 GiB regardless.
    let block = [b'q'; 65536];
    let mut sent = 0u64;
    while sent < 4 << 30 && flooder.write_all(&block).is_ok() {
        sent += block.len() as u64;
    }
    let peak = server.proc.peak_rss();
    assert!(
        peak > 0 && peak < RSS_BOUND,
        "server peak RSS {} MiB",
        peak >> 20
    );
    assert!(sent < 1 << 30, "the server kept reading: {sent} bytes");

    // With the flooder still connected, another client is served in full.
    let r = run_json(&["echo", &server.addr(), "-t", "1", "-c", "2", "-n", "500"]);
    r.assert_clean(500);
    drop(flooder);
    server.proc.terminate();
    assert_eq!(server.proc.finish(RUN_LIMIT), 0);
}
