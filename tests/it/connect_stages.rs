//! `connect --churn --stages` (docs/stages.md, docs/connect.md): cycles started per
//! second by stages. A server of the test's own timestamps every accept and counts
//! every echo frame in the stage its send time (the frame's header, ns from the
//! client's start) lies in; each stage starts its integral within one cycle per
//! client process, the server's accepts are the result's `established`, the stages
//! add up to the totals, two processes and two shards add up stage by stage, and bad
//! lists are refused in one sentence.

use crate::common::*;
use crate::shards::{run_shards, start_in};
use serde_json::Value;
use std::net::TcpListener;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// 0 -> 20 cycles/s over 1 s (10 asked), held 1 s (20), 20 -> 0 over 1 s (10): 40.
const STAGES: &str = "1s:20,1s:20,1s:0";
const ASKED: [u64; 3] = [10, 20, 10];
const ENDS_NS: [u64; 3] = [1_000_000_000, 2_000_000_000, 3_000_000_000];

/// What the server saw: each accept's time, and echo frames by the stage of their
/// send time.
#[derive(Default)]
struct Seen {
    accepts: Mutex<Vec<Instant>>,
    frames: [AtomicU64; 3],
}

impl Seen {
    fn frames(&self) -> Vec<u64> {
        self.frames
            .iter()
            .map(|c| c.load(Ordering::Relaxed))
            .collect()
    }

    /// Accepts per stage, by their time from the first accept (the first cycle is
    /// due at the run's start).
    fn accepts_by_stage(&self) -> Vec<u64> {
        let all = self.accepts.lock().unwrap();
        let mut n = vec![0u64; 3];
        for at in all.iter() {
            let ns = at.duration_since(all[0]).as_nanos() as u64;
            n[ENDS_NS.iter().position(|e| ns < *e).unwrap_or(2)] += 1;
        }
        n
    }
}

/// When the stages' curve asks for cycle `m` (from 0), seconds from the run's start:
/// 10 t^2 over the climb, 20 a second held, 30 + 20 u - 10 u^2 over the fall.
fn due_s(m: u64) -> f64 {
    let m = m as f64;
    match m {
        m if m <= 10.0 => (m / 10.0).sqrt(),
        m if m <= 30.0 => 1.0 + (m - 10.0) / 20.0,
        m => 3.0 - (1.0 - (m - 30.0) / 10.0).max(0.0).sqrt(),
    }
}

/// How far a cycle came off its time at most, seconds: each accept against when the
/// curve asked for it, both from the first. Below MARGIN_S (less than the 50 ms
/// between two cycles at a stage's edge) every cycle is accepted in the stage it was
/// asked in, give or take one per process; a run late by more (a starved process on
/// a loaded machine) proves nothing about the split and is run again.
fn late_s(seen: &Seen) -> f64 {
    let mut all = seen.accepts.lock().unwrap().clone();
    all.sort();
    all.iter()
        .enumerate()
        .map(|(m, at)| {
            let took = at.duration_since(all[0]).as_secs_f64();
            (took - due_s(m as u64)).abs()
        })
        .fold(0.0, f64::max)
}

const MARGIN_S: f64 = 0.045;

/// An echo server that notes every accept and counts every frame in its stage.
fn counting_server() -> (String, Arc<Seen>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let seen: Arc<Seen> = Arc::default();
    let noted = seen.clone();
    std::thread::spawn(move || {
        for s in listener.incoming().flatten() {
            noted.accepts.lock().unwrap().push(Instant::now());
            let noted = noted.clone();
            std::thread::spawn(move || echo_frames_by_stage(s, &ENDS_NS, &noted.frames));
        }
    });
    (addr, seen)
}

fn stage_field(r: &Value, field: &str) -> Vec<u64> {
    (0..3)
        .map(|k| ju(r, &format!("/stages/{k}/{field}")))
        .collect()
}

/// Each stage's cycles started: its connections and its failed attempts.
fn attempts(r: &Value) -> Vec<u64> {
    let (up, failed) = (
        stage_field(r, "connections"),
        stage_field(r, "connect_errors"),
    );
    up.iter().zip(failed).map(|(a, b)| a + b).collect()
}

