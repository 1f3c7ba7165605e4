//! Arbitrary text as what an external generator printed, read as `suite` reads it:
//! the first byte picks the tool (wrk, ab, h2load, ghz) and, for ab and h2load,
//! whether its data file (ab's -g file, h2load's --log-file) exists; the rest is the
//! tool's output (ghz's: its `--format json` result file) and, after a 0xFF byte, that
//! file. Nothing may panic; a refusal is one
//! sentence; what is accepted becomes a result (`external::to_result`) whose
//! histogram holds the tool's latency count, whose sent count is ok + errors, whose
//! summary prints and which serializes.
//! Run: `cargo +nightly fuzz run generator_output`.

use crate::proto::grpc::ghz;
use crate::proto::http::gen::{ab, h2load, wrk};
use crate::stats::latency::Latency;
use crate::suite::gen::external::{to_result, Context};

/// One input, as the fuzz target runs it.
pub fn run(data: &[u8]) {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let (out, file) = match rest.iter().position(|&b| b == 0xFF) {
        Some(at) => (&rest[..at], &rest[at + 1..]),
        None => (rest, &[][..]),
    };
    // The suite reads both with read_to_string: text that is not UTF-8 is no output.
    let (Ok(out), Ok(file)) = (std::str::from_utf8(out), std::str::from_utf8(file)) else {
        return;
    };
    let file = (pick & 4 != 0).then_some(file);
    let parsed = match pick % 4 {
        0 => wrk::parse(out, 100),
        1 => ab::parse(out, file),
        2 => h2load::parse(out, file, 100),
        _ => ghz::parse(out),
    };
    let run = match parsed {
        Ok(r) => r,
        Err(why) => {
            assert!(!why.is_empty(), "an empty refusal");
            return;
        }
    };
    let latency: &Latency = &run.latency;
    let r = to_result(
        &run,
        Context {
            kind: "http",
            target: "http://127.0.0.1:1/".into(),
            config: serde_json::json!({}),
            started_unix_ms: 0,
            warmup_s: 0.0,
            client_cpu_s: 0.0,
        },
    );
    assert_eq!(r.histogram.count, latency.count());
    assert_eq!(r.latency_us.count, latency.count());
    assert_eq!(r.totals.sent, r.totals.ok.wrapping_add(r.totals.errors));
    let _ = crate::report::text::summary(&r);
    serde_json::to_string(&r).expect("a result serializes");
}
