//! `-x/--proxy`: http (HTTP/1.1 and h2c), ws and grpc loads through a real HTTP CONNECT
//! proxy, tinyproxy (scripts/test.sh installs it), started here with a generated
//! config: loopback only, Basic credentials, CONNECT allowed only to 127.0.0.1 and to
//! the target's port. Every request the load counts is counted by the target server
//! too (exactly), each connection's CONNECT is one opening exchange, and the proxy's
//! refusals (a port it does not allow, wrong credentials) are failed connections with
//! its status in words.

use crate::common::*;
use std::time::Duration;

/// tinyproxy in the foreground on a free loopback port, allowing CONNECT to
/// 127.0.0.1:`allowed` only, for the user `u` with the password `p`.
struct Tinyproxy {
    proc: Proc,
    port: u16,
    _dir: TempPath,
}

impl Tinyproxy {
    fn start(allowed: u16) -> Option<Tinyproxy> {
        if !have("tinyproxy") {
            return None;
        }
        let dir = TempPath::new("tinyproxy", "d");
        std::fs::create_dir_all(dir.path()).unwrap();
        let filter = dir.path().join("filter");
        std::fs::write(&filter, "^127\\.0\\.0\\.1$\n").unwrap();
        for _ in 0..5 {
            let port = free_port();
            let conf = dir.path().join("tinyproxy.conf");
            std::fs::write(
                &conf,
                format!(
                    "Port {port}\nListen 127.0.0.1\nTimeout 30\nMaxClients 100\nAllow 127.0.0.1\n\
                     ConnectPort {allowed}\nFilter \"{}\"\nFilterExtended Yes\nFilterDefaultDeny Yes\n\
                     BasicAuth u p\nDisableViaHeader Yes\nLogLevel Info\nLogFile \"{}\"\n",
                    filter.display(),
                    dir.path().join("tinyproxy.log").display()
                ),
            )
            .unwrap();
            let mut proc = Proc::spawn("tinyproxy", &["-d", "-c", conf.to_str().unwrap()], false);
            let up = wait_until(Duration::from_secs(10), || {
                proc.exited() || std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
            });
            if up && !proc.exited() {
                return Some(Tinyproxy {
                    proc,
                    port,
                    _dir: dir,
                });
            }
            proc.kill();
        }
        panic!("tinyproxy did not start");
    }

    fn url(&self) -> String {
        format!("http://u:p@127.0.0.1:{}", self.port)
    }
}

impl Drop for Tinyproxy {
    fn drop(&mut self) {
        self.proc.kill();
    }
}

/// A number in the server's final counters line: `final: accepts 8 closes 8 ...`.
fn final_count(line: &str, name: &str) -> u64 {
    let words: Vec<&str> = line.split_whitespace().collect();
    let at = words.iter().position(|w| *w == name).unwrap();
    words[at + 1].replace(',', "").parse().unwrap()
}

/// `wirebench PROTOCOL ARGS -n N -c C -x PROXY` against `serve PROTOCOL` through the
/// proxy: clean, and every request and connection counted by the server too.
/// `opening`: the exchanges each connection makes after its CONNECT.
fn through(protocol: &str, args: &[&str], n: u64, c: u64, opening: u64) {
    let mut server = Served::start_as(protocol, &["--threads", "1"]);
    let Some(proxy) = Tinyproxy::start(server.port) else {
        return;
    };
    let target = args
        .iter()
        .map(|a| a.replace("PORT", &server.port.to_string()));
    let mut all: Vec<String> = target.collect();
    let (total, conns, url) = (n.to_string(), c.to_string(), proxy.url());
    all.extend(["-n", &total, "-c", &conns, "-x", &url].map(String::from));
    let r = run_json(&all.iter().map(String::as_str).collect::<Vec<_>>());
    r.assert_clean(n);
    let what = r.explain();
    assert_eq!(r.u("/totals/connections"), c, "{what}");
    assert_eq!(r.u("/totals/exchange_sent"), c * (1 + opening), "{what}");
    assert_eq!(
        r.u("/totals/exchange_answered"),
        c * (1 + opening),
        "{what}"
    );
    assert_eq!(
        r.json()["client_process"]["event_loop"]["epoll"],
        2,
        "{what}"
    );
    let line = server.stop_final_line();
    assert_eq!(final_count(&line, "accepts"), c, "{line}");
    if protocol != "ws" {
        assert_eq!(final_count(&line, "requests"), n, "{line}");
    }
}

