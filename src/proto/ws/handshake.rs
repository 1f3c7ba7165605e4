//! The HTTP/1.1 upgrade (RFC 6455 4): the client's GET with its `Sec-WebSocket-Key`,
//! the server's `101 Switching Protocols` with `Sec-WebSocket-Accept` = base64(SHA-1(key
//! + GUID)), both sides checked. Pure: bytes in, bytes out, one sentence per mistake.

use base64::Engine as _;

/// RFC 6455 1.3: appended to the key before hashing.
const GUID: &str = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
/// Largest upgrade request or response head either side reads: past it, `too_large`.
pub const MAX_HEAD: usize = 16 << 10;
/// Headers read from a head; more is a bad handshake.
const MAX_HEADERS: usize = 64;

/// `Sec-WebSocket-Accept` for a `Sec-WebSocket-Key`.
pub fn accept_key(key: &str) -> String {
    let mut ctx = ring::digest::Context::new(&ring::digest::SHA1_FOR_LEGACY_USE_ONLY);
    ctx.update(key.trim().as_bytes());
    ctx.update(GUID.as_bytes());
    base64::engine::general_purpose::STANDARD.encode(ctx.finish().as_ref())
}

/// A client's key: 16 bytes (from `seed`), base64.
pub fn client_key(seed: u64) -> String {
    let mut rng = crate::rng::Rng::new(seed ^ 0x0057_534b_4559);
    let mut b = [0u8; 16];
    b[..8].copy_from_slice(&rng.next_u64().to_ne_bytes());
    b[8..].copy_from_slice(&rng.next_u64().to_ne_bytes());
    base64::engine::general_purpose::STANDARD.encode(b)
}

/// Appends the client's upgrade request.
pub fn write_request(
    out: &mut Vec<u8>,
    authority: &str,
    path: &str,
    key: &str,
    protocol: Option<&str>,
) {
    out.extend_from_slice(
        format!(
            "GET {path} HTTP/1.1\r\nHost: {authority}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
        )
        .as_bytes(),
    );
    if let Some(p) = protocol {
        out.extend_from_slice(format!("Sec-WebSocket-Protocol: {p}\r\n").as_bytes());
    }
    out.extend_from_slice(b"\r\n");
}

fn header<'a>(headers: &'a [httparse::Header<'a>], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|h| h.name.eq_ignore_ascii_case(name))
        .and_then(|h| std::str::from_utf8(h.value).ok())
        .map(str::trim)
}

/// A comma-separated header value holds `token` (case-insensitive).
fn lists(value: Option<&str>, token: &str) -> bool {
    value.is_some_and(|v| v.split(',').any(|t| t.trim().eq_ignore_ascii_case(token)))
}

/// What the client made of the server's answer so far.
#[derive(Debug, PartialEq, Eq)]
pub enum Answer {
    Incomplete,
    /// Upgraded: the head was `used` bytes; frames follow.
    Upgraded {
        used: usize,
    },
    /// A head past `MAX_HEAD`.
    TooLarge,
    /// Not an upgrade, or a wrong one: why, in one sentence.
    Refused(String),
    /// A well-formed answer with another status than 101: the server said no.
    NotUpgraded(String),
}

/// Checks the server's answer to the upgrade request sent with `key` (and `protocol`).
pub fn check_answer(input: &[u8], key: &str, protocol: Option<&str>) -> Answer {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut resp = httparse::Response::new(&mut headers);
    let used = match resp.parse(input) {
        Ok(httparse::Status::Partial) if input.len() > MAX_HEAD => return Answer::TooLarge,
        Ok(httparse::Status::Partial) => return Answer::Incomplete,
        Ok(httparse::Status::Complete(n)) => n,
        Err(e) => {
            return Answer::Refused(format!(
                "the server did not answer the WebSocket upgrade with HTTP ({e})"
            ))
        }
    };
    let code = resp.code.unwrap_or(0);
    if code != 101 {
        return Answer::NotUpgraded(format!(
            "the server answered the WebSocket upgrade with status {code}, not 101"
        ));
    }
    let h = resp.headers;
    if !lists(header(h, "upgrade"), "websocket") || !lists(header(h, "connection"), "upgrade") {
        return Answer::Refused(
            "the server's 101 lacks `Upgrade: websocket` or `Connection: Upgrade`".into(),
        );
    }
    if header(h, "sec-websocket-accept") != Some(accept_key(key).as_str()) {
        return Answer::Refused(
            "the server's Sec-WebSocket-Accept does not match the key sent".into(),
        );
    }
    let chosen = header(h, "sec-websocket-protocol");
    match (protocol, chosen) {
        (None, None) => {}
        (Some(want), Some(got)) if want == got => {}
        (Some(want), got) => {
            return Answer::Refused(format!(
                "the server did not accept the subprotocol '{want}' (it answered {})",
                got.map_or("none".to_string(), |g| format!("'{g}'"))
            ))
        }
        (None, Some(got)) => {
            return Answer::Refused(format!(
                "the server chose the subprotocol '{got}', which was not offered"
            ))
        }
    }
    Answer::Upgraded { used }
}

/// What the server made of the client's request so far.
#[derive(Debug, PartialEq, Eq)]
pub enum Request {
    Incomplete,
    /// A valid upgrade of `used` bytes; the 101 is in `out`.
    Upgraded {
        used: usize,
    },
    /// A head past `MAX_HEAD`; a 431 is in `out`.
    TooLarge,
    /// Not a WebSocket upgrade; a 400 saying why is in `out`.
    Bad,
}

