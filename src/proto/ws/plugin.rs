//! WebSocket as a `Protocol`: `wirebench ws` and `wirebench serve ws`.

use super::client::{Shared, WsFactory};
use super::config::{ServeWsArgs, ServeWsConfig, WsArgs, WsConfig};
use super::figures::{client_figures_of, ClientFigures, ServerFigures, BLOCK};
use super::server::WsServerFactory;
use super::url;
use crate::config::{LoadConfig, ProtocolTiming};
use crate::engine::EngineOutput;
use crate::error::Result;
use crate::flags::LoadArgs;
use crate::proto::plugin::{Aim, Protocol};
use crate::report::format::{count_of, group, seconds};
use crate::stats::{RunResult, Unit};
use std::fmt::Write as _;
use std::net::SocketAddr;
use std::sync::Arc;

pub struct Ws;

/// The authority (Host) and path of the upgrade: the URL's, or the built-in server's.
fn authority_path(cfg: &WsConfig, aim: &Aim) -> (String, String) {
    match &cfg.url {
        Some(u) => (u.authority(), u.path.clone()),
        None => (aim.addr.to_string(), "/".to_string()),
    }
}

impl Protocol for Ws {
    const NAME: &'static str = "ws";
    type Args = WsArgs;
    type ServeArgs = ServeWsArgs;
    type Config = WsConfig;
    type ServeConfig = ServeWsConfig;
    type Client = WsFactory;
    type Server = WsServerFactory;

    fn config(args: &WsArgs, shared: &LoadArgs) -> Result<WsConfig> {
        WsConfig::from_args(args, shared)
    }

    fn load(cfg: &WsConfig) -> &LoadConfig {
        &cfg.load
    }

    fn target(cfg: &WsConfig) -> Option<(SocketAddr, String)> {
        match (&cfg.url, cfg.addr) {
            (Some(u), Some(addr)) => Some((addr, u.host.clone())),
            _ => None,
        }
    }

    fn server_threads(cfg: &WsConfig) -> usize {
        cfg.server_threads
    }

    fn builtin_server(cfg: &WsConfig) -> Self::Server {
        WsServerFactory(Arc::new(cfg.builtin_limits()))
    }

    fn client(cfg: &WsConfig, aim: &Aim) -> Self::Client {
        let (authority, path) = authority_path(cfg, aim);
        WsFactory(Arc::new(Shared::new(
            authority,
            path,
            cfg.subprotocol.clone(),
            (cfg.min, cfg.max),
            cfg.fragment,
            cfg.text,
        )))
    }

    fn unit(_cfg: &WsConfig) -> Unit {
        Unit::new("messages", "echoed", true)
    }

    fn target_text(cfg: &WsConfig, aim: &Aim) -> String {
        match &cfg.url {
            Some(u) => url::text(u),
            None => format!("{}://{}/", if aim.tls { "wss" } else { "ws" }, aim.addr),
        }
    }

    fn plan_rows(cfg: &WsConfig, aim: &Aim) -> Vec<(&'static str, String)> {
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
            ("messages", cfg.message_text()),
            (
                "subprotocol",
                cfg.subprotocol.clone().unwrap_or_else(|| "none".into()),
            ),
            ("threads", l.shape.threads.to_string()),
            ("connections", l.connections_text()),
            ("pipeline", l.pipeline_text()),
            ("plan", l.plan_text()),
            ("rate", l.rate_text("messages/s")),
            ("timeout", seconds(l.shape.timeout)),
            ("warmup", seconds(l.shape.warmup)),
            ("tls", l.tls_text()),
            ("nodelay", l.nodelay.to_string()),
        ]
    }

    fn config_json(cfg: &WsConfig) -> serde_json::Value {
        cfg.to_json()
    }

    fn finish(_cfg: &WsConfig, out: &EngineOutput<ClientFigures>, result: &mut RunResult) {
        result.extras.insert(
            BLOCK.to_string(),
            serde_json::to_value(out.figures).unwrap_or_default(),
        );
    }

    fn summary_lines(_cfg: &WsConfig, r: &RunResult) -> String {
        let mut s = String::new();
        if let Some(f) = client_figures_of(r) {
            let _ = writeln!(
                s,
                "websocket:    {} upgrades, {} server pings answered, {} continuation frames, {} clean closes, {} server closes",
                group(f.upgrades),
                group(f.pings_answered),
                group(f.continuation_frames),
                group(f.clean_closes),
                group(f.server_closes)
            );
            if f.pings_answered_closing > 0 || f.pings_superseded > 0 {
                let _ = writeln!(
                    s,
                    "              of the pings: {} during closing handshakes, {} answered by a later ping's pong (the server read slower than it pinged)",
                    group(f.pings_answered_closing),
                    group(f.pings_superseded)
                );
            }
        }
        s
    }

    fn serve_config(args: &ServeWsArgs) -> Result<ServeWsConfig> {
        ServeWsConfig::from_args(args)
    }

    fn serve_timing(cfg: &ServeWsConfig) -> ProtocolTiming {
        cfg.timing
    }

    fn server(cfg: &ServeWsConfig) -> Self::Server {
        WsServerFactory(Arc::new(cfg.limits.clone()))
    }

    fn serve_line(figures: &ServerFigures) -> Option<String> {
        Some(figures.line())
    }

    fn server_block(figures: &ServerFigures) -> Option<serde_json::Value> {
        serde_json::to_value(figures).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command};
    use clap::Parser;

    fn config(args: &[&str]) -> WsConfig {
        let argv = ["wirebench", "ws"].iter().chain(args).copied();
        let Command::Ws(c) = Cli::try_parse_from(argv).expect("flags parse").command else {
            panic!("not ws")
        };
        Ws::config(&c.proto, &c.load).expect("valid ws flags")
    }

    #[test]
    fn the_plan_lines_and_target_render_from_the_config() {
        let aim = Aim {
            addr: "127.0.0.1:9".parse().expect("literal address"),
            host: "127.0.0.1".into(),
            builtin: false,
            tls: true,
        };
        let cfg = config(&[
            "wss://127.0.0.1:9/chat",
            "-n",
            "50",
            "--size",
            "100..3000",
            "--fragment",
            "1k",
            "--text",
            "--subprotocol",
            "chat",
        ]);
        assert!(cfg.load.tls.is_some());
        assert_eq!(Ws::target_text(&cfg, &aim), "wss://127.0.0.1:9/chat");
        let rows = Ws::plan_rows(&cfg, &aim);
        let row = |k: &str| rows.iter().find(|(n, _)| *n == k).map(|(_, v)| v.clone());
        assert_eq!(
            row("messages").as_deref(),
            Some("text, 100..3000 bytes, uniform, in frames of 1024 bytes")
        );
        assert_eq!(row("subprotocol").as_deref(), Some("chat"));
        assert_eq!(row("plan").as_deref(), Some("50 requests"));
        let j = Ws::config_json(&cfg);
        assert_eq!(
            (j["fragment_bytes"].as_u64(), j["text"].as_bool()),
            (Some(1024), Some(true))
        );
    }
}
