//! Helpers of the AMQP tests: `wirebench serve amqp` as a child with its final counts,
//! haproxy in TCP mode in front of a port, and a raw AMQP handshake over std::net.
#![allow(dead_code)]

use super::common::*;
use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;
use wirebench::engine::session::{ClientSession, Setup};
use wirebench::proto::amqp::client::{AmqpClient, ClientOptions};
use wirebench::proto::amqp::client_figures::ClientFigures;

/// `wirebench serve amqp` on a free port.
pub struct Broker {
    pub proc: Proc,
    pub port: u16,
}

impl Broker {
    pub fn start(extra: &[&str]) -> Broker {
        for _ in 0..5 {
            let port = free_port();
            let listen = format!("127.0.0.1:{port}");
            let mut args = vec!["serve", "amqp", "--listen", &listen, "--threads", "1"];
            args.extend_from_slice(extra);
            let mut proc = Proc::wirebench(&args);
            if proc
                .wait_line(
                    "wirebench serve amqp: listening on",
                    Duration::from_secs(20),
                )
                .is_some()
            {
                return Broker { proc, port };
            }
            proc.kill();
            if !proc.stderr().contains("already in use") {
                panic!("serve amqp did not start: {}", proc.stderr());
            }
        }
        panic!("serve amqp found no free port");
    }

    /// Stops it (SIGTERM) and reads its final AMQP counters.
    pub fn finish(mut self) -> HashMap<String, u64> {
        self.proc.terminate();
        assert_eq!(
            self.proc.finish(Duration::from_secs(20)),
            0,
            "{}",
            self.proc.stderr()
        );
        let out = self.proc.stdout();
        let line = out
            .lines()
            .find(|l| l.starts_with("wirebench serve amqp: final amqp:"))
            .unwrap_or_else(|| panic!("no final amqp line in:\n{out}"));
        parse_counts(line)
    }
}

/// "... opened 3 messages 1,200 body bytes 5 ..." -> {"opened": 3, "messages": 1200, "bytes": 5, ...}
pub fn parse_counts(line: &str) -> HashMap<String, u64> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let mut m = HashMap::new();
    for w in words.windows(2) {
        if let Ok(n) = w[1].replace(',', "").parse::<u64>() {
            m.insert(w[0].to_string(), n);
        }
    }
    m
}

/// haproxy in TCP mode on a free port, forwarding to `backend_port`.
pub struct Haproxy {
    pub proc: Proc,
    pub port: u16,
    _cfg: TempPath,
}

impl Haproxy {
    pub fn start(backend_port: u16) -> Haproxy {
        let port = free_port();
        let cfg = TempPath::new("haproxy", ".cfg");
        std::fs::write(
            cfg.path(),
            format!(
                "defaults\n  mode tcp\n  timeout connect 5s\n  timeout client 1h\n  timeout server 1h\n\
                 frontend fe\n  bind 127.0.0.1:{port}\n  default_backend be\n\
                 backend be\n  server s1 127.0.0.1:{backend_port}\n"
            ),
        )
        .unwrap();
        let proc = Proc::spawn("haproxy", &["-f", cfg.s(), "-db"], false);
        let up = wait_until(Duration::from_secs(10), || {
            TcpStream::connect(("127.0.0.1", port)).is_ok()
        });
        assert!(up, "haproxy did not listen on {port}");
        Haproxy {
            proc,
            port,
            _cfg: cfg,
        }
    }
}

/// A connection that finished the AMQP handshake (wirebench's own client, blocking I/O).
pub fn opened_connection(port: u16) -> TcpStream {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut c = AmqpClient::new(ClientOptions {
        user: "guest".into(),
        password: "guest".into(),
        vhost: "/".into(),
        channels: 1,
        confirm: false,
        exchange: String::new(),
        routing_key: "k".into(),
        size: 1,
        declare_queue: None,
        per_connection: None,
    });
    let mut input = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let mut out = Vec::new();
        let step = c.open(
            &input,
            &mut out,
            &mut ClientFigures::default(),
            &mut Default::default(),
        );
        s.write_all(&out).unwrap();
        match step {
            Setup::Done { .. } => return s,
            Setup::Failed { detail, .. } => panic!("handshake failed: {detail}"),
            Setup::Continue { used } | Setup::Event { used } => {
                input.drain(..used);
                if used == 0 {
                    let n = s.read(&mut buf).unwrap();
                    assert!(n > 0, "broker closed during the handshake");
                    input.extend_from_slice(&buf[..n]);
                }
            }
        }
    }
}

/// Everything until the peer closes.
pub fn read_to_close(s: &mut TcpStream) -> Vec<u8> {
    let mut all = Vec::new();
    let _ = s.read_to_end(&mut all);
    all
}
