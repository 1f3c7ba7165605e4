//! Redis as a `Protocol`: `wirebench redis` and `wirebench serve redis`.

use super::client::RedisFactory;
use super::config::{RedisArgs, RedisConfig, ServeRedisArgs, ServeRedisConfig};
use super::figures::{ClientFigures, ServerFigures, BLOCK};
use super::server::RedisHandlerFactory;
use crate::config::ProtocolTiming;
use crate::engine::EngineOutput;
use crate::error::Result;
use crate::flags::LoadArgs;
use crate::proto::plugin::{Aim, ConfigOf, Protocol};
use crate::report::format::group;
use crate::stats::{RunResult, Unit};
use serde_json::json;
use std::fmt::Write as _;

pub struct Redis;

impl Protocol for Redis {
    const NAME: &'static str = "redis";
    type Args = RedisArgs;
    type ServeArgs = ServeRedisArgs;
    type Config = RedisConfig;
    type ServeConfig = ServeRedisConfig;
    type Client = RedisFactory;
    type Server = RedisHandlerFactory;

    fn config(args: &RedisArgs, shared: &LoadArgs) -> Result<ConfigOf<Self>> {
        RedisConfig::from_args(args, shared)
    }

    fn builtin_server(_cfg: &ConfigOf<Self>) -> Self::Server {
        RedisHandlerFactory::new(Default::default())
    }

    fn client(cfg: &ConfigOf<Self>, _aim: &Aim) -> Self::Client {
        RedisFactory::new(cfg.own.plan.clone())
    }

    fn unit(_cfg: &ConfigOf<Self>) -> Unit {
        Unit::new("requests", "answered", true)
    }

    fn own_rows(cfg: &ConfigOf<Self>, _aim: &Aim) -> Vec<(&'static str, String)> {
        let p = &cfg.own.plan;
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
            ("command", p.workload.text.clone()),
            (
                "keys",
                if p.workload.keyed() {
                    format!("{} keys, {}", group(p.keyspace), p.distribution.text())
                } else {
                    "none drawn (no __rand__)".into()
                },
            ),
            ("size", cfg.own.size_text()),
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
        ]
    }

    fn own_json(cfg: &ConfigOf<Self>, v: &mut serde_json::Value) {
        cfg.own.add_json(v);
    }

    fn finish(cfg: &ConfigOf<Self>, out: &EngineOutput<ClientFigures>, result: &mut RunResult) {
        let (cfg, f) = (&cfg.own, &out.figures);
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

    fn summary_lines(cfg: &ConfigOf<Self>, r: &RunResult) -> String {
        let cfg = &cfg.own;
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

    fn result_blocks_schema() -> &'static str {
        include_str!("figures.schema.json")
    }

    /// The `redis` block holds settings beside its counters: it merges itself.
    fn block_merge() -> crate::stats::merge::BlockMerge {
        super::figures::block_merge
    }

    /// A suite point runs the default command (SET) with redis-benchmark's default
    /// value size (`-d 3`) unless told otherwise, so a suite compares like with like.
    const SUITE_DEFAULT_SIZE: u64 = 3;
}
