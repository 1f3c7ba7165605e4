//! `wirebench connect`'s series (issue 32): one row per `--interval` whose histogram
//! is the connect latency, every worker process's merged. Its rows add up to the
//! totals (established and failed connects), its `--hlog` reads back in Python's
//! `hdrhistogram` with the JSON's counts, two shards merge per wall-clock step exactly,
//! and `--interval 0` or an `--hlog` that cannot be written is one sentence, exit 2.

use crate::common::*;
use crate::intervals::{read_with_hdrh, step_of};
use crate::shards::{run_shards, start_in};
use serde_json::Value;
use std::time::Duration;
use wirebench::stats::latency::Latency;

fn rows(r: &Value) -> Vec<Value> {
    r["intervals"].as_array().expect("intervals").clone()
}

fn sum(rows: &[Value], field: &str) -> u64 {
    rows.iter().map(|row| ju(row, &format!("/{field}"))).sum()
}

/// Held connections over two processes to a server that listens on one of the two
/// target addresses: half connect, half are refused, and the rows count both.
#[test]
fn each_interval_counts_its_connects_and_the_log_reads_back_with_them() {
    let mut server = Served::start(&["--threads", "1"]);
    let port = server.addr().rsplit(':').next().unwrap().to_string();
    let target = format!("127.0.0.1-127.0.0.2:{port}");
    let log = TempPath::new("connect-iv", ".hlog");
    let r = run_json(&[
        "connect",
        &target,
        "-n",
        "2000",
        "--processes",
        "2",
        "--source",
        "kernel",
        "--connect-rate",
        "4000",
        "--interval",
        "100ms",
        "--hold",
        "300ms",
        "--hlog",
        log.s(),
    ]);
    server.stop_final_line();
    // Refused connects fall short of the plan: exit 1, with the whole result.
    assert_eq!(r.code, 1, "{}", r.explain());
    if let Err(e) = schema_validator("result.schema.json").validate(r.json()) {
        panic!("the result does not validate: {e}");
    }
    let j = r.json();
    assert_eq!(j["config"]["interval_s"], 0.1);
    let rows = rows(j);
    let (established, failed) = (ju(j, "/connect/established"), ju(j, "/connect/failed"));
    assert_eq!((established, failed), (1000, 1000), "{}", r.explain());
    // 2,000 attempts at 4,000/s take half a second: several rows, each with its own.
    let busy = rows.iter().filter(|row| ju(row, "/count") > 0).count();
    assert!(busy >= 3, "{rows:#?}");
    assert_eq!(sum(&rows, "count"), established);
    assert_eq!(sum(&rows, "connect_errors"), failed);
    for row in &rows {
        assert_eq!(row.get("histogram"), None, "kept only by a shard: {row}");
        assert_eq!(row["p50_us"].is_null(), ju(row, "/count") == 0, "{row}");
    }
    let Some(read) = read_with_hdrh(log.s()) else {
        return;
    };
    assert_eq!(read.len(), rows.len(), "one histogram per row");
    for ((tag, count, max_ns, _, _), row) in read.iter().zip(&rows) {
        assert_eq!(tag, "connect");
        assert_eq!(*count, ju(row, "/count"), "{row}");
        if let Some(max) = row["max_us"].as_f64() {
            assert_eq!(*max_ns as f64 / 1e3, max, "{row}");
        }
    }
}

/// Churn: every cycle's connect is in one row, its echo in the same rows' `ok`.
#[test]
fn churn_rows_count_every_cycle_once() {
    let r = run_json(&[
        "connect",
        "--churn",
        "-n",
        "3000",
        "--processes",
        "2",
        "--concurrency",
        "8",
        "--interval",
        "50ms",
    ]);
    assert_eq!(r.code, 0, "{}", r.explain());
    let j = r.json();
    let rows = rows(j);
    assert_eq!(sum(&rows, "count"), ju(j, "/connect/established"));
    assert_eq!(sum(&rows, "count"), 3000);
    assert_eq!(sum(&rows, "connect_errors"), 0);
    assert_eq!(sum(&rows, "ok"), r.u("/totals/ok"));
    assert_eq!(ju(rows.last().unwrap(), "/total_ok"), 3000);
}

