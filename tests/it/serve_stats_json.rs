//! `serve --stats-json FILE`: the --stats intervals as JSON lines whose counts add up,
//! row by row, to the final counters line (one process and the sum of --processes);
//! a path that cannot be written, or the flag without --stats, is refused before the
//! server listens.

use crate::common::{free_port, wait_until, Proc, Served, TempPath, RUN_LIMIT};
use crate::serve_metrics::field;
use serde_json::Value;

fn rows(path: &TempPath) -> Vec<Value> {
    std::fs::read_to_string(path.path())
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect()
}

fn sum(rows: &[Value], key: &str) -> u64 {
    rows.iter()
        .map(|r| r["interval"][key].as_u64().unwrap())
        .sum()
}

fn http_load(addr: &str, n: &str) {
    let url = format!("http://{addr}/");
    let mut p = Proc::wirebench(&["http", &url, "-n", n, "-c", "4", "-q"]);
    assert_eq!(p.finish(RUN_LIMIT), 0, "{}", p.stderr());
}

/// Two loads (5,000 requests over 8 connections), the intervals' rows seen to hold
/// them all while the server runs, then the stop's row: every count adds up.
fn rows_add_up_to_the_final_line(extra: &[&str]) {
    let log = TempPath::new("stats-json", ".jsonl");
    let mut args = vec!["--stats", "20ms", "--stats-json", log.s()];
    args.extend_from_slice(extra);
    let mut served = Served::start_as("http", &args);
    http_load(&served.addr(), "3000");
    http_load(&served.addr(), "2000");
    // Interval rows (not the stop's) come to hold every request and close.
    assert!(
        wait_until(RUN_LIMIT, || {
            let r = rows(&log);
            sum(&r, "requests") == 5000 && sum(&r, "closes") == 8
        }),
        "the interval rows never held the loads: {:?}",
        rows(&log)
    );
    let line = served.stop_final_line();
    let r = rows(&log);
    let (last, before) = r.split_last().expect("rows");
    assert!(before.iter().all(|x| x["last"] == false), "{r:?}");
    assert_eq!(last["last"], true);
    for (key, word) in [
        ("accepts", "accepts "),
        ("closes", "closes "),
        ("reads", "reads "),
        ("requests", "requests "),
        ("bytes_in", "bytes in "),
        ("bytes_out", " out "),
    ] {
        assert_eq!(sum(&r, key), field(&line, word) as u64, "{key}: {line}");
        assert_eq!(
            last["total"][key].as_u64(),
            Some(field(&line, word) as u64),
            "{key}"
        );
    }
    assert_eq!(sum(&r, "requests"), 5000);
    assert_eq!(sum(&r, "accepts"), 8);
    let times: Vec<f64> = r.iter().map(|x| x["t_s"].as_f64().unwrap()).collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "{times:?}");
    let spans: f64 = r.iter().map(|x| x["duration_s"].as_f64().unwrap()).sum();
    assert!(
        (spans - times[times.len() - 1]).abs() < 1e-6,
        "{spans} vs {times:?}"
    );
}

#[test]
fn serve_stats_json_rows_add_up_to_the_final_counters() {
    rows_add_up_to_the_final_line(&["--threads", "2"]);
}

#[test]
fn serve_stats_json_with_processes_adds_up_the_workers() {
    rows_add_up_to_the_final_line(&["--processes", "2"]);
}

#[test]
fn serve_refuses_a_stats_json_it_cannot_write_or_without_stats() {
    let listen = format!("127.0.0.1:{}", free_port());
    let log = TempPath::new("stats-json-refused", ".jsonl");
    for (args, says) in [
        (
            vec![
                "--stats",
                "--stats-json",
                "/nonexistent-wirebench-dir/x.jsonl",
            ],
            "--stats-json /nonexistent-wirebench-dir/x.jsonl: cannot write it: ",
        ),
        (
            vec!["--stats-json", log.s()],
            "--stats-json writes the --stats intervals: add --stats",
        ),
    ] {
        let mut all = vec!["serve", "echo", "--listen", &listen];
        all.extend_from_slice(&args);
        let mut p = Proc::wirebench(&all);
        assert_eq!(p.finish(RUN_LIMIT), 2, "{args:?}");
        let err = p.stderr();
        assert!(err.contains(says), "{args:?}: {err}");
        assert!(!p.stdout().contains("listening on"), "{}", p.stdout());
    }
}
