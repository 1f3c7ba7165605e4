//! `wirebench http --h2` as a `Protocol`: HTTP/1.1's flags, config, figures, result
//! blocks and lines (the result's kind stays `http`), with the HTTP/2 client
//! (`h2_client.rs`) as its session. `commands::run` picks it when `--h2` is given,
//! so HTTP/1.1's session and its hot path stay as they are.

use super::config::{HttpArgs, HttpConfig, ServeHttpArgs, ServeHttpConfig};
use super::figures::StatusCounts;
use super::h2_client::{H2Factory, H2Shared, RECV_WINDOW};
use super::plugin::Http;
use super::request::RequestSpec;
use super::server::HttpHandlerFactory;
use crate::config::ProtocolTiming;
use crate::engine::EngineOutput;
use crate::error::Result;
use crate::flags::LoadArgs;
use crate::proto::h2::hpack;
use crate::proto::plugin::{Aim, ConfigOf, Protocol};
use crate::stats::{RunResult, Unit};
use std::sync::Arc;

pub struct Http2;

/// Headers HTTP/2 forbids (RFC 9113 8.2.2) or carries as pseudo-headers: not sent.
const NOT_SENT: &[&str] = &[
    "host",
    "connection",
    "keep-alive",
    "proxy-connection",
    "transfer-encoding",
    "upgrade",
];

/// The request's header block (RFC 9113 8.3.1): the pseudo-headers, then `-H`'s
/// headers with lower-case names, the test header and the body's length.
pub fn header_block(s: &RequestSpec, tls: bool) -> Vec<u8> {
    let mut owned: Vec<(String, String)> = vec![
        (":method".into(), s.method.clone()),
        (":scheme".into(), if tls { "https" } else { "http" }.into()),
        (":authority".into(), s.authority.clone()),
        (":path".into(), s.path.clone()),
    ];
    for (n, v) in &s.headers {
        let n = n.to_ascii_lowercase();
        if !NOT_SENT.contains(&n.as_str()) {
            owned.push((n, v.clone()));
        }
    }
    if s.test_header > 0 {
        owned.push(("test-header".into(), "a".repeat(s.test_header)));
    }
    if !s.body.is_empty() || matches!(s.method.as_str(), "POST" | "PUT" | "PATCH") {
        owned.push(("content-length".into(), s.body.len().to_string()));
    }
    hpack::encode_strings(&owned)
}

/// How the load came to speak HTTP/2: over TLS by ALPN, or h2c by prior knowledge.
fn how_http2(cfg: &ConfigOf<Http2>) -> &'static str {
    match (cfg.base.load.tls.is_some(), cfg.own.alpn.is_some()) {
        (true, true) => "HTTP/2 over TLS (h2, the server's choice by ALPN)",
        (true, false) => "HTTP/2 over TLS (h2 by ALPN)",
        (false, _) => "HTTP/2 over plain TCP (h2c, prior knowledge)",
    }
}

impl Protocol for Http2 {
    const NAME: &'static str = "http";
    type Args = HttpArgs;
    type ServeArgs = ServeHttpArgs;
    type Config = HttpConfig;
    type ServeConfig = ServeHttpConfig;
    type Client = H2Factory;
    type Server = HttpHandlerFactory;

    fn config(args: &HttpArgs, shared: &LoadArgs) -> Result<ConfigOf<Self>> {
        Http::config(args, shared)
    }

    fn builtin_server(cfg: &ConfigOf<Self>) -> Self::Server {
        Http::builtin_server(cfg)
    }

    fn client(cfg: &ConfigOf<Self>, aim: &Aim) -> H2Factory {
        let own = &cfg.own;
        let (authority, path) = super::plugin::authority_path(own, aim);
        let spec = own.request(&authority, &path);
        H2Factory(Arc::new(H2Shared {
            block: header_block(&spec, aim.tls),
            body: spec.body,
            head: own.method == "HEAD",
            accept: own.accept,
            echo: own.expect_echo,
            stream_window: RECV_WINDOW,
            conn_window: RECV_WINDOW,
        }))
    }

    fn unit(cfg: &ConfigOf<Self>) -> Unit {
        Http::unit(cfg)
    }

    fn target_text(cfg: &ConfigOf<Self>, aim: &Aim) -> String {
        Http::target_text(cfg, aim)
    }

    fn own_rows(cfg: &ConfigOf<Self>, _aim: &Aim) -> Vec<(&'static str, String)> {
        let own = &cfg.own;
        let echo = if own.expect_echo {
            ", body = request body"
        } else {
            ""
        };
        vec![
            (
                "request",
                format!("{} with body {}", own.method, own.body_source),
            ),
            (
                "protocol",
                format!(
                    "{}, {} streams per connection",
                    how_http2(cfg),
                    cfg.base.load.shape.pipeline
                ),
            ),
            ("expect", format!("status {}{echo}", own.accept_text)),
        ]
    }

    fn own_json(cfg: &ConfigOf<Self>, v: &mut serde_json::Value) {
        Http::own_json(cfg, v)
    }

    /// The status classes and codes, as HTTP/1.1's (no request set: `--h2` refuses one).
    fn finish(_cfg: &ConfigOf<Self>, out: &EngineOutput<StatusCounts>, result: &mut RunResult) {
        for (name, block) in out.figures.blocks() {
            result.extras.insert(name.to_string(), block);
        }
    }

    fn summary_lines(cfg: &ConfigOf<Self>, r: &RunResult) -> String {
        Http::summary_lines(cfg, r)
    }

    fn serve_config(args: &ServeHttpArgs) -> Result<ServeHttpConfig> {
        Http::serve_config(args)
    }

    fn serve_timing(cfg: &ServeHttpConfig) -> ProtocolTiming {
        Http::serve_timing(cfg)
    }

    fn server(cfg: &ServeHttpConfig) -> Self::Server {
        Http::server(cfg)
    }

    fn result_blocks_schema() -> &'static str {
        Http::result_blocks_schema()
    }

    const CLIENT_ALPN: &'static [&'static [u8]] = &[b"h2"];
}