/// `n` within `slack` of `asked`, stage by stage.
fn within(n: &[u64], asked: &[u64], slack: u64) -> bool {
    n.iter().zip(asked).all(|(a, b)| a.abs_diff(*b) <= slack)
}

/// The stages of a churn result add up to its totals and its connect block.
fn assert_stages_add_up(r: &Value) {
    let sum = |f: &str| stage_field(r, f).iter().sum::<u64>();
    assert_eq!(sum("connections"), ju(r, "/connect/established"), "{r}");
    assert_eq!(sum("connections"), ju(r, "/totals/connections"));
    assert_eq!(sum("connect_errors"), ju(r, "/connect/failed"));
    assert_eq!(attempts(r).iter().sum::<u64>(), ju(r, "/connect/attempts"));
    assert_eq!(sum("sent"), ju(r, "/totals/sent"));
    assert_eq!(sum("ok"), ju(r, "/connect/churn/cycles_ok"));
    assert_eq!(sum("errors"), ju(r, "/totals/errors"));
    assert_eq!(sum("connect/histogram/count"), sum("connections"));
    assert_eq!(sum("histogram/count"), ju(r, "/histogram/count"));
    if let Err(e) = schema_validator("result.schema.json").validate(r) {
        panic!("the result does not validate: {e}\n{r:#}");
    }
}

#[test]
fn each_stage_starts_its_integral_of_cycles_from_every_process() {
    for processes in ["1", "2"] {
        for attempt in 1..=3 {
            if one_churn_by_stages(processes, attempt == 3) {
                break;
            }
        }
    }
}

/// One `connect --churn --stages` run against a counting server; false (nothing
/// held) when it ran late and `last` is false. A late last run is held to everything
/// but where its cycles fell.
fn one_churn_by_stages(processes: &str, last: bool) -> bool {
    let (addr, seen) = counting_server();
    let r = run_json(&[
        "connect",
        &addr,
        "--churn",
        "--stages",
        STAGES,
        "--processes",
        processes,
        "--concurrency",
        "4",
    ]);
    let j = r.json();
    let established = r.u("/connect/established");
    let on_time = late_s(&seen) < MARGIN_S;
    if !on_time && !last {
        return false;
    }
    let p: u64 = processes.parse().unwrap();
    assert_stages_add_up(j);
    assert!(wait_until(Duration::from_secs(5), || {
        seen.frames().iter().sum::<u64>() >= r.u("/connect/churn/cycles_ok")
    }));
    assert_eq!(seen.accepts.lock().unwrap().len() as u64, established);
    // Each frame in the stage the client counted it in: both by its send time.
    assert_eq!(seen.frames(), stage_field(j, "sent"), "{}", r.explain());
    assert_eq!(stage_field(j, "ok"), stage_field(j, "sent"));
    let client = attempts(j);
    if on_time {
        // Every cycle the plan asked started, once; the server accepted each; each
        // stage's cycles the integral within one per process, as the client counted
        // them and as the server saw them come.
        assert_eq!(r.code, 0, "{}", r.explain());
        assert_eq!(r.u("/connect/attempts"), 40, "{}", r.explain());
        assert_eq!(established, 40);
        assert_eq!(r.u("/connect/churn/cycles_ok"), 40);
        assert!(within(&client, &ASKED, p), "{client:?}\n{}", r.explain());
        let accepted = seen.accepts_by_stage();
        assert!(
            within(&accepted, &ASKED, p),
            "{accepted:?}\n{}",
            r.explain()
        );
    } else {
        assert!(r.code == 0 || r.code == 1, "{}", r.explain());
        assert!(r.u("/connect/attempts") <= 40, "{}", r.explain());
    }
    for (k, (asked, target)) in [(10.0, 20.0), (20.0, 20.0), (10.0, 0.0)]
        .into_iter()
        .enumerate()
    {
        assert_eq!(j["stages"][k]["asked_per_s"], asked);
        assert_eq!(j["stages"][k]["target_per_s"], target);
        assert_eq!(j["config"]["stages"][k]["target_per_s"], target);
    }
    assert_eq!(j["config"]["plan"]["duration_s"], 3.0);
    // The summary's table: a header and a row per stage, its attempts column.
    let rows = stage_table(&r.stdout, 3);
    for (row, n) in rows[1..].iter().zip(&client) {
        let cells: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(cells[4], n.to_string(), "{}", r.stdout);
    }
    true
}

