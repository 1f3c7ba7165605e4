//! The request `wirebench http` puts on the wire, byte for byte, as a peer reads it:
//! by default only what HTTP/1.1 needs (the request line and Host), as wrk sends; a
//! header the user gives (`-H`) goes as given. Every extra default header would cost
//! a server that parses and logs each request (nginx's access log) work per request
//! that wrk's load does not.

use crate::common::*;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::thread;
use std::time::Duration;

/// Serves `requests` keep-alive requests on one connection with an empty 200 and
/// returns every byte it read (nothing if no client came within 20 s: the test then
/// fails on the bytes instead of hanging).
fn catch(listener: TcpListener, requests: usize) -> thread::JoinHandle<Vec<u8>> {
    thread::spawn(move || {
        listener
            .set_nonblocking(true)
            .expect("nonblocking listener");
        let mut accepted = None;
        wait_until(Duration::from_secs(20), || match listener.accept() {
            Ok((s, _)) => {
                accepted = Some(s);
                true
            }
            Err(_) => false,
        });
        let Some(mut s) = accepted else {
            return Vec::new();
        };
        s.set_nonblocking(false).expect("blocking stream");
        s.set_read_timeout(Some(Duration::from_secs(20)))
            .expect("read timeout");
        let mut got = Vec::new();
        let mut buf = [0u8; 4096];
        let mut answered = 0;
        while answered < requests {
            let n = match s.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            got.extend_from_slice(&buf[..n]);
            let heads = got.windows(4).filter(|w| w == b"\r\n\r\n").count();
            while answered < heads {
                s.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
                    .expect("answer");
                answered += 1;
            }
        }
        got
    })
}

fn sent(extra: &[&str], requests: usize) -> (RunOut, Vec<u8>, u16) {
    let port = free_port();
    let listener = TcpListener::bind(("127.0.0.1", port)).expect("bind");
    let peer = catch(listener, requests);
    let url = format!("http://127.0.0.1:{port}/path?q=1");
    let n = requests.to_string();
    let mut args = vec!["http", &url, "-t", "1", "-c", "1", "-n", &n];
    args.extend_from_slice(extra);
    let r = run_json(&args);
    (r, peer.join().expect("peer thread"), port)
}

#[test]
fn default_request_is_the_request_line_and_host_only() {
    let (r, got, port) = sent(&[], 3);
    r.assert_clean(3);
    let one = format!("GET /path?q=1 HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n");
    assert_eq!(
        String::from_utf8_lossy(&got),
        one.repeat(3),
        "three identical requests, no User-Agent or other default header"
    );
    assert_eq!(r.u("/totals/bytes_sent"), 3 * one.len() as u64);
}

#[test]
fn user_headers_go_as_given() {
    let (r, got, port) = sent(&["-H", "User-Agent: bench/1", "-H", "X-A: b"], 2);
    r.assert_clean(2);
    let one = format!(
        "GET /path?q=1 HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUser-Agent: bench/1\r\nX-A: b\r\n\r\n"
    );
    assert_eq!(String::from_utf8_lossy(&got), one.repeat(2));
}
