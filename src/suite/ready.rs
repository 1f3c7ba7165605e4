//! Readiness checks: a TCP connect, or a protocol's own probe (its entry's
//! `ready_probe`: bytes sent once connected, and how the answer must begin).

use super::plan::Ready;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::fd::AsRawFd;
use std::time::Duration;

/// One attempt; true when the server answers as the check asks.
pub fn probe(addr: SocketAddr, ready: &Ready) -> bool {
    let Ok(mut s) = TcpStream::connect_timeout(&addr, Duration::from_millis(500)) else {
        return false;
    };
    // A connect to a free port in the ephemeral range can pick that very port as its
    // source and meet itself: it "succeeds" with nobody listening, and the probe would
    // then hold the port the server is about to bind.
    if crate::net::socket::connected_to_itself(s.as_raw_fd()) {
        return false;
    }
    let Ready::Probe { probe, .. } = ready else {
        return true;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
    let req = probe.send.replace("{addr}", &addr.to_string());
    if s.write_all(req.as_bytes()).is_err() {
        return false;
    }
    let mut buf = vec![0u8; probe.answer_starts.len()];
    let mut got = 0;
    while got < buf.len() {
        match s.read(&mut buf[got..]) {
            Ok(0) | Err(_) => break,
            Ok(n) => got += n,
        }
    }
    buf[..got] == *probe.answer_starts
}

/// What a server never ready did not do, for its status line.
pub fn missed(addr: SocketAddr, ready: &Ready) -> String {
    match ready {
        Ready::Tcp => format!("no TCP connect to {addr}"),
        Ready::Probe { protocol, probe } => format!("no {protocol} answer to {}", probe.asks),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    #[test]
    fn a_probe_needs_the_answer_it_names() {
        // Below the ephemeral range (net::free_port): once this listener is gone, no
        // parallel test's bind to port 0 or outgoing connection can take its port, so
        // "nobody listens any more" stays true. Another process's tests pick ports
        // there too, and may take one between free_port's check and this bind: the
        // next port is tried then.
        let l = (0..32)
            .find_map(|_| {
                let port = crate::net::free_port::free_port("127.0.0.1").ok()?;
                TcpListener::bind(("127.0.0.1", port)).ok()
            })
            .expect("a free port below the ephemeral range");
        let addr = l.local_addr().unwrap();
        let t = std::thread::spawn(move || {
            for (i, c) in l.incoming().take(2).enumerate() {
                let mut c = c.unwrap();
                let mut b = [0u8; 256];
                let _ = c.read(&mut b);
                let reply: &[u8] = if i == 0 {
                    b"garbage\r\n"
                } else {
                    b"HTTP/1.1 404 Not Found\r\n\r\n"
                };
                let _ = c.write_all(reply);
            }
        });
        let http = Ready::Probe {
            protocol: "test",
            probe: crate::proto::entry::ReadyProbe {
                send: "GET / HTTP/1.1\r\nHost: {addr}\r\n\r\n".into(),
                answer_starts: b"HTTP/1.",
                asks: "GET /".into(),
            },
        };
        assert!(!probe(addr, &http));
        assert!(probe(addr, &http));
        t.join().unwrap();
        assert!(!probe(addr, &Ready::Tcp), "nobody listens any more");
    }
}
