//! `wirebench http` as a client: exact counts against the server's own count (our
//! server's stats, nginx's access log), keep-alive off, pipelining, status classes,
//! chunked and close-delimited responses split into small writes, a timeout, a server
//! that closes mid-response, the echo check, TLS.

use crate::common::*;
use crate::http_support::*;
use std::io::Write;
use std::net::TcpStream;

fn http(args: &[&str]) -> RunOut {
    let mut all = vec!["http"];
    all.extend_from_slice(args);
    run_json(&all)
}

#[test]
fn builtin_server_counts_match_exactly() {
    let r = http(&["-n", "3000", "-t", "1", "-c", "6", "--server-threads", "1"]);
    r.assert_clean(3000);
    assert_eq!(r.u("/server/requests"), 3000, "{}", r.explain());
    assert_eq!(r.u("/status_classes/2xx"), 3000);
    assert_eq!(r.u("/totals/connections"), 6);
    assert_eq!(r.u("/server/accepts"), 6);
    assert!(r.stdout.contains("[wirebench]: TPS: "), "{}", r.stdout);
    assert!(
        r.stdout
            .contains("status:       2xx 3,000, 3xx 0, 4xx 0, 5xx 0"),
        "{}",
        r.stdout
    );
}

#[test]
fn pipelined_posts_echo_exactly() {
    // 100 KiB bodies: every response arrives in many reads.
    let r = http(&[
        "-n",
        "400",
        "-t",
        "1",
        "-c",
        "2",
        "--pipeline",
        "4",
        "--body-size",
        "100k",
        "--expect-echo",
    ]);
    r.assert_clean(400);
    assert_eq!(r.u("/server/requests"), 400);
    // Both directions carry the 400 bodies.
    assert!(r.u("/totals/bytes_received") > 400 * 102_400);
    assert!(r.u("/totals/bytes_sent") > 400 * 102_400);
}

#[test]
fn keepalive_off_opens_a_connection_per_request() {
    let r = http(&[
        "-n",
        "300",
        "-t",
        "1",
        "-c",
        "3",
        "--no-keepalive",
        "--server-threads",
        "1",
    ]);
    r.assert_clean(300);
    // One connection per request; a slot that connects just as another takes the
    // last request of the plan opens one more, unused (at most one per slot).
    let conns = r.u("/totals/connections");
    assert!((300..=303).contains(&conns), "{}", r.explain());
    assert_eq!(
        r.u("/server/accepts"),
        conns,
        "both sides count every connection"
    );
    assert_eq!(r.u("/server/requests"), 300);
}

#[test]
fn nginx_access_log_counts_every_request() {
    if !have("nginx") {
        return;
    }
    let n = Nginx::start();
    let r = http(&[&n.url("/"), "-n", "5000", "-t", "1", "-c", "8"]);
    r.assert_clean(5000);
    let lines = n.logged(5000);
    assert_eq!(lines.len(), 5000, "nginx logged {} requests", lines.len());
    assert!(
        lines.iter().all(|l| l.starts_with("200 ")),
        "{:?}",
        &lines[..3]
    );

    // Keep-alive off against nginx: one connection per request, still exact.
    let r = http(&[
        &n.url("/"),
        "-n",
        "200",
        "-t",
        "1",
        "-c",
        "2",
        "--no-keepalive",
    ]);
    r.assert_clean(200);
    assert!(
        (200..=202).contains(&r.u("/totals/connections")),
        "{}",
        r.explain()
    );
    assert_eq!(n.logged(5200).len(), 5200);

    // nginx's 404s: errors by default, counted as 4xx; fine when expected.
    let r = http(&[&n.url("/missing"), "-n", "100", "-t", "1", "-c", "2"]);
    assert_eq!(r.code, 1, "{}", r.explain());
    assert_eq!(r.u("/errors/status"), 100);
    assert_eq!(r.u("/status_classes/4xx"), 100);
    assert_eq!(n.logged(5300).len(), 5300);
}

