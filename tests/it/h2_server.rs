//! `wirebench serve http` over HTTP/2 under real clients: h2load and curl by prior
//! knowledge (h2c on the HTTP/1.1 port) and over TLS by ALPN, counted exactly on
//! both sides; hostile clients (tests/fixtures/h2_hostile_clients.py, raw sockets) each end
//! their connection with their own counted reason, memory bounded, while a clean
//! h2load load beside them is served whole.

use crate::common::*;
use crate::http_support::*;
use std::time::Duration;

fn run(program: &str, args: &[&str]) -> (i32, String, String) {
    let mut p = Proc::spawn(program, args, false);
    let code = p.finish(RUN_LIMIT);
    (code, p.stdout(), p.stderr())
}

/// Stops the server; its final counters line and its `h2:` line.
fn stop(mut s: ServeHttp) -> (String, String) {
    s.proc.terminate();
    let code = s.proc.finish(Duration::from_secs(10));
    let out = s.proc.stdout();
    assert_eq!(code, 0, "serve http exit\n{out}\n{}", s.proc.stderr());
    let line = |key: &str| {
        out.lines()
            .rfind(|l| l.contains(key))
            .unwrap_or_else(|| panic!("no '{key}' line in:\n{out}"))
            .to_string()
    };
    (line("final: "), line("final h2: "))
}

/// h2load's own line of what it counted, exact.
fn h2load_done(out: &str, n: u64) {
    let want = format!(
        "requests: {n} total, {n} started, {n} done, {n} succeeded, 0 failed, 0 errored, 0 timeout"
    );
    assert!(out.contains(&want), "{want}\n{out}");
    assert!(
        out.contains(&format!("status codes: {n} 2xx, 0 3xx, 0 4xx, 0 5xx")),
        "{out}"
    );
}

