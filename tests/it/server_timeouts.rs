//! Servers that cannot be starved: slowloris heads hit --header-timeout, silent
//! connections hit --idle-timeout, and then well-behaved clients get their answers.
//! Exact counts: how many connections each timeout closed, how many requests came back.

use crate::common::*;
use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// How long the server may take to close the starving connections (timeout 1 s).
const CLOSE_WITHIN: Duration = Duration::from_secs(10);

fn connect(addr: &str) -> TcpStream {
    let s = TcpStream::connect(addr).expect("connect to the server");
    s.set_nodelay(true).unwrap();
    s
}

/// Whether the server has closed `s` (EOF or reset), reading away any bytes it sent.
fn closed_by_server(mut s: &TcpStream) -> bool {
    s.set_nonblocking(true).unwrap();
    let mut buf = [0u8; 4096];
    let closed = loop {
        match s.read(&mut buf) {
            Ok(0) => break true,
            Ok(_) => continue,
            Err(e) if e.kind() == ErrorKind::WouldBlock => break false,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(_) => break true,
        }
    };
    s.set_nonblocking(false).unwrap();
    closed
}

/// A connection beyond --max-conns-per-thread: the server closes it at once.
fn assert_refused(addr: &str) {
    let mut s = connect(addr);
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let _ = s.write_all(b"GET / HTTP/1.1\r\n\r\n");
    let mut buf = [0u8; 64];
    match s.read(&mut buf) {
        Ok(0) => {}
        Err(e) if e.kind() != ErrorKind::WouldBlock && e.kind() != ErrorKind::TimedOut => {}
        other => panic!("the connection over the limit was served: {other:?}"),
    }
}

/// Sends one more byte of `text` (cycling) on every open connection every `every`
/// (at least once), until all are closed by the server or `limit` passes; returns how
/// many the server closed.
fn trickle(conns: &mut [TcpStream], text: &[u8], every: Duration, limit: Duration) -> usize {
    let mut open: Vec<bool> = vec![true; conns.len()];
    let end = Instant::now() + limit;
    let mut at = 0;
    loop {
        for (s, o) in conns.iter_mut().zip(open.iter_mut()) {
            if *o && (closed_by_server(s) || s.write_all(&text[at % text.len()..][..1]).is_err()) {
                *o = false;
            }
        }
        at += 1;
        if !open.iter().any(|o| *o) || Instant::now() >= end {
            break;
        }
        std::thread::sleep(every);
    }
    open.iter().filter(|o| !**o).count()
}

#[test]
fn slowloris_heads_time_out_and_clients_are_served_again() {
    let mut server = Served::start_as(
        "http",
        &[
            "--threads",
            "1",
            "--max-conns-per-thread",
            "20",
            "--header-timeout",
            "1s",
        ],
    );
    let addr = server.addr();
    let mut loris: Vec<TcpStream> = (0..20).map(|_| connect(&addr)).collect();
    // All 20 slots are taken by heads that never end.
    for s in &mut loris {
        s.write_all(b"G").unwrap();
    }
    std::thread::sleep(Duration::from_millis(200));
    assert_refused(&addr);

    let head = b"ET / HTTP/1.1\r\nHost: x\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
    let closed = trickle(&mut loris, head, Duration::from_millis(300), CLOSE_WITHIN);
    assert_eq!(closed, 20, "slowloris connections closed by the server");

    let url = format!("http://{addr}/");
    let r = run_json(&["http", &url, "-n", "300", "-c", "4", "-t", "1"]);
    r.assert_clean(300);

    let last = server.stop_final_line();
    assert!(
        last.contains(" requests 300 timeouts header 20 idle 0 held full 0"),
        "{last}"
    );
    assert!(last.contains(" rejected 1 "), "{last}");
}

#[test]
fn silent_echo_connections_time_out_busy_ones_do_not() {
    let mut server = Served::start(&[
        "--threads",
        "1",
        "--max-conns-per-thread",
        "21",
        "--idle-timeout",
        "1s",
    ]);
    let addr = server.addr();
    let silent: Vec<TcpStream> = (0..20).map(|_| connect(&addr)).collect();
    // One connection that trickles a byte every 300 ms is never idle for 1 s.
    let mut busy = vec![connect(&addr)];
    std::thread::sleep(Duration::from_millis(200));
    assert_refused(&addr);

    let end = Instant::now() + CLOSE_WITHIN;
    let mut closed = 0;
    while Instant::now() < end {
        closed = silent.iter().filter(|s| closed_by_server(s)).count();
        if closed == silent.len() {
            break;
        }
        trickle(&mut busy, b"x", Duration::from_millis(300), Duration::ZERO);
        std::thread::sleep(Duration::from_millis(300));
    }
    assert_eq!(closed, 20, "silent connections closed by the server");
    // Still there after 3 s more of trickling (it reads its echoes as it goes).
    assert_eq!(
        trickle(
            &mut busy,
            b"x",
            Duration::from_millis(300),
            Duration::from_secs(3)
        ),
        0,
        "the trickling connection was closed"
    );

    let r = run_json(&["echo", &addr, "-n", "1000", "-c", "2", "-t", "1"]);
    r.assert_clean(1000);
    drop(busy);

    let last = server.stop_final_line();
    assert!(
        last.contains("timeouts header 0 idle 20 held full 0"),
        "{last}"
    );
}

