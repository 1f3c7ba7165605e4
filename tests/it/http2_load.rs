//! `wirebench http --h2` against nginx's h2c listener (prior knowledge): its count
//! equals nginx's access log, every line of it HTTP/2; request and response bodies
//! past every flow-control window (nginx proxies them to `serve http`, which echoes);
//! a status the run does not accept with its words; and the flags refused in one
//! sentence.

use crate::common::*;
use crate::http_support::*;

fn http(args: &[&str]) -> RunOut {
    let mut all = vec!["http", "--h2"];
    all.extend_from_slice(args);
    run_json(&all)
}

/// nginx on h2c, with /echo and /bytes/ proxied to `serve http` at `backend`.
fn nginx_h2(backend: &ServeHttp) -> Nginx {
    let b = backend.addr();
    Nginx::start_with(
        " http2",
        &format!(
            "client_max_body_size 16m;\n    location = /echo {{ proxy_pass http://{b}; }}\n    \
             location /bytes/ {{ proxy_pass http://{b}; }}"
        ),
    )
}

#[test]
fn nginx_h2c_logs_every_request_wirebench_counts() {
    if !have("nginx") {
        return;
    }
    let backend = ServeHttp::start(&["--threads", "1"]);
    let n = nginx_h2(&backend);
    let r = http(&[
        &n.url("/"),
        "-n",
        "3000",
        "-t",
        "1",
        "-c",
        "4",
        "--max-streams",
        "10",
    ]);
    r.assert_clean(3000);
    assert_eq!(r.u("/status_classes/2xx"), 3000);
    assert_eq!(r.u("/totals/connections"), 4, "{}", r.explain());
    assert_eq!(r.json()["config"]["pipeline"], 10, "{}", r.explain());
    assert_eq!(r.json()["config"]["http_version"], "2");
    let lines = n.logged(3000);
    assert_eq!(lines.len(), 3000, "nginx logged {} requests", lines.len());
    assert!(
        lines
            .iter()
            .all(|l| l.starts_with("200 ") && l.ends_with(" HTTP/2.0")),
        "{:?}",
        &lines[..3]
    );

    // 256 KiB request bodies, echoed: past nginx's 64 KiB initial stream window, so
    // they go only as its WINDOW_UPDATEs come; and back the same size.
    let r = http(&[
        &n.url("/echo"),
        "-n",
        "120",
        "-t",
        "1",
        "-c",
        "2",
        "--max-streams",
        "4",
        "--body-size",
        "256k",
        "--expect-echo",
    ]);
    r.assert_clean(120);
    assert!(
        r.u("/totals/bytes_received") > 120 * 262_144,
        "{}",
        r.explain()
    );
    // nginx read every body whole ($request_length: headers and body).
    let lines = n.logged(3120);
    assert_eq!(lines.len(), 3120);
    let bodies = lines[3000..]
        .iter()
        .filter(|l| {
            let length = l.split(' ').nth(1).and_then(|n| n.parse::<u64>().ok());
            l.starts_with("200 ") && length.is_some_and(|n| n > 262_144)
        })
        .count();
    assert_eq!(bodies, 120, "{:?}", &lines[3000..3003]);

    // 1 MB responses.
    let r = http(&[
        &n.url("/bytes/1000000"),
        "-n",
        "60",
        "-t",
        "1",
        "-c",
        "2",
        "--max-streams",
        "3",
    ]);
    r.assert_clean(60);
    assert!(
        r.u("/totals/bytes_received") > 60 * 1_000_000,
        "{}",
        r.explain()
    );
    assert_eq!(n.logged(3180).len(), 3180);

    // nginx's 404s: errors by default, with their status and body in the words.
    let r = http(&[
        &n.url("/missing"),
        "-n",
        "100",
        "-t",
        "1",
        "-c",
        "2",
        "--max-streams",
        "5",
    ]);
    assert_eq!(r.code, 1, "{}", r.explain());
    assert_eq!(r.u("/errors/status"), 100);
    assert_eq!(r.u("/status_classes/4xx"), 100);
    let texts = &r.json()["error_texts"];
    assert_eq!(texts["kept"][0]["kind"], "status", "{texts}");
    let said = texts["kept"][0]["text"].as_str().unwrap();
    // nginx's error page as words, its HTML's tags left out.
    assert!(said.starts_with(":status 404: 404 Not Found 404"), "{said}");
    assert_eq!(n.logged(3280).len(), 3280);
}

#[test]
fn http2_flags_are_refused_in_one_sentence() {
    for (args, phrase) in [
        (
            &["http", "--h2", "http://127.0.0.1:9/", "--max-streams", "0"][..],
            "--max-streams must be at least 1",
        ),
        (
            &["http", "http://127.0.0.1:9/", "--max-streams", "4"][..],
            "add --h2",
        ),
        (&["http", "--h2"][..], "the built-in server speaks HTTP/1.1"),
        (
            &["http", "--h2", "ws://127.0.0.1:9/"][..],
            "the URL scheme 'ws' is not supported",
        ),
        (
            &["http", "--h2", "--http1.1", "https://127.0.0.1:9/"][..],
            "choose one of --h2 and --http1.1",
        ),
        (
            &["http", "--h2", "http://127.0.0.1:9/", "--pipeline", "4"][..],
            "use --max-streams",
        ),
        (
            &["http", "--h2", "http://127.0.0.1:9/", "--no-keepalive"][..],
            "--no-keepalive",
        ),
    ] {
        let what = format!("wirebench {}", args.join(" "));
        let mut p = Proc::wirebench(args);
        let code = p.finish(RUN_LIMIT);
        assert_eq!(code, 2, "{what}\n{}\n{}", p.stdout(), p.stderr());
        let line = assert_one_line_error(&p.stderr(), &what);
        assert!(line.contains(phrase), "{what}: want {phrase:?} in {line:?}");
    }
}
