//! Batch and count plans: exact request, connection and byte counts, on both sides.

use crate::common::*;

#[test]
fn batch_plan_counts_every_request_and_connection() {
    // 2 threads x 3 connections x pipeline 10 x 5 iterations x 2 reconnect rounds.
    let r = run_json(&[
        "echo",
        "-t",
        "2",
        "-c",
        "6",
        "--pipeline",
        "10",
        "--iterations",
        "5",
        "--reconnects",
        "2",
    ]);
    assert_eq!(r.code, 0, "{}", r.explain());
    assert_eq!(r.u("/totals/ok"), 600, "{}", r.explain());
    assert_eq!(r.u("/totals/sent"), 600, "{}", r.explain());
    assert_eq!(r.u("/totals/errors"), 0, "{}", r.explain());
    assert_eq!(r.u("/totals/in_flight"), 0, "{}", r.explain());
    assert_eq!(r.u("/totals/expected"), 600, "{}", r.explain());
    // 6 connections per round, 2 rounds: each round opens fresh connections.
    assert_eq!(r.u("/totals/connections"), 12, "{}", r.explain());
    assert_eq!(r.u("/totals/connect_errors"), 0, "{}", r.explain());
    assert_eq!(r.u("/server/accepts"), 12, "{}", r.explain());
    let j = r.json();
    assert_eq!(j["totals"]["invariant_holds"], true);
    assert_eq!(j["outcome"]["success"], true);
    assert_eq!(j["config"]["plan"]["type"], "batch");
    // 64-byte payloads in 92-byte frames, each way, and the server saw the same bytes.
    assert_eq!(r.u("/totals/bytes_sent"), 600 * 92);
    assert_eq!(r.u("/totals/bytes_received"), 600 * 92);
    assert_eq!(r.u("/server/bytes_in"), 600 * 92);
    assert_eq!(r.u("/server/bytes_out"), 600 * 92);
    assert_eq!(r.u("/histogram/count"), 600);
}

#[test]
fn count_plan_is_exact_against_an_in_process_server() {
    let server = InProc::start(2);
    let r = run_json(&[
        "echo",
        &server.addr_string(),
        "-n",
        "1000",
        "-t",
        "2",
        "-c",
        "8",
        "--pipeline",
        "3",
    ]);
    // Joining the server threads makes its counters final.
    let totals = server.shutdown();
    assert_eq!(r.code, 0, "{}", r.explain());
    assert_eq!(r.u("/totals/ok"), 1000, "{}", r.explain());
    assert_eq!(r.u("/totals/sent"), 1000, "{}", r.explain());
    assert_eq!(r.u("/totals/errors"), 0, "{}", r.explain());
    assert_eq!(r.u("/totals/connections"), 8, "{}", r.explain());
    assert!(
        r.json()["server"].is_null(),
        "external target: no server block"
    );
    let sent = r.u("/totals/bytes_sent");
    assert_eq!(sent, 1000 * 92);
    assert_eq!(r.u("/totals/bytes_received"), sent);
    assert_eq!(totals.bytes_in, sent, "{totals:?}");
    assert_eq!(totals.bytes_out, sent, "{totals:?}");
    assert_eq!(totals.accepts, 8, "{totals:?}");
}
