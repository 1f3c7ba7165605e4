//! WebSocket against peers that are not wirebench: Python's `websockets` library as a
//! server (plain, and pinging every 10 ms) and as a client, and `websocat` as a second
//! independent client, with exact counts on both sides. scripts/test.sh installs both
//! (python3-websockets from Debian; websocat built once into ~/.cache/wirebench).

use crate::common::*;
use std::path::{Path, PathBuf};
use std::time::Duration;

const PYTHON: &str = "/usr/bin/python3";

fn peer_script() -> String {
    format!("{}/tests/peers/ws_peer.py", env!("CARGO_MANIFEST_DIR"))
}

/// Python with `websockets`, or None (skipped, or a failure under CI=true).
fn python_websockets() -> Option<&'static str> {
    let ok = std::process::Command::new(PYTHON)
        .args(["-c", "import websockets"])
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        missing("Python's websockets library is not installed (scripts/test.sh installs python3-websockets)");
    }
    ok.then_some(PYTHON)
}

/// websocat on PATH or where scripts/test.sh builds it.
fn websocat() -> Option<PathBuf> {
    let cached = std::env::var_os("HOME")
        .map(|h| Path::new(&h).join(".cache/wirebench/websocat/bin/websocat"))
        .filter(|p| p.is_file());
    let found = cached.or_else(|| {
        std::env::var_os("PATH").and_then(|p| {
            std::env::split_paths(&p)
                .map(|d| d.join("websocat"))
                .find(|p| p.is_file())
        })
    });
    if found.is_none() {
        missing("websocat is not installed (scripts/test.sh builds it into ~/.cache/wirebench/websocat)");
    }
    found
}

/// The Python echo server on a free port; `ping_ms` 0: no pings.
fn python_server(python: &str, ping_ms: u32) -> (Proc, u16) {
    let port = free_port();
    let mut p = Proc::spawn(
        python,
        &[
            &peer_script(),
            "server",
            &port.to_string(),
            &ping_ms.to_string(),
        ],
        false,
    );
    assert!(
        p.wait_line("listening", Duration::from_secs(20)).is_some(),
        "the Python server did not start: {}",
        p.stderr()
    );
    (p, port)
}

/// SIGTERM, then the server's counts line: (messages, text, binary).
fn python_counts(p: Proc) -> (u64, u64, u64) {
    peer_counts(p, "messages ", Duration::from_secs(20))
}

#[test]
fn wirebench_ws_against_pythons_websockets_server_with_exact_counts() {
    let Some(py) = python_websockets() else {
        return;
    };
    let (server, port) = python_server(py, 0);
    let url = format!("ws://127.0.0.1:{port}/");
    let r = run_json(&[
        "ws",
        &url,
        "-n",
        "2000",
        "-t",
        "1",
        "-c",
        "4",
        "--pipeline",
        "4",
        "--size",
        "1..3000",
        "--fragment",
        "700",
        "--text",
    ]);
    r.assert_clean(2000);
    assert_eq!(r.u("/totals/sent"), 2000);
    assert_eq!(r.u("/ws/clean_closes"), r.u("/totals/connections"));
    // The server saw exactly the messages sent, all text (fragments reassembled).
    assert_eq!(python_counts(server), (2000, 2000, 0));
}

#[test]
fn a_server_pinging_every_10ms_changes_no_count_and_raises_no_error() {
    let Some(py) = python_websockets() else {
        return;
    };
    let (server, port) = python_server(py, 10);
    let url = format!("ws://127.0.0.1:{port}/");
    let r = run_json(&[
        "ws", &url, "-d", "1s", "-t", "1", "-c", "2", "--size", "100",
    ]);
    let sent = r.u("/totals/sent");
    r.assert_clean(sent);
    let pings = r.u("/ws/pings_answered");
    assert!(pings > 0, "no ping answered in 1 s: {}", r.explain());
    // Pings are events, never replies.
    assert_eq!(r.u("/totals/events"), pings + r.u("/ws/pongs"));
    assert_eq!(python_counts(server), (sent, 0, sent));
}

