//! Echo as a `Protocol`: `wirebench echo` and `wirebench serve echo`.

use super::client::EchoFactory;
use super::config::{EchoArgs, EchoConfig, ServeEchoArgs};
use super::server::EchoHandlerFactory;
use crate::config::{LoadConfig, ProtocolTiming};
use crate::error::Result;
use crate::flags::LoadArgs;
use crate::proto::plugin::{Aim, Protocol};
use crate::report::format::{count_of, seconds};
use crate::stats::Unit;
use std::net::SocketAddr;

pub struct Echo;

impl Protocol for Echo {
    const NAME: &'static str = "echo";
    type Args = EchoArgs;
    type ServeArgs = ServeEchoArgs;
    type Config = EchoConfig;
    type ServeConfig = ProtocolTiming;
    type Client = EchoFactory;
    type Server = EchoHandlerFactory;

    fn config(args: &EchoArgs, shared: &LoadArgs) -> Result<EchoConfig> {
        EchoConfig::from_args(args, shared)
    }

    fn load(cfg: &EchoConfig) -> &LoadConfig {
        &cfg.load
    }

    fn target(cfg: &EchoConfig) -> Option<(SocketAddr, String)> {
        cfg.target.clone()
    }

    fn server_threads(cfg: &EchoConfig) -> usize {
        cfg.server_threads
    }

    fn builtin_server(_cfg: &EchoConfig) -> Self::Server {
        EchoHandlerFactory
    }

    fn client(cfg: &EchoConfig, _aim: &Aim) -> Self::Client {
        EchoFactory::new(cfg.min_payload, cfg.max_payload)
    }

    fn unit(_cfg: &EchoConfig) -> Unit {
        Unit::new("messages", "echoed", true)
    }

    fn target_text(_cfg: &EchoConfig, aim: &Aim) -> String {
        aim.addr.to_string()
    }

    fn plan_rows(cfg: &EchoConfig, aim: &Aim) -> Vec<(&'static str, String)> {
        let l = &cfg.load;
        let target = match &cfg.target {
            Some(_) => aim.addr.to_string(),
            None => format!(
                "{} (built-in server, {})",
                aim.addr,
                count_of(cfg.server_threads as u64, "thread")
            ),
        };
        vec![
            ("target", target),
            ("threads", l.shape.threads.to_string()),
            ("connections", l.connections_text()),
            ("pipeline", l.pipeline_text()),
            ("plan", l.plan_text()),
            ("size", cfg.size_text()),
            ("rate", l.rate_text("messages/s")),
            ("timeout", seconds(l.shape.timeout)),
            ("warmup", seconds(l.shape.warmup)),
            ("tls", l.tls_text()),
            ("nodelay", l.nodelay.to_string()),
        ]
    }

    fn config_json(cfg: &EchoConfig) -> serde_json::Value {
        cfg.to_json()
    }

    fn serve_config(args: &ServeEchoArgs) -> Result<ProtocolTiming> {
        Ok(ProtocolTiming {
            header_timeout: None,
            pacing: crate::config::pacing(&args.pacing)?,
        })
    }

    fn serve_timing(cfg: &ProtocolTiming) -> ProtocolTiming {
        *cfg
    }

    fn server(_cfg: &ProtocolTiming) -> Self::Server {
        EchoHandlerFactory
    }
}
