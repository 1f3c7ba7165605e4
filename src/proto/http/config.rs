//! `wirebench http` and `wirebench serve http`, validated: the URL, the request to
//! send, what counts as a correct response. Every bad combination is refused here
//! with one sentence (exit 2).

use super::request::{self, RequestSpec};
use super::request_set::RequestSet;
use super::server::Limits;
use super::status::StatusSet;
use super::url::{self, Url};
use crate::config::{LoadConfig, LoadOverrides, ProtocolTiming};
use crate::error::{Error, Result};
use crate::flags::{LoadArgs, PacingArgs};
use crate::proto::base::{url_tls, Configured};
use crate::units::parse_bytes;
use clap::Args;
use serde_json::json;
use std::path::PathBuf;

pub use super::request::MAX_BODY;
/// Largest `--header-size`.
pub const MAX_TEST_HEADER: u64 = 1 << 20;

/// `wirebench http`'s own flags (the shared load flags are `LoadArgs`).
#[derive(Args, Debug)]
#[command(
    about = "Load an HTTP/1.1 or HTTP/2 server at URL (no URL: start the built-in one in this process)",
    after_long_help = "Examples:
  wirebench http                                          # the built-in server, 10 s
  wirebench http http://127.0.0.1:8080/ -t 2 -c 100 -d 30s  # as wrk -t2 -c100 -d30s
  wirebench http http://127.0.0.1:8081/ -c 50 --body-size 1k -R 20000 --json result.json
  wirebench http https://127.0.0.1:8443/ --insecure -c 10 -n 100000   # h2 if the server chooses it
  wirebench http https://example.test/ --connect-to 127.0.0.1:8443 --ca ca.pem --cert me.pem --key me.key"
)]
pub struct HttpArgs {
    /// http://HOST[:PORT][/PATH] or https://...; none starts the built-in server.
    pub url: Option<String>,
    /// Request method [default: POST with a body, GET without].
    #[arg(short = 'm', long)]
    pub method: Option<String>,
    /// A request header, "Name: value" (repeatable).
    #[arg(short = 'H', long = "header", value_name = "NAME: VALUE")]
    pub headers: Vec<String>,
    /// Send a body of N bytes (a repeating a-z pattern), e.g. 1k, 64k.
    #[arg(long, value_name = "N")]
    pub body_size: Option<String>,
    /// Send the contents of FILE as the body (at most 64 MiB, as --body-size).
    #[arg(long, value_name = "FILE", hide_short_help = true)]
    pub body: Option<PathBuf>,
    /// Add a `test-header` of N bytes, as hertz-benchmark does.
    #[arg(long, value_name = "N", hide_short_help = true)]
    pub header_size: Option<String>,
    /// Open a new connection for every request (Connection: close): a connection-rate test.
    #[arg(long, hide_short_help = true)]
    pub no_keepalive: bool,
    /// Statuses that count as correct, e.g. 200,204 or 2xx,3xx or 200-299 [default: 2xx].
    #[arg(long, value_name = "LIST", hide_short_help = true)]
    pub expect_status: Option<String>,
    /// Check that every response body equals the request body (an echo server).
    #[arg(long, hide_short_help = true)]
    pub expect_echo: bool,
    /// Speak only HTTP/2, each request a stream: h2c by prior knowledge for http://, h2 by ALPN for https:// (https:// offers h2 and http/1.1 without it).
    #[arg(long)]
    pub h2: bool,
    /// Speak only HTTP/1.1: for https://, offer only http/1.1 by ALPN.
    #[arg(long = "http1.1", hide_short_help = true)]
    pub http1_1: bool,
    /// What the server chose by ALPN before the run (`alpn::speak_h2`), not a flag.
    #[arg(skip)]
    pub alpn: Option<String>,
    /// With HTTP/2: streams in flight per connection, as h2load's -m [default: 1].
    #[arg(long, value_name = "N", hide_short_help = true)]
    pub max_streams: Option<usize>,
    /// Send the requests of FILE by weight: vegeta's targets format, or TOML (FILE.toml)
    /// with weights and checks (docs/http.md#request-sets); it gives the URLs.
    /// (`-n/--requests` is the count of requests, so the set's flag is `--request-set`.)
    #[arg(long, value_name = "FILE", hide_short_help = true)]
    pub request_set: Option<PathBuf>,
    /// Send the URL's requests (its path and Host) to the unix socket at PATH, as curl's and oha's --unix-socket.
    #[arg(long, value_name = "PATH", hide_short_help = true)]
    pub unix_socket: Option<PathBuf>,
    /// Connect through an HTTP CONNECT proxy: http://[USER:PASS@]HOST[:PORT], as curl's and oha's -x.
    #[arg(short = 'x', long, value_name = "URL", hide_short_help = true)]
    pub proxy: Option<String>,
    /// Built-in server only: its threads [default: the CPUs the load threads leave].
    #[arg(long, hide_short_help = true)]
    pub server_threads: Option<usize>,
}

