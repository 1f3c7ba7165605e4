//! Connection stages (`--stages 1s:4c,...`, docs/stages.md): the server's own count of
//! open connections follows the stages, every connection the stages add is one accept
//! and every one they drop one clean close (its replies in, no error), the stages'
//! counts add up to the totals, and bad lists are refused in one sentence.

use crate::common::*;
use serde_json::Value;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// 0 -> 4 over 1 s, held 2 s, 4 -> 1 over 1 s, 1 -> 5 over 1 s, held 2 s, 5 -> 0 over
/// 1 s. The climbs open 4 + 4 connections; the holds' middles lie a second from any
/// change of the count.
const STAGES: &str = "1s:4c,2s:4c,1s:1c,1s:5c,2s:5c,1s:0c";
const TARGETS: [u64; 6] = [4, 4, 1, 5, 5, 0];

/// What a byte-echo server saw: each accept (+1) and close (-1) with its time, and how
/// many connections ended by a reset rather than a clean close.
#[derive(Default)]
struct Seen {
    events: Vec<(Instant, i64)>,
    resets: u64,
}

impl Seen {
    fn accepts(&self) -> usize {
        self.events.iter().filter(|e| e.1 > 0).count()
    }

    /// Connections open at `at` (a time after the first accept).
    fn open_at(&self, at: Instant) -> i64 {
        self.events.iter().filter(|e| e.0 <= at).map(|e| e.1).sum()
    }
}

/// Echoes every byte back; counts accepts and closes with their times.
fn echo_watching_connections() -> (u16, Arc<Mutex<Seen>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = Arc::new(Mutex::new(Seen::default()));
    let log = seen.clone();
    std::thread::spawn(move || {
        for mut s in listener.incoming().flatten() {
            log.lock().unwrap().events.push((Instant::now(), 1));
            let log = log.clone();
            std::thread::spawn(move || {
                let _ = s.set_nodelay(true);
                let mut buf = [0u8; 16 * 1024];
                let reset = loop {
                    match s.read(&mut buf) {
                        Ok(0) => break false,
                        Ok(n) if s.write_all(&buf[..n]).is_ok() => {}
                        _ => break true,
                    }
                };
                let mut l = log.lock().unwrap();
                l.events.push((Instant::now(), -1));
                l.resets += u64::from(reset);
            });
        }
    });
    (port, seen)
}

fn stage_u(r: &Value, k: usize, field: &str) -> u64 {
    ju(r, &format!("/stages/{k}/{field}"))
}

#[test]
fn the_servers_open_connections_follow_the_stages() {
    let (port, seen) = echo_watching_connections();
    let target = format!("127.0.0.1:{port}");
    let r = run_with_progress(&["echo", &target, "--stages", STAGES, "-t", "2"]);
    let j = r.json();
    assert_eq!(r.code, 0, "{}", r.explain());
    // Leaving connections end cleanly: their replies in, nothing an error.
    assert_eq!(ju(j, "/totals/errors"), 0, "{}", r.explain());
    assert_eq!(ju(j, "/totals/in_flight"), 0, "{}", r.explain());
    assert_eq!(ju(j, "/totals/sent"), ju(j, "/totals/ok"));
    assert_eq!(ju(j, "/totals/connections"), 8, "{}", r.explain());
    for (field, total) in [("sent", "sent"), ("ok", "ok"), ("errors", "errors")] {
        let sum: u64 = (0..6).map(|k| stage_u(j, k, field)).sum();
        assert_eq!(sum, ju(j, &format!("/totals/{total}")), "{field}");
    }
    for (k, want) in TARGETS.iter().enumerate() {
        assert_eq!(stage_u(j, k, "target_connections"), *want);
        assert!(j["stages"][k]["target_per_s"].is_null());
        assert!(stage_u(j, k, "sent") > 0, "stage {k} sent nothing");
    }
    // The holds: their count set a second and more before their end, never above it.
    for k in [1, 4] {
        assert_eq!(stage_u(j, k, "connections_at_end"), TARGETS[k]);
        assert_eq!(stage_u(j, k, "connections_peak"), TARGETS[k]);
    }
    assert_eq!(
        j["config"]["stages"][3],
        serde_json::json!({"seconds": 1.0, "target_connections": 5})
    );
    if let Err(e) = schema_validator("result.schema.json").validate(j) {
        panic!("the result does not validate: {e}");
    }

    // The server's side: the climbs' accepts, every close clean, none left open, and
    // in the middle of each hold the stage's count (times from the first accept, due
    // at 125 ms: the count reaches 0.5 there).
    let done = || {
        let s = seen.lock().unwrap();
        s.accepts() == 8 && s.open_at(Instant::now()) == 0
    };
    assert!(wait_until(Duration::from_secs(5), done), "{}", r.explain());
    let s = seen.lock().unwrap();
    assert_eq!((s.accepts(), s.resets), (8, 0));
    let start = s.events[0].0 - Duration::from_millis(125);
    for (mid_ms, want) in [(2_000, 4), (6_000, 5)] {
        let at = start + Duration::from_millis(mid_ms);
        assert_eq!(s.open_at(at), want, "open at {mid_ms} ms");
    }
    // Never more open than the highest target.
    let mut open = 0;
    let most = s.events.iter().fold(0, |m, e| {
        open += e.1;
        m.max(open)
    });
    assert!(most <= 5, "{most} open at once");

    // The summary's table names the connections.
    let rows = stage_table(&r.stdout, 6);
    assert!(rows[0].contains("conns to"), "{}", r.stdout);
    let cells: Vec<&str> = rows[2].split_whitespace().collect();
    assert_eq!(&cells[..5], ["2", "2.000", "4", "4", "4"], "{}", r.stdout);
}

