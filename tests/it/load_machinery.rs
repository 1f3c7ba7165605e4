//! The load engine's two loops (engine/worker.rs): io_uring, the default for plain TCP
//! closed-loop plans (reactor/uring_loop.rs), and epoll (`WIREBENCH_LOAD_LOOP=epoll`). The same
//! loads through each give the same exact counts, and the server saw exactly what
//! was counted (nothing sent twice, nothing lost between a send and its completion).

use crate::common::*;
use crate::http_support::stat;
use serde_json::Value;
use std::process::Command;

const LOOPS: [&str; 2] = ["epoll", "uring"];

/// `wirebench <args> --json FILE -q` with the load loop `which`.
fn run_on(which: &str, args: &[&str]) -> RunOut {
    let file = TempPath::new("machinery", ".json");
    let out = Command::new(bin())
        .args(args)
        .args(["--json", file.s(), "-q"])
        .env("WIREBENCH_LOAD_LOOP", which)
        .output()
        .expect("wirebench runs");
    let json = std::fs::read_to_string(file.path())
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok());
    RunOut {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        json,
    }
}

/// What the result says the `threads` workers ran on, asked for `which`.
fn ran_on(which: &str, threads: u64) -> Value {
    match which {
        "epoll" => serde_json::json!({ "epoll": threads }),
        _ => serde_json::json!({ "io_uring": threads }),
    }
}

#[test]
fn echo_counts_are_exact_on_both_loops_and_the_server_read_each_frame_once() {
    for which in LOOPS {
        let mut server = Served::start(&["--threads", "2"]);
        let addr = server.addr();
        // 2 workers x 7 connections x 16 in flight; 10,007 is no multiple of anything.
        let r = run_on(
            which,
            &[
                "echo",
                &addr,
                "-t",
                "2",
                "-c",
                "14",
                "--pipeline",
                "16",
                "-n",
                "10007",
            ],
        );
        r.assert_clean(10007);
        assert_eq!(r.u("/totals/sent"), 10007, "{which}: {}", r.explain());
        assert_eq!(r.u("/totals/in_flight"), 0, "{which}: {}", r.explain());
        assert_eq!(r.u("/totals/connections"), 14, "{which}: {}", r.explain());
        assert_eq!(
            r.json()["client_process"]["event_loop"],
            ran_on(which, 2),
            "{which}"
        );
        let last = server.stop_final_line();
        assert_eq!(
            stat(&last, "bytes in"),
            10007 * ECHO_FRAME,
            "{which}: {last}"
        );
        assert_eq!(stat(&last, "out"), 10007 * ECHO_FRAME, "{which}: {last}");
    }
}

#[test]
fn echo_large_messages_span_receive_buffers_on_both_loops() {
    // 100 KiB payloads: each reply straddles many 8 KiB provided buffers (io_uring)
    // or 64 KiB reads (epoll); every byte is still checked.
    for which in LOOPS {
        let r = run_on(
            which,
            &[
                "echo",
                "-t",
                "1",
                "-c",
                "3",
                "--pipeline",
                "2",
                "--size",
                "100KiB",
                "-n",
                "301",
            ],
        );
        r.assert_clean(301);
        assert_eq!(r.u("/totals/sent"), 301, "{which}: {}", r.explain());
    }
}

#[test]
fn http_counts_are_exact_on_both_loops_with_and_without_keepalive() {
    for which in LOOPS {
        let server = Served::start_as("http", &["--threads", "1"]);
        let url = format!("http://{}/", server.addr());
        let r = run_on(which, &["http", &url, "-t", "2", "-c", "10", "-n", "5003"]);
        r.assert_clean(5003);
        assert_eq!(r.u("/totals/sent"), 5003, "{which}: {}", r.explain());
        assert_eq!(r.u("/totals/connections"), 10, "{which}: {}", r.explain());
        assert_eq!(
            r.json()["client_process"]["event_loop"],
            ran_on(which, 2),
            "{which}"
        );
        // A connection per request: each socket closed (its receive cancelled) and the
        // slot's next one opened on the same descriptor number.
        let r = run_on(
            which,
            &[
                "http",
                &url,
                "-t",
                "1",
                "-c",
                "4",
                "-n",
                "401",
                "--no-keepalive",
            ],
        );
        r.assert_clean(401);
        assert_eq!(r.u("/totals/connections"), 401, "{which}: {}", r.explain());
        // A connection per request stays on epoll whatever is asked (engine/worker.rs).
        assert_eq!(
            r.json()["client_process"]["event_loop"],
            serde_json::json!({"epoll": 1}),
            "{which}"
        );
    }
}

#[test]
fn a_duration_plan_accounts_for_every_request_on_both_loops() {
    for which in LOOPS {
        let r = run_on(
            which,
            &[
                "echo",
                "-t",
                "2",
                "-c",
                "40",
                "--pipeline",
                "4",
                "-d",
                "1s",
                "--ramp",
                "300ms",
            ],
        );
        assert_eq!(r.code, 0, "{which}: {}", r.explain());
        assert_eq!(r.u("/totals/errors"), 0, "{which}: {}", r.explain());
        let (sent, ok, in_flight) = (
            r.u("/totals/sent"),
            r.u("/totals/ok"),
            r.u("/totals/in_flight"),
        );
        assert!(ok > 0, "{which}: {}", r.explain());
        assert_eq!(sent, ok + in_flight, "{which}: {}", r.explain());
    }
}
