//! Arbitrary text as a result file in a results directory, read back as `report` and
//! `compare` read it (`load_dir`: JSON, then `record`, which also decodes the stored
//! HdrHistogram), then grouped, rendered (HTML with its SVG charts, Markdown) and
//! compared with itself. Nothing may panic; a result compared with itself is never a
//! regression, and every point file read counts once. (`merge` does not exist yet.)
//! Run: `cargo +nightly fuzz run result_json`.

use crate::report::suite::compare::{compare, Verdict};
use crate::report::suite::dataset::{group, record, Dataset};
use crate::report::suite::{html, markdown};
use serde_json::Value;
use std::path::Path;

/// One input, as the fuzz target runs it.
pub fn run(data: &[u8]) {
    // load_dir reads each file with read_to_string: text that is not UTF-8 is refused there.
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(v) = serde_json::from_str::<Value>(text) else {
        return;
    };
    let Ok(r) = record("fuzz.json", &v) else {
        return;
    };
    let records = vec![r.clone(), r];
    let loads = group(&records);
    let points: usize = loads
        .iter()
        .flat_map(|l| &l.series)
        .flat_map(|s| &s.points)
        .map(|p| p.runs)
        .sum();
    assert_eq!(points, records.len());
    let d = Dataset {
        suite_name: String::new(),
        suite_text: None,
        environment: v.get("environment").cloned().unwrap_or(Value::Null),
        servers: Value::Null,
        baseline: None,
        loads,
        files: records.len(),
        held: Vec::new(),
        searched: Vec::new(),
    };
    let _ = html::render(&d, Path::new("."));
    let _ = markdown::render(&d);
    for line in compare(&d, &d, 5.0) {
        assert!(
            !matches!(line.verdict, Verdict::Worse | Verdict::Missing),
            "{} {}: {:?} against itself",
            line.what,
            line.metric,
            line.verdict
        );
    }
}
