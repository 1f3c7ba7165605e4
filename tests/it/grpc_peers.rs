//! gRPC against a peer that is not wirebench: Python's `grpcio` (PyPI; scripts/test.sh
//! installs it into ~/.cache/wirebench/grpcio) as a server with a generic handler
//! that counts every call, and as a client of `serve grpc`, with exact counts on both
//! sides; `serve grpc` refusing a 4 GiB length prefix with RESOURCE_EXHAUSTED.

use crate::common::*;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

fn peer_script() -> String {
    format!("{}/tests/peers/grpc_peer.py", env!("CARGO_MANIFEST_DIR"))
}

/// The Python that has grpcio: scripts/test.sh's venv, or None (skipped, or a
/// failure under CI=true).
fn python_grpcio() -> Option<PathBuf> {
    let venv = std::env::var_os("HOME")
        .map(|h| Path::new(&h).join(".cache/wirebench/grpcio/bin/python3"))
        .filter(|p| p.is_file());
    let ok = venv.as_ref().is_some_and(|py| {
        std::process::Command::new(py)
            .args(["-c", "import grpc"])
            .status()
            .is_ok_and(|s| s.success())
    });
    if !ok {
        missing("Python's grpcio is not installed (scripts/test.sh installs it into ~/.cache/wirebench/grpcio)");
    }
    venv.filter(|_| ok)
}

/// The grpcio server on a free port: echo (`code` 0) or that status with `message`.
fn python_server(py: &Path, code: u32, message: &str) -> (Proc, u16) {
    let port = free_port();
    let mut p = Proc::spawn(
        py.to_str().unwrap(),
        &[
            &peer_script(),
            "server",
            &port.to_string(),
            &code.to_string(),
            message,
        ],
        false,
    );
    assert!(
        p.wait_line("listening", Duration::from_secs(30)).is_some(),
        "the grpcio server did not start: {}",
        p.stderr()
    );
    (p, port)
}

/// SIGTERM, then the server's counts: (calls, ok, request bytes).
fn python_counts(p: Proc) -> (u64, u64, u64) {
    peer_counts(p, "calls ", Duration::from_secs(30))
}

/// The grpcio client: `count` calls of `method` with `size`-byte messages; its line.
fn python_client(py: &Path, target: &str, count: u64, method: &str, size: usize) -> (i32, String) {
    let mut p = Proc::spawn(
        py.to_str().unwrap(),
        &[
            &peer_script(),
            "client",
            target,
            &count.to_string(),
            method,
            &size.to_string(),
        ],
        false,
    );
    let code = p.finish(Duration::from_secs(120));
    (code, format!("{}{}", p.stdout(), p.stderr()))
}

