//! The wrk, ab and h2load parsers on output captured from real runs of those tools
//! against nginx (tests/fixtures/generators/, captured on this project's machine:
//! wrk 4.1.0, ab 2.3, h2load nghttp2 1.52.0; the `h2load-h2c-*` files are h2load in
//! its h2c mode against `serve http`; the `ghz-*` files ghz 0.93.0's `--format json`
//! against `serve grpc`), and their results against the schema.

use serde_json::Value;
use std::time::Duration;
use wirebench::proto::entry::{RunFor, SuitePoint};
use wirebench::proto::generator::Generator;
use wirebench::proto::grpc::ghz;
use wirebench::proto::http::gen::{ab, h2load, wrk};
use wirebench::proto::http::suite_settings::{HttpSuite, Version};
use wirebench::suite::gen::external::{to_result, Context, ExternalRun};

fn fx(name: &str) -> String {
    let p = format!(
        "{}/tests/fixtures/generators/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
}

fn validate(run: &ExternalRun) -> Value {
    validate_as(run, "http")
}

fn validate_as(run: &ExternalRun, kind: &'static str) -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/schema/result.schema.json");
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let v = jsonschema::draft202012::new(&schema).unwrap();
    let cx = Context {
        kind,
        target: "http://127.0.0.1:21080/".into(),
        config: serde_json::json!({"threads": 1, "connections": 10, "pipeline": 1, "plan": {"type": "duration"}}),
        started_unix_ms: 1,
        warmup_s: 0.0,
        client_cpu_s: 0.5,
    };
    let doc = serde_json::to_value(to_result(run, cx)).unwrap();
    let errs: Vec<String> = v
        .iter_errors(&doc)
        .map(|e| format!("{e} at {}", e.instance_path))
        .collect();
    assert!(errs.is_empty(), "{}", errs.join("\n"));
    doc
}

#[test]
fn wrk_post_run() {
    let r = wrk::parse(&fx("wrk-post-1k.out"), 1024).unwrap();
    assert_eq!(r.ok, 386_106);
    assert_eq!(r.request_errors(), 0);
    assert_eq!(r.bytes_received, 58_688_112);
    assert_eq!(r.bytes_sent, 386_106 * 1024);
    assert!((r.elapsed_s - 2.099767).abs() < 1e-9);
    // The histogram dump: every bucket line, counts added.
    let out = fx("wrk-post-1k.out");
    let dumped: u64 = out
        .lines()
        .filter_map(|l| l.strip_prefix("wirebench-wrk latency "))
        .map(|l| l.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(r.latency.count(), dumped);
    let s = r.latency.summary();
    // wrk printed 49 us / 89 us for p50 / p99 and 4.10 ms max from the same data.
    assert!((48.9..=49.1).contains(&s.p50), "{s:?}");
    assert!((88.9..=89.1).contains(&s.p99), "{s:?}");
    assert!((4090.0..=4110.0).contains(&s.max), "{s:?}");
    let doc = validate(&r);
    assert_eq!(doc["outcome"]["success"], true);
    assert_eq!(doc["kind"], "http");
}

#[test]
fn wrk_non_2xx_are_errors() {
    let r = wrk::parse(&fx("wrk-404.out"), 0).unwrap();
    assert_eq!(r.ok, 0);
    assert_eq!(r.errors.get("status"), Some(&189_901));
    let doc = validate(&r);
    assert_eq!(doc["outcome"]["success"], false);
    assert_eq!(doc["errors"]["status"], 189_901);
}

#[test]
fn wrk_that_cannot_connect() {
    let e = wrk::parse(&fx("wrk-refused.out"), 0).unwrap_err();
    assert!(e.contains("unable to connect to 127.0.0.1:21999"), "{e}");
}

#[test]
fn ab_post_run() {
    let r = ab::parse(&fx("ab-post-1k.out"), Some(&fx("ab-post-1k-head.tsv"))).unwrap();
    assert_eq!(r.ok, 346_093);
    assert_eq!(r.request_errors(), 0);
    assert_eq!(r.bytes_received, 52_606_136);
    assert_eq!(r.bytes_sent, 408_401_540);
    assert!((r.elapsed_s - 2.0).abs() < 1e-9);
    assert_eq!(
        r.latency.count(),
        2000,
        "one sample per -g line (first 2000 kept as the fixture)"
    );
    assert_eq!(r.resolution_us, 1000);
    validate(&r);
}

#[test]
fn ab_non_2xx_and_refused() {
    let r = ab::parse(&fx("ab-404.out"), Some(&fx("ab-404.tsv"))).unwrap();
    assert_eq!((r.ok, r.errors.get("status").copied()), (0, Some(5000)));
    assert_eq!(r.latency.count(), 5000);
    assert_eq!(validate(&r)["outcome"]["success"], false);
    let e = ab::parse(&fx("ab-refused.out"), None).unwrap_err();
    assert!(e.contains("Connection refused"), "{e}");
}

#[test]
fn h2load_post_run() {
    let log = fx("h2load-post-1k-head.log");
    let r = h2load::parse(&fx("h2load-post-1k.out"), Some(&log), 1024).unwrap();
    assert_eq!(r.ok, 322_387);
    assert_eq!(r.request_errors(), 0);
    assert_eq!(r.bytes_received, 49_002_824);
    assert!((r.elapsed_s - 2.0).abs() < 1e-9);
    assert_eq!(r.latency.count(), 2000);
    let first: u64 = log
        .lines()
        .next()
        .unwrap()
        .split('\t')
        .nth(2)
        .unwrap()
        .parse()
        .unwrap();
    assert!(r.latency.summary().min <= first as f64 + 1.0);
    validate(&r);
}

/// h2load in its h2c mode: the same summary and --log-file as over HTTP/1.1.
#[test]
fn h2load_h2c_runs() {
    let log = fx("h2load-h2c-post-1k.log");
    let out = fx("h2load-h2c-post-1k.out");
    assert_eq!(h2load::application_protocol(&out), Some("h2c"));
    let r = h2load::parse(&out, Some(&log), 1024).unwrap();
    assert_eq!((r.ok, r.request_errors()), (3000, 0));
    assert_eq!((r.bytes_received, r.bytes_sent), (3_321_224, 3000 * 1024));
    assert!((r.elapsed_s - 0.03686).abs() < 1e-9, "{}", r.elapsed_s);
    assert_eq!(r.latency.count(), 3000);
    assert_eq!(r.accounting.holds(), Some(true));
    let r = h2load::parse(
        &fx("h2load-h2c-503.out"),
        Some(&fx("h2load-h2c-503.log")),
        0,
    )
    .unwrap();
    assert_eq!((r.ok, r.errors.get("status").copied()), (0, Some(200)));
    assert_eq!(r.latency.count(), 200);
    assert_eq!(validate(&r)["outcome"]["success"], false);
}

/// A load's `version` is what h2load must have spoken: an h2c run read for an
/// HTTP/1.1 load (or the other way round) is refused, not counted.
#[test]
fn h2load_is_held_to_the_loads_http_version() {
    let point = SuitePoint {
        addr: "127.0.0.1:1",
        threads: 1,
        connections: 4,
        size: 1024,
        pipeline: 8,
        rate: None,
        run_for: RunFor::Count(3000),
        stages: None,
        search: None,
        timeout: Duration::from_secs(10),
    };
    let settings = |version| HttpSuite {
        method: "POST".into(),
        path: "/".into(),
        version,
    };
    let (h2, h1) = (settings(Version::H2), settings(Version::H1));
    let h2c_out = fx("h2load-h2c-post-1k.out");
    let log = fx("h2load-h2c-post-1k.log");
    let r = h2load::H2load(&h2)
        .parse(&h2c_out, Some(&log), &point)
        .unwrap();
    assert_eq!(r.ok, 3000);
    let e = h2load::H2load(&h1)
        .parse(&h2c_out, Some(&log), &point)
        .unwrap_err();
    assert_eq!(
        e,
        "h2load spoke h2c, not the http/1.1 the load's version asks for"
    );
    let e = h2load::H2load(&h2)
        .parse(&fx("h2load-404.out"), None, &point)
        .unwrap_err();
    assert_eq!(
        e,
        "h2load spoke http/1.1, not the h2c the load's version asks for"
    );
}

#[test]
fn h2load_non_2xx_and_refused() {
    let r = h2load::parse(&fx("h2load-404.out"), Some(&fx("h2load-404.log")), 0).unwrap();
    assert_eq!(r.ok, 0);
    assert_eq!(r.errors.get("status"), Some(&5000));
    assert_eq!(r.latency.count(), 5000);
    assert!((r.elapsed_s - 0.04005).abs() < 1e-9, "{}", r.elapsed_s);
    assert_eq!(validate(&r)["outcome"]["success"], false);
    // Refused connections: h2load counts every request as failed and errored.
    let r = h2load::parse(&fx("h2load-refused.out"), None, 0).unwrap();
    assert_eq!((r.ok, r.errors.get("failed").copied()), (0, Some(100)));
    assert_eq!(
        validate(&r)["outcome"]["reason"],
        "h2load got no successful response (100 failed)"
    );
    let with_stderr = format!(
        "{}\nunable to connect to 127.0.0.1:21999\n",
        fx("h2load-refused.out")
    );
    let e = h2load::parse(&with_stderr, None, 0).unwrap_err();
    assert!(e.contains("could not connect"), "{e}");
}

#[test]
fn garbage_is_refused_not_misread() {
    assert!(wrk::parse("hello\n", 0).is_err());
    assert!(
        ab::parse("Complete requests: 10\n", None).is_err(),
        "no test time"
    );
    assert!(h2load::parse("requests: 1 total\n", None, 0).is_err());
    assert!(ab::parse(&fx("ab-404.out"), Some("header\nnot\ttabs\n")).is_err());
}

/// Each tool's own counts are checked, never assumed: doctored output whose counts
/// cannot add up makes `invariant_holds` false and the point fall short, and a tool
/// run without what the check needs reports null, not true.
#[test]
fn generators_own_counts_are_checked_not_assumed() {
    let holds = |doc: &Value| doc["totals"]["invariant_holds"].clone();
    let r = wrk::parse(&fx("wrk-post-1k.out"), 1024).unwrap();
    assert_eq!(holds(&validate(&r)), true);
    // More non-2xx/3xx responses than responses: impossible, so not added up.
    let bad = fx("wrk-post-1k.out").replace("status=0 ", "status=386107 ");
    let doc = validate(&wrk::parse(&bad, 1024).unwrap());
    assert_eq!(holds(&doc), false);
    assert_eq!(doc["outcome"]["success"], false);
    let why = doc["outcome"]["reason"].as_str().unwrap();
    assert!(why.starts_with("wrk's own counts do not add up"), "{why}");
    // One response more than wrk timed (its histogram, its correction taken out) and
    // counted as timeouts: a miscount the status split cannot see.
    let bad = fx("wrk-post-1k.out")
        .replace("requests=386106 ", "requests=386107 ")
        .replace("386106 requests in", "386107 requests in");
    let doc = validate(&wrk::parse(&bad, 1024).unwrap());
    assert_eq!(holds(&doc), false);
    let why = doc["outcome"]["reason"].as_str().unwrap();
    assert!(
        why.contains("responses != timed (latency histogram) + timeouts: 386107 != 386106"),
        "{why}"
    );
    // The 404 run holds too: 189,901 responses, 191,510 in the corrected histogram.
    let r = wrk::parse(&fx("wrk-404.out"), 0).unwrap();
    assert_eq!(holds(&validate(&r)), true);

    let tsv = fx("ab-404.tsv");
    let r = ab::parse(&fx("ab-404.out"), Some(&tsv)).unwrap();
    assert_eq!(holds(&validate(&r)), true);
    let short: String = tsv.lines().skip(1).map(|l| format!("{l}\n")).collect();
    let doc = validate(&ab::parse(&fx("ab-404.out"), Some(&short)).unwrap());
    assert_eq!(holds(&doc), false);
    let why = doc["outcome"]["reason"].as_str().unwrap();
    assert!(why.contains("5000 != 4999"), "{why}");
    let doc = validate(&ab::parse(&fx("ab-404.out"), None).unwrap());
    assert_eq!(holds(&doc), Value::Null, "no -g file: nothing to check");

    let out = fx("h2load-404.out");
    let r = h2load::parse(&out, None, 0).unwrap();
    assert_eq!(holds(&validate(&r)), true);
    let bad = out.replace("requests: 5000 total", "requests: 5001 total");
    let doc = validate(&h2load::parse(&bad, None, 0).unwrap());
    assert_eq!(holds(&doc), false);
    assert_eq!(doc["outcome"]["success"], false);
}

/// ghz's JSON: its count exact, the calls by status as `wirebench grpc` names them
/// (`grpc_status`), the latency of every OK call from its per-call details.
#[test]
fn ghz_runs() {
    let json = fx("ghz-count-300.json");
    let r = ghz::parse(&json).unwrap();
    assert_eq!((r.ok, r.request_errors()), (300, 0));
    assert_eq!(r.latency.count(), 300);
    assert!((r.elapsed_s - 0.023876367).abs() < 1e-12, "{}", r.elapsed_s);
    let doc = validate_as(&r, "grpc");
    // ghz's fastest and slowest calls (82,394 and 4,621,368 ns) are the histogram's ends.
    let us = |k: &str| doc["latency_us"][k].as_f64().unwrap();
    assert!((us("min") - 82.394).abs() < 0.1, "{}", doc["latency_us"]);
    assert!(
        (us("max") / 4621.368 - 1.0).abs() < 0.01,
        "{}",
        doc["latency_us"]
    );
    assert_eq!(doc["grpc_status"], serde_json::json!({"OK": 300}));
    assert_eq!(doc["totals"]["invariant_holds"], true);
    assert_eq!(doc["unit"]["noun"], "calls");
    assert_eq!(doc["outcome"]["success"], true);

    let r = ghz::parse(&fx("ghz-deadline-100.json")).unwrap();
    assert_eq!((r.ok, r.errors.get("status").copied()), (0, Some(100)));
    assert_eq!(r.latency.count(), 0, "only OK calls are timed");
    let doc = validate_as(&r, "grpc");
    assert_eq!(
        doc["grpc_status"],
        serde_json::json!({"DEADLINE_EXCEEDED": 100})
    );
    assert_eq!(
        doc["outcome"]["reason"],
        "ghz got no successful response (100 status)"
    );

    let r = ghz::parse(&fx("ghz-refused.json")).unwrap();
    let doc = validate_as(&r, "grpc");
    assert_eq!(doc["grpc_status"], serde_json::json!({"UNAVAILABLE": 20}));
    assert_eq!(doc["totals"]["sent"], 20);

    // One call fewer by status than counted: not added up, and said.
    let bad = json.replace(r#"{"OK":300}"#, r#"{"OK":299}"#);
    assert_ne!(bad, json);
    let doc = validate_as(&ghz::parse(&bad).unwrap(), "grpc");
    assert_eq!(doc["totals"]["invariant_holds"], false);
    let why = doc["outcome"]["reason"].as_str().unwrap();
    assert!(
        why.contains("count != calls by status: 300 != 299"),
        "{why}"
    );
    assert!(ghz::parse("Error: connection refused").is_err());
}
