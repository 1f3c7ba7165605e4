//! Output that never misleads: each protocol's own words, "n/a" (and null in the JSON)
//! for figures that do not exist, warm-up connections counted, connection errors in
//! progress as they happen, an early end when nothing listens, the client's own cost.

use crate::common::*;
use serde_json::Value;
use std::time::Duration;

fn assert_valid(schema: &str, j: &Value) {
    let v = schema_validator(schema);
    let errors: Vec<String> = v.iter_errors(j).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}\n{j}");
}

/// The summary line that starts with `label`.
fn line<'a>(text: &'a str, label: &str) -> &'a str {
    text.lines()
        .find(|l| l.starts_with(label))
        .unwrap_or_else(|| panic!("no line starting {label:?} in\n{text}"))
}

#[test]
fn amqp_without_confirms_has_no_latency_no_received_bytes_and_says_publishes() {
    let r = run_with_progress(&[
        "amqp",
        "--mode",
        "publish",
        "-t",
        "1",
        "-c",
        "2",
        "-n",
        "3000",
        "--progress",
        "0.2",
    ]);
    assert_eq!(r.code, 0, "{}", r.explain());
    let j = r.json();
    assert_valid("result.schema.json", j);
    assert_eq!(j["totals"]["ok"], 3000);
    assert_eq!(
        j["unit"],
        serde_json::json!({"noun": "publishes", "counted": "written", "replies": false})
    );
    assert_eq!(j["latency_us"], Value::Null, "no reply, no latency");
    assert_eq!(
        j["throughput"]["mb_per_s"],
        Value::Null,
        "no reply, no bytes back"
    );
    assert_eq!(j["amqp"]["connections_per_s"], Value::Null, "publish mode");
    let intervals = j["intervals"].as_array().unwrap();
    assert!(!intervals.is_empty());
    for i in intervals {
        assert_eq!(i["mb_per_s"], Value::Null, "{i}");
        assert_eq!(i["p50_us"], Value::Null, "{i}");
    }
    assert_eq!(j["amqp"]["handshakes"], 2);
    assert!(j["amqp"]["handshake_latency_us"]["p50"].as_f64().unwrap() > 0.0);
    let out = &r.stdout;
    assert_eq!(
        line(out, "publishes:"),
        "publishes:    3,000 written of 3,000 sent (expected 3,000)"
    );
    assert!(
        line(out, "bytes:").ends_with("sent; received n/a (publishes settle on write)"),
        "{out}"
    );
    assert_eq!(
        line(out, "latency (us):"),
        "latency (us): n/a (publishes settle on write: no reply to time)"
    );
    let tp = line(out, "throughput:");
    assert!(
        tp.contains(" publishes/s  ") && !tp.contains("received"),
        "{tp}"
    );
    assert_eq!(
        line(out, "amqp:"),
        "amqp:         publish mode; 2 connections (2 closed cleanly)"
    );
    let hs = line(out, "handshake:");
    assert!(
        hs.starts_with("handshake:    p50 ") && hs.contains(" us  p90 "),
        "{hs}"
    );
    assert!(line(out, "published:").contains(" publishes/s, "), "{out}");
    assert!(
        line(out, "published:").contains(" MiB/s of payload"),
        "{out}"
    );
    assert!(!out.contains("MB/s") && !out.contains("msgs/s"), "{out}");
    for l in progress_lines(&r.stderr) {
        assert!(l.contains("] written "), "{l}");
        assert!(!l.contains("MiB/s") && !l.contains("p50"), "{l}");
    }
}

#[test]
fn warmup_connections_are_counted_as_carried_over() {
    let r = run_json(&["echo", "-t", "1", "-c", "4", "-d", "1", "--warmup", "500ms"]);
    assert_eq!(r.code, 0, "{}", r.explain());
    assert_eq!(r.u("/totals/connections_from_warmup"), 4, "{}", r.explain());
    assert_eq!(r.u("/totals/connections"), 0);
    assert_eq!(
        line(&r.stdout, "connections:"),
        "connections:  4 open (opened during warm-up), 0 new, 0 failed (attempts or dropped for unsolicited bytes)"
    );
}

