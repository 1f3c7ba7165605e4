//! HTTP/1.1 as a `Protocol`: `wirebench http` and `wirebench serve http`, and in a
//! suite (`suite.rs`, driven by wirebench or the external generators of `gen/`).

use super::client::HttpFactory;
use super::config::{HttpArgs, HttpConfig, ServeHttpArgs, ServeHttpConfig};
use super::entry_figures::HttpFigures;
use super::figures::{counts_of, STATUS_CLASSES, STATUS_CODES};
use super::h2serve::H2Figures;
use super::request;
use super::request_set_block;
use super::request_wire::WiredSet;
use super::server::{HttpHandlerFactory, Limits};
use super::suite;
use super::suite_settings::HttpSuite;
use crate::config::ProtocolTiming;
use crate::engine::{EngineOutput, LoadSpec};
use crate::error::Result;
use crate::flags::LoadArgs;
use crate::proto::entry::{ReadyProbe, SuiteLoad};
use crate::proto::plugin::{Aim, ConfigOf, Protocol};
use crate::report::format::group;
use crate::stats::{RunResult, Unit};
use std::fmt::Write as _;

pub struct Http;

/// The authority (Host) and path requests go to: the URL's, or the built-in server's;
/// a request set has no one path.
pub fn authority_path(cfg: &HttpConfig, aim: &Aim) -> (String, String) {
    match &cfg.url {
        Some(u) if cfg.set.is_some() => (u.authority(), String::new()),
        Some(u) => (u.authority(), u.path.clone()),
        None => (aim.addr.to_string(), "/".to_string()),
    }
}

/// The request every connection sends, serialized once.
fn wire(cfg: &HttpConfig, aim: &Aim) -> Vec<u8> {
    let (authority, path) = authority_path(cfg, aim);
    request::serialize(&cfg.request(&authority, &path))
}

/// Every response is a reply: `answered: N of M sent`, then how many were correct, or
/// the one status they all had ("all 500").
fn answered_line(r: &RunResult, codes: &std::collections::BTreeMap<String, u64>) -> String {
    let answered: u64 = codes.values().sum();
    let t = &r.totals;
    let how = match codes.iter().next() {
        Some((code, _)) if codes.len() == 1 => format!(", all {code}"),
        _ => String::new(),
    };
    format!(
        "answered:     {} of {} sent{how} ({} ok, {} answered errors)\n",
        group(answered),
        group(t.sent),
        group(t.ok),
        group(answered.saturating_sub(t.ok))
    )
}

impl Protocol for Http {
    const NAME: &'static str = "http";
    type Args = HttpArgs;
    type ServeArgs = ServeHttpArgs;
    type Config = HttpConfig;
    type ServeConfig = ServeHttpConfig;
    type Client = HttpFactory;
    type Server = HttpHandlerFactory;

    fn config(args: &HttpArgs, shared: &LoadArgs) -> Result<ConfigOf<Self>> {
        HttpConfig::from_args(args, shared)
    }

    fn builtin_server(cfg: &ConfigOf<Self>) -> Self::Server {
        // The built-in server takes whatever body this load sends.
        HttpHandlerFactory::new(Limits {
            max_body: (cfg.own.body.len() + 1).max(Limits::default().max_body),
            ..Limits::default()
        })
    }

    fn client(cfg: &ConfigOf<Self>, aim: &Aim) -> Self::Client {
        let cfg = &cfg.own;
        let factory = HttpFactory::new(
            wire(cfg, aim),
            cfg.method == "HEAD",
            cfg.accept,
            cfg.expect_echo.then(|| cfg.body.clone()),
            cfg.keepalive,
        );
        match &cfg.set {
            Some(set) => {
                factory.with_set(WiredSet::new(set, &cfg.headers, !cfg.keepalive, cfg.accept))
            }
            None => factory,
        }
    }

    /// A request counts once its response has a status the run accepts (and passes
    /// its checks); every response is a reply, counted under its status and timed
    /// (the summary's `answered:` line).
    fn unit(_cfg: &ConfigOf<Self>) -> Unit {
        Unit::new("requests", "ok", true)
    }

