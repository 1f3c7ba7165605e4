//! Bounded memory against hostile HTTP peers. Client side: servers (std::net threads)
//! that send endless interim responses, huge or endless bodies; `wirebench http` must
//! end each request in the right error kind (or count the body and succeed) with its
//! peak RSS far below what buffering would take. Server side: `wirebench serve http` as
//! a child, fed endless heads, chunked framing floods, oversized bodies and pipelined
//! large replies it is never allowed to send; it must stay small, count each cap it
//! enforces in `too_large`, and keep serving everyone else.

use crate::common::*;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// Peak RSS allowed to any process in these tests. Buffering what the peers send
/// would take gigabytes within seconds (the bugs these tests guard against).
const RSS_BOUND: u64 = 200 << 20;
/// How long a hostile peer goes on at most (the runs end well before).
const PEER_LIMIT: Duration = Duration::from_secs(20);

fn mb(bytes: u64) -> u64 {
    bytes >> 20
}

/// Reads up to the end of a request head (or gives up after 64 KiB or an error).
fn read_head(s: &mut TcpStream) -> bool {
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    while !seen.windows(4).any(|w| w == b"\r\n\r\n") {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => return false,
            Ok(n) => seen.extend_from_slice(&buf[..n]),
        }
        if seen.len() > 65536 {
            return false;
        }
    }
    true
}

/// Writes `block` again and again until the peer goes away or `PEER_LIMIT` passes.
fn flood(s: &mut TcpStream, block: &[u8]) {
    let end = Instant::now() + PEER_LIMIT;
    while Instant::now() < end && s.write_all(block).is_ok() {}
}

/// Answers every request with `100 Continue` without end.
fn endless_continue(mut s: TcpStream) {
    if read_head(&mut s) {
        flood(&mut s, &b"HTTP/1.1 100 Continue\r\n\r\n".repeat(2048));
    }
}

/// A close-delimited HTTP/1.0 body that never ends.
fn endless_close_delimited(mut s: TcpStream) {
    if read_head(&mut s) && s.write_all(b"HTTP/1.0 200 OK\r\n\r\n").is_ok() {
        flood(&mut s, &[b'x'; 65536]);
    }
}

/// Size of the large bodies below: more than the old 256 MiB response cap.
const BIG: usize = 300 << 20;

/// Writes `BIG` body bytes after `head`, as chunks of 64 KiB when `chunked`, then closes.
fn big_body(mut s: TcpStream, head: &[u8], chunked: bool) {
    if !read_head(&mut s) || s.write_all(head).is_err() {
        return;
    }
    let mut block = Vec::new();
    if chunked {
        block.extend_from_slice(b"10000\r\n");
    }
    block.extend_from_slice(&[b'x'; 65536]);
    if chunked {
        block.extend_from_slice(b"\r\n");
    }
    for _ in 0..BIG / 65536 {
        if s.write_all(&block).is_err() {
            return;
        }
    }
    if chunked {
        let _ = s.write_all(b"0\r\n\r\n");
    }
}

fn big_close_delimited(s: TcpStream) {
    big_body(s, b"HTTP/1.0 200 OK\r\n\r\n", false);
}

fn big_content_length(s: TcpStream) {
    let head = format!("HTTP/1.1 200 OK\r\nContent-Length: {BIG}\r\nConnection: close\r\n\r\n");
    big_body(s, head.as_bytes(), false);
}

fn big_chunked(s: TcpStream) {
    big_body(
        s,
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n",
        true,
    );
}

fn http_to(peer: &Foreign, extra: &[&str]) -> (RunOut, u64) {
    let url = format!("http://{}/", peer.addr_string());
    let mut args = vec!["http", url.as_str(), "-t", "1"];
    args.extend_from_slice(extra);
    run_json_watching_memory(&args)
}

#[test]
fn endless_interim_responses_end_as_too_large() {
    let peer = Foreign::start(endless_continue);
    // Each of the 4 requests gets 16 interim responses, then its connection is dropped.
    let (r, peak) = http_to(&peer, &["-c", "2", "-n", "4", "--timeout", "3s"]);
    assert_eq!(r.code, 1, "{}", r.explain());
    assert_eq!(r.u("/totals/ok"), 0, "{}", r.explain());
    assert_eq!(r.u("/errors/too_large"), 4, "{}", r.explain());
    assert_eq!(r.u("/totals/errors"), 4, "{}", r.explain());
    assert!(peak < RSS_BOUND, "client peak RSS {} MiB", mb(peak));
}

#[test]
fn large_bodies_are_counted_not_buffered() {
    // 300 MiB in each framing, to 2 connections at once: each body is checked and
    // counted as it arrives, so the client stays small and every request is ok.
    for serve in [big_close_delimited, big_content_length, big_chunked] {
        let peer = Foreign::start(serve);
        let (r, peak) = http_to(&peer, &["-c", "2", "-n", "2", "--timeout", "30s"]);
        r.assert_clean(2);
        assert!(
            r.u("/totals/bytes_received") >= 2 * BIG as u64,
            "{}",
            r.explain()
        );
        assert!(peak < RSS_BOUND, "client peak RSS {} MiB", mb(peak));
    }
}

