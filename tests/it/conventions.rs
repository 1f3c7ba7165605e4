//! The conventions of the ecosystem (DESIGN.md, "CLI conventions"): -c is the total
//! over all threads, as wrk, oha and redis-benchmark count it; `--json -` gives stdout
//! to the JSON; bare `wirebench` lists its commands; `-h` fits a screen and `--help`
//! ends with examples and exit codes; a protocol's help lists only the flags it takes.

use crate::common::*;
use serde_json::Value;
use std::time::Duration;
use wirebench::cli::{Cli, Command};
use wirebench::proto::plugin::Protocol;

#[test]
fn minus_c_is_the_total_over_the_threads_counted_by_the_server() {
    // (threads asked, -c, threads that run, the connections line of the plan)
    let cases = [
        (2, 10, 2, "connections: 10 (5 per thread)"),
        (
            3,
            10,
            3,
            "connections: 10 (4 on the first thread, 3 on the other 2 threads)",
        ),
        (
            4,
            2,
            2,
            "connections: 2 (1 per thread; 2 threads, not 4: never more threads than connections)",
        ),
    ];
    for (threads, conns, ran, plan_line) in cases {
        let mut server = Served::start(&["--threads", "1"]);
        let addr = server.addr();
        let (t, c) = (threads.to_string(), conns.to_string());
        let file = TempPath::new("total-c", ".json");
        let mut p = Proc::wirebench(&[
            "echo",
            &addr,
            "-t",
            &t,
            "-c",
            &c,
            "-n",
            "2000",
            "--json",
            file.s(),
        ]);
        let code = p.finish(RUN_LIMIT);
        let r = RunOut::of(&p, code, &file);
        // The server's own count: exactly -c connections, every one closed.
        let line = server.stop_final_line();
        r.assert_clean(2000);
        assert!(
            line.contains(&format!("accepts {conns} closes {conns} ")),
            "-t {threads} -c {conns}: {line}"
        );
        assert_eq!(r.u("/totals/connections"), conns, "{}", r.explain());
        assert_eq!(r.u("/config/connections"), conns);
        assert_eq!(r.u("/config/threads"), ran);
        assert_eq!(
            r.json()["client_process"]["event_loop"]
                .as_object()
                .map(|o| o.values().filter_map(Value::as_u64).sum::<u64>()),
            Some(ran),
            "{}",
            r.json()["client_process"]
        );
        assert!(
            r.stdout.lines().any(|l| l == plan_line),
            "want {plan_line:?} in\n{}",
            r.stdout
        );
    }
}

#[test]
fn json_dash_writes_the_result_to_stdout_and_the_summary_to_stderr() {
    let mut p = Proc::wirebench(&["echo", "-t", "1", "-c", "2", "-n", "500", "--json", "-"]);
    assert_eq!(p.finish(RUN_LIMIT), 0, "{}", p.stderr());
    let out = p.stdout();
    let j: Value = serde_json::from_str(&out)
        .unwrap_or_else(|e| panic!("stdout is not one JSON value: {e}\n{out}"));
    assert_eq!(ju(&j, "/totals/ok"), 500);
    if let Err(e) = schema_validator("result.schema.json").validate(&j) {
        panic!("{e}");
    }
    let err = p.stderr();
    for want in [
        "wirebench echo ",
        "connections: 2",
        "result:       ok",
        "messages:     500 echoed",
    ] {
        assert!(err.contains(want), "want {want:?} on stderr:\n{err}");
    }
    assert!(
        !std::path::Path::new("-").exists(),
        "--json - wrote a file named '-'"
    );
}

