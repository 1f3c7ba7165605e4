//! A server's protocol figures survive `serve --processes`: every worker process sends
//! its figures with its counters, and the parent merges them exactly, so the broker's
//! final AMQP counts equal what the clients saw, whichever process served them.

use crate::amqp_common::*;
use crate::common::*;

#[test]
fn amqp_figures_are_summed_exactly_over_worker_processes() {
    let broker = Broker::start(&["--processes", "2"]);
    let url = format!("amqp://guest:guest@127.0.0.1:{}/", broker.port);
    // 32 connections: the kernel spreads them over both workers' listeners (all on
    // one would take 31 coin flips coming up the same).
    let r = run_json(&[
        "amqp",
        &url,
        "-n",
        "6400",
        "-t",
        "1",
        "-c",
        "32",
        "--confirm",
    ]);
    r.assert_clean(6400);
    assert_eq!(r.u("/amqp/handshakes"), 32, "{}", r.explain());
    assert_eq!(r.u("/amqp/clean_closes"), 32, "{}", r.explain());
    let sent = r.u("/amqp/payload_bytes");
    let counts = broker.finish();
    assert_eq!(counts["opened"], 32, "{counts:?}");
    assert_eq!(counts["messages"], 6400, "{counts:?}");
    assert_eq!(counts["bytes"], sent, "{counts:?}");
    assert_eq!(counts["confirmed"], 6400, "{counts:?}");
    assert_eq!(counts["closes"], 32, "{counts:?}");
    assert_eq!(counts["faults"], 0, "{counts:?}");
}