/// `wirebench serve http`'s own flags (the shared server flags are `ServerArgs`).
#[derive(Args, Debug)]
#[command(
    about = "HTTP/1.1 server: POST echoes the body, GET / says hello, GET /bytes/N sends N bytes"
)]
pub struct ServeHttpArgs {
    /// Largest request head (request line and headers); beyond it: 431 and a close.
    #[arg(long, default_value = "16k")]
    pub max_header: String,
    /// Largest request body; beyond it: 413 and a close.
    #[arg(long, default_value = "16m")]
    pub max_body: String,
    /// Close a connection whose request head is not complete this long after its first byte (the first: after the accept); 0: never.
    #[arg(long, value_name = "DURATION", default_value = "10s")]
    pub header_timeout: String,
    /// HTTP/2: streams a connection may have open at once (SETTINGS_MAX_CONCURRENT_STREAMS); past it a stream is refused.
    #[arg(long, value_name = "N", default_value_t = 100, hide_short_help = true)]
    pub max_streams: u32,
    /// HTTP/2: close a connection whose responses wait this long on a flow-control window of 0 (GOAWAY); 0: never.
    #[arg(
        long,
        value_name = "DURATION",
        default_value = "10s",
        hide_short_help = true
    )]
    pub h2_window_timeout: String,
    #[command(flatten)]
    pub pacing: PacingArgs,
}

/// `wirebench http`'s own settings, validated.
#[derive(Clone, Debug)]
pub struct HttpConfig {
    /// None: start the built-in server.
    pub url: Option<Url>,
    pub method: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// Where the body came from, for the config table.
    pub body_source: String,
    pub test_header: usize,
    pub keepalive: bool,
    pub accept: StatusSet,
    pub accept_text: String,
    pub expect_echo: bool,
    /// HTTP/2 (h2c by prior knowledge, or h2 by ALPN over TLS) instead of HTTP/1.1.
    pub h2: bool,
    /// What the server chose by ALPN before the run, when the load asked
    /// (`alpn::speak_h2`): "h2", "http/1.1", "none".
    pub alpn: Option<String>,
    /// `--request-set`: the requests sent by weight, instead of one request.
    pub set: Option<RequestSet>,
}

fn size_flag(flag: &str, text: &str, max: u64) -> Result<usize> {
    let n = parse_bytes(text).map_err(|e| Error::usage(format!("{flag}: {e}")))?;
    if n > max {
        return Err(Error::usage(format!("{flag} must be at most {max} bytes")));
    }
    Ok(n as usize)
}

pub fn parse_header(text: &str) -> Result<(String, String)> {
    let bad = || {
        Error::usage(format!(
            "-H '{text}' is not a header: write it as \"Name: value\""
        ))
    };
    let (name, value) = text.split_once(':').ok_or_else(bad)?;
    let value = value.trim();
    if !request::is_token(name) || value.bytes().any(|b| b == b'\r' || b == b'\n' || b == 0) {
        return Err(bad());
    }
    Ok((name.to_string(), value.to_string()))
}