#[test]
fn bare_wirebench_lists_every_registered_command() {
    let mut p = Proc::wirebench(&[]);
    assert_eq!(p.finish(Duration::from_secs(10)), 2);
    let err = p.stderr();
    let listed: Vec<&str> = err
        .lines()
        .filter_map(|l| l.strip_prefix("  "))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    let mut want = wirebench::registry::names();
    want.extend([
        "serve", "suite", "report", "compare", "merge", "k8s", "ioevent",
    ]);
    for name in want {
        assert!(listed.contains(&name), "{name} is not listed:\n{err}");
    }
    assert!(p.stdout().is_empty(), "{}", p.stdout());
}

/// Every command's path ("echo", "serve http", "k8s render"), from the command tree.
fn command_paths() -> Vec<Vec<String>> {
    fn walk(c: &clap::Command, at: Vec<String>, out: &mut Vec<Vec<String>>) {
        for s in c.get_subcommands() {
            let mut path = at.clone();
            path.push(s.get_name().to_string());
            walk(s, path.clone(), out);
            out.push(path);
        }
    }
    let mut out = vec![Vec::new()];
    walk(&wirebench::cli::command(), Vec::new(), &mut out);
    out
}

fn help_of(path: &[String], flag: &str) -> String {
    let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
    args.push(flag);
    let mut p = Proc::wirebench(&args);
    assert_eq!(
        p.finish(Duration::from_secs(10)),
        0,
        "{args:?}: {}",
        p.stderr()
    );
    p.stdout()
}

#[test]
fn short_help_fits_a_screen_and_long_help_ends_with_examples_and_exit_codes() {
    for path in command_paths() {
        let name = format!("wirebench {}", path.join(" "));
        let short = help_of(&path, "-h");
        assert!(
            short.lines().count() <= 24,
            "{name} -h is {} lines:\n{short}",
            short.lines().count()
        );
        let long = help_of(&path, "--help");
        let (before, codes) = long
            .rsplit_once("\nExit codes:\n")
            .unwrap_or_else(|| panic!("{name} --help has no exit codes:\n{long}"));
        let codes: Vec<&str> = codes.lines().map(str::trim_start).collect();
        assert!(codes[0].starts_with("0  "), "{name}: {codes:?}");
        // Exit 3 is a failed --threshold: only where thresholds are taken (a load, the
        // pod's side of one, merge), and after 2, the last code of every other command.
        let command = path.join(" ");
        let thresholds = command == "merge"
            || command == "k8s run"
            || (wirebench::registry::names().contains(&command.as_str()) && command != "connect");
        let (last, bad) = match codes.split_last() {
            Some((l, rest)) if thresholds => {
                assert!(l.starts_with("3  a "), "{name}: {codes:?}");
                (rest.last().unwrap(), rest)
            }
            Some((l, rest)) => (l, rest),
            None => panic!("{name}: no exit codes"),
        };
        assert!(last.starts_with("2  bad input"), "{name}: {codes:?}");
        assert!(bad.iter().all(|c| !c.starts_with('3')), "{name}: {codes:?}");
        let examples = before
            .rsplit_once("\nExamples:\n")
            .unwrap_or_else(|| {
                panic!("{name} --help has no examples before its exit codes:\n{long}")
            })
            .1;
        assert!(
            examples.lines().all(|l| l.starts_with("  ")) && !examples.trim().is_empty(),
            "{name}: {examples}"
        );
    }
}

