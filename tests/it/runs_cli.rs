//! Run control and hardening: an open loop that cannot keep its rate still ends at its
//! duration and says so; a silent server does not keep a run (or a CPU) busy; the
//! built-in TLS server's key is private.

use crate::common::*;
use serde_json::Value;
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// Far more than a 1 s run needs (warm-up 0, 2 s drain grace, start-up); a run that
/// works off its schedule's backlog instead takes minutes or never ends.
const ONE_SECOND_RUN_LIMIT: Duration = Duration::from_secs(15);

/// Runs `wirebench <args> --json FILE -q`, failing the test if it has not ended within
/// ONE_SECOND_RUN_LIMIT; returns the exit code, stderr and the JSON result.
fn run_bounded(args: &[&str]) -> (i32, String, Value) {
    let file = TempPath::new("rate", ".json");
    let mut all = args.to_vec();
    all.extend(["--json", file.s(), "-q"]);
    let mut p = Proc::wirebench(&all);
    let code = p.finish(ONE_SECOND_RUN_LIMIT);
    let text = std::fs::read_to_string(file.path()).unwrap_or_else(|e| {
        panic!(
            "no JSON result ({e}), exit {code}\nstdout:\n{}\nstderr:\n{}",
            p.stdout(),
            p.stderr()
        )
    });
    let json: Value = serde_json::from_str(&text).expect("the result is JSON");
    let errors: Vec<String> = schema_validator("result.schema.json")
        .iter_errors(&json)
        .map(|e| format!("{e} at {}", e.instance_path))
        .collect();
    assert!(errors.is_empty(), "schema: {errors:?}\n{json}");
    (code, p.stderr(), json)
}

fn f(v: &Value, pointer: &str) -> f64 {
    v.pointer(pointer)
        .and_then(Value::as_f64)
        .unwrap_or_else(|| panic!("{pointer} is not a number in {v}"))
}

#[test]
fn an_unreachable_rate_ends_at_its_duration_and_says_so() {
    for command in ["echo", "http"] {
        unreachable_rate(command);
    }
}

fn unreachable_rate(command: &str) {
    // 100 million per second is the ceiling: accepted, and far past what 2 connections do.
    let (code, stderr, j) =
        run_bounded(&[command, "-R", "100000000", "-d", "1s", "-t", "1", "-c", "2"]);
    assert_eq!(code, 1, "a rate not kept must exit 1\n{stderr}");
    assert_eq!(f(&j, "/rate/asked_per_s"), 1e8);
    let achieved = f(&j, "/rate/achieved_per_s");
    assert!(achieved > 0.0 && achieved < 9e7, "achieved {achieved}");
    assert_eq!(j["rate"]["kept_up"], Value::Bool(false));
    assert_eq!(
        ju(&j, "/totals/in_flight"),
        0,
        "a fast server answers within the grace"
    );
    // The schedule fell behind by most of the second (the measured phase ends at 1 s).
    let behind = f(&j, "/rate/behind_s");
    assert!((0.5..=1.0).contains(&behind), "behind_s {behind}");
    // What was sent in that second is all accounted for.
    assert_eq!(ju(&j, "/totals/sent"), (achieved * 1.0).round() as u64);
    assert_eq!(j["totals"]["invariant_holds"], Value::Bool(true));
    let reason = j["outcome"]["reason"].as_str().unwrap_or_default();
    let noun = if command == "http" {
        "requests"
    } else {
        "messages"
    };
    assert!(
        reason.starts_with(&format!("asked 100,000,000 {noun}/s, achieved ")),
        "{reason}"
    );
    assert!(
        stderr.contains("the schedule fell") && stderr.contains("s behind"),
        "{stderr}"
    );
}

