//! WebSocket as a `Protocol`: `wirebench ws` and `wirebench serve ws`.

use super::client::{Shared, WsFactory};
use super::config::{ServeWsArgs, ServeWsConfig, WsArgs, WsConfig};
use super::figures::{client_figures_of, ClientFigures, ServerFigures, BLOCK};
use super::server::WsServerFactory;
use super::url;
use crate::config::ProtocolTiming;
use crate::engine::EngineOutput;
use crate::error::Result;
use crate::flags::LoadArgs;
use crate::proto::entry::{string_keys, SuiteLoad, SuitePoint};
use crate::proto::plugin::{Aim, ConfigOf, Protocol};
use crate::report::format::group;
use crate::stats::{RunResult, Unit};
use std::fmt::Write as _;
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

    fn config(args: &WsArgs, shared: &LoadArgs) -> Result<ConfigOf<Self>> {
        WsConfig::from_args(args, shared)
    }

    fn builtin_server(cfg: &ConfigOf<Self>) -> Self::Server {
        WsServerFactory(Arc::new(cfg.own.builtin_limits()))
    }

    fn client(cfg: &ConfigOf<Self>, aim: &Aim) -> Self::Client {
        let cfg = &cfg.own;
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

    fn unit(_cfg: &ConfigOf<Self>) -> Unit {
        Unit::new("messages", "echoed", true)
    }

    fn target_text(cfg: &ConfigOf<Self>, aim: &Aim) -> String {
        match &cfg.own.url {
            Some(u) => url::text(u),
            None => format!("{}://{}/", if aim.tls { "wss" } else { "ws" }, aim.addr),
        }
    }

    fn own_rows(cfg: &ConfigOf<Self>, _aim: &Aim) -> Vec<(&'static str, String)> {
        let subprotocol = cfg.own.subprotocol.clone();
        vec![
            ("messages", cfg.own.message_text()),
            ("subprotocol", subprotocol.unwrap_or_else(|| "none".into())),
        ]
    }

    fn own_json(cfg: &ConfigOf<Self>, v: &mut serde_json::Value) {
        cfg.own.add_json(v);
    }

    fn finish(_cfg: &ConfigOf<Self>, out: &EngineOutput<ClientFigures>, result: &mut RunResult) {
        result.extras.insert(
            BLOCK.to_string(),
            serde_json::to_value(out.figures).unwrap_or_default(),
        );
    }

    fn summary_lines(_cfg: &ConfigOf<Self>, r: &RunResult) -> String {
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

    fn result_blocks_schema() -> &'static str {
        include_str!("figures.schema.json")
    }

    /// A suite echoes 64-byte messages unless told otherwise, as for echo.
    const SUITE_DEFAULT_SIZE: u64 = 64;

    /// A suite point echoes messages of its size over `ws://ADDR/PATH`: the load's
    /// `ws = { path = "/chat" }`, "/" by default.
    fn suite_load(
        block: Option<&toml::Value>,
        _: &[u64],
    ) -> std::result::Result<Box<dyn SuiteLoad>, String> {
        let mut path = "/".to_string();
        for (_, value) in string_keys(block, &["path"])? {
            path = crate::proto::http::suite_settings::path(value)?;
        }
        Ok(Box::new(WsSuite { path }))
    }
}

/// A suite load's WebSocket settings: the path of the upgrade.
#[derive(Debug)]
struct WsSuite {
    path: String,
}

impl SuiteLoad for WsSuite {
    fn args(&self, p: &SuitePoint<'_>) -> Vec<String> {
        p.sized_load_args(Ws::NAME, format!("ws://{}{}", p.addr, self.path))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::{Cli, Command};
    use clap::Parser;

    fn config(args: &[&str]) -> ConfigOf<Ws> {
        let argv = ["wirebench", "ws"].iter().chain(args).copied();
        let Command::Ws(c) = Cli::try_parse_from(argv).expect("flags parse").command else {
            panic!("not ws")
        };
        Ws::config(&c.proto, &c.load).expect("valid ws flags")
    }

    #[test]
    fn the_plan_lines_and_target_render_from_the_config() {
        let aim = Aim {
            addr: crate::net::unix::Dest::Tcp("127.0.0.1:9".parse().expect("literal address")),
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
        assert!(cfg.base.load.tls.is_some());
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