/// A sample of each flag a load command may take, with what it needs beside it.
fn sample(flag: &str) -> Option<Vec<String>> {
    let in_an_hour = (wirebench::clock::unix_ms() + 3_600_000).to_string();
    let v: Vec<&str> = match flag {
        "--threads" => vec!["-t", "1"],
        "--connections" => vec!["-c", "2"],
        "--pipeline" => vec!["--pipeline", "2"],
        "--pipeline-mode" => vec!["--pipeline-mode", "burst"],
        "--duration" => vec!["-d", "1s"],
        "--requests" => vec!["-n", "10"],
        "--iterations" => vec!["--iterations", "2"],
        "--reconnects" => vec!["--reconnects", "2"],
        "--sleep" => vec!["--sleep", "1"],
        "--rate" => vec!["-R", "100"],
        "--warmup" => vec!["--warmup", "1s"],
        "--ramp" => vec!["--ramp", "1s"],
        "--ramp-measured" => vec!["--ramp", "1s", "--ramp-measured"],
        "--stages" => vec!["--stages", "1s:10"],
        "--timeout" => vec!["--timeout", "5s"],
        "--memory-budget" => vec!["--memory-budget", "512m"],
        "--threshold" => vec!["--threshold", "p99<1s"],
        "--search" => vec!["-R", "100", "--search", "p99<1s"],
        "--step-duration" => vec!["--step-duration", "2s"],
        "--progress" => vec!["--progress", "1s"],
        "--interval" => vec!["--interval", "500ms"],
        "--hlog" => vec!["--hlog", "/dev/null"],
        "--metrics-listen" => vec!["--metrics-listen", "127.0.0.1:0"],
        "--metrics-linger" => vec!["--metrics-listen", "127.0.0.1:0", "--metrics-linger", "1s"],
        "--metrics-allow-remote" => {
            vec!["--metrics-listen", "127.0.0.1:0", "--metrics-allow-remote"]
        }
        "--tui" => vec!["--tui"],
        "--no-tui" => vec!["--no-tui"],
        "--histogram" => vec!["--histogram"],
        "--json" => vec!["--json", "-"],
        "--quiet" => vec!["-q"],
        "--no-nodelay" => vec!["--no-nodelay"],
        "--coalesce" => vec!["--coalesce", "off"],
        "--source" => vec!["--source", "kernel"],
        "--tls" => vec!["--tls"],
        "--insecure" => vec!["--tls", "--insecure"],
        "--ca" => vec!["--tls", "--ca", "Cargo.toml"],
        "--cert" => vec!["--tls", "--cert", "Cargo.toml", "--key", "Cargo.toml"],
        "--key" => vec!["--tls", "--key", "Cargo.toml", "--cert", "Cargo.toml"],
        "--shard" => vec!["--shard", "0/1"],
        "--run-id" => vec!["--shard", "0/1", "--run-id", "r1"],
        "--start-at" => vec!["--start-at", &in_an_hour],
        "--shards" => vec!["--shards", "1"],
        "--size" => vec!["--size", "10"],
        "--server-threads" => vec!["--server-threads", "1"],
        // http
        "--method" => vec!["-m", "GET"],
        "--header" => vec!["-H", "X-Test: 1"],
        "--body-size" => vec!["--body-size", "10"],
        "--body" => vec!["--body", "Cargo.toml"],
        "--request-set" => vec!["--request-set", "tests/fixtures/request-set.txt"],
        "--header-size" => vec!["--header-size", "10"],
        "--no-keepalive" => vec!["--no-keepalive"],
        "--expect-status" => vec!["--expect-status", "200"],
        "--expect-echo" => vec!["--expect-echo", "--body-size", "10"],
        "--h2" => vec!["--h2", "http://127.0.0.1:9/"],
        "--http1.1" => vec!["--http1.1", "https://127.0.0.1:9/"],
        "--max-streams" => vec!["--h2", "http://127.0.0.1:9/", "--max-streams", "4"],
        // amqp
        "--mode" => vec!["--mode", "publish"],
        "--clients" => vec!["--mode", "churn", "--clients", "10"],
        "--concurrency" => vec!["--mode", "churn", "--concurrency", "2"],
        "--messages" => vec!["--mode", "churn", "--messages", "2"],
        "--exchange" => vec!["--exchange", "x"],
        "--routing-key" => vec!["--routing-key", "k"],
        "--declare-queue" => vec!["--declare-queue", "q"],
        "--confirm" => vec!["--confirm"],
        "--inflight" => vec!["--inflight", "4"],
        "--channels" => vec!["--channels", "2"],
        "--publish-wait" => vec!["--publish-wait", "10"],
        "--ack-multiple" => vec!["--ack-multiple"],
        // ws
        "--text" => vec!["--text"],
        "--fragment" => vec!["--fragment", "16"],
        "--subprotocol" => vec!["--subprotocol", "chat"],
        // redis
        "--command" => vec!["--command", "get"],
        "--keyspace" => vec!["--keyspace", "10"],
        "--distribution" => vec!["--distribution", "zipf"],
        "--resp3" => vec!["--resp3"],
        "--auth" => vec!["--auth", "secret"],
        "--db" => vec!["--db", "1"],
        // grpc
        "--call" => vec!["--call", "a.B/C"],
        "--proto" => vec![
            "--proto",
            "tests/peers/bench.proto",
            "--call",
            "bench.Echo/Say",
        ],
        "--data" => vec![
            "--proto",
            "tests/peers/bench.proto",
            "--call",
            "bench.Echo/Say",
            "--data",
            "{}",
        ],
        "--data-file" => vec!["--data-file", "Cargo.toml"],
        "--metadata" => vec!["-H", "x-test: 1"],
        "--deadline" => vec!["--deadline", "1s"],
        _ => return None,
    };
    Some(v.into_iter().map(String::from).collect())
}

