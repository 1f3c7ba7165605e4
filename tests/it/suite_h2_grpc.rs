//! A suite of HTTP/2 and gRPC points, each generator against a built-in server of its
//! own (so each server's count is one point's): `serve http` under h2c driven by
//! wirebench (`--h2`) and by h2load in its h2 mode, `serve grpc` driven by wirebench
//! and by ghz. Every point's count equals the server's own (`serve --stats-json`'s
//! last row), the h2load point spoke h2c, ghz's OK calls equal its sent ones, and the
//! report shows all four points. Bad input: a generator its protocol does not declare
//! and an HTTP/2 load on wrk are one sentence naming file, line and key, exit 2.

use crate::common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Duration;

fn proto() -> String {
    format!("{}/tests/peers/bench.proto", env!("CARGO_MANIFEST_DIR"))
}

/// ghz where scripts/test.sh builds it, or on PATH.
fn ghz_dir() -> Option<PathBuf> {
    let cached = std::env::var_os("HOME")
        .map(|h| Path::new(&h).join(".cache/wirebench/ghz/bin"))
        .filter(|d| d.join("ghz").is_file());
    let found = cached.or_else(|| {
        std::env::var_os("PATH")
            .and_then(|p| std::env::split_paths(&p).find(|d| d.join("ghz").is_file()))
    });
    if found.is_none() {
        missing("ghz is not installed (scripts/test.sh builds it into ~/.cache/wirebench/ghz)");
    }
    found
}

/// `serve PROTOCOL` writing its counters to `{dir}/NAME.jsonl`.
fn server(name: &str, protocol: &str) -> String {
    format!(
        "[[server]]\nname = \"{name}\"\ncommand = \"{{wirebench}} serve {protocol} --listen {{addr}} --threads 1 --stats 1s --stats-json {{dir}}/{name}.jsonl\"\n\n"
    )
}

/// The `requests` of a server's last `--stats-json` row: all it answered.
fn served(dir: &Path, name: &str) -> u64 {
    let text = std::fs::read_to_string(dir.join(format!("{name}.jsonl"))).unwrap();
    let last: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    assert_eq!(last["last"], true, "{text}");
    last["total"]["requests"].as_u64().unwrap()
}

fn suite_text() -> String {
    let mut s = String::from("name = \"h2 and grpc generators\"\n\n");
    for (name, protocol) in [
        ("http-wb", "http"),
        ("http-h2load", "http"),
        ("grpc-wb", "grpc"),
        ("grpc-ghz", "grpc"),
    ] {
        s.push_str(&server(name, protocol));
    }
    let grpc = format!(
        "grpc = {{ call = \"bench.Echo/Say\", proto = \"{}\", data = '{{\"name\": \"ab\", \"n\": 3}}' }}",
        proto()
    );
    for (load, protocol, generator, count, block) in [
        (
            "h2c-wb",
            "http",
            "wirebench",
            400,
            "http = { version = \"2\" }".to_string(),
        ),
        (
            "h2c-h2load",
            "http",
            "h2load",
            400,
            "http = { version = \"2\" }".to_string(),
        ),
        ("grpc-wb", "grpc", "wirebench", 300, grpc.clone()),
        ("grpc-ghz", "grpc", "ghz", 300, grpc.clone()),
    ] {
        let only = match load {
            "h2c-wb" => "http-wb",
            "h2c-h2load" => "http-h2load",
            other => other,
        };
        s.push_str(&format!(
            "[[load]]\nname = \"{load}\"\nprotocol = \"{protocol}\"\ngenerator = \"{generator}\"\nservers = [\"{only}\"]\nconnections = [2]\npipeline = [4]\ncount = {count}\nwarmup = \"0s\"\n{block}\n\n"
        ));
    }
    s
}

