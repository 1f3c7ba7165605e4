//! `wirebench merge` over shards of `wirebench connect` (issue 14): three shards of
//! 300 held connections against one `serve echo` merge into one result that counts
//! every connection once (the server's own count), adds the shards' connect
//! histograms and validates against the schema.

use crate::common::*;
use crate::shards::{run_shards, start_in};
use serde_json::Value;
use std::time::Duration;

#[test]
fn three_connect_shards_merge_to_every_connection_the_server_accepted() {
    let mut server = Served::start(&["--threads", "1"]);
    let addr = server.addr();
    let at = start_in(Duration::from_millis(1500));
    let runs = run_shards(
        3,
        &[
            "connect",
            &addr,
            "-n",
            "300",
            "--hold",
            "1s",
            "--run-id",
            "conn-3",
            "--start-at",
            &at,
        ],
    );
    let dir = TempPath::new("merge-connect", "");
    std::fs::create_dir(dir.path()).unwrap();
    let mut files = Vec::new();
    let mut shard_established = Vec::new();
    let validator = schema_validator("result.schema.json");
    for (i, r) in runs.iter().enumerate() {
        assert_eq!(r.code, 0, "{}", r.explain());
        if let Err(e) = validator.validate(r.json()) {
            panic!("shard {i} does not validate: {e}");
        }
        let f = dir.path().join(format!("shard-{i}.json"));
        std::fs::write(&f, serde_json::to_string(r.json()).unwrap()).unwrap();
        files.push(f.to_str().unwrap().to_string());
        shard_established.push(ju(r.json(), "/connect/established"));
    }
    assert_eq!(shard_established, [100, 100, 100]);
    let line = server.stop_final_line();
    assert!(line.contains("accepts 300 closes 300 "), "{line}");

    let out = dir.path().join("merged.json");
    let mut args = vec!["merge"];
    args.extend(files.iter().map(String::as_str));
    args.extend(["-o", out.to_str().unwrap(), "-q"]);
    let mut p = Proc::wirebench(&args);
    let code = p.finish(Duration::from_secs(30));
    assert_eq!(code, 0, "merge failed:\n{}\n{}", p.stdout(), p.stderr());
    let m: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    if let Err(e) = schema_validator("result.schema.json").validate(&m) {
        panic!("the merged result does not validate: {e}\n{m:#}");
    }

    assert_eq!(m["kind"], "connect");
    assert_eq!(m["merge"]["of"], "shards");
    assert_eq!(m["merge"]["present"], serde_json::json!([0, 1, 2]));
    let c = &m["connect"];
    assert_eq!(ju(c, "/established"), 300, "{c:#}");
    assert_eq!(ju(c, "/attempts"), 300);
    assert_eq!(ju(c, "/requested"), 300);
    assert_eq!(ju(c, "/failed"), 0);
    assert_eq!(c["failures"], serde_json::json!({}));
    assert_eq!(c["lost"], serde_json::json!({}));
    assert_eq!(ju(c, "/processes"), 3);
    assert_eq!(ju(c, "/memory/connections"), 300);
    assert_eq!(ju(&m, "/totals/connections"), 300);
    assert_eq!(ju(&m, "/totals/connect_errors"), 0);
    // The connect histogram: every shard's samples, once; its summary read from it.
    assert_eq!(ju(c, "/connect_histogram/count"), 300);
    assert_eq!(ju(c, "/connect_latency_us/count"), 300);
    let slowest = runs
        .iter()
        .map(|r| r.json()["connect"]["time_to_establish_s"].as_f64().unwrap())
        .fold(0.0, f64::max);
    assert_eq!(c["time_to_establish_s"].as_f64(), Some(slowest));
    let maxes: Vec<f64> = runs
        .iter()
        .map(|r| {
            r.json()["connect"]["connect_latency_us"]["max"]
                .as_f64()
                .unwrap()
        })
        .collect();
    assert_eq!(
        c["connect_latency_us"]["max"].as_f64(),
        Some(maxes.iter().copied().fold(0.0, f64::max))
    );
}