/// gRPC's own samples where the shared one does not fit: its streams need no --h2
/// (http's do).
fn grpc_sample(name: &str, flag: &str) -> Option<Vec<String>> {
    let v: Vec<&str> = match (name, flag) {
        ("grpc", "--max-streams") => vec!["-m", "4"],
        _ => return None,
    };
    Some(v.into_iter().map(String::from).collect())
}

/// `--connect-to` needs a target, each protocol's own kind.
fn connect_to_sample(name: &str, flag: &str) -> Option<Vec<String>> {
    if flag != "--connect-to" {
        return None;
    }
    let target: &[&str] = match name {
        "http" => &["http://wirebench.test:9/"],
        "ws" => &["ws://wirebench.test:9/"],
        "amqp" => &["amqp://wirebench.test:9"],
        "grpc" => &["wirebench.test:9", "--call", "p.S/M"],
        _ => &["wirebench.test:9"],
    };
    let mut v: Vec<String> = target.iter().map(|t| t.to_string()).collect();
    v.extend(["--connect-to".into(), "127.0.0.1:9".into()]);
    Some(v)
}

/// `--unix-socket` (http, ws) needs a URL and a live socket: one bound for the
/// process's life.
fn unix_socket_sample(name: &str, flag: &str) -> Option<Vec<String>> {
    static SOCKET: std::sync::OnceLock<(std::os::unix::net::UnixListener, String)> =
        std::sync::OnceLock::new();
    if flag != "--unix-socket" {
        return None;
    }
    let (_, path) = SOCKET.get_or_init(|| {
        let path = std::env::temp_dir().join(format!("wb-conv-{}.sock", std::process::id()));
        let _ = std::fs::remove_file(&path);
        let l = std::os::unix::net::UnixListener::bind(&path).unwrap();
        (l, path.to_str().unwrap().to_string())
    });
    let url = if name == "ws" {
        "ws://localhost/"
    } else {
        "http://localhost/"
    };
    Some(vec![url.to_string(), flag.to_string(), path.clone()])
}

/// `-x/--proxy` (http, ws, grpc) needs a target to tunnel to (the proxy is not
/// reached while a config is validated).
fn proxy_sample(name: &str, flag: &str) -> Option<Vec<String>> {
    if flag != "--proxy" {
        return None;
    }
    let target: &[&str] = match name {
        "ws" => &["ws://127.0.0.1:9/"],
        "grpc" => &["127.0.0.1:9", "--call", "a.B/C"],
        _ => &["http://127.0.0.1:9/"],
    };
    let proxy = [flag, "http://127.0.0.1:3128"];
    Some(target.iter().chain(&proxy).map(|s| s.to_string()).collect())
}

