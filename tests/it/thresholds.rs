//! `--threshold`: a passing and a failing set held to runs of one server exit 0 and 3,
//! the table names the failing threshold, the JSON lists each with its measure; a run
//! that both fell short and failed a threshold exits 3; `wirebench merge` holds the
//! shards' recorded thresholds and its own to the merged figures, never a shard's.
//! Every limit is one no machine can miss or meet (1 ns, a billion per second) or one
//! computed from the results' own counts: no timing decides a verdict. Bad input is
//! rows of bad_input.rs.

use crate::common::*;
use serde_json::{json, Value};

const PASSING: [&str; 4] = ["p99<60s", "errors<=0", "errors{timeout}<1", "max<60s"];
const FAILING: [&str; 2] = ["throughput>=1000000000/s", "p99.9<1ns"];

fn with_thresholds<'a>(base: &[&'a str], ts: &[&'a str]) -> Vec<&'a str> {
    let mut args = base.to_vec();
    for t in ts {
        args.extend(["--threshold", t]);
    }
    args
}

fn verdicts(r: &RunOut) -> Vec<(String, bool)> {
    r.json()["thresholds"]
        .as_array()
        .unwrap_or_else(|| panic!("no thresholds in the result\n{}", r.explain()))
        .iter()
        .map(|t| {
            (
                t["expression"].as_str().unwrap().to_string(),
                t["pass"] == true,
            )
        })
        .collect()
}

#[test]
fn a_passing_set_exits_0_and_a_failing_one_exits_3_naming_it() {
    let server = Served::start(&["--threads", "1"]);
    let addr = server.addr();
    let base = ["echo", &addr, "-n", "2000", "-c", "2", "-t", "1"];

    let pass = run_json(&with_thresholds(&base, &PASSING));
    pass.assert_clean(2000);
    assert!(
        pass.stdout
            .contains("thresholds:   all 4 passed\n  pass  p99<60s"),
        "{}",
        pass.explain()
    );
    let want: Vec<(String, bool)> = PASSING.iter().map(|t| (t.to_string(), true)).collect();
    assert_eq!(verdicts(&pass), want);
    assert_eq!(pass.json()["thresholds"][1]["measured"], json!(0.0));
    assert!(schema_validator("result.schema.json").is_valid(pass.json()));

    let all: Vec<&str> = PASSING.iter().chain(&FAILING).copied().collect();
    let fail = run_json(&with_thresholds(&base, &all));
    assert_eq!(fail.code, 3, "{}", fail.explain());
    assert_eq!(
        fail.u("/totals/ok"),
        2000,
        "the run itself did all it was asked"
    );
    assert!(
        fail.stdout.contains("thresholds:   2 of 6 failed\n"),
        "{}",
        fail.explain()
    );
    assert!(
        fail.stdout
            .contains("\n  FAIL  throughput>=1000000000/s  measured "),
        "{}",
        fail.explain()
    );
    assert!(
        fail.stdout.contains("\n  FAIL  p99.9<1ns"),
        "{}",
        fail.explain()
    );
    assert!(
        fail.stdout.contains("\n  pass  errors{timeout}<1"),
        "{}",
        fail.explain()
    );
    let line = assert_one_line_error(&fail.stderr, "failed thresholds");
    assert!(
        line.starts_with(
            "wirebench: 2 of 6 thresholds failed: throughput>=1000000000/s (measured "
        ),
        "{line}"
    );
    let mut want: Vec<(String, bool)> = PASSING.iter().map(|t| (t.to_string(), true)).collect();
    want.extend(FAILING.iter().map(|t| (t.to_string(), false)));
    assert_eq!(verdicts(&fail), want);
    // The measure is in the limit's unit: the run's own throughput, per second.
    let measured = fail.json()["thresholds"][4]["measured"].as_f64().unwrap();
    assert_eq!(
        measured,
        fail.json()["throughput"]["msgs_per_s"].as_f64().unwrap()
    );
    assert_eq!(fail.json()["thresholds"][4]["unit"], "/s");
    assert_eq!(fail.json()["outcome"]["success"], true);
    assert!(schema_validator("result.schema.json").is_valid(fail.json()));
}

#[test]
fn a_run_that_fell_short_and_failed_a_threshold_exits_3_saying_both() {
    // Every reply is held 5 s against a 100 ms timeout: each of the 3 requests fails.
    let server = Served::start(&["--threads", "1", "--delay", "5s"]);
    let addr = server.addr();
    let base = [
        "echo",
        &addr,
        "-n",
        "3",
        "-c",
        "1",
        "-t",
        "1",
        "--timeout",
        "100ms",
    ];

    let tolerant = run_json(&with_thresholds(&base, &["errors<=3"]));
    assert_eq!(
        tolerant.code,
        1,
        "fell short, every threshold met\n{}",
        tolerant.explain()
    );
    assert_eq!(tolerant.u("/totals/errors"), 3, "{}", tolerant.explain());

    let strict = run_json(&with_thresholds(&base, &["errors<3", "errors{timeout}<=3"]));
    assert_eq!(strict.code, 3, "{}", strict.explain());
    let line = assert_one_line_error(&strict.stderr, "fell short and failed");
    assert!(
        line.starts_with(
            "wirebench: 1 of 2 thresholds failed: errors<3 (measured 3); the run fell short: "
        ),
        "{line}"
    );
    assert_eq!(strict.json()["outcome"]["success"], false);
}

/// Two real shards of one run (as `--shard I/2` writes them), set side by side: one
/// measured start and one measured time, the longer of theirs.
fn two_shards() -> Vec<Value> {
    let server = Served::start(&["--threads", "1"]);
    let addr = server.addr();
    let mut shards = Vec::new();
    for i in 0..2u32 {
        let out = run_json(&["echo", &addr, "-n", "1000", "-c", "1", "-t", "1"]);
        out.assert_clean(1000);
        let mut v = out.json().clone();
        v["shard"] = json!({
            "index": i, "count": 2, "run_id": "verdict", "start_at_unix_ms": null,
            "measured_start_unix_ms": null, "portion": {"requests": 1000}
        });
        v["config"]["plan"] = json!({"type": "count", "requests": 2000});
        shards.push(v);
    }
    let start = shards[0]["started_unix_ms"].clone();
    let span = shards
        .iter()
        .map(|s| s["elapsed_s"].as_f64().unwrap())
        .fold(0.0, f64::max);
    for v in &mut shards {
        v["started_unix_ms"] = start.clone();
        v["shard"]["measured_start_unix_ms"] = start.clone();
        v["elapsed_s"] = json!(span);
        v["throughput"]["msgs_per_s"] = json!(1000.0 / span);
    }
    shards
}

fn write_shards(dir: &TempPath, shards: &[Value], recorded: &[Value]) {
    for (i, v) in shards.iter().enumerate() {
        let mut v = v.clone();
        v["thresholds"] = Value::Array(recorded.to_vec());
        let path = dir.path().join(format!("shard-{i}.json"));
        std::fs::write(path, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    }
}

fn merge(dir: &TempPath, extra: &[&str]) -> (i32, String, String, Value) {
    let out = dir.path().join("merged.json");
    let mut args = vec!["merge", dir.s(), "-o", out.to_str().unwrap()];
    args.extend_from_slice(extra);
    let mut p = Proc::wirebench(&args);
    let code = p.finish(RUN_LIMIT);
    let merged = std::fs::read_to_string(&out)
        .map(|t| serde_json::from_str(&t).expect("merged JSON"))
        .unwrap_or(Value::Null);
    (code, p.stdout(), p.stderr(), merged)
}

#[test]
fn merge_holds_the_shards_thresholds_to_the_merged_run() {
    let dir = TempPath::new("thresholds-merge", "");
    std::fs::create_dir(dir.path()).unwrap();
    let shards = two_shards();
    // Each shard sends 1,000 in `span`; side by side they send 2,000 in it.
    let span = shards[0]["elapsed_s"].as_f64().unwrap();
    let (alone, together) = (1000.0 / span, 2000.0 / span);
    let between = (1500.0 / span).round();
    // Recorded by the shards and failed by each (it asks more than one shard sends):
    // the merged run meets it, and the merged verdict is the one that counts.
    let asked = format!("throughput>={between}/s");
    let failed_alone = json!({"expression": asked, "measured": alone, "unit": "/s", "pass": false});
    write_shards(&dir, &shards, &[failed_alone]);

    let (code, stdout, stderr, m) = merge(&dir, &[]);
    assert_eq!(code, 0, "{stdout}\n{stderr}");
    assert!(
        stdout.contains(&format!("  pass  {asked}  measured ")),
        "{stdout}"
    );
    assert_eq!(m["thresholds"][0]["pass"], true);
    let measured = m["thresholds"][0]["measured"].as_f64().unwrap();
    assert_eq!(measured, m["throughput"]["msgs_per_s"].as_f64().unwrap());
    assert!(
        (measured - together).abs() < 1e-6 * together,
        "{measured} vs {together}"
    );
    assert!(schema_validator("result.schema.json").is_valid(&m));

    // merge's own threshold, which each shard alone meets, fails on the merged run.
    let ceiling = format!("throughput<{between}/s");
    let (code, stdout, stderr, m) = merge(&dir, &["--threshold", &ceiling]);
    assert_eq!(code, 3, "{stdout}\n{stderr}");
    assert!(stdout.contains(&format!("  FAIL  {ceiling}")), "{stdout}");
    let line = assert_one_line_error(&stderr, "merged threshold");
    assert!(
        line.starts_with(&format!("wirebench: 1 of 2 thresholds failed: {ceiling}")),
        "{line}"
    );
    assert_eq!(m["thresholds"].as_array().unwrap().len(), 2);
}
