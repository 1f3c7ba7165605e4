//! `wirebench http --h2` against hostile HTTP/2 servers (tests/fixtures/h2_hostile.py):
//! a 2^24-byte frame, a header block that never ends, an HPACK index out of range,
//! RST_STREAM on every stream, GOAWAY mid-run, a window of 0 forever. Each ends its
//! connections (or, for RST_STREAM, its requests) with its own error kind, the
//! accounting holds, the run ends, and the client's peak RSS stays bounded.

use crate::common::*;
use std::time::Duration;

/// Peak RSS the client may reach against any of them (a flood is capped at 64 KiB
/// of header block per connection; the process itself takes about 10 MiB).
const RSS_CAP: u64 = 64 << 20;

fn hostile(mode: &str, extra: &[&str]) -> RunOut {
    let script = format!(
        "{}/tests/fixtures/h2_hostile.py",
        env!("CARGO_MANIFEST_DIR")
    );
    let mut server = Proc::spawn("python3", &[&script, mode], false);
    let line = server
        .wait_line("listening ", Duration::from_secs(20))
        .unwrap_or_else(|| panic!("{mode}: the server did not start: {}", server.stderr()));
    let port = line.trim_start_matches("listening ").trim();
    let url = format!("http://127.0.0.1:{port}/");
    let mut args = vec![
        "http",
        "--h2",
        &url,
        "-d",
        "2s",
        "-t",
        "1",
        "-c",
        "2",
        "--max-streams",
        "4",
        "--timeout",
        "1s",
    ];
    args.extend_from_slice(extra);
    let (r, peak) = run_json_watching_memory(&args);
    server.kill();
    assert!(
        peak < RSS_CAP,
        "{mode}: peak RSS {peak} bytes\n{}",
        r.explain()
    );
    assert_eq!(
        r.json()["totals"]["invariant_holds"],
        true,
        "{mode}: {}",
        r.explain()
    );
    r
}

fn errors(r: &RunOut, kind: &str) -> u64 {
    r.json()["errors"][kind].as_u64().unwrap_or(0)
}

#[test]
fn each_hostile_server_ends_with_its_own_error_kind() {
    if !have("python3") {
        return;
    }
    for (mode, kind) in [
        ("big_frame", "too_large"),
        ("continuation", "too_large"),
        ("bad_index", "protocol"),
        ("window0", "timeout"),
    ] {
        let extra: &[&str] = if mode == "window0" {
            &["--body-size", "10"]
        } else {
            &[]
        };
        let r = hostile(mode, extra);
        assert_eq!(r.code, 1, "{mode}: {}", r.explain());
        assert_eq!(r.u("/totals/ok"), 0, "{mode}: {}", r.explain());
        assert!(errors(&r, kind) >= 1, "{mode}: no {kind}\n{}", r.explain());
        // Nothing but that kind, and requests dropped with the connections it ended.
        let total = r.u("/totals/errors");
        assert_eq!(
            total,
            errors(&r, kind) + errors(&r, "dropped"),
            "{mode}: {}",
            r.explain()
        );
    }
}

#[test]
fn resets_fail_their_requests_and_goaway_its_connection() {
    if !have("python3") {
        return;
    }
    // RST_STREAM on every stream: every request an rst_stream error, the two
    // connections kept the whole run.
    let r = hostile("rst", &[]);
    assert_eq!(r.code, 1, "{}", r.explain());
    assert_eq!(r.u("/totals/ok"), 0);
    assert!(r.u("/totals/sent") >= 100, "{}", r.explain());
    assert_eq!(
        errors(&r, "rst_stream"),
        r.u("/totals/errors"),
        "{}",
        r.explain()
    );
    assert_eq!(r.u("/totals/connections"), 2, "{}", r.explain());
    let text = r.json()["error_texts"]["kept"][0]["text"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(text, "RST_STREAM REFUSED_STREAM (0x7)");

    // GOAWAY after 20 answers a connection: answered requests count, the rest of each
    // connection's are goaway, and the slots reconnect.
    let r = hostile("goaway", &[]);
    assert_eq!(r.code, 1, "{}", r.explain());
    assert!(r.u("/totals/ok") >= 40, "{}", r.explain());
    assert!(errors(&r, "goaway") >= 2, "{}", r.explain());
    assert_eq!(
        r.u("/totals/errors"),
        errors(&r, "goaway"),
        "{}",
        r.explain()
    );
    assert!(r.u("/totals/connections") > 2, "{}", r.explain());
    let text = r.json()["error_texts"]["kept"][0]["text"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(text, "GOAWAY NO_ERROR (0x0): bye");
}
