//! Redis: `wirebench redis` against a real redis-server (its own `INFO stats` count of
//! commands equals what wirebench sent), `serve redis` under redis-benchmark and
//! redis-cli (exact output and the server's own count), the built-in server end to
//! end, and bad peers: one that answers HTTP, one that claims a 4 GB bulk string.

use crate::common::*;
use crate::http_support::stat;
use serde_json::Value;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// A redis-server started for one test on a free loopback port, killed on drop.
struct RedisServer {
    _proc: Proc,
    port: u16,
    password: Option<&'static str>,
}

impl RedisServer {
    fn start(password: Option<&'static str>) -> Option<RedisServer> {
        if !have("redis-server") || !have("redis-cli") {
            return None;
        }
        for _ in 0..5 {
            let port = free_port();
            let p = port.to_string();
            let mut args = vec![
                "--port",
                &p,
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ];
            if let Some(pass) = password {
                args.extend(["--requirepass", pass]);
            }
            let proc = Proc::spawn("redis-server", &args, false);
            let s = RedisServer {
                _proc: proc,
                port,
                password,
            };
            if wait_until(Duration::from_secs(10), || {
                s.cli(&["PING"]).trim() == "PONG"
            }) {
                return Some(s);
            }
        }
        panic!("redis-server did not start");
    }

    fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// `redis-cli -p PORT ARGS...`: its stdout.
    fn cli(&self, args: &[&str]) -> String {
        let p = self.port.to_string();
        let mut all = vec!["-p", &p];
        if let Some(pass) = self.password {
            all.extend(["--no-auth-warning", "-a", pass]);
        }
        all.extend_from_slice(args);
        let mut c = Proc::spawn("redis-cli", &all, false);
        c.finish(Duration::from_secs(10));
        c.stdout()
    }

    /// The server's own count of commands processed.
    fn commands(&self) -> u64 {
        let info = self.cli(&["INFO", "stats"]);
        info.lines()
            .find_map(|l| l.strip_prefix("total_commands_processed:"))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or_else(|| panic!("no total_commands_processed in:\n{info}"))
    }

    /// Commands a `commands()` call itself adds (its connection's INFO and AUTH).
    fn own_commands(&self) -> u64 {
        let a = self.commands();
        let b = self.commands();
        b - a
    }
}

/// Commands a run made the server process: its requests and each connection's
/// opening exchange.
fn commands_sent(r: &RunOut) -> u64 {
    let j = r.json();
    r.u("/totals/sent")
        + ju(j, "/totals/connections") * ju(j, "/redis/open_commands_per_connection")
}

#[test]
fn redis_server_counts_every_command_wirebench_sent() {
    let Some(s) = RedisServer::start(None) else {
        return;
    };
    let own = s.own_commands();
    for (args, n, conns) in [
        (&["--command", "set", "--size", "1..200"][..], 3000u64, 4u64),
        (&["--command", "mixed:3:1", "--keyspace", "50"][..], 2000, 4),
        // redis-benchmark's -P 16: sixteen in flight on each connection.
        (
            &["--command", "get", "--pipeline", "16", "--keyspace", "50"][..],
            8000,
            5,
        ),
        (&["--command", "ping", "--resp3", "--db", "3"][..], 1000, 2),
        (
            &[
                "--command",
                "INCR counter:__rand__",
                "--keyspace",
                "7",
                "--distribution",
                "zipf",
            ][..],
            1000,
            2,
        ),
    ] {
        let before = s.commands();
        let (total, c, addr) = (n.to_string(), conns.to_string(), s.addr());
        let mut all = vec!["redis", &addr, "-t", "1", "-n", &total, "-c", &c];
        all.extend_from_slice(args);
        let r = run_json(&all);
        r.assert_clean(n);
        let after = s.commands();
        assert_eq!(r.u("/totals/connections"), conns, "{}", r.explain());
        assert_eq!(
            after - before - own,
            commands_sent(&r),
            "{args:?}: server count vs sent\n{}",
            r.explain()
        );
        // Keys the runs before set: GETs hit, and every value they returned was checked.
        let gets = r.u("/redis/hits") + r.u("/redis/misses");
        match args[1] {
            "get" => assert_eq!(gets, n),
            // Each connection's requests cycle SET, GET, GET, GET from its first.
            "mixed:3:1" => assert!((n * 3 / 4 - conns..=n * 3 / 4 + conns).contains(&gets)),
            _ => assert_eq!(gets, 0),
        }
        if gets > 0 {
            assert!(r.u("/redis/hits") > 0, "{}", r.explain());
        }
    }
    // Every key the SET run wrote holds the value derived from its key.
    let v = s.cli(&["GET", "key:000000000007"]);
    let v = v.trim_end_matches('\n');
    assert!(
        !v.is_empty() && ("000000000007".starts_with(v) || v.starts_with("000000000007")),
        "{v}"
    );
}