#[test]
fn a_fall_to_zero_closes_every_connection_and_a_climb_opens_them_again() {
    // The built-in server counts its own: at the end nothing open, each climb's
    // connections accepted.
    let r = run_with_progress(&["echo", "--stages", "1s:3c,1s:0c,1s:3c,1s:0c", "-t", "1"]);
    let j = r.json();
    assert_eq!(r.code, 0, "{}", r.explain());
    assert_eq!(ju(j, "/totals/connections"), 6, "{}", r.explain());
    assert_eq!(ju(j, "/totals/errors"), 0);
    assert_eq!(ju(j, "/totals/sent"), ju(j, "/totals/ok"));
    assert_eq!(stage_u(j, 1, "connections_peak"), 3);
    assert_eq!(stage_u(j, 3, "connections_peak"), 3);
}

#[test]
fn bad_connection_stages_are_refused_in_one_sentence() {
    for (args, what) in [
        (
            &["--stages", "1s:5c,1s:100"][..],
            "stage 2 is a rate and stage 1 a number of connections",
        ),
        (&["--stages", "1s:5c", "-R", "100"], "cannot be used with"),
        (&["--stages", "1s:9000000c"], "use fewer connections"),
        (&["--stages", "1s:5c", "-c", "7"], "drop -c"),
        (
            &["--stages", "1s:2.5c"],
            "not a whole number of connections",
        ),
        (&["--stages", "1s:0c,1s:0c"], "every stage's target is 0"),
        (
            &["--stages", "1s:5c", "--ramp", "1s"],
            "write the ramp as the first stage",
        ),
        (&["--stages", "1s:5c", "--warmup", "1s"], "drop --warmup"),
    ] {
        let mut all = vec!["echo", "127.0.0.1:9"];
        all.extend_from_slice(args);
        let mut p = Proc::wirebench(&all);
        assert_eq!(p.finish(RUN_LIMIT), 2, "{args:?}: {}", p.stderr());
        let err = assert_one_line_error(&p.stderr(), what);
        assert!(err.contains(what), "{args:?}: {err}");
    }
}

#[test]
fn a_suite_runs_connection_stages_and_refuses_a_connections_axis() {
    let dir = TempPath::new("suite-conn-stages", "");
    std::fs::create_dir_all(dir.path()).unwrap();
    let head = "[[server]]\nname = \"echo\"\ncommand = \"{wirebench} serve echo --listen {addr} --threads 1\"\n[[load]]\nname = \"vus\"\nprotocol = \"echo\"\nwarmup = \"0s\"\nstages = \"1s:2c,1s:0c\"\n";
    let good = dir.path().join("good.toml");
    std::fs::write(&good, head).unwrap();
    let out = dir.path().join("out");
    let mut p = Proc::wirebench(&[
        "suite",
        good.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(p.finish(Duration::from_secs(120)), 0, "{}", p.stderr());
    let point = std::fs::read_dir(out.join("points"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|f| {
            f.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("vus__")
        })
        .expect("the point's result");
    let j: Value = serde_json::from_str(&std::fs::read_to_string(point).unwrap()).unwrap();
    assert_eq!(ju(&j, "/config/connections"), 2);
    assert_eq!(ju(&j, "/stages/0/target_connections"), 2);
    assert_eq!(ju(&j, "/totals/connections"), 2);

    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, format!("{head}connections = [8]\n")).unwrap();
    let mut p = Proc::wirebench(&[
        "suite",
        bad.to_str().unwrap(),
        "--out",
        dir.path().join("out2").to_str().unwrap(),
    ]);
    assert_eq!(p.finish(RUN_LIMIT), 2, "{}", p.stderr());
    let err = assert_one_line_error(&p.stderr(), "connections");
    assert!(
        err.contains("bad.toml:8:")
            && err.contains(
                "the stages set the connections and the length of every point: drop `connections`"
            ),
        "{err}"
    );
}
