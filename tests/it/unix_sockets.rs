//! Unix domain sockets: `serve echo --listen unix:PATH` loaded by `wirebench echo
//! unix:PATH` with exact counts on both sides, a real redis-server on `--unixsocket`
//! counting every command `wirebench redis unix:PATH` sent, and the bad input around
//! them (a path that is no socket, `--source`, a listen path holding another file).
//! Run under WIREBENCH_LOAD_LOOP=epoll too: the children inherit it, and the result's
//! `client_process.event_loop` shows which loop ran.

use crate::common::*;
use std::path::PathBuf;
use std::time::Duration;

/// A fresh directory for this test's sockets, removed on drop.
struct SocketDir(PathBuf);

impl SocketDir {
    fn new(tag: &str) -> SocketDir {
        let d = std::env::temp_dir().join(format!("wb-unix-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        SocketDir(d)
    }

    fn path(&self, name: &str) -> String {
        self.0.join(name).to_str().unwrap().to_string()
    }
}

impl Drop for SocketDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `wirebench serve echo --listen unix:PATH`, started once it says it listens.
fn serve_echo_on(path: &str, threads: &str) -> Proc {
    serve_on("echo", path, threads)
}

/// `wirebench serve PROTOCOL --listen unix:PATH`, started once it says it listens.
fn serve_on(protocol: &str, path: &str, threads: &str) -> Proc {
    let listen = format!("unix:{path}");
    let mut p = Proc::wirebench(&["serve", protocol, "--listen", &listen, "--threads", threads]);
    let ready = format!("wirebench serve {protocol}: listening on");
    let banner = p
        .wait_line(&ready, Duration::from_secs(20))
        .unwrap_or_else(|| panic!("serve {protocol} did not start:\n{}", p.stderr()));
    assert!(
        banner.contains(&format!("listening on unix:{path} ")),
        "{banner}"
    );
    p
}

/// A number in the server's final counters line: `final: accepts 8 closes 8 ...`.
fn final_count(line: &str, name: &str) -> u64 {
    let words: Vec<&str> = line.split_whitespace().collect();
    let at = words.iter().position(|w| *w == name).unwrap();
    words[at + 1].replace(',', "").parse().unwrap()
}

/// The expected loop of a plain closed-loop load: io_uring unless asked for epoll (or
/// refused by the kernel, which the count of threads on each shows).
fn loop_threads(r: &RunOut) -> u64 {
    let l = &r.json()["client_process"]["event_loop"];
    l.as_object()
        .map(|o| o.values().filter_map(|v| v.as_u64()).sum())
        .unwrap_or(0)
}

#[test]
fn serve_echo_on_a_unix_socket_counts_exactly_what_the_load_sent() {
    let dir = SocketDir::new("echo");
    let sock = dir.path("echo.sock");
    let mut server = serve_echo_on(&sock, "2");
    let target = format!("unix:{sock}");
    let (mut sent, mut received, mut conns) = (0, 0, 0);
    for (n, c, size) in [("3000", "4", "64"), ("1000", "3", "1..3000")] {
        let r = run_json(&["echo", &target, "-t", "2", "-n", n, "-c", c, "--size", size]);
        r.assert_clean(n.parse().unwrap());
        assert_eq!(r.json()["target"], target.as_str(), "{}", r.explain());
        assert_eq!(r.u("/totals/connections"), c.parse::<u64>().unwrap());
        assert_eq!(r.u("/totals/bytes_sent"), r.u("/totals/bytes_received"));
        assert_eq!(loop_threads(&r), 2, "{}", r.explain());
        sent += r.u("/totals/bytes_sent");
        received += r.u("/totals/bytes_received");
        conns += r.u("/totals/connections");
    }
    server.terminate();
    assert_eq!(
        server.finish(Duration::from_secs(30)),
        0,
        "{}",
        server.stderr()
    );
    let out = server.stdout();
    let line = out
        .lines()
        .find(|l| l.contains("; final: accepts "))
        .unwrap();
    assert_eq!(final_count(line, "accepts"), conns, "{line}");
    assert_eq!(final_count(line, "closes"), conns, "{line}");
    assert_eq!(final_count(line, "in"), sent, "{line}");
    assert_eq!(final_count(line, "out"), received, "{line}");
    // The server's socket file goes with it.
    assert!(!std::path::Path::new(&sock).exists());
}

#[test]
fn a_stale_socket_file_is_replaced_and_any_other_file_left_alone() {
    let dir = SocketDir::new("stale");
    let sock = dir.path("stale.sock");
    // A socket file nobody listens on any more: what a killed server leaves.
    drop(std::os::unix::net::UnixListener::bind(&sock).unwrap());
    assert!(std::path::Path::new(&sock).exists());
    let mut server = serve_echo_on(&sock, "1");
    let r = run_json(&["echo", &format!("unix:{sock}"), "-n", "100", "-c", "1"]);
    r.assert_clean(100);
    // A second server on the same live socket is refused, the first keeps serving.
    let mut second = Proc::wirebench(&["serve", "echo", "--listen", &format!("unix:{sock}")]);
    assert_eq!(second.finish(Duration::from_secs(20)), 2);
    let line = assert_one_line_error(&second.stderr(), "a live socket");
    assert!(line.ends_with("a server is listening there"), "{line}");
    run_json(&["echo", &format!("unix:{sock}"), "-n", "100", "-c", "1"]).assert_clean(100);
    server.terminate();
    server.finish(Duration::from_secs(30));

    let file = dir.path("notes.txt");
    std::fs::write(&file, "keep").unwrap();
    let mut p = Proc::wirebench(&["serve", "echo", "--listen", &format!("unix:{file}")]);
    assert_eq!(p.finish(Duration::from_secs(20)), 2);
    let line = assert_one_line_error(&p.stderr(), "a regular file");
    assert_eq!(
        line,
        format!("wirebench: cannot listen on unix:{file}: the path exists and is a regular file, not a socket (it is left alone)")
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "keep");
}

#[test]
fn bad_unix_targets_and_flags_are_one_sentence_and_exit_2() {
    let dir = SocketDir::new("bad");
    let file = dir.path("file");
    std::fs::write(&file, "x").unwrap();
    let sock = dir.path("live.sock");
    let _live = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    let missing = dir.path("none.sock");
    for (args, want) in [
        (
            vec!["echo".to_string(), format!("unix:{missing}")],
            format!("wirebench: TARGET: cannot use unix socket {missing}: no such file or directory"),
        ),
        (
            vec!["redis".to_string(), format!("unix:{file}")],
            format!("wirebench: TARGET: {file} is not a unix socket (it is a regular file)"),
        ),
        (
            vec!["echo".to_string(), "unix:".to_string()],
            "wirebench: TARGET: 'unix:' needs a socket's path (for example unix:/run/redis.sock)"
                .to_string(),
        ),
        (
            vec!["echo".into(), format!("unix:{sock}"), "--source".into(), "127.0.0.2".into()],
            "wirebench: --source does not apply to a unix: target (a unix socket connection has no source address)".to_string(),
        ),
        (
            vec!["serve".into(), "echo".into(), "--listen".into(), format!("unix:{}", dir.path("p.sock")), "--processes".into(), "2".into()],
            "wirebench: --processes shares a TCP port between processes (SO_REUSEPORT), which a unix socket cannot do: use --threads to serve unix: with several threads".to_string(),
        ),
    ] {
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let mut p = Proc::wirebench(&argv);
        assert_eq!(p.finish(Duration::from_secs(20)), 2, "{argv:?}: {}", p.stderr());
        assert_eq!(assert_one_line_error(&p.stderr(), &argv.join(" ")), want);
    }
}

/// redis-server listening on a unix socket only (`--port 0 --unixsocket`).
struct RedisOnUnix {
    _proc: Proc,
    sock: String,
}

impl RedisOnUnix {
    fn start(sock: &str) -> Option<RedisOnUnix> {
        if !have("redis-server") || !have("redis-cli") {
            return None;
        }
        let args = [
            "--port",
            "0",
            "--unixsocket",
            sock,
            "--save",
            "",
            "--appendonly",
            "no",
        ];
        let s = RedisOnUnix {
            _proc: Proc::spawn("redis-server", &args, false),
            sock: sock.to_string(),
        };
        let up = wait_until(Duration::from_secs(10), || {
            s.cli(&["PING"]).trim() == "PONG"
        });
        assert!(up, "redis-server did not start on {sock}");
        Some(s)
    }

    fn cli(&self, args: &[&str]) -> String {
        let mut all = vec!["-s", &self.sock];
        all.extend_from_slice(args);
        let mut c = Proc::spawn("redis-cli", &all, false);
        c.finish(Duration::from_secs(10));
        c.stdout()
    }

    /// `calls` of one command in INFO commandstats (0 when it never ran).
    fn calls(&self, command: &str) -> u64 {
        let info = self.cli(&["INFO", "commandstats"]);
        let prefix = format!("cmdstat_{command}:calls=");
        info.lines()
            .find_map(|l| l.strip_prefix(prefix.as_str()))
            .and_then(|v| v.split(',').next())
            .map_or(0, |v| v.trim().parse().unwrap())
    }
}

#[test]
fn redis_server_on_a_unix_socket_counts_every_command_sent() {
    let dir = SocketDir::new("redis");
    let sock = dir.path("redis.sock");
    let Some(redis) = RedisOnUnix::start(&sock) else {
        return;
    };
    let target = format!("unix:{sock}");
    let (sets, gets) = (redis.calls("set"), redis.calls("get"));
    let r = run_json(&[
        "redis",
        &target,
        "-n",
        "3000",
        "-c",
        "4",
        "--command",
        "set",
    ]);
    r.assert_clean(3000);
    let r2 = run_json(&[
        "redis",
        &target,
        "-n",
        "2000",
        "-c",
        "2",
        "--command",
        "get",
        "--pipeline",
        "16",
    ]);
    r2.assert_clean(2000);
    assert_eq!(redis.calls("set") - sets, 3000, "{}", r.explain());
    assert_eq!(redis.calls("get") - gets, 2000, "{}", r2.explain());
    assert_eq!(r.u("/totals/connections"), 4);
    assert_eq!(r2.json()["target"], target.as_str());
}

/// nginx on a unix socket (beside its TCP port), loaded by `wirebench http URL
/// --unix-socket PATH`: the URL's path and Host reach nginx (another path is 404,
/// another Host 421), and its access log holds one line per request sent, on both
/// HTTP/1.1 and HTTP/2 (h2c).
#[test]
fn nginx_on_a_unix_socket_logs_every_request_with_the_urls_path_and_host() {
    if !have("nginx") {
        return;
    }
    let dir = SocketDir::new("nginx");
    let sock = dir.path("nginx.sock");
    // nginx 1.22's `http2` listener speaks only HTTP/2 over plain sockets: one of each.
    let sock2 = dir.path("nginx-h2.sock");
    // Made readable by the worker, whoever it runs as.
    std::fs::set_permissions(&dir.0, std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    let nginx = crate::http_support::Nginx::start_with(
        &format!(";\n    listen unix:{sock};\n    listen unix:{sock2} http2"),
        "location = /via-unix { if ($host != \"app.example\") { return 421; } return 200 \"u\"; }",
    );
    let url = "http://app.example/via-unix";
    let r = run_json(&["http", url, "--unix-socket", &sock, "-n", "2000", "-c", "4"]);
    r.assert_clean(2000);
    assert_eq!(r.u("/totals/connections"), 4, "{}", r.explain());
    let h2 = run_json(&[
        "http",
        url,
        "--unix-socket",
        &sock2,
        "--h2",
        "--max-streams",
        "4",
        "-n",
        "1000",
        "-c",
        "2",
    ]);
    h2.assert_clean(1000);
    let lines = nginx.logged(3000);
    assert_eq!(lines.len(), 3000, "{:?}", &lines[..lines.len().min(5)]);
    assert_eq!(
        lines
            .iter()
            .filter(|l| l.starts_with("200 ") && l.ends_with("HTTP/1.1"))
            .count(),
        2000
    );
    assert_eq!(
        lines
            .iter()
            .filter(|l| l.starts_with("200 ") && l.ends_with("HTTP/2.0"))
            .count(),
        1000
    );
    // The same URL over the wrong Host is refused by nginx: the Host sent is the URL's.
    let wrong = run_json(&[
        "http",
        "http://other.example/via-unix",
        "--unix-socket",
        &sock,
        "-n",
        "10",
        "-c",
        "1",
    ]);
    assert_eq!(wrong.u("/totals/ok"), 0, "{}", wrong.explain());
    let mut p = Proc::wirebench(&["http", "--unix-socket", &sock, "-n", "1"]);
    assert_eq!(p.finish(Duration::from_secs(20)), 2);
    let line = assert_one_line_error(&p.stderr(), "--unix-socket without a URL");
    assert!(
        line.contains("--unix-socket sends a URL's requests to a unix socket"),
        "{line}"
    );
}

/// `serve ws` and `serve grpc` on unix sockets, loaded by `wirebench ws URL
/// --unix-socket PATH` and `wirebench grpc unix:PATH`: every message and call answered,
/// and each server accepted exactly the connections the load opened.
#[test]
fn ws_and_grpc_over_unix_sockets_count_exactly() {
    let dir = SocketDir::new("wsgrpc");
    for (protocol, n, conns) in [("ws", 2000u64, 3u64), ("grpc", 1000, 2)] {
        let sock = dir.path(&format!("{protocol}.sock"));
        let mut server = serve_on(protocol, &sock, "1");
        let (total, c) = (n.to_string(), conns.to_string());
        let target = format!("unix:{sock}");
        let args: Vec<&str> = match protocol {
            "ws" => vec!["ws", "ws://localhost/", "--unix-socket", &sock],
            _ => vec!["grpc", &target, "--call", "wirebench.Echo/Call"],
        };
        let mut all = args.clone();
        all.extend(["-n", &total, "-c", &c]);
        let r = run_json(&all);
        r.assert_clean(n);
        assert_eq!(r.u("/totals/connections"), conns, "{}", r.explain());
        server.terminate();
        assert_eq!(
            server.finish(Duration::from_secs(30)),
            0,
            "{}",
            server.stderr()
        );
        let out = server.stdout();
        let line = out
            .lines()
            .find(|l| l.contains("; final: accepts "))
            .unwrap();
        assert_eq!(final_count(line, "accepts"), conns, "{line}");
    }
}