/// `--pipeline 16` is redis-benchmark's `-P 16` by default (burst: a window in one
/// write, the next when all of it is answered); `--pipeline-mode sliding` keeps the
/// window full instead, and an open loop slides. redis-server counts every command
/// either way, with the last window partial.
#[test]
fn pipeline_16_bursts_by_default_and_redis_server_counts_every_command() {
    let Some(s) = RedisServer::start(None) else {
        return;
    };
    let own = s.own_commands();
    for (extra, n, mode) in [
        (&[][..], 8003u64, "burst"),
        (&["--pipeline-mode", "sliding"][..], 8003, "sliding"),
        (&["-R", "4000"][..], 403, "sliding"),
    ] {
        let before = s.commands();
        let (total, addr) = (n.to_string(), s.addr());
        let mut all = vec![
            "redis",
            &addr,
            "-t",
            "1",
            "-c",
            "5",
            "-n",
            &total,
            "--pipeline",
            "16",
            "--command",
            "set",
        ];
        all.extend_from_slice(extra);
        let r = run_json(&all);
        r.assert_clean(n);
        assert_eq!(r.u("/totals/sent"), n, "{}", r.explain());
        assert_eq!(r.json()["config"]["pipeline_mode"], mode, "{extra:?}");
        let after = s.commands();
        assert_eq!(
            after - before - own,
            commands_sent(&r),
            "{extra:?}: server count vs sent\n{}",
            r.explain()
        );
    }
}