#[test]
fn two_churn_stage_shards_merge_stage_by_stage() {
    let (addr, seen) = counting_server();
    let at = start_in(Duration::from_millis(1500));
    let runs = run_shards(
        2,
        &[
            "connect",
            &addr,
            "--churn",
            "--stages",
            STAGES,
            "--concurrency",
            "4",
            "--start-at",
            &at,
        ],
    );
    let dir = TempPath::new("merge-churn-stages", "");
    std::fs::create_dir(dir.path()).unwrap();
    let on_time = late_s(&seen) < MARGIN_S;
    let mut files = Vec::new();
    for (i, r) in runs.iter().enumerate() {
        // A shard whose cycles ran late may fall short (exit 1), as any late run.
        assert!(r.code == 0 || (r.code == 1 && !on_time), "{}", r.explain());
        assert_stages_add_up(r.json());
        let f = dir.path().join(format!("shard-{i}.json"));
        std::fs::write(&f, serde_json::to_string(r.json()).unwrap()).unwrap();
        files.push(f.to_str().unwrap().to_string());
    }
    let out = dir.path().join("merged.json");
    let mut args = vec!["merge"];
    args.extend(files.iter().map(String::as_str));
    args.extend(["-o", out.to_str().unwrap(), "-q"]);
    let mut p = Proc::wirebench(&args);
    let code = p.finish(Duration::from_secs(30));
    assert_eq!(code, 0, "merge failed:\n{}\n{}", p.stdout(), p.stderr());
    let m: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_stages_add_up(&m);
    // Stage by stage: the shards' counts summed, their connect histograms added.
    for field in [
        "connections",
        "connect_errors",
        "sent",
        "ok",
        "errors",
        "connect/histogram/count",
    ] {
        let sums: Vec<u64> = (0..3)
            .map(|k| {
                runs.iter()
                    .map(|r| ju(r.json(), &format!("/stages/{k}/{field}")))
                    .sum()
            })
            .collect();
        assert_eq!(stage_field(&m, field), sums, "{field}");
    }
    // Each shard started its half of every stage (within one), so the whole run
    // its integral within one per shard, when no cycle ran late (`late_s`); the
    // server accepted every cycle.
    if on_time {
        assert!(within(&attempts(&m), &ASKED, 2), "{m:#}");
    }
    assert_eq!(
        seen.accepts.lock().unwrap().len() as u64,
        ju(&m, "/connect/established")
    );
    for (k, asked) in [10.0, 20.0, 10.0].into_iter().enumerate() {
        let a = m["stages"][k]["asked_per_s"].as_f64().unwrap();
        assert!((a - asked).abs() < 1e-6, "{a}");
    }
}

#[test]
fn bad_churn_stages_are_refused_in_one_sentence() {
    let (addr, _seen) = counting_server();
    for (extra, says) in [
        (&["--stages", "1s:10"][..], "applies to --churn"),
        (&["--churn", "--stages", "1s:10", "-n", "5"][..], "drop -n"),
        (&["--churn", "--stages", "1s:10", "-d", "1s"][..], "drop -d"),
        (
            &["--churn", "--stages", "1s:10", "--connect-rate", "5"][..],
            "drop --connect-rate",
        ),
        (
            &["--churn", "--stages", "1s:10", "--hold", "1s"][..],
            "neither --hold",
        ),
        (
            &["--churn", "--stages", "1s:10", "--ramp", "1s"][..],
            "--ramp",
        ),
        (
            &["--churn", "--stages", "1s:5c"][..],
            "connection stages (a target like 50c) do not apply here",
        ),
        (&["--churn", "--stages", "0s:10"][..], "lasts no time"),
        (&["--churn", "--stages", "1s"][..], "is not DURATION:TARGET"),
    ] {
        let mut args = vec!["connect", &addr];
        args.extend(extra);
        let mut p = Proc::wirebench(&args);
        let code = p.finish(Duration::from_secs(30));
        assert_eq!(code, 2, "{extra:?}: {}", p.stderr());
        let line = assert_one_line_error(&p.stderr(), &format!("{extra:?}"));
        assert!(line.contains(says), "{extra:?}: {line}");
    }
}
