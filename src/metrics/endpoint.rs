//! The `/metrics` listener: one thread of its own, one scrape at a time, each read
//! and written under a timeout, so a scraper that connects and never reads (or never
//! writes) holds the endpoint for at most `IO_TIMEOUT` and the run not at all. The
//! figures it serves are a copy the observer replaces once per interval (`publish`);
//! a scrape copies them out under the same short lock and renders on this thread.

use super::exposition::{render, Format};
use super::figures::LiveFigures;
use crate::error::{Error, Result};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// How long one scrape may take to send its request or read the answer.
const IO_TIMEOUT: Duration = Duration::from_secs(2);
/// The longest request head read; more is refused.
const MAX_HEAD: usize = 8192;
/// How often the idle thread looks at its stop flag.
const POLL_MS: i32 = 100;

pub struct Endpoint {
    pub addr: SocketAddr,
    figures: Arc<Mutex<LiveFigures>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Endpoint {
    /// Listens on `addr` and starts serving `initial`. A busy or unusable address is
    /// one sentence (the run has not started).
    pub fn start(addr: SocketAddr, initial: LiveFigures) -> Result<Endpoint> {
        let listener = TcpListener::bind(addr).map_err(|e| {
            let why = match e.kind() {
                std::io::ErrorKind::AddrInUse => "the address is in use".to_string(),
                std::io::ErrorKind::AddrNotAvailable => {
                    "no interface of this machine has that address".to_string()
                }
                std::io::ErrorKind::PermissionDenied => "permission denied".to_string(),
                _ => e.to_string(),
            };
            Error::usage(format!(
                "--metrics-listen {addr}: cannot listen there: {why}"
            ))
        })?;
        let addr = listener
            .local_addr()
            .map_err(|e| Error::runtime(format!("--metrics-listen {addr}: {e}")))?;
        let figures = Arc::new(Mutex::new(initial));
        let stop = Arc::new(AtomicBool::new(false));
        let (f, s) = (figures.clone(), stop.clone());
        let thread = std::thread::Builder::new()
            .name("wb-metrics".into())
            .spawn(move || serve(listener, &f, &s))
            .map_err(|e| Error::runtime(format!("cannot start the metrics thread: {e}")))?;
        Ok(Endpoint {
            addr,
            figures,
            stop,
            thread: Some(thread),
        })
    }

    /// Replaces what scrapes see; `change` edits the current figures in place.
    pub fn publish(&self, change: impl FnOnce(&mut LiveFigures)) {
        let mut f = self.figures.lock().unwrap_or_else(|p| p.into_inner());
        change(&mut f);
    }

    /// Keeps serving for `linger` (the last scrapes see the final figures), then stops.
    pub fn linger_and_stop(mut self, linger: Duration) {
        if !linger.is_zero() {
            std::thread::sleep(linger);
        }
        self.stop_now();
    }

    fn stop_now(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        self.stop_now();
    }
}

fn serve(listener: TcpListener, figures: &Mutex<LiveFigures>, stop: &AtomicBool) {
    while !stop.load(Ordering::Relaxed) {
        if !readable(&listener) {
            continue;
        }
        if let Ok((stream, _)) = listener.accept() {
            // A failed scrape is the scraper's: the next one is served as usual.
            let _ = answer(stream, figures);
        }
    }
}

/// Whether a connection waits to be accepted, within `POLL_MS`.
fn readable(listener: &TcpListener) -> bool {
    let mut pfd = libc::pollfd {
        fd: listener.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd, its count 1.
    let n = unsafe { libc::poll(&mut pfd, 1, POLL_MS) };
    n > 0 && pfd.revents & libc::POLLIN != 0
}

fn answer(mut stream: TcpStream, figures: &Mutex<LiveFigures>) -> std::io::Result<()> {
    stream.set_read_timeout(Some(IO_TIMEOUT))?;
    stream.set_write_timeout(Some(IO_TIMEOUT))?;
    let head = read_head(&mut stream)?;
    let reply = match parse(&head) {
        Ok(req) if req.path == "/metrics" || req.path == "/" => {
            let format = Format::accepting(req.accept);
            let snapshot = figures.lock().unwrap_or_else(|p| p.into_inner()).clone();
            let body = render(&snapshot, format);
            let mut r = response("200 OK", format.content_type(), body.len(), "");
            if !req.head_only {
                r.push_str(&body);
            }
            r
        }
        Ok(_) => plain("404 Not Found", "not found: the metrics are at /metrics\n"),
        Err(status) => plain(status, "a GET of /metrics, please\n"),
    };
    stream.write_all(reply.as_bytes())?;
    let _ = stream.shutdown(std::net::Shutdown::Write);
    Ok(())
}

fn plain(status: &str, body: &str) -> String {
    response(status, "text/plain; charset=utf-8", body.len(), body)
}

fn response(status: &str, content_type: &str, len: usize, body: &str) -> String {
    format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {len}\r\nConnection: close\r\n\r\n{body}"
    )
}

/// The request's head, up to its blank line (at most `MAX_HEAD` bytes).
fn read_head(stream: &mut TcpStream) -> std::io::Result<Vec<u8>> {
    let mut head = Vec::with_capacity(512);
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < MAX_HEAD {
        let n = stream.read(&mut buf)?;
        if n == 0 {
            break;
        }
        head.extend_from_slice(&buf[..n]);
    }
    Ok(head)
}

pub struct Request<'a> {
    pub path: &'a str,
    pub accept: Option<&'a str>,
    pub head_only: bool,
}

