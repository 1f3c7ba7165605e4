//! `wirebench suite` against servers that misbehave: one that dies mid-load, one that
//! never becomes ready, one that exits before it is ready, one that ignores SIGTERM
//! (with a child that ignores it too), next to a good one; and Ctrl-C mid-suite.
//! Every process the suite started must be gone afterwards (checked by PID), and
//! every result file must validate against the schema.

use crate::common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Duration;

fn fixture(name: &str) -> String {
    format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn alive(pid: i64) -> bool {
    // A zombie is dead for our purposes; a missing /proc entry is gone.
    wirebench::sys::proc_fs::alive(pid as i32)
}

fn validator() -> jsonschema::Validator {
    schema_validator("result.schema.json")
}

/// Every points/*.json validates; returns them by file name.
fn points(dir: &Path) -> Vec<(String, Value)> {
    let v = validator();
    let mut out = Vec::new();
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir.join("points"))
        .expect("points dir")
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    for f in files {
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
        let errs: Vec<String> = v
            .iter_errors(&doc)
            .map(|e| format!("{e} at {}", e.instance_path))
            .collect();
        assert!(
            errs.is_empty(),
            "{} does not match the schema:\n{}",
            f.display(),
            errs.join("\n")
        );
        out.push((f.file_name().unwrap().to_string_lossy().into_owned(), doc));
    }
    out
}

fn statuses(dir: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(dir.join("servers.json")).expect("servers.json");
    serde_json::from_str::<Value>(&text)
        .unwrap()
        .as_array()
        .unwrap()
        .clone()
}

fn status<'a>(all: &'a [Value], name: &str) -> &'a Value {
    all.iter()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("no status for {name}: {all:?}"))
}