#[test]
fn auth_select_and_error_replies_against_redis_server() {
    let Some(s) = RedisServer::start(Some("s3cret")) else {
        return;
    };
    let own = s.own_commands();
    let before = s.commands();
    let r = run_json(&[
        "redis",
        &s.addr(),
        "-t",
        "1",
        "-c",
        "3",
        "-n",
        "900",
        "--auth",
        "default:s3cret",
        "--db",
        "5",
        "--command",
        "set",
    ]);
    r.assert_clean(900);
    assert_eq!(r.u("/redis/open_commands_per_connection"), 2);
    // The engine's own count of the exchange's round trips: AUTH and SELECT each.
    let conns = r.u("/totals/connections");
    assert_eq!(r.u("/totals/exchange_sent"), 2 * conns);
    assert_eq!(r.u("/totals/exchange_answered"), 2 * conns);
    assert_eq!(s.commands() - before - own, commands_sent(&r));
    assert!(s.cli(&["-n", "5", "DBSIZE"]).trim().parse::<u64>().unwrap() > 0);
    assert_eq!(s.cli(&["-n", "0", "DBSIZE"]).trim(), "0");

    // A wrong password: every connection is refused at its opening exchange.
    let r = run_json(&[
        "redis",
        &s.addr(),
        "-t",
        "1",
        "-c",
        "1",
        "-n",
        "10",
        "--auth",
        "wrong",
        "--timeout",
        "1s",
    ]);
    assert_ne!(r.code, 0, "{}", r.explain());
    assert_eq!(r.u("/totals/ok"), 0, "{}", r.explain());
    // Each connection's AUTH was answered, with a refusal.
    let conns = r.u("/totals/connections");
    assert!(conns >= 1, "{}", r.explain());
    assert_eq!(r.u("/totals/exchange_sent"), conns);
    assert_eq!(r.u("/totals/exchange_answered"), conns);

    // Each refusal's words, once per failed attempt.
    let texts = &r.json()["error_texts"];
    assert_eq!(texts["kept"][0]["kind"], "connect_failed", "{texts}");
    assert!(
        texts["kept"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("handshake failed (error_reply): AUTH was refused: WRONGPASS "),
        "{texts}"
    );
    assert_eq!(ju(texts, "/kept/0/count"), r.u("/totals/connect_errors"));

    // WRONGTYPE and ERR replies are answers in step: counted as `error_reply`, by first word.
    s.cli(&["LPUSH", "list:000000000000", "x"]);
    let r = run_json(&[
        "redis",
        &s.addr(),
        "--auth",
        "s3cret",
        "-t",
        "1",
        "-c",
        "1",
        "-n",
        "100",
        "--command",
        "GET list:__rand__",
        "--keyspace",
        "1",
    ]);
    assert_eq!(r.code, 1, "{}", r.explain());
    assert_eq!(r.u("/errors/error_reply"), 100, "{}", r.explain());
    assert_eq!(r.u("/redis/error_replies/wrongtype"), 100);
    let r = run_json(&[
        "redis",
        &s.addr(),
        "--auth",
        "s3cret",
        "-t",
        "1",
        "-c",
        "1",
        "-n",
        "50",
        "--command",
        "NOSUCHCMD a",
    ]);
    assert_eq!(r.u("/errors/error_reply"), 50, "{}", r.explain());
    assert_eq!(r.u("/redis/error_replies/err"), 50);
}

/// `--command 'SETT k v'` (a typo): every request gets redis-server's error reply,
/// which is a reply (timed) of kind `error_reply`, and its words are shown.
#[test]
fn an_unknown_command_shows_the_servers_error_text_and_a_latency() {
    let Some(s) = RedisServer::start(None) else {
        return;
    };
    let file = TempPath::new("result", ".json");
    let mut p = Proc::wirebench(&[
        "redis",
        &s.addr(),
        "-t",
        "1",
        "-c",
        "2",
        "-n",
        "200",
        "--command",
        "SETT k v",
        "--json",
        file.s(),
    ]);
    let code = p.finish(Duration::from_secs(60));
    let r = RunOut::of(&p, code, &file);
    assert_eq!(r.code, 1, "{}", r.explain());
    assert_eq!(r.json()["errors"], serde_json::json!({"error_reply": 200}));
    assert_eq!(r.u("/latency_us/count"), 200, "every request got a reply");
    let said = "ERR unknown command 'SETT', with args beginning with: 'k' 'v'";
    assert_eq!(
        r.json()["error_texts"],
        serde_json::json!({"kept": [{"kind": "error_reply", "text": said, "count": 200}], "other": 0})
    );
    assert!(
        r.stdout
            .contains(&format!("\nerror texts:  200 error_reply: {said}\n")),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("\nerrors:       error_reply 200\n"),
        "{}",
        r.stdout
    );
    assert!(!r.stdout.contains("n/a (no replies)"), "{}", r.stdout);
}

fn run(program: &str, args: &[&str]) -> (i32, String, String) {
    let mut p = Proc::spawn(program, args, false);
    let code = p.finish(RUN_LIMIT);
    (code, p.stdout(), p.stderr())
}

#[test]
fn redis_benchmark_runs_against_serve_redis_and_the_server_counts_exactly() {
    if !have("redis-benchmark") {
        return;
    }
    let mut s = Served::start_as("redis", &["--threads", "1"]);
    let port = s.port.to_string();
    let (code, out, err) = run(
        "redis-benchmark",
        &[
            "-p", &port, "-t", "set,get", "-n", "4000", "-c", "10", "-P", "4", "-q",
        ],
    );
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        out.contains("SET: ") && out.contains("GET: "),
        "{out}\n{err}"
    );
    assert!(!err.contains("rror"), "{err}");
    let line = s.stop_final_line();
    // 4000 SETs, 4000 GETs, and the CONFIG GET save / appendonly it asks first.
    assert_eq!(stat(&line, "requests"), 8002, "{line}");
}

