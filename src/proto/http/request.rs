//! The request a load sends, serialized once per run: every connection copies the
//! same bytes, so no request is ever built twice.

use std::path::Path;

/// Largest request body a load sends (`--body-size`, a `--body` file, a request set's
/// body file: a larger file, or an endless one such as /dev/zero, is refused after
/// reading this + 1 bytes).
pub const MAX_BODY: u64 = 64 << 20;

/// A body file's bytes, at most `MAX_BODY`; `what` names it in the refusal ("the
/// --body file"). Never reads more than `MAX_BODY + 1` bytes, so a FIFO, a device or
/// a growing file cannot exhaust memory before the run.
pub fn read_body(path: &Path, what: &str) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let shown = path.display();
    let unreadable = |e: std::io::Error| format!("cannot read {what} {shown}: {e}");
    let too_large = || format!("{what} {shown} is larger than {MAX_BODY} bytes (64 MiB)");
    let file = std::fs::File::open(path).map_err(unreadable)?;
    let meta = file.metadata().map_err(unreadable)?;
    if meta.is_dir() {
        return Err(format!("{what} {shown} is a directory"));
    }
    if meta.is_file() && meta.len() > MAX_BODY {
        return Err(too_large());
    }
    let mut b = Vec::new();
    file.take(MAX_BODY + 1)
        .read_to_end(&mut b)
        .map_err(unreadable)?;
    if b.len() as u64 > MAX_BODY {
        return Err(too_large());
    }
    Ok(b)
}

/// Whether `s` is an HTTP token (a method, a header name).
pub fn is_token(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// What goes into the request.
#[derive(Clone, Debug)]
pub struct RequestSpec {
    pub method: String,
    pub path: String,
    /// The Host header's value (unless `headers` sets one).
    pub authority: String,
    /// User headers as (name, value), in order.
    pub headers: Vec<(String, String)>,
    /// `test-header` of this many bytes, as hertz-benchmark sends.
    pub test_header: usize,
    pub body: Vec<u8>,
    /// Ask the server to close after each response.
    pub close: bool,
}

fn has(headers: &[(String, String)], name: &str) -> bool {
    headers.iter().any(|(n, _)| n.eq_ignore_ascii_case(name))
}

/// The request's bytes.
pub fn serialize(s: &RequestSpec) -> Vec<u8> {
    let mut out = Vec::with_capacity(256 + s.test_header + s.body.len());
    let line = |out: &mut Vec<u8>, name: &str, value: &str| {
        out.extend_from_slice(name.as_bytes());
        out.extend_from_slice(b": ");
        out.extend_from_slice(value.as_bytes());
        out.extend_from_slice(b"\r\n");
    };
    out.extend_from_slice(s.method.as_bytes());
    out.push(b' ');
    out.extend_from_slice(s.path.as_bytes());
    out.extend_from_slice(b" HTTP/1.1\r\n");
    if !has(&s.headers, "host") {
        line(&mut out, "Host", &s.authority);
    }
    // No User-Agent unless the user gives one (`-H`), as wrk: a server that logs
    // each request (nginx's default access log) would otherwise parse and write
    // it per request, and a generator must not cost the server more than its
    // peer does (BENCHMARKS.md#design-choices-and-the-measurements-behind-them).
    for (n, v) in &s.headers {
        line(&mut out, n, v);
    }
    if s.test_header > 0 {
        line(&mut out, "test-header", &"a".repeat(s.test_header));
    }
    // A body always travels with its length; so does an empty POST or PUT, which
    // some servers refuse without one (411).
    let wants_length = !s.body.is_empty() || matches!(s.method.as_str(), "POST" | "PUT" | "PATCH");
    if wants_length && !has(&s.headers, "content-length") {
        line(&mut out, "Content-Length", &s.body.len().to_string());
    }
    if s.close && !has(&s.headers, "connection") {
        line(&mut out, "Connection", "close");
    }
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(&s.body);
    out
}

/// The body of `--body-size N`: a repeating, recognizable pattern.
pub fn pattern_body(n: usize) -> Vec<u8> {
    (0..n).map(|i| b'a' + (i % 26) as u8).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_bytes() {
        let s = RequestSpec {
            method: "POST".into(),
            path: "/echo".into(),
            authority: "127.0.0.1:8080".into(),
            headers: vec![("X-A".into(), "1".into())],
            test_header: 3,
            body: b"hi".to_vec(),
            close: true,
        };
        // No User-Agent of ours: only the headers HTTP/1.1 needs (Host) and the user's.
        let expected =
            "POST /echo HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nX-A: 1\r\ntest-header: aaa\r\nContent-Length: 2\r\nConnection: close\r\n\r\nhi";
        assert_eq!(String::from_utf8(serialize(&s)).unwrap(), expected);
        // A user's Host header replaces ours.
        let s = RequestSpec {
            method: "GET".into(),
            path: "/".into(),
            authority: "x".into(),
            headers: vec![
                ("host".into(), "y".into()),
                ("user-agent".into(), "z".into()),
            ],
            test_header: 0,
            body: vec![],
            close: false,
        };
        assert_eq!(
            serialize(&s),
            b"GET / HTTP/1.1\r\nhost: y\r\nuser-agent: z\r\n\r\n"
        );
    }
}