#[test]
fn h2load_and_curl_by_prior_knowledge_count_exactly() {
    if !have("h2load") || !have("curl") {
        return;
    }
    let s = ServeHttp::start(&["--threads", "1"]);
    let (code, out, err) = run(
        "h2load",
        &["-n", "20000", "-c", "10", "-m", "10", &s.url("/")],
    );
    assert_eq!(code, 0, "{out}\n{err}");
    h2load_done(&out, 20_000);
    assert!(out.contains("(100000) data"), "20000 x hello:\n{out}");

    // Bodies past the default 64 KiB windows, on 10 streams at once.
    let (code, out, err) = run(
        "h2load",
        &["-n", "200", "-c", "2", "-m", "10", &s.url("/bytes/100000")],
    );
    assert_eq!(code, 0, "{out}\n{err}");
    h2load_done(&out, 200);
    assert!(out.contains("(20000000) data"), "{out}");

    // Echo: h2load uploads a 30,000-byte body per request.
    let body = TempPath::new("h2-body", ".bin");
    std::fs::write(body.path(), pseudo_random_bytes(3, 30_000)).unwrap();
    let (code, out, err) = run(
        "h2load",
        &[
            "-n",
            "300",
            "-c",
            "3",
            "-m",
            "5",
            "-d",
            body.s(),
            &s.url("/echo"),
        ],
    );
    assert_eq!(code, 0, "{out}\n{err}");
    h2load_done(&out, 300);
    assert!(out.contains("(9000000) data"), "300 x 30000 echoed:\n{out}");

    let (code, got, _) = run(
        "curl",
        &[
            "-s",
            "--http2-prior-knowledge",
            "-w",
            " %{http_version}",
            &s.url("/bytes/30"),
        ],
    );
    assert_eq!(
        (code, got.as_str()),
        (0, "abcdefghijklmnopqrstuvwxyzabcd 2")
    );
    // A 3 MB binary echo, byte for byte, both windows given back as it flows.
    let file = TempPath::new("h2-curl", ".bin");
    let data = pseudo_random_bytes(5, 3_000_000);
    std::fs::write(file.path(), &data).unwrap();
    let out_file = TempPath::new("h2-curl-out", ".bin");
    let at = format!("@{}", file.s());
    let (code, _, err) = run(
        "curl",
        &[
            "-s",
            "--http2-prior-knowledge",
            "--data-binary",
            &at,
            "-o",
            out_file.s(),
            &s.url("/echo"),
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        std::fs::read(out_file.path()).unwrap() == data,
        "echo differs"
    );

    let (line, h2) = stop(s);
    assert_eq!(stat(&line, "requests"), 20_000 + 200 + 300 + 2, "{line}");
    assert_eq!(stat(&h2, "connections"), 10 + 2 + 3 + 2, "{h2}");
}

#[test]
fn h2_over_tls_is_chosen_by_alpn() {
    if !have("h2load") || !have("curl") {
        return;
    }
    let s = ServeHttp::start(&["--threads", "1", "--tls"]);
    // The server writes this line before it listens, but the thread reading its stderr
    // may not have taken it in yet when the port answers (on a loaded machine it had
    // not: "no certificate path in:" and nothing after).
    wait_until(Duration::from_secs(30), || {
        s.proc.stderr().contains("written to ")
    });
    let err = s.proc.stderr();
    let ca = err
        .split("written to ")
        .nth(1)
        .and_then(|r| r.split(',').next())
        .unwrap_or_else(|| panic!("no certificate path in:\n{err}"))
        .to_string();
    let url = |p: &str| format!("https://127.0.0.1:{}{p}", s.port);
    let (code, got, e) = run(
        "curl",
        &[
            "-s",
            "--http2",
            "--cacert",
            &ca,
            "-w",
            " %{http_version}",
            &url("/bytes/5"),
        ],
    );
    assert_eq!((code, got.as_str()), (0, "abcde 2"), "{e}");
    let (code, got, e) = run(
        "curl",
        &[
            "-s",
            "--http1.1",
            "--cacert",
            &ca,
            "-w",
            " %{http_version}",
            &url("/"),
        ],
    );
    assert_eq!((code, got.as_str()), (0, "hello 1.1"), "{e}");
    let (code, out, e) = run("h2load", &["-n", "2000", "-c", "4", "-m", "10", &url("/")]);
    assert_eq!(code, 0, "{out}\n{e}");
    assert!(out.contains("Application protocol: h2"), "{out}");
    h2load_done(&out, 2000);
    let (line, h2) = stop(s);
    assert_eq!(stat(&line, "requests"), 2002, "{line}");
    assert_eq!(stat(&h2, "connections"), 1 + 4, "{h2}");
}

/// Every hostile case with the GOAWAY code it gets (RFC 9113 7) and the server's
/// reason it counts under.
const HOSTILE: [(&str, u64, &str); 7] = [
    ("frame_size", 0x6, "frame_size"),
    ("continuation", 0xb, "continuation_flood"),
    ("hpack", 0x9, "hpack"),
    ("hpack_cut", 0x9, "hpack"),
    ("stream_backwards", 0x1, "stream_id"),
    ("rapid_reset", 0xb, "rapid_reset"),
    ("window_zero", 0xb, "window_stall"),
];

#[test]
fn hostile_clients_end_with_their_own_reasons_beside_a_clean_load() {
    if !have("h2load") || !have("python3") {
        return;
    }
    let s = ServeHttp::start(&["--threads", "1", "--h2-window-timeout", "1s"]);
    let port = s.port.to_string();
    let mut clean = Proc::spawn(
        "h2load",
        &["-n", "30000", "-c", "4", "-m", "10", &s.url("/")],
        false,
    );
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/h2_hostile_clients.py"
    );
    let mut args = vec![script, port.as_str()];
    args.extend(HOSTILE.iter().map(|h| h.0));
    let mut hostile = Proc::spawn("python3", &args, false);
    let mut peak = 0;
    wait_until(RUN_LIMIT, || {
        peak = peak.max(s.proc.peak_rss());
        hostile.exited() && clean.exited()
    });
    assert_eq!(hostile.finish(RUN_LIMIT), 0, "{}", hostile.stderr());
    assert_eq!(clean.finish(RUN_LIMIT), 0, "{}", clean.stderr());
    h2load_done(&clean.stdout(), 30_000);
    let seen: serde_json::Value = serde_json::from_str(hostile.stdout().trim())
        .unwrap_or_else(|_| panic!("not JSON: {}", hostile.stdout()));
    for (case, code, _) in HOSTILE {
        assert_eq!(seen[case]["ended"], true, "{case}: {seen}");
        // A GOAWAY read before the server's close reset the connection is its code.
        let got = &seen[case]["goaway"];
        assert!(
            got.is_null() || got.as_u64() == Some(code),
            "{case}: {seen}"
        );
    }
    peak = peak.max(s.proc.peak_rss());
    assert!(peak < 64 << 20, "server peak RSS {peak} bytes");
    let (line, h2) = stop(s);
    // The clean load, the rapid reset's 1,001 streams answered before their resets,
    // and stream 5 of the backwards case.
    assert_eq!(stat(&line, "requests"), 30_000 + 1001 + 1, "{line}");
    for (_, _, reason) in HOSTILE {
        let cases = HOSTILE.iter().filter(|h| h.2 == reason).count() as u64;
        assert_eq!(stat(&h2, reason), cases, "{reason}: {h2}");
    }
    assert_eq!(stat(&h2, "client_resets"), 1001, "{h2}");
    assert_eq!(stat(&h2, "connections"), 4 + HOSTILE.len() as u64, "{h2}");
    for other in ["header_list", "flow_control", "protocol", "refused"] {
        assert_eq!(stat(&h2, other), 0, "{other}: {h2}");
    }
}
