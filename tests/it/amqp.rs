//! `wirebench amqp` and `wirebench serve amqp` end to end: exact publish, confirm and
//! connection counts on both sides, TLS, a real client library (pika), broken peers,
//! and bad URLs.

use crate::amqp_common::*;
use crate::common::*;
use std::io::Write;
use std::time::Duration;

#[test]
fn builtin_publish_with_confirms_counts_exactly() {
    let r = run_json(&[
        "amqp",
        "-n",
        "12345",
        "-t",
        "1",
        "-c",
        "3",
        "--channels",
        "2",
        "--confirm",
        "--inflight",
        "64",
    ]);
    r.assert_clean(12345);
    assert_eq!(r.u("/amqp/messages"), 12345, "{}", r.explain());
    assert_eq!(r.u("/amqp/payload_bytes"), 12345 * 100);
    assert_eq!(r.u("/amqp/handshakes"), 3);
    assert_eq!(r.u("/amqp/clean_closes"), 3);
    // The engine's count of the exchanges' round trips, per connection: the protocol
    // header, StartOk, Open, 2 Channel.Open, 2 Confirm.Select and Close, each answered
    // (Start, Tune, OpenOk, 2 Channel.OpenOk, 2 SelectOk, CloseOk); TuneOk wants none.
    assert_eq!(r.u("/totals/exchange_sent"), 3 * 8, "{}", r.explain());
    assert_eq!(r.u("/totals/exchange_answered"), 3 * 8);
    // The broker's own counts agree: every message parsed, every one confirmed.
    assert_eq!(r.u("/server/amqp/messages"), 12345);
    assert_eq!(r.u("/server/amqp/body_bytes"), 12345 * 100);
    assert_eq!(r.u("/server/amqp/confirmed"), 12345);
    assert_eq!(r.u("/server/amqp/ack_frames"), 12345);
    assert_eq!(r.u("/server/amqp/opened"), 3);
    assert_eq!(r.u("/server/amqp/clean_closes"), 3);
    assert_eq!(r.u("/server/amqp/faults"), 0);
    assert_eq!(r.json()["amqp"]["counted_from"], "confirmed by the broker");
    assert_eq!(r.json()["kind"], "amqp");
}

#[test]
fn builtin_churn_counts_clients_messages_and_closes() {
    let r = run_json(&[
        "amqp",
        "--mode",
        "churn",
        "--clients",
        "300",
        "--concurrency",
        "6",
        "--messages",
        "7",
        "--confirm",
        "--ack-multiple",
        "--size",
        "33",
    ]);
    r.assert_clean(2100);
    assert_eq!(r.u("/totals/connections"), 300, "{}", r.explain());
    assert_eq!(r.u("/amqp/handshakes"), 300);
    assert_eq!(r.u("/amqp/clean_closes"), 300);
    assert_eq!(r.u("/amqp/payload_bytes"), 2100 * 33);
    assert_eq!(r.u("/amqp/handshake_histogram/count"), 300);
    assert_eq!(r.u("/server/amqp/opened"), 300);
    assert_eq!(r.u("/server/amqp/clean_closes"), 300);
    assert_eq!(r.u("/server/amqp/messages"), 2100);
    assert_eq!(r.u("/server/amqp/confirmed"), 2100);
    assert!(r.u("/server/amqp/ack_frames") <= 2100);
    assert_eq!(r.json()["amqp"]["mode"], "churn");
}

#[test]
fn without_confirms_a_message_counts_once_written_and_the_broker_got_each() {
    let broker = Broker::start(&[]);
    let url = format!("amqp://guest:guest@127.0.0.1:{}/", broker.port);
    let r = run_json(&["amqp", &url, "-n", "5000", "-t", "1", "-c", "2"]);
    r.assert_clean(5000);
    assert_eq!(
        r.json()["amqp"]["counted_from"],
        "written, then a clean close (no confirms)"
    );
    let r = run_json(&[
        "amqp",
        &url,
        "--mode",
        "churn",
        "--clients",
        "40",
        "--concurrency",
        "4",
        "--messages",
        "25",
        "-t",
        "1",
    ]);
    r.assert_clean(1000);
    assert_eq!(r.u("/amqp/clean_closes"), 40);
    let b = broker.finish();
    // The clean close (CloseOk after every publish) means the broker has parsed them all.
    assert_eq!(b["messages"], 6000, "{b:?}");
    assert_eq!(b["confirmed"], 0);
    assert_eq!(b["opened"], 42);
    assert_eq!(b["closes"], 42);
    assert_eq!(b["faults"], 0);
}

