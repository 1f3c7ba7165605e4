//! Results validate against schema/result.schema.json, the schema can fail, and the
//! stored histogram decodes to exactly the correct replies.

use crate::common::*;
use base64::Engine as _;
use hdrhistogram::serialization::Deserializer;
use hdrhistogram::Histogram;
use serde_json::{json, Value};

fn validator() -> jsonschema::Validator {
    schema_validator("result.schema.json")
}

fn errors_of(v: &jsonschema::Validator, instance: &Value) -> Vec<String> {
    v.iter_errors(instance)
        .map(|e| format!("{} at {}", e, e.instance_path))
        .collect()
}

fn assert_valid(v: &jsonschema::Validator, r: &Value) {
    let errs = errors_of(v, r);
    assert!(
        errs.is_empty(),
        "result does not match the schema:\n{}\n{r:#}",
        errs.join("\n")
    );
}

/// Decodes a histogram blob; its count must equal `ok` and the data must agree.
fn check_histogram(blob: &Value, ok: u64) {
    let data = blob["data"].as_str().expect("histogram.data is a string");
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data)
        .expect("histogram.data is base64");
    assert!(!bytes.is_empty());
    let h: Histogram<u64> = Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .expect("histogram.data is an HdrHistogram V2 (deflate) blob");
    assert_eq!(
        ju(blob, "/count"),
        ok,
        "histogram.count counts correct replies only"
    );
    assert_eq!(
        h.len(),
        ok,
        "the stored histogram holds every correct reply"
    );
    assert_eq!(h.sigfig(), 3);
}

/// The common checks of every result.
fn check(r: &RunOut) -> Value {
    assert_eq!(r.code, 0, "{}", r.explain());
    let j = r.json().clone();
    assert_valid(&validator(), &j);
    let ok = ju(&j, "/totals/ok");
    assert!(ok > 0, "{}", r.explain());
    check_histogram(&j["histogram"], ok);
    assert_eq!(ju(&j, "/latency_us/count"), ok);
    j
}

#[test]
fn duration_run_with_intervals() {
    let r = run_json(&[
        "echo",
        "-d",
        "1s",
        "--progress",
        "200ms",
        "-t",
        "1",
        "-c",
        "2",
    ]);
    let j = check(&r);
    assert!(j["totals"]["expected"].is_null());
    assert_eq!(j["config"]["plan"]["type"], "duration");
    let rows = j["intervals"].as_array().unwrap();
    assert!(rows.len() >= 2, "{} interval rows", rows.len());
    // The rows add up to the totals, and total_ok is their running sum.
    let ok: u64 = rows.iter().map(|row| ju(row, "/ok")).sum();
    assert_eq!(ok, ju(&j, "/totals/ok"));
    assert_eq!(ju(rows.last().unwrap(), "/total_ok"), ok);
    assert!(j["server"].is_object());
    assert!(j["latency_uncorrected_us"].is_null() && j["histogram_uncorrected"].is_null());
}

#[test]
fn rate_run_has_uncorrected_latency() {
    let r = run_json(&["echo", "-R", "2000", "-n", "500", "-t", "1", "-c", "2"]);
    let j = check(&r);
    assert_eq!(ju(&j, "/totals/ok"), 500, "{}", r.explain());
    assert!(j["latency_uncorrected_us"].is_object(), "{j:#}");
    assert_eq!(ju(&j, "/latency_uncorrected_us/count"), 500);
    check_histogram(&j["histogram_uncorrected"], 500);
    assert_eq!(j["config"]["rate"], 2000.0);
}

#[test]
fn batch_run() {
    let r = run_json(&[
        "echo",
        "-t",
        "1",
        "-c",
        "2",
        "--pipeline",
        "5",
        "--iterations",
        "3",
        "--reconnects",
        "2",
    ]);
    let j = check(&r);
    assert_eq!(ju(&j, "/totals/ok"), 60);
    assert_eq!(ju(&j, "/totals/expected"), 60);
    assert_eq!(j["config"]["plan"]["type"], "batch");
}

#[test]
fn external_target_has_no_server_block() {
    let server = InProc::start(1);
    let r = run_json(&[
        "echo",
        &server.addr_string(),
        "-n",
        "300",
        "-t",
        "1",
        "-c",
        "2",
    ]);
    let j = check(&r);
    assert!(j["server"].is_null());
    assert!(j["cpu"]["server_s"].is_null() && j["cpu"]["server_us_per_msg"].is_null());
    assert_eq!(j["config"]["builtin_server"], false);
    assert_eq!(ju(&j, "/totals/ok"), 300);
}

