//! The server's two loops (io_uring, the default for plain TCP; epoll with
//! `WIREBENCH_SERVER_LOOP=epoll`): which one a server runs on, read from its
//! descriptors, and that both give the same exact counts, keep every byte in order
//! under backpressure, and keep serving others while one peer does not read.

use crate::common::*;
use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// `wirebench serve PROTO` with `WIREBENCH_SERVER_LOOP=loop_` ("" = the default, io_uring).
fn serve(proto: &str, loop_: &str) -> (Proc, String) {
    serve_with(proto, loop_, &[])
}

fn serve_with(proto: &str, loop_: &str, extra: &[&str]) -> (Proc, String) {
    let port = free_port();
    let listen = format!("127.0.0.1:{port}");
    let var = format!("WIREBENCH_SERVER_LOOP={loop_}");
    let mut args = vec![
        var.as_str(),
        bin(),
        "serve",
        proto,
        "--listen",
        &listen,
        "--threads",
        "1",
    ];
    args.extend_from_slice(extra);
    let mut p = Proc::spawn("env", &args, false);
    let ready = format!("wirebench serve {proto}: listening on");
    assert!(
        p.wait_line(&ready, Duration::from_secs(20)).is_some(),
        "serve {proto} did not start: {}",
        p.stderr()
    );
    (p, listen)
}

/// The kinds of anonymous descriptors a process holds ("io_uring", "eventpoll", ...),
/// in every thread's table (a server thread has a table of its own, `sys::fd_table`).
fn anon_kinds(pid: u32) -> Vec<String> {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task"))
        .into_iter()
        .flatten();
    let mut v: Vec<String> = tasks
        .flatten()
        .filter_map(|t| std::fs::read_dir(t.path().join("fd")).ok())
        .flat_map(|d| d.flatten())
        .filter_map(|e| std::fs::read_link(e.path()).ok())
        .filter_map(|l| {
            let s = l.to_string_lossy().to_string();
            s.strip_prefix("anon_inode:[")
                .map(|k| k.trim_end_matches(']').to_string())
        })
        .collect();
    v.sort();
    v.dedup();
    v
}

/// Stops the server; its final counters line.
fn stop(p: &mut Proc) -> String {
    p.terminate();
    assert_eq!(p.finish(Duration::from_secs(30)), 0, "{}", p.stderr());
    p.stdout()
        .lines()
        .find(|l| l.contains("; final: accepts "))
        .unwrap_or_else(|| panic!("no final line: {}", p.stdout()))
        .to_string()
}

/// The counters of a final line, without `reads` (how bytes fold into reads is the
/// loop's and the kernel's, not a count of anything the peer did).
fn counts(final_line: &str) -> String {
    let tail = final_line.split("; final: ").nth(1).unwrap_or("");
    let words: Vec<&str> = tail.split(' ').collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < words.len() {
        if words[i] == "reads" {
            i += 2;
            continue;
        }
        out.push(words[i]);
        i += 1;
    }
    out.join(" ")
}

#[test]
fn serve_http_and_echo_run_on_io_uring_with_the_counts_of_the_epoll_loop() {
    for (proto, load) in [
        (
            "http",
            vec!["http", "-c", "20", "-n", "20000", "--pipeline", "4"],
        ),
        (
            "echo",
            vec![
                "echo",
                "-c",
                "10",
                "-n",
                "50000",
                "--pipeline",
                "16",
                "--size",
                "300",
            ],
        ),
    ] {
        let mut seen = Vec::new();
        for (loop_, kind) in [("", "io_uring"), ("epoll", "eventpoll")] {
            let (mut p, listen) = serve(proto, loop_);
            // The banner comes before the thread has made its ring or epoll.
            let pid = p.pid();
            let has = || anon_kinds(pid).iter().any(|k| k == kind);
            let seen_kind = wait_until(Duration::from_secs(10), has);
            assert!(
                seen_kind,
                "serve {proto} with loop {loop_:?}: {:?}",
                anon_kinds(pid)
            );
            let target = if proto == "http" {
                format!("http://{listen}/")
            } else {
                listen.clone()
            };
            let mut args = vec![load[0], target.as_str()];
            args.extend_from_slice(&load[1..]);
            args.extend_from_slice(&["-t", "1"]);
            let out = run_json(&args);
            let n: u64 = load[load.iter().position(|a| *a == "-n").unwrap() + 1]
                .parse()
                .unwrap();
            out.assert_clean(n);
            let last = stop(&mut p);
            assert!(
                last.contains(&format!(" closes {}", out.u("/totals/connections"))),
                "{last}"
            );
            // The summary names the loop the descriptors showed.
            let named = if loop_.is_empty() {
                "io_uring"
            } else {
                "epoll"
            };
            assert!(
                last.contains(&format!("; loop: {named} x1; final: ")),
                "{last}"
            );
            seen.push(counts(&last));
        }
        assert_eq!(seen[0], seen[1], "serve {proto}: io_uring vs epoll");
    }
}

