//! HTTP/1.1 as a `Protocol`: `wirebench http` and `wirebench serve http`.

use super::client::HttpFactory;
use super::config::{HttpArgs, HttpConfig, ServeHttpArgs, ServeHttpConfig};
use super::figures::{counts_of, StatusCounts, STATUS_CLASSES, STATUS_CODES};
use super::request;
use super::server::{HttpHandlerFactory, Limits};
use crate::config::{LoadConfig, ProtocolTiming};
use crate::engine::{EngineOutput, LoadSpec};
use crate::error::Result;
use crate::flags::LoadArgs;
use crate::proto::plugin::{Aim, Protocol};
use crate::report::format::{count_of, group, seconds};
use crate::stats::{RunResult, Unit};
use std::fmt::Write as _;
use std::net::SocketAddr;

pub struct Http;

/// The authority (Host) and path requests go to: the URL's, or the built-in server's.
fn authority_path(cfg: &HttpConfig, aim: &Aim) -> (String, String) {
    match &cfg.url {
        Some(u) => (u.authority(), u.path.clone()),
        None => (aim.addr.to_string(), "/".to_string()),
    }
}

/// The request every connection sends, serialized once.
fn wire(cfg: &HttpConfig, aim: &Aim) -> Vec<u8> {
    let (authority, path) = authority_path(cfg, aim);
    request::serialize(&cfg.request(&authority, &path))
}

impl Protocol for Http {
    const NAME: &'static str = "http";
    type Args = HttpArgs;
    type ServeArgs = ServeHttpArgs;
    type Config = HttpConfig;
    type ServeConfig = ServeHttpConfig;
    type Client = HttpFactory;
    type Server = HttpHandlerFactory;

    fn config(args: &HttpArgs, shared: &LoadArgs) -> Result<HttpConfig> {
        HttpConfig::from_args(args, shared)
    }

    fn load(cfg: &HttpConfig) -> &LoadConfig {
        &cfg.load
    }

    fn target(cfg: &HttpConfig) -> Option<(SocketAddr, String)> {
        match (&cfg.url, cfg.addr) {
            (Some(u), Some(addr)) => Some((addr, u.host.clone())),
            _ => None,
        }
    }

    fn server_threads(cfg: &HttpConfig) -> usize {
        cfg.server_threads
    }

    fn builtin_server(cfg: &HttpConfig) -> Self::Server {
        // The built-in server takes whatever body this load sends.
        HttpHandlerFactory::new(Limits {
            max_body: (cfg.body.len() + 1).max(Limits::default().max_body),
            ..Limits::default()
        })
    }

    fn client(cfg: &HttpConfig, aim: &Aim) -> Self::Client {
        HttpFactory::new(
            wire(cfg, aim),
            cfg.method == "HEAD",
            cfg.accept,
            cfg.expect_echo.then(|| cfg.body.clone()),
            cfg.keepalive,
        )
    }

    fn unit(_cfg: &HttpConfig) -> Unit {
        Unit::new("requests", "answered", true)
    }

    fn target_text(cfg: &HttpConfig, aim: &Aim) -> String {
        let (authority, path) = authority_path(cfg, aim);
        let scheme = if aim.tls { "https" } else { "http" };
        format!("{scheme}://{authority}{path}")
    }

    fn plan_rows(cfg: &HttpConfig, aim: &Aim) -> Vec<(&'static str, String)> {
        let l = &cfg.load;
        let url = Self::target_text(cfg, aim);
        let target = match &cfg.url {
            Some(_) => format!("{url} ({})", aim.addr),
            None => format!(
                "{url} (built-in server, {})",
                count_of(cfg.server_threads as u64, "thread")
            ),
        };
        vec![
            ("target", target),
            (
                "request",
                format!(
                    "{} with body {}, {} bytes on the wire",
                    cfg.method,
                    cfg.body_source,
                    wire(cfg, aim).len()
                ),
            ),
            ("threads", l.shape.threads.to_string()),
            ("connections", l.connections_text()),
            ("pipeline", l.pipeline_text()),
            (
                "keep-alive",
                if cfg.keepalive {
                    "on".into()
                } else {
                    "off: a new connection per request".into()
                },
            ),
            ("plan", l.plan_text()),
            ("rate", l.rate_text("requests/s")),
            (
                "expect",
                format!(
                    "status {}{}",
                    cfg.accept_text,
                    if cfg.expect_echo {
                        ", body = request body"
                    } else {
                        ""
                    }
                ),
            ),
            ("timeout", seconds(l.shape.timeout)),
            ("warmup", seconds(l.shape.warmup)),
            ("nodelay", l.nodelay.to_string()),
        ]
    }

    fn config_json(cfg: &HttpConfig) -> serde_json::Value {
        cfg.to_json()
    }

    /// Keep-alive off: one request per connection.
    fn connection_policy(cfg: &HttpConfig, spec: &mut LoadSpec) {
        spec.per_connection = (!cfg.keepalive).then_some(1);
    }

    fn finish(_cfg: &HttpConfig, out: &EngineOutput<StatusCounts>, result: &mut RunResult) {
        for (name, block) in out.figures.blocks() {
            result.extras.insert(name.to_string(), block);
        }
    }

    /// Status classes and codes, then TPS, TP99 and TP999 the way hertz-benchmark
    /// prints them.
    fn summary_lines(cfg: &HttpConfig, r: &RunResult) -> String {
        let mut s = String::new();
        if let Some(classes) = counts_of(r, STATUS_CLASSES) {
            let list: Vec<String> = classes
                .iter()
                .filter(|(k, n)| k.as_str() != "1xx" || **n > 0)
                .map(|(k, n)| format!("{k} {}", group(*n)))
                .collect();
            let _ = writeln!(s, "status:       {}", list.join(", "));
        }
        if let Some(codes) = counts_of(r, STATUS_CODES).filter(|c| !c.is_empty()) {
            let list: Vec<String> = codes
                .iter()
                .map(|(k, n)| format!("{k} {}", group(*n)))
                .collect();
            let _ = writeln!(s, "codes:        {}", list.join(", "));
        }
        let timed = r.latency_us.count > 0;
        let ms = |us: f64| {
            if timed {
                format!("{:.2}ms", us / 1000.0)
            } else {
                "n/a".to_string()
            }
        };
        let _ = writeln!(
            s,
            "[wirebench]: TPS: {:.2}, TP99: {}, TP999: {} (b={} Byte, c={}, n={})",
            r.throughput.msgs_per_s,
            ms(r.latency_us.p99),
            ms(r.latency_us.p99_9),
            cfg.body.len(),
            cfg.load.sockets(),
            r.totals.ok + r.totals.errors
        );
        s
    }

    fn serve_config(args: &ServeHttpArgs) -> Result<ServeHttpConfig> {
        ServeHttpConfig::from_args(args)
    }

    fn serve_timing(cfg: &ServeHttpConfig) -> ProtocolTiming {
        cfg.timing
    }

    fn server(cfg: &ServeHttpConfig) -> Self::Server {
        HttpHandlerFactory::new(cfg.limits)
    }
}
