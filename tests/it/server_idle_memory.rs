//! The reactor (src/reactor/) under a server at scale: an idle connection costs the
//! server at most 256 bytes of user memory (issue 13's goal; ~134 measured on the
//! io_uring loop, ~47 on epoll), counted as RSS growth over 24,000 held connections,
//! with every connection accepted, held and closed exactly.

use crate::common::*;

#[test]
fn a_held_idle_connection_costs_the_server_at_most_256_bytes() {
    let r = run_json(&[
        "connect",
        "-n",
        "24000",
        "--processes",
        "2",
        "--server-processes",
        "2",
        "--source",
        "127.0.0.10-127.0.0.11",
        "--hold",
        "500ms",
    ]);
    assert_eq!(r.code, 0, "{}", r.explain());
    let j = r.json();
    let c = &j["connect"];
    assert_eq!(ju(c, "/established"), 24_000, "{c:#}");
    assert_eq!(ju(c, "/failed"), 0);
    assert_eq!(ju(c, "/server_active"), 24_000);
    assert_eq!(ju(j, "/server/accepts"), 24_000);
    assert_eq!(ju(j, "/server/closes"), 24_000);
    assert_eq!(ju(c, "/memory/connections"), 24_000);
    let per_conn = c["memory"]["server_rss_per_conn_bytes"]
        .as_f64()
        .unwrap_or_else(|| panic!("no server memory per connection in {c:#}"));
    assert!(
        per_conn <= 256.0,
        "the server holds an idle connection in {per_conn} bytes (goal <= 256)"
    );
}
