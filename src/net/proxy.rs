//! An HTTP CONNECT proxy (`-x/--proxy http://[USER:PASS@]HOST[:PORT]`, as curl's and
//! oha's): a connection goes to the proxy, asks it with `CONNECT host:port` for a tunnel
//! to the target, and once the proxy answers 2xx speaks TLS and its protocol through
//! it. This file holds what does not depend on the event loop: the URL parsed, the
//! CONNECT request written once per load, and the proxy's answer read from the socket
//! without taking a byte past its head (what follows belongs to the target).

use crate::error::{Error, Result};
use base64::Engine as _;
use std::net::SocketAddr;

/// curl's default port for an http:// proxy.
pub const DEFAULT_PORT: u16 = 1080;
/// Longest proxy answer head read; a longer one fails the connection.
pub const MAX_REPLY_HEAD: usize = 4096;

/// A proxy and the CONNECT request every connection of the load sends it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tunnel {
    /// The proxy's address (connected to instead of the target).
    pub proxy: SocketAddr,
    /// The proxy as the user gave it, without its credentials (for the report).
    pub shown: String,
    /// `CONNECT authority HTTP/1.1` and its headers, whole.
    pub request: Vec<u8>,
}

/// A proxy URL parsed: where it is and the credentials it is asked with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProxyUrl {
    /// HOST:PORT as written (the host in brackets for IPv6).
    pub host_port: String,
    /// `user:pass`, as given (curl sends it as Basic).
    pub credentials: Option<String>,
}

/// Parses `http://[USER:PASS@]HOST[:PORT][/]`; anything else is one sentence.
pub fn parse(text: &str) -> Result<ProxyUrl> {
    let bad = |why: &str| {
        Error::usage(format!(
            "--proxy '{text}' {why} (give http://HOST:PORT, or http://USER:PASS@HOST:PORT)"
        ))
    };
    if text.starts_with("https://") {
        return Err(Error::usage(format!(
            "--proxy '{text}': an https:// proxy (TLS to the proxy itself) is not supported; give an http:// proxy, through which https:// targets still use TLS end to end"
        )));
    }
    let rest = match text.split_once("://") {
        Some(("http", rest)) => rest,
        Some((scheme, _)) => {
            return Err(bad(&format!(
                "has the scheme {scheme}://, and only http:// proxies are supported"
            )))
        }
        // curl takes a bare HOST:PORT as an http:// proxy.
        None => text,
    };
    let rest = rest.strip_suffix('/').unwrap_or(rest);
    if rest.contains('/') || rest.contains('?') || rest.contains('#') {
        return Err(bad("has a path, which a proxy URL does not take"));
    }
    let (credentials, host_port) = match rest.rsplit_once('@') {
        Some((c, h)) if c.contains(':') => (Some(c.to_string()), h),
        Some(_) => {
            return Err(bad(
                "has credentials without a ':' between user and password",
            ))
        }
        None => (None, rest),
    };
    if host_port.is_empty() || host_port.starts_with(':') {
        return Err(bad("has no host"));
    }
    // The port follows the last ':', unless that ':' is inside an IPv6 literal ("[::1]").
    let port = match host_port.rsplit_once(':') {
        Some((h, p)) if !h.contains(':') || (h.starts_with('[') && h.ends_with(']')) => Some(p),
        _ => None,
    };
    if let Some(p) = port.filter(|p| p.parse::<u16>().is_err()) {
        return Err(bad(&format!(
            "has the port '{p}', not a number up to 65535"
        )));
    }
    let has_port = port.is_some();
    let host_port = if has_port {
        host_port.to_string()
    } else {
        format!("{host_port}:{DEFAULT_PORT}")
    };
    Ok(ProxyUrl {
        host_port,
        credentials,
    })
}

impl Tunnel {
    /// The tunnel through `url` to `authority` (HOST:PORT, as the proxy resolves it).
    pub fn new(url: &ProxyUrl, authority: &str) -> Result<Tunnel> {
        let (proxy, _) = crate::net::addr::resolve_target(&url.host_port)
            .map_err(|e| Error::usage(format!("--proxy: {e}")))?;
        let mut request = format!("CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\n");
        if let Some(c) = &url.credentials {
            let token = base64::engine::general_purpose::STANDARD.encode(c.as_bytes());
            request.push_str(&format!("Proxy-Authorization: Basic {token}\r\n"));
        }
        request.push_str("\r\n");
        Ok(Tunnel {
            proxy,
            shown: format!("http://{}", url.host_port),
            request: request.into_bytes(),
        })
    }
}

/// What the proxy's answer is, so far.
#[derive(Debug, PartialEq, Eq)]
pub enum Reply {
    /// Its head is not whole yet.
    Incomplete,
    /// 2xx: the tunnel is open; the head is `head` bytes long.
    Open { head: usize },
    /// The proxy refused (or garbled its answer): said in words.
    Refused(String),
}

