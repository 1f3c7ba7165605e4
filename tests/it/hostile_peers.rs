//! The load client against hostile servers written here: a WebSocket server that floods
//! pings while it reads slowly, one whose pings cross our close frame, one that resets after its close, RESP servers
//! that answer HELLO with a 3 MB map or 100,000 pushes first, and one that feeds
//! endless bulk strings. Each on both load loops (io_uring, epoll): exact counts, the
//! accounting, and the client's peak RSS (VmHWM of the spawned binary).

use crate::common::*;
use std::io::{ErrorKind as IoKind, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use wirebench::proto::redis::codec::{parse_request, Args, RequestLimits, Scan};
use wirebench::proto::ws::codec::{self, Parsed, CLOSE, PING, PONG};
use wirebench::proto::ws::handshake::{self, Request};
use wirebench::report::format::count_of;

pub const LOOPS: [&str; 2] = ["uring", "epoll"];

/// `wirebench ARGS --json FILE -q` on load loop `which` (`uring`: the default), with
/// its peak RSS.
pub fn run_on(which: &str, args: &[&str]) -> (RunOut, u64) {
    let file = TempPath::new("hostile", ".json");
    let env = format!(
        "WIREBENCH_LOAD_LOOP={}",
        if which == "epoll" { "epoll" } else { "" }
    );
    let mut all = vec!["-u", "WIREBENCH_LOAD_LOOP", &env, bin()];
    all.extend_from_slice(args);
    all.extend(["--json", file.s(), "-q"]);
    let mut p = Proc::spawn("env", &all, false);
    let (code, peak) = p.finish_watching_memory(Duration::from_secs(120));
    (RunOut::of(&p, code, &file), peak)
}

// ------------------------------------------------------------------ WebSocket

/// Answers the upgrade; returns the bytes read past it.
fn upgrade(s: &mut TcpStream) -> Option<Vec<u8>> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let n = s.read(&mut chunk).ok().filter(|&n| n > 0)?;
        buf.extend_from_slice(&chunk[..n]);
        let mut out = Vec::new();
        if let Request::Upgraded { used } = handshake::answer_request(&buf, &mut out, None) {
            s.write_all(&out).ok()?;
            return Some(buf.split_off(used));
        }
    }
}

/// What a frame of the client's was.
enum Seen {
    Data,
    Pong,
    Close,
}

/// Handles the client's whole frames in `buf`: data echoed unmasked, pongs counted in
/// `pongs`; returns at a close (its frame consumed).
fn frames(buf: &mut Vec<u8>, s: &mut TcpStream, pongs: &AtomicU64) -> Option<Seen> {
    let mut last = None;
    loop {
        let Parsed::Header(h) = codec::parse_header(buf, usize::MAX) else {
            return last;
        };
        if buf.len() < h.frame_len() {
            return last;
        }
        let mut payload = buf[h.header_len..h.frame_len()].to_vec();
        codec::apply_mask(&mut payload, h.mask.expect("client frames are masked"));
        buf.drain(..h.frame_len());
        match h.opcode {
            PONG => {
                pongs.fetch_add(1, Ordering::SeqCst);
                last = Some(Seen::Pong);
            }
            CLOSE => return Some(Seen::Close),
            op => {
                let mut out = Vec::new();
                codec::write_header(&mut out, true, op, None, payload.len());
                out.extend_from_slice(&payload);
                let _ = s.write_all(&out);
                last = Some(Seen::Data);
            }
        }
    }
}