#[test]
fn a_paced_server_runs_on_the_epoll_loop_by_default() {
    // --delay needs the epoll loop's timers per connection: io_uring is not taken.
    let (mut p, listen) = serve_with("echo", "", &["--delay", "1ms"]);
    let pid = p.pid();
    assert!(
        wait_until(Duration::from_secs(10), || anon_kinds(pid)
            .iter()
            .any(|k| k == "eventpoll")),
        "{:?}",
        anon_kinds(pid)
    );
    assert!(
        !anon_kinds(pid).iter().any(|k| k == "io_uring"),
        "{:?}",
        anon_kinds(pid)
    );
    let mut c = TcpStream::connect(&listen).unwrap();
    let msg = pseudo_random_bytes(3, 1000);
    assert_eq!(echo_through(&mut c, &msg), msg);
    drop(c);
    let last = stop(&mut p);
    assert!(last.contains("bytes in 1,000 out 1,000"), "{last}");
    assert!(last.contains("; loop: epoll x1; final: "), "{last}");
}

/// Writes `data` on `s` while reading what comes back; returns what came back.
fn echo_through(s: &mut TcpStream, data: &[u8]) -> Vec<u8> {
    let mut w = s.try_clone().unwrap();
    let data2 = data.to_vec();
    let writer = std::thread::spawn(move || w.write_all(&data2).is_ok());
    let mut got = vec![0u8; data.len()];
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s.read_exact(&mut got).expect("read the echo back");
    assert!(writer.join().unwrap());
    got
}

#[test]
fn a_peer_that_stops_reading_is_paused_and_loses_no_byte_on_either_loop() {
    for loop_ in ["", "epoll"] {
        let (mut p, listen) = serve("echo", loop_);
        // Fill: write without reading until the server stops taking bytes (it stopped
        // reading this connection) or 64 MiB, whichever comes first.
        let mut a = TcpStream::connect(&listen).unwrap();
        a.set_nonblocking(true).unwrap();
        let chunk = pseudo_random_bytes(7, 64 * 1024);
        // The stream is `chunk` repeated: a short write goes on where it stopped.
        let mut written = 0usize;
        let mut stalled_since: Option<Instant> = None;
        while written < 64 << 20 {
            match a.write(&chunk[written % chunk.len()..]) {
                Ok(n) => {
                    written += n;
                    stalled_since = None;
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => {
                    let t = *stalled_since.get_or_insert_with(Instant::now);
                    if t.elapsed() > Duration::from_millis(500) {
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(5));
                }
                Err(e) => panic!("write: {e}"),
            }
        }
        assert!(
            written < 64 << 20,
            "loop {loop_:?}: the server read 64 MiB it could not send back"
        );
        // Meanwhile another client is served, exactly.
        let mut b = TcpStream::connect(&listen).unwrap();
        let msg = pseudo_random_bytes(9, 100_000);
        assert_eq!(echo_through(&mut b, &msg), msg, "loop {loop_:?}");
        // Now read everything back: every byte, in order.
        a.set_nonblocking(false).unwrap();
        a.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        let mut back = vec![0u8; written];
        a.read_exact(&mut back)
            .expect("the paused connection's bytes");
        for (i, c) in back.chunks(chunk.len()).enumerate() {
            // Not assert_eq!: a 64 KiB dump helps no one.
            assert!(c == &chunk[..c.len()], "loop {loop_:?}: chunk {i} differs");
        }
        drop((a, b));
        let last = stop(&mut p);
        let expect = format!(
            "bytes in {} out {}",
            fmt(written as u64 + 100_000),
            fmt(written as u64 + 100_000)
        );
        assert!(
            last.contains(&expect),
            "loop {loop_:?}: {last} (want {expect})"
        );
    }
}

/// 1234567 -> "1,234,567", as the final line prints counts.
fn fmt(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// A free port below the ephemeral range (32768-60999 here): a listener lingering on
/// such a port blocks a rebind every time (one in the ephemeral range only sometimes).
fn free_port_below_ephemeral() -> u16 {
    let first = 21_000 + (std::process::id() % 8_000) as u16;
    (first..32_000)
        .chain(21_000..first)
        .find(|&p| std::net::TcpListener::bind(("127.0.0.1", p)).is_ok())
        .expect("a free port in 21000-32000")
}

/// A stopped server has let go of its port by the time it exits, on either loop: the
/// same server restarted on the same port listens at once. (The io_uring loop's
/// multishot accept used to end in a kernel worker after the exit, holding the
/// listener: every restart right after the exit failed.)
#[test]
fn a_stopped_server_frees_its_port_before_it_exits_on_either_loop() {
    for loop_ in ["", "epoll"] {
        let listen = format!("127.0.0.1:{}", free_port_below_ephemeral());
        let var = format!("WIREBENCH_SERVER_LOOP={loop_}");
        let args = [
            &var,
            bin(),
            "serve",
            "echo",
            "--listen",
            &listen,
            "--threads",
            "1",
        ];
        for attempt in 0..4 {
            let mut p = Proc::spawn("env", &args, false);
            assert!(
                p.wait_line(
                    "wirebench serve echo: listening on",
                    Duration::from_secs(20)
                )
                .is_some(),
                "loop {loop_:?}, start {attempt} on {listen}: {}",
                p.stderr()
            );
            // Settled into its wait first, as a server that served is.
            std::thread::sleep(Duration::from_millis(300));
            p.terminate();
            assert_eq!(p.finish(Duration::from_secs(20)), 0, "{}", p.stderr());
        }
    }
}
