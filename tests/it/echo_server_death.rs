//! The server dies mid-run (SIGKILL): the client must notice, give up within a bounded
//! time, exit 1, and still account for every request.

use crate::common::*;
use crate::http_support::stat;
use std::time::Duration;

#[test]
fn client_ends_when_the_server_is_killed() {
    let mut server = Served::start(&["--threads", "1", "--stats", "100ms"]);
    let file = TempPath::new("death", ".json");
    let target = server.addr();
    let mut client = Proc::wirebench(&[
        "echo",
        &target,
        "-d",
        "60s",
        "--timeout",
        "2s",
        "-c",
        "4",
        "-t",
        "1",
        "-q",
        "--json",
        file.s(),
    ]);
    // The run is live once the server has echoed more replies than the client has
    // connections: each connection has one request out at a time, so the client has
    // read some of them. (A fixed 1 s wait raced a slow start on a loaded machine.)
    let echoed = |line: &str| {
        line.split_once("| total:")
            .map_or(0, |(_, t)| stat(t, "out") / ECHO_FRAME)
    };
    let live = std::iter::from_fn(|| server.proc.wait_line("[", RUN_LIMIT)).any(|l| echoed(&l) > 8);
    assert!(live, "the server never echoed 8 replies");
    assert!(
        !client.exited(),
        "the client stopped before the server died\nstdout:\n{}\nstderr:\n{}",
        client.stdout(),
        client.stderr()
    );
    server.proc.kill();

    let code = match client.wait_for(Duration::from_secs(20)) {
        Some(s) => s.code().unwrap_or(-1),
        None => panic!(
            "the client still ran 20 s after its server died; killed it\nstdout:\n{}\nstderr:\n{}",
            client.stdout(),
            client.stderr()
        ),
    };
    let text = std::fs::read_to_string(file.path()).expect("the client wrote its JSON result");
    let j: serde_json::Value = serde_json::from_str(&text).expect("JSON result");
    let why = format!(
        "exit {code}\nstderr:\n{}\ntotals: {}\nerrors: {}",
        client.stderr(),
        j["totals"],
        j["errors"]
    );
    assert_eq!(code, 1, "{why}");
    assert_eq!(j["totals"]["invariant_holds"], true, "{why}");
    let failures = ju(&j, "/totals/errors") + ju(&j, "/totals/connect_errors");
    assert!(failures > 0, "{why}");
    assert!(
        ju(&j, "/totals/ok") > 0,
        "the run was live before the kill\n{why}"
    );
    assert_eq!(j["outcome"]["success"], false, "{why}");
    assert!(j["outcome"]["reason"].is_string(), "{why}");
    let line = assert_one_line_error(&client.stderr(), "client after server death");
    assert!(line.contains("fell short"), "{line}");
}