/// `--h2` and `--max-streams`, checked: the requests in flight per connection they
/// make (streams), or none for HTTP/1.1.
fn h2_streams(a: &HttpArgs, shared: &LoadArgs, url: Option<&Url>) -> Result<Option<usize>> {
    if !a.h2 {
        if a.max_streams.is_some() {
            return Err(Error::usage(
                "--max-streams counts HTTP/2 streams: add --h2, or give an https:// URL of a server that speaks HTTP/2 (HTTP/1.1 pipelines with --pipeline)",
            ));
        }
        return Ok(None);
    }
    let streams = a.max_streams.unwrap_or(1);
    if streams == 0 {
        return Err(Error::usage("--max-streams must be at least 1"));
    }
    if streams > crate::config::MAX_PIPELINE {
        return Err(Error::usage(format!(
            "--max-streams must be at most {} streams per connection",
            crate::config::MAX_PIPELINE
        )));
    }
    let refuse = |why: &str| Err(Error::usage(why.to_string()));
    match url {
        None => refuse("the built-in server speaks HTTP/1.1: give --h2 the http:// or https:// URL of an HTTP/2 server"),
        _ if shared.pipeline != 1 => {
            refuse("with --h2, requests in flight per connection are streams: use --max-streams, not --pipeline")
        }
        _ if a.no_keepalive => refuse("--no-keepalive is HTTP/1.1's: HTTP/2 keeps its connections"),
        _ if a.request_set.is_some() => refuse(
            "--request-set sends HTTP/1.1 requests: drop --h2 (an HTTP/2 request set is not supported)",
        ),
        _ => Ok(Some(streams)),
    }
}

impl HttpConfig {
    pub fn from_args(a: &HttpArgs, shared: &LoadArgs) -> Result<Configured<Self>> {
        let set = a
            .request_set
            .as_deref()
            .map(|f| requests_flag(a, f))
            .transpose()?;
        let url = match &set {
            Some(s) => Some(s.origin().clone()),
            None => a
                .url
                .as_deref()
                .map(url::parse)
                .transpose()
                .map_err(Error::usage)?,
        };
        let mut overrides = LoadOverrides::default();
        if let Some(u) = &url {
            url_tls(shared, u.tls, ("http", "https"), &mut overrides)?;
        }
        overrides.pipeline = h2_streams(a, shared, url.as_ref())?;
        let load = LoadConfig::from_args(shared, overrides)?;

        if a.body.is_some() && a.body_size.is_some() {
            return Err(Error::usage("choose one of --body and --body-size"));
        }
        let (body, body_source) = match (&a.body, &a.body_size) {
            (Some(path), _) => {
                let b = request::read_body(path, "the --body file").map_err(Error::usage)?;
                let src = format!("{} ({} bytes)", path.display(), b.len());
                (b, src)
            }
            (None, Some(n)) => {
                let n = size_flag("--body-size", n, MAX_BODY)?;
                (request::pattern_body(n), format!("{n} bytes (a-z pattern)"))
            }
            (None, None) => (Vec::new(), "none".to_string()),
        };
        let has_body = a.body.is_some() || a.body_size.is_some();
        let method = match &a.method {
            Some(m) => {
                if !request::is_token(m) {
                    return Err(Error::usage(format!("-m '{m}' is not an HTTP method")));
                }
                m.to_ascii_uppercase()
            }
            None if has_body => "POST".to_string(),
            None => "GET".to_string(),
        };
        if method == "HEAD" && has_body {
            return Err(Error::usage(
                "a HEAD request carries no body: drop --body/--body-size",
            ));
        }
        let headers = a
            .headers
            .iter()
            .map(|h| parse_header(h))
            .collect::<Result<Vec<_>>>()?;
        for (n, _) in &headers {
            if n.eq_ignore_ascii_case("transfer-encoding")
                || n.eq_ignore_ascii_case("content-length")
            {
                return Err(Error::usage(format!(
                    "-H '{n}' is set by wirebench from the body: use --body or --body-size instead"
                )));
            }
        }
        let test_header = a
            .header_size
            .as_deref()
            .map(|t| size_flag("--header-size", t, MAX_TEST_HEADER))
            .transpose()?
            .unwrap_or(0);
        if a.no_keepalive && load.shape.pipeline > 1 {
            return Err(Error::usage(
                "--no-keepalive sends one request per connection: it does not combine with --pipeline above 1",
            ));
        }
        if a.expect_echo && !has_body {
            return Err(Error::usage(
                "--expect-echo compares response bodies with the request body: give one with --body-size or --body",
            ));
        }
        let (accept, accept_text) = match &a.expect_status {
            Some(t) => (StatusSet::parse(t).map_err(Error::usage)?, t.clone()),
            None => (StatusSet::default(), "2xx".to_string()),
        };
        let target = url.as_ref().map(|u| u.host_port());
        let unix_socket = a.unix_socket.as_deref().map(|p| {
            let host = url.as_ref().map(|u| u.host.as_str());
            (p, host, "wirebench http http://localhost/")
        });
        let base = crate::proto::proxied::aim_url(
            load,
            a.proxy.as_deref(),
            target.as_deref(),
            url.as_ref().map(|u| u.host.as_str()),
            unix_socket,
            a.server_threads,
            shared,
        )?;
        Ok(Configured {
            base,
            own: HttpConfig {
                url,
                method,
                headers,
                body,
                body_source,
                test_header,
                keepalive: !a.no_keepalive,
                accept,
                accept_text,
                expect_echo: a.expect_echo,
                h2: a.h2,
                alpn: a.alpn.clone(),
                set,
            },
        })
    }

