//! `--request-set FILE`: a set of requests a load sends by weight, read from vegeta's
//! targets file (`targets.rs`) or its TOML form (`requests_toml.rs`, a file ending in
//! `.toml`), validated here once: every problem is `FILE:LINE: sentence`, exit 2.
//!
//! One origin per run: every URL has the first one's scheme, host and port (a run
//! has one target address and one TLS setting); paths, methods, headers (Host too),
//! bodies and checks differ freely.

use super::raw_entry::{Body, RawEntry};
use super::request::{self, RequestSpec};
use super::status::StatusSet;
use super::url::{self, Url};
use crate::error::{Error, Result};
use std::path::{Path, PathBuf};

/// Most requests in a set: each keeps its own figures (and latency histogram) per
/// load thread.
pub const MAX_ENTRIES: usize = 1024;
/// Most bytes a set's requests take together, encoded (each body is at most
/// `request::MAX_BODY`).
pub const MAX_SET_BYTES: usize = 256 << 20;
/// Most entries of the weight table, once the weights are divided by their greatest
/// common divisor: every connection walks it.
pub const MAX_WEIGHT_SUM: u64 = 1 << 20;

/// One request of the set, validated.
#[derive(Clone, Debug)]
pub struct Entry {
    pub name: String,
    pub method: String,
    pub url: Url,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    pub weight: u32,
    /// None: the run's `--expect-status`.
    pub accept: Option<(StatusSet, String)>,
    pub body_contains: Option<Vec<u8>>,
}

/// A request set, validated: at least one entry, one origin, a weight above 0.
#[derive(Clone, Debug)]
pub struct RequestSet {
    pub file: PathBuf,
    pub entries: Vec<Entry>,
}

impl RequestSet {
    /// The origin every request goes to (the first URL's scheme, host and port).
    pub fn origin(&self) -> &Url {
        &self.entries[0].url
    }

    /// Reads and validates `file`: TOML when its name ends in `.toml`, else vegeta's
    /// targets format.
    pub fn load(file: &Path) -> Result<RequestSet> {
        let shown = file.display();
        let text = std::fs::read_to_string(file).map_err(|e| {
            Error::usage(format!("cannot read the --request-set file {shown}: {e}"))
        })?;
        let toml = file.extension().is_some_and(|e| e == "toml");
        let parsed = if toml {
            super::requests_toml::parse(&text)
        } else {
            super::targets::parse(&text)
        };
        let raw = parsed.map_err(|(line, why)| Error::usage(format!("{shown}:{line}: {why}")))?;
        Self::from_raw(file, raw)
    }

    /// `raw` (read from `file`) validated.
    pub fn from_raw(file: &Path, raw: Vec<RawEntry>) -> Result<RequestSet> {
        let shown = file.display();
        if raw.is_empty() {
            return Err(Error::usage(format!(
                "the --request-set file {shown} holds no request"
            )));
        }
        if raw.len() > MAX_ENTRIES {
            return Err(Error::usage(format!(
                "the --request-set file {shown} holds {} requests: at most {MAX_ENTRIES}",
                raw.len()
            )));
        }
        let at = |line: usize, why: String| Error::usage(format!("{shown}:{line}: {why}"));
        let mut entries: Vec<Entry> = Vec::with_capacity(raw.len());
        let mut bytes = 0usize;
        for r in raw {
            let line = r.line;
            let e = entry(r).map_err(|(l, why)| at(l, why))?;
            if let Some(first) = entries.first() {
                if (first.url.tls, &first.url.host, first.url.port)
                    != (e.url.tls, &e.url.host, e.url.port)
                {
                    return Err(at(
                        line,
                        format!(
                            "{} is another origin than the first request's {}: a run sends every request to one scheme, host and port",
                            origin_text(&e.url),
                            origin_text(&first.url)
                        ),
                    ));
                }
            }
            bytes = bytes.saturating_add(e.body.len() + 1024);
            if bytes > MAX_SET_BYTES {
                return Err(at(
                    line,
                    format!("the requests up to here take more than {MAX_SET_BYTES} bytes (256 MiB) together"),
                ));
            }
            entries.push(e);
        }
        if entries.iter().all(|e| e.weight == 0) {
            return Err(Error::usage(format!(
                "every request of {shown} has weight 0: give at least one a weight above 0"
            )));
        }
        let sum = reduced_weights(&entries)
            .iter()
            .map(|w| *w as u64)
            .sum::<u64>();
        if sum > MAX_WEIGHT_SUM {
            return Err(Error::usage(format!(
                "the weights of {shown} add up to {sum} once divided by their greatest common divisor: at most {MAX_WEIGHT_SUM}"
            )));
        }
        Ok(RequestSet {
            file: file.to_path_buf(),
            entries,
        })
    }

