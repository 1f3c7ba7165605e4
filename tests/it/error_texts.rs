//! Errors that show their words: what a real peer said when things failed, kept as a
//! bounded sample of texts with counts in the result and under the summary, merged by
//! `wirebench merge`; TLS failures as sentences that say what to do; and the
//! certificate `serve --tls` generates, trusted by foreign clients through its file.
//! (Redis, WebSocket and AMQP closes: in redis.rs, ws_peers.rs and amqp_peers.rs, beside
//! their real servers.)

use crate::common::*;
use serde_json::{json, Value};
use std::time::Duration;

/// A Python HTTP/1.1 server answering by path: /missing 404, /busy 503, /mixed the two
/// in turn (odd requests 404, even 503, over all connections), anything else 200.
/// The head and the body go out in two writes, as http.server writes them.
const PY_HTTP: &str = r#"
import http.server, sys, threading
lock = threading.Lock()
n = [0]
MISSING = (404, b"no such page here")
BUSY = (503, b"busy,\r\n  retry later")
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        if self.path == "/missing":
            code, body = MISSING
        elif self.path == "/busy":
            code, body = BUSY
        elif self.path == "/mixed":
            with lock:
                n[0] += 1
                k = n[0]
            code, body = MISSING if k % 2 else BUSY
        else:
            code, body = 200, b"ok"
        self.send_response(code)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *args):
        pass
s = http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H)
print("listening", flush=True)
s.serve_forever()
"#;

/// The Python server on a free port.
fn python_http() -> Option<(Proc, u16)> {
    if !have("python3") {
        return None;
    }
    let port = free_port();
    let mut p = Proc::spawn("python3", &["-c", PY_HTTP, &port.to_string()], false);
    assert!(
        p.wait_line("listening", Duration::from_secs(20)).is_some(),
        "the Python server did not start: {}",
        p.stderr()
    );
    Some((p, port))
}

/// `wirebench <args> --json FILE` with its summary on stdout (not quiet).
fn run_with_summary(args: &[&str]) -> RunOut {
    let file = TempPath::new("result", ".json");
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["--json", file.s()]);
    let mut p = Proc::wirebench(&all);
    let code = p.finish(Duration::from_secs(120));
    RunOut::of(&p, code, &file)
}

const MISSING: &str = "HTTP/1.1 404 Not Found: no such page here";
const BUSY: &str = "HTTP/1.1 503 Service Unavailable: busy, retry later";

#[test]
fn http_counts_each_status_code_and_shows_its_status_line_and_body() {
    let Some((_server, port)) = python_http() else {
        return;
    };
    let url = format!("http://127.0.0.1:{port}/mixed");
    let r = run_with_summary(&["http", &url, "-n", "100", "-t", "1", "-c", "2"]);
    assert_eq!(r.code, 1, "every answer is an error: {}", r.explain());
    let j = r.json();
    assert_eq!(
        j["status_codes"],
        json!({"404": 50, "503": 50}),
        "{}",
        r.explain()
    );
    assert_eq!(ju(j, "/status_classes/4xx"), 50);
    assert_eq!(j["errors"], json!({"status": 100}));
    assert_eq!(
        j["error_texts"],
        json!({"kept": [
            {"kind": "status", "text": MISSING, "count": 50},
            {"kind": "status", "text": BUSY, "count": 50},
        ], "other": 0})
    );
    // An answer is a reply, timed though not correct.
    assert_eq!(ju(j, "/latency_us/count"), 100, "{}", r.explain());
    assert!(schema_validator("result.schema.json").is_valid(j));
    for line in [
        "codes:        404 50, 503 50".to_string(),
        format!("error texts:  50 status: {MISSING}"),
        format!("              50 status: {BUSY}"),
    ] {
        assert!(
            r.stdout.contains(&format!("{line}\n")),
            "{line}\n{}",
            r.stdout
        );
    }
    assert!(!r.stdout.contains("latency (us): n/a"), "{}", r.stdout);
}

#[test]
fn merged_shards_sum_their_error_texts() {
    let Some((_server, port)) = python_http() else {
        return;
    };
    let dir = TempPath::new("error-texts-merge", "");
    std::fs::create_dir(dir.path()).expect("a temp dir");
    let url = format!("http://127.0.0.1:{port}/mixed");
    // Two shards of one run of 120 requests, one after the other: each sees 404 and
    // 503 in turn, 30 of each.
    for i in 0..2 {
        let file = dir.path().join(format!("s{i}.json"));
        let shard = format!("{i}/2");
        let mut p = Proc::wirebench(&[
            "http",
            &url,
            "-n",
            "120",
            "-t",
            "1",
            "-c",
            "2",
            "--shard",
            &shard,
            "--run-id",
            "texts",
            "--json",
            file.to_str().unwrap(),
            "-q",
        ]);
        assert_eq!(p.finish(Duration::from_secs(60)), 1, "{}", p.stderr());
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        assert_eq!(ju(&v, "/error_texts/kept/0/count"), 30, "{v}");
    }
    let merged = dir.path().join("m.json");
    let mut p = Proc::wirebench(&["merge", dir.s(), "-o", merged.to_str().unwrap(), "-q"]);
    let code = p.finish(Duration::from_secs(60));
    assert!(code <= 1, "{}\n{}", p.stdout(), p.stderr());
    let m: Value = serde_json::from_str(&std::fs::read_to_string(&merged).unwrap()).unwrap();
    assert_eq!(
        m["error_texts"],
        json!({"kept": [
            {"kind": "status", "text": MISSING, "count": 60},
            {"kind": "status", "text": BUSY, "count": 60},
        ], "other": 0})
    );
    assert_eq!(m["status_codes"], json!({"404": 60, "503": 60}));
    assert!(schema_validator("result.schema.json").is_valid(&m));
}

