//! `wirebench k8s`: the rendered Indexed Job parses as YAML (PyYAML, as kubectl's
//! reader would) with the fields a sharded run needs and every user string intact;
//! one small render, byte for byte; and `k8s run`, the pod's side, against the
//! built-in server. No cluster here: what a cluster does with it is not tested.

use crate::common::*;
use serde_json::Value;
use std::io::Write;
use std::process::{Command, Stdio};

const PYTHON: &str = "/usr/bin/python3";

/// The manifest as PyYAML reads it, as JSON; None (after saying why) without PyYAML.
fn parse_yaml(yaml: &str) -> Option<Value> {
    let has_yaml = Command::new(PYTHON)
        .args(["-c", "import yaml"])
        .status()
        .is_ok_and(|s| s.success());
    if !has_yaml {
        missing("python3-yaml is not installed (scripts/test.sh installs it)");
        return None;
    }
    let mut child = Command::new(PYTHON)
        .args([
            "-c",
            "import json, sys, yaml; print(json.dumps(yaml.safe_load(sys.stdin.read())))",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start python3");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(yaml.as_bytes())
        .expect("write the manifest");
    let out = child.wait_with_output().expect("python3 ends");
    assert!(
        out.status.success(),
        "not YAML: {}\n{yaml}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(serde_json::from_slice(&out.stdout).expect("python printed JSON"))
}

fn render(args: &[&str]) -> (String, String) {
    let mut all = vec!["k8s", "render"];
    all.extend_from_slice(args);
    let mut p = Proc::wirebench(&all);
    assert_eq!(p.finish(RUN_LIMIT), 0, "render failed: {}", p.stderr());
    (p.stdout(), p.stderr())
}

#[test]
fn the_rendered_job_carries_shards_start_run_id_and_every_user_string_intact() {
    // Quotes, colons, a newline, a '#', a backslash and $(VAR), which Kubernetes would
    // expand in args unless written $$(VAR).
    let header = "X-Note: \"quoted\": a # b\nline two \\ $(HOME)";
    let run_id = "run \"7\": a/b # c";
    let image = "registry.example:5000/wire-bench:1.0";
    let (yaml, stderr) = render(&[
        "--shards",
        "4",
        "--run-id",
        run_id,
        "--start-at",
        "2026-05-01T12:00:00.250+02:00",
        "--image",
        image,
        "--namespace",
        "bench-ns",
        "--",
        "http",
        "http://web.bench.svc:8080/path?q=1",
        "-H",
        header,
        "-c",
        "20",
        "-d",
        "30s",
    ]);
    assert_eq!(stderr, "", "a given run id is not announced");
    let Some(job) = parse_yaml(&yaml) else { return };
    assert_eq!(job["apiVersion"], "batch/v1");
    assert_eq!(job["kind"], "Job");
    assert_eq!(job["metadata"]["name"], "wirebench-run-7-a-b-c");
    assert_eq!(job["metadata"]["namespace"], "bench-ns");
    assert_eq!(job["metadata"]["annotations"]["wirebench/run-id"], run_id);
    let spec = &job["spec"];
    assert_eq!(spec["completionMode"], "Indexed");
    assert_eq!(spec["completions"], 4);
    assert_eq!(spec["parallelism"], 4);
    assert_eq!(spec["backoffLimit"], 0);
    let pod = &spec["template"]["spec"];
    assert_eq!(pod["restartPolicy"], "Never");
    let c = &pod["containers"][0];
    assert_eq!(c["image"], image);
    let args: Vec<&str> = c["args"]
        .as_array()
        .expect("args")
        .iter()
        .map(|a| a.as_str().expect("string arg"))
        .collect();
    let escaped = header.replace('$', "$$");
    assert_eq!(
        args,
        [
            "k8s",
            "run",
            "--out",
            "/results/wirebench-run-7-a-b-c",
            "--",
            "http",
            "http://web.bench.svc:8080/path?q=1",
            "-H",
            &escaped,
            "-c",
            "20",
            "-d",
            "30s",
            "--shards",
            "4",
            "--start-at",
            "2026-05-01T12:00:00.250+02:00",
            "--run-id",
            run_id,
        ]
    );
    assert_eq!(c["volumeMounts"][0]["mountPath"], "/results");
    assert_eq!(pod["volumes"][0]["name"], "results");
}

#[test]
fn a_generated_run_id_is_announced_and_the_start_is_ahead() {
    let before = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_secs();
    let (yaml, stderr) = render(&[
        "--shards",
        "1",
        "--start-in",
        "90s",
        "--",
        "connect",
        "198.18.0.1-198.18.0.4:9000",
        "-n",
        "1000",
    ]);
    let id = stderr
        .trim_end()
        .strip_prefix("k8s render: run id ")
        .and_then(|s| s.strip_suffix(" (choose one with --run-id)"))
        .unwrap_or_else(|| panic!("stderr: {stderr}"));
    assert!(id.starts_with("wb-") && id.len() == 23, "{id}");
    let Some(job) = parse_yaml(&yaml) else { return };
    assert_eq!(job["metadata"]["name"], format!("wirebench-{id}"));
    assert_eq!(job["spec"]["completions"], 1);
    assert!(
        job["metadata"].get("namespace").is_none(),
        "no --namespace: kubectl's own"
    );
    let args = job["spec"]["template"]["spec"]["containers"][0]["args"]
        .as_array()
        .expect("args")
        .clone();
    let after = |flag: &str| {
        let i = args.iter().position(|a| a == flag).expect(flag);
        args[i + 1].as_str().expect("string").to_string()
    };
    assert_eq!(after("--run-id"), id);
    assert_eq!(after("--shards"), "1");
    // 90 s ahead of the render, in RFC 3339 UTC: check it with Python's own calendar.
    let start = after("--start-at");
    let out = Command::new(PYTHON)
        .args([
            "-c",
            "import sys, datetime; print(int(datetime.datetime.fromisoformat(sys.argv[1].replace('Z', '+00:00')).timestamp()))",
            &start,
        ])
        .output()
        .expect("python3");
    let secs: u64 = String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("{start} is not an ISO time"));
    assert!(
        (before + 89..=before + 95).contains(&secs),
        "{start}: {secs} vs {before}"
    );
}

#[test]
fn a_small_render_byte_for_byte() {
    let (yaml, stderr) = render(&[
        "--shards",
        "2",
        "--run-id",
        "bench-7",
        "--start-at",
        "1767225600000",
        "--image",
        "registry.example:5000/wirebench:1.0",
        "--namespace",
        "load",
        "--",
        "echo",
        "10.96.0.15:9000",
        "-c",
        "50",
        "-d",
        "30s",
    ]);
    assert_eq!(stderr, "");
    let want = include_str!("../fixtures/k8s/echo-2-shards.yaml");
    assert_eq!(yaml, want);
}

#[test]
fn k8s_run_writes_the_shard_file_and_prints_it_after_the_marker() {
    let dir = TempPath::new("k8s-run", "");
    let out = dir.path().join("job");
    let mut p = Proc::spawn(
        "env",
        &[
            "JOB_COMPLETION_INDEX=2",
            bin(),
            "k8s",
            "run",
            "--out",
            out.to_str().expect("UTF-8 path"),
            "--",
            "echo",
            "-n",
            "300",
            "-c",
            "3",
            "-t",
            "1",
            "-q",
        ],
        false,
    );
    assert_eq!(p.finish(RUN_LIMIT), 0, "{}", p.stderr());
    let text = std::fs::read_to_string(out.join("shard-2.json")).expect("shard-2.json written");
    let file: Value = serde_json::from_str(&text).expect("JSON file");
    let stdout = p.stdout();
    let marked: Vec<&str> = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("WIREBENCH-RESULT "))
        .collect();
    assert_eq!(marked.len(), 1, "{stdout}");
    let printed: Value = serde_json::from_str(marked[0]).expect("one JSON line");
    assert_eq!(printed, file);
    assert_eq!(file["totals"]["ok"], 300);
    assert_eq!(file["totals"]["sent"], 300);
    assert_eq!(file["kind"], "echo");
}

#[test]
fn collect_sh_takes_each_pods_result_from_its_log_then_merges() {
    // A stand-in kubectl with three pods, the third of which printed no result, and a
    // stand-in wirebench that records how merge was called.
    let dir = TempPath::new("k8s-collect", "");
    std::fs::create_dir(dir.path()).expect("temp dir");
    let write_script = |name: &str, body: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, format!("#!/bin/bash\n{body}")).expect("write script");
        let mut perm = std::fs::metadata(&path).expect("script").permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut perm, 0o755);
        std::fs::set_permissions(&path, perm).expect("chmod");
        path.to_string_lossy().into_owned()
    };
    let kubectl = write_script(
        "kubectl",
        r#"case "$1 $2" in
"get pods") [ "$4" = "job-name=wirebench-r1" ] && printf '0 wirebench-r1-0-aaaaa\n1 wirebench-r1-1-bbbbb\n2 wirebench-r1-2-ccccc\n' ;;
"logs wirebench-r1-0-aaaaa") printf 'summary: 5 ok\nWIREBENCH-RESULT {"shard": 0}\n' ;;
"logs wirebench-r1-1-bbbbb") printf 'WIREBENCH-RESULT {"shard": 1}\nmore text\n' ;;
"logs wirebench-r1-2-ccccc") printf 'wirebench: the server went away\n' ;;
esac
"#,
    );
    let record = dir.path().join("merge-args");
    let wirebench = write_script(
        "wirebench",
        &format!("echo \"$@\" > '{}'\n", record.display()),
    );
    let out = dir.path().join("out");
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/deploy/k8s/collect.sh");
    let mut p = Proc::spawn(
        "env",
        &[
            &format!("KUBECTL={kubectl}"),
            &format!("WIREBENCH={wirebench}"),
            "bash",
            script,
            "wirebench-r1",
            out.to_str().expect("UTF-8"),
        ],
        false,
    );
    assert_eq!(p.finish(RUN_LIMIT), 0, "{}", p.stderr());
    let read = |name: &str| std::fs::read_to_string(out.join(name)).ok();
    assert_eq!(read("shard-0.json").as_deref(), Some("{\"shard\": 0}\n"));
    assert_eq!(read("shard-1.json").as_deref(), Some("{\"shard\": 1}\n"));
    assert_eq!(read("shard-2.json"), None);
    assert!(
        p.stderr()
            .contains("pod wirebench-r1-2-ccccc (shard 2) printed no result"),
        "{}",
        p.stderr()
    );
    let o = out.display();
    assert_eq!(
        std::fs::read_to_string(&record).expect("merge was called"),
        format!("merge {o}/shard-0.json {o}/shard-1.json -o {o}/merged.json\n")
    );
}