    /// The request bytes of every entry, in order, for a server at the set's origin:
    /// `extra` headers (`-H`) after each entry's own; `close` asks for a close after
    /// each response (`--no-keepalive`).
    pub fn encode(&self, extra: &[(String, String)], close: bool) -> Vec<Vec<u8>> {
        self.entries
            .iter()
            .map(|e| {
                let mut headers = e.headers.clone();
                headers.extend_from_slice(extra);
                request::serialize(&RequestSpec {
                    method: e.method.clone(),
                    path: e.url.path.clone(),
                    authority: e.url.authority(),
                    headers,
                    test_header: 0,
                    body: e.body.clone(),
                    close,
                })
            })
            .collect()
    }
}

/// The weights divided by their greatest common divisor (0 stays 0).
pub fn reduced_weights(entries: &[Entry]) -> Vec<u32> {
    let gcd = |mut a: u32, mut b: u32| {
        while b != 0 {
            (a, b) = (b, a % b);
        }
        a
    };
    let g = entries.iter().fold(0, |g, e| gcd(g, e.weight)).max(1);
    entries.iter().map(|e| e.weight / g).collect()
}

/// `scheme://host:port`.
fn origin_text(u: &Url) -> String {
    let scheme = if u.tls { "https" } else { "http" };
    format!("{scheme}://{}", u.host_port())
}

/// A header `Name: value` as `-H` takes it: a token name, a value without CR, LF or
/// NUL, and never Content-Length or Transfer-Encoding (wirebench frames the body).
fn header(name: &str, value: &str) -> std::result::Result<(), String> {
    if !request::is_token(name) || value.bytes().any(|b| b == b'\r' || b == b'\n' || b == 0) {
        return Err(format!(
            "'{name}: {value}' is not a header: write it as \"Name: value\""
        ));
    }
    if name.eq_ignore_ascii_case("content-length") || name.eq_ignore_ascii_case("transfer-encoding")
    {
        return Err(format!(
            "the header {name} is set by wirebench from the body: leave it out"
        ));
    }
    Ok(())
}

/// One entry validated, or the line of its problem and the sentence.
fn entry(r: RawEntry) -> std::result::Result<Entry, (usize, String)> {
    let url = url::parse(&r.url).map_err(|why| (r.line, why))?;
    for (n, v, line) in &r.headers {
        header(n, v).map_err(|why| (*line, why))?;
    }
    let body = match &r.body {
        Body::None => Vec::new(),
        Body::Inline(b) => b.clone(),
        Body::File(path, line) => {
            request::read_body(path, "the body file").map_err(|why| (*line, why))?
        }
    };
    let has_body = r.body != Body::None;
    let method = match r.method.as_str() {
        "" if has_body => "POST".to_string(),
        "" => "GET".to_string(),
        m if m
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b == b'-' || b == b'_') =>
        {
            m.to_string()
        }
        m => {
            return Err((
                r.line,
                format!("'{m}' is not a method: write it in capitals, as GET or POST"),
            ))
        }
    };
    if method == "HEAD" && has_body {
        return Err((r.line, "a HEAD request carries no body".to_string()));
    }
    let accept = match &r.status {
        Some((text, line)) => Some((
            StatusSet::parse(text).map_err(|why| (*line, why))?,
            text.clone(),
        )),
        None => None,
    };
    if let Some((s, line)) = &r.body_contains {
        if s.is_empty() || s.len() > 4096 {
            return Err((*line, "body_contains must hold 1 to 4096 bytes".to_string()));
        }
    }
    Ok(Entry {
        name: r.name.unwrap_or_else(|| format!("{method} {}", url.path)),
        method,
        url,
        headers: r.headers.into_iter().map(|(n, v, _)| (n, v)).collect(),
        body,
        weight: r.weight,
        accept,
        body_contains: r.body_contains.map(|(s, _)| s.into_bytes()),
    })
}