#[test]
fn the_schema_rejects_broken_results() {
    let v = validator();
    let r = run_json(&["echo", "-n", "50", "-t", "1", "-c", "1"]);
    let good = check(&r);
    type Breakage = fn(&mut Value);
    let cases: Vec<(&str, Breakage)> = vec![
        ("totals.ok removed", |j| {
            j["totals"].as_object_mut().unwrap().remove("ok");
        }),
        ("totals.sent a string", |j| {
            j["totals"]["sent"] = json!("50")
        }),
        ("totals.ok negative", |j| j["totals"]["ok"] = json!(-1)),
        ("an unknown top-level field", |j| j["extra"] = json!(1)),
        ("an unknown totals field", |j| {
            j["totals"]["bonus"] = json!(0)
        }),
        ("schema_version 2", |j| j["schema_version"] = json!(2)),
        ("latency_us.p99 removed", |j| {
            j["latency_us"].as_object_mut().unwrap().remove("p99");
        }),
        ("an unknown latency field", |j| {
            j["latency_us"]["p42"] = json!(1.0)
        }),
        ("an unknown throughput field", |j| {
            j["throughput"]["x"] = json!(1.0)
        }),
        ("histogram removed", |j| {
            j.as_object_mut().unwrap().remove("histogram");
        }),
        ("histogram.data not base64", |j| {
            j["histogram"]["data"] = json!("not base64!")
        }),
        ("server a string", |j| j["server"] = json!("built-in")),
        ("config null", |j| j["config"] = Value::Null),
        ("interval row with a string", |j| {
            j["intervals"][0]["ok"] = json!("many")
        }),
        ("error count zero", |j| j["errors"]["timeout"] = json!(0)),
        ("success with a reason", |j| {
            j["outcome"]["reason"] = json!("why")
        }),
        ("invariant_holds a number", |j| {
            j["totals"]["invariant_holds"] = json!(1)
        }),
    ];
    for (what, breakage) in cases {
        let mut bad = good.clone();
        breakage(&mut bad);
        assert_ne!(bad, good, "{what}: the breakage changed nothing");
        assert!(!v.is_valid(&bad), "the schema accepts a result with {what}");
    }
}

#[test]
fn a_run_that_fell_short_validates_too() {
    // Nothing listens on this port: every attempt is refused, the run gives up.
    let target = format!("127.0.0.1:{}", free_port());
    let r = run_json(&[
        "echo",
        &target,
        "-n",
        "10",
        "-t",
        "1",
        "-c",
        "1",
        "--timeout",
        "500ms",
    ]);
    assert_eq!(r.code, 1, "{}", r.explain());
    let j = r.json().clone();
    assert_valid(&validator(), &j);
    assert_eq!(ju(&j, "/totals/ok"), 0);
    assert!(ju(&j, "/errors/connect_refused") > 0, "{}", r.explain());
    assert_eq!(j["outcome"]["success"], false);
    assert!(j["outcome"]["reason"]
        .as_str()
        .is_some_and(|s| !s.is_empty()));
    check_histogram(&j["histogram"], 0);
}

#[test]
fn http_results_validate_with_status_classes() {
    let r = run_json(&[
        "http",
        "-n",
        "400",
        "-t",
        "1",
        "-c",
        "2",
        "--body-size",
        "1k",
        "--expect-echo",
    ]);
    let j = check(&r);
    assert_eq!(j["kind"], "http");
    assert_eq!(ju(&j, "/status_classes/2xx"), 400);
    assert_eq!(ju(&j, "/server/requests"), 400);
    let v = validator();
    let mut bad = j.clone();
    bad["status_classes"]["6xx"] = json!(1);
    assert!(!v.is_valid(&bad), "the schema accepts a 6xx class");
    let mut bad = j.clone();
    bad["status_classes"]["2xx"] = json!(-1);
    assert!(
        !v.is_valid(&bad),
        "the schema accepts a negative class count"
    );
    // Echo results carry no status classes at all.
    let e = run_json(&["echo", "-n", "20", "-t", "1", "-c", "1"]);
    assert!(check(&e).get("status_classes").is_none());
}