#[test]
fn tls_amqps_url_and_serve_amqp_tls() {
    let broker = Broker::start(&["--tls"]);
    let url = format!("amqps://guest:guest@127.0.0.1:{}/", broker.port);
    let r = run_json(&[
        "amqp",
        &url,
        "--insecure",
        "--confirm",
        "-n",
        "3000",
        "-t",
        "1",
        "-c",
        "2",
    ]);
    r.assert_clean(3000);
    let r = run_json(&[
        "amqp",
        &url,
        "--insecure",
        "--mode",
        "churn",
        "--clients",
        "20",
        "--concurrency",
        "2",
        "--confirm",
        "-t",
        "1",
    ]);
    r.assert_clean(200);
    // Without --insecure the self-signed certificate is refused, and the run says so.
    let r = run_json(&[
        "amqp",
        &url,
        "-n",
        "10",
        "-t",
        "1",
        "-c",
        "1",
        "--timeout",
        "1s",
    ]);
    assert_eq!(r.code, 1, "{}", r.explain());
    assert!(r.stderr.contains("TLS handshake"), "{}", r.stderr);
    let b = broker.finish();
    assert_eq!(b["messages"], 3200, "{b:?}");
    assert_eq!(b["confirmed"], 3200);
    // The built-in broker with TLS, its generated certificate trusted for real.
    let r = run_json(&[
        "amqp",
        "--tls",
        "--confirm",
        "-n",
        "1000",
        "-t",
        "1",
        "-c",
        "1",
    ]);
    r.assert_clean(1000);
    assert_eq!(r.u("/server/tls_failures"), 0);
}

