//! gRPC as a `Protocol`: `wirebench grpc` (unary calls on the HTTP/2 client, its
//! `Exchange` in `call.rs`) and `wirebench serve grpc` (`serve http`'s HTTP/2 session
//! in its gRPC mode).

use super::call::{GrpcCall, Request};
use super::codes::StatusCodes;
use super::config::{grpc_limits, GrpcArgs, GrpcConfig, ServeGrpcArgs, ServeGrpcConfig};
use crate::config::ProtocolTiming;
use crate::engine::EngineOutput;
use crate::error::Result;
use crate::flags::LoadArgs;
use crate::proto::http::figures::counts_of;
use crate::proto::http::h2_client::{H2Factory, RECV_WINDOW};
use crate::proto::http::h2serve::H2Figures;
use crate::proto::http::server::HttpHandlerFactory;
use crate::proto::plugin::{Aim, ConfigOf, Protocol};
use crate::report::format::group;
use crate::stats::{RunResult, Unit};
use std::sync::Arc;

pub struct Grpc;

/// The result's block of calls by status code.
pub const BLOCK: &str = "grpc_status";

impl Grpc {
    fn authority(cfg: &ConfigOf<Self>, aim: &Aim) -> String {
        cfg.own
            .authority
            .clone()
            .unwrap_or_else(|| aim.addr.to_string())
    }
}

impl Protocol for Grpc {
    const NAME: &'static str = "grpc";
    type Args = GrpcArgs;
    type ServeArgs = ServeGrpcArgs;
    type Config = GrpcConfig;
    type ServeConfig = ServeGrpcConfig;
    type Client = H2Factory<GrpcCall>;
    type Server = HttpHandlerFactory;

    fn config(args: &GrpcArgs, shared: &LoadArgs) -> Result<ConfigOf<Self>> {
        GrpcConfig::from_args(args, shared)
    }

    /// The built-in server takes whatever message this load sends.
    fn builtin_server(cfg: &ConfigOf<Self>) -> Self::Server {
        let max = cfg
            .own
            .message
            .len()
            .max(super::config::MAX_MESSAGE as usize);
        HttpHandlerFactory::grpc(grpc_limits(max, 16 << 10, 1 << 16))
    }

    fn client(cfg: &ConfigOf<Self>, aim: &Aim) -> Self::Client {
        let own = &cfg.own;
        let authority = Self::authority(cfg, aim);
        let path = own.call.path();
        let request = Request {
            tls: aim.tls,
            authority: &authority,
            path: &path,
            timeout: own.timeout(),
            metadata: &own.metadata,
        };
        H2Factory(Arc::new(GrpcCall::new(
            &request,
            &own.message,
            (RECV_WINDOW, RECV_WINDOW),
        )))
    }

    fn unit(_cfg: &ConfigOf<Self>) -> Unit {
        Unit::new("calls", "answered OK", true)
    }

    fn target_text(cfg: &ConfigOf<Self>, aim: &Aim) -> String {
        format!(
            "{}://{}{}",
            if aim.tls { "https" } else { "http" },
            Self::authority(cfg, aim),
            cfg.own.call.path()
        )
    }

    fn own_rows(cfg: &ConfigOf<Self>, _aim: &Aim) -> Vec<(&'static str, String)> {
        let own = &cfg.own;
        let deadline = own
            .deadline_ms
            .map_or("none".to_string(), |ms| format!("{ms} ms (grpc-timeout)"));
        vec![
            ("message", own.message_source.clone()),
            (
                "protocol",
                format!(
                    "gRPC unary over h2c, {} calls in flight per connection (streams)",
                    cfg.base.load.shape.pipeline
                ),
            ),
            ("metadata", format!("{} entries", own.metadata.len())),
            ("deadline", deadline),
        ]
    }

    fn own_json(cfg: &ConfigOf<Self>, v: &mut serde_json::Value) {
        cfg.own.add_json(v);
    }

    fn finish(_cfg: &ConfigOf<Self>, out: &EngineOutput<StatusCodes>, result: &mut RunResult) {
        let block = serde_json::to_value(out.figures.by_name()).unwrap_or_default();
        result.extras.insert(BLOCK.to_string(), block);
    }

    fn summary_lines(_cfg: &ConfigOf<Self>, r: &RunResult) -> String {
        match counts_of(r, BLOCK).filter(|c| !c.is_empty()) {
            Some(codes) => {
                let list: Vec<String> = codes
                    .iter()
                    .map(|(k, n)| format!("{k} {}", group(*n)))
                    .collect();
                format!("grpc-status:  {}\n", list.join(", "))
            }
            None => String::new(),
        }
    }

    fn serve_config(args: &ServeGrpcArgs) -> Result<ServeGrpcConfig> {
        ServeGrpcConfig::from_args(args)
    }

    fn serve_timing(cfg: &ServeGrpcConfig) -> ProtocolTiming {
        cfg.timing
    }

    fn server(cfg: &ServeGrpcConfig) -> Self::Server {
        HttpHandlerFactory::grpc(cfg.limits)
    }

    const ALPN: &'static [&'static [u8]] = &[b"h2"];
    /// gRPC over TLS is HTTP/2 chosen by ALPN.
    const CLIENT_ALPN: &'static [&'static [u8]] = &[b"h2"];

    fn serve_line(figures: &H2Figures) -> Option<String> {
        figures.line()
    }

    fn result_blocks_schema() -> &'static str {
        include_str!("figures.schema.json")
    }

    fn suite_load(
        block: Option<&toml::Value>,
        sizes: &[u64],
    ) -> std::result::Result<Box<dyn crate::proto::entry::SuiteLoad>, String> {
        super::suite::load(block, sizes)
    }

    fn suite_generators() -> &'static [&'static str] {
        super::suite::GENERATORS
    }
}
