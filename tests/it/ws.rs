//! `wirebench ws` and `serve ws` against each other, and against bad peers on both
//! sides: a peer that skips the handshake, an unmasked client frame, a 2^63 payload
//! length, a close with an invalid code. Each is one error kind, in bounded memory,
//! and the other connections go on. (Foreign peers: ws_peers.rs.)

use crate::common::*;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;
use wirebench::proto::ws::codec::{self, Parsed};
use wirebench::proto::ws::handshake;

#[test]
fn the_builtin_server_echoes_fragmented_text_with_exact_counts_and_a_valid_result() {
    let r = run_json(&[
        "ws",
        "-n",
        "3000",
        "-t",
        "1",
        "-c",
        "4",
        "--pipeline",
        "8",
        "--size",
        "0..5000",
        "--fragment",
        "1000",
        "--text",
    ]);
    r.assert_clean(3000);
    let j = r.json();
    assert_eq!(j["kind"], "ws");
    assert_eq!(r.u("/totals/sent"), 3000);
    assert_eq!(r.u("/ws/upgrades"), r.u("/totals/connections"));
    assert_eq!(r.u("/ws/clean_closes"), r.u("/totals/connections"));
    assert_eq!(r.u("/ws/server_closes"), 0);
    // The built-in server reassembled and echoed every message, and says so.
    assert_eq!(r.u("/server/requests"), 3000, "{}", r.explain());
    assert_eq!(r.u("/server/ws/messages"), 3000);
    assert!(r.u("/server/ws/fragmented") > 0);
    assert_eq!(r.u("/server/ws/clean_closes"), r.u("/totals/connections"));
    let v = schema_validator("result.schema.json");
    let errors: Vec<String> = v.iter_errors(j).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}");
}

#[test]
fn serve_ws_pings_every_10ms_and_the_count_stays_exact() {
    let mut s = Served::start_as("ws", &["--ping-every", "10ms", "--threads", "1"]);
    let url = format!("ws://{}/echo", s.addr());
    let r = run_json(&[
        "ws",
        &url,
        "-d",
        "1s",
        "-t",
        "1",
        "-c",
        "3",
        "--pipeline",
        "2",
        "--size",
        "200",
    ]);
    r.assert_clean(r.u("/totals/sent"));
    assert!(r.u("/totals/ok") > 0);
    let pings = r.u("/ws/pings_answered");
    assert!(pings > 0, "no ping seen in a 1 s run: {}", r.explain());
    assert_eq!(r.u("/totals/events"), pings + r.u("/ws/pongs"));
    let last = s.stop_final_line();
    // Every message the load sent was echoed once, no more.
    assert_eq!(
        field(&last, " requests "),
        group(r.u("/totals/sent")),
        "{last}"
    );
    let out = s.proc.stdout();
    let ws = out
        .lines()
        .find(|l| l.contains("final ws: "))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(ws.contains(", 0 unmasked, 0 bad frames"), "{ws}");
}

/// The count after `name` in the server's final line.
fn field<'a>(line: &'a str, name: &str) -> &'a str {
    line.split(name)
        .nth(1)
        .and_then(|t| t.split(' ').next())
        .unwrap_or_else(|| panic!("no{name}in {line}"))
}