/// Reads the client's frames until its close; then `before_close` is written ahead
/// of our close, the rest read (pongs counted) until the client hangs up.
fn serve_until_close(s: &mut TcpStream, mut buf: Vec<u8>, pongs: &AtomicU64, before_close: &[u8]) {
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        if let Some(Seen::Close) = frames(&mut buf, s, pongs) {
            break;
        }
        match s.read(&mut chunk) {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
    answer_close(s, buf, pongs, before_close);
}

/// The client's close came: `before_close`, our close, then its frames read (pongs
/// counted) until it hangs up.
fn answer_close(s: &mut TcpStream, mut buf: Vec<u8>, pongs: &AtomicU64, before_close: &[u8]) {
    let mut chunk = vec![0u8; 64 * 1024];
    let _ = s.set_read_timeout(None);
    let mut out = before_close.to_vec();
    codec::write_close(&mut out, 1000, None);
    let _ = s.write_all(&out);
    let _ = s.shutdown(Shutdown::Write);
    loop {
        frames(&mut buf, s, pongs);
        match s.read(&mut chunk) {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
}

/// Pings per flood burst and bursts per connection: 44 MB of pings per connection.
const BURST: usize = 512;
const BURSTS: usize = 700;
static FLOOD_PONGS: AtomicU64 = AtomicU64::new(0);

fn pings(n: usize) -> Vec<u8> {
    let mut out = Vec::new();
    for _ in 0..n {
        codec::write_control(&mut out, PING, &[b'p'; 125], None);
    }
    out
}

/// Floods pings, reading at most 64 bytes (of pongs and messages) after each 64 KB
/// of them and answering nothing; then echoes and closes as a server should (so the
/// client's messages are answered after the whole flood).
fn ping_flood(mut s: TcpStream) {
    let Some(mut buf) = upgrade(&mut s) else {
        return;
    };
    let burst = pings(BURST);
    let _ = s.set_read_timeout(Some(Duration::from_millis(1)));
    let mut small = [0u8; 64];
    for _ in 0..BURSTS {
        if s.write_all(&burst).is_err() {
            return;
        }
        match s.read(&mut small) {
            Ok(0) => return,
            Ok(n) => buf.extend_from_slice(&small[..n]),
            Err(e) if matches!(e.kind(), IoKind::WouldBlock | IoKind::TimedOut) => {}
            Err(_) => return,
        }
    }
    let _ = s.set_read_timeout(None);
    serve_until_close(&mut s, buf, &FLOOD_PONGS, &[]);
}

#[test]
fn a_ping_flood_is_owed_one_pong_and_memory_stays_bounded() {
    let server = Foreign::start(ping_flood);
    let url = format!("ws://{}/", server.addr_string());
    for which in LOOPS {
        FLOOD_PONGS.store(0, Ordering::SeqCst);
        let (r, peak) = run_on(which, &["ws", &url, "-c", "2", "-t", "1", "-n", "20"]);
        let why = format!("{which}: {}", r.explain());
        assert_eq!(r.code, 0, "{why}");
        assert_eq!((r.u("/totals/sent"), r.u("/totals/ok")), (20, 20), "{why}");
        assert_eq!(r.json()["totals"]["invariant_holds"], true, "{why}");
        let pings = 2 * (BURST * BURSTS) as u64;
        assert_eq!(r.u("/ws/pings_answered"), pings, "{why}");
        assert_eq!(r.u("/totals/events"), pings + r.u("/ws/pongs"), "{why}");
        assert_eq!(r.u("/ws/clean_closes"), 2, "{why}");
        // Every ping is answered by its pong or a later one's; a connection may end
        // owing one (its close came first).
        let written = pings - r.u("/ws/pings_superseded");
        let got = FLOOD_PONGS.load(Ordering::SeqCst);
        assert!(
            got <= written && got + 2 >= written,
            "{which}: {got} pongs read of {written}"
        );
        assert!(r.u("/ws/pings_superseded") > 0, "{why}");
        // Every byte received counts: at least the pings' 127 bytes each.
        assert!(r.u("/totals/bytes_received") >= pings * 127, "{why}");
        // A pong per ping queued 92 MB here before.
        assert!(peak < 48 << 20, "{which}: peak RSS {peak} bytes");
    }
}

static CROSSING_PONGS: AtomicU64 = AtomicU64::new(0);

/// An echo server that answers the client's close with 100 pings (12.7 KB, more than
/// one io_uring receive buffer) and its close in one write, then hangs up.
fn pings_cross_the_close(mut s: TcpStream) {
    let Some(buf) = upgrade(&mut s) else {
        return;
    };
    serve_until_close(&mut s, buf, &CROSSING_PONGS, &pings(100));
}

/// 4 connections, 40 messages, 3 rounds on each loop against `server`, whose pings
/// come only during the closing handshake (`pings` in all): every close clean, every
/// ping answered and an event like any other.
fn closes_cleanly_on_both_loops(server: fn(TcpStream), pings: u64) {
    let server = Foreign::start(server);
    let url = format!("ws://{}/", server.addr_string());
    for which in LOOPS {
        for round in 0..3 {
            let (r, _) = run_on(which, &["ws", &url, "-c", "4", "-t", "1", "-n", "40"]);
            let why = format!("{which} round {round}: {}", r.explain());
            assert_eq!(r.code, 0, "{why}");
            assert_eq!(r.u("/totals/ok"), 40, "{why}");
            assert_eq!(r.u("/totals/connect_errors"), 0, "{why}");
            assert_eq!(r.u("/ws/clean_closes"), 4, "{why}");
            assert_eq!(r.u("/ws/pings_answered_closing"), pings, "{why}");
            assert_eq!(r.u("/ws/pings_answered"), pings, "{why}");
            assert_eq!(r.u("/totals/events"), pings, "{why}");
        }
    }
}

#[test]
fn pings_crossing_the_close_end_in_a_clean_close_on_both_loops() {
    closes_cleanly_on_both_loops(pings_cross_the_close, 400);
}

/// An echo server that answers the client's close with a ping and its own close in
/// one write, then resets the connection (SO_LINGER 0): RFC 6455 7.1.1 lets a server
/// close first, and the pong our client owes meets a reset socket while the server's
/// close already waits in its input.
fn ping_close_reset(mut s: TcpStream) {
    let Some(mut buf) = upgrade(&mut s) else {
        return;
    };
    let mut chunk = vec![0u8; 64 * 1024];
    let ignored = AtomicU64::new(0);
    while !matches!(frames(&mut buf, &mut s, &ignored), Some(Seen::Close)) {
        match s.read(&mut chunk) {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
    let mut out = pings(1);
    codec::write_close(&mut out, 1000, None);
    let _ = s.write_all(&out);
    let _ = socket2::SockRef::from(&s).set_linger(Some(Duration::ZERO));
}

#[test]
fn a_server_that_resets_after_its_close_ends_in_a_clean_close_on_both_loops() {
    closes_cleanly_on_both_loops(ping_close_reset, 4);
}

/// The number after `label` in a server's summary line ("4 clean closes").
fn count_before(line: &str, label: &str) -> u64 {
    let at = line
        .find(label)
        .unwrap_or_else(|| panic!("no '{label}' in {line}"));
    let digits: String = line[..at]
        .trim_end()
        .chars()
        .rev()
        .take_while(|c| c.is_ascii_digit() || *c == ',')
        .filter(char::is_ascii_digit)
        .collect();
    digits.chars().rev().collect::<String>().parse().unwrap()
}

#[test]
fn serve_ws_pinging_every_millisecond_closes_cleanly_every_time() {
    let mut server = Served::start_as("ws", &["--ping-every", "1ms"]);
    let url = format!("ws://{}/", server.addr());
    let mut closes = 0;
    for round in 0..6 {
        let which = LOOPS[round % 2];
        let (r, _) = run_on(which, &["ws", &url, "-c", "8", "-t", "2", "-d", "1s"]);
        let why = format!("{which} round {round}: {}", r.explain());
        assert_eq!(r.code, 0, "{why}");
        assert_eq!(r.u("/totals/connect_errors"), 0, "{why}");
        assert_eq!(r.u("/ws/clean_closes"), 8, "{why}");
        closes += r.u("/ws/clean_closes");
    }
    server.stop_final_line();
    let out = server.proc.stdout();
    let ws = out
        .lines()
        .find(|l| l.contains("final ws:"))
        .unwrap_or_else(|| panic!("no final ws line:\n{out}"));
    assert_eq!(count_before(ws, "clean closes"), closes, "{ws}");
}

// ------------------------------------------------------------------ RESP

/// Reads commands and answers each with `answer(name)`; returns on EOF.
fn resp_server(s: &mut TcpStream, answer: impl Fn(&[u8], &mut TcpStream) -> bool) {
    let mut buf = Vec::new();
    let mut chunk = vec![0u8; 64 * 1024];
    let mut args = Args::new();
    let lim = RequestLimits::default();
    loop {
        while let Scan::Whole { len, .. } = parse_request(&buf, &lim, &mut args) {
            let (a, l) = args[0];
            let name = buf[a as usize..(a + l) as usize].to_ascii_uppercase();
            buf.drain(..len);
            if !answer(&name, s) {
                return;
            }
        }
        match s.read(&mut chunk) {
            Ok(0) | Err(_) => return,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
}

/// HELLO answered with a valid map of 250,000 pairs (3.4 MB).
const MAP_PAIRS: usize = 250_000;

fn big_map() -> Vec<u8> {
    let mut out = format!("%{MAP_PAIRS}\r\n").into_bytes();
    for i in 0..MAP_PAIRS {
        out.extend_from_slice(format!("+k{i}\r\n:{i}\r\n").as_bytes());
    }
    out
}

fn big_hello(mut s: TcpStream) {
    resp_server(&mut s, |name, s| match name {
        b"HELLO" => s.write_all(&big_map()).is_ok(),
        _ => s.write_all(b"+PONG\r\n").is_ok(),
    });
}

const PUSH: &[u8] = b">2\r\n+message\r\n$2\r\nhi\r\n";
const PUSHES_FIRST: usize = 100_000;

/// 100,000 pushes before HELLO's answer, then a push before every PONG.
fn pushes(mut s: TcpStream) {
    resp_server(&mut s, |name, s| match name {
        b"HELLO" => {
            let mut out = PUSH.repeat(PUSHES_FIRST);
            out.extend_from_slice(b"%0\r\n");
            s.write_all(&out).is_ok()
        }
        _ => {
            let mut out = PUSH.to_vec();
            out.extend_from_slice(b"+PONG\r\n");
            s.write_all(&out).is_ok()
        }
    });
}

/// 100 PINGs on one RESP3 connection to `addr` on load loop `which`: the run exits 0
/// with every one answered. Returns the result and what to say when a check fails.
fn hundred_resp3_pings(which: &str, addr: &str) -> (RunOut, String) {
    let args = [
        "redis",
        addr,
        "--resp3",
        "-c",
        "1",
        "-t",
        "1",
        "-n",
        "100",
        "--command",
        "ping",
    ];
    let (r, _) = run_on(which, &args);
    let why = format!("{which}: {}", r.explain());
    assert_eq!(r.code, 0, "{why}");
    assert_eq!(r.u("/totals/ok"), 100, "{why}");
    (r, why)
}

#[test]
fn a_large_opening_reply_reads_the_same_on_both_loops() {
    let server = Foreign::start(big_hello);
    let addr = server.addr_string();
    let map = big_map().len() as u64;
    for which in LOOPS {
        let (r, why) = hundred_resp3_pings(which, &addr);
        assert_eq!(r.u("/totals/exchange_answered"), 1, "{why}");
        // Every byte: the map and 100 PONGs.
        assert_eq!(r.u("/totals/bytes_received"), map + 100 * 7, "{why}");
    }
}

#[test]
fn pushes_count_as_events_in_every_phase_with_their_bytes() {
    let server = Foreign::start(pushes);
    let addr = server.addr_string();
    let p = PUSH.len() as u64;
    for which in LOOPS {
        let (r, why) = hundred_resp3_pings(which, &addr);
        let events = PUSHES_FIRST as u64 + 100;
        assert_eq!(r.u("/totals/events"), events, "{why}");
        assert_eq!(r.u("/redis/pushes"), events, "{why}");
        assert_eq!(
            r.u("/totals/bytes_received"),
            events * p + 4 + 100 * 7,
            "{why}"
        );
    }
    // Without --resp3 the server speaks RESP2: a push is not RESP2, so every
    // connection's reply is a protocol error (and nothing is counted as an event).
    let (r, _) = run_on(
        "uring",
        &[
            "redis",
            &addr,
            "-c",
            "1",
            "-t",
            "1",
            "-n",
            "10",
            "--command",
            "ping",
        ],
    );
    assert_eq!(r.code, 1, "{}", r.explain());
    assert_eq!(r.u("/totals/ok"), 0, "{}", r.explain());
    assert_eq!(r.u("/errors/protocol"), 10, "{}", r.explain());
    assert_eq!(r.u("/totals/events"), 0, "{}", r.explain());
    assert_eq!(r.json()["totals"]["invariant_holds"], true);
}

/// Every command is answered with the header of a 500 MB bulk string and then bytes
/// without end, until the client hangs up.
fn endless_bulk(mut s: TcpStream) {
    resp_server(&mut s, |_, s| {
        if s.write_all(b"$500000000\r\n").is_err() {
            return false;
        }
        let chunk = vec![b'x'; 64 * 1024];
        while s.write_all(&chunk).is_ok() {}
        false
    });
}

/// The budget the endless replies are given: a sixteenth of what their 32
/// connections' own caps (64 MiB each) would let them keep.
const SMALL_BUDGET: u64 = 128 << 20;

#[test]
fn endless_replies_on_many_connections_stay_within_the_memory_budget() {
    let server = Foreign::start(endless_bulk);
    let addr = server.addr_string();
    for which in LOOPS {
        let args = [
            "redis",
            &addr,
            "-c",
            "32",
            "-t",
            "2",
            // One request a connection, the run over when each has ended: a count,
            // not a duration, so a slow machine only takes longer to reach the budget.
            "-n",
            "32",
            "--timeout",
            "60s",
            "--command",
            "ping",
            "--memory-budget",
            "128m",
        ];
        let (r, peak) = run_on(which, &args);
        let why = format!("{which}: {}", r.explain());
        assert_eq!(r.json()["totals"]["invariant_holds"], true, "{why}");
        assert_eq!(r.u("/config/memory_budget_bytes"), SMALL_BUDGET, "{why}");
        assert_eq!(r.u("/totals/ok"), 0, "{why}");
        let over = r.u("/totals/over_budget");
        assert!(over >= 1, "{why}");
        // Each dropped connection's request is too_large, none other failed.
        let failed = r.u("/totals/sent") - r.u("/totals/in_flight");
        assert_eq!(r.u("/errors/too_large"), failed, "{why}");
        assert_eq!(r.u("/totals/errors"), failed, "{why}");
        assert!(failed >= over, "{why}");
        let said = format!(
            "memory budget: {} dropped as too_large: what the connections kept together reached the run's --memory-budget of 128 MiB (each thread an equal share)",
            count_of(over, "connection")
        );
        assert!(
            r.stdout.lines().any(|l| l == said),
            "{which}: want '{said}' in\n{why}"
        );
        // Without a budget they could keep 2 GiB (eight connections held 540 MB).
        assert!(
            peak < SMALL_BUDGET + (48 << 20),
            "{which}: peak RSS {peak} bytes"
        );
    }
}
