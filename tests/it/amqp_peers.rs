//! The amqpprox scenario with real components: haproxy (TCP mode) between wirebench and
//! the broker, and RabbitMQ as the broker, whose own queue depth must equal what
//! wirebench says was confirmed.

use crate::amqp_common::*;
use crate::common::*;
use std::process::Command;

#[test]
fn both_modes_through_haproxy_to_serve_amqp() {
    if !have("haproxy") {
        return;
    }
    let broker = Broker::start(&[]);
    let proxy = Haproxy::start(broker.port);
    let url = format!("amqp://guest:guest@127.0.0.1:{}/", proxy.port);
    let r = run_json(&[
        "amqp",
        &url,
        "--confirm",
        "-n",
        "20000",
        "-t",
        "1",
        "-c",
        "4",
    ]);
    r.assert_clean(20000);
    let r = run_json(&["amqp", &url, "-n", "10000", "-t", "1", "-c", "2"]);
    r.assert_clean(10000);
    let r = run_json(&[
        "amqp",
        &url,
        "--mode",
        "churn",
        "--clients",
        "200",
        "--concurrency",
        "8",
        "--messages",
        "5",
        "--confirm",
        "-t",
        "1",
    ]);
    r.assert_clean(1000);
    assert_eq!(r.u("/amqp/clean_closes"), 200);
    let r = run_json(&[
        "amqp",
        &url,
        "--mode",
        "churn",
        "--clients",
        "100",
        "--concurrency",
        "4",
        "--messages",
        "3",
        "-t",
        "1",
    ]);
    r.assert_clean(300);
    drop(proxy);
    let b = broker.finish();
    assert_eq!(b["messages"], 31300, "{b:?}");
    assert_eq!(b["confirmed"], 21000);
    assert_eq!(b["opened"], 306);
    assert_eq!(b["closes"], 306);
    assert_eq!(b["faults"], 0);
}

/// A private RabbitMQ on 127.0.0.1, stopped on drop. Its AMQP, distribution and epmd
/// ports are free ones (`free_port`), not RabbitMQ's fixed 5672, 25672 and 4369, so
/// two runs of this test on one machine (two engineers' suites, a benchmark's broker)
/// do not meet.
struct Rabbit {
    dir: TempPath,
    script: String,
    port: u16,
}

impl Rabbit {
    fn start() -> Rabbit {
        let dir = TempPath::new("rabbitmq", "");
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/rabbitmq.sh").to_string();
        let ports = [free_port(), free_port(), free_port()].map(|p| p.to_string());
        let out = Command::new("bash")
            .args([&script, "start", dir.s()])
            .args(&ports)
            .output()
            .expect("run scripts/rabbitmq.sh");
        let port = ports[0].parse().expect("a port we chose");
        let rabbit = Rabbit { dir, script, port };
        assert!(
            out.status.success(),
            "RabbitMQ did not start:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        rabbit
    }

    /// Messages in `queue`, as RabbitMQ reports them.
    fn depth(&self, queue: &str) -> u64 {
        let out = Command::new("bash")
            .args([&self.script, "depth", self.dir.s()])
            .output()
            .expect("rabbitmqctl");
        let text = String::from_utf8_lossy(&out.stdout);
        text.lines()
            .filter_map(|l| l.split_once('\t'))
            .find(|(name, _)| *name == queue)
            .and_then(|(_, n)| n.trim().parse().ok())
            .unwrap_or_else(|| panic!("queue {queue} not listed:\n{text}"))
    }
}

impl Drop for Rabbit {
    fn drop(&mut self) {
        let _ = Command::new("bash")
            .args([&self.script, "stop", self.dir.s()])
            .status();
    }
}

#[test]
fn rabbitmq_queue_depth_equals_what_wirebench_confirmed() {
    let root = unsafe { libc::geteuid() } == 0;
    if !root {
        missing("RabbitMQ here needs root");
        return;
    }
    if !have("rabbitmq-server") || !have("haproxy") {
        return;
    }
    let rabbit = Rabbit::start();
    let direct = format!("amqp://guest:guest@127.0.0.1:{}/", rabbit.port);
    let r = run_json(&[
        "amqp",
        &direct,
        "--confirm",
        "-n",
        "20000",
        "-t",
        "1",
        "-c",
        "4",
        "--declare-queue",
        "wb.direct",
        "--routing-key",
        "wb.direct",
    ]);
    r.assert_clean(20000);
    assert_eq!(rabbit.depth("wb.direct"), r.u("/amqp/messages"));

    let proxy = Haproxy::start(rabbit.port);
    let via = format!("amqp://guest:guest@127.0.0.1:{}/", proxy.port);
    let r = run_json(&[
        "amqp",
        &via,
        "--mode",
        "churn",
        "--clients",
        "60",
        "--concurrency",
        "6",
        "--messages",
        "10",
        "--confirm",
        "-t",
        "1",
        "--declare-queue",
        "wb.churn",
        "--routing-key",
        "wb.churn",
    ]);
    r.assert_clean(600);
    assert_eq!(r.u("/amqp/clean_closes"), 60);
    assert_eq!(rabbit.depth("wb.churn"), 600);
    let r = run_json(&[
        "amqp",
        &via,
        "--confirm",
        "-n",
        "5000",
        "-t",
        "1",
        "-c",
        "2",
        "--channels",
        "3",
        "--declare-queue",
        "wb.proxy",
        "--routing-key",
        "wb.proxy",
    ]);
    r.assert_clean(5000);
    assert_eq!(rabbit.depth("wb.proxy"), 5000);

    // Wrong credentials: RabbitMQ's refusal is reported, and the run fails.
    let r = run_json(&[
        "amqp",
        &format!("amqp://guest:wrong@127.0.0.1:{}/", rabbit.port),
        "-n",
        "5",
        "-t",
        "1",
        "-c",
        "1",
        "--timeout",
        "2s",
    ]);
    assert_eq!(r.code, 1, "{}", r.explain());
    assert!(r.stderr.contains("403"), "{}", r.stderr);
    // Its words for each refused attempt, in the error texts.
    let texts = &r.json()["error_texts"];
    assert_eq!(texts["kept"][0]["kind"], "connect_failed", "{texts}");
    let refusal = texts["kept"][0]["text"].as_str().unwrap();
    assert!(
        refusal.starts_with(
            "the broker closed the connection during the handshake: 403 ACCESS_REFUSED - Login was refused"
        ),
        "{refusal}"
    );
    assert_eq!(ju(texts, "/kept/0/count"), r.u("/totals/connect_errors"));

    // A publish to an exchange that does not exist: RabbitMQ closes the channel with
    // 404, and its words are kept. All 50 go in one write before the close is read;
    // the one it answers is the protocol error, the rest are dropped with the channel.
    let r = run_json(&[
        "amqp",
        &direct,
        "--confirm",
        "--exchange",
        "wb.nosuch",
        "-n",
        "50",
        "-t",
        "1",
        "-c",
        "1",
    ]);
    assert_eq!(r.code, 1, "{}", r.explain());
    assert_eq!(
        r.json()["errors"],
        serde_json::json!({"protocol": 1, "dropped": 49}),
        "{}",
        r.explain()
    );
    assert_eq!(
        r.json()["error_texts"],
        serde_json::json!({"kept": [{
            "kind": "protocol",
            "text": "the broker closed channel 1: 404 NOT_FOUND - no exchange 'wb.nosuch' in vhost '/'",
            "count": 1
        }], "other": 0})
    );
}
