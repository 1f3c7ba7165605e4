//! `--ramp T`: connection starts spread linearly over T, seen from the server side, and
//! the counts stay exact (the ramp is warm-up unless `--ramp-measured`, but for
//! connect's hold, whose time to all established the ramp is part of).

use crate::common::{behind_by, run_json};
use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// A byte-echo server on 127.0.0.1 that notes when it accepted each connection.
fn echo_noting_accepts() -> (u16, Arc<Mutex<Vec<Instant>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let accepted = Arc::new(Mutex::new(Vec::new()));
    let noted = accepted.clone();
    std::thread::spawn(move || {
        for mut s in listener.incoming().flatten() {
            noted.lock().unwrap().push(Instant::now());
            std::thread::spawn(move || {
                let _ = s.set_nodelay(true);
                let mut buf = [0u8; 16 * 1024];
                while let Ok(n) = s.read(&mut buf) {
                    if n == 0 || s.write_all(&buf[..n]).is_err() {
                        return;
                    }
                }
            });
        }
    });
    (port, accepted)
}

#[test]
fn connection_starts_spread_over_the_ramp_and_counts_stay_exact() {
    let (port, accepted) = echo_noting_accepts();
    let target = format!("127.0.0.1:{port}");
    let r = run_json(&[
        "echo", &target, "--ramp", "2s", "-c", "100", "-t", "1", "-n", "3000",
    ]);
    r.assert_clean(3000);
    assert_eq!(r.u("/totals/sent"), 3000, "{}", r.explain());
    assert_eq!(r.u("/totals/in_flight"), 0);
    assert_eq!(r.json()["config"]["ramp"]["seconds"], 2.0);
    assert_eq!(r.json()["config"]["ramp"]["measured"], false);
    let mut at = accepted.lock().unwrap().clone();
    assert_eq!(at.len(), 100, "one connection per slot, none reopened");
    at.sort();
    let since = |i: usize| at[i].duration_since(at[0]).as_secs_f64();
    // Linear over 2 s: the last starts near 1.98 s; the first 10 % in the first ~0.2 s.
    assert!(since(99) >= 1.5, "spread only {:.3} s", since(99));
    assert!(since(99) < 3.0, "spread {:.3} s", since(99));
    assert!(since(9) <= 0.5, "the first 10 % took {:.3} s", since(9));
    assert!(since(50) >= 0.6, "half started within {:.3} s", since(50));
}

#[test]
fn a_measured_ramp_counts_and_a_ramp_refuses_batch_plans() {
    let r = run_json(&[
        "echo",
        "--ramp",
        "300ms",
        "--ramp-measured",
        "-c",
        "10",
        "-t",
        "1",
        "-n",
        "500",
    ]);
    r.assert_clean(500);
    assert_eq!(r.u("/warmup/sent"), 0, "{}", r.explain());
    assert_eq!(r.json()["config"]["ramp"]["measured"], true);
    let r = run_json(&["echo", "--ramp", "1s", "--iterations", "2"]);
    assert_eq!(r.code, 2, "{}", r.explain());
    assert!(
        r.stderr.contains("--ramp does not apply to a batch plan"),
        "{}",
        r.stderr
    );
}

