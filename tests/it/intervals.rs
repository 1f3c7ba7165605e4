//! Per-interval histograms (issue 32): the interval log (`--hlog`) read back by a real
//! reader, Python's `hdrhistogram` package (`hdrh.log.HistogramLogReader`, installed by
//! scripts/test.sh into ~/.cache/wirebench/pylib), holds per interval exactly the
//! counts the JSON's rows say; shards' interval histograms merge per wall-clock step
//! exactly; `--interval 0` and an `--hlog` that cannot be written are one sentence,
//! exit 2, before anything runs.

use crate::common::*;
use crate::shards::{merge_shards, run_shards, start_in};
use serde_json::Value;
use std::time::Duration;
use wirebench::stats::latency::Latency;

/// Where scripts/test.sh puts the Python package (`pip install --target`).
fn pylib() -> std::path::PathBuf {
    let home = std::env::var_os("HOME").unwrap_or_default();
    std::path::Path::new(&home).join(".cache/wirebench/pylib")
}

/// One interval as hdrh read it: tag, count, max (ns), start and end (ms since the epoch).
pub(crate) type Read = (String, u64, u64, f64, f64);

/// Reads an interval log with `hdrh.log.HistogramLogReader` (a reference histogram of
/// wirebench's bounds), one line per interval: tag, count, max (ns), start and end
/// (ms since the epoch). None when the package is not installed.
pub(crate) fn read_with_hdrh(log: &str) -> Option<Vec<Read>> {
    const PY: &str = r#"
import sys
from hdrh.histogram import HdrHistogram
from hdrh.log import HistogramLogReader
reader = HistogramLogReader(sys.argv[1], HdrHistogram(1, 3600 * 10**9, 3))
while True:
    h = reader.get_next_interval_histogram()
    if h is None:
        break
    print(h.get_tag(), h.get_total_count(), h.get_max_value(),
          h.get_start_time_stamp(), h.get_end_time_stamp())
"#;
    let probe = std::process::Command::new("/usr/bin/python3")
        .args(["-c", "import hdrh.log"])
        .env("PYTHONPATH", pylib())
        .output()
        .ok()?;
    if !probe.status.success() {
        missing("the Python hdrhistogram package is not installed (scripts/test.sh installs it)");
        return None;
    }
    let out = std::process::Command::new("/usr/bin/python3")
        .args(["-c", PY, log])
        .env("PYTHONPATH", pylib())
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "hdrh could not read the log: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|l| {
                let f: Vec<&str> = l.split(' ').collect();
                (
                    f[0].to_string(),
                    f[1].parse().unwrap(),
                    f[2].parse().unwrap(),
                    f[3].parse().unwrap(),
                    f[4].parse().unwrap(),
                )
            })
            .collect(),
    )
}

#[test]
fn the_interval_log_reads_back_in_pythons_hdrh_with_the_jsons_counts() {
    let log = TempPath::new("intervals", ".hlog");
    let r = run_json(&[
        "echo",
        "-t",
        "2",
        "-c",
        "4",
        "-d",
        "2s",
        "--interval",
        "200ms",
        "--hlog",
        log.s(),
    ]);
    assert_eq!(r.code, 0, "{}", r.explain());
    if let Err(e) = schema_validator("result.schema.json").validate(r.json()) {
        panic!("the result does not validate: {e}");
    }
    let rows = r.json()["intervals"].as_array().unwrap().clone();
    // Ten intervals of 200 ms, and the drain's after -d (replies still coming).
    assert!(rows.len() >= 10, "{rows:?}");
    let text = std::fs::read_to_string(log.path()).unwrap();
    assert!(text.starts_with("#[Logged with wirebench "), "{text}");
    assert!(text.contains("\n#[Histogram log format version 1.3]\n"));
    assert!(text.contains("\n#[StartTime: ") && text.contains("\n#[BaseTime: "));
    let Some(read) = read_with_hdrh(log.s()) else {
        return;
    };
    assert_eq!(read.len(), rows.len(), "one histogram per row:\n{text}");
    let start_ms = r.u("/started_unix_ms") as f64;
    let mut timed = 0;
    for ((tag, count, max_ns, begin_ms, end_ms), row) in read.iter().zip(&rows) {
        assert_eq!(tag, "echo");
        assert_eq!(*count, ju(row, "/count"), "{row}");
        timed += count;
        match row["max_us"].as_f64() {
            // The same table, read by another library: the same largest value.
            Some(max) => assert_eq!(*max_ns as f64 / 1e3, max, "{row}"),
            None => assert_eq!(*count, 0, "{row}"),
        }
        let length_s = (end_ms - begin_ms) / 1e3;
        assert!((length_s - row["duration_s"].as_f64().unwrap()).abs() < 0.002);
        // Wall clock: the measured phase started at or after the process' start.
        assert!(*begin_ms >= start_ms - 1.0, "{begin_ms} {start_ms}");
    }
    // Every timed reply of the run is in exactly one interval.
    assert_eq!(timed, r.u("/histogram/count"));
    let last = rows.last().unwrap();
    assert_eq!(ju(last, "/total_ok"), r.u("/totals/ok"));
}