#[test]
fn status_classes_and_expect_status() {
    let s = ServeHttp::start(&["--threads", "1"]);
    let r = http(&[&s.url("/status/404"), "-n", "200", "-t", "1", "-c", "2"]);
    assert_eq!(r.code, 1, "{}", r.explain());
    assert_eq!((r.u("/totals/ok"), r.u("/errors/status")), (0, 200));
    assert_eq!(r.u("/status_classes/4xx"), 200);
    assert!(r.json()["outcome"]["reason"]
        .as_str()
        .unwrap()
        .contains("200 requests failed"));

    let r = http(&[&s.url("/status/500"), "-n", "150", "-t", "1", "-c", "2"]);
    assert_eq!(r.u("/status_classes/5xx"), 150);
    assert_eq!(r.u("/errors/status"), 150);

    let r = http(&[
        &s.url("/status/404"),
        "-n",
        "100",
        "-t",
        "1",
        "-c",
        "2",
        "--expect-status",
        "404",
    ]);
    r.assert_clean(100);
    let r = http(&[
        &s.url("/status/302"),
        "-n",
        "100",
        "-t",
        "1",
        "-c",
        "2",
        "--expect-status",
        "2xx,3xx",
    ]);
    r.assert_clean(100);
    assert_eq!(r.u("/status_classes/3xx"), 100);
    let line = s.stop();
    assert_eq!(stat(&line, "requests"), 550, "{line}");
}

/// Answers every request with a chunked body, after a 100 Continue, in 3-byte writes.
fn chunked_server(mut s: TcpStream) {
    let mut buf = Vec::new();
    while read_request(&mut s, &mut buf).is_some() {
        let resp =
            b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\
4\r\nwire\r\n5;ext=1\r\nbench\r\n0\r\nX-Trailer: yes\r\n\r\n";
        write_split(&mut s, resp, 3);
    }
}

#[test]
fn chunked_responses_split_into_small_writes() {
    let srv = RawServer::start(chunked_server);
    let r = http(&[&srv.url("/"), "-n", "300", "-t", "1", "-c", "3"]);
    r.assert_clean(300);
    assert_eq!(r.u("/totals/connections"), 3);
    assert_eq!(r.u("/status_classes/2xx"), 300);
    assert_eq!(
        r.u("/status_classes/1xx"),
        0,
        "interim responses are skipped, not counted"
    );
}

/// HTTP/1.0: the body runs to the close; one request per connection.
fn http10_server(mut s: TcpStream) {
    let mut buf = Vec::new();
    if read_request(&mut s, &mut buf).is_some() {
        write_split(
            &mut s,
            b"HTTP/1.0 200 OK\r\nServer: old\r\n\r\nbody until close",
            5,
        );
    }
}

#[test]
fn close_delimited_http10_responses() {
    let srv = RawServer::start(http10_server);
    let r = http(&[&srv.url("/"), "-n", "100", "-t", "1", "-c", "2"]);
    r.assert_clean(100);
    // A connection per response (at most one more per slot, opened as the plan ended).
    assert!(
        (100..=102).contains(&r.u("/totals/connections")),
        "{}",
        r.explain()
    );
}

/// Sends half a response, then closes.
fn half_server(mut s: TcpStream) {
    let mut buf = Vec::new();
    if read_request(&mut s, &mut buf).is_some() {
        let _ = s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly part");
    }
}

#[test]
fn server_closing_mid_response_is_an_error() {
    let srv = RawServer::start(half_server);
    let r = http(&[&srv.url("/"), "-n", "4", "-t", "1", "-c", "1"]);
    assert_eq!(r.code, 1, "{}", r.explain());
    assert_eq!(r.u("/totals/ok"), 0);
    assert_eq!(r.u("/errors/closed"), 4, "{}", r.explain());
    assert!(r.json()["totals"]["invariant_holds"].as_bool().unwrap());
}

#[test]
fn silent_server_times_out() {
    let (_l, addr) = silent_listener();
    let url = format!("http://{addr}/");
    let r = http(&[&url, "-n", "3", "-t", "1", "-c", "1", "--timeout", "300ms"]);
    assert_eq!(r.code, 1, "{}", r.explain());
    assert_eq!(r.u("/errors/timeout"), 3, "{}", r.explain());
    assert_eq!(r.u("/totals/ok"), 0);
}

/// Answers with garbage: a protocol error, the connection dropped.
fn garbage_server(mut s: TcpStream) {
    let mut buf = Vec::new();
    if read_request(&mut s, &mut buf).is_some() {
        let _ = s.write_all(b"SMTP ready\r\n\r\n");
    }
}