#[test]
fn a_kept_rate_is_ok_and_reported() {
    let (code, stderr, j) = run_bounded(&["echo", "-R", "200", "-d", "1s", "-t", "1", "-c", "2"]);
    assert_eq!(code, 0, "{stderr}\n{j}");
    assert_eq!(f(&j, "/rate/asked_per_s"), 200.0);
    assert_eq!(j["rate"]["kept_up"], Value::Bool(true));
    // 200 intended sends in the second, 2 connections 10 ms apart: none past the end.
    let sent = ju(&j, "/totals/sent");
    assert!((180..=200).contains(&sent), "sent {sent}");
}

#[test]
fn a_closed_loop_result_has_no_rate() {
    let (code, stderr, j) = run_bounded(&["echo", "-n", "100", "-t", "1", "-c", "2"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(j.get("rate").is_none(), "{j}");
}

#[test]
fn a_short_count_plan_reports_its_rate_without_judging_it() {
    // 100 requests at 100 million per second: a 1 us schedule, all of it start-up.
    let (code, stderr, j) = run_bounded(&["echo", "-R", "1e8", "-n", "100", "-t", "1", "-c", "2"]);
    assert_eq!(code, 0, "{stderr}\n{j}");
    assert_eq!(j["rate"]["kept_up"], Value::Null);
    assert_eq!(f(&j, "/rate/asked_per_s"), 1e8);
    assert_eq!(ju(&j, "/totals/ok"), 100);
}

/// Reads (and drops) whatever arrives; never writes a byte.
fn never_answer(mut s: TcpStream) {
    let _ = std::io::copy(&mut s, &mut std::io::sink());
}

#[test]
fn replies_that_never_come_end_as_in_flight_after_the_grace() {
    let silent = Foreign::start(never_answer);
    let addr = silent.addr_string();
    // --timeout 60s: without the drain grace the run would wait a minute for replies.
    let (code, stderr, j) = run_bounded(&[
        "echo",
        &addr,
        "-R",
        "50",
        "-d",
        "1s",
        "-t",
        "1",
        "-c",
        "2",
        "--timeout",
        "60s",
    ]);
    assert_eq!(code, 1, "{stderr}");
    let sent = ju(&j, "/totals/sent");
    assert!(sent >= 2, "{j}");
    assert_eq!(ju(&j, "/totals/ok"), 0);
    assert_eq!(ju(&j, "/totals/in_flight"), sent, "{j}");
    assert_eq!(j["totals"]["invariant_holds"], Value::Bool(true));
    // Each connection sent one request and waited for it: the run did not keep up
    // with its schedule. (How far behind it says depends on when the connections
    // opened, which a busy machine delays; not asserted.)
    assert_eq!(sent, 2, "one request per connection: {j}");
    assert_eq!(j["rate"]["kept_up"], Value::Bool(false), "{j}");
    assert!(stderr.contains("messages got no reply"), "{stderr}");
}

/// CPU seconds (user + system) of `sh -c CMD` and every process it waited for,
/// read from the shell's own /proc stat (cutime, cstime) after CMD ends.
fn run_with_cpu(cmd: &str, limit: Duration) -> (f64, f64, String) {
    let script = format!("{cmd} >/dev/null 2>&1; cat /proc/$$/stat");
    let started = Instant::now();
    let mut p = Proc::spawn("sh", &["-c", &script], false);
    assert_eq!(p.finish(limit), 0, "{}", p.stderr());
    let wall = started.elapsed().as_secs_f64();
    let stat = p.stdout();
    // Fields after the ")" that ends the command name: state is field 3; cutime and
    // cstime are fields 16 and 17.
    let rest = &stat[stat.rfind(')').expect("stat has a comm") + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // SAFETY: sysconf is always safe to call.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    let ticks: f64 = fields[13].parse::<f64>().unwrap() + fields[14].parse::<f64>().unwrap();
    (ticks / hz, wall, stat)
}

#[test]
fn connect_waits_for_late_pings_without_spinning() {
    let silent = Foreign::start(never_answer);
    // Hold 3 s with a ping per second that never comes back; after the hold the worker
    // waits up to --timeout (6 s) for the pings in flight. That wait must sleep: about
    // 0.1 s of CPU in 9 s here; the busy wait it replaced used a whole CPU (>30%).
    let cmd = format!(
        "{} connect {} -n 200 --hold 3s --ping 1s --timeout 6s -q --processes 1",
        bin(),
        silent.addr_string()
    );
    let (cpu, wall, stat) = run_with_cpu(&cmd, Duration::from_secs(40));
    assert!(wall >= 3.0, "the hold alone is 3 s; wall {wall}");
    assert!(
        cpu < 0.1 * wall,
        "connect used {cpu:.2} s of CPU in {wall:.2} s (busy waiting?)\n{stat}"
    );
    drop(silent);
}

/// Mode bits of a path.
fn mode(p: &std::path::Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p)
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
        .permissions()
        .mode()
        & 0o777
}

#[test]
fn connect_tls_writes_its_key_privately() {
    // A temp dir of our own, so the certificate directory is easy to find.
    let tmp = TempPath::new("tlsdir", "");
    std::fs::create_dir(tmp.path()).unwrap();
    let tmpdir = format!("TMPDIR={}", tmp.s());
    let mut p = Proc::spawn(
        "env",
        &[
            &tmpdir,
            bin(),
            "connect",
            "--tls",
            "-n",
            "5",
            "--hold",
            "3s",
            "-q",
        ],
        false,
    );
    let mut found = None;
    wait_until(Duration::from_secs(20), || {
        found = std::fs::read_dir(tmp.path())
            .ok()
            .and_then(|mut d| d.find_map(|e| e.ok()))
            .map(|e| e.path())
            .filter(|d| d.join("key.pem").exists());
        found.is_some() || p.exited()
    });
    let dir = found.unwrap_or_else(|| panic!("no certificate directory\n{}", p.stderr()));
    assert!(
        dir.file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("wirebench-connect-"),
        "{}",
        dir.display()
    );
    assert_eq!(mode(&dir), 0o700, "{}", dir.display());
    assert_eq!(mode(&dir.join("key.pem")), 0o600);
    let code = p.finish(Duration::from_secs(40));
    assert_eq!(code, 0, "{}\n{}", p.stdout(), p.stderr());
    assert!(
        !dir.exists(),
        "the certificate directory is removed at the end"
    );
}

/// Pids of the children of `pid` (every thread's list).
fn children(pid: u32) -> Vec<u32> {
    wirebench::sys::proc_fs::children(pid)
}

fn alive(pid: u32) -> bool {
    // A zombie is gone for our purpose: it holds no socket and runs nothing.
    wirebench::sys::proc_fs::alive(pid as i32)
}

#[test]
fn serve_stops_every_worker_on_sigterm_even_while_starting() {
    let mut p = Proc::wirebench(&[
        "serve",
        "echo",
        "--listen",
        "127.0.0.1:0",
        "--processes",
        "40",
        "--threads",
        "1",
    ]);
    // Some workers are up (possibly not all): that is when Ctrl-C used to be ignored.
    let mut seen = Vec::new();
    wait_until(Duration::from_secs(20), || {
        seen = children(p.pid());
        seen.len() >= 5 || p.exited()
    });
    assert!(seen.len() >= 5, "workers did not start\n{}", p.stderr());
    p.terminate();
    let stopped = Instant::now();
    p.finish(Duration::from_secs(15));
    let mut all = seen;
    all.sort_unstable();
    assert!(
        // A bound for 40 exits on a loaded machine (they take milliseconds).
        wait_until(Duration::from_secs(10), || all.iter().all(|w| !alive(*w))),
        "workers still alive after the parent ended: {:?}",
        all.iter().filter(|w| alive(**w)).collect::<Vec<_>>()
    );
    assert!(
        stopped.elapsed() < Duration::from_secs(15),
        "stopping took {:?}",
        stopped.elapsed()
    );
}
