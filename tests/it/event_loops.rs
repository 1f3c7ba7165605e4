//! Every result says which event loop ran (stats/event_loop.rs): the load workers'
//! in `client_process.event_loop`, the built-in server's threads in `server.event_loop`,
//! both in the summary's `loop:` line, and `serve`'s on its final line (`; loop: ...;`).
//! What the code chooses (engine/worker.rs, server/mod.rs `Machinery::for_config`):
//! io_uring for plain TCP closed-loop plans on this kernel; epoll when asked
//! (`WIREBENCH_LOAD_LOOP=epoll`, `WIREBENCH_SERVER_LOOP=epoll`), for TLS, open loop,
//! a connection per request, and a server of several processes (connect's included).

use crate::common::*;
use serde_json::{json, Value};

/// `wirebench <args> --json FILE` (summary on stdout) with only the loop variables in
/// `env` set: the others are removed, so "the default" is the default. Runs with a
/// built-in server give `--server-threads`: by default it takes the CPUs the load left.
fn run_env(env: &[&str], args: &[&str]) -> RunOut {
    let file = TempPath::new("loops", ".json");
    let mut all: Vec<&str> = vec!["-u", "WIREBENCH_LOAD_LOOP", "-u", "WIREBENCH_SERVER_LOOP"];
    all.extend_from_slice(env);
    all.push(bin());
    all.extend_from_slice(args);
    all.extend(["--json", file.s()]);
    let mut p = Proc::spawn("env", &all, false);
    let code = p.finish(RUN_LIMIT);
    RunOut::of(&p, code, &file)
}

/// The summary's `loop:` line.
fn loop_line(r: &RunOut) -> &str {
    r.stdout
        .lines()
        .find(|l| l.starts_with("loop:"))
        .unwrap_or_else(|| panic!("no loop line: {}", r.explain()))
}

/// The run went as asked, its result is valid, and its loops are `client`/`server`.
#[track_caller]
fn assert_loops(r: &RunOut, ok: u64, client: Value, server: Value, line: &str) {
    r.assert_clean(ok);
    let j = r.json();
    let v = schema_validator("result.schema.json");
    let errors: Vec<String> = v.iter_errors(j).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(j["client_process"]["event_loop"], client, "{}", r.explain());
    assert_eq!(j["server"]["event_loop"], server, "{}", r.explain());
    assert_eq!(loop_line(r), line);
}

/// `{"io_uring": 2}` from "io_uring x2", as the summary line writes it.
fn counts(desc: &str) -> Value {
    let (name, n) = desc.split_once(" x").expect("LOOP xN");
    json!({ name: n.parse::<u64>().unwrap() })
}

/// Runs `args` (split at spaces) with `env`, a built-in server in the same process, and
/// asserts `ok` replies and the loops `client` and `server` ("io_uring x2") in the
/// result and the summary.
#[track_caller]
fn case(env: &[&str], args: &str, ok: u64, client: &str, server: &str) {
    let argv: Vec<&str> = args.split_whitespace().collect();
    let r = run_env(env, &argv);
    let line = format!("loop:         client {client}; server {server}");
    assert_loops(&r, ok, counts(client), counts(server), &line);
}

#[test]
fn plain_tcp_echo_and_http_run_on_io_uring_by_default_on_both_ends() {
    let (two, args) = ("io_uring x2", "-t 2 --server-threads 2 -c 3");
    case(&[], &format!("echo {args} -n 3001"), 3001, two, two);
    case(&[], &format!("http {args} -n 2001"), 2001, two, two);
}

#[test]
fn each_end_says_epoll_when_asked_for_it() {
    let args = "-t 2 --server-threads 2 -c 3";
    let env = ["WIREBENCH_LOAD_LOOP=epoll"];
    case(
        &env,
        &format!("echo {args} -n 3001"),
        3001,
        "epoll x2",
        "io_uring x2",
    );
    let env = ["WIREBENCH_SERVER_LOOP=epoll"];
    case(
        &env,
        &format!("http {args} -n 2001"),
        2001,
        "io_uring x2",
        "epoll x2",
    );
}