    fn target_text(cfg: &ConfigOf<Self>, aim: &Aim) -> String {
        let (authority, path) = authority_path(&cfg.own, aim);
        let scheme = if aim.tls { "https" } else { "http" };
        format!("{scheme}://{authority}{path}")
    }

    fn own_rows(cfg: &ConfigOf<Self>, aim: &Aim) -> Vec<(&'static str, String)> {
        let (own, wire) = (&cfg.own, wire(&cfg.own, aim).len());
        let request = match &own.set {
            Some(set) => format!(
                "{} requests from {} by weight",
                set.entries.len(),
                set.file.display()
            ),
            None => format!(
                "{} with body {}, {wire} bytes on the wire",
                own.method, own.body_source
            ),
        };
        let keepalive = match own.keepalive {
            true => "on",
            false => "off: a new connection per request",
        };
        let echo = if own.expect_echo {
            ", body = request body"
        } else {
            ""
        };
        vec![
            ("request", request),
            ("keep-alive", keepalive.to_string()),
            ("expect", format!("status {}{echo}", own.accept_text)),
        ]
    }

    fn own_json(cfg: &ConfigOf<Self>, v: &mut serde_json::Value) {
        cfg.own.add_json(v);
    }

    /// Keep-alive off: one request per connection.
    fn connection_policy(cfg: &ConfigOf<Self>, spec: &mut LoadSpec) {
        spec.per_connection = (!cfg.own.keepalive).then_some(1);
    }

    fn finish(cfg: &ConfigOf<Self>, out: &EngineOutput<HttpFigures>, result: &mut RunResult) {
        for (name, block) in out.figures.codes.blocks() {
            result.extras.insert(name.to_string(), block);
        }
        if let Some(set) = &cfg.own.set {
            let block = request_set_block::block(set, &out.figures);
            result
                .extras
                .insert(request_set_block::BLOCK.to_string(), block);
        }
    }

    /// Status classes and codes, then TPS, TP99 and TP999 the way hertz-benchmark
    /// prints them.
    fn summary_lines(cfg: &ConfigOf<Self>, r: &RunResult) -> String {
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
            s.push_str(&answered_line(r, &codes));
        }
        if let Some(block) = r.extra(request_set_block::BLOCK) {
            s.push_str(&request_set_block::table(block));
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
            cfg.own.body.len(),
            cfg.base.load.sockets(),
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

    /// Over TLS this session speaks HTTP/1.1 only (`alpn.rs` chose it, or `--http1.1`).
    const CLIENT_ALPN: &'static [&'static [u8]] = &[b"http/1.1"];

    /// h2 first: a client offering both gets HTTP/2 (its preface picks the session).
    const ALPN: &'static [&'static [u8]] = &[b"h2", b"http/1.1"];

    /// Its HTTP/2 connections and each closed for abuse, by reason.
    fn serve_line(figures: &H2Figures) -> Option<String> {
        figures.line()
    }

    fn result_blocks_schema() -> &'static str {
        include_str!("figures.schema.json")
    }

    /// `request_set`: counts summed, histograms added (`request_set_block::merge`);
    /// the status blocks by the counter sum.
    fn block_merge() -> crate::stats::merge::BlockMerge {
        |name, blocks, _merged| {
            (name == request_set_block::BLOCK).then(|| request_set_block::merge(blocks))
        }
    }

    /// wrk, ab and h2load (`gen/`).
    fn suite_generators() -> &'static [&'static str] {
        suite::GENERATORS
    }

    fn suite_load(
        block: Option<&toml::Value>,
        sizes: &[u64],
    ) -> std::result::Result<Box<dyn SuiteLoad>, String> {
        Ok(Box::new(HttpSuite::from_block(block, sizes)?))
    }

    fn ready_probe(value: &toml::Value) -> std::result::Result<ReadyProbe, String> {
        suite::ready_probe(value)
    }
}