/// Reads the proxy's answer head in `bytes` (what the socket holds, not yet taken).
pub fn reply(bytes: &[u8]) -> Reply {
    let Some(end) = bytes.windows(4).position(|w| w == b"\r\n\r\n") else {
        if bytes.len() >= MAX_REPLY_HEAD {
            return Reply::Refused(format!(
                "the proxy's answer head is longer than {MAX_REPLY_HEAD} bytes"
            ));
        }
        return Reply::Incomplete;
    };
    let line = &bytes[..bytes.iter().position(|&b| b == b'\r').unwrap_or(end)];
    let line = String::from_utf8_lossy(line);
    let mut words = line.splitn(3, ' ');
    let version = words.next().unwrap_or_default();
    let status = words.next().and_then(|s| s.parse::<u16>().ok());
    let reason = words.next().unwrap_or_default().trim();
    match status {
        Some(200..=299) if version.starts_with("HTTP/1.") => Reply::Open { head: end + 4 },
        Some(s) if version.starts_with("HTTP/1.") => Reply::Refused(format!(
            "the proxy refused the tunnel: {s} {}",
            printable(reason)
        )),
        _ => Reply::Refused(format!(
            "the proxy's answer is not HTTP/1.x: '{}'",
            printable(&line)
        )),
    }
}

/// Copies what the socket holds into `buf` without taking it (MSG_PEEK): the proxy's
/// head is taken only once whole, so no byte of the target's is read with it.
/// Ok(0) at end of stream, Err(errno) on error (EAGAIN included).
pub fn peek(fd: i32, buf: &mut [u8]) -> std::result::Result<usize, i32> {
    // SAFETY: buf is valid for writes of its length.
    let n = unsafe { libc::recv(fd, buf.as_mut_ptr().cast(), buf.len(), libc::MSG_PEEK) };
    if n < 0 {
        Err(std::io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO))
    } else {
        Ok(n as usize)
    }
}

/// At most 120 characters of a peer's text, control characters dropped.
fn printable(text: &str) -> String {
    text.chars().filter(|c| !c.is_control()).take(120).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proxy_urls_parse_as_curl_takes_them() {
        let p = parse("http://127.0.0.1:3128").unwrap();
        assert_eq!(p.host_port, "127.0.0.1:3128");
        assert_eq!(p.credentials, None);
        let p = parse("http://u:p@[::1]:8888/").unwrap();
        assert_eq!(p.host_port, "[::1]:8888");
        assert_eq!(p.credentials.as_deref(), Some("u:p"));
        assert_eq!(parse("localhost").unwrap().host_port, "localhost:1080");
        assert_eq!(parse("http://[::1]").unwrap().host_port, "[::1]:1080");
        for bad in [
            "https://127.0.0.1:3128",
            "socks5://127.0.0.1:1080",
            "http://",
            "http://127.0.0.1:99999",
            "http://127.0.0.1:3128/path",
            "http://user@127.0.0.1:3128",
        ] {
            let e = parse(bad).unwrap_err().to_string();
            assert!(e.contains(bad) && !e.contains('\n'), "{e}");
        }
    }

    #[test]
    fn the_connect_request_names_the_target_and_the_credentials() {
        let url = parse("http://Aladdin:open sesame@127.0.0.1:3128").unwrap();
        let t = Tunnel::new(&url, "example.test:443").unwrap();
        assert_eq!(t.proxy, "127.0.0.1:3128".parse().unwrap());
        assert_eq!(t.shown, "http://127.0.0.1:3128");
        assert_eq!(
            String::from_utf8(t.request).unwrap(),
            "CONNECT example.test:443 HTTP/1.1\r\nHost: example.test:443\r\nProxy-Authorization: Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==\r\n\r\n"
        );
    }

    #[test]
    fn answers_open_refuse_or_wait_at_every_split() {
        let ok = b"HTTP/1.1 200 Connection established\r\nProxy-agent: x\r\n\r\nTLS";
        for cut in 0..ok.len() - 3 {
            assert_eq!(reply(&ok[..cut]), Reply::Incomplete, "{cut}");
        }
        assert_eq!(reply(ok), Reply::Open { head: ok.len() - 3 });
        assert_eq!(
            reply(b"HTTP/1.0 403 Filtered\r\n\r\n"),
            Reply::Refused("the proxy refused the tunnel: 403 Filtered".into())
        );
        assert!(matches!(reply(b"SSH-2.0\r\n\r\n"), Reply::Refused(t) if t.contains("not HTTP")));
        assert!(matches!(reply(&[b'a'; MAX_REPLY_HEAD]), Reply::Refused(_)));
    }
}
