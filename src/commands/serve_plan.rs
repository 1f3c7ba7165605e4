//! What a `serve` worker process runs: the validated shared and protocol server
//! configs, as JSON in its environment. Workers (`serve --processes`, `connect`'s
//! built-in server) never re-read flags: their command line only names the protocol.

use crate::config::ServeConfig;
use crate::error::{Error, Result};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// Set in a `serve` worker's environment: its `ServePlan` as JSON.
pub const PLAN_ENV: &str = "WIREBENCH_SERVE_PLAN";

/// One server, validated: `C` is the protocol's `Protocol::ServeConfig`.
#[derive(Serialize, Deserialize, Debug)]
pub struct ServePlan<C> {
    /// `Protocol::NAME`, checked by the worker against the command it was started as.
    pub protocol: String,
    pub serve: ServeConfig,
    pub proto: C,
}

impl<C: Serialize + DeserializeOwned> ServePlan<C> {
    /// The environment entry that hands this plan to a worker.
    pub fn to_env(&self) -> Result<(String, String)> {
        let json = serde_json::to_string(self)
            .map_err(|e| Error::runtime(format!("cannot write the server's plan: {e}")))?;
        Ok((PLAN_ENV.to_string(), json))
    }

    /// In a worker: the plan its parent wrote, for `protocol`.
    pub fn from_env(protocol: &str) -> Result<Self> {
        let text = std::env::var(PLAN_ENV).map_err(|_| {
            Error::runtime(format!(
                "this server worker process was started without its plan ({PLAN_ENV})"
            ))
        })?;
        Self::from_text(protocol, &text)
    }

    /// The plan `text` (as `to_env` wrote it), for `protocol`, or the one sentence
    /// saying why it is not one.
    pub fn from_text(protocol: &str, text: &str) -> Result<Self> {
        let plan: ServePlan<C> = serde_json::from_str(text).map_err(|e| {
            Error::runtime(format!(
                "this server worker's plan ({PLAN_ENV}) is unreadable: {e}"
            ))
        })?;
        if plan.protocol != protocol {
            return Err(Error::runtime(format!(
                "this server worker was started as `serve {protocol}` with a plan for {}",
                plan.protocol
            )));
        }
        Ok(plan)
    }
}

/// A worker's command line: `serve NAME`, which routes it to its protocol; the plan
/// carries everything else.
pub fn worker_args(protocol: &str) -> Vec<String> {
    vec!["serve".to_string(), protocol.to_string()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{ProtocolTiming, ServerTlsChoice};
    use crate::server::pacing::Stall;
    use std::time::Duration;

    #[test]
    fn a_plan_crosses_to_the_worker_whole() {
        let mut timing = ProtocolTiming {
            header_timeout: Some(Duration::from_millis(1500)),
            ..Default::default()
        };
        timing.pacing.stall = Some(Stall {
            d: Duration::from_secs(1),
            every: Duration::from_secs(10),
        });
        let plan = ServePlan {
            protocol: "echo".into(),
            serve: ServeConfig {
                listen: "127.0.0.1:0".parse().expect("literal address"),
                listen_all: vec!["127.0.0.1:0".parse().expect("literal address")],
                unix: None,
                processes: 3,
                threads: 1,
                max_conns_per_thread: 7,
                read_buffer: 4096,
                tls: ServerTlsChoice::Files {
                    cert: "c.pem".into(),
                    key: "k.pem".into(),
                },
                client_ca: None,
                stats: Some(Duration::from_secs(2)),
                stats_json: None,
                debug: false,
                nodelay: true,
                idle_timeout: None,
            },
            proto: timing,
        };
        let (_, json) = plan.to_env().expect("serializes");
        let back: ServePlan<ProtocolTiming> = serde_json::from_str(&json).expect("parses");
        assert_eq!(back.serve.processes, 3);
        assert_eq!(back.serve.max_conns_per_thread, 7);
        assert_eq!(back.serve.tls, plan.serve.tls);
        assert_eq!(back.serve.stats, Some(Duration::from_secs(2)));
        assert_eq!(back.proto.header_timeout, Some(Duration::from_millis(1500)));
        assert_eq!(back.proto.pacing.stall, timing.pacing.stall);
        assert_eq!(back.proto.pacing.delay, None);
    }
}