/// The method the tests call: bench.Echo/Say, its message bench.Req.
fn proto() -> String {
    format!("{}/tests/peers/bench.proto", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn wirebench_grpc_against_grpcios_server_counts_exactly() {
    let Some(py) = python_grpcio() else { return };
    let (server, port) = python_server(&py, 0, "");
    let proto = proto();
    let target = format!("127.0.0.1:{port}");
    let r = run_json(&[
        "grpc",
        &target,
        "--call",
        "bench.Echo/Say",
        "--proto",
        &proto,
        "--data",
        r#"{"name": "ab", "n": 3}"#,
        "-n",
        "2000",
        "-t",
        "1",
        "-c",
        "4",
        "-m",
        "4",
        "-H",
        "x-test: 1",
        "--deadline",
        "5s",
    ]);
    r.assert_clean(2000);
    assert_eq!(r.json()["grpc_status"], serde_json::json!({"OK": 2000}));
    // The server counted every call once, each a 6-byte message (0a 02 'a' 'b' 10 03).
    assert_eq!(python_counts(server), (2000, 2000, 2000 * 6));
}

#[test]
fn a_non_ok_status_counts_under_its_code_with_its_message() {
    let Some(py) = python_grpcio() else { return };
    let (server, port) = python_server(&py, 14, "down for the test");
    let target = format!("127.0.0.1:{port}");
    let r = run_json(&[
        "grpc",
        &target,
        "--call",
        "bench.Echo/Say",
        "-n",
        "300",
        "-t",
        "1",
        "-c",
        "2",
        "-m",
        "3",
    ]);
    assert_eq!(r.code, 1, "{}", r.explain());
    assert_eq!(r.u("/totals/ok"), 0);
    assert_eq!(r.json()["errors"], serde_json::json!({"status": 300}));
    assert_eq!(
        r.json()["grpc_status"],
        serde_json::json!({"UNAVAILABLE": 300})
    );
    let texts = &r.json()["error_texts"];
    assert_eq!(
        texts["kept"][0]["text"], "UNAVAILABLE: down for the test",
        "{texts}"
    );
    assert_eq!(ju(texts, "/kept/0/count"), 300);
    assert!(
        r.stdout.contains("grpc-status:  UNAVAILABLE 300"),
        "{}",
        r.stdout
    );
    assert_eq!(python_counts(server), (300, 0, 0));
}

/// The server's final counters line and its `h2:` line.
fn stop(mut s: Served) -> (String, String) {
    s.proc.terminate();
    let code = s.proc.finish(Duration::from_secs(30));
    let out = s.proc.stdout();
    assert_eq!(code, 0, "serve grpc exit\n{out}\n{}", s.proc.stderr());
    let line = |key: &str| {
        out.lines()
            .rfind(|l| l.contains(key))
            .unwrap_or_else(|| panic!("no '{key}' line in:\n{out}"))
            .to_string()
    };
    (line("final: "), line("final h2: "))
}

#[test]
fn grpcios_client_and_wirebench_against_serve_grpc_count_exactly() {
    let Some(py) = python_grpcio() else { return };
    let s = Served::start_as("grpc", &["--threads", "1", "--max-message", "1k"]);
    let target = s.addr();
    let (code, out) = python_client(&py, &target, 500, "/bench.Any/Echo", 300);
    assert_eq!((code, out.trim()), (0, "ok 500"));
    let (code, out) = python_client(&py, &target, 50, "/grpc.health.v1.Health/Check", 0);
    assert_eq!((code, out.trim()), (0, "ok 50"));
    let r = run_json(&[
        "grpc", &target, "--call", "x.Y/Z", "-n", "3000", "-t", "1", "-c", "3", "-m", "8",
    ]);
    r.assert_clean(3000);
    assert_eq!(r.json()["grpc_status"], serde_json::json!({"OK": 3000}));
    // A message past --max-message: refused, the client told why.
    let (code, out) = python_client(&py, &target, 1, "/bench.Any/Echo", 2000);
    assert_eq!(code, 1, "{out}");
    assert!(out.starts_with("status RESOURCE_EXHAUSTED"), "{out}");
    let (last, h2) = stop(s);
    assert!(last.contains(" requests 3,550 "), "{last}");
    assert!(last.ends_with(" too large 1"), "{last}");
    assert!(h2.contains("body_too_large 1 "), "{h2}");
}

/// Every byte the server sends until it closes (or 10 s pass).
fn read_to_close(c: &mut std::net::TcpStream) -> Vec<u8> {
    c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        match c.read(&mut buf) {
            Ok(0) | Err(_) => return got,
            Ok(n) => got.extend_from_slice(&buf[..n]),
        }
    }
}

#[test]
fn a_4_gib_length_prefix_is_refused_and_the_connection_closed() {
    use wirebench::proto::h2::{frame::PREFACE, hpack, write};
    let s = Served::start_as("grpc", &["--threads", "1"]);
    let mut c = std::net::TcpStream::connect(s.addr()).unwrap();
    let mut out = PREFACE.to_vec();
    write::settings(&mut out, &[]);
    let mut block = Vec::new();
    hpack::encode(
        &[
            (b":method", b"POST"),
            (b":scheme", b"http"),
            (b":path", b"/a.B/C"),
            (b":authority", b"x"),
            (b"content-type", b"application/grpc"),
        ],
        &mut block,
    );
    write::headers(&mut out, 1, false, &block, 16_384);
    // Not compressed, 2^32 - 1 bytes to come, and the first 100 of them.
    let mut data = vec![0, 0xff, 0xff, 0xff, 0xff];
    data.extend_from_slice(&[7; 100]);
    write::data(&mut out, 1, false, &data);
    c.write_all(&out).unwrap();
    let got = read_to_close(&mut c);
    let has = |needle: &[u8]| got.windows(needle.len()).any(|w| w == needle);
    // The trailers: grpc-status 8 (a literal name), then a GOAWAY (type 7).
    assert!(has(b"\x0bgrpc-status\x018"), "{got:?}");
    assert!(has(
        b"request message larger than the server's --max-message"
    ));
    assert!(
        got.windows(4)
            .any(|w| w[3] == 7 && w[..3] == [0, 0, 8 + 33]),
        "no GOAWAY: {got:?}"
    );
    // Nothing was echoed.
    assert!(!has(&[7; 100]), "{got:?}");
    let (last, h2) = stop(s);
    assert!(!last.contains(" requests "), "{last}");
    assert!(last.ends_with(" too large 1"), "{last}");
    assert!(h2.contains("body_too_large 1 "), "{h2}");
}

/// ghz (a Go module) where scripts/test.sh installs it, or on PATH.
fn ghz() -> Option<PathBuf> {
    let cached = std::env::var_os("HOME")
        .map(|h| Path::new(&h).join(".cache/wirebench/ghz/bin/ghz"))
        .filter(|p| p.is_file());
    let found = cached.or_else(|| {
        std::env::var_os("PATH").and_then(|p| {
            std::env::split_paths(&p)
                .map(|d| d.join("ghz"))
                .find(|p| p.is_file())
        })
    });
    if found.is_none() {
        missing("ghz is not installed (scripts/test.sh builds it into ~/.cache/wirebench/ghz)");
    }
    found
}

#[test]
fn ghz_against_serve_grpc_counts_exactly() {
    let Some(ghz) = ghz() else { return };
    let s = Served::start_as("grpc", &["--threads", "1"]);
    let mut p = Proc::spawn(
        ghz.to_str().unwrap(),
        &[
            "--insecure",
            "--proto",
            &proto(),
            "--call",
            "bench.Echo/Say",
            "-d",
            r#"{"name": "ab", "n": 3}"#,
            "-n",
            "2000",
            "-c",
            "10",
            "--connections",
            "2",
            "-O",
            "json",
            &s.addr(),
        ],
        false,
    );
    let code = p.finish(Duration::from_secs(120));
    assert_eq!(code, 0, "{}\n{}", p.stdout(), p.stderr());
    let j: serde_json::Value = serde_json::from_str(&p.stdout()).expect("ghz's JSON");
    assert_eq!(j["count"], 2000, "{j}");
    assert_eq!(j["statusCodeDistribution"], serde_json::json!({"OK": 2000}));
    let (last, _) = stop(s);
    assert!(last.contains(" requests 2,000"), "{last}");
}
