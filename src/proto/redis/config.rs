//! `wirebench redis` and `serve redis`: their own flags, validated once into the
//! Redis configs (a bad value is `Error::Usage`, one sentence, exit 2).

use super::client::Plan;
use super::codec::RequestLimits;
use super::command::{Values, Workload, MAX_KEYSPACE};
use super::keys::Distribution;
use crate::config::{LoadConfig, LoadOverrides, ProtocolTiming};
use crate::engine::Refill;
use crate::error::{Error, Result};
use crate::flags::{LoadArgs, PacingArgs};
use crate::proto::base::{Base, Configured};
use crate::units::parse_size_range;
use clap::Args;
use serde_json::json;

/// The largest value `--size` asks for: what `serve redis` takes in one argument.
pub const MAX_VALUE: u64 = 16 << 20;

/// Where `serve redis` listens by default: Redis's own port, where clients look for a
/// server.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:6379";

/// `wirebench redis`'s own flags (the shared load flags are `LoadArgs`). The pipeline
/// goes out in bursts by default (`RedisConfig::from_args`), so its help says so.
#[derive(Args, Debug)]
#[command(
    about = "Load a Redis server: SET/GET/PING/mixed or any command template, replies checked (no target: the built-in one)",
    mut_arg("pipeline_mode", |a| a.help(crate::flags::pipeline_mode_help("burst; with -R: sliding"))),
    after_long_help = "Examples:
  wirebench redis                                         # SET on the built-in server, 10 s
  wirebench redis 127.0.0.1:6379 -c 50 --pipeline 16 -n 1000000   # as redis-benchmark -t set -c 50 -P 16
  wirebench redis 127.0.0.1:6379 --command mixed:9:1 --distribution zipf -d 30s",
)]
pub struct RedisArgs {
    /// HOST:PORT or unix:/PATH of the Redis server; none starts the built-in server.
    pub target: Option<String>,
    /// A preset (ping, set, get, mixed:R:W: R GETs per W SETs) or a command template: "SET key:__rand__ __data__" (__rand__ is the key, __data__ its value).
    #[arg(long, default_value = "set")]
    pub command: String,
    /// Keys __rand__ draws from: key:000000000000 up to N-1.
    #[arg(long, default_value_t = 10_000, hide_short_help = true)]
    pub keyspace: u64,
    /// How keys are drawn: uniform, sequential (each connection walks the keyspace) or zipf[:S] (S: the exponent, default 0.99).
    #[arg(long, default_value = "uniform", hide_short_help = true)]
    pub distribution: String,
    /// Value bytes (__data__), MIN or MIN..MAX; each key's length and content derive from the key, so a GET is checked.
    #[arg(long, default_value = "3")]
    pub size: String,
    /// Speak RESP3 (HELLO 3 opens each connection); pushes count as events.
    #[arg(long, hide_short_help = true)]
    pub resp3: bool,
    /// AUTH on each connection: PASS, or USER:PASS.
    #[arg(long, value_name = "[USER:]PASS", hide_short_help = true)]
    pub auth: Option<String>,
    /// SELECT this database on each connection.
    #[arg(long, default_value_t = 0, hide_short_help = true)]
    pub db: u32,
    /// Built-in server only: its threads [default: the CPUs the load threads leave].
    #[arg(long, hide_short_help = true)]
    pub server_threads: Option<usize>,
}

/// `wirebench serve redis`'s own flags (the shared server flags are `ServerArgs`).
#[derive(Args, Debug)]
#[command(
    about = "Redis server (RESP2/3): PING, ECHO, SET, GET, DEL, INCR, EXISTS, MGET, MSET on a per-thread store",
    mut_arg("listen", |a| a.default_value(DEFAULT_LISTEN)),
)]
pub struct ServeRedisArgs {
    /// Close a connection whose command is not complete this long after its first byte; 0: never.
    #[arg(long, value_name = "DURATION", default_value = "10s")]
    pub header_timeout: String,
    #[command(flatten)]
    pub pacing: PacingArgs,
}

/// `wirebench redis`'s own settings, validated.
pub struct RedisConfig {
    pub plan: Plan,
    pub size: (u64, u64),
}

/// `serve redis`, validated: what every worker process runs.
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
pub struct ServeRedisConfig {
    pub limits: RequestLimits,
    pub timing: ProtocolTiming,
}

