//! A suite run while a CPU hog, started by the test and pinned to the servers' CPU,
//! runs through its first round: every point of that round says others took that CPU
//! (`machine.interference`), the verdict is `inconclusive` (exit 0), and `compare`
//! against a run without the hog calls no row better or worse. Also the suite's own
//! words: `--check`'s estimate, the end table's alignment past 16-character names, the
//! point lines' unit.

use crate::common::*;
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

const LONG: &str = "b-server-with-a-long-name";

fn suite_file(dir: &Path) -> std::path::PathBuf {
    let f = dir.join("hog.toml");
    std::fs::write(
        &f,
        format!(
            r#"
name = "under a hog"
rounds = 2
baseline = "a"

[[server]]
name = "a"
command = "{{wirebench}} serve echo --listen {{addr}} --threads 1"
cpus = "0"

[[server]]
name = "{LONG}"
command = "{{wirebench}} serve echo --listen {{addr}} --threads 1"
cpus = "0"

[[load]]
name = "echo"
protocol = "echo"
connections = [1, 4]
body_size = ["64"]
duration = "1s"
warmup = "0s"
cpus = "1"
"#
        ),
    )
    .unwrap();
    f
}

/// Runs the suite into `out`; with `hog`, a busy loop pinned to CPU 0 runs until the
/// suite says its second round begins. Returns stdout and stderr.
fn run_suite(file: &Path, out: &Path, hog: bool) -> (String, String) {
    let mut busy = hog.then(|| {
        Proc::spawn(
            "taskset",
            &["-c", "0", "sh", "-c", "while :; do :; done"],
            false,
        )
    });
    let mut p = Proc::wirebench(&[
        "suite",
        file.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    if let Some(h) = busy.as_mut() {
        let second = wait_until(Duration::from_secs(120), || {
            p.stderr().contains("suite: round 2 of 2") || p.exited()
        });
        assert!(second, "{}", p.stderr());
        h.kill();
    }
    let code = p.finish(Duration::from_secs(180));
    assert_eq!(code, 0, "stdout:\n{}\nstderr:\n{}", p.stdout(), p.stderr());
    (p.stdout(), p.stderr())
}

/// The share of CPU `cpu` others took over the point, from its result.
fn others_share(v: &Value, cpu: u64) -> f64 {
    let i = &v["machine"]["interference"];
    let c = i["cpus"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["cpu"] == cpu)
        .unwrap_or_else(|| panic!("CPU {cpu} is one the point used: {i}"));
    c["others_s"].as_f64().unwrap() / c["window_s"].as_f64().unwrap()
}

#[test]
fn a_hog_on_the_servers_cpu_makes_the_verdict_inconclusive_and_compare_neutral() {
    let dir = TempPath::new("suite-hog", "");
    std::fs::create_dir_all(dir.path()).unwrap();
    let file = suite_file(dir.path());
    let mut check = Proc::wirebench(&["suite", file.to_str().unwrap(), "--check"]);
    assert_eq!(check.finish(RUN_LIMIT), 0, "{}", check.stderr());
    // 2 servers x 2 rounds x (2 s to start and stop + 2 points of 1 s and 0.3 s each).
    assert_eq!(
        check.stdout().lines().next().unwrap(),
        format!(
            "{}: 2 servers x 2 rounds, 1 loads, 8 runs, about 18 s",
            file.display()
        )
    );

    let hogged = dir.path().join("hogged");
    let (stdout, stderr) = run_suite(&file, &hogged, true);
    let schema = schema_validator("result.schema.json");
    let mut round_one = 0;
    for e in std::fs::read_dir(hogged.join("points")).unwrap() {
        let path = e.unwrap().path();
        let v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert!(schema.is_valid(&v), "{}", path.display());
        let cpus: Vec<u64> = v["machine"]["interference"]["cpus"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["cpu"].as_u64().unwrap())
            .collect();
        assert_eq!(cpus, [0, 1], "the server's CPU and the generator's");
        if v["suite"]["round"] == 1 {
            round_one += 1;
            let share = others_share(&v, 0);
            assert!(
                share > 0.05,
                "{}: others took {share} of CPU 0",
                path.display()
            );
        }
    }
    assert_eq!(round_one, 4, "2 servers x 2 points in round 1");
    // Each point's line names its unit and, in round 1, who else took its CPU.
    let first: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("suite: a / echo / c1-b64-p1 #"))
        .collect();
    assert_eq!(first.len(), 2, "{stderr}");
    assert!(first[0].contains(" messages/s, p99 "), "{}", first[0]);
    assert!(first[0].contains(" (other processes took "), "{}", first[0]);
    // The end table: every state in one column, whatever the names' lengths.
    let table: Vec<&str> = stdout
        .lines()
        .filter(|l| l.contains(" points, 0 fell short"))
        .collect();
    assert_eq!(table.len(), 4, "{stdout}");
    let columns: Vec<usize> = table.iter().map(|l| l.find(" ok ").unwrap()).collect();
    assert!(columns.iter().all(|c| *c == LONG.len() + 3), "{stdout}");
    // The verdict: no ratio as a fact, the word and why; and exit 0 (run_suite).
    let verdict = format!(
        "{LONG} against a: inconclusive (2 of 2 points measured while other processes took up to "
    );
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with(&verdict) && l.ends_with("), over 2 points of load echo")),
        "{stdout}"
    );

    // Against a run without the hog: every row is inconclusive (its round 1 ran under
    // the hog in A), none better or worse, exit 0.
    let clean = dir.path().join("clean");
    run_suite(&file, &clean, false);
    let mut cmp = Proc::wirebench(&["compare", hogged.to_str().unwrap(), clean.to_str().unwrap()]);
    assert_eq!(cmp.finish(RUN_LIMIT), 0, "{}{}", cmp.stdout(), cmp.stderr());
    let out = cmp.stdout();
    let rows: Vec<&str> = out.lines().filter(|l| l.starts_with("echo / ")).collect();
    assert_eq!(rows.len(), 8, "2 servers x 2 points x 2 metrics:\n{out}");
    for r in &rows {
        assert!(
            r.contains("  inconclusive (busy: other processes took ") && r.ends_with(" in A)"),
            "{r}"
        );
        assert!(!r.ends_with(" better") && !r.ends_with(" worse"), "{r}");
    }
    assert!(out.contains("8 rows inconclusive: "), "{out}");
}