    /// The request every connection sends, for a server at `authority` and `path`.
    pub fn request(&self, authority: &str, path: &str) -> RequestSpec {
        RequestSpec {
            method: self.method.clone(),
            path: path.to_string(),
            authority: authority.to_string(),
            headers: self.headers.clone(),
            test_header: self.test_header,
            body: self.body.clone(),
            close: !self.keepalive,
        }
    }

    /// Its lines of the config block, after the shared ones (`Base::to_json`).
    pub fn add_json(&self, v: &mut serde_json::Value) {
        v["url"] = json!(self.url.as_ref().map(|u| format!(
            "{}://{}{}",
            if u.tls { "https" } else { "http" },
            u.authority(),
            u.path
        )));
        v["method"] = json!(self.method);
        v["headers"] = json!(self
            .headers
            .iter()
            .map(|(n, v)| format!("{n}: {v}"))
            .collect::<Vec<_>>());
        v["body_bytes"] = json!(self.body.len());
        v["test_header_bytes"] = json!(self.test_header);
        v["keepalive"] = json!(self.keepalive);
        v["expect_status"] = json!(self.accept_text);
        v["expect_echo"] = json!(self.expect_echo);
        v["http_version"] = json!(if self.h2 { "2" } else { "1.1" });
        v["alpn"] = json!(self.alpn);
        if let Some(set) = &self.set {
            v["request_set"] = json!({
                "file": set.file.display().to_string(),
                "requests": set.entries.len(),
            });
        }
    }
}

/// `--request-set FILE`, read and validated, once the flags it replaces are known to be
/// absent: the set gives the URLs, methods, bodies (and statuses it accepts).
fn requests_flag(a: &HttpArgs, file: &std::path::Path) -> Result<RequestSet> {
    let given = [
        (a.url.is_some(), "a URL"),
        (a.method.is_some(), "-m"),
        (a.body.is_some(), "--body"),
        (a.body_size.is_some(), "--body-size"),
        (a.header_size.is_some(), "--header-size"),
        (a.expect_echo, "--expect-echo"),
    ];
    if let Some((_, what)) = given.iter().find(|(on, _)| *on) {
        return Err(Error::usage(format!(
            "--request-set gives each request's URL, method and body: drop {what}"
        )));
    }
    RequestSet::load(file)
}

/// `wirebench serve http`, validated: its limits and timing.
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
pub struct ServeHttpConfig {
    pub limits: Limits,
    pub timing: ProtocolTiming,
}

impl ServeHttpConfig {
    pub fn from_args(a: &ServeHttpArgs) -> Result<Self> {
        Ok(ServeHttpConfig {
            limits: serve_limits(a)?,
            timing: ProtocolTiming {
                header_timeout: crate::config::timeout_flag("--header-timeout", &a.header_timeout)?,
                pacing: crate::config::pacing(&a.pacing)?,
            },
        })
    }
}

/// `wirebench serve http`'s own limits.
fn serve_limits(a: &ServeHttpArgs) -> Result<Limits> {
    let max_head = size_flag("--max-header", &a.max_header, 1 << 20)?;
    let max_body = size_flag("--max-body", &a.max_body, 1 << 30)?;
    if max_head < 256 {
        return Err(Error::usage("--max-header must be at least 256 bytes"));
    }
    if !(1..=1_000_000).contains(&a.max_streams) {
        return Err(Error::usage("--max-streams must be between 1 and 1000000"));
    }
    let window_timeout = crate::config::timeout_flag("--h2-window-timeout", &a.h2_window_timeout)?;
    Ok(Limits {
        max_head,
        max_body,
        max_streams: a.max_streams,
        window_timeout_ms: window_timeout.map_or(0, |d| d.as_millis().max(1) as u64),
    })
}