#[test]
fn two_connect_shards_merge_per_wall_clock_step_exactly() {
    let mut server = Served::start(&["--threads", "1"]);
    let addr = server.addr();
    let at = start_in(Duration::from_millis(1500));
    let runs = run_shards(
        2,
        &[
            "connect",
            &addr,
            "--churn",
            "-n",
            "3000",
            "--connect-rate",
            "2000",
            "--concurrency",
            "4",
            "--interval",
            "500ms",
            "--run-id",
            "conn-iv",
            "--start-at",
            &at,
        ],
    );
    server.stop_final_line();
    let shards: Vec<Value> = runs
        .iter()
        .map(|r| {
            assert_eq!(r.code, 0, "{}", r.explain());
            r.json().clone()
        })
        .collect();
    let files: Vec<TempPath> = (0..2).map(|_| TempPath::new("conn-iv", ".json")).collect();
    for (f, s) in files.iter().zip(&shards) {
        std::fs::write(f.path(), serde_json::to_string(s).unwrap()).unwrap();
        // A shard's rows keep their histograms, whose counts are the rows'.
        for row in s["intervals"].as_array().unwrap() {
            let h = row["histogram"]
                .as_str()
                .map(|t| Latency::decode(t).unwrap());
            assert_eq!(h.map_or(0, |h| h.count()), ju(row, "/count"), "{row}");
        }
    }
    let out = TempPath::new("conn-iv-merged", ".json");
    let mut p = Proc::wirebench(&["merge", files[0].s(), files[1].s(), "-o", out.s(), "-q"]);
    assert_eq!(p.finish(Duration::from_secs(30)), 0, "{}", p.stderr());
    let m: Value = serde_json::from_str(&std::fs::read_to_string(out.path()).unwrap()).unwrap();
    if let Err(e) = schema_validator("result.schema.json").validate(&m) {
        panic!("the merged result does not validate: {e}");
    }
    let merged = rows(&m);
    // By hand: each shard row's histogram and counts in the step holding its middle.
    let origin = shards
        .iter()
        .map(|s| ju(s, "/shard/measured_start_unix_ms"))
        .min()
        .unwrap();
    let mut sums: Vec<(Latency, u64)> = (0..merged.len()).map(|_| (Latency::new(), 0)).collect();
    for s in &shards {
        let offset_s = (ju(s, "/shard/measured_start_unix_ms") - origin) as f64 / 1e3;
        for row in s["intervals"].as_array().unwrap() {
            let end = offset_s + row["t_s"].as_f64().unwrap();
            let k = step_of(end - row["duration_s"].as_f64().unwrap(), end, 0.5);
            if let Some(h) = row["histogram"].as_str() {
                sums[k].0.add(&Latency::decode(h).unwrap());
            }
            sums[k].1 += ju(row, "/ok");
        }
    }
    for (row, (l, ok)) in merged.iter().zip(&sums) {
        assert_eq!(ju(row, "/count"), l.count(), "{row}");
        assert_eq!(ju(row, "/ok"), *ok, "{row}");
        let want = (l.count() > 0).then(|| l.quantile_ns(0.99) as f64 / 1e3);
        assert_eq!(row["p99_us"].as_f64(), want, "{row}");
    }
    // 3,000 cycles at 2,000/s: at least three steps of 500 ms, every connect in one.
    assert!(merged.len() >= 3, "{merged:#?}");
    assert_eq!(sum(&merged, "count"), 3000);
    assert_eq!(ju(&m, "/connect/established"), 3000);
}

#[test]
fn bad_interval_and_unwritable_log_are_one_sentence_before_connecting() {
    let cases: [(&[&str], &str); 2] = [
        (&["--interval", "0"], "wirebench: --interval must be at least 10ms\n"),
        (
            &["--hlog", "/nonexistent-wirebench-dir/c.hlog"],
            "wirebench: cannot write the interval log to /nonexistent-wirebench-dir/c.hlog: No such file or directory (os error 2)\n",
        ),
    ];
    for (flags, said) in cases {
        let mut args = vec!["connect", "-n", "10"];
        args.extend_from_slice(flags);
        let mut p = Proc::wirebench(&args);
        assert_eq!(p.finish(RUN_LIMIT), 2, "{flags:?}: {}", p.stderr());
        assert_eq!(p.stderr(), said, "{flags:?}");
        assert_eq!(p.stdout(), "", "{flags:?}");
    }
}
