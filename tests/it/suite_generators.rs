//! A suite whose loads run through the external generators HTTP declares (wrk, ab,
//! h2load: `proto::http::gen`) against `serve http`, readiness checked by HTTP's own
//! probe (`ready = { http = "/" }`) and the loads' settings given in their `http`
//! block: every point is read back into a result that validates, with each tool's own
//! counts added up, the method and URL the block asked for.

use crate::common::*;
use serde_json::Value;
use std::time::Duration;

#[test]
fn the_http_generators_run_from_a_suite_with_their_settings() {
    if !(have("wrk") && have("ab") && have("h2load")) {
        return;
    }
    let dir = TempPath::new("suite-gens", "");
    std::fs::create_dir_all(dir.path()).unwrap();
    let suite = dir.path().join("s.toml");
    std::fs::write(
        &suite,
        r#"
[[server]]
name = "wb"
command = "{wirebench} serve http --listen {addr} --threads 1"
ready = { http = "/" }

[[load]]
name = "wrk"
protocol = "http"
generator = "wrk"
connections = [4]
duration = "1s"
warmup = "0s"
http = { method = "GET", path = "/bytes/100" }

[[load]]
name = "ab"
protocol = "http"
generator = "ab"
connections = [2]
body_size = ["512"]
count = 300
warmup = "0s"
http = { method = "PUT" }

[[load]]
name = "h2load"
protocol = "http"
generator = "h2load"
connections = [2]
pipeline = [4]
count = 400
warmup = "0s"
[load.http]
path = "/"
"#,
    )
    .unwrap();
    let out = dir.path().join("out");
    let mut p = Proc::wirebench(&[
        "suite",
        suite.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(p.finish(Duration::from_secs(120)), 0, "{}", p.stderr());
    let v = schema_validator("result.schema.json");
    let mut seen = Vec::new();
    for e in std::fs::read_dir(out.join("points")).unwrap() {
        let doc: Value =
            serde_json::from_str(&std::fs::read_to_string(e.unwrap().path()).unwrap()).unwrap();
        assert!(v.is_valid(&doc), "{doc}");
        let tool = doc["suite"]["generator"].as_str().unwrap().to_string();
        assert_eq!(doc["kind"], "http");
        assert_eq!(doc["config"]["generator"], tool.as_str());
        assert_eq!(
            doc["outcome"]["success"], true,
            "{tool}: {}",
            doc["outcome"]
        );
        assert_eq!(doc["totals"]["invariant_holds"], true, "{tool}");
        let (method, url) = match tool.as_str() {
            "wrk" => ("GET", "/bytes/100"),
            "ab" => ("PUT", "/"),
            _ => ("GET", "/"),
        };
        assert_eq!(doc["config"]["method"], method, "{tool}");
        assert!(
            doc["target"].as_str().unwrap().ends_with(url),
            "{tool}: {}",
            doc["target"]
        );
        let argv: Vec<&str> = doc["suite"]["generator_argv"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap())
            .collect();
        assert_eq!(argv[0], tool);
        if tool == "ab" {
            // A PUT body: ab's -u, and every request answered.
            assert!(argv.contains(&"-u"), "{argv:?}");
            assert_eq!(doc["totals"]["ok"], 300);
        }
        if tool == "h2load" {
            assert_eq!(doc["totals"]["ok"], 400);
        }
        seen.push(tool);
    }
    seen.sort();
    assert_eq!(seen, ["ab", "h2load", "wrk"]);
}
