//! A gRPC suite point against `serve grpc` sends the message its `grpc` block gives
//! (`proto` and `data`, or `data_file`), not an empty one: each point's result counts
//! its calls exactly and holds that message's size.

use crate::common::*;
use serde_json::Value;
use std::time::Duration;

fn proto() -> String {
    format!("{}/tests/peers/bench.proto", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn a_grpc_suite_point_sends_the_message_its_block_gives() {
    let dir = TempPath::new("suite-grpc", "");
    std::fs::create_dir_all(dir.path()).unwrap();
    // bench.Req { name: "ab", n: 3 }: 0a 02 61 62 10 03, as raw bytes too.
    let raw = dir.path().join("req.bin");
    std::fs::write(&raw, [0x0a, 0x02, b'a', b'b', 0x10, 0x03, 0x10, 0x04]).unwrap();
    let suite = dir.path().join("s.toml");
    std::fs::write(
        &suite,
        format!(
            r#"
[[server]]
name = "wb"
command = "{{wirebench}} serve grpc --listen {{addr}} --threads 1"

[[load]]
name = "json"
protocol = "grpc"
connections = [2]
pipeline = [4]
count = 300
warmup = "0s"
grpc = {{ call = "bench.Echo/Say", proto = "{proto}", data = '{{"name": "ab", "n": 3}}' }}

[[load]]
name = "raw"
protocol = "grpc"
connections = [1]
count = 200
warmup = "0s"
grpc = {{ call = "bench.Echo/Say", data_file = "{raw}" }}
"#,
            proto = proto(),
            raw = raw.display()
        ),
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
    let mut seen = Vec::new();
    for e in std::fs::read_dir(out.join("points")).unwrap() {
        let doc: Value =
            serde_json::from_str(&std::fs::read_to_string(e.unwrap().path()).unwrap()).unwrap();
        assert_eq!(doc["kind"], "grpc");
        let load = doc["suite"]["load"].as_str().unwrap().to_string();
        let (calls, bytes) = if load == "json" { (300, 6) } else { (200, 8) };
        assert_eq!(
            doc["config"]["message_bytes"], bytes,
            "{load}: {}",
            doc["config"]
        );
        assert_eq!(doc["totals"]["ok"], calls, "{}", doc["totals"]);
        assert_eq!(doc["totals"]["sent"], calls);
        assert_eq!(doc["totals"]["invariant_holds"], true);
        seen.push(load);
    }
    seen.sort();
    assert_eq!(seen, ["json", "raw"]);
}