#[test]
fn garbage_response_is_a_protocol_error() {
    let srv = RawServer::start(garbage_server);
    let r = http(&[&srv.url("/"), "-n", "3", "-t", "1", "-c", "1"]);
    assert_eq!(r.code, 1);
    assert_eq!(r.u("/errors/protocol"), 3, "{}", r.explain());
}

#[test]
fn echo_mismatch_is_caught() {
    // GET / answers "hello", not the request body.
    let s = ServeHttp::start(&["--threads", "1"]);
    let r = http(&[
        &s.url("/"),
        "-m",
        "GET",
        "--body-size",
        "5",
        "--expect-echo",
        "-n",
        "50",
        "-t",
        "1",
        "-c",
        "1",
    ]);
    assert_eq!(r.code, 1, "{}", r.explain());
    assert_eq!(r.u("/errors/mismatch"), 50);
    // POST echoes: the check passes.
    let r = http(&[
        &s.url("/any/path"),
        "--body-size",
        "5",
        "--expect-echo",
        "-n",
        "50",
        "-t",
        "1",
        "-c",
        "1",
    ]);
    r.assert_clean(50);
}

#[test]
fn open_loop_and_duration_plans() {
    let r = http(&["-R", "2000", "-n", "400", "-t", "1", "-c", "4"]);
    r.assert_clean(400);
    assert_eq!(r.u("/latency_uncorrected_us/count"), 400);
    let r = http(&["-d", "500ms", "-t", "1", "-c", "2", "--warmup", "200ms"]);
    assert_eq!(r.code, 0, "{}", r.explain());
    assert_eq!(r.u("/totals/ok"), r.u("/status_classes/2xx"));
    assert!(r.u("/totals/ok") > 0);
}

#[test]
fn tls_builtin_and_https_url() {
    let r = http(&[
        "--tls",
        "-n",
        "300",
        "-t",
        "1",
        "-c",
        "3",
        "--body-size",
        "20k",
        "--expect-echo",
    ]);
    r.assert_clean(300);
    let s = ServeHttp::start(&["--threads", "1", "--tls"]);
    let url = format!("https://127.0.0.1:{}/bytes/1000", s.port);
    let r = http(&[&url, "--insecure", "-n", "200", "-t", "1", "-c", "2"]);
    r.assert_clean(200);
    assert!(r.u("/totals/bytes_received") > 200 * 1000);
    // Without --insecure the self-signed certificate is refused.
    let r = http(&[&url, "-n", "5", "-t", "1", "-c", "1", "--timeout", "2s"]);
    assert_eq!(r.code, 1);
    assert!(r.u("/errors/tls") >= 1, "{}", r.explain());
}

#[test]
fn bad_input_exits_2_with_one_sentence() {
    for (args, phrase) in [
        (&["http", "127.0.0.1:80"][..], "is not a URL"),
        (
            &["http", "ftp://127.0.0.1/"][..],
            "scheme 'ftp' is not supported",
        ),
        (&["http", "http://127.0.0.1:99999/"][..], "no valid port"),
        (
            &["http", "--body-size", "1", "--body", "/etc/hostname"][..],
            "choose one of --body and --body-size",
        ),
        (
            &["http", "--no-keepalive", "--pipeline", "4"][..],
            "--no-keepalive",
        ),
        (&["http", "--expect-echo"][..], "--expect-echo"),
        (&["http", "--expect-status", "7xx"][..], "--expect-status"),
        (&["http", "-H", "NoColon"][..], "is not a header"),
        (
            &["http", "--tls", "http://127.0.0.1:1/"][..],
            "write https://",
        ),
        (&["http", "-m", "HEAD", "--body-size", "3"][..], "HEAD"),
        (
            &["http", "--body", "/nonexistent/file"][..],
            "cannot read the --body file",
        ),
        (&["serve", "http", "--max-header", "10"][..], "--max-header"),
    ] {
        let what = format!("wirebench {}", args.join(" "));
        let mut p = Proc::wirebench(args);
        let code = p.finish(RUN_LIMIT);
        assert_eq!(code, 2, "{what}\n{}\n{}", p.stdout(), p.stderr());
        let line = assert_one_line_error(&p.stderr(), &what);
        assert!(line.contains(phrase), "{what}: want {phrase:?} in {line:?}");
    }
}