/// The validated config of a parsed load command: Ok, or the sentence refusing it.
fn config_of(cli: Cli) -> (String, Result<(), String>) {
    use wirebench::proto::{amqp, echo, grpc, http, redis, ws};
    fn of<P: Protocol>(a: &wirebench::cli::LoadCommand<P::Args>) -> Result<(), String> {
        P::config(&a.proto, &a.load)
            .map(|_| ())
            .map_err(|e| e.to_string())
    }
    match cli.command {
        Command::Echo(a) => ("echo".into(), of::<echo::plugin::Echo>(&a)),
        Command::Http(a) => ("http".into(), of::<http::plugin::Http>(&a)),
        Command::Amqp(a) => ("amqp".into(), of::<amqp::plugin::Amqp>(&a)),
        Command::Ws(a) => ("ws".into(), of::<ws::plugin::Ws>(&a)),
        Command::Redis(a) => ("redis".into(), of::<redis::plugin::Redis>(&a)),
        Command::Grpc(a) => ("grpc".into(), of::<grpc::plugin::Grpc>(&a)),
        other => panic!("not a protocol's load command: {other:?}"),
    }
}

#[test]
fn a_protocols_help_lists_the_flags_its_config_takes_and_no_other() {
    let root = wirebench::cli::command();
    let mut checked = Vec::new();
    for name in wirebench::registry::names() {
        if name == "connect" {
            continue;
        }
        let cmd = root
            .find_subcommand(name)
            .expect("a registered load command");
        for arg in cmd.get_arguments() {
            let Some(long) = arg.get_long() else {
                continue;
            };
            let flag = format!("--{long}");
            if flag == "--help" || flag == "--version" {
                continue;
            }
            let extra = grpc_sample(name, &flag)
                .or_else(|| connect_to_sample(name, &flag))
                .or_else(|| unix_socket_sample(name, &flag))
                .or_else(|| proxy_sample(name, &flag))
                .or_else(|| sample(&flag))
                .unwrap_or_else(|| panic!("{name} {flag}: give the test a sample value for it"));
            let argv = ["wirebench", name]
                .into_iter()
                .map(String::from)
                .chain(extra.iter().cloned());
            let parsed = wirebench::cli::parse_from(argv);
            if arg.is_hide_set() {
                // Hidden: not the protocol's, refused in one sentence (exit 2).
                let e = parsed
                    .err()
                    .unwrap_or_else(|| panic!("{name} {flag} is hidden but parses"));
                let line = wirebench::cli::error_line(&e);
                assert!(
                    line.starts_with(&format!("{flag} does not apply to {name}")),
                    "{name} {flag}: {line}"
                );
                continue;
            }
            let cli = parsed
                .unwrap_or_else(|e| panic!("{name} {extra:?}: {}", wirebench::cli::error_line(&e)));
            let (got, outcome) = config_of(cli);
            assert_eq!(got, name);
            match outcome {
                Ok(()) => {}
                // Taken, but it needs the Job's environment, which a test cannot set
                // beside the others running in this process.
                Err(e) if flag == "--shards" && e.contains("JOB_COMPLETION_INDEX") => {}
                Err(e) => panic!("{name} --help lists {flag}, but {extra:?} is refused: {e}"),
            }
        }
        checked.push(name);
    }
    assert_eq!(checked.len(), wirebench::registry::names().len() - 1);
}

#[test]
fn the_batch_plan_is_echo_and_amqp_s_only() {
    for name in ["echo", "amqp"] {
        let help = help_of(&[name.to_string()], "--help");
        assert!(help.contains("--iterations <N>"), "{name}:\n{help}");
    }
    for name in ["http", "ws", "redis"] {
        let help = help_of(&[name.to_string()], "--help");
        for flag in ["--iterations", "--reconnects", "--sleep"] {
            assert!(!help.contains(flag), "{name} --help lists {flag}:\n{help}");
        }
    }
}