#[test]
fn pythons_websockets_client_against_serve_ws_with_exact_counts() {
    let Some(py) = python_websockets() else {
        return;
    };
    let mut s = Served::start_as("ws", &["--threads", "1"]);
    let url = format!("ws://{}/chat", s.addr());
    let script = peer_script();
    // 200 text messages, every other one in 3 fragments; then 100 binary ones.
    let mut text = Proc::spawn(
        py,
        &[&script, "client", &url, "200", "3000", "text", "3"],
        false,
    );
    assert_eq!(
        text.finish(RUN_LIMIT),
        0,
        "{}\n{}",
        text.stdout(),
        text.stderr()
    );
    assert_eq!(text.stdout().trim(), "ok 200 fragmented 100");
    let mut bin = Proc::spawn(py, &[&script, "client", &url, "100", "10", "binary"], false);
    assert_eq!(
        bin.finish(RUN_LIMIT),
        0,
        "{}\n{}",
        bin.stdout(),
        bin.stderr()
    );
    let last = s.stop_final_line();
    assert!(last.ends_with(" requests 300"), "{last}");
    let out = s.proc.stdout();
    let ws = out.lines().find(|l| l.contains("final ws: ")).unwrap();
    assert!(
        ws.contains(
            "2 upgrades, 300 messages (100 fragmented), 0 pings sent, 0 pongs, 2 clean closes"
        ),
        "{ws}"
    );
}

#[test]
fn websocat_against_serve_ws_with_exact_counts() {
    let Some(websocat) = websocat() else { return };
    let mut s = Served::start_as("ws", &["--threads", "1"]);
    let url = format!("ws://{}/", s.addr());
    let mut w = Proc::spawn(websocat.to_str().unwrap(), &["-t", &url], true);
    const N: usize = 500;
    {
        use std::io::Write;
        let stdin = w.stdin.as_mut().unwrap();
        for i in 0..N {
            writeln!(stdin, "message {i} {}", "x".repeat(i % 50)).unwrap();
        }
    }
    // Every line comes back before stdin closes (websocat then says goodbye).
    assert!(
        wait_until(Duration::from_secs(30), || w.stdout().lines().count() >= N),
        "{} lines back\n{}",
        w.stdout().lines().count(),
        w.stderr()
    );
    drop(w.stdin.take());
    w.finish(Duration::from_secs(20));
    let back = w.stdout();
    for (i, line) in back.lines().enumerate() {
        assert_eq!(line, format!("message {i} {}", "x".repeat(i % 50)));
    }
    assert_eq!(back.lines().count(), N);
    let last = s.stop_final_line();
    assert!(last.ends_with(&format!(" requests {N}")), "{last}");
}

/// A Python `websockets` server that echoes two messages of each connection, then
/// closes it with 1013 "try again later" when the third comes.
const PY_CLOSER: &str = r#"
import asyncio, sys, websockets
async def handler(ws, _path=None):
    n = 0
    async for msg in ws:
        n += 1
        if n == 3:
            await ws.close(code=1013, reason="try again later")
            return
        await ws.send(msg)
async def main():
    async with websockets.serve(handler, "127.0.0.1", int(sys.argv[1])):
        print("listening", flush=True)
        await asyncio.Future()
asyncio.run(main())
"#;

#[test]
fn a_servers_close_with_a_code_and_reason_shows_its_words() {
    let Some(py) = python_websockets() else {
        return;
    };
    let port = free_port();
    let mut server = Proc::spawn(py, &["-c", PY_CLOSER, &port.to_string()], false);
    assert!(
        server
            .wait_line("listening", Duration::from_secs(20))
            .is_some(),
        "{}",
        server.stderr()
    );
    let url = format!("ws://127.0.0.1:{port}/");
    // One connection, one message at a time: each connection echoes two, and the
    // third is in flight when the close comes, so 30 messages make 10 closes.
    let r = run_json(&["ws", &url, "-n", "30", "-t", "1", "-c", "1"]);
    assert_eq!(r.code, 1, "{}", r.explain());
    assert_eq!(r.u("/totals/ok"), 20, "{}", r.explain());
    assert_eq!(r.json()["errors"], serde_json::json!({"closed": 10}));
    assert_eq!(
        r.json()["error_texts"],
        serde_json::json!({"kept": [{
            "kind": "closed",
            "text": "the server closed with code 1013: try again later",
            "count": 10
        }], "other": 0})
    );
}
