//! `wirebench merge`: shards of real `wirebench echo` runs against one `serve echo`
//! merge to exactly what the server counted; a real run's histogram split three ways
//! merges back to the same bytes; the merge validates against the schema, and
//! `report` and `compare` take it. Refusals are rows of bad_input.rs.

use crate::common::*;
use serde_json::{json, Value};
use std::path::Path;
use wirebench::stats::latency::Latency;

/// Makes `v` shard `index` of `count` of run `run`, measured from its own start.
fn shardify(v: &mut Value, index: u32, count: u32, run: &str) {
    let start = v["started_unix_ms"].clone();
    v["shard"] = json!({
        "index": index, "count": count, "run_id": run, "start_at_unix_ms": null,
        "measured_start_unix_ms": start, "portion": {"requests": v["totals"]["expected"]}
    });
}

fn write(path: &Path, v: &Value) {
    std::fs::write(path, serde_json::to_string_pretty(v).unwrap()).unwrap();
}

fn wb(args: &[&str]) -> (i32, String, String) {
    let mut p = Proc::wirebench(args);
    let code = p.finish(RUN_LIMIT);
    (code, p.stdout(), p.stderr())
}

fn decode(v: &Value) -> Latency {
    Latency::decode(v["histogram"]["data"].as_str().expect("histogram data")).expect("decodes")
}

/// "... bytes in 828,000 out ..." of the server's final line, as a number.
fn bytes_in(line: &str) -> u64 {
    let after = line.split(" bytes in ").nth(1).expect("bytes in");
    after
        .split_whitespace()
        .next()
        .unwrap()
        .replace(',', "")
        .parse()
        .unwrap()
}

