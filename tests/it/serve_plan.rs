//! `serve --processes`: every worker serves the validated configs its parent wrote
//! (a serialized plan), protocol limits included, and the parent adds their counters.

use crate::common::{run_json, Served};

#[test]
fn http_workers_serve_the_parents_limits() {
    // --max-body 1k reaches the workers only through the plan: with the defaults
    // (16 MiB) a 2 KiB body would be answered 200.
    let mut served = Served::start_as("http", &["--processes", "2", "--max-body", "1k"]);
    assert!(
        served.banner.contains("with 2 processes x 1 thread"),
        "{}",
        served.banner
    );
    let url = format!("http://{}/", served.addr());
    let small = run_json(&[
        "http",
        &url,
        "-n",
        "150",
        "-c",
        "2",
        "-t",
        "1",
        "--body-size",
        "1000",
    ]);
    small.assert_clean(150);
    let large = run_json(&[
        "http",
        &url,
        "-n",
        "40",
        "-c",
        "1",
        "-t",
        "1",
        "--body-size",
        "2k",
    ]);
    assert_eq!(large.code, 1, "{}", large.explain());
    assert_eq!(large.u("/status_classes/4xx"), 40, "{}", large.explain());
    assert_eq!(large.u("/totals/ok"), 0, "{}", large.explain());
    // Summed over both workers: every oversized body counted once, every small
    // request answered once.
    let last = served.stop_final_line();
    assert!(last.contains(" too large 40"), "{last}");
    assert!(last.contains(" requests 150"), "{last}");
}

#[test]
fn echo_workers_close_idle_connections_after_the_parents_idle_timeout() {
    use std::io::Read;
    // --idle-timeout 1s reaches the workers only through the plan (the default is
    // 60 s): a silent connection is closed by its worker, and counted once.
    let mut served = Served::start(&["--processes", "2", "--idle-timeout", "1s"]);
    let mut conn = std::net::TcpStream::connect(served.addr()).expect("connect");
    conn.set_read_timeout(Some(std::time::Duration::from_secs(20)))
        .expect("read timeout");
    let mut buf = [0u8; 16];
    let n = conn
        .read(&mut buf)
        .expect("the worker closes the idle connection");
    assert_eq!(n, 0, "end of stream, no bytes");
    let last = served.stop_final_line();
    assert!(last.contains("accepts 1 closes 1 "), "{last}");
    assert!(last.contains(" idle 1 "), "{last}");
}