#[test]
fn redis_cli_round_trip_with_exact_output() {
    if !have("redis-cli") {
        return;
    }
    let mut s = Served::start_as("redis", &["--threads", "1"]);
    let port = s.port.to_string();
    let cli = |args: &[&str]| {
        let mut all = vec!["-p", port.as_str()];
        all.extend_from_slice(args);
        let (code, out, err) = run("redis-cli", &all);
        assert_eq!(code, 0, "{args:?}: {out}\n{err}");
        out
    };
    assert_eq!(cli(&["PING"]), "PONG\n");
    assert_eq!(cli(&["SET", "greeting", "hello world"]), "OK\n");
    assert_eq!(cli(&["GET", "greeting"]), "hello world\n");
    assert_eq!(cli(&["INCR", "n"]), "1\n");
    assert_eq!(cli(&["INCR", "n"]), "2\n");
    assert_eq!(cli(&["MSET", "a", "1", "b", "2"]), "OK\n");
    assert_eq!(
        cli(&["MGET", "a", "missing", "b", "greeting"]),
        "1\n\n2\nhello world\n"
    );
    assert_eq!(cli(&["EXISTS", "a", "b", "c"]), "2\n");
    assert_eq!(cli(&["DEL", "a", "c"]), "1\n");
    // redis-cli prints an error reply and an empty line.
    assert_eq!(
        cli(&["INCR", "greeting"]),
        "ERR value is not an integer or out of range\n\n"
    );
    assert_eq!(
        cli(&["FROB", "x"]),
        "ERR unknown command 'FROB', with args beginning with: 'x' \n\n"
    );
    assert_eq!(cli(&["HELLO", "3"]).lines().next(), Some("server redis"));
    let line = s.stop_final_line();
    assert_eq!(stat(&line, "requests"), 12, "{line}");
}

#[test]
fn built_in_server_end_to_end_with_a_valid_result() {
    let v = schema_validator("result.schema.json");
    for args in [
        &["--command", "mixed:1:1", "--keyspace", "100"][..],
        &["--command", "get", "--resp3", "--pipeline", "8"][..],
        &["--command", "ping", "--tls", "--insecure"][..],
        &[
            "--command",
            "MSET a:__rand__ __data__ b __data__",
            "--size",
            "10..300",
        ][..],
    ] {
        let mut all = vec!["redis", "-t", "1", "-c", "3", "-n", "2000"];
        all.extend_from_slice(args);
        let r = run_json(&all);
        r.assert_clean(2000);
        let j = r.json();
        let errs: Vec<String> = v
            .iter_errors(j)
            .map(|e| format!("{e} at {}", e.instance_path))
            .collect();
        assert!(errs.is_empty(), "{args:?}: {errs:?}");
        assert_eq!(j["kind"], "redis");
        // The built-in server answered every command (the opening HELLO included).
        assert_eq!(
            ju(j, "/server/requests"),
            commands_sent(&r),
            "{args:?}: {}",
            r.explain()
        );
    }
}

/// Connections each bad peer accepted (one counter per test: they run in parallel).
static HTTP_ACCEPTED: AtomicUsize = AtomicUsize::new(0);
static HUGE_ACCEPTED: AtomicUsize = AtomicUsize::new(0);

