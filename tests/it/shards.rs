//! Shards on one machine (issue 14): three `wirebench echo --shard I/3` generators
//! against one `wirebench serve echo` add up exactly to the whole run, and each
//! result says which part of the run it is.

use crate::common::*;
use serde_json::Value;
use std::time::Duration;
use wirebench::report::format::group;

/// Starts `n` shards of `args` at once (each with its own JSON file), waits for all.
pub fn run_shards(n: u32, args: &[&str]) -> Vec<RunOut> {
    let files: Vec<TempPath> = (0..n).map(|_| TempPath::new("shard", ".json")).collect();
    let mut procs: Vec<Proc> = (0..n)
        .map(|i| {
            let shard = format!("{i}/{n}");
            let mut all: Vec<&str> = args.to_vec();
            all.extend(["--shard", &shard, "--json", files[i as usize].s(), "-q"]);
            Proc::wirebench(&all)
        })
        .collect();
    procs
        .iter_mut()
        .zip(&files)
        .map(|(p, f)| {
            let code = p.finish(Duration::from_secs(60));
            let json = std::fs::read_to_string(f.path())
                .ok()
                .and_then(|t| serde_json::from_str::<Value>(&t).ok());
            RunOut {
                code,
                stdout: p.stdout(),
                stderr: p.stderr(),
                json,
            }
        })
        .collect()
}

/// The Unix ms `ahead` from now, as `--start-at` takes it.
pub fn start_in(ahead: Duration) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap();
    (now + ahead).as_millis().to_string()
}

/// What every sharded echo run of `total` messages over `conns` connections must
/// show: the shards in index order, one config, shares that add up exactly, disjoint
/// connection ids, and a run id when one was given.
/// `wirebench merge FILES... -o DIR/merged.json` over a run's shard results: it must
/// succeed, hold every shard once, count exactly `total` with no error, and validate.
pub fn merge_shards(files: &[&str], out: &std::path::Path, total: u64) -> Value {
    merge_shards_exiting(files, out, total, 0)
}

/// `merge_shards`, the merge exiting `code`: 1 when the shards fell short (a loaded
/// machine's shards behind their schedule make the merged run fall short too).
pub fn merge_shards_exiting(
    files: &[&str],
    out: &std::path::Path,
    total: u64,
    expect: i32,
) -> Value {
    let mut args = vec!["merge"];
    args.extend_from_slice(files);
    let out_s = out.to_str().expect("utf-8 path");
    args.extend(["-o", out_s, "-q"]);
    let mut p = Proc::wirebench(&args);
    let code = p.finish(Duration::from_secs(30));
    assert_eq!(code, expect, "merge:\n{}\n{}", p.stdout(), p.stderr());
    let m: Value = serde_json::from_str(&std::fs::read_to_string(out).unwrap()).unwrap();
    if let Err(e) = schema_validator("result.schema.json").validate(&m) {
        panic!("the merged result does not validate: {e}");
    }
    let n = files.len() as u64;
    assert_eq!(m["merge"]["of"], "shards", "{m}");
    assert_eq!(
        m["merge"]["present"],
        serde_json::json!((0..n).collect::<Vec<u64>>())
    );
    assert_eq!(m["merge"]["partial"], false);
    assert_eq!(ju(&m, "/totals/ok"), total);
    assert_eq!(ju(&m, "/totals/errors"), 0);
    assert_eq!(ju(&m, "/totals/bytes_sent"), total * ECHO_FRAME);
    assert_eq!(ju(&m, "/histogram/count"), total);
    m
}