#[test]
fn connect_starts_spread_over_the_ramp_from_every_process_and_counts_stay_exact() {
    let (port, accepted) = echo_noting_accepts();
    let target = format!("127.0.0.1:{port}");
    // Two client processes: their shares interleave, so the spread is linear over all.
    let r = run_json(&[
        "connect",
        &target,
        "-n",
        "100",
        "--processes",
        "2",
        "--ramp",
        "2s",
    ]);
    assert_eq!(r.code, 0, "{}", r.explain());
    assert_eq!(r.u("/connect/requested"), 100, "{}", r.explain());
    assert_eq!(r.u("/connect/attempts"), 100);
    assert_eq!(r.u("/connect/established"), 100);
    assert_eq!(r.u("/connect/failed"), 0);
    assert_eq!(r.u("/totals/connections"), 100);
    assert_eq!(r.json()["config"]["ramp"]["seconds"], 2.0);
    // connect counts its ramp without --ramp-measured, and says so: every connection
    // it spread is in the figures, and time to all established runs from the first
    // attempt, so it spans the ramp (the last start is at 1.98 s: a lower bound, not
    // a speed).
    assert_eq!(r.json()["config"]["ramp"]["measured"], true);
    assert_eq!(r.u("/totals/connections_from_warmup"), 0);
    let reach = r.json()["connect"]["time_to_establish_s"].as_f64().unwrap();
    assert!(reach >= 1.5, "time to all established {reach} s");
    let per_s = r.json()["connect"]["connect_rate_per_s"].as_f64().unwrap();
    assert!(
        (per_s * reach - 100.0).abs() < 1e-6,
        "{per_s}/s over {reach} s"
    );
    let mut at = accepted.lock().unwrap().clone();
    assert_eq!(at.len(), 100, "one accept per connection, none retried");
    at.sort();
    let since = |i: usize| at[i].duration_since(at[0]).as_secs_f64();
    // Linear over 2 s: the last starts near 1.98 s; the first 10 % in the first ~0.2 s.
    assert!(since(99) >= 1.5, "spread only {:.3} s", since(99));
    assert!(since(99) < 3.0, "spread {:.3} s", since(99));
    assert!(since(9) <= 0.5, "the first 10 % took {:.3} s", since(9));
    assert!(since(50) >= 0.6, "half started within {:.3} s", since(50));
    // Without a ramp the same plan opens everything at once.
    let r = run_json(&["connect", &target, "-n", "100", "--processes", "2"]);
    assert_eq!(r.u("/connect/established"), 100, "{}", r.explain());
    assert!(r.json()["config"]["ramp"].is_null());
}

#[test]
fn connect_processes_interleave_their_starts_over_the_ramp() {
    let (port, accepted) = echo_noting_accepts();
    let target = format!("127.0.0.1:{port}");
    // Ten processes of one connection each: connection i of the whole starts at
    // i x 200 ms, not all ten at once (each process's first start at 0).
    let r = run_json(&[
        "connect",
        &target,
        "-n",
        "10",
        "--processes",
        "10",
        "--ramp",
        "2s",
    ]);
    assert_eq!(r.code, 0, "{}", r.explain());
    assert_eq!(r.u("/connect/established"), 10, "{}", r.explain());
    let mut at = accepted.lock().unwrap().clone();
    assert_eq!(at.len(), 10, "one accept per connection");
    at.sort();
    let since = |i: usize| at[i].duration_since(at[0]).as_secs_f64();
    assert!(since(9) >= 1.4, "spread only {:.3} s", since(9));
    assert!(since(4) >= 0.5, "half started within {:.3} s", since(4));
}

#[test]
fn connect_churn_ramps_its_slots_and_takes_ramp_measured() {
    let (port, accepted) = echo_noting_accepts();
    let target = format!("127.0.0.1:{port}");
    let args = |flag: Option<&'static str>| {
        let mut a = vec![
            "connect".to_string(),
            target.clone(),
            "--churn".into(),
            "-n".into(),
            "40".into(),
            "--concurrency".into(),
            "4".into(),
            "--ramp".into(),
            "300ms".into(),
        ];
        a.extend(flag.map(String::from));
        a
    };
    let run = |a: &[String]| run_json(&a.iter().map(String::as_str).collect::<Vec<_>>());
    // With --ramp-measured every cycle of the ramp is counted in the figures.
    let r = run(&args(Some("--ramp-measured")));
    assert_eq!(r.code, 0, "{}", r.explain());
    assert_eq!(r.u("/connect/established"), 40, "{}", r.explain());
    assert_eq!(r.u("/connect/churn/cycles_ok"), 40, "{}", r.explain());
    assert_eq!((r.u("/totals/sent"), r.u("/totals/ok")), (40, 40));
    assert_eq!(r.u("/warmup/sent"), 0);
    assert_eq!(r.json()["config"]["ramp"]["measured"], true);
    assert!(r.json()["connect"]["ramp"].is_null());
    assert_eq!(accepted.lock().unwrap().len(), 40);
    // Without it the 40 cycles are the measured ones after the ramp; the cycles
    // during it are counted apart, and the two add up to what the server accepted.
    let r = run(&args(None));
    assert_eq!(r.code, 0, "{}", r.explain());
    assert_eq!(r.json()["config"]["ramp"]["measured"], false);
    assert_eq!(r.u("/connect/churn/cycles_ok"), 40, "{}", r.explain());
    assert_eq!((r.u("/totals/sent"), r.u("/totals/ok")), (40, 40));
    let ramp = r.u("/connect/ramp/established");
    let all = r.u("/connect/established") + ramp;
    assert_eq!(all as usize, accepted.lock().unwrap().len() - 40);
    assert!(ramp > 0, "{}", r.explain());
    let bad = run_json(&["connect", &target, "--ramp", "soon"]);
    assert_eq!(bad.code, 2, "{}", bad.explain());
    assert!(
        bad.stderr.starts_with("wirebench: --ramp"),
        "{}",
        bad.stderr
    );
}