#[test]
fn bad_interval_and_unwritable_log_are_one_sentence_before_the_run() {
    let cases: [(&[&str], &str); 3] = [
        (&["--interval", "0"], "wirebench: --interval must be at least 10ms\n"),
        (&["--interval", "5ms"], "wirebench: --interval must be at least 10ms\n"),
        (
            &["--hlog", "/nonexistent-wirebench-dir/run.hlog"],
            "wirebench: cannot write the interval log to /nonexistent-wirebench-dir/run.hlog: No such file or directory (os error 2)\n",
        ),
    ];
    for (flags, said) in cases {
        let mut args = vec!["echo", "-n", "10"];
        args.extend_from_slice(flags);
        let mut p = Proc::wirebench(&args);
        let code = p.finish(RUN_LIMIT);
        assert_eq!(code, 2, "{flags:?}: {}", p.stderr());
        assert_eq!(p.stderr(), said, "{flags:?}");
        // Before the run: not even the plan was printed.
        assert_eq!(p.stdout(), "", "{flags:?}");
    }
}

/// The merged step (0-based) that holds the middle of a row spanning `begin_s` to
/// `end_s` after the merged start.
pub(crate) fn step_of(begin_s: f64, end_s: f64, step: f64) -> usize {
    ((begin_s + end_s) / 2.0 / step).floor() as usize
}

#[test]
fn shards_interval_histograms_merge_per_wall_clock_step_exactly() {
    let mut server = Served::start(&["--threads", "1"]);
    let addr = server.addr();
    let at = start_in(Duration::from_millis(1500));
    let runs = run_shards(
        2,
        &[
            "echo",
            &addr,
            "-t",
            "1",
            "-c",
            "4",
            "-d",
            "2s",
            "--interval",
            "500ms",
            "--run-id",
            "iv-2",
            "--start-at",
            &at,
        ],
    );
    server.stop_final_line();
    for r in &runs {
        assert_eq!(r.code, 0, "{}", r.explain());
    }
    let shards: Vec<Value> = runs.iter().map(|r| r.json().clone()).collect();
    // Each shard's rows carry their histogram, whose count is the row's.
    for s in &shards {
        for row in s["intervals"].as_array().unwrap() {
            let h = Latency::decode(
                row["histogram"]
                    .as_str()
                    .unwrap_or_else(|| panic!("a shard's row without its histogram: {row}")),
            )
            .unwrap();
            assert_eq!(h.count(), ju(row, "/count"), "{row}");
        }
    }
    let files: Vec<TempPath> = (0..2).map(|_| TempPath::new("iv-shard", ".json")).collect();
    for (f, s) in files.iter().zip(&shards) {
        std::fs::write(f.path(), serde_json::to_string(s).unwrap()).unwrap();
    }
    let out = TempPath::new("iv-merged", ".json");
    let total: u64 = shards.iter().map(|s| ju(s, "/totals/ok")).sum();
    let m = merge_shards(&[files[0].s(), files[1].s()], out.path(), total);
    let merged = m["intervals"].as_array().unwrap();
    assert_eq!(m["config"]["interval_s"], 0.5);
    // The same steps by hand: every shard row's histogram added into the step that
    // holds its end on the wall clock.
    let origin = shards
        .iter()
        .map(|s| ju(s, "/shard/measured_start_unix_ms"))
        .min()
        .unwrap();
    let mut sums: Vec<Latency> = (0..merged.len()).map(|_| Latency::new()).collect();
    for s in &shards {
        let offset_s = (ju(s, "/shard/measured_start_unix_ms") - origin) as f64 / 1e3;
        for row in s["intervals"].as_array().unwrap() {
            let end = offset_s + row["t_s"].as_f64().unwrap();
            let k = step_of(end - row["duration_s"].as_f64().unwrap(), end, 0.5);
            sums[k].add(&Latency::decode(row["histogram"].as_str().unwrap()).unwrap());
        }
    }
    let mut timed = 0;
    for (row, sum) in merged.iter().zip(&sums) {
        assert_eq!(ju(row, "/count"), sum.count(), "{row}");
        timed += sum.count();
        if sum.count() == 0 {
            assert_eq!(row["p99_us"], Value::Null, "{row}");
            continue;
        }
        for (field, q) in [
            ("p50_us", 0.5),
            ("p90_us", 0.9),
            ("p99_us", 0.99),
            ("p99_9_us", 0.999),
        ] {
            assert_eq!(
                row[field].as_f64(),
                Some(sum.quantile_ns(q) as f64 / 1e3),
                "{field} of {row}"
            );
        }
        assert_eq!(row["max_us"].as_f64(), Some(sum.inner().max() as f64 / 1e3));
        // The merge is a result of its own, no shard: its rows keep no histogram.
        assert_eq!(row.get("histogram"), None);
    }
    assert_eq!(timed, ju(&m, "/histogram/count"));
}

