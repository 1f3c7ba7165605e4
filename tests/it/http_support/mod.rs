//! Helpers for the HTTP tests: real peers (nginx started with its own config in a
//! temp directory, the wrk/ab/h2load/curl clients), `wirebench serve http` as a child,
//! and small std::net servers that misbehave on purpose.
#![allow(dead_code)]

use crate::common::*;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::Duration;

fn accepts(addr: &str) -> bool {
    TcpStream::connect(addr).is_ok()
}

/// nginx with one worker process, its config, logs and temp paths in a temp
/// directory, `return 200 "hello"` on /, every request logged one line each.
pub struct Nginx {
    pub proc: Proc,
    pub port: u16,
    pub dir: TempPath,
}

impl Nginx {
    pub fn start() -> Nginx {
        Nginx::start_with("", "")
    }

    /// With `listen` options after the address (` http2`: h2c by prior knowledge)
    /// and `locations` added to the server block; the access log counts status,
    /// request length, bytes sent and protocol.
    pub fn start_with(listen: &str, locations: &str) -> Nginx {
        Nginx::start_conf(
            listen,
            "'$status $request_length $bytes_sent $server_protocol'",
            &format!(
                "location = / {{ return 200 \"hello\"; }}\n    {locations}\n    location / {{ return 404; }}"
            ),
        )
    }

    /// nginx with its access log's `log_format` and the server block's whole `locations`.
    pub fn start_logged(log_format: &str, locations: &str) -> Nginx {
        Nginx::start_conf("", log_format, locations)
    }

    /// nginx with `listen` options, its access log's `log_format` and the server block's
    /// whole `locations`.
    pub fn start_conf(listen: &str, log_format: &str, locations: &str) -> Nginx {
        let nginx = ["/usr/sbin/nginx", "/usr/bin/nginx"]
            .into_iter()
            .find(|p| std::path::Path::new(p).is_file())
            .unwrap_or("nginx");
        let mut last = String::new();
        for _ in 0..5 {
            let dir = TempPath::new("nginx", "");
            std::fs::create_dir_all(dir.path()).unwrap();
            let port = free_port();
            let d = dir.s();
            // master_process off: one process, so stopping it by PID stops everything.
            let conf = format!(
                "daemon off;\nmaster_process off;\nworker_processes 1;\npid {d}/nginx.pid;\nerror_log {d}/error.log warn;\n\
events {{ worker_connections 1024; }}\n\
http {{\n  log_format counted {log_format};\n  access_log {d}/access.log counted;\n\
  client_body_temp_path {d}/body; proxy_temp_path {d}/proxy; fastcgi_temp_path {d}/fastcgi;\n\
  uwsgi_temp_path {d}/uwsgi; scgi_temp_path {d}/scgi;\n  keepalive_requests 1000000;\n\
  server {{\n    listen 127.0.0.1:{port}{listen};\n    {locations}\n  }}\n}}\n"
            );
            let conf_path = dir.path().join("nginx.conf");
            std::fs::write(&conf_path, conf).unwrap();
            let prefix = format!("{d}/");
            let proc = Proc::spawn(
                nginx,
                &["-c", conf_path.to_str().unwrap(), "-p", &prefix],
                false,
            );
            let addr = format!("127.0.0.1:{port}");
            let mut n = Nginx { proc, port, dir };
            if wait_until(Duration::from_secs(10), || {
                n.proc.exited() || accepts(&addr)
            }) && !n.proc.exited()
            {
                return n;
            }
            last = format!(
                "stderr: {}\nerror.log: {}",
                n.proc.stderr(),
                std::fs::read_to_string(n.dir.path().join("error.log")).unwrap_or_default()
            );
            n.proc.kill();
        }
        panic!("nginx did not start:\n{last}");
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// The access log's lines once it holds `n` (nginx logs a request just after
    /// sending its response, so the client may see the response first), or after
    /// RUN_LIMIT (a bound for a loaded machine: it normally takes milliseconds), and
    /// 300 ms more to catch any line beyond `n`.
    pub fn logged(&self, n: usize) -> Vec<String> {
        wait_until(RUN_LIMIT, || self.log_lines().len() >= n);
        std::thread::sleep(Duration::from_millis(300));
        self.log_lines()
    }

    /// The access log's lines.
    pub fn log_lines(&self) -> Vec<String> {
        std::fs::read_to_string(self.dir.path().join("access.log"))
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        self.proc.terminate();
        if self.proc.wait_for(Duration::from_secs(5)).is_none() {
            self.proc.kill();
        }
    }
}

/// `wirebench serve http` as a child on a free port.
pub struct ServeHttp {
    pub proc: Proc,
    pub port: u16,
}

impl ServeHttp {
    pub fn start(extra: &[&str]) -> ServeHttp {
        let mut last = String::new();
        for _ in 0..5 {
            let port = free_port();
            let listen = format!("127.0.0.1:{port}");
            let mut args = vec!["serve", "http", "--listen", &listen];
            args.extend_from_slice(extra);
            let mut proc = Proc::wirebench(&args);
            if proc
                .wait_line(
                    "wirebench serve http: listening on",
                    Duration::from_secs(20),
                )
                .is_some()
            {
                return ServeHttp { proc, port };
            }
            proc.kill();
            last = format!("stdout:\n{}\nstderr:\n{}", proc.stdout(), proc.stderr());
            if !last.contains("already in use") {
                break;
            }
        }
        panic!("`wirebench serve http` did not start\n{last}");
    }

