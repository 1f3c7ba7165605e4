//! Echo as a `Protocol`: `wirebench echo` and `wirebench serve echo`.

use super::client::EchoFactory;
use super::config::{EchoArgs, EchoConfig, ServeEchoArgs};
use super::server::EchoHandlerFactory;
use crate::config::ProtocolTiming;
use crate::error::Result;
use crate::flags::LoadArgs;
use crate::proto::plugin::{Aim, ConfigOf, Protocol};
use crate::stats::Unit;

pub struct Echo;

impl Protocol for Echo {
    const NAME: &'static str = "echo";
    type Args = EchoArgs;
    type ServeArgs = ServeEchoArgs;
    type Config = EchoConfig;
    type ServeConfig = ProtocolTiming;
    type Client = EchoFactory;
    type Server = EchoHandlerFactory;

    fn config(args: &EchoArgs, shared: &LoadArgs) -> Result<ConfigOf<Self>> {
        EchoConfig::from_args(args, shared)
    }

    fn builtin_server(_cfg: &ConfigOf<Self>) -> Self::Server {
        EchoHandlerFactory
    }

    fn client(cfg: &ConfigOf<Self>, _aim: &Aim) -> Self::Client {
        EchoFactory::new(cfg.own.min_payload, cfg.own.max_payload)
    }

    fn unit(_cfg: &ConfigOf<Self>) -> Unit {
        Unit::new("messages", "echoed", true)
    }

    fn own_rows(cfg: &ConfigOf<Self>, _aim: &Aim) -> Vec<(&'static str, String)> {
        vec![("size", cfg.own.size_text())]
    }

    fn own_json(cfg: &ConfigOf<Self>, v: &mut serde_json::Value) {
        cfg.own.add_json(v);
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

    /// A suite echoes 64-byte payloads unless told otherwise.
    const SUITE_DEFAULT_SIZE: u64 = 64;
}