pub fn assert_shards_add_up(results: &[Value], total: u64, conns: u64, run_id: Option<&str>) {
    let n = results.len() as u64;
    let validator = schema_validator("result.schema.json");
    let mut bases = Vec::new();
    for (i, r) in results.iter().enumerate() {
        if let Err(e) = validator.validate(r) {
            panic!("shard {i} does not validate: {e}\n{r}");
        }
        assert_eq!(ju(r, "/shard/index"), i as u64, "{r}");
        assert_eq!(ju(r, "/shard/count"), n, "{r}");
        assert_eq!(r["shard"]["run_id"].as_str(), run_id, "{r}");
        // The config block is the whole run, the same on every shard.
        assert_eq!(r["config"], results[0]["config"]);
        assert_eq!(ju(r, "/config/plan/requests"), total);
        assert_eq!(ju(r, "/config/shards"), n);
        assert_eq!(ju(r, "/totals/errors"), 0, "{r}");
        assert_eq!(ju(r, "/totals/ok"), ju(r, "/shard/portion/plan/requests"));
        bases.push(ju(r, "/shard/portion/connection_id_base"));
    }
    let sum = |p: &str| results.iter().map(|r| ju(r, p)).sum::<u64>();
    assert_eq!(sum("/totals/ok"), total);
    assert_eq!(sum("/totals/bytes_sent"), total * ECHO_FRAME);
    assert_eq!(sum("/shard/portion/connections"), conns);
    assert_eq!(sum("/totals/connections"), conns);
    // Remainders go to the lowest indexes.
    let shares: Vec<u64> = results
        .iter()
        .map(|r| ju(r, "/shard/portion/connections"))
        .collect();
    assert!(
        shares.windows(2).all(|w| w[0] >= w[1] && w[0] - w[1] <= 1),
        "{shares:?}"
    );
    // Ids are the engine's (worker << 40 | n) under each shard's base: disjoint.
    for w in bases.windows(2) {
        assert!(
            w[1] - w[0] >= 1 << 52,
            "connection id bases overlap: {bases:?}"
        );
    }
}

#[test]
fn three_shards_add_up_to_the_whole_run_and_to_the_servers_count() {
    let mut server = Served::start(&["--threads", "1"]);
    let addr = server.addr();
    let at = start_in(Duration::from_millis(1500));
    let runs = run_shards(
        3,
        &[
            "echo",
            &addr,
            "-t",
            "1",
            "-c",
            "10",
            "-n",
            "3000",
            "--run-id",
            "it-3",
            "--start-at",
            &at,
        ],
    );
    for r in &runs {
        assert_eq!(r.code, 0, "{}", r.explain());
    }
    let results: Vec<Value> = runs.iter().map(|r| r.json().clone()).collect();
    assert_shards_add_up(&results, 3000, 10, Some("it-3"));
    assert_eq!(
        results
            .iter()
            .map(|r| ju(r, "/shard/portion/connections"))
            .collect::<Vec<_>>(),
        [4, 3, 3]
    );
    for r in &results {
        assert_eq!(r["shard"]["start_at_unix_ms"].as_u64(), at.parse().ok());
        assert!(ju(r, "/shard/measured_start_unix_ms") >= at.parse::<u64>().unwrap());
    }
    // The server's own count: 10 connections, every frame of the 3,000 in and out.
    let line = server.stop_final_line();
    assert!(line.contains("accepts 10 closes 10 "), "{line}");
    let bytes = format!(
        "bytes in {} out {}",
        group(3000 * ECHO_FRAME),
        group(3000 * ECHO_FRAME)
    );
    assert!(line.contains(&bytes), "want '{bytes}' in: {line}");
}

#[test]
fn the_plan_line_names_the_shard_and_where_it_came_from() {
    let mut server = Served::start(&["--threads", "1"]);
    let addr = server.addr();
    let mut p = Proc::spawn(
        bin(),
        &["echo", &addr, "-t", "1", "-c", "2", "-n", "10"],
        false,
    );
    assert_eq!(p.finish(Duration::from_secs(30)), 0, "{}", p.stderr());
    assert!(!p.stdout().contains("shard"), "{}", p.stdout());
    // Slurm's environment makes a shard with no flag: 1 of 2, run 9.0.
    let mut cmd = std::process::Command::new(bin());
    cmd.args(["echo", &addr, "-t", "1", "-c", "2", "-n", "10"])
        .env("SLURM_PROCID", "1")
        .env("SLURM_NTASKS", "2")
        .env("SLURM_JOB_ID", "9")
        .env("SLURM_STEP_ID", "0");
    let out = cmd.output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("5 requests; shard 1/2 (from SLURM_PROCID/SLURM_NTASKS), run 9.0"),
        "{text}"
    );
    assert!(
        text.contains("connections: 1, this shard's share of 2\n"),
        "{text}"
    );
    // A Kubernetes Indexed Job: --shards N, the index from JOB_COMPLETION_INDEX, the
    // run id from WIREBENCH_RUN_ID (which the manifest sets).
    let out = std::process::Command::new(bin())
        .args([
            "echo", &addr, "-t", "1", "-c", "3", "-n", "10", "--shards", "3",
        ])
        .env("JOB_COMPLETION_INDEX", "2")
        .env("WIREBENCH_RUN_ID", "job-7")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("3 requests; shard 2/3 (from JOB_COMPLETION_INDEX with --shards), run job-7"),
        "{text}"
    );
    server.stop_final_line();
}