#[test]
fn tls_open_loop_and_a_connection_per_request_run_on_epoll() {
    // TLS: the load engine's io_uring loop is for plain TCP, and so is the server's.
    let args = "echo --tls -t 1 --server-threads 1 -c 2 -n 200";
    case(&[], args, 200, "epoll x1", "epoll x1");
    // Open loop and HTTP without keep-alive: the client stays on epoll, the server not.
    let args = "echo -t 2 --server-threads 2 -c 2 -R 2000 -n 400";
    case(&[], args, 400, "epoll x2", "io_uring x2");
    let args = "http -t 1 --server-threads 1 -c 2 -n 101 --no-keepalive";
    case(&[], args, 101, "epoll x1", "io_uring x1");
}

#[test]
fn an_external_server_leaves_only_the_client_loop() {
    let mut server = Served::start(&["--threads", "2"]);
    let addr = server.addr();
    let r = run_env(&[], &["echo", &addr, "-t", "1", "-c", "2", "-n", "500"]);
    r.assert_clean(500);
    assert_eq!(
        r.json()["client_process"]["event_loop"],
        json!({"io_uring": 1})
    );
    assert_eq!(r.json()["server"], Value::Null);
    assert_eq!(loop_line(&r), "loop:         client io_uring x1");
    // The server's own summary names its loop too (the default: io_uring).
    let last = server.stop_final_line();
    assert!(last.contains("; loop: io_uring x2; final: "), "{last}");
}

#[test]
fn serve_processes_and_connect_say_epoll_summed_over_their_processes() {
    // A server of several processes is the mass-connection case: epoll
    // (`ServerConfig::one_of_processes`), one thread each here.
    let mut server = Served::start(&["--processes", "2", "--threads", "1"]);
    let addr = server.addr();
    let r = run_env(&[], &["echo", &addr, "-t", "1", "-c", "4", "-n", "400"]);
    r.assert_clean(400);
    let last = server.stop_final_line();
    assert!(last.contains("; loop: epoll x2; final: "), "{last}");

    // connect holds its connections (a hold plan: epoll) in worker processes of one
    // engine thread each, against a built-in server of processes (epoll).
    let r = run_env(
        &[],
        &[
            "connect",
            "-n",
            "40",
            "--processes",
            "2",
            "--server-processes",
            "2",
            "--hold",
            "100ms",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.explain());
    let j = r.json();
    let v = schema_validator("result.schema.json");
    let errors: Vec<String> = v.iter_errors(j).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}");
    assert_eq!(ju(j, "/connect/established"), 40);
    assert_eq!(j["client_process"]["event_loop"], json!({"epoll": 2}));
    assert_eq!(j["server"]["event_loop"], json!({"epoll": 2}));
    assert_eq!(
        loop_line(&r),
        "loop:          client epoll x2; server epoll x2"
    );
}

#[test]
fn a_connect_churn_that_ends_at_once_still_says_its_loops_and_peak_memory() {
    // Churn workers may exit before the parent looks at them: what they ran on and
    // their peak memory come in their own final reports, not from /proc.
    let r = run_env(
        &[],
        &[
            "connect",
            "--churn",
            "-n",
            "40",
            "--concurrency",
            "2",
            "--processes",
            "2",
            "--server-processes",
            "2",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.explain());
    let j = r.json();
    assert_eq!(ju(j, "/connect/churn/cycles_ok"), 40, "{}", r.explain());
    assert_eq!(j["client_process"]["event_loop"], json!({"epoll": 2}));
    assert!(ju(j, "/client_process/peak_rss_bytes") > 0);
    assert_eq!(
        loop_line(&r),
        "loop:          client epoll x2; server epoll x2"
    );
}