#[test]
fn unknown_method_closes_only_that_connection_with_540() {
    let broker = Broker::start(&[]);
    let mut bad = opened_connection(broker.port);
    let mut good = opened_connection(broker.port);
    // On channel 1 (opened by the handshake): basic method 99, which AMQP 0-9-1 does not have.
    bad.write_all(&[1, 0, 1, 0, 0, 0, 4, 0, 60, 0, 99, 0xCE])
        .unwrap();
    let got = read_to_close(&mut bad);
    let close_at = got
        .windows(4)
        .position(|w| w == [0, 10, 0, 50])
        .unwrap_or_else(|| panic!("no Connection.Close in {got:?}"));
    assert_eq!(got[close_at + 4..close_at + 6], 540u16.to_be_bytes());
    // The other connection goes on: a channel opens, and a whole run works alongside.
    good.write_all(&[1, 0, 3, 0, 0, 0, 5, 0, 20, 0, 10, 0, 0xCE])
        .unwrap();
    let mut buf = [0u8; 16];
    std::io::Read::read_exact(&mut good, &mut buf).unwrap();
    assert_eq!(buf, [1, 0, 3, 0, 0, 0, 8, 0, 20, 0, 11, 0, 0, 0, 0, 0xCE]);
    let url = format!("amqp://guest:guest@127.0.0.1:{}/", broker.port);
    run_json(&[
        "amqp",
        &url,
        "--confirm",
        "-n",
        "2000",
        "-t",
        "1",
        "-c",
        "2",
    ])
    .assert_clean(2000);

    // A wrong protocol header gets the spec's header and a close.
    let mut s = std::net::TcpStream::connect(("127.0.0.1", broker.port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(b"AMQP\x01\x01\x00\x0a").unwrap();
    assert_eq!(read_to_close(&mut s), b"AMQP\x00\x00\x09\x01");
    drop(good);
    let b = broker.finish();
    assert_eq!(b["faults"], 2, "{b:?}");
    assert_eq!(b["messages"], 2000);
}

#[test]
fn pika_handshakes_publishes_with_confirms_and_closes_cleanly() {
    let python = "/usr/bin/python3";
    let has_pika = std::process::Command::new(python)
        .args(["-c", "import pika"])
        .status()
        .map(|s| s.success())
        .unwrap_or(false);
    if !has_pika {
        missing("python3-pika is not installed (scripts/test.sh installs it)");
        return;
    }
    let broker = Broker::start(&["--heartbeat", "0"]);
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/peers/pika_publisher.py");
    let mut p = Proc::spawn(python, &[script, &broker.port.to_string(), "500"], false);
    assert_eq!(p.finish(RUN_LIMIT), 0, "pika failed:\n{}", p.stderr());
    let seen: serde_json::Value = serde_json::from_str(p.stdout().trim()).unwrap();
    assert_eq!(seen["confirmed"], 500);
    assert_eq!(seen["named"], "wb.q");
    assert!(
        seen["generated"].as_str().unwrap().starts_with("amq.gen-"),
        "{seen}"
    );
    assert_eq!(seen["server_product"], "wirebench");
    let b = broker.finish();
    assert_eq!(b["messages"], 500, "{b:?}");
    assert_eq!(b["confirmed"], 500);
    // Body sizes 0..299, cycled.
    let bytes: u64 = (0..500u64).map(|i| i % 300).sum();
    assert_eq!(b["bytes"], bytes);
    assert_eq!(b["opened"], 1);
    assert_eq!(b["closes"], 1);
    assert_eq!(b["faults"], 0);
}

#[test]
fn ramp_and_publish_wait_keep_counts_exact() {
    // Open loop: each connection publishes every 2 ms; the first connections spread over 100 ms.
    let r = run_json(&[
        "amqp",
        "--mode",
        "churn",
        "--clients",
        "20",
        "--concurrency",
        "4",
        "--messages",
        "5",
        "--publish-wait",
        "2",
        "--ramp",
        "100ms",
        "--confirm",
        "-t",
        "1",
    ]);
    r.assert_clean(100);
    assert_eq!(r.u("/amqp/clean_closes"), 20);
    assert_eq!(r.json()["config"]["rate"], 2000.0);
    assert_eq!(r.json()["config"]["ramp_s"], 0.1);
    let r = run_json(&[
        "amqp",
        "-n",
        "300",
        "-t",
        "1",
        "-c",
        "3",
        "--publish-wait",
        "1",
        "--confirm",
    ]);
    r.assert_clean(300);
    assert_eq!(r.u("/server/amqp/messages"), 300);
}

fn refuse(args: &[&str], phrase: &str) {
    let what = format!("wirebench {}", args.join(" "));
    let mut p = Proc::wirebench(args);
    assert_eq!(p.finish(RUN_LIMIT), 2, "{what}: {}", p.stderr());
    let line = assert_one_line_error(&p.stderr(), &what);
    assert!(line.contains(phrase), "{what}: want {phrase:?} in {line:?}");
}

#[test]
fn bad_urls_and_flags_exit_2_with_one_sentence() {
    refuse(&["amqp", "http://127.0.0.1:5672"], "is not an AMQP URL");
    refuse(
        &["amqp", "127.0.0.1:5672"],
        "must start with amqp:// or amqps://",
    );
    refuse(&["amqp", "amqp://127.0.0.1:99999/"], "is not an AMQP URL");
    refuse(&["amqp", "amqp://"], "is not an AMQP URL");
    refuse(
        &["amqp", "amqp://h:1/?heartbeat=soon"],
        "is not an AMQP URL",
    );
    refuse(&["amqp", "amqp://127.0.0.1:5672", "--tls"], "use amqps://");
    refuse(
        &["amqp", "--mode", "fast"],
        "--mode must be churn or publish",
    );
    refuse(
        &["amqp", "--mode", "churn", "--messages", "0"],
        "--messages must be at least 1",
    );
    refuse(
        &["amqp", "--mode", "churn", "--concurrency", "3", "-t", "2"],
        "multiple of --threads",
    );
    refuse(
        &["amqp", "--clients", "5"],
        "--clients applies to --mode churn",
    );
    refuse(&["amqp", "--size", "1g"], "--size");
    refuse(&["amqp", "--pipeline", "4"], "use --inflight");
    refuse(
        &["amqp", "--publish-wait", "5", "-R", "10"],
        "choose one of --publish-wait",
    );
    refuse(
        &["serve", "amqp", "--frame-max", "100"],
        "--frame-max must be at least 4096",
    );
}

/// A batch plan runs the handshake and the goodbye on every connection: per round
/// each connection opens, publishes `--inflight` messages per iteration and waits for
/// the others, then closes cleanly.
#[test]
fn a_batch_plan_against_serve_amqp_counts_exactly() {
    let broker = Broker::start(&[]);
    let url = format!("amqp://guest:guest@127.0.0.1:{}/", broker.port);
    let r = run_json(&[
        "amqp",
        &url,
        "--confirm",
        "-t",
        "1",
        "-c",
        "3",
        "--inflight",
        "4",
        "--iterations",
        "5",
        "--reconnects",
        "2",
    ]);
    // 1 thread x 3 connections x 4 in flight x 5 iterations x 2 rounds.
    r.assert_clean(120);
    assert_eq!(r.u("/totals/sent"), 120, "{}", r.explain());
    assert_eq!(r.u("/totals/connections"), 6);
    assert_eq!(r.u("/amqp/clean_closes"), 6);
    assert_eq!(r.json()["config"]["plan"]["type"], "batch");
    let b = broker.finish();
    assert_eq!(b["messages"], 120, "{b:?}");
    assert_eq!(b["confirmed"], 120);
    assert_eq!(b["opened"], 6);
    assert_eq!(b["closes"], 6);
    assert_eq!(b["faults"], 0);
}