impl ServeRedisConfig {
    pub fn from_args(a: &ServeRedisArgs) -> Result<Self> {
        Ok(ServeRedisConfig {
            limits: RequestLimits::default(),
            timing: ProtocolTiming {
                header_timeout: crate::config::timeout_flag("--header-timeout", &a.header_timeout)?,
                pacing: crate::config::pacing(&a.pacing)?,
            },
        })
    }
}

fn usage(flag: &str, e: impl std::fmt::Display) -> Error {
    Error::usage(format!("{flag}: {e}"))
}

impl RedisConfig {
    pub fn from_args(a: &RedisArgs, shared: &LoadArgs) -> Result<Configured<Self>> {
        // --pipeline is redis-benchmark's -P by default: a connection's window goes out
        // in one write and the next once all of it is answered.
        let over = LoadOverrides {
            refill: Some(Refill::WhenEmpty),
            ..LoadOverrides::default()
        };
        let load = LoadConfig::from_args(shared, over)?;
        let workload = Workload::parse(&a.command).map_err(|e| usage("--command", e))?;
        if a.keyspace == 0 || a.keyspace > MAX_KEYSPACE {
            return Err(Error::usage(format!(
                "--keyspace must be between 1 and {MAX_KEYSPACE} keys"
            )));
        }
        let distribution = Distribution::parse(&a.distribution, a.keyspace)
            .map_err(|e| usage("--distribution", e))?;
        let (min, max) = parse_size_range(&a.size).map_err(|e| usage("--size", e))?;
        if max > MAX_VALUE {
            return Err(Error::usage(format!(
                "--size: at most {MAX_VALUE} value bytes (serve redis's argument cap)"
            )));
        }
        let auth = match a.auth.as_deref() {
            None => None,
            Some("") => return Err(Error::usage("--auth: the password is empty")),
            Some(text) => Some(match text.split_once(':') {
                Some((user, pass)) if !user.is_empty() && !pass.is_empty() => {
                    (Some(user.to_string()), pass.to_string())
                }
                Some(_) => {
                    return Err(Error::usage(
                        "--auth: USER:PASS needs both a user and a password",
                    ))
                }
                None => (None, text.to_string()),
            }),
        };
        if a.db > 1_000_000 {
            return Err(Error::usage("--db: at most database 1000000"));
        }
        let plan = Plan {
            workload,
            values: Values::new(min as usize, max as usize),
            keyspace: a.keyspace,
            distribution,
            auth,
            db: a.db,
            resp3: a.resp3,
        };
        Ok(Configured {
            base: Base::aim(load, a.target.as_deref(), a.server_threads, shared)?,
            own: RedisConfig {
                plan,
                size: (min, max),
            },
        })
    }

    /// The config table's and the result's description of the values.
    pub fn size_text(&self) -> String {
        let (min, max) = self.size;
        if min == max {
            format!("{min} value bytes")
        } else {
            format!("{min}..{max} value bytes, set by the key")
        }
    }

    /// Its lines of the config block, after the shared ones (`Base::to_json`).
    pub fn add_json(&self, v: &mut serde_json::Value) {
        let p = &self.plan;
        v["command"] = json!(p.workload.text);
        v["keyspace"] = json!(p.keyspace);
        v["distribution"] = json!(p.distribution.text());
        v["size_min"] = json!(self.size.0);
        v["size_max"] = json!(self.size.1);
        v["resp"] = json!(if p.resp3 { 3 } else { 2 });
        v["auth"] = json!(p.auth.is_some());
        v["db"] = json!(p.db);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Serve {
        // First: `ServeRedisArgs` changes the shared `--listen`'s default.
        #[command(flatten)]
        _shared: crate::flags::ServerArgs,
        #[command(flatten)]
        args: ServeRedisArgs,
    }

    fn header_timeout(argv: &[&str]) -> Option<std::time::Duration> {
        let a = Serve::try_parse_from(std::iter::once("serve").chain(argv.iter().copied()))
            .expect("flags parse");
        ServeRedisConfig::from_args(&a.args)
            .expect("a valid config")
            .timing
            .header_timeout
    }

    #[test]
    fn an_unfinished_command_has_ten_seconds_by_default() {
        use std::time::Duration;
        assert_eq!(header_timeout(&[]), Some(Duration::from_secs(10)));
        assert_eq!(
            header_timeout(&["--header-timeout", "2s"]),
            Some(Duration::from_secs(2))
        );
        assert_eq!(header_timeout(&["--header-timeout", "0"]), None);
    }
}