#[test]
fn three_echo_shards_merge_to_what_the_server_counted() {
    let mut server = Served::start(&["--threads", "1"]);
    let addr = server.addr();
    let dir = TempPath::new("merge-shards", "");
    std::fs::create_dir(dir.path()).unwrap();
    let mut parts = Vec::new();
    for (i, n) in [3000u64, 2000, 1000].into_iter().enumerate() {
        let out = run_json(&["echo", &addr, "-n", &n.to_string(), "-c", "2", "-t", "1"]);
        out.assert_clean(n);
        let mut v = out.json().clone();
        shardify(&mut v, i as u32, 3, "job-42");
        // The shards share the whole run's config (as --shard writes it).
        v["config"]["plan"] = json!({"type": "count", "requests": 6000});
        write(&dir.path().join(format!("shard-{i}.json")), &v);
        parts.push(v);
    }
    let last = server.stop_final_line();

    let merged = dir.path().join("merged.json");
    let (code, stdout, stderr) = wb(&["merge", dir.s(), "-o", merged.to_str().unwrap()]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(stdout.contains("merged 3 shards of run job-42"), "{stdout}");
    assert!(
        stdout.contains("messages:     6,000 echoed of 6,000 sent"),
        "{stdout}"
    );
    // Three processes' peaks added up are said to be that, not one process's VmHWM.
    assert!(
        stdout.contains(" (the sum of 3 wirebench processes' own peaks (VmHWM))\n"),
        "{stdout}"
    );
    let m: Value = serde_json::from_str(&std::fs::read_to_string(&merged).unwrap()).unwrap();

    // The merged count is the server's own count: every frame it read, once.
    assert_eq!(ju(&m, "/totals/ok"), 6000);
    assert_eq!(bytes_in(&last), 6000 * ECHO_FRAME, "{last}");
    assert_eq!(ju(&m, "/totals/bytes_sent"), bytes_in(&last));
    assert_eq!(ju(&m, "/totals/bytes_received"), 6000 * ECHO_FRAME);
    assert_eq!(ju(&m, "/totals/sent"), 6000);
    assert_eq!(m["totals"]["invariant_holds"], true);
    // The histogram: the three added, bit for bit; percentiles from it.
    let mut sum = Latency::new();
    for p in &parts {
        sum.add(&decode(p));
    }
    assert_eq!(m["histogram"]["data"].as_str().unwrap(), sum.encode());
    assert_eq!(ju(&m, "/histogram/count"), 6000);
    assert_eq!(m["latency_us"]["p99"].as_f64().unwrap(), sum.summary().p99);
    for q in ["p50", "p99"] {
        let own: Vec<f64> = parts
            .iter()
            .map(|p| p["latency_us"][q].as_f64().unwrap())
            .collect();
        let mq = m["latency_us"][q].as_f64().unwrap();
        let (lo, hi) = own
            .iter()
            .fold((f64::MAX, 0.0f64), |(l, h), &x| (l.min(x), h.max(x)));
        assert!(lo <= mq && mq <= hi, "{q} {mq} outside the shards' {own:?}");
    }
    // CPU summed; each part kept; the merge block.
    let cpu: f64 = parts
        .iter()
        .map(|p| p["cpu"]["client_s"].as_f64().unwrap())
        .sum();
    assert!((m["cpu"]["client_s"].as_f64().unwrap() - cpu).abs() < 1e-9);
    assert_eq!(m["merge"]["of"], "shards");
    assert_eq!(m["merge"]["present"], json!([0, 1, 2]));
    assert_eq!(m["merge"]["partial"], false);
    assert_eq!(m["merge"]["parts"][1]["totals"]["ok"], 2000);
    let ok_rows: u64 = m["intervals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| ju(r, "/ok"))
        .sum();
    assert_eq!(ok_rows, 6000);
    assert!(m.get("shard").is_none());
    let schema = schema_validator("result.schema.json");
    let errors: Vec<String> = schema
        .iter_errors(&m)
        .map(|e| format!("{e} at {}", e.instance_path))
        .collect();
    assert!(errors.is_empty(), "{errors:?}");

    // A second merge over its own output is allowed (and reads the shards only).
    let (code, _, stderr) = wb(&["merge", dir.s(), "-o", merged.to_str().unwrap(), "-q"]);
    assert_eq!(code, 0, "{stderr}");

    // `report` and `compare` take it as a suite point (the suite adds its block).
    let results = TempPath::new("merge-report", "");
    std::fs::create_dir_all(results.path().join("points")).unwrap();
    let mut point = m.clone();
    point["suite"] = json!({
        "name": "merged", "load": "echo", "server": "serve-echo", "protocol": "echo",
        "generator": "wirebench", "swept": ["connections"], "point": {"connections": 6},
        "repeat": 1, "round": 1,
        "server_cost": {"cpu_s": 0.1, "cpu_percent": {"avg": 10.0}, "rss_bytes": {"max": 1048576.0}}
    });
    write(&results.path().join("points/merged.json"), &point);
    let html = results.path().join("report.html");
    let (code, stdout, stderr) = wb(&["report", results.s(), "-o", html.to_str().unwrap()]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(stdout.contains("(1 result files, 1 loads)"), "{stdout}");
    let (code, stdout, stderr) = wb(&["compare", results.s(), results.s()]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let p99 = wirebench::report::format::micros(sum.summary().p99);
    assert!(
        stdout
            .lines()
            .any(|l| l.contains("p99 us") && l.contains(&p99)),
        "want the merged p99 {p99}:\n{stdout}"
    );
}

#[test]
fn a_real_histogram_split_three_ways_merges_back_to_the_same_bytes() {
    let out = run_json(&["echo", "-n", "4000", "-c", "2", "-t", "1"]);
    out.assert_clean(4000);
    let whole = out.json().clone();
    let original = decode(&whole);
    // Deal the recorded samples out to three shards, bucket by bucket.
    let mut split = [Latency::new(), Latency::new(), Latency::new()];
    let mut k = 0usize;
    for v in original.inner().iter_recorded() {
        for _ in 0..v.count_at_value() {
            split[k % 3].record(v.value_iterated_to());
            k += 1;
        }
    }
    let dir = TempPath::new("merge-split", "");
    std::fs::create_dir(dir.path()).unwrap();
    let mut files = Vec::new();
    for (i, l) in split.iter().enumerate() {
        let n = l.count();
        let mut v = whole.clone();
        v["histogram"]["data"] = json!(l.encode());
        v["histogram"]["count"] = json!(n);
        // The summary says what its histogram holds (a merge checks they agree).
        v["latency_us"] = serde_json::to_value(l.summary()).unwrap();
        for f in ["sent", "ok"] {
            v["totals"][f] = json!(n);
        }
        for f in ["bytes_sent", "bytes_received"] {
            v["totals"][f] = json!(n * ECHO_FRAME);
        }
        v["intervals"] = json!([]);
        shardify(&mut v, i as u32, 3, "split");
        let f = dir.path().join(format!("s{i}.json"));
        write(&f, &v);
        files.push(f.to_string_lossy().into_owned());
    }
    let merged = dir.path().join("out.json");
    let mut args = vec!["merge", "-q", "-o", merged.to_str().unwrap()];
    // Files given out of index order: the merge orders them.
    args.extend([files[2].as_str(), files[0].as_str(), files[1].as_str()]);
    let (code, stdout, stderr) = wb(&args);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let m: Value = serde_json::from_str(&std::fs::read_to_string(&merged).unwrap()).unwrap();
    assert_eq!(
        m["histogram"]["data"], whole["histogram"]["data"],
        "same serialized bytes"
    );
    assert_eq!(m["latency_us"], whole["latency_us"]);
    assert_eq!(ju(&m, "/totals/ok"), 4000);
    assert_eq!(
        ju(&m, "/totals/bytes_received"),
        ju(&whole, "/totals/bytes_received")
    );
    assert_eq!(
        ju(&m, "/totals/bytes_sent"),
        ju(&whole, "/totals/bytes_sent")
    );
}

#[test]
fn a_partial_merge_says_which_shards_it_has() {
    let out = run_json(&["echo", "-n", "500", "-c", "1", "-t", "1"]);
    out.assert_clean(500);
    let dir = TempPath::new("merge-partial", "");
    std::fs::create_dir(dir.path()).unwrap();
    for i in [0u32, 2] {
        let mut v = out.json().clone();
        shardify(&mut v, i, 4, "p");
        write(&dir.path().join(format!("s{i}.json")), &v);
    }
    let merged = dir.path().join("m.json");
    let (code, _, stderr) = wb(&["merge", dir.s(), "-o", merged.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert_eq!(
        assert_one_line_error(&stderr, "missing shards"),
        "wirebench: shard 1, 3 of 4 is missing (give every shard, or --allow-partial to merge those present)"
    );
    assert!(!merged.exists(), "a refused merge writes nothing");
    let (code, stdout, stderr) = wb(&[
        "merge",
        dir.s(),
        "-o",
        merged.to_str().unwrap(),
        "--allow-partial",
    ]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(stdout.contains("(partial: 2 of 4 shards)"), "{stdout}");
    let m: Value = serde_json::from_str(&std::fs::read_to_string(&merged).unwrap()).unwrap();
    assert_eq!(m["merge"]["partial"], true);
    assert_eq!(m["merge"]["present"], json!([0, 2]));
    assert_eq!(m["merge"]["expected"], 4);
    assert_eq!(ju(&m, "/totals/ok"), 1000);
}

#[test]
fn http_shards_merge_their_status_classes_by_the_counter_sum() {
    let mut server = Served::start_as("http", &["--threads", "1"]);
    let url = format!("http://{}/", server.addr());
    let dir = TempPath::new("merge-http", "");
    std::fs::create_dir(dir.path()).unwrap();
    for (i, n) in [700u64, 300].into_iter().enumerate() {
        let out = run_json(&["http", &url, "-n", &n.to_string(), "-c", "2", "-t", "1"]);
        out.assert_clean(n);
        let mut v = out.json().clone();
        assert_eq!(ju(&v, "/status_classes/2xx"), n);
        shardify(&mut v, i as u32, 2, "http-run");
        v["config"]["plan"] = json!({"type": "count", "requests": 1000});
        write(&dir.path().join(format!("s{i}.json")), &v);
    }
    server.stop_final_line();
    let merged = dir.path().join("m.json");
    let (code, stdout, stderr) = wb(&["merge", dir.s(), "-o", merged.to_str().unwrap(), "-q"]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let m: Value = serde_json::from_str(&std::fs::read_to_string(&merged).unwrap()).unwrap();
    assert_eq!(ju(&m, "/totals/ok"), 1000);
    assert_eq!(
        m["status_classes"],
        json!({"1xx": 0, "2xx": 1000, "3xx": 0, "4xx": 0, "5xx": 0})
    );
    let schema = schema_validator("result.schema.json");
    assert!(schema.is_valid(&m));
}

#[test]
fn redis_shards_merge_their_exchange_round_trips_by_the_sum() {
    // AUTH and SELECT on every connection: 2 round trips each, counted by the engine.
    let mut server = Served::start_as("redis", &["--threads", "1"]);
    let addr = server.addr().to_string();
    let dir = TempPath::new("merge-redis", "");
    std::fs::create_dir(dir.path()).unwrap();
    let c = 2u64;
    for (i, n) in [600u64, 400].into_iter().enumerate() {
        let out = run_json(&[
            "redis",
            &addr,
            "-n",
            &n.to_string(),
            "-c",
            "2",
            "-t",
            "1",
            "--auth",
            "u:p",
            "--db",
            "2",
        ]);
        out.assert_clean(n);
        let mut v = out.json().clone();
        assert_eq!(ju(&v, "/totals/connections"), c);
        assert_eq!(ju(&v, "/totals/exchange_sent"), 2 * c);
        assert_eq!(ju(&v, "/totals/exchange_answered"), 2 * c);
        shardify(&mut v, i as u32, 2, "redis-run");
        v["config"]["plan"] = json!({"type": "count", "requests": 1000});
        write(&dir.path().join(format!("s{i}.json")), &v);
    }
    server.stop_final_line();
    let merged = dir.path().join("m.json");
    let (code, stdout, stderr) = wb(&["merge", dir.s(), "-o", merged.to_str().unwrap(), "-q"]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    let m: Value = serde_json::from_str(&std::fs::read_to_string(&merged).unwrap()).unwrap();
    assert_eq!(ju(&m, "/totals/ok"), 1000);
    assert_eq!(ju(&m, "/totals/exchange_sent"), 8);
    assert_eq!(ju(&m, "/totals/exchange_answered"), 8);
    assert!(schema_validator("result.schema.json").is_valid(&m));
}

/// Refuses one tampered copy of shard 0 beside an honest shard 1: exit 2, one sentence
/// naming the file and what disagrees, nothing written.
fn refused(dir: &Path, good: &Value, honest: &Path, what: &str, tamper: impl Fn(&mut Value)) {
    let mut v = good.clone();
    tamper(&mut v);
    let bad = dir.join(format!("tampered-{what}.json"));
    write(&bad, &v);
    let merged = dir.join("never.json");
    let (code, stdout, stderr) = wb(&[
        "merge",
        bad.to_str().unwrap(),
        honest.to_str().unwrap(),
        "-o",
        merged.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{what}: {stdout}\n{stderr}");
    let line = assert_one_line_error(&stderr, what);
    let want = format!("wirebench: {}: {what}", bad.display());
    assert!(line.starts_with(&want), "{what}: {line}");
    assert!(
        line.ends_with("; a result changed after wirebench wrote it does not merge"),
        "{line}"
    );
    assert!(!merged.exists(), "{what}: a refused merge wrote its output");
}

#[test]
fn tampered_shards_are_refused_naming_the_field_that_disagrees() {
    let mut server = Served::start(&["--threads", "1"]);
    let addr = server.addr();
    let shard = |i: u32| {
        let out = run_json(&[
            "echo",
            &addr,
            "-n",
            "2000",
            "-c",
            "2",
            "-t",
            "1",
            "--shard",
            &format!("{i}/2"),
            "--run-id",
            "tamper",
        ]);
        out.assert_clean(1000);
        out.json().clone()
    };
    let (s0, s1) = (shard(0), shard(1));
    // Another run of the same size: its histogram counts as many replies.
    let other = run_json(&["echo", &addr, "-n", "1000", "-c", "2", "-t", "1"]);
    other.assert_clean(1000);
    server.stop_final_line();
    let dir = TempPath::new("merge-tampered", "");
    std::fs::create_dir(dir.path()).unwrap();
    let (good, honest) = (dir.path().join("s0.json"), dir.path().join("s1.json"));
    write(&good, &s0);
    write(&honest, &s1);
    // The honest pair merges.
    let merged = dir.path().join("m.json");
    let (code, stdout, stderr) = wb(&["merge", dir.s(), "-o", merged.to_str().unwrap(), "-q"]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    std::fs::remove_file(&good).unwrap();
    let d = dir.path();
    refused(d, &s0, &honest, "totals.sent 1005 is not totals.ok 1000 + totals.errors 0 + totals.in_flight 0, though totals.invariant_holds says it is", |v| {
        v["totals"]["sent"] = json!(1005);
    });
    refused(
        d,
        &s0,
        &honest,
        "totals.sent 1000 is not totals.ok 0 + totals.errors 0 + totals.in_flight 0",
        |v| {
            v["totals"]["ok"] = json!(0);
        },
    );
    refused(
        d,
        &s0,
        &honest,
        "latency_us is not the summary of its histogram (one of them is another run's)",
        |v| {
            v["histogram"] = other.json()["histogram"].clone();
        },
    );
    refused(
        d,
        &s0,
        &honest,
        "histogram.count says 999 but its data hold 1000",
        |v| {
            v["histogram"]["count"] = json!(999);
        },
    );
    refused(
        d,
        &s0,
        &honest,
        "its \"errors\" count 3 failed requests by kind, totals.errors 0",
        |v| {
            v["errors"] = json!({"timeout": 3});
        },
    );
    refused(d, &s0, &honest, "intervals[0].total_ok", |v| {
        let ok = v["intervals"][0]["ok"].as_u64().unwrap();
        v["intervals"][0]["ok"] = json!(ok + 1);
    });
}