/// The request line and the Accept header; a status line's text when it is no GET
/// or HEAD of HTTP/1.x.
pub fn parse(head: &[u8]) -> std::result::Result<Request<'_>, &'static str> {
    let text = std::str::from_utf8(head).map_err(|_| "400 Bad Request")?;
    let Some(end) = text.find("\r\n\r\n") else {
        return Err("400 Bad Request");
    };
    let mut lines = text[..end].split("\r\n");
    let mut first = lines.next().unwrap_or("").split(' ');
    let (method, target, version) = (first.next(), first.next(), first.next());
    let (Some(method), Some(target), Some(version)) = (method, target, version) else {
        return Err("400 Bad Request");
    };
    if !version.starts_with("HTTP/1.") {
        return Err("400 Bad Request");
    }
    let head_only = match method {
        "GET" => false,
        "HEAD" => true,
        _ => return Err("405 Method Not Allowed"),
    };
    let accept = lines.find_map(|l| {
        let (name, value) = l.split_once(':')?;
        name.trim()
            .eq_ignore_ascii_case("accept")
            .then_some(value.trim())
    });
    let path = target.split('?').next().unwrap_or(target);
    Ok(Request {
        path,
        accept,
        head_only,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_get_with_its_accept_header_and_what_is_refused() {
        let r =
            parse(b"GET /metrics?x=1 HTTP/1.1\r\nHost: a\r\nACCEPT: text/plain\r\n\r\n").unwrap();
        assert_eq!(
            (r.path, r.accept, r.head_only),
            ("/metrics", Some("text/plain"), false)
        );
        assert!(parse(b"HEAD / HTTP/1.0\r\n\r\n").unwrap().head_only);
        assert_eq!(
            parse(b"POST /metrics HTTP/1.1\r\n\r\n").err(),
            Some("405 Method Not Allowed")
        );
        assert_eq!(
            parse(b"GET /metrics HTTP/1.1\r\n").err(),
            Some("400 Bad Request")
        );
        assert_eq!(parse(b"\xff\r\n\r\n").err(), Some("400 Bad Request"));
        assert_eq!(
            parse(b"GET /metrics SSH-2.0\r\n\r\n").err(),
            Some("400 Bad Request")
        );
    }

    #[test]
    fn a_busy_address_is_one_sentence() {
        let held = TcpListener::bind("127.0.0.1:0").unwrap();
        let e = Endpoint::start(held.local_addr().unwrap(), LiveFigures::default())
            .err()
            .unwrap();
        assert!(
            e.to_string()
                .ends_with("cannot listen there: the address is in use"),
            "{e}"
        );
    }
}
