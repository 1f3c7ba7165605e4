//! A suite load's `stages` and `thresholds`: every point runs the stages (its argv says
//! `--stages`, its result sends their integral), every point is held to its load's
//! thresholds (in its result, in the table under the verdict), and a failed one makes
//! the suite exit 3; a bad list or a figure the protocol lacks is refused before
//! anything starts, one sentence naming the file, line and key, exit 2.

use crate::common::*;
use serde_json::Value;
use std::time::Duration;

fn point(out: &std::path::Path, load: &str) -> Value {
    let dir = out.join("points");
    let f = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.file_name().unwrap().to_string_lossy().starts_with(load))
        .unwrap_or_else(|| panic!("no point of {load} in {}", dir.display()));
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
    let v = schema_validator("result.schema.json");
    let errs: Vec<String> = v.iter_errors(&doc).map(|e| e.to_string()).collect();
    assert!(errs.is_empty(), "{}: {errs:?}", f.display());
    doc
}

#[test]
fn stages_shape_each_point_and_a_failed_threshold_exits_3() {
    let dir = TempPath::new("suite-limits", "");
    std::fs::create_dir_all(dir.path()).unwrap();
    let suite = dir.path().join("s.toml");
    // Stages 1s to 200/s then 1s at 200/s ask 100 + 200 = 300 messages. `errors>=1`
    // fails against a correct echo server whatever the timing (it counts 0 errors).
    std::fs::write(
        &suite,
        r#"
[[server]]
name = "echo"
command = "{wirebench} serve echo --listen {addr} --threads 1"

[[load]]
name = "held"
protocol = "echo"
connections = [2]
warmup = "0s"
stages = "1s:200,1s:200"
thresholds = ["errors<1", "p99<60s"]

[[load]]
name = "strict"
protocol = "echo"
connections = [2]
count = 50
warmup = "0s"
thresholds = ["errors>=1"]
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
    let code = p.finish(Duration::from_secs(120));
    let (stdout, stderr) = (p.stdout(), p.stderr());
    assert_eq!(code, 3, "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(
        stdout.contains("thresholds: 1 of 2 points failed"),
        "{stdout}"
    );
    let fail = stdout
        .lines()
        .find(|l| l.trim_start().starts_with("FAIL"))
        .unwrap_or_else(|| panic!("no FAIL row: {stdout}"));
    assert!(fail.contains("strict__echo__"), "{fail}");
    assert!(fail.contains("errors>=1 (measured 0)"), "{fail}");
    assert!(
        stdout
            .lines()
            .any(|l| l.contains("pass  held__echo__") && l.contains("errors<1, p99<60s passed")),
        "{stdout}"
    );
    let last = stderr
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("");
    assert_eq!(
        last,
        "wirebench: thresholds failed at 1 of the suite's points (the table above names them)"
    );

    let held = point(&out, "held__");
    let argv: Vec<&str> = held["suite"]["generator_argv"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    let at = argv
        .iter()
        .position(|a| *a == "--stages")
        .expect("--stages");
    assert_eq!(argv[at + 1], "1s:200,1s:200");
    assert!(!argv.contains(&"-d"), "{argv:?}");
    let sent = held["totals"]["sent"].as_u64().unwrap();
    // Within one per connection, plus what the point says it fell behind by (a loaded
    // machine's loop that is behind at the end has not sent that much).
    let slack = behind_by(&held, 200.0);
    assert!(
        sent <= 302 && sent + 2 + slack >= 300,
        "the stages' integral, within one per connection and the lag ({slack}): {sent}"
    );
    assert_eq!(held["config"]["stages"][0]["target_per_s"], 200.0);
    let verdicts = held["thresholds"].as_array().unwrap();
    assert_eq!(verdicts.len(), 2);
    assert!(verdicts.iter().all(|v| v["pass"] == true), "{verdicts:?}");

    let strict = point(&out, "strict__");
    assert_eq!(strict["totals"]["errors"], 0);
    assert_eq!(strict["thresholds"][0]["expression"], "errors>=1");
    assert_eq!(strict["thresholds"][0]["measured"], 0.0);
    assert_eq!(strict["thresholds"][0]["pass"], false);
}

#[test]
fn bad_stages_and_thresholds_are_refused_before_anything_runs() {
    let dir = TempPath::new("suite-limits-bad", "");
    std::fs::create_dir_all(dir.path()).unwrap();
    let head = "[[server]]\nname = \"a\"\ncommand = \"x\"\n[[load]]\nprotocol = \"echo\"\n";
    let many = vec!["1s:10"; 33].join(",");
    let cases: Vec<(String, &str, &str)> = vec![
        (
            format!("{head}thresholds = [\"status{{5xx}}<1\"]\n"),
            ":6:",
            "key `thresholds`: threshold 'status{5xx}<1' does not apply: echo has no figure status{5xx}",
        ),
        (
            format!("{head}thresholds = [\"rate>=0.9\"]\n"),
            ":6:",
            "only an open loop (-R) asks one",
        ),
        (
            format!("{head}stages = \"{many}\"\n"),
            ":6:",
            "key `stages`: 33 stages, at most 32",
        ),
        (
            format!("{head}stages = \"1s:100\"\nduration = \"3s\"\n"),
            ":6:",
            "key `stages`: the stages set the rate and the length of every point: drop `duration`",
        ),
        (
            format!("{head}stages = \"0s:100\"\n"),
            ":6:",
            "key `stages`: stage 1 lasts no time",
        ),
        (
            "[[server]]\nname = \"a\"\ncommand = \"x\"\n[[load]]\nprotocol = \"connect\"\nstages = \"1s:10\"\n"
                .to_string(),
            ":6:",
            "connect takes no stages",
        ),
        (
            format!("{head}search = \"p99<5ms\"\n"),
            ":6:",
            "key `search`: give `rate`: the highest rate each search tries",
        ),
        (
            format!("{head}rate = [100.0]\nsearch = \"p99<5ms,cpu{{server}}<9us\"\n"),
            ":7:",
            "key `search`: threshold 'cpu{server}<9us' does not apply",
        ),
    ];
    for (i, (text, line, what)) in cases.iter().enumerate() {
        let f = dir.path().join(format!("bad{i}.toml"));
        std::fs::write(&f, text).unwrap();
        let out = dir.path().join(format!("out{i}"));
        let mut p =
            Proc::wirebench(&["suite", f.to_str().unwrap(), "--out", out.to_str().unwrap()]);
        assert_eq!(p.finish(RUN_LIMIT), 2, "case {i}: {}", p.stderr());
        let err = assert_one_line_error(&p.stderr(), what);
        assert!(
            err.contains(&format!("bad{i}.toml{line}")),
            "case {i}: {err}"
        );
        assert!(err.contains(what), "case {i}: {err}");
        assert!(
            !out.exists(),
            "case {i}: nothing may start before the file is valid"
        );
    }
}

/// A cell as the report writes a figure of `search.steps`: the JSON's number exactly,
/// "-" for null.
fn cell(v: &Value) -> String {
    match v.as_f64() {
        Some(_) if v.is_u64() => format!("<td>{}</td>", v.as_u64().unwrap()),
        Some(f) => format!("<td>{f}</td>"),
        None => "<td>-</td>".into(),
    }
}

#[test]
fn a_search_point_runs_its_search_and_the_report_draws_its_curve() {
    let dir = TempPath::new("suite-search", "");
    std::fs::create_dir_all(dir.path()).unwrap();
    let suite = dir.path().join("s.toml");
    // 2 connections, one request in flight each, 10 ms per reply: about 200/s, so a
    // search from 1,000/s fails at the top and bisects down.
    std::fs::write(
        &suite,
        r#"
[[server]]
name = "slow"
command = "{wirebench} serve echo --listen {addr} --threads 1 --delay 10ms"

[[load]]
name = "capacity"
protocol = "echo"
connections = [2]
rate = [1000.0]
duration = "300ms"
warmup = "0s"
search = "p99<50ms"
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
    let code = p.finish(Duration::from_secs(170));
    assert!(
        code == 0 || code == 1,
        "{code}: {}\n{}",
        p.stdout(),
        p.stderr()
    );
    let doc = point(&out, "capacity__");
    let argv = doc["suite"]["generator_argv"].to_string();
    assert!(
        argv.contains(r#""--search","p99<50ms","--step-duration","300ms""#),
        "{argv}"
    );
    let steps = doc["search"]["steps"]
        .as_array()
        .expect("search.steps")
        .clone();
    assert!(steps.len() >= 2, "{steps:?}");
    assert_eq!(steps[0]["asked_per_s"], 1000.0, "-R first");

    let html_file = dir.path().join("r.html");
    let mut r = Proc::wirebench(&[
        "report",
        out.to_str().unwrap(),
        "-o",
        html_file.to_str().unwrap(),
    ]);
    assert_eq!(r.finish(RUN_LIMIT), 0, "{}", r.stderr());
    let html = std::fs::read_to_string(&html_file).unwrap();
    assert!(html.contains("<h2 id=\"searches\">Capacity searches</h2>"));
    assert_eq!(html.matches("data-chart=\"search-latency\"").count(), 1);
    assert_eq!(html.matches("data-chart=\"search-errors\"").count(), 1);
    // Every step, in the order run, with its exact figures.
    assert_eq!(html.matches("<tr data-step=").count(), steps.len());
    for (i, s) in steps.iter().enumerate() {
        let row = format!(
            "<tr data-step=\"{n}\"><td>{n}{}</td>{}{}{}{}{}{}",
            if s["rerun"] == true { " (rerun)" } else { "" },
            cell(&s["asked_per_s"]),
            cell(&s["achieved_per_s"]),
            cell(&s["p50_us"]),
            cell(&s["p99_us"]),
            cell(&s["sent"]),
            cell(&s["errors"]),
            n = i + 1,
        );
        assert!(html.contains(&row), "step {}: {row}\n{html}", i + 1);
    }
}