#[test]
fn the_report_draws_each_points_time_series_with_its_rounds() {
    let dir = TempPath::new("iv-report", "");
    std::fs::create_dir_all(dir.path()).unwrap();
    let suite = dir.path().join("s.toml");
    std::fs::write(
        &suite,
        r#"
name = "series"
rounds = 2
[[server]]
name = "wirebench"
command = "{wirebench} serve echo --listen {addr} --threads 1"
[[load]]
name = "steady"
protocol = "echo"
connections = [2]
duration = "2s"
warmup = "0s"
repeat = 1
"#,
    )
    .unwrap();
    let out = dir.path().join("out");
    let mut p = Proc::wirebench(&[
        "suite",
        suite.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "-q",
    ]);
    assert_eq!(p.finish(Duration::from_secs(120)), 0, "{}", p.stderr());
    // Each round's point keeps its rows, with percentiles of its own histograms.
    let mut rows = 0;
    for f in sorted_entries(&out.join("points")) {
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
        let iv = v["intervals"].as_array().unwrap();
        assert!(iv.len() >= 2, "{f:?}: {iv:?}");
        assert!(iv[0]["p99_9_us"].as_f64().is_some(), "{}", iv[0]);
        rows += iv.len();
    }
    let html = dir.path().join("report.html");
    let mut r = Proc::wirebench(&[
        "report",
        out.to_str().unwrap(),
        "-o",
        html.to_str().unwrap(),
    ]);
    assert_eq!(r.finish(RUN_LIMIT), 0, "{}", r.stderr());
    let text = std::fs::read_to_string(&html).unwrap();
    let at = text
        .find("<figure class=\"series\" data-series=\"wirebench@2\">")
        .unwrap_or_else(|| panic!("no time series of the point:\n{text}"));
    let figure = &text[at..at + text[at..].find("</figure>").unwrap()];
    for label in [
        ">messages/s per interval</text>",
        ">latency per interval (microseconds",
        ">time (seconds of the measured phase, rounds one after another)</text>",
        ">throughput</text>",
        ">errors</text>",
        ">p99.9</text>",
    ] {
        assert!(figure.contains(label), "{label} missing:\n{figure}");
    }
    // The two rounds end to end: one round end per panel; every row of both rounds
    // is a vertex of the throughput line.
    assert_eq!(figure.matches("stroke-dasharray").count(), 2, "{figure}");
    let first_line = figure.split("<polyline points=\"").nth(1).unwrap();
    let vertices = first_line.split('"').next().unwrap().split(' ').count();
    assert_eq!(vertices, rows, "{figure}");
}