#[test]
fn h2_and_grpc_points_count_what_their_servers_count() {
    let Some(ghz) = ghz_dir() else { return };
    if !have("h2load") {
        return;
    }
    let dir = TempPath::new("suite-h2-grpc", "");
    std::fs::create_dir_all(dir.path()).unwrap();
    let suite = dir.path().join("s.toml");
    std::fs::write(&suite, suite_text()).unwrap();
    let out = dir.path().join("out");
    let path = format!(
        "PATH={}:{}",
        ghz.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut p = Proc::spawn(
        "env",
        &[
            &path,
            bin(),
            "suite",
            suite.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "-q",
        ],
        false,
    );
    assert_eq!(p.finish(Duration::from_secs(300)), 0, "{}", p.stderr());
    let v = schema_validator("result.schema.json");
    let mut seen = Vec::new();
    for e in std::fs::read_dir(out.join("points")).unwrap() {
        let doc: Value =
            serde_json::from_str(&std::fs::read_to_string(e.unwrap().path()).unwrap()).unwrap();
        assert!(v.is_valid(&doc), "{doc}");
        let load = doc["suite"]["load"].as_str().unwrap().to_string();
        let server = doc["suite"]["server"].as_str().unwrap().to_string();
        let count = if load.starts_with("h2c") { 400 } else { 300 };
        assert_eq!(doc["totals"]["ok"], count, "{load}: {}", doc["totals"]);
        assert_eq!(doc["totals"]["sent"], count, "{load}: {}", doc["totals"]);
        assert_eq!(doc["totals"]["invariant_holds"], true, "{load}");
        assert_eq!(served(dir.path(), &server), count, "{load} on {server}");
        // What `bytes_sent` counts: ghz reports no bytes, h2load is told the bodies.
        let counts = match load.as_str() {
            "grpc-ghz" => Some("nothing: ghz reports no byte counts"),
            "h2c-h2load" => Some("request bodies only"),
            _ => None,
        };
        assert_eq!(
            doc["config"]["bytes_sent_counts"].as_str(),
            counts,
            "{load}"
        );
        if load.starts_with("grpc") {
            assert_eq!(
                doc["grpc_status"],
                serde_json::json!({"OK": count}),
                "{load}"
            );
        }
        seen.push(load);
    }
    seen.sort();
    assert_eq!(seen, ["grpc-ghz", "grpc-wb", "h2c-h2load", "h2c-wb"]);
    // h2load said what it spoke.
    let raw = std::fs::read_dir(out.join("raw")).unwrap();
    let said: Vec<String> = raw
        .filter_map(|e| {
            let path = e.ok()?.path();
            let name = path.file_name()?.to_str()?.to_string();
            (name.starts_with("h2c-h2load__") && name.ends_with(".out"))
                .then(|| std::fs::read_to_string(&path).ok())
                .flatten()
        })
        .collect();
    assert_eq!(said.len(), 1);
    assert!(said[0].contains("Application protocol: h2c"), "{}", said[0]);

    // The report: each load's table has its point.
    let md = dir.path().join("r.md");
    let mut r = Proc::wirebench(&[
        "report",
        out.to_str().unwrap(),
        "-o",
        dir.path().join("r.html").to_str().unwrap(),
        &format!("--markdown={}", md.display()),
    ]);
    assert_eq!(r.finish(Duration::from_secs(60)), 0, "{}", r.stderr());
    let md = std::fs::read_to_string(md).unwrap();
    let html = std::fs::read_to_string(dir.path().join("r.html")).unwrap();
    for (load, server) in [
        ("h2c-wb", "http-wb"),
        ("h2c-h2load", "http-h2load"),
        ("grpc-wb", "grpc-wb"),
        ("grpc-ghz", "grpc-ghz"),
    ] {
        for doc in [&md, &html] {
            assert!(doc.contains(load) && doc.contains(server), "{load}\n{md}");
        }
    }
}

fn refused(text: &str) -> String {
    let dir = TempPath::new("suite-h2-bad", "");
    std::fs::create_dir_all(dir.path()).unwrap();
    let suite = dir.path().join("s.toml");
    std::fs::write(&suite, text).unwrap();
    let mut p = Proc::wirebench(&["suite", suite.to_str().unwrap(), "--check"]);
    assert_eq!(p.finish(Duration::from_secs(30)), 2, "{}", p.stdout());
    let err = p.stderr();
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "{err}");
    lines[0].to_string()
}

#[test]
fn ghz_on_http_and_http2_on_wrk_are_refused_with_the_file_line_and_key() {
    let head = "[[server]]\nname = \"a\"\ncommand = \"x {port}\"\n[[load]]\nprotocol = \"http\"\nconnections = [1]\n";
    let e = refused(&format!("{head}generator = \"ghz\"\n"));
    assert!(
        e.ends_with("s.toml:7: load 'load1' key `generator`: ghz drives only protocol \"grpc\""),
        "{e}"
    );
    let e = refused(&format!(
        "{head}generator = \"wrk\"\nhttp = {{ version = \"2\" }}\n"
    ));
    assert!(
        e.ends_with("s.toml:8: load 'load1' key `http`: wrk speaks only HTTP/1.1 (version = \"2\" runs on wirebench or h2load)"),
        "{e}"
    );
    let e = refused(&format!(
        "{head}generator = \"ab\"\n[load.http]\nversion = \"2\"\n"
    ));
    assert!(
        e.contains("s.toml:8: load 'load1' key `http`: ab speaks only HTTP/1.1"),
        "{e}"
    );
    let grpc = "[[server]]\nname = \"a\"\ncommand = \"x {port}\"\n[[load]]\nprotocol = \"grpc\"\nconnections = [1]\ngenerator = \"ghz\"\n";
    let e = refused(&format!(
        "{grpc}rate = [100.0]\ngrpc = {{ proto = \"/p.proto\" }}\n"
    ));
    assert!(
        e.contains("s.toml:8: load 'load1' key `rate`: ghz paces its workers"),
        "{e}"
    );
}