#[test]
fn a_connect_churn_ramp_is_counted_apart_and_adds_up_to_the_servers_accepts() {
    // The built-in server, two client processes of two slots each: 40 measured
    // cycles after a 300 ms ramp whose cycles are counted apart.
    let r = run_json(&[
        "connect",
        "--churn",
        "-n",
        "40",
        "--concurrency",
        "4",
        "--processes",
        "2",
        "--ramp",
        "300ms",
    ]);
    assert_eq!(r.code, 0, "{}", r.explain());
    let j = r.json();
    assert_eq!(j["config"]["ramp"]["measured"], false);
    assert_eq!(j["config"]["ramp"]["seconds"], 0.3);
    // The figures: exactly the plan's 40 cycles, each one echo, every one timed.
    assert_eq!(r.u("/connect/churn/cycles_ok"), 40, "{}", r.explain());
    assert_eq!((r.u("/totals/sent"), r.u("/totals/ok")), (40, 40));
    assert_eq!(r.u("/latency_us/count"), 40);
    let established = r.u("/connect/established");
    assert_eq!(r.u("/connect/connect_latency_us/count"), established);
    assert_eq!(r.u("/totals/connections"), established);
    // The ramp: counted, not lost, and its books balance on their own.
    let ramp = |k: &str| r.u(&format!("/connect/ramp/{k}"));
    assert!(ramp("established") > 0, "{}", r.explain());
    assert_eq!(ramp("failed") + r.u("/connect/failed"), 0);
    assert_eq!(ramp("attempts"), ramp("established"));
    assert_eq!(ramp("sent"), ramp("ok"));
    assert_eq!(ramp("in_flight"), 0);
    assert_eq!(
        (r.u("/warmup/sent"), r.u("/warmup/ok")),
        (ramp("sent"), ramp("ok"))
    );
    assert_eq!(j["warmup"]["duration_s"], 0.3);
    // Measured and ramp together are every connection the server accepted and
    // closed, and every one of them echoed once.
    let all = established + ramp("established");
    assert_eq!(r.u("/server/accepts"), all, "{}", r.explain());
    assert_eq!(r.u("/server/closes"), all);
    assert_eq!(r.u("/connect/attempts") + ramp("attempts"), all);
    assert_eq!(r.u("/totals/sent") + ramp("sent"), all);
    assert!(established < all);
    // A hold counts its ramp, with --ramp-measured or without, and says so.
    for flag in [None, Some("--ramp-measured")] {
        let mut a = vec!["connect", "-n", "20", "--ramp", "200ms"];
        a.extend(flag);
        let r = run_json(&a);
        assert_eq!(r.code, 0, "{}", r.explain());
        assert_eq!(r.u("/connect/established"), 20);
        assert_eq!(r.u("/server/accepts"), 20);
        assert_eq!(r.json()["config"]["ramp"]["measured"], true);
        assert!(r.json()["connect"]["ramp"].is_null());
    }
}