fn pids(s: &Value) -> Vec<i64> {
    s["pids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_i64().unwrap())
        .collect()
}

#[test]
fn failing_servers_are_reported_and_nothing_is_left_running() {
    let dir = TempPath::new("suite-fail", "");
    std::fs::create_dir_all(dir.path()).unwrap();
    let py = fixture("echo_server.py");
    let suite = dir.path().join("s.toml");
    std::fs::write(
        &suite,
        format!(
            r#"
name = "misbehaving servers"

[[server]]
name = "dies"
command = "python3 {py} {{host}} {{port}} --die-after-bytes 20000"

[[server]]
name = "never-ready"
command = "sleep 600"
ready_timeout = "1s"

[[server]]
name = "exits-at-once"
command = "sh -c 'exit 7'"

[[server]]
name = "ignores-term"
command = "python3 {py} {{host}} {{port}} --ignore-term --child"
grace = "300ms"

[[server]]
name = "good"
command = "{{wirebench}} serve echo --listen {{addr}} --threads 1"

[[load]]
name = "echo"
protocol = "echo"
connections = [2]
body_size = ["64"]
duration = "2s"
warmup = "0s"
"#
        ),
    )
    .unwrap();
    let out = dir.path().join("out");
    let mut p = Proc::wirebench(&[
        "suite",
        suite.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let code = p.finish(Duration::from_secs(120));
    assert_eq!(code, 1, "stdout:\n{}\nstderr:\n{}", p.stdout(), p.stderr());
    let all = statuses(&out);
    assert_eq!(all.len(), 5);
    assert_eq!(status(&all, "dies")["state"], "crashed", "{all:#?}");
    assert_eq!(status(&all, "never-ready")["state"], "never_ready");
    assert_eq!(
        status(&all, "exits-at-once")["state"],
        "crashed_before_ready"
    );
    assert!(status(&all, "exits-at-once")["message"]
        .as_str()
        .unwrap()
        .contains("exit status: 7"));
    let stubborn = status(&all, "ignores-term");
    assert_eq!(stubborn["state"], "ok");
    assert_eq!(
        stubborn["killed"], true,
        "it ignored SIGTERM, so it needed SIGKILL"
    );
    assert!(
        pids(stubborn).len() >= 2,
        "the child is part of the family: {stubborn}"
    );
    assert_eq!(status(&all, "good")["state"], "ok");
    for s in &all {
        assert_eq!(s["left_behind"].as_array().unwrap().len(), 0, "{s}");
        for pid in pids(s) {
            assert!(!alive(pid), "server {} left pid {pid} running", s["name"]);
        }
    }
    // The never-ready server was started (a pid) and stopped.
    assert_eq!(pids(status(&all, "never-ready")).len(), 1);
    let pts = points(&out);
    let names: Vec<&str> = pts.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "echo__dies__c2-b64-p1__r1.json",
            "echo__good__c2-b64-p1__r1.json",
            "echo__ignores-term__c2-b64-p1__r1.json"
        ]
    );
    let get = |n: &str| &pts.iter().find(|(f, _)| f.contains(n)).unwrap().1;
    // The run against the dying server fell short; the others succeeded.
    assert_eq!(get("__dies__")["outcome"]["success"], false);
    for n in ["__good__", "__ignores-term__"] {
        let d = get(n);
        assert_eq!(d["outcome"]["success"], true, "{d:#}");
        assert!(d["totals"]["ok"].as_u64().unwrap() > 0);
        assert_eq!(d["suite"]["point"]["connections"], 2);
        assert!(
            d["cpu"]["server_s"].as_f64().unwrap() > 0.0,
            "server CPU was sampled: {d:#}"
        );
        assert!(
            d["suite"]["server_cost"]["rss_bytes"]["max"]
                .as_f64()
                .unwrap()
                > 0.0
        );
    }
    // Re-rendering reads these files only.
    let html = dir.path().join("r.html");
    let mut r = Proc::wirebench(&[
        "report",
        out.to_str().unwrap(),
        "-o",
        html.to_str().unwrap(),
        "--markdown",
        dir.path().join("r.md").to_str().unwrap(),
    ]);
    assert_eq!(r.finish(RUN_LIMIT), 0, "{}", r.stderr());
    let md = std::fs::read_to_string(dir.path().join("r.md")).unwrap();
    assert!(md.contains("| connections | dies throughput |"), "{md}");
    assert_eq!(
        md.lines().filter(|l| l.starts_with("| 2 |")).count(),
        1,
        "{md}"
    );
}

#[test]
fn ctrl_c_stops_the_suite_and_its_server() {
    let dir = TempPath::new("suite-int", "");
    std::fs::create_dir_all(dir.path()).unwrap();
    let suite = dir.path().join("s.toml");
    let py = fixture("echo_server.py");
    std::fs::write(
        &suite,
        format!(
            r#"
[[server]]
name = "py"
command = "python3 {py} {{host}} {{port}} --child"

[[server]]
name = "second"
command = "{{wirebench}} serve echo --listen {{addr}} --threads 1"

[[load]]
protocol = "echo"
connections = [1, 2, 3, 4]
duration = "3s"
warmup = "0s"
repeat = 3
"#
        ),
    )
    .unwrap();
    let out = dir.path().join("out");
    let mut p = Proc::wirebench(&[
        "suite",
        suite.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let first = wait_until(Duration::from_secs(30), || {
        std::fs::read_dir(out.join("points"))
            .map(|d| d.count() >= 1)
            .unwrap_or(false)
    });
    assert!(first, "no point finished: {}", p.stderr());
    // SAFETY: signalling the child we started.
    unsafe { libc::kill(p.pid() as i32, libc::SIGINT) };
    let code = p.finish(Duration::from_secs(20));
    assert_eq!(code, 1, "{}", p.stderr());
    assert!(
        p.stderr().contains("interrupted") || p.stdout().contains("interrupted"),
        "{}\n{}",
        p.stdout(),
        p.stderr()
    );
    let all = statuses(&out);
    assert_eq!(all.len(), 1, "the second server never started: {all:?}");
    assert_eq!(all[0]["state"], "interrupted");
    let ps = pids(&all[0]);
    assert!(ps.len() >= 2, "server and its child: {ps:?}");
    for pid in ps {
        assert!(!alive(pid), "pid {pid} still runs after Ctrl-C");
    }
    assert!(points(&out).len() < 12);
}

#[test]
fn suite_file_errors_name_file_line_and_key() {
    let dir = TempPath::new("suite-bad", "");
    std::fs::create_dir_all(dir.path()).unwrap();
    let cases: [(&str, &str, &str); 6] = [
        (
            "[[server]]\nname = \"a\"\ncommand = \"x\"\ncolour = \"red\"\n[[load]]\nprotocol = \"echo\"\n",
            ":4:",
            "unknown field `colour`",
        ),
        ("[[server]]\nname = \"a\"\n\n[[load]]\nprotocol = \"echo\"\n", ":1:", "missing field `command`"),
        (
            "[[server]]\nname = \"a\"\ncommand = \"x\"\ncpus = \"0,999\"\n[[load]]\nprotocol = \"echo\"\n",
            ":4:",
            "server 'a' key `cpus`: CPU 999 is not available here",
        ),
        (
            "[[server]]\nname = \"a\"\ncommand = \"x\"\n[[load]]\nprotocol = \"echo\"\ncpus = \"5-2\"\n",
            ":6:",
            "key `cpus`",
        ),
        (
            "[[server]]\nname = \"a\"\ncommand = \"x\"\n[[load]]\nprotocol = \"http\"\ngenerator = \"wrk\"\nrate = [1000.0]\n",
            ":7:",
            "key `rate`: wrk has no constant-rate mode",
        ),
        (
            "[[server]]\nname = \"a\"\ncommand = \"x\"\n[[load]]\nprotocol = \"smtp\"\n",
            ":5:",
            "key `protocol`: 'smtp' is not one of",
        ),
    ];
    for (i, (text, line, what)) in cases.iter().enumerate() {
        let f = dir.path().join(format!("bad{i}.toml"));
        std::fs::write(&f, text).unwrap();
        let out = dir.path().join(format!("out{i}"));
        let mut p =
            Proc::wirebench(&["suite", f.to_str().unwrap(), "--out", out.to_str().unwrap()]);
        assert_eq!(p.finish(RUN_LIMIT), 2, "case {i}: {}", p.stderr());
        let err = assert_one_line_error(&p.stderr(), what);
        assert!(
            err.contains(&format!("bad{i}.toml{line}")),
            "case {i}: {err}"
        );
        assert!(err.contains(what), "case {i}: {err}");
        assert!(
            !out.exists(),
            "case {i}: nothing may start before the file is valid"
        );
    }
}

#[test]
fn profile_writes_a_flame_graph_of_the_server() {
    let dir = TempPath::new("suite-prof", "");
    std::fs::create_dir_all(dir.path()).unwrap();
    let suite = dir.path().join("s.toml");
    std::fs::write(
        &suite,
        r#"
[[server]]
name = "wb"
command = "{wirebench} serve echo --listen {addr} --threads 1"
[[load]]
protocol = "echo"
connections = [4]
duration = "2s"
warmup = "0s"
"#,
    )
    .unwrap();
    let out = dir.path().join("out");
    let mut p = Proc::wirebench(&[
        "suite",
        suite.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--profile",
    ]);
    assert_eq!(p.finish(Duration::from_secs(120)), 0, "{}", p.stderr());
    let all = statuses(&out);
    assert_eq!(
        all[0]["flame_graph"],
        "flame-wb.svg",
        "perf must be installed (Debian: linux-perf): {}",
        p.stderr()
    );
    let svg = std::fs::read_to_string(out.join("flame-wb.svg")).unwrap();
    assert!(
        svg.starts_with("<?xml") || svg.starts_with("<svg"),
        "{}",
        &svg[..100.min(svg.len())]
    );
    // The server's own thread is in it: every sample's root frame is its thread's name
    // (`wb-serve-0`). Not a `wirebench::` function: about 1.5% of an echo server's
    // samples unwind to one (the rest end in the kernel and libc), so a loaded
    // machine's few hundred samples could hold none.
    assert!(
        svg.contains("<title>wb-serve-0 ("),
        "no frame of the server's thread wb-serve-0 in the flame graph"
    );
    let frames = svg
        .matches("<g><title>")
        .count()
        .max(svg.matches("<title>").count());
    assert!(frames > 10, "only {frames} frames");
    // The report embeds it.
    let html = dir.path().join("r.html");
    let mut r = Proc::wirebench(&[
        "report",
        out.to_str().unwrap(),
        "-o",
        html.to_str().unwrap(),
    ]);
    assert_eq!(r.finish(RUN_LIMIT), 0);
    assert!(std::fs::read_to_string(&html)
        .unwrap()
        .contains("data:image/svg+xml;base64,"));
}
