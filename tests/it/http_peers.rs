//! `wirebench serve http` under real clients: wrk, ab (GET and POST echo), h2load
//! over HTTP/1.1, curl for exact bytes; malformed requests get 400 and a close while
//! other clients go on.

use crate::common::*;
use crate::http_support::*;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

fn run(program: &str, args: &[&str]) -> (i32, String, String) {
    let mut p = Proc::spawn(program, args, false);
    let code = p.finish(RUN_LIMIT);
    (code, p.stdout(), p.stderr())
}

/// The number after `key` on the line that starts with it ("Complete requests:      1000").
fn field(out: &str, key: &str) -> String {
    out.lines()
        .find_map(|l| l.trim_start().strip_prefix(key))
        .unwrap_or_else(|| panic!("no '{key}' in:\n{out}"))
        .trim()
        .to_string()
}

#[test]
fn ab_get_and_post_echo() {
    if !have("ab") {
        return;
    }
    let s = ServeHttp::start(&["--threads", "1"]);
    let (code, out, err) = run("ab", &["-k", "-n", "2000", "-c", "10", &s.url("/")]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert_eq!(field(&out, "Complete requests:"), "2000");
    assert_eq!(field(&out, "Failed requests:"), "0");
    assert!(!out.contains("Non-2xx responses"), "{out}");
    assert_eq!(
        field(&out, "HTML transferred:"),
        "10000 bytes",
        "2000 x hello"
    );

    let body = TempPath::new("ab-body", ".txt");
    let data = pseudo_random_bytes(7, 3000);
    std::fs::write(body.path(), &data).unwrap();
    let (code, out, err) = run(
        "ab",
        &[
            "-k",
            "-n",
            "500",
            "-c",
            "5",
            "-p",
            body.s(),
            "-T",
            "text/plain",
            &s.url("/echo"),
        ],
    );
    assert_eq!(code, 0, "{out}\n{err}");
    assert_eq!(field(&out, "Complete requests:"), "500");
    assert_eq!(field(&out, "Failed requests:"), "0", "{out}");
    assert_eq!(
        field(&out, "HTML transferred:"),
        "1500000 bytes",
        "500 echoes of 3000 bytes"
    );
    let line = s.stop();
    assert_eq!(stat(&line, "requests"), 2500, "{line}");
}

#[test]
fn wrk_gets_no_errors() {
    if !have("wrk") {
        return;
    }
    let s = ServeHttp::start(&["--threads", "1"]);
    // With the suite's script, so its parser checks real wrk output.
    let lua = TempPath::new("wrk", ".lua");
    std::fs::write(
        lua.path(),
        wirebench::proto::http::gen::wrk::script("GET", 0),
    )
    .unwrap();
    let (code, out, err) = run(
        "wrk",
        &[
            "-t1",
            "-c20",
            "-d1s",
            "--latency",
            "-s",
            lua.s(),
            &s.url("/"),
        ],
    );
    assert_eq!(code, 0, "{out}\n{err}");
    // wrk's responses = its timed ones (the histogram, correction taken out) + timeouts.
    let parsed = wirebench::proto::http::gen::wrk::parse(&out, 0).unwrap();
    assert_eq!(
        parsed.accounting,
        wirebench::suite::gen::external::Accounting::Holds,
        "{out}"
    );
    assert!(!out.contains("Socket errors"), "{out}");
    assert!(!out.contains("Non-2xx"), "{out}");
    let n: u64 = out
        .lines()
        .find_map(|l| l.trim().split_once(" requests in "))
        .map(|(n, _)| n.parse().unwrap())
        .unwrap_or_else(|| panic!("{out}"));
    assert!(n > 100, "{out}");
    assert_eq!(parsed.ok, n);
    let line = s.stop();
    // wrk leaves out what was in flight when it stopped (at most one per connection).
    let served = stat(&line, "requests");
    assert!((n..=n + 20).contains(&served), "wrk {n}, server {served}");
}

#[test]
fn h2load_h1_counts_and_bytes() {
    if !have("h2load") {
        return;
    }
    let s = ServeHttp::start(&["--threads", "1"]);
    let (code, out, err) = run(
        "h2load",
        &["--h1", "-n", "3000", "-c", "10", &s.url("/bytes/1000")],
    );
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        out.contains("requests: 3000 total, 3000 started, 3000 done, 3000 succeeded, 0 failed, 0 errored, 0 timeout"),
        "{out}"
    );
    assert!(
        out.contains("status codes: 3000 2xx, 0 3xx, 0 4xx, 0 5xx"),
        "{out}"
    );
    assert!(
        out.contains("(3000000) data"),
        "3000 x 1000 body bytes:\n{out}"
    );
    let line = s.stop();
    assert_eq!(stat(&line, "requests"), 3000, "{line}");
}

