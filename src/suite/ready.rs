//! Readiness checks: a TCP connect, or an HTTP GET that gets any status line back.

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
    let Ready::Http(path) = ready else {
        return true;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
    let req = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    if s.write_all(req.as_bytes()).is_err() {
        return false;
    }
    let mut buf = [0u8; 12];
    let mut got = 0;
    while got < buf.len() {
        match s.read(&mut buf[got..]) {
            Ok(0) | Err(_) => break,
            Ok(n) => got += n,
        }
    }
    buf[..got].starts_with(b"HTTP/1.")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    #[test]
    fn http_probe_needs_a_status_line() {
        // Below the ephemeral range (net::free_port): once this listener is gone, no
        // parallel test's bind to port 0 or outgoing connection can take its port, so
        // "nobody listens any more" stays true.
        let port = crate::net::free_port::free_port("127.0.0.1").unwrap();
        let l = TcpListener::bind(("127.0.0.1", port)).unwrap();
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
        let http = Ready::Http("/".into());
        assert!(!probe(addr, &http));
        assert!(probe(addr, &http));
        t.join().unwrap();
        assert!(!probe(addr, &Ready::Tcp), "nobody listens any more");
    }
}
