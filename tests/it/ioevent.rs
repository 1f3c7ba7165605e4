//! `wirebench ioevent`: exact event counts on every backend, the sweep, the refusals,
//! the JSON schema and the chart files.

use crate::common::*;
use serde_json::Value;

const BACKENDS: [&str; 4] = ["epoll", "poll", "uring", "tokio"];

fn validator() -> jsonschema::Validator {
    schema_validator("ioevent.schema.json")
}

fn ioevent(args: &[&str]) -> RunOut {
    let mut all = vec!["ioevent"];
    all.extend_from_slice(args);
    run_json(&all)
}

/// Every iteration of every series read exactly what it fired: A + W bytes.
fn assert_exact(j: &Value, active: u64, writes: u64, iterations: usize) {
    for s in j["results"].as_array().expect("results") {
        let its = s["iterations"].as_array().expect("iterations");
        assert_eq!(its.len(), iterations, "{s}");
        for it in its {
            assert_eq!(it["reads"], it["fired"], "{s}");
            assert_eq!(it["fired"].as_u64(), Some(active + writes), "{s}");
        }
        assert_eq!(
            s["summary"]["iterations"].as_u64(),
            Some(iterations as u64 - 1)
        );
    }
}

#[test]
fn every_backend_reads_exactly_what_it_fired() {
    for b in BACKENDS {
        let r = ioevent(&[
            "-n",
            "64",
            "-a",
            "8",
            "-w",
            "500",
            "--iterations",
            "4",
            "--backend",
            b,
        ]);
        assert_eq!(r.code, 0, "{b}: {}", r.explain());
        let j = r.json();
        assert_eq!(j["results"].as_array().map(Vec::len), Some(1), "{b}");
        assert_eq!(j["results"][0]["backend"], b);
        assert_exact(j, 8, 500, 4);
    }
}

#[test]
fn all_backends_sweep_interleaved_and_match_the_schema() {
    let r = ioevent(&[
        "-n",
        "10,100",
        "-a",
        "10",
        "-w",
        "1000",
        "--iterations",
        "3",
        "--backend",
        "all",
    ]);
    assert_eq!(r.code, 0, "{}", r.explain());
    let j = r.json();
    let results = j["results"].as_array().expect("results");
    assert_eq!(results.len(), 8, "4 backends x 2 sizes");
    let pairs: Vec<u64> = results
        .iter()
        .map(|s| s["pairs"].as_u64().unwrap())
        .collect();
    assert_eq!(pairs, [10, 10, 10, 10, 100, 100, 100, 100]);
    assert_eq!(j["config"]["interleaved"], true);
    assert_exact(j, 10, 1000, 3);
    let v = validator();
    let errs: Vec<String> = v
        .iter_errors(j)
        .map(|e| format!("{e} at {}", e.instance_path))
        .collect();
    assert!(errs.is_empty(), "{}", errs.join("\n"));
    // The schema can fail: a missing count and a wrong backend name are refused.
    let mut broken = j.clone();
    broken["results"][0]["iterations"][0]
        .as_object_mut()
        .unwrap()
        .remove("reads");
    assert!(!v.is_valid(&broken));
    let mut broken = j.clone();
    broken["results"][0]["backend"] = Value::from("kqueue");
    assert!(!v.is_valid(&broken));
}

#[test]
fn impossible_plans_are_refused() {
    let cases: [(&[&str], &str); 6] = [
        (&["--iterations", "1"], "at least 2"),
        (&["-n", "20000"], "descriptors"),
        (&["-n", "5", "-a", "10"], "more active pairs"),
        (&["--backend", "kqueue"], "choose epoll"),
        (&["-n", "1,x"], "not a number"),
        (&["--chart", "/tmp/wirebench-chart.gif"], ".svg or .png"),
    ];
    for (args, phrase) in cases {
        let mut all = vec!["ioevent"];
        all.extend_from_slice(args);
        let mut p = Proc::wirebench(&all);
        let code = p.finish(RUN_LIMIT);
        assert_eq!(code, 2, "{args:?}: {}", p.stderr());
        assert_one_line_error(&p.stderr(), phrase);
    }
}

#[test]
fn charts_are_written_as_svg_and_png() {
    let svg = TempPath::new("chart", ".svg");
    let png = TempPath::new("chart", ".png");
    for path in [&svg, &png] {
        let mut p = Proc::wirebench(&[
            "ioevent",
            "-n",
            "10,20",
            "-a",
            "2",
            "-w",
            "50",
            "--iterations",
            "2",
            "-q",
            "--chart",
            path.s(),
        ]);
        assert_eq!(p.finish(RUN_LIMIT), 0, "{}", p.stderr());
    }
    let text = std::fs::read_to_string(svg.path()).expect("svg written");
    assert!(text.starts_with("<svg"), "{text}");
    for b in BACKENDS {
        assert!(text.contains(&format!(">{b}</text>")), "legend lacks {b}");
    }
    let bytes = std::fs::read(png.path()).expect("png written");
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
}