#[test]
fn curl_gets_exact_bytes() {
    if !have("curl") {
        return;
    }
    let s = ServeHttp::start(&["--threads", "1"]);
    let (code, out, _) = run("curl", &["-s", &s.url("/")]);
    assert_eq!((code, out.as_str()), (0, "hello"));

    // POST echo with a binary body, by Content-Length and chunked, HTTP/1.1 and 1.0.
    let file = TempPath::new("curl-body", ".bin");
    let data = pseudo_random_bytes(11, 200_000);
    std::fs::write(file.path(), &data).unwrap();
    let at = format!("@{}", file.s());
    for extra in [
        &[][..],
        &["-H", "Transfer-Encoding: chunked"][..],
        &["--http1.0"][..],
    ] {
        let out_file = TempPath::new("curl-out", ".bin");
        let mut args = vec!["-s", "-o", out_file.s(), "--data-binary", &at];
        args.extend_from_slice(extra);
        let url = s.url("/echo");
        args.push(&url);
        let (code, _, err) = run("curl", &args);
        assert_eq!(code, 0, "{extra:?}: {err}");
        let got = std::fs::read(out_file.path()).unwrap();
        assert!(
            got == data,
            "{extra:?}: echoed {} bytes, sent {}",
            got.len(),
            data.len()
        );
    }
    // GET /bytes/N: exactly N bytes of the pattern.
    let out_file = TempPath::new("curl-bytes", ".bin");
    let (code, _, _) = run("curl", &["-s", "-o", out_file.s(), &s.url("/bytes/100000")]);
    assert_eq!(code, 0);
    let got = std::fs::read(out_file.path()).unwrap();
    assert_eq!(got.len(), 100_000);
    assert!(got
        .iter()
        .enumerate()
        .all(|(i, b)| *b == b'a' + (i % 26) as u8));
    // Headers: Content-Type text/plain on the echo.
    let (_, out, _) = run("curl", &["-s", "-i", "--data-binary", "x", &s.url("/")]);
    assert!(out.contains("Content-Type: text/plain\r\n"), "{out}");
    let line = s.stop();
    assert_eq!(stat(&line, "requests"), 6, "{line}");
}

fn read_to_close(s: &mut TcpStream) -> Vec<u8> {
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    out
}

#[test]
fn malformed_requests_get_400_and_a_close_while_others_go_on() {
    let s = ServeHttp::start(&["--threads", "1", "--max-header", "1k", "--max-body", "10k"]);
    // A well-behaved keep-alive connection, opened first and used throughout.
    let mut good = TcpStream::connect(s.addr()).unwrap();
    good.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let ask = |good: &mut TcpStream| {
        good.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            .unwrap();
        let mut buf = Vec::new();
        let mut b = [0u8; 1024];
        while !buf.ends_with(b"hello") {
            let n = good.read(&mut b).unwrap();
            assert!(n > 0, "the good connection was closed");
            buf.extend_from_slice(&b[..n]);
        }
    };
    ask(&mut good);
    for (bad, status) in [
        (&b"NOT HTTP AT ALL\r\n\r\n"[..], "400"),
        (b"GET / HTTP/1.1\r\nContent-Length: zz\r\n\r\n", "400"),
        (b"POST / HTTP/1.1\r\nContent-Length: 20000\r\n\r\n", "413"),
        (
            &[
                b"GET / HTTP/1.1\r\nX: ".as_slice(),
                &[b'a'; 2000],
                b"\r\n\r\n",
            ]
            .concat(),
            "431",
        ),
    ] {
        let mut c = TcpStream::connect(s.addr()).unwrap();
        c.write_all(bad).unwrap();
        let reply = String::from_utf8_lossy(&read_to_close(&mut c)).into_owned();
        assert!(reply.starts_with(&format!("HTTP/1.1 {status} ")), "{reply}");
        assert!(reply.contains("Connection: close\r\n"), "{reply}");
        ask(&mut good);
    }
    let line = s.stop();
    assert_eq!(stat(&line, "requests"), 5, "{line}");
    assert_eq!(stat(&line, "accepts"), 5, "{line}");
}