/// 1234567 as "1,234,567", the way the server prints counts.
fn group(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A raw client connection, upgraded.
fn upgraded(addr: &str) -> TcpStream {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let key = handshake::client_key(42);
    let mut req = Vec::new();
    handshake::write_request(&mut req, addr, "/", &key, None);
    s.write_all(&req).unwrap();
    let mut got = Vec::new();
    let mut b = [0u8; 1024];
    loop {
        let n = s.read(&mut b).unwrap();
        assert!(n > 0, "closed during the upgrade");
        got.extend_from_slice(&b[..n]);
        match handshake::check_answer(&got, &key, None) {
            handshake::Answer::Incomplete => continue,
            handshake::Answer::Upgraded { used } => {
                assert_eq!(used, got.len());
                return s;
            }
            other => panic!("{other:?}"),
        }
    }
}

fn masked(opcode: u8, payload: &[u8]) -> Vec<u8> {
    let k = [1, 2, 3, 4];
    let mut out = Vec::new();
    codec::write_header(&mut out, true, opcode, Some(k), payload.len());
    let at = out.len();
    out.extend_from_slice(payload);
    codec::apply_mask(&mut out[at..], k);
    out
}

/// Everything the server sends until it closes.
fn read_to_close(s: &mut TcpStream) -> Vec<u8> {
    let mut all = Vec::new();
    let _ = s.read_to_end(&mut all);
    all
}

/// The code of the close frame `bytes` start with.
fn close_code(bytes: &[u8]) -> u16 {
    let Parsed::Header(h) = codec::parse_header(bytes, 125) else {
        panic!("no frame: {bytes:?}")
    };
    assert_eq!(h.opcode, codec::CLOSE, "{bytes:?}");
    u16::from_be_bytes([bytes[h.header_len], bytes[h.header_len + 1]])
}

#[test]
fn serve_ws_refuses_each_bad_peer_with_its_own_code_and_serves_the_others() {
    let mut s = Served::start_as("ws", &["--threads", "1", "--max-message", "1m"]);
    let addr = s.addr();
    let mut good = upgraded(&addr);

    // A peer that skips the handshake: its frame is not an upgrade request.
    let mut skip = TcpStream::connect(&addr).unwrap();
    skip.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    skip.write_all(&masked(codec::TEXT, b"hello")).unwrap();
    let answer = read_to_close(&mut skip);
    assert!(answer.starts_with(b"HTTP/1.1 400 "), "{answer:?}");

    // An unmasked client frame: 1002.
    let mut unmasked = upgraded(&addr);
    unmasked.write_all(&[0x82, 0x03, 1, 2, 3]).unwrap();
    assert_eq!(close_code(&read_to_close(&mut unmasked)), 1002);

    // A 2^63 payload length: 1009 from the header alone, nothing buffered.
    let mut huge = upgraded(&addr);
    let mut frame = vec![0x82, 0xff];
    frame.extend_from_slice(&(1u64 << 63).to_be_bytes());
    frame.extend_from_slice(&[9, 9, 9, 9]);
    huge.write_all(&frame).unwrap();
    assert_eq!(close_code(&read_to_close(&mut huge)), 1009);

    // A close with a code that may not be sent (1005): 1002.
    let mut bad_close = upgraded(&addr);
    bad_close
        .write_all(&masked(codec::CLOSE, &1005u16.to_be_bytes()))
        .unwrap();
    assert_eq!(close_code(&read_to_close(&mut bad_close)), 1002);

    // The good connection was not disturbed.
    good.write_all(&masked(codec::BINARY, b"still here"))
        .unwrap();
    let mut back = [0u8; 12];
    good.read_exact(&mut back).unwrap();
    assert_eq!(&back, b"\x82\x0astill here");
    good.write_all(&masked(codec::CLOSE, &1000u16.to_be_bytes()))
        .unwrap();
    assert_eq!(close_code(&read_to_close(&mut good)), 1000);

    let last = s.stop_final_line();
    assert_eq!(
        (field(&last, " requests "), field(&last, " too large ")),
        ("1", "1"),
        "{last}"
    );
    let out = s.proc.stdout();
    let ws = out.lines().find(|l| l.contains("final ws: ")).unwrap();
    assert!(
        ws.contains(
            "4 upgrades, 1 messages (0 fragmented), 0 pings sent, 0 pongs, 1 clean closes; refused: 1 handshakes, 1 unmasked, 0 bad frames, 1 bad close codes, 0 invalid UTF-8, 1 too big"
        ),
        "{ws}"
    );
}

/// Reads the upgrade request and answers it; None if the peer went away.
fn accept_upgrade(s: &mut TcpStream) -> Option<()> {
    let mut got = Vec::new();
    let mut b = [0u8; 1024];
    loop {
        let n = s.read(&mut b).ok().filter(|&n| n > 0)?;
        got.extend_from_slice(&b[..n]);
        let mut out = Vec::new();
        match handshake::answer_request(&got, &mut out, None) {
            handshake::Request::Incomplete => continue,
            handshake::Request::Upgraded { .. } => return s.write_all(&out).ok(),
            _ => return None,
        }
    }
}

/// Skips the handshake: answers the upgrade request with a text frame.
fn skips_handshake(mut s: TcpStream) {
    let mut b = [0u8; 1024];
    if s.read(&mut b).is_ok() {
        let _ = s.write_all(b"\x81\x05hello");
    }
}

/// Upgrades, then answers the first message with a 2^63-byte one.
fn huge_length(mut s: TcpStream) {
    let mut b = [0u8; 1024];
    if accept_upgrade(&mut s).is_some() && matches!(s.read(&mut b), Ok(n) if n > 0) {
        let mut f = vec![0x82, 0x7f];
        f.extend_from_slice(&(1u64 << 63).to_be_bytes());
        let _ = s.write_all(&f);
        while matches!(s.read(&mut b), Ok(n) if n > 0) {}
    }
}

/// Upgrades, then answers the first message with a close whose code may not be
/// sent (1006).
fn invalid_close(mut s: TcpStream) {
    let mut b = [0u8; 1024];
    if accept_upgrade(&mut s).is_some() && matches!(s.read(&mut b), Ok(n) if n > 0) {
        let _ = s.write_all(&[0x88, 0x02, 0x03, 0xee]);
        while matches!(s.read(&mut b), Ok(n) if n > 0) {}
    }
}

#[test]
fn the_client_gives_each_bad_server_its_own_error_kind() {
    // Each bad server fails its messages at once; the timeout only bounds a server
    // thread that a busy machine delays (1 s once timed out one message under a CPU
    // hog, a second error kind beside the one the server earns).
    let base = ["-n", "20", "-t", "1", "-c", "2", "--timeout", "20s"];
    let run = |server: &Foreign| {
        let url = format!("ws://{}/", server.addr_string());
        let mut args = vec!["ws", url.as_str()];
        args.extend(base);
        let (r, peak) = run_json_watching_memory(&args);
        assert_eq!(r.code, 1, "{}", r.explain());
        // Bounded memory: nothing was buffered for the announced lengths.
        assert!(peak < 200 << 20, "peak RSS {peak}");
        r
    };
    let r = run(&Foreign::start(skips_handshake));
    assert!(r.u("/errors/connect_failed") > 0, "{}", r.explain());
    assert_eq!(r.u("/totals/sent"), 0);
    assert!(
        r.stderr
            .contains("did not answer the WebSocket upgrade with HTTP"),
        "{}",
        r.explain()
    );

    let r = run(&Foreign::start(huge_length));
    assert!(r.u("/errors/too_large") > 0, "{}", r.explain());
    assert_eq!(
        r.json()["errors"].as_object().unwrap().len(),
        1,
        "{}",
        r.explain()
    );

    let r = run(&Foreign::start(invalid_close));
    assert!(r.u("/errors/protocol") > 0, "{}", r.explain());
    assert_eq!(
        r.json()["errors"].as_object().unwrap().len(),
        1,
        "{}",
        r.explain()
    );
    assert!(r.u("/ws/server_closes") > 0);
}

#[test]
fn wss_over_tls_to_serve_ws_and_to_the_builtin_server() {
    let mut s = Served::start_as("ws", &["--threads", "1", "--tls"]);
    let url = format!("wss://{}/", s.addr());
    let r = run_json(&[
        "ws",
        &url,
        "--insecure",
        "-n",
        "500",
        "-t",
        "1",
        "-c",
        "2",
        "--size",
        "100..20000",
        "--fragment",
        "4000",
    ]);
    r.assert_clean(500);
    assert_eq!(r.json()["target"], url);
    assert_eq!(r.json()["config"]["tls"], true, "{}", r.json()["config"]);
    let last = s.stop_final_line();
    assert_eq!(field(&last, " requests "), "500", "{last}");
    assert_eq!(field(&last, " tls failures "), "0", "{last}");
    // No URL and --tls: the built-in server speaks TLS too.
    let r = run_json(&["ws", "--tls", "-n", "300", "-t", "1", "-c", "2"]);
    r.assert_clean(300);
    assert_eq!(r.u("/server/requests"), 300);
}

/// `serve ws` on `loop_` ("" = the default, io_uring; "epoll"): (the process, its address).
fn serve_ws_on(loop_: &str) -> (Proc, String) {
    let listen = format!("127.0.0.1:{}", free_port());
    let var = format!("WIREBENCH_SERVER_LOOP={loop_}");
    let args = [
        &var,
        bin(),
        "serve",
        "ws",
        "--listen",
        &listen,
        "--threads",
        "1",
    ];
    let mut p = Proc::spawn("env", &args, false);
    let ready = "wirebench serve ws: listening on";
    assert!(
        p.wait_line(ready, Duration::from_secs(20)).is_some(),
        "serve ws did not start: {}",
        p.stderr()
    );
    (p, listen)
}

/// N pings back to back, then a last ping of another payload: the server counts every
/// ping, but answers pings read back to back with one pong, for the latest (RFC 6455
/// 5.5.3), so it owes at most one pong per read. The pongs are read up to the last
/// ping's, which is the last frame, and end with its payload.
fn ping_burst_is_answered_once_per_read(loop_: &str) {
    const N: usize = 100_000;
    let (mut p, addr) = serve_ws_on(loop_);
    let mut s = upgraded(&addr);
    let mut burst = masked(codec::PING, b"burst-ping").repeat(N);
    burst.extend(masked(codec::PING, b"the last ping"));
    // Written from another thread, so a server that answers every ping (and stops
    // reading while it owes a megabyte) cannot stall the test: it fails the count.
    let mut w = s.try_clone().unwrap();
    let writer = std::thread::spawn(move || w.write_all(&burst).unwrap());
    let (mut got, mut pongs, mut last) = (Vec::new(), 0u64, Vec::new());
    let mut b = [0u8; 65536];
    while last != b"the last ping" {
        let n = s.read(&mut b).unwrap();
        assert!(n > 0, "closed after {pongs} pongs");
        got.extend_from_slice(&b[..n]);
        let mut at = 0;
        while let Parsed::Header(h) = codec::parse_header(&got[at..], 125) {
            if got.len() - at < h.frame_len() {
                break;
            }
            assert_eq!(h.opcode, codec::PONG, "{:?}", &got[at..]);
            assert!(last != b"the last ping", "a frame after the last pong");
            last = got[at + h.header_len..at + h.frame_len()].to_vec();
            assert!(
                last == b"burst-ping" || last == b"the last ping",
                "{last:?}"
            );
            pongs += 1;
            at += h.frame_len();
        }
        got.drain(..at);
    }
    writer.join().unwrap();
    assert!(got.is_empty(), "bytes after the last pong: {got:?}");
    s.write_all(&masked(codec::CLOSE, &1000u16.to_be_bytes()))
        .unwrap();
    assert_eq!(close_code(&read_to_close(&mut s)), 1000);

    p.terminate();
    assert_eq!(p.finish(Duration::from_secs(30)), 0, "{}", p.stderr());
    let out = p.stdout();
    let line = |what: &str| {
        out.lines()
            .find(|l| l.contains(what))
            .unwrap_or_else(|| panic!("no '{what}' in {out}"))
            .to_string()
    };
    let ws = line("final ws: ");
    assert!(
        ws.contains(&format!("; {} client pings answered", N + 1)),
        "every ping counted: {ws}"
    );
    // One pong per read at most (the upgrade and the close took a read each): a pong
    // per ping would be 100,001 for the few dozen reads 2.2 MB take.
    let reads: u64 = field(&line("; final: accepts "), " reads ")
        .replace(',', "")
        .parse()
        .unwrap();
    let on = if loop_.is_empty() { "io_uring" } else { loop_ };
    assert!(pongs <= reads, "{pongs} pongs for {reads} reads ({on})");
}

#[test]
fn a_burst_of_pings_gets_one_pong_per_read_for_the_latest_on_io_uring() {
    ping_burst_is_answered_once_per_read("");
}

#[test]
fn a_burst_of_pings_gets_one_pong_per_read_for_the_latest_on_epoll() {
    ping_burst_is_answered_once_per_read("epoll");
}
