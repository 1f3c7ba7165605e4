//! `wirebench http --request-set FILE`: requests by weight against nginx (its access
//! log counts each URL), vegeta's targets format sent byte for byte (a server records
//! the raw requests; vegeta itself, when installed, sends the same requests but for
//! its own User-Agent, Accept-Encoding and X-Vegeta-Seq), the per-request figures, and every
//! non-2xx response counted as a reply under its status.

use crate::common::*;
use crate::http_support::{read_request, Nginx};
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::Write;
use std::net::TcpListener;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A wirebench run with its summary on stdout and its JSON result in a file.
fn run_with_summary(args: &[&str]) -> RunOut {
    let file = TempPath::new("result", ".json");
    let mut all: Vec<&str> = args.to_vec();
    all.extend(["--json", file.s()]);
    let mut p = Proc::wirebench(&all);
    let code = p.finish(RUN_LIMIT);
    RunOut::of(&p, code, &file)
}

fn write(dir: &TempPath, name: &str, text: &[u8]) -> PathBuf {
    std::fs::create_dir_all(dir.path()).unwrap();
    let p = dir.path().join(name);
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn weights_1_2_7_reach_nginx_in_their_shares_and_each_request_is_counted() {
    if !have("nginx") {
        return;
    }
    let nginx = Nginx::start_logged(
        "'$status $uri'",
        "location /a { return 200 \"a\"; }\n    location /b { return 200 \"bb\"; }\n    location /c { return 200 \"ccc\"; }",
    );
    let dir = TempPath::new("set", "");
    let toml = format!(
        "[[request]]\nurl = \"{a}\"\nweight = 1\nbody_contains = \"a\"\n\n\
         [[request]]\nurl = \"{b}\"\nweight = 2\n\n\
         [[request]]\nname = \"post c\"\nurl = \"{c}\"\nbody = \"xyz\"\nweight = 7\nstatus = \"200\"\n",
        a = nginx.url("/a"),
        b = nginx.url("/b?q=1"),
        c = nginx.url("/c"),
    );
    let file = write(&dir, "weights.toml", toml.as_bytes());
    let total = 20_000u64;
    let r = run_json(&[
        "http",
        "--request-set",
        file.to_str().unwrap(),
        "-t",
        "2",
        "-c",
        "10",
        "-n",
        &total.to_string(),
    ]);
    assert_eq!(r.code, 0, "{}", r.explain());
    r.assert_clean(total);
    let errs: Vec<String> = schema_validator("result.schema.json")
        .iter_errors(r.json())
        .map(|e| format!("{} at {}", e, e.instance_path))
        .collect();
    assert!(errs.is_empty(), "{errs:?}");
    let mut logged: BTreeMap<String, u64> = BTreeMap::new();
    for l in nginx.logged(total as usize) {
        let (status, uri) = l.split_once(' ').unwrap();
        assert_eq!(status, "200", "{l}");
        *logged.entry(uri.to_string()).or_default() += 1;
    }
    let entries = r.json()["request_set"]["entries"]
        .as_array()
        .unwrap()
        .clone();
    let counted: Vec<u64> = entries.iter().map(|e| ju(e, "/answered")).collect();
    let by_log = [logged["/a"], logged["/b"], logged["/c"]];
    assert_eq!(by_log.iter().sum::<u64>(), total, "{logged:?}");
    assert_eq!(
        counted, by_log,
        "wirebench's counts per request are nginx's"
    );
    for (i, w) in [1u64, 2, 7].into_iter().enumerate() {
        let want = total * w / 10;
        let off = by_log[i].abs_diff(want) as f64 / want as f64;
        assert!(
            off <= 0.02,
            "request {i}: {} of {total}, want {want}",
            by_log[i]
        );
        let e = &entries[i];
        assert_eq!(ju(e, "/ok"), by_log[i]);
        assert_eq!(ju(e, "/errors"), 0);
        assert_eq!(ju(e, "/status_codes/200"), by_log[i]);
        assert_eq!(ju(e, "/latency_us/count"), by_log[i]);
    }
    assert_eq!(entries[2]["name"], "post c");
    assert_eq!(entries[2]["method"], "POST");
    assert_eq!(entries[1]["name"], "GET /b?q=1");
    assert_eq!(r.json()["config"]["request_set"]["requests"], 3);
}

/// A server that answers every request 200 with no body and keeps each request's raw
/// bytes. Returns its address and what it received.
fn recording_server() -> (String, Arc<Mutex<Vec<Vec<u8>>>>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap().to_string();
    let got = Arc::new(Mutex::new(Vec::new()));
    let kept = got.clone();
    std::thread::spawn(move || {
        for s in l.incoming() {
            let Ok(mut s) = s else { return };
            let kept = kept.clone();
            std::thread::spawn(move || {
                let mut buf = Vec::new();
                while let Some(req) = read_request(&mut s, &mut buf) {
                    kept.lock().unwrap().push(req);
                    if s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
                        .is_err()
                    {
                        return;
                    }
                }
            });
        }
    });
    (addr, got)
}

/// vegeta on PATH or where scripts/test.sh installs it.
fn vegeta() -> Option<PathBuf> {
    let cached = std::env::var_os("HOME")
        .map(|h| PathBuf::from(h).join(".cache/wirebench/vegeta/bin/vegeta"));
    if let Some(p) = cached.filter(|p| p.is_file()) {
        return Some(p);
    }
    have("vegeta").then(|| PathBuf::from("vegeta"))
}

/// A request's (request line, header lines, body).
fn split(req: &[u8]) -> (String, Vec<String>, Vec<u8>) {
    let end = req.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let head = String::from_utf8(req[..end].to_vec()).unwrap();
    let mut lines = head.split("\r\n").map(str::to_string);
    let first = lines.next().unwrap();
    (first, lines.collect(), req[end + 4..].to_vec())
}

#[test]
fn a_vegeta_targets_file_is_sent_byte_for_byte() {
    let (addr, got) = recording_server();
    let dir = TempPath::new("targets", "");
    let body = b"{\"name\": \"a thing\", \"n\": 1}\n";
    let body_file = write(&dir, "thing.json", body);
    let targets = format!(
        "# two targets, vegeta's http format\nGET http://{addr}/path/to/dragon?item=balls\n\
         X-Account-ID: 8675309\nX-Two:  a b \n\n\
         POST http://{addr}/things\nContent-Type: application/json\n# between headers\n\
         X-Account-ID: 99\n@{}\n",
        body_file.display()
    );
    let file = write(&dir, "targets.txt", targets.as_bytes());
    let r = run_json(&[
        "http",
        "--request-set",
        file.to_str().unwrap(),
        "-t",
        "1",
        "-c",
        "1",
        "-n",
        "4",
    ]);
    assert_eq!(r.code, 0, "{}", r.explain());
    let get = format!(
        "GET /path/to/dragon?item=balls HTTP/1.1\r\nHost: {addr}\r\nX-Account-ID: 8675309\r\nX-Two: a b\r\n\r\n"
    );
    let mut post = format!(
        "POST /things HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nX-Account-ID: 99\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    post.extend_from_slice(body);
    let mut ours = got.lock().unwrap().clone();
    ours.sort();
    let mut want = vec![
        get.clone().into_bytes(),
        get.into_bytes(),
        post.clone(),
        post,
    ];
    want.sort();
    assert_eq!(ours, want, "the documented bytes, each request twice");

    let Some(vegeta) = vegeta() else {
        return;
    };
    got.lock().unwrap().clear();
    let mut p = Proc::spawn(
        vegeta.to_str().unwrap(),
        &[
            "attack",
            &format!("-targets={}", file.display()),
            "-rate=20",
            "-duration=1s",
            "-output=/dev/null",
        ],
        false,
    );
    assert_eq!(p.finish(Duration::from_secs(60)), 0, "{}", p.stderr());
    let theirs = got.lock().unwrap().clone();
    assert!(theirs.len() >= 2, "vegeta sent {}", theirs.len());
    // vegeta adds its own X-Vegeta-Seq, Go's client its User-Agent and
    // Accept-Encoding, and orders headers by name; everything else is the same bytes.
    let own = |h: &String| {
        ["User-Agent: ", "Accept-Encoding: ", "X-Vegeta-Seq: "]
            .iter()
            .any(|p| h.starts_with(p))
    };
    for theirs in theirs {
        let (line, mut headers, body) = split(&theirs);
        let mine = ours
            .iter()
            .find(|m| split(m).0 == line)
            .expect("a request of ours");
        let (_, mut my_headers, my_body) = split(mine);
        headers.retain(|h| !own(h));
        headers.sort();
        my_headers.sort();
        assert_eq!((headers, body), (my_headers, my_body), "{line}");
    }
}

#[test]
fn an_all_500_server_reads_as_answered_with_status_500_and_latencies() {
    if !have("nginx") {
        return;
    }
    let nginx = Nginx::start_logged("'$status'", "location / { return 500; }");
    let r = run_with_summary(&["http", &nginx.url("/"), "-t", "1", "-c", "4", "-n", "2000"]);
    assert_eq!(r.code, 1, "{}", r.explain());
    let answered = r
        .stdout
        .lines()
        .find(|l| l.starts_with("answered:"))
        .unwrap_or_else(|| panic!("{}", r.stdout));
    assert_eq!(
        answered,
        "answered:     2,000 of 2,000 sent, all 500 (0 ok, 2,000 answered errors)"
    );
    assert_eq!(r.u("/totals/sent"), 2000);
    assert_eq!(r.u("/totals/ok"), 0);
    assert_eq!(r.u("/totals/errors"), 2000);
    assert_eq!(r.u("/errors/status"), 2000);
    assert_eq!(r.u("/status_codes/500"), 2000);
    assert_eq!(r.u("/latency_us/count"), 2000, "each 500 is timed");
    assert_eq!(nginx.logged(2000).len(), 2000);
    assert!(
        r.stdout
            .contains("error texts:  2,000 status: HTTP/1.1 500 Internal Server Error"),
        "{}",
        r.stdout
    );
}

#[test]
fn bad_request_sets_are_one_sentence_and_exit_2() {
    let dir = TempPath::new("bad-set", "");
    let cases: Vec<(&str, String, String)> = vec![
        (
            "bad-line.txt",
            "GET http://127.0.0.1:9/\n\nGET http://127.0.0.1:9/b\nX-A 1\n".into(),
            "bad-line.txt:4: 'X-A 1' is not a header: write it as \"Name: value\"".into(),
        ),
        (
            "zero.toml",
            "[[request]]\nurl = \"http://127.0.0.1:9/\"\nweight = 0\n[[request]]\nurl = \"http://127.0.0.1:9/b\"\nweight = 0\n".into(),
            "zero.toml has weight 0: give at least one a weight above 0".into(),
        ),
        (
            "no-body.txt",
            "POST http://127.0.0.1:9/\n@/nonexistent/body.json\n".into(),
            "no-body.txt:2: cannot read the body file /nonexistent/body.json: No such file or directory (os error 2)".into(),
        ),
        (
            "origins.txt",
            "GET http://127.0.0.1:9/\n\nGET http://127.0.0.1:10/b\n".into(),
            "origins.txt:3: http://127.0.0.1:10 is another origin than the first request's http://127.0.0.1:9: a run sends every request to one scheme, host and port".into(),
        ),
        (
            "typo.toml",
            "[[request]]\nurl = \"http://127.0.0.1:9/\"\nwieght = 2\n".into(),
            "typo.toml:3: unknown field `wieght`".into(),
        ),
    ];
    for (name, text, sentence) in cases {
        let file = write(&dir, name, text.as_bytes());
        let mut p = Proc::wirebench(&["http", "--request-set", file.to_str().unwrap(), "-n", "1"]);
        let code = p.finish(Duration::from_secs(20));
        let err = p.stderr();
        assert_eq!(code, 2, "{name}: {err}");
        assert_eq!(err.lines().count(), 1, "{name}: {err}");
        assert!(err.contains(&sentence), "{name}: {err}");
    }
    let file = dir.path().join("origins.txt");
    let mut p = Proc::wirebench(&[
        "http",
        "http://127.0.0.1:9/",
        "--request-set",
        file.to_str().unwrap(),
    ]);
    assert_eq!(p.finish(Duration::from_secs(20)), 2);
    assert!(
        p.stderr()
            .contains("--request-set gives each request's URL, method and body: drop a URL"),
        "{}",
        p.stderr()
    );
    // An HTTP/2 request set is refused, not sent to an empty path.
    let file = write(&dir, "one.txt", b"GET http://127.0.0.1:9/\n");
    let mut p = Proc::wirebench(&[
        "http",
        "--h2",
        "--request-set",
        file.to_str().unwrap(),
        "-n",
        "1",
    ]);
    assert_eq!(p.finish(Duration::from_secs(20)), 2, "{}", p.stderr());
    assert!(
        p.stderr().contains(
            "--request-set sends HTTP/1.1 requests: drop --h2 (an HTTP/2 request set is not supported)"
        ),
        "{}",
        p.stderr()
    );
}

#[test]
fn per_request_figures_merge_over_shards_exactly() {
    let (addr, _got) = recording_server();
    let dir = TempPath::new("set-shards", "");
    let toml = format!(
        "[[request]]\nurl = \"http://{addr}/x\"\nweight = 3\n[[request]]\nurl = \"http://{addr}/y\"\nweight = 1\n"
    );
    let file = write(&dir, "s.toml", toml.as_bytes());
    let files = [
        TempPath::new("shard0", ".json"),
        TempPath::new("shard1", ".json"),
    ];
    let mut parts: Vec<Value> = Vec::new();
    for (i, f) in files.iter().enumerate() {
        let shard = format!("{i}/2");
        let mut p = Proc::wirebench(&[
            "http",
            "--request-set",
            file.to_str().unwrap(),
            "-t",
            "1",
            "-c",
            "2",
            "-n",
            "800",
            "--shard",
            &shard,
            "--run-id",
            "set-merge",
            "--json",
            f.s(),
            "-q",
        ]);
        assert_eq!(p.finish(RUN_LIMIT), 0, "{}", p.stderr());
        parts.push(serde_json::from_str(&std::fs::read_to_string(f.path()).unwrap()).unwrap());
    }
    let out = TempPath::new("merged", ".json");
    let mut p = Proc::wirebench(&["merge", files[0].s(), files[1].s(), "-o", out.s()]);
    assert_eq!(p.finish(Duration::from_secs(30)), 0, "{}", p.stderr());
    let merged: Value =
        serde_json::from_str(&std::fs::read_to_string(out.path()).unwrap()).unwrap();
    for i in 0..2 {
        let at = |r: &Value| ju(&r["request_set"]["entries"][i], "/answered");
        let sum: u64 = parts.iter().map(at).sum();
        assert_eq!(at(&merged), sum);
        let hist = |r: &Value| ju(&r["request_set"]["entries"][i], "/latency_us/count");
        assert_eq!(hist(&merged), sum);
    }
    let shares: Vec<u64> = (0..2)
        .map(|i| ju(&merged["request_set"]["entries"][i], "/answered"))
        .collect();
    assert_eq!(
        shares,
        [600, 200],
        "the weights hold over the merged shards"
    );
}
