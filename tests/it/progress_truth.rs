//! Progress tells the truth: its lines are the measured phase's intervals (a duration
//! plan's drain after -d is no progress line), and every protocol counts what it sends
//! as it sends it (AMQP publishes without confirms show as written while they go).
//! Asserted on the lines' content against the result's interval rows, never timings.

use crate::common::*;
use serde_json::Value;

/// The count after the unit's word on a progress line ("] echoed 1,234 ..." -> 1234).
fn counted(line: &str, word: &str) -> u64 {
    let after = line
        .split_once(&format!("] {word} "))
        .unwrap_or_else(|| panic!("no '{word}' in {line}"))
        .1;
    let digits: String = after
        .split(' ')
        .next()
        .unwrap_or_default()
        .chars()
        .filter(char::is_ascii_digit)
        .collect();
    digits
        .parse()
        .unwrap_or_else(|_| panic!("no count in {line}"))
}

/// Whether an interval row starts at or after `end_s` (seconds of the measured phase).
fn starts_at_or_after(row: &Value, end_s: f64) -> bool {
    let t = row["t_s"].as_f64().unwrap();
    let d = row["duration_s"].as_f64().unwrap();
    t - d >= end_s - 1e-9
}

#[test]
fn the_drain_after_the_duration_is_no_progress_line() {
    // Every reply comes 200 ms late, so requests are in flight when -d ends and their
    // replies arrive in the drain after it.
    let mut server = Served::start(&["--threads", "1", "--delay", "200ms"]);
    let addr = server.addr();
    let r = run_with_progress(&[
        "echo",
        &addr,
        "-t",
        "1",
        "-c",
        "4",
        "--pipeline",
        "4",
        "-d",
        "1s",
        "--progress",
        "300ms",
    ]);
    server.stop_final_line();
    assert_eq!(r.code, 0, "{}", r.explain());
    let rows = r.json()["intervals"].as_array().unwrap().clone();
    let (measured, drain): (Vec<&Value>, Vec<&Value>) =
        rows.iter().partition(|row| !starts_at_or_after(row, 1.0));
    // The rows keep the drain, so they add up to the totals; it sent nothing and got
    // the late replies.
    assert!(!drain.is_empty(), "no drain row: {rows:?}");
    for row in &drain {
        assert_eq!(row["sent"], 0, "a request sent after -d: {row}");
    }
    let drained: u64 = drain.iter().map(|row| ju(row, "/ok")).sum();
    assert!(drained > 0, "no reply in the drain: {rows:?}");
    let ok: u64 = rows.iter().map(|row| ju(row, "/ok")).sum();
    assert_eq!(ok, r.u("/totals/ok"));
    // The last measured interval ends at -d: the one before it ended earlier.
    let last = measured.last().unwrap();
    assert!(last["t_s"].as_f64().unwrap() >= 1.0 - 1e-9, "{last}");
    // One progress line per measured interval, with its running total; none after.
    let lines = progress_lines(&r.stderr);
    assert_eq!(lines.len(), measured.len(), "{}", r.stderr);
    for (line, row) in lines.iter().zip(&measured) {
        assert_eq!(counted(line, "echoed"), ju(row, "/total_ok"), "{line}");
    }
    let shown = counted(lines.last().unwrap(), "echoed");
    assert_eq!(shown + drained, r.u("/totals/ok"));
    assert!(
        lines.last().unwrap().contains(" 100%] "),
        "{}",
        lines.join("\n")
    );
}

#[test]
fn amqp_without_confirms_shows_what_it_writes_while_it_runs() {
    let r = run_with_progress(&[
        "amqp",
        "-t",
        "1",
        "-c",
        "2",
        "-d",
        "3s",
        "--progress",
        "500ms",
    ]);
    assert_eq!(r.code, 0, "{}", r.explain());
    let lines = progress_lines(&r.stderr);
    assert!(lines.len() >= 2, "{}", r.stderr);
    // Publishes count in the result at their connection's clean close, at the end;
    // progress shows them as they are written, before the end. (Not "in every
    // interval": a starved machine can leave an interval with nothing written.)
    let written: Vec<u64> = lines.iter().map(|l| counted(l, "written")).collect();
    assert!(
        written[..written.len() - 1].iter().any(|&w| w > 0),
        "nothing shown before the end: {}",
        lines.join("\n")
    );
    assert!(
        written.windows(2).all(|w| w[0] <= w[1]),
        "{}",
        lines.join("\n")
    );
    // Every publish was written before -d ended: the last line holds them all, and
    // the result counts the same ones (all closed cleanly).
    assert_eq!(
        *written.last().unwrap(),
        r.u("/totals/sent"),
        "{}",
        r.stderr
    );
    assert_eq!(r.u("/totals/ok"), r.u("/totals/sent"));
    for l in &lines {
        assert!(!l.contains("sent "), "{l}");
    }
}