#[test]
fn worker_processes_get_the_timeouts() {
    let mut server = Served::start(&["--processes", "2", "--threads", "1", "--idle-timeout", "1s"]);
    let addr = server.addr();
    let mut silent: Vec<TcpStream> = (0..10).map(|_| connect(&addr)).collect();
    assert!(
        wait_until(CLOSE_WITHIN, || silent
            .iter_mut()
            .all(|s| closed_by_server(s))),
        "the worker processes did not close silent connections"
    );
    let r = run_json(&["echo", &addr, "-n", "500", "-c", "2", "-t", "1"]);
    r.assert_clean(500);
    let last = server.stop_final_line();
    assert!(
        last.contains("timeouts header 0 idle 10 held full 0"),
        "{last}"
    );
}

/// `wirebench serve PROTOCOL EXTRA` on the loop `loop_` (`WIREBENCH_SERVER_LOOP`; "":
/// the default, io_uring).
pub(crate) fn served_on(loop_: &str, protocol: &str, extra: &[&str]) -> Served {
    let ready = format!("wirebench serve {protocol}: listening on");
    let var = format!("WIREBENCH_SERVER_LOOP={loop_}");
    let mut last = String::new();
    // The port may be taken between choosing and binding: try a few.
    for _ in 0..5 {
        let port = free_port();
        let listen = format!("127.0.0.1:{port}");
        let mut args = vec![var.as_str(), bin(), "serve", protocol, "--listen", &listen];
        args.extend_from_slice(extra);
        let mut proc = Proc::spawn("env", &args, false);
        if let Some(banner) = proc.wait_line(&ready, Duration::from_secs(20)) {
            return Served { proc, port, banner };
        }
        proc.kill();
        last = format!("stdout:\n{}\nstderr:\n{}", proc.stdout(), proc.stderr());
        if !last.contains("already in use") {
            break;
        }
    }
    panic!("`serve {protocol}` on loop {loop_:?} did not start\n{last}");
}

/// Sends `text` on `s` and reads exactly `want.len()` bytes back.
fn ask(s: &mut TcpStream, text: &[u8], want: &[u8]) {
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(text).unwrap();
    let mut got = vec![0; want.len()];
    s.read_exact(&mut got).expect("the server's reply");
    assert_eq!(got, want);
}

/// A Redis command that never ends, trickled a byte at a time, keeps the idle timeout
/// away: --header-timeout closes it (an unfinished request is a head), on either
/// loop, while a connection that sends nothing, and whole commands, are left alone.
#[test]
fn trickled_redis_commands_hit_the_header_timeout_on_either_loop() {
    for loop_ in ["", "epoll"] {
        let mut server = served_on(
            loop_,
            "redis",
            &["--threads", "1", "--header-timeout", "1s"],
        );
        let addr = server.addr();
        let mut quiet = connect(&addr);
        let mut loris: Vec<TcpStream> = (0..20).map(|_| connect(&addr)).collect();
        // A SET whose value is announced at 1 MB and arrives a byte per 300 ms.
        let set = b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1000000\r\naaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
        let closed = trickle(&mut loris, set, Duration::from_millis(300), CLOSE_WITHIN);
        assert_eq!(
            closed, 20,
            "loop {loop_:?}: trickling connections closed by the server"
        );
        // Whole commands, on the connection that waited in silence and on a new one.
        ask(&mut quiet, b"PING\r\n", b"+PONG\r\n");
        ask(&mut connect(&addr), b"*1\r\n$4\r\nPING\r\n", b"+PONG\r\n");
        drop(quiet);
        let last = server.stop_final_line();
        assert!(
            last.contains(" accepts 22 closes 22 ")
                && last.contains("timeouts header 20 idle 0 held full 0"),
            "loop {loop_:?}: {last}"
        );
    }
}
