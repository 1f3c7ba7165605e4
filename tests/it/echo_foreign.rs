//! The client against echo servers that are not wirebench: a plain byte echo, and one
//! that corrupts every 7th frame (each must count as exactly one mismatch).

use crate::common::*;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicU64, Ordering};

/// Bytes the plain echo server has read, over all its connections.
static PLAIN_BYTES: AtomicU64 = AtomicU64::new(0);

fn plain_echo(mut s: TcpStream) {
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let n = match s.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        PLAIN_BYTES.fetch_add(n as u64, Ordering::SeqCst);
        if s.write_all(&buf[..n]).is_err() {
            return;
        }
    }
}

/// Parses frames by their u32 length prefix and flips one payload byte in every 7th.
fn corrupting_echo(mut s: TcpStream) {
    let mut frames = 0u64;
    loop {
        let mut len = [0u8; 4];
        if s.read_exact(&mut len).is_err() {
            return;
        }
        let rest = u32::from_be_bytes(len) as usize;
        let mut frame = vec![0u8; 4 + rest];
        frame[..4].copy_from_slice(&len);
        if s.read_exact(&mut frame[4..]).is_err() {
            return;
        }
        frames += 1;
        if frames % 7 == 0 {
            // The first payload byte, just after the 28-byte header.
            frame[28] ^= 0x01;
        }
        if s.write_all(&frame).is_err() {
            return;
        }
    }
}

#[test]
fn random_sizes_against_a_plain_echo_server() {
    let server = Foreign::start(plain_echo);
    let r = run_json(&[
        "echo",
        &server.addr_string(),
        "-n",
        "500",
        "--size",
        "10..300",
        "-t",
        "2",
        "-c",
        "8",
        "--pipeline",
        "2",
    ]);
    assert_eq!(r.code, 0, "{}", r.explain());
    assert_eq!(r.u("/totals/ok"), 500, "{}", r.explain());
    assert_eq!(r.u("/totals/sent"), 500, "{}", r.explain());
    assert_eq!(r.u("/totals/errors"), 0, "{}", r.explain());
    let j = r.json();
    assert_eq!(j["totals"]["invariant_holds"], true);
    assert!(j["server"].is_null());
    assert_eq!(j["config"]["size_min"], 10);
    assert_eq!(j["config"]["size_max"], 300);
    let sent = r.u("/totals/bytes_sent");
    assert_eq!(r.u("/totals/bytes_received"), sent);
    // Sizes really vary: strictly between all-minimum and all-maximum frames.
    assert!(sent > 500 * (28 + 10) && sent < 500 * (28 + 300), "{sent}");
    // Every reply was read by the foreign server before it went back.
    assert_eq!(PLAIN_BYTES.load(Ordering::SeqCst), sent);
}

#[test]
fn every_corrupted_frame_is_one_mismatch() {
    let server = Foreign::start(corrupting_echo);
    let r = run_json(&[
        "echo",
        &server.addr_string(),
        "-t",
        "1",
        "-c",
        "1",
        "--pipeline",
        "4",
        "-n",
        "700",
    ]);
    assert_eq!(
        r.code,
        1,
        "a run with wrong replies must exit 1\n{}",
        r.explain()
    );
    assert_eq!(r.u("/errors/mismatch"), 100, "{}", r.explain());
    assert_eq!(r.u("/totals/ok"), 600, "{}", r.explain());
    assert_eq!(r.u("/totals/sent"), 700, "{}", r.explain());
    assert_eq!(r.u("/totals/errors"), 100, "{}", r.explain());
    assert_eq!(r.u("/totals/in_flight"), 0, "{}", r.explain());
    assert_eq!(r.u("/totals/connections"), 1, "{}", r.explain());
    assert_eq!(
        r.u("/histogram/count"),
        700,
        "every reply in step is timed, a wrong echo too"
    );
    let j = r.json();
    assert_eq!(j["totals"]["invariant_holds"], true);
    assert_eq!(j["outcome"]["success"], false);
    assert_eq!(j["errors"].as_object().unwrap().len(), 1, "{}", j["errors"]);
    assert!(
        r.stderr.starts_with("wirebench: ") && r.stderr.contains("100 messages failed"),
        "{}",
        r.stderr
    );
}

/// Streams bytes nobody asked for, as soon as a client connects.
fn chatty(mut s: TcpStream) {
    let junk = [b'x'; 64 * 1024];
    while s.write_all(&junk).is_ok() {}
}

/// Unsolicited bytes end the connection (counted as `unsolicited`) instead of piling up.
#[test]
fn a_server_that_talks_unasked_is_cut_off() {
    let server = Foreign::start(chatty);
    let r = run_json(&[
        "echo",
        &server.addr_string(),
        "-t",
        "1",
        "-c",
        "1",
        "-R",
        "2",
        "-d",
        "2s",
        "--timeout",
        "2s",
    ]);
    assert_eq!(r.code, 1, "{}", r.explain());
    assert!(r.u("/errors/unsolicited") >= 1, "{}", r.explain());
    assert_eq!(
        r.json()["totals"]["invariant_holds"],
        true,
        "{}",
        r.explain()
    );
}
