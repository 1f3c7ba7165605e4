//! Redis as a `Protocol`: `wirebench redis` and `wirebench serve redis`.

use super::client::RedisFactory;
use super::config::{RedisArgs, RedisConfig, ServeRedisArgs, ServeRedisConfig};
use super::figures::{ClientFigures, ServerFigures, BLOCK};
use super::server::RedisHandlerFactory;
use crate::config::{LoadConfig, ProtocolTiming};
use crate::engine::EngineOutput;
use crate::error::Result;
use crate::flags::LoadArgs;
use crate::proto::plugin::{Aim, Protocol};
use crate::report::format::{count_of, group, seconds};
use crate::stats::{RunResult, Unit};
use serde_json::json;
use std::fmt::Write as _;
use std::net::SocketAddr;

pub struct Redis;

impl Protocol for Redis {
    const NAME: &'static str = "redis";
    type Args = RedisArgs;
    type ServeArgs = ServeRedisArgs;
    type Config = RedisConfig;
    type ServeConfig = ServeRedisConfig;
    type Client = RedisFactory;
    type Server = RedisHandlerFactory;

    fn config(args: &RedisArgs, shared: &LoadArgs) -> Result<RedisConfig> {
        RedisConfig::from_args(args, shared)
    }

    fn load(cfg: &RedisConfig) -> &LoadConfig {
        &cfg.load
    }

    fn target(cfg: &RedisConfig) -> Option<(SocketAddr, String)> {
        cfg.target.clone()
    }

    fn server_threads(cfg: &RedisConfig) -> usize {
        cfg.server_threads
    }

    fn builtin_server(_cfg: &RedisConfig) -> Self::Server {
        RedisHandlerFactory::new(Default::default())
    }

    fn client(cfg: &RedisConfig, _aim: &Aim) -> Self::Client {
        RedisFactory::new(cfg.plan.clone())
    }

    fn unit(_cfg: &RedisConfig) -> Unit {
        Unit::new("requests", "answered", true)
    }

    fn target_text(_cfg: &RedisConfig, aim: &Aim) -> String {
        aim.addr.to_string()
    }

    fn plan_rows(cfg: &RedisConfig, aim: &Aim) -> Vec<(&'static str, String)> {
        let l = &cfg.load;
        let p = &cfg.plan;
        let target = match &cfg.target {
            Some(_) => aim.addr.to_string(),
            None => format!(
                "{} (built-in server, {})",
                aim.addr,
                count_of(cfg.server_threads as u64, "thread")
            ),
        };
        let mut open = vec![];
        if p.resp3 {
            open.push("HELLO 3".to_string());
        }
        if let Some((user, _)) = &p.auth {
            open.push(match user {
                Some(u) => format!("AUTH {u} ***"),
                None => "AUTH ***".into(),
            });
        }
        if p.db != 0 {
            open.push(format!("SELECT {}", p.db));
        }
        vec![
            ("target", target),
            ("command", p.workload.text.clone()),
            (
                "keys",
                if p.workload.keyed() {
                    format!("{} keys, {}", group(p.keyspace), p.distribution.text())
                } else {
                    "none drawn (no __rand__)".into()
                },
            ),
            ("size", cfg.size_text()),
            (
                "protocol",
                format!(
                    "RESP{}{}",
                    if p.resp3 { 3 } else { 2 },
                    if open.is_empty() {
                        String::new()
                    } else {
                        format!(", each connection opens with {}", open.join(", "))
                    }
                ),
            ),
            ("threads", l.shape.threads.to_string()),
            ("connections", l.connections_text()),
            ("pipeline", l.pipeline_text()),
            ("plan", l.plan_text()),
            ("rate", l.rate_text("requests/s")),
            ("timeout", seconds(l.shape.timeout)),
            ("warmup", seconds(l.shape.warmup)),
            ("tls", l.tls_text()),
            ("nodelay", l.nodelay.to_string()),
        ]
    }

    fn config_json(cfg: &RedisConfig) -> serde_json::Value {
        cfg.to_json()
    }

    fn finish(cfg: &RedisConfig, out: &EngineOutput<ClientFigures>, result: &mut RunResult) {
        let f = &out.figures;
        let open = RedisFactory::new(cfg.plan.clone()).open_commands();
        result.extras.insert(
            BLOCK.to_string(),
            json!({
                "resp": if cfg.plan.resp3 { 3 } else { 2 },
                "open_commands_per_connection": open,
                "hits": f.hits,
                "misses": f.misses,
                "error_replies": { "err": f.err, "wrongtype": f.wrongtype, "other": f.other_errors },
                "pushes": f.pushes,
            }),
        );
    }

    fn summary_lines(cfg: &RedisConfig, r: &RunResult) -> String {
        let mut s = String::new();
        let Some(b) = r.extra(BLOCK) else {
            return s;
        };
        let n = |k: &str| b[k].as_u64().unwrap_or(0);
        let e = |k: &str| b["error_replies"][k].as_u64().unwrap_or(0);
        if cfg
            .plan
            .workload
            .templates
            .iter()
            .any(|t| matches!(t.expect, super::command::Expect::BulkOrNull { .. }))
        {
            let _ = writeln!(
                s,
                "gets:         {} hits, {} misses (nil)",
                group(n("hits")),
                group(n("misses"))
            );
        }
        let _ = writeln!(
            s,
            "error replies: {} ERR, {} WRONGTYPE, {} other{}",
            group(e("err")),
            group(e("wrongtype")),
            group(e("other")),
            if cfg.plan.resp3 {
                format!("; {} pushes", group(n("pushes")))
            } else {
                String::new()
            }
        );
        s
    }

    fn serve_config(args: &ServeRedisArgs) -> Result<ServeRedisConfig> {
        ServeRedisConfig::from_args(args)
    }

    fn serve_timing(cfg: &ServeRedisConfig) -> ProtocolTiming {
        cfg.timing
    }

    fn server(cfg: &ServeRedisConfig) -> Self::Server {
        RedisHandlerFactory::new(cfg.limits)
    }

    fn serve_line(figures: &ServerFigures) -> Option<String> {
        Some(figures.line())
    }

    fn server_block(figures: &ServerFigures) -> Option<serde_json::Value> {
        serde_json::to_value(figures).ok()
    }
}