#[test]
fn endless_close_delimited_body_times_out_in_bounded_memory() {
    let peer = Foreign::start(endless_close_delimited);
    let (r, peak) = http_to(&peer, &["-c", "3", "-n", "3", "--timeout", "8s"]);
    assert_eq!(r.code, 1, "{}", r.explain());
    assert_eq!(r.u("/errors/timeout"), 3, "{}", r.explain());
    assert_eq!(r.u("/totals/errors"), 3, "{}", r.explain());
    // Hundreds of megabytes arrive in those 8 s and none is kept (the old client kept
    // up to 256 MiB per connection and then failed them as `protocol`).
    assert!(peak < RSS_BOUND, "client peak RSS {} MiB", mb(peak));
}

#[test]
fn body_file_without_end_is_refused_unread() {
    let mut p = Proc::wirebench(&["http", "http://127.0.0.1:9/", "--body", "/dev/zero"]);
    let (code, peak) = p.finish_watching_memory(RUN_LIMIT);
    assert_eq!(code, 2, "{}", p.stderr());
    let line = assert_one_line_error(&p.stderr(), "--body");
    assert!(
        line.contains("/dev/zero is larger than 67108864 bytes"),
        "{line}"
    );
    assert!(peak < RSS_BOUND, "peak RSS {} MiB", mb(peak));
}

// ---------------------------------------------------------------- server side

/// Connects to the server and sends `first`, then `block` until the server closes or
/// stops reading for 2 s or `limit` bytes went; returns whether the server closed.
fn attack(addr: &str, first: &[u8], block: &[u8], limit: u64) -> bool {
    let mut s = TcpStream::connect(addr).expect("connect to serve http");
    s.set_write_timeout(Some(Duration::from_secs(2))).unwrap();
    if s.write_all(first).is_err() {
        return true;
    }
    let mut sent = 0u64;
    let end = Instant::now() + PEER_LIMIT;
    while sent < limit && Instant::now() < end {
        match s.write_all(block) {
            Ok(()) => sent += block.len() as u64,
            Err(e) => {
                return e.kind() != std::io::ErrorKind::WouldBlock
                    && e.kind() != std::io::ErrorKind::TimedOut
            }
        }
    }
    false
}

/// The status line the server answered on a connection it refused.
fn refused_with(addr: &str, request: &[u8]) -> String {
    let mut s = TcpStream::connect(addr).expect("connect to serve http");
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(request).unwrap();
    let mut reply = Vec::new();
    let _ = s.read_to_end(&mut reply);
    String::from_utf8_lossy(&reply)
        .lines()
        .next()
        .unwrap_or("")
        .to_string()
}

#[test]
fn server_caps_are_counted_and_others_still_served() {
    let mut server = Served::start_as("http", &["--threads", "1", "--max-body", "64k"]);
    let addr = server.addr();

    // An endless head: refused at --max-header (16 KiB), not buffered.
    assert!(attack(
        &addr,
        b"GET / HTTP/1.1\r\nX: ",
        &[b'a'; 65536],
        4 << 30
    ));
    // Chunked framing with 1 data byte per 4 KiB line: the framing is dropped as it is
    // decoded; the 64 KiB of data reach --max-body after 256 MiB on the wire.
    let line = format!("1;{}\r\nx\r\n", "e".repeat(4000));
    assert!(attack(
        &addr,
        b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
        line.repeat(16).as_bytes(),
        4 << 30,
    ));
    // A Content-Length past --max-body: refused before a byte of it is read.
    let status = refused_with(&addr, b"POST / HTTP/1.1\r\nContent-Length: 1000000\r\n\r\n");
    assert!(status.starts_with("HTTP/1.1 413 "), "{status}");
    // 400 pipelined requests for 1 MiB each, replies never read: the server writes a
    // batch, then waits, instead of making 400 MiB of replies at once.
    let pipelined = b"GET /bytes/1048576 HTTP/1.1\r\n\r\n".repeat(400);
    let mut idle = TcpStream::connect(&addr).expect("connect to serve http");
    idle.write_all(&pipelined).unwrap();
    std::thread::sleep(Duration::from_secs(1));

    let peak = server.proc.peak_rss();
    assert!(
        peak > 0 && peak < RSS_BOUND,
        "server peak RSS {} MiB",
        mb(peak)
    );

    // Everyone else is still served.
    let url = format!("http://{addr}/");
    let r = run_json(&["http", &url, "-t", "1", "-c", "2", "-n", "200"]);
    r.assert_clean(200);

    drop(idle);
    server.proc.terminate();
    assert_eq!(server.proc.finish(RUN_LIMIT), 0);
    let out = server.proc.stdout();
    let last = out
        .lines()
        .find(|l| l.contains("final:"))
        .unwrap_or_else(|| panic!("no final line in\n{out}"));
    // The endless head, the chunked flood and the Content-Length: three caps.
    assert!(last.ends_with(" too large 3"), "{last}");
}