#[test]
fn http_h1_and_h2c_through_tinyproxy_count_exactly_on_the_server() {
    let url = "http://127.0.0.1:PORT/";
    through("http", &["http", url, "-t", "2"], 3000, 4, 0);
    through(
        "http",
        &["http", url, "-t", "2", "--h2", "--max-streams", "4"],
        2000,
        2,
        1,
    );
}

#[test]
fn ws_and_grpc_through_tinyproxy_count_exactly_on_the_server() {
    through("ws", &["ws", "ws://127.0.0.1:PORT/", "-t", "2"], 2000, 2, 2);
    let grpc = [
        "grpc",
        "127.0.0.1:PORT",
        "--call",
        "wirebench.Echo/Call",
        "-t",
        "2",
    ];
    through("grpc", &grpc, 1000, 2, 1);
}

#[test]
fn the_proxys_refusals_are_failed_connections_with_its_status() {
    let mut server = Served::start_as("http", &["--threads", "1"]);
    // The proxy allows CONNECT to another port than the server's.
    let Some(proxy) = Tinyproxy::start(free_port()) else {
        return;
    };
    let url = format!("http://127.0.0.1:{}/", server.port);
    let bad_user = format!("http://u:wrong@127.0.0.1:{}", proxy.port);
    for (via, status) in [(proxy.url(), "403 "), (bad_user, "401 ")] {
        let r = run_json(&[
            "http",
            &url,
            "-n",
            "10",
            "-c",
            "1",
            "--timeout",
            "1s",
            "-x",
            &via,
        ]);
        let what = r.explain();
        assert_eq!(r.code, 1, "{what}");
        assert_eq!(r.u("/totals/ok"), 0, "{what}");
        assert_eq!(r.u("/totals/connections"), 0, "{what}");
        assert!(r.u("/totals/connect_errors") >= 1, "{what}");
        assert_eq!(
            r.u("/totals/exchange_sent"),
            r.u("/totals/exchange_answered"),
            "{what}"
        );
        let want = format!("the proxy refused the tunnel: {status}");
        assert!(r.stderr.contains(&want), "want '{want}' in:\n{what}");
    }
    // Nothing reached the server.
    let line = server.stop_final_line();
    assert_eq!(final_count(&line, "accepts"), 0, "{line}");
}

#[test]
fn bad_proxy_input_is_one_sentence_and_exit_2() {
    let cases: [(&[&str], &str); 8] = [
        (
            &[
                "http",
                "http://127.0.0.1:9/",
                "-x",
                "https://127.0.0.1:3128",
            ],
            "https:// proxy",
        ),
        (
            &[
                "http",
                "http://127.0.0.1:9/",
                "-x",
                "socks5://127.0.0.1:1080",
            ],
            "only http://",
        ),
        (
            &[
                "http",
                "http://127.0.0.1:9/",
                "-x",
                "http://127.0.0.1:99999",
            ],
            "not a number",
        ),
        (
            &["ws", "ws://127.0.0.1:9/", "--proxy", "http://u@127.0.0.1:1"],
            "':' between user",
        ),
        (&["http", "-x", "http://127.0.0.1:3128"], "needs a target"),
        (
            &[
                "grpc",
                "unix:/tmp/x.sock",
                "--call",
                "a.B/C",
                "-x",
                "http://127.0.0.1:1",
            ],
            "unix socket",
        ),
        (
            &["echo", "127.0.0.1:9", "-x", "http://127.0.0.1:3128"],
            "-x",
        ),
        (
            &[
                "http",
                "http://wirebench.test:9/",
                "-x",
                "http://127.0.0.1:3128",
                "--connect-to",
                "127.0.0.1:9",
            ],
            "--connect-to and --proxy each say where connections go",
        ),
    ];
    for (args, words) in cases {
        let mut p = Proc::wirebench(args);
        assert_eq!(
            p.finish(Duration::from_secs(20)),
            2,
            "{args:?}: {}",
            p.stderr()
        );
        let line = assert_one_line_error(&p.stderr(), &format!("{args:?}"));
        assert!(line.contains(words), "{args:?}: {line}");
    }
    for protocol in ["redis", "amqp"] {
        let mut p = Proc::wirebench(&[protocol, "-x", "http://127.0.0.1:3128"]);
        assert_eq!(
            p.finish(Duration::from_secs(20)),
            2,
            "{protocol}: {}",
            p.stderr()
        );
        assert_one_line_error(&p.stderr(), protocol);
    }
}