    pub fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// Stops the server (SIGTERM) and returns its final stats line.
    pub fn stop(mut self) -> String {
        self.proc.terminate();
        let code = self.proc.finish(Duration::from_secs(10));
        assert_eq!(
            code,
            0,
            "serve http exit\n{}\n{}",
            self.proc.stdout(),
            self.proc.stderr()
        );
        let out = self.proc.stdout();
        out.lines()
            .rfind(|l| l.contains("final: "))
            .unwrap_or_else(|| panic!("no final stats line in:\n{out}"))
            .to_string()
    }
}

/// A number after `key ` in a stats line ("requests 1,000" -> 1000).
pub fn stat(line: &str, key: &str) -> u64 {
    let at = line
        .find(&format!(" {key} "))
        .unwrap_or_else(|| panic!("no '{key}' in {line}"));
    line[at + key.len() + 2..]
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == ',')
        .filter(char::is_ascii_digit)
        .collect::<String>()
        .parse()
        .unwrap_or_else(|_| panic!("no number after '{key}' in {line}"))
}

/// Reads one HTTP/1.1 request head (and a Content-Length body) from `s`; None at EOF.
pub fn read_request(s: &mut TcpStream, buf: &mut Vec<u8>) -> Option<Vec<u8>> {
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
            let len: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .map(|v| v.trim().parse().unwrap())
                .unwrap_or(0);
            let total = end + 4 + len;
            if buf.len() >= total {
                let req: Vec<u8> = buf.drain(..total).collect();
                return Some(req);
            }
        }
        let mut chunk = [0u8; 4096];
        match s.read(&mut chunk) {
            Ok(0) | Err(_) => return None,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
}

/// A std::net HTTP server: for every request on a connection, `answer` is called with
/// the stream and the request number on that connection; returning false closes.
pub struct RawServer {
    _inner: Foreign,
    pub addr: SocketAddr,
}

impl RawServer {
    pub fn start(serve_conn: fn(TcpStream)) -> RawServer {
        let inner = Foreign::start(serve_conn);
        RawServer {
            addr: inner.addr,
            _inner: inner,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }
}

/// Writes `bytes` one small write at a time, so the client sees many partial reads.
pub fn write_split(s: &mut TcpStream, bytes: &[u8], piece: usize) {
    let _ = s.set_nodelay(true);
    for c in bytes.chunks(piece.max(1)) {
        if s.write_all(c).is_err() {
            return;
        }
        let _ = s.flush();
    }
}

/// A listener that accepts and never answers; kept open until dropped.
pub fn silent_listener() -> (TcpListener, String) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let a = l.local_addr().unwrap().to_string();
    (l, a)
}
