//! `wirebench connect` with no tuning flags chooses its own sources, processes and
//! attempts in flight, says so in one line and in the JSON, and reaches its count;
//! an impossible plan under the chosen defaults is refused naming the way out.

use crate::common::*;
use std::time::Duration;

#[test]
fn thirty_thousand_with_no_flags_choose_loopback_sources_and_two_processes() {
    // No --source, --processes, --concurrency or --server-processes: 30,000 sockets
    // a side is past what one process may hold here, so both sides need two.
    let file = TempPath::new("connect-defaults", ".json");
    let mut p = Proc::wirebench(&["connect", "-n", "30000", "--json", file.s()]);
    let code = p.finish(RUN_LIMIT);
    let (out, err) = (p.stdout(), p.stderr());
    assert_eq!(code, 0, "stdout:\n{out}\nstderr:\n{err}");
    let text = std::fs::read_to_string(file.path()).expect("a JSON result");
    let j: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    let c = &j["connect"];
    assert_eq!(ju(c, "/established"), 30_000, "{c:#}");
    assert_eq!(ju(c, "/attempts"), 30_000);
    assert_eq!(ju(c, "/failed"), 0);
    assert_eq!(c["lost"].as_object().unwrap().len(), 0);
    assert_eq!(ju(c, "/processes"), 2);
    assert_eq!(ju(c, "/server_processes"), 2);
    assert_eq!(ju(c, "/server_active"), 30_000);
    assert_eq!(ju(&j, "/server/accepts"), 30_000);
    // What was chosen: Linux routes all of 127.0.0.0/8 to loopback, so every one of
    // 127.0.0.2-127.0.0.255 binds; in flight is somaxconn, at most 1024 and -n.
    let chosen = &j["config"]["chosen"];
    assert_eq!(chosen["sources"]["from"], "loopback", "{chosen:#}");
    assert_eq!(chosen["sources"]["range"], "127.0.0.2-127.0.0.255");
    assert_eq!(ju(chosen, "/sources/count"), 254);
    assert_eq!(ju(&j, "/config/sources"), 254);
    assert_eq!(ju(chosen, "/processes"), 2);
    let somaxconn: u64 = std::fs::read_to_string("/proc/sys/net/core/somaxconn")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .filter(|v| *v > 0)
        .unwrap_or(4096)
        .min(1024);
    assert_eq!(ju(chosen, "/concurrency"), somaxconn.min(30_000));
    assert_eq!(ju(&j, "/config/concurrency"), somaxconn.min(30_000));
    // The one line on stdout, the same as in the JSON.
    let line = chosen["line"].as_str().unwrap();
    assert!(
        line.starts_with(
            "connect chose: sources 127.0.0.2-127.0.0.255 (254 loopback addresses), 2 client processes, "
        ),
        "{line}"
    );
    assert_eq!(out.lines().filter(|l| *l == line).count(), 1, "{out}");
}

#[test]
fn flags_given_override_and_nothing_is_said_to_be_chosen() {
    let r = run_json(&[
        "connect",
        "-n",
        "200",
        "--source",
        "127.0.0.2-127.0.0.3",
        "--processes",
        "1",
        "--concurrency",
        "7",
        "--server-processes",
        "1",
    ]);
    assert_eq!(r.code, 0, "{}", r.explain());
    let j = r.json();
    assert_eq!(ju(j, "/connect/established"), 200);
    assert_eq!(ju(j, "/config/sources"), 2);
    assert_eq!(ju(j, "/config/concurrency"), 7);
    let chosen = &j["config"]["chosen"];
    for k in ["sources", "processes", "concurrency", "line"] {
        assert!(chosen[k].is_null(), "{k} was given, not chosen: {chosen:#}");
    }
}

#[test]
fn a_plan_past_the_chosen_sources_ports_is_refused_naming_destinations() {
    // 254 sources x 1 destination x the ephemeral ports is the most one loopback
    // destination can take; refused before anything starts.
    let (lo, hi) = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|s| {
            let mut it = s.split_whitespace().map(|v| v.parse::<u64>().ok());
            Some((it.next()??, it.next()??))
        })
        .expect("ip_local_port_range");
    let n = (254 * (hi - lo + 1) + 1).to_string();
    let mut p = Proc::wirebench(&["connect", "127.0.0.1:9", "-n", &n]);
    let code = p.finish(Duration::from_secs(30));
    let line = assert_one_line_error(&p.stderr(), "connect past the ports");
    assert_eq!(code, 2, "{line}");
    assert!(line.contains("254 source x 1 destination"), "{line}");
    assert!(line.contains("add destinations"), "{line}");
    assert!(p.stdout().is_empty(), "nothing may start: {}", p.stdout());
}