fn refuse(out: &mut Vec<u8>, status: &str, why: &str) {
    out.extend_from_slice(
        format!(
            "HTTP/1.1 {status}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\nSec-WebSocket-Version: 13\r\n\r\n{why}\n",
            why.len() + 1
        )
        .as_bytes(),
    );
}

/// Reads the client's upgrade request at the start of `input` and answers it into
/// `out`. `protocol`: the subprotocol this server speaks, chosen when offered.
pub fn answer_request(input: &[u8], out: &mut Vec<u8>, protocol: Option<&str>) -> Request {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut req = httparse::Request::new(&mut headers);
    let used = match req.parse(input) {
        Ok(httparse::Status::Partial) if input.len() > MAX_HEAD => {
            refuse(
                out,
                "431 Request Header Fields Too Large",
                "the request head is too large",
            );
            return Request::TooLarge;
        }
        Ok(httparse::Status::Partial) => return Request::Incomplete,
        Ok(httparse::Status::Complete(n)) => n,
        Err(_) => {
            refuse(
                out,
                "400 Bad Request",
                "not an HTTP/1.1 WebSocket upgrade request",
            );
            return Request::Bad;
        }
    };
    let h = req.headers;
    let why = if req.method != Some("GET") || req.version != Some(1) {
        Some("a WebSocket upgrade is an HTTP/1.1 GET")
    } else if !lists(header(h, "upgrade"), "websocket") {
        Some("missing `Upgrade: websocket`")
    } else if !lists(header(h, "connection"), "upgrade") {
        Some("missing `Connection: Upgrade`")
    } else if header(h, "sec-websocket-version") != Some("13") {
        Some("Sec-WebSocket-Version must be 13")
    } else {
        None
    };
    let key = header(h, "sec-websocket-key").filter(|k| {
        base64::engine::general_purpose::STANDARD
            .decode(k)
            .is_ok_and(|b| b.len() == 16)
    });
    let (Some(key), None) = (key, why) else {
        refuse(
            out,
            "400 Bad Request",
            why.unwrap_or("Sec-WebSocket-Key must be 16 bytes in base64"),
        );
        return Request::Bad;
    };
    let chosen = protocol.filter(|p| lists(header(h, "sec-websocket-protocol"), p));
    out.extend_from_slice(
        format!(
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: {}\r\n",
            accept_key(key)
        )
        .as_bytes(),
    );
    if let Some(p) = chosen {
        out.extend_from_slice(format!("Sec-WebSocket-Protocol: {p}\r\n").as_bytes());
    }
    out.extend_from_slice(b"\r\n");
    Request::Upgraded { used }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rfc_example_key() {
        // RFC 6455 1.3.
        assert_eq!(
            accept_key("dGhlIHNhbXBsZSBub25jZQ=="),
            "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
        );
        assert_eq!(client_key(7).len(), 24);
        assert_ne!(client_key(7), client_key(8));
    }

    #[test]
    fn both_sides_agree_at_every_split_point() {
        let key = client_key(1);
        let mut req = Vec::new();
        write_request(&mut req, "127.0.0.1:9", "/chat", &key, Some("echo"));
        for cut in 0..req.len() {
            let mut out = Vec::new();
            assert_eq!(
                answer_request(&req[..cut], &mut out, Some("echo")),
                Request::Incomplete
            );
            assert!(out.is_empty());
        }
        let mut resp = Vec::new();
        assert_eq!(
            answer_request(&req, &mut resp, Some("echo")),
            Request::Upgraded { used: req.len() }
        );
        for cut in 0..resp.len() {
            assert_eq!(
                check_answer(&resp[..cut], &key, Some("echo")),
                Answer::Incomplete
            );
        }
        resp.extend_from_slice(&[0x81, 0x00]);
        assert_eq!(
            check_answer(&resp, &key, Some("echo")),
            Answer::Upgraded {
                used: resp.len() - 2
            }
        );
        // The subprotocol asked for and not given, a wrong key.
        assert!(matches!(
            check_answer(&resp, &key, Some("chat")),
            Answer::Refused(_)
        ));
        assert!(matches!(
            check_answer(&resp, &client_key(2), Some("echo")),
            Answer::Refused(_)
        ));
    }

    #[test]
    fn bad_requests_and_answers() {
        let mut out = Vec::new();
        let r = answer_request(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", &mut out, None);
        assert_eq!(r, Request::Bad);
        assert!(out.starts_with(b"HTTP/1.1 400 "));
        out.clear();
        assert_eq!(
            answer_request(&[0x81, 0x85, 1, 2, 3, 4], &mut out, None),
            Request::Bad
        );
        out.clear();
        let big = vec![b'a'; MAX_HEAD + 1];
        assert_eq!(answer_request(&big, &mut out, None), Request::TooLarge);
        let mut long = b"GET / HTTP/1.1\r\nX: ".to_vec();
        long.resize(MAX_HEAD + 10, b'a');
        out.clear();
        assert_eq!(answer_request(&long, &mut out, None), Request::TooLarge);
        let key = client_key(3);
        assert!(matches!(
            check_answer(b"HTTP/1.1 200 OK\r\n\r\n", &key, None),
            Answer::NotUpgraded(s) if s.contains("status 200")
        ));
        assert!(matches!(
            check_answer(b"\x81\x05hello", &key, None),
            Answer::Refused(_)
        ));
    }
}