/// `openssl req` with `args`, in `dir`; true when it made the files.
fn openssl(dir: &TempPath, args: &str) -> bool {
    std::process::Command::new("sh")
        .args(["-c", &format!("cd {} && {args}", dir.s())])
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn a_ca_certificate_as_the_servers_own_is_said_in_words_with_what_to_do() {
    if !have("openssl") {
        return;
    }
    let dir = TempPath::new("tls-ca-true", "");
    std::fs::create_dir(dir.path()).expect("a temp dir");
    // openssl's defaults make a CA (basicConstraints CA:TRUE), as amqpprox_perf_tester's
    // README certificate is.
    assert!(openssl(
        &dir,
        "openssl req -x509 -newkey rsa:2048 -nodes -subj /CN=localhost -addext subjectAltName=DNS:localhost,IP:127.0.0.1 -keyout cakey.pem -out ca.pem"
    ));
    let ca = dir.path().join("ca.pem");
    let cakey = dir.path().join("cakey.pem");
    let (ca, cakey) = (ca.to_str().unwrap(), cakey.to_str().unwrap());
    let mut server = Served::start(&["--tls", "--cert", ca, "--key", cakey, "--threads", "1"]);
    let addr = server.addr();
    let r = run_with_summary(&[
        "echo",
        &addr,
        "--tls",
        "--ca",
        ca,
        "-n",
        "10",
        "-t",
        "1",
        "-c",
        "1",
        "--timeout",
        "1s",
    ]);
    assert_eq!(r.code, 1, "{}", r.explain());
    let sentence = format!(
        "TLS handshake with {addr}: the server's certificate is a CA certificate (basicConstraints CA:TRUE), which may sign server certificates but not be one: give the server a leaf certificate (e.g. {}) and pass it or its CA with --ca, or skip verification with --insecure",
        wirebench::net::tls_words::LEAF_HOWTO
    );
    assert!(
        r.stderr.contains(&format!("(first: {sentence})")),
        "{sentence}\n{}",
        r.explain()
    );
    let texts = &r.json()["error_texts"]["kept"];
    assert_eq!(texts[0]["kind"], "tls");
    let cut = texts[0]["text"].as_str().unwrap();
    assert!(
        cut.ends_with("...") && sentence.starts_with(&cut[..cut.len() - 3]),
        "{cut}"
    );
    assert_eq!(
        ju(&r.json()["error_texts"], "/kept/0/count"),
        r.u("/errors/tls")
    );
    assert_no_debug_text(&r.stdout);
    assert_no_debug_text(&r.stderr);
    server.stop_final_line();

    // The certificate the sentence says how to make works.
    assert!(openssl(&dir, wirebench::net::tls_words::LEAF_HOWTO));
    let cert = dir.path().join("cert.pem");
    let key = dir.path().join("key.pem");
    let (cert, key) = (cert.to_str().unwrap(), key.to_str().unwrap());
    let mut server = Served::start(&["--tls", "--cert", cert, "--key", key, "--threads", "1"]);
    let r = run_json(&[
        "echo",
        &server.addr(),
        "--tls",
        "--ca",
        cert,
        "-n",
        "100",
        "-t",
        "1",
        "-c",
        "2",
    ]);
    r.assert_clean(100);
    server.stop_final_line();
}

#[test]
fn tls_to_a_plain_server_says_so() {
    // An HTTP server answers the ClientHello with a 400: not TLS at all.
    let mut server = Served::start_as("http", &["--threads", "1"]);
    let url = format!("https://127.0.0.1:{}/", server.port);
    let args = [
        "-n",
        "10",
        "-t",
        "1",
        "-c",
        "1",
        "--timeout",
        "1s",
        "--insecure",
    ];
    let r = run_with_summary(&[&["http", url.as_str()][..], &args[..]].concat());
    assert_eq!(r.code, 1, "{}", r.explain());
    let want = format!(
        "TLS handshake with {}: the server's answer is not TLS (a plain-text server? then leave out --tls, or use http:// or ws://)",
        server.addr()
    );
    assert!(r.stderr.contains(&want), "{want}\n{}", r.explain());
    assert_no_debug_text(&r.stderr);
    server.stop_final_line();
    // An echo server sends the ClientHello back.
    let mut server = Served::start(&["--threads", "1"]);
    let r = run_with_summary(&[&["echo", server.addr().as_str(), "--tls"][..], &args[..]].concat());
    assert_eq!(r.code, 1, "{}", r.explain());
    let want = format!(
        "TLS handshake with {}: the server answered with a TLS ClientHello, this client's own sent back: it echoes, it is not a TLS server (leave out --tls)",
        server.addr()
    );
    assert!(r.stderr.contains(&want), "{want}\n{}", r.explain());
    assert_no_debug_text(&r.stderr);
    server.stop_final_line();
}

#[test]
fn serve_tls_writes_its_generated_certificate_for_foreign_clients() {
    if !have("openssl") || !have("curl") {
        return;
    }
    // serve echo --tls: openssl s_client and wirebench itself trust the file.
    let mut server = Served::start(&["--tls", "--threads", "1"]);
    let cert = certificate_file(&mut server);
    let s_client = std::process::Command::new("sh")
        .args([
            "-c",
            &format!(
                "echo | openssl s_client -connect {} -CAfile {cert} -verify_return_error -verify_hostname localhost",
                server.addr()
            ),
        ])
        .output()
        .expect("openssl s_client");
    let said = String::from_utf8_lossy(&s_client.stdout);
    assert!(
        s_client.status.success(),
        "{said}\n{}",
        String::from_utf8_lossy(&s_client.stderr)
    );
    assert!(said.contains("Verify return code: 0 (ok)"), "{said}");
    let r = run_json(&[
        "echo",
        &server.addr(),
        "--tls",
        "--ca",
        &cert,
        "-n",
        "200",
        "-t",
        "1",
        "-c",
        "2",
    ]);
    r.assert_clean(200);
    server.stop_final_line();
    assert!(
        !std::path::Path::new(&cert).exists(),
        "removed when the server stops"
    );

    // serve http --tls: curl trusts it too.
    let mut server = Served::start_as("http", &["--tls", "--threads", "1"]);
    let cert = certificate_file(&mut server);
    let out = std::process::Command::new("curl")
        .args([
            "-sS",
            "-o",
            "/dev/null",
            "-w",
            "%{http_code}",
            "--cacert",
            &cert,
        ])
        .arg(format!("https://localhost:{}/", server.port))
        .output()
        .expect("curl");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "200",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    server.stop_final_line();
}

/// The certificate file a `serve --tls` without `--cert` names on stderr.
fn certificate_file(server: &mut Served) -> String {
    let mut found = None;
    wait_until(Duration::from_secs(10), || {
        found = server
            .proc
            .stderr()
            .split_whitespace()
            .find(|w| w.ends_with("cert.pem") && w.starts_with('/'))
            .map(str::to_string);
        found.is_some()
    });
    let path =
        found.unwrap_or_else(|| panic!("no certificate file named:\n{}", server.proc.stderr()));
    assert!(std::path::Path::new(&path).is_file(), "{path}");
    path
}

/// No Rust debug text of an error: no `Some(`, no `Err(`, no `Other(`, no path `::`.
fn assert_no_debug_text(text: &str) {
    for debug in ["Some(", "Err(", "Other(", "OtherError", "Kind(", "::"] {
        assert!(!text.contains(debug), "debug text ({debug}) in:\n{text}");
    }
}

/// The source never puts an error's debug text in a message: `{e:?}` and its kin
/// outside tests. (Quoted strings, `{name:?}` of a &str, stay allowed.)
#[test]
fn no_error_is_formatted_with_debug_in_the_source() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut found = Vec::new();
    let mut stack = vec![root];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("src is readable").flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let name = path
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default();
            if !name.ends_with(".rs") || name.ends_with("tests.rs") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            // Tests sit at the end of a file, after `#[cfg(test)]`.
            let code = text.split("#[cfg(test)]").next().unwrap_or_default();
            for (i, line) in code.lines().enumerate() {
                for name in ["e", "err", "error", "why", "k", "kind", "cause", "other"] {
                    if line.contains(&format!("{{{name}:?}}")) {
                        found.push(format!("{}:{}: {}", path.display(), i + 1, line.trim()));
                    }
                }
            }
        }
    }
    assert!(
        found.is_empty(),
        "debug-formatted errors:\n{}",
        found.join("\n")
    );
}

#[test]
fn a_refused_connect_shows_its_errno_text() {
    // A loopback port nothing listens on, below the ephemeral range, so no
    // connection can be given it as its own source port and meet itself.
    let port = (20_000..30_000)
        .find(|p| std::net::TcpListener::bind(("127.0.0.1", *p)).is_ok())
        .expect("a free port");
    let addr = format!("127.0.0.1:{port}");
    let r = run_json(&["echo", &addr, "-n", "10", "-t", "1", "-c", "1"]);
    assert_eq!(r.code, 1, "{}", r.explain());
    assert_eq!(
        r.json()["error_texts"],
        json!({"kept": [{
            "kind": "connect_refused",
            "text": format!("connecting to {addr}: Connection refused (os error 111)"),
            "count": r.u("/totals/connect_errors"),
        }], "other": 0})
    );
}
