//! TLS: the built-in server's own certificate, `serve echo --tls` with a self-signed
//! certificate, a real peer (openssl s_client), certificates from files, bad files.

use crate::common::*;
use std::io::Write;
use std::process::Command;
use std::time::Duration;

fn have_openssl() -> bool {
    let found = Command::new("openssl")
        .arg("version")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !found {
        // scripts/test.sh installs openssl, so CI always runs these parts.
        missing("openssl is not installed; the openssl parts of this test are skipped");
    }
    found
}

#[test]
fn builtin_server_with_verified_self_signed_certificate() {
    let r = run_json(&["echo", "--tls", "-n", "200", "-t", "1", "-c", "2"]);
    r.assert_clean(200);
    assert_eq!(r.u("/totals/connect_errors"), 0, "{}", r.explain());
    assert_eq!(r.u("/server/tls_failures"), 0, "{}", r.explain());
    assert_eq!(r.json()["config"]["tls"], true);
    // The server counts plaintext: the same bytes as the client.
    assert_eq!(r.u("/server/bytes_in"), r.u("/totals/bytes_sent"));
}

#[test]
fn serve_tls_self_signed_with_insecure_client_and_openssl() {
    let mut server = Served::start(&["--tls", "--threads", "1"]);
    assert!(server.banner.ends_with(", TLS"), "{}", server.banner);
    let fp = server
        .proc
        .wait_line("certificate SHA-256 fingerprint:", Duration::from_secs(10))
        .unwrap_or_else(|| panic!("no fingerprint line:\n{}", server.proc.stdout()));
    let hex = fp
        .trim_start_matches("certificate SHA-256 fingerprint:")
        .trim();
    assert_eq!(hex.split(':').count(), 32, "{fp}");

    let r = run_json(&[
        "echo",
        &server.addr(),
        "--tls",
        "--insecure",
        "-n",
        "100",
        "-t",
        "1",
    ]);
    r.assert_clean(100);

    // Without --insecure the self-signed certificate is not trusted: the run fails.
    let r = run_json(&[
        "echo",
        &server.addr(),
        "--tls",
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
    assert_eq!(r.u("/totals/ok"), 0, "{}", r.explain());
    assert!(r.u("/errors/tls") > 0, "{}", r.explain());

    if have_openssl() {
        let connect = server.addr();
        let mut s = Proc::spawn(
            "openssl",
            &["s_client", "-connect", &connect, "-quiet", "-no_ign_eof"],
            true,
        );
        let mut stdin = s.stdin.take().unwrap();
        stdin.write_all(b"hello wirebench\n").unwrap();
        stdin.flush().unwrap();
        // Keep stdin open until the echo is back, then close it so s_client ends.
        let echoed = s.wait_line("hello wirebench", Duration::from_secs(20));
        drop(stdin);
        let code = s.finish(Duration::from_secs(20));
        assert_eq!(
            echoed.as_deref(),
            Some("hello wirebench"),
            "openssl s_client (exit {code}) stdout:\n{}\nstderr:\n{}",
            s.stdout(),
            s.stderr()
        );
        assert_eq!(s.stdout(), "hello wirebench\n", "{}", s.stderr());
    }

    server.proc.terminate();
    let code = server.proc.finish(Duration::from_secs(20));
    assert_eq!(
        code,
        0,
        "serve echo after SIGTERM\n{}",
        server.proc.stderr()
    );
    let out = server.proc.stdout();
    let last = closing_line(&out);
    assert!(
        last.starts_with("wirebench serve echo: stopped after "),
        "{out}"
    );
    assert!(last.contains("; final: accepts "), "{out}");
}

#[test]
fn certificate_and_key_from_files() {
    if !have_openssl() {
        return;
    }
    let dir = TempPath::new("tls", "");
    std::fs::create_dir_all(dir.path()).unwrap();
    let make = |name: &str| {
        let cert = dir.path().join(format!("{name}-cert.pem"));
        let key = dir.path().join(format!("{name}-key.pem"));
        let out = Command::new("openssl")
            .args(["req", "-x509", "-newkey", "rsa:2048", "-nodes"])
            .args(["-subj", "/CN=localhost"])
            .args(["-addext", "subjectAltName=IP:127.0.0.1"])
            // Without this, openssl marks the certificate as a CA (CA:TRUE), which
            // rustls (webpki) refuses as a server's own certificate.
            .args(["-addext", "basicConstraints=critical,CA:FALSE"])
            .args(["-days", "2", "-keyout"])
            .arg(&key)
            .arg("-out")
            .arg(&cert)
            .output()
            .expect("run openssl req");
        assert!(
            out.status.success(),
            "openssl req failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        (
            cert.to_str().unwrap().to_string(),
            key.to_str().unwrap().to_string(),
        )
    };
    let (cert, key) = make("server");
    let (other_cert, _) = make("other");

    let mut server = Served::start(&["--tls", "--cert", &cert, "--key", &key, "--threads", "1"]);
    let r = run_json(&[
        "echo",
        &server.addr(),
        "--tls",
        "--ca",
        &cert,
        "-n",
        "100",
        "-t",
        "1",
    ]);
    r.assert_clean(100);

    // Trusting another certificate must fail: the client really verifies.
    let r = run_json(&[
        "echo",
        &server.addr(),
        "--tls",
        "--ca",
        &other_cert,
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
    assert_eq!(r.u("/totals/ok"), 0, "{}", r.explain());
    assert!(r.u("/errors/tls") > 0, "{}", r.explain());
    server.proc.terminate();
    assert_eq!(server.proc.finish(Duration::from_secs(20)), 0);
}

#[test]
fn missing_certificate_file_is_a_usage_error() {
    let port = free_port();
    let listen = format!("127.0.0.1:{port}");
    let mut p = Proc::wirebench(&[
        "serve",
        "echo",
        "--listen",
        &listen,
        "--tls",
        "--cert",
        "/nonexistent",
        "--key",
        "/nonexistent",
    ]);
    let code = p.finish(RUN_LIMIT);
    assert_eq!(code, 2, "stdout:\n{}\nstderr:\n{}", p.stdout(), p.stderr());
    let line = assert_one_line_error(&p.stderr(), "serve --cert /nonexistent");
    assert!(line.contains("/nonexistent"), "{line}");
    assert!(!p.stdout().contains("listening"), "{}", p.stdout());
}

/// Large messages over TLS: records buffered in the TLS layer must be flushed on later
/// wake-ups too. They once sat there until the reply timed out (one or two replies in
/// every 3-second run of this shape, on either side). A stuck record waits for the
/// timeout however long it is, so the timeout is generous: a busy machine takes over a
/// second for one 4 MiB round trip.
#[test]
fn large_messages_cross_tls_whole() {
    let r = run_json(&[
        "echo",
        "--tls",
        "-t",
        "1",
        "-c",
        "1",
        "--size",
        "4m",
        "-n",
        "12",
        "--timeout",
        "30s",
    ]);
    assert_eq!(r.code, 0, "{}", r.explain());
    assert_eq!(r.u("/totals/errors"), 0, "{}", r.explain());
    assert_eq!(r.u("/totals/ok"), 12, "{}", r.explain());
    assert_eq!(
        r.u("/totals/bytes_received"),
        r.u("/totals/bytes_sent"),
        "{}",
        r.explain()
    );
}