/// Answers PINGs with PONG; one connection (the first) misbehaves as `bad` says.
fn ping_peer(mut s: TcpStream, accepted: &AtomicUsize, bad: &[u8], flood: bool) {
    let me = accepted.fetch_add(1, Ordering::SeqCst);
    let mut buf = vec![0u8; 64 * 1024];
    let mut have = 0usize;
    loop {
        let n = match s.read(&mut buf[have..]) {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        have += n;
        if me == 0 {
            let _ = s.write_all(bad);
            if flood {
                // A body that never ends: the client must not wait for 4 GB of it.
                let chunk = vec![b'x'; 64 * 1024];
                for _ in 0..256 {
                    if s.write_all(&chunk).is_err() {
                        return;
                    }
                }
            }
            return;
        }
        let whole = have / 14;
        let _ = s.write_all(&b"+PONG\r\n".repeat(whole));
        buf.copy_within(whole * 14..have, 0);
        have -= whole * 14;
    }
}

fn http_peer(s: TcpStream) {
    ping_peer(
        s,
        &HTTP_ACCEPTED,
        b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
        false,
    )
}

fn huge_bulk_peer(s: TcpStream) {
    ping_peer(s, &HUGE_ACCEPTED, b"$4294967296\r\n", true)
}

fn bad_peer_run(serve: fn(TcpStream)) -> (RunOut, u64) {
    let peer = Foreign::start(serve);
    let addr = peer.addr_string();
    run_json_watching_memory(&[
        "redis",
        &addr,
        "--command",
        "ping",
        "-t",
        "1",
        "-c",
        "3",
        "-n",
        "3000",
        "--timeout",
        "5s",
    ])
}

fn only_error(r: &RunOut, kind: &str) {
    let errors: &Value = &r.json()["errors"];
    let kinds: Vec<&String> = errors.as_object().expect("errors").keys().collect();
    assert_eq!(kinds, [kind], "{}", r.explain());
    // One connection misbehaved with one request in flight; the other connections
    // and the reconnected one answered the rest.
    assert_eq!(r.u(&format!("/errors/{kind}")), 1, "{}", r.explain());
    assert_eq!(r.u("/totals/ok"), 2999, "{}", r.explain());
    assert_eq!(r.code, 1, "{}", r.explain());
}

#[test]
fn a_peer_that_answers_http_is_one_protocol_error() {
    let (r, _) = bad_peer_run(http_peer);
    only_error(&r, "protocol");
}

#[test]
fn a_4gb_bulk_length_is_too_large_with_bounded_memory() {
    let (r, peak) = bad_peer_run(huge_bulk_peer);
    only_error(&r, "too_large");
    assert!(peak < 64 << 20, "peak RSS {peak} bytes");
}

/// Sends `req` on a fresh connection; returns everything the server said before closing.
fn raw_exchange(addr: &str, req: &[u8]) -> Vec<u8> {
    let mut c = TcpStream::connect(addr).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    c.write_all(req).unwrap();
    let mut got = Vec::new();
    let _ = c.read_to_end(&mut got);
    got
}

#[test]
fn serve_redis_closes_a_peer_past_its_caps_and_serves_the_others() {
    let mut s = Served::start_as("redis", &["--threads", "1"]);
    let addr = s.addr();
    // A well-behaved connection held open through the bad ones.
    let mut good = TcpStream::connect(&addr).unwrap();
    good.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut ask = |req: &[u8], want: &[u8]| {
        good.write_all(req).unwrap();
        let mut got = vec![0u8; want.len()];
        good.read_exact(&mut got).unwrap();
        assert_eq!(String::from_utf8_lossy(&got), String::from_utf8_lossy(want));
    };
    ask(b"SET k v\r\n", b"+OK\r\n");
    assert_eq!(
        raw_exchange(&addr, b"*1\r\n$4294967296\r\n"),
        b"-ERR Protocol error: request past the server's caps\r\n"
    );
    assert_eq!(
        raw_exchange(&addr, b"*2\r\n$3\r\nGET\r\n:1\r\n"),
        b"-ERR Protocol error: not a RESP request\r\n"
    );
    let mut many = b"*4294967295\r\n".to_vec();
    many.extend_from_slice(&[b'$'; 16]);
    assert_eq!(
        raw_exchange(&addr, &many),
        b"-ERR Protocol error: request past the server's caps\r\n"
    );
    assert_eq!(
        raw_exchange(&addr, b"PING\r\nQUIT\r\n"),
        b"+PONG\r\n+OK\r\n"
    );
    ask(b"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n", b"$1\r\nv\r\n");
    drop(good);
    let line = s.stop_final_line();
    assert_eq!(stat(&line, "too large"), 2, "{line}");
    assert_eq!(stat(&line, "requests"), 4, "{line}");
}