#[test]
fn nothing_listening_shows_in_progress_and_ends_the_run_early() {
    let port = free_port();
    let target = format!("127.0.0.1:{port}");
    let r = run_with_progress(&[
        "echo",
        &target,
        "-t",
        "1",
        "-c",
        "2",
        "-d",
        "30",
        "--progress",
        "1",
    ]);
    assert_eq!(r.code, 1, "{}", r.explain());
    let j = r.json();
    // Three seconds of refusals, not thirty (generous bound: a loaded machine).
    assert!(j["elapsed_s"].as_f64().unwrap() < 15.0, "{}", r.explain());
    let refused = r.u("/errors/connect_refused");
    assert!(refused > 0);
    let shown: u64 = j["intervals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["connect_errors"].as_u64().unwrap())
        .sum();
    assert_eq!(shown, refused, "every refusal shows in an interval");
    let first = progress_lines(&r.stderr)[0];
    assert!(
        first.contains(" connect)") && !first.ends_with("errors 0"),
        "{first}"
    );
    let why = format!("nothing accepts connections at {target}: every attempt ({refused}) for ");
    assert!(
        r.stderr.contains(&why) && r.stderr.contains(" s was refused"),
        "{}",
        r.stderr
    );
    assert_eq!(
        line(&r.stdout, "latency (us):"),
        "latency (us): n/a (no replies)"
    );
    assert_eq!(j["latency_us"], Value::Null);
    assert_eq!(
        j["cpu"]["client_us_per_msg"],
        Value::Null,
        "nothing to divide by"
    );
    assert!(
        line(&r.stdout, "cpu:").ends_with(" s (n/a per message)"),
        "{}",
        r.stdout
    );
}

#[test]
fn http_counts_requests_and_the_client_cost_is_reported() {
    let r = run_with_progress(&[
        "http",
        "-t",
        "1",
        "-c",
        "2",
        "-n",
        "400",
        "--progress",
        "0.2",
    ]);
    assert_eq!(r.code, 0, "{}", r.explain());
    let j = r.json();
    assert_eq!(j["unit"]["noun"], "requests");
    assert_eq!(
        line(&r.stdout, "requests:"),
        "requests:     400 ok of 400 sent (expected 400)"
    );
    assert!(
        line(&r.stdout, "throughput:").contains(" requests/s  "),
        "{}",
        r.stdout
    );
    assert!(
        line(&r.stdout, "cpu:").contains(" us/request"),
        "{}",
        r.stdout
    );
    assert_eq!(j["client_process"]["includes_builtin_server"], true);
    let peak = r.u("/client_process/peak_rss_bytes");
    assert!(peak > 1 << 20 && peak % 1024 == 0, "{peak}");
    let mem = line(&r.stdout, "memory:");
    assert!(
        mem.starts_with("memory:       client peak RSS ")
            && mem.ends_with(" MiB (VmHWM of the wirebench process, built-in server included)"),
        "{mem}"
    );
    for l in progress_lines(&r.stderr) {
        assert!(l.len() <= 100, "{} columns: {l}", l.len());
        assert!(l.contains("] ok "), "{l}");
    }
}

#[test]
fn serve_banner_uses_singular_and_plural() {
    let one = Served::start(&["--threads", "1"]);
    assert!(one.banner.ends_with(" with 1 thread"), "{}", one.banner);
    let two = Served::start(&["--threads", "2"]);
    assert!(two.banner.ends_with(" with 2 threads"), "{}", two.banner);
}

#[test]
fn ioevent_prints_a_summary_by_default_and_iterations_with_verbose() {
    let args = [
        "ioevent",
        "-n",
        "16",
        "--iterations",
        "3",
        "--backend",
        "epoll",
    ];
    let quiet = run_json(&args);
    assert_eq!(quiet.code, 0, "{}", quiet.explain());
    let mut p = Proc::wirebench(&args);
    assert_eq!(p.finish(Duration::from_secs(60)), 0);
    let default_out = p.stdout();
    let mut verbose_args = args.to_vec();
    verbose_args.push("--verbose");
    let mut v = Proc::wirebench(&verbose_args);
    assert_eq!(v.finish(Duration::from_secs(60)), 0);
    let verbose_out = v.stdout();
    let extra = verbose_out.lines().count() - default_out.lines().count();
    assert_eq!(
        extra, 3,
        "one line per iteration\n{verbose_out}\n---\n{default_out}"
    );
    assert!(
        line(&default_out, "cost: cpu ").contains(" per read), peak RSS "),
        "{default_out}"
    );
    let j = quiet.json();
    assert_valid("ioevent.schema.json", j);
    assert!(j["client_process"]["peak_rss_bytes"].as_u64().unwrap() > 0);
    assert!(j["client_process"]["cpu_us_per_read"].as_f64().unwrap() > 0.0);
}