/// A byte-echo server on 127.0.0.1 that counts every byte it receives.
fn echo_counting_bytes() -> (u16, Arc<std::sync::atomic::AtomicU64>) {
    use std::sync::atomic::{AtomicU64, Ordering};
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let received = Arc::new(AtomicU64::new(0));
    let counted = received.clone();
    std::thread::spawn(move || {
        for mut s in listener.incoming().flatten() {
            let counted = counted.clone();
            std::thread::spawn(move || {
                let _ = s.set_nodelay(true);
                let mut buf = [0u8; 16 * 1024];
                while let Ok(n) = s.read(&mut buf) {
                    counted.fetch_add(n as u64, Ordering::Relaxed);
                    if n == 0 || s.write_all(&buf[..n]).is_err() {
                        return;
                    }
                }
            });
        }
    });
    (port, received)
}

/// Frames of 64 payload bytes (92 on the wire) the server received, once it has read
/// the `expected` (or 5 s went by: the assertion then shows what it had).
fn frames(received: &Arc<std::sync::atomic::AtomicU64>, expected: u64) -> u64 {
    let now = || received.load(std::sync::atomic::Ordering::Relaxed) / 92;
    let _ = crate::common::wait_until(std::time::Duration::from_secs(5), || now() >= expected);
    now()
}

#[test]
fn an_open_loop_ramp_sends_its_integral_and_the_duration_follows_it() {
    // -R 1000 --ramp 2s: 1000 requests in the ramp (R T / 2), then 2000 in the 2 s
    // after it, measured or not: the schedule is the run's, whenever connections open.
    for measured in [false, true] {
        let (port, received) = echo_counting_bytes();
        let target = format!("127.0.0.1:{port}");
        let mut args = vec![
            "echo", &target, "-R", "1000", "--ramp", "2s", "-d", "2s", "-c", "4",
        ];
        if measured {
            args.push("--ramp-measured");
        }
        let r = run_json(&args);
        let sent = r.u("/totals/sent");
        let in_ramp = r.json()["warmup"]["sent"].as_u64().unwrap_or(0);
        // Within one per connection, plus what the run says it fell behind by: the
        // measured phase ends at the deadline by the clock, so a loop behind its
        // schedule then (a loaded machine) has not sent that much of it.
        let slack = 4 + behind_by(r.json(), 1000.0);
        if measured {
            assert!(sent <= 3004 && sent + slack >= 3000, "{}", r.explain());
        } else {
            assert!(in_ramp.abs_diff(1000) <= slack, "{}", r.explain());
            assert!(
                sent <= 2004 && sent + in_ramp + slack >= 3000,
                "{}",
                r.explain()
            );
        }
        assert_eq!(
            frames(&received, sent + in_ramp),
            sent + in_ramp,
            "the server's count"
        );
    }
}

#[test]
fn rate_stages_send_each_stage_s_integral() {
    // 0 -> 1000/s over 1 s (500), held 1 s (1000), 1000 -> 0 over 1 s (500).
    let (port, received) = echo_counting_bytes();
    let target = format!("127.0.0.1:{port}");
    let r = run_json(&[
        "echo",
        &target,
        "--stages",
        "1s:1000,1s:1000,1s:0",
        "-c",
        "3",
    ]);
    let sent = r.u("/totals/sent");
    // Within one per connection, less what the run says it fell behind by at its end
    // (a loaded machine's loop: 1,993 sent, 0.298 s behind, under a CPU hog).
    let slack = 3 + behind_by(r.json(), 1000.0);
    assert!(sent <= 2003 && sent + slack >= 2000, "{}", r.explain());
    assert_eq!(frames(&received, sent), sent, "the server's count");
    assert_eq!(r.json()["config"]["stages"][1]["target_per_s"], 1000.0);
}

#[test]
fn bad_stages_are_refused_in_one_sentence() {
    for (extra, says) in [
        (&["--stages", "1s"][..], "is not DURATION:TARGET"),
        (&["--stages", "0s:10"][..], "lasts no time"),
        (&["--stages", "1s:-3"][..], "0 or more"),
        (&["--stages", "1s:10", "--ramp", "1s"][..], "--ramp"),
        (
            &["--stages", "1s:10", "--search", "p99<5ms"][..],
            "--search",
        ),
    ] {
        let mut args = vec!["echo", "127.0.0.1:9"];
        args.extend_from_slice(extra);
        let out = std::process::Command::new(crate::common::bin())
            .args(&args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}
