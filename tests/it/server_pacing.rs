//! Servers of known latency: `--delay` shows as the latency floor of a closed-loop
//! run, `--stall` shows in the corrected (open-loop) tail and not in the uncorrected one.
//! Only the floor is asserted: above it, a reply's latency is the machine's scheduling.

use crate::common::*;

fn f(r: &RunOut, pointer: &str) -> f64 {
    r.json()
        .pointer(pointer)
        .and_then(serde_json::Value::as_f64)
        .unwrap_or_else(|| panic!("{pointer} missing\n{}", r.explain()))
}

/// Latency min and p50 >= the delay: the floor the server puts under every reply.
/// (No upper bound: how far above the floor the median lands is the machine's
/// scheduling, 118 ms for a 100 ms delay on a busy 2-core machine.)
#[track_caller]
fn assert_delay_floor(r: &RunOut, delay_us: f64) {
    let (min, p50) = (f(r, "/latency_us/min"), f(r, "/latency_us/p50"));
    assert!(min >= delay_us, "min {min} us < delay {delay_us} us");
    assert!(p50 >= delay_us, "p50 {p50} us < delay {delay_us} us");
}

#[test]
fn echo_delay_is_the_latency_floor() {
    // 20 rounds of 8 connections: 2 s.
    let server = Served::start(&["--threads", "1", "--delay", "100ms"]);
    let r = run_json(&["echo", &server.addr(), "-n", "160", "-c", "8", "-t", "1"]);
    r.assert_clean(160);
    assert_delay_floor(&r, 100_000.0);
}

#[test]
fn http_delay_is_the_latency_floor() {
    let server = Served::start_as("http", &["--threads", "1", "--delay", "100ms"]);
    let url = format!("http://{}/", server.addr());
    let r = run_json(&["http", &url, "-n", "160", "-c", "8", "-t", "1"]);
    r.assert_clean(160);
    assert_delay_floor(&r, 100_000.0);
}

#[test]
fn random_delays_keep_pipelined_replies_in_order() {
    // The echo client checks every frame's sequence and payload: a reply overtaking
    // an earlier one would be a mismatch.
    let server = Served::start(&["--threads", "1", "--delay", "exp:2ms"]);
    let r = run_json(&[
        "echo",
        &server.addr(),
        "-n",
        "4000",
        "-c",
        "4",
        "-t",
        "1",
        "--pipeline",
        "8",
    ]);
    r.assert_clean(4000);
    let server = Served::start_as("http", &["--threads", "1", "--delay", "uniform:1ms..5ms"]);
    let url = format!("http://{}/", server.addr());
    let r = run_json(&[
        "http",
        &url,
        "-n",
        "2000",
        "-c",
        "2",
        "-t",
        "1",
        "--pipeline",
        "8",
        "-m",
        "POST",
        "--body-size",
        "100",
        "--expect-echo",
    ]);
    r.assert_clean(2000);
    assert!(f(&r, "/latency_us/min") >= 1_000.0, "{}", r.explain());
}

#[test]
fn stall_shows_in_the_corrected_tail_only() {
    // Stalls at 6-7 s and 12-13 s after the server starts (and 0-1 s, as the run
    // starts). The run (9 s) covers the first and ends before the second, however late
    // it starts within 3 s: a run that ends inside a stall cannot send its last
    // second of schedule and rightly reports the rate as not kept. (With stalls every
    // 4 s and a 7 s run, a start 1 s late on a loaded machine ended in one.)
    // After the stall the client works off a second of schedule: 4 connections can
    // do so on a loaded machine, where a round trip took 0.8 ms on average and 2
    // connections (2,400/s at most) stayed 1.1 s behind to the end. Replies in flight
    // at a stall's start, at most 8, stay below the uncorrected p99.9 (of 18,000).
    let server = Served::start(&["--threads", "1", "--stall", "1s/6s"]);
    let r = run_json(&[
        "echo",
        &server.addr(),
        "-R",
        "2000",
        "-d",
        "9s",
        "-c",
        "4",
        "-t",
        "1",
    ]);
    assert_eq!(r.code, 0, "{}", r.explain());
    assert_eq!(r.u("/totals/errors"), 0, "{}", r.explain());
    let corrected = f(&r, "/latency_us/p99_9");
    let corrected_max = f(&r, "/latency_us/max");
    let uncorrected = f(&r, "/latency_uncorrected_us/p99_9");
    assert!(
        corrected >= 800_000.0 && corrected_max >= 800_000.0,
        "corrected p99.9 {corrected} us, max {corrected_max} us: the 1 s stall must show"
    );
    assert!(
        uncorrected < 300_000.0,
        "uncorrected p99.9 {uncorrected} us: only the few replies in flight at a stall's start wait"
    );
}

#[test]
fn held_replies_are_capped_and_all_come_back_in_order() {
    use std::io::{Read, Write};
    // 4 MiB sent without reading, each read's echo held 200 ms: the 1 MiB cap on held
    // bytes stops reading (counted), and every byte still comes back, in order, even
    // after the client half-closes.
    let mut server = Served::start(&["--threads", "1", "--delay", "200ms"]);
    let data = pseudo_random_bytes(0xde1a, 4 << 20);
    let mut s = std::net::TcpStream::connect(server.addr()).unwrap();
    s.set_read_timeout(Some(std::time::Duration::from_secs(30)))
        .unwrap();
    let writer = {
        let mut w = s.try_clone().unwrap();
        let data = data.clone();
        std::thread::spawn(move || {
            w.write_all(&data).unwrap();
            w.shutdown(std::net::Shutdown::Write).unwrap();
        })
    };
    let mut back = Vec::with_capacity(data.len());
    s.read_to_end(&mut back).expect("read the echo to its end");
    writer.join().unwrap();
    assert_eq!(back.len(), data.len());
    assert!(back == data, "the echo came back changed or reordered");
    let last = server.stop_final_line();
    let held_full: u64 = last
        .split(" held full ")
        .nth(1)
        .and_then(|t| t.split_whitespace().next())
        .and_then(|n| n.replace(',', "").parse().ok())
        .unwrap_or_else(|| panic!("no held full count: {last}"));
    assert!(held_full >= 1, "{last}");
}
