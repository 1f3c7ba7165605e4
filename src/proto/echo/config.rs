//! `wirebench echo` and `serve echo`: their own flags, validated once into the echo
//! configs (a bad value is `Error::Usage`, one sentence, exit 2).

use super::codec::{HEADER_LEN, MAX_PAYLOAD};
use crate::config::{LoadConfig, LoadOverrides};
use crate::error::{Error, Result};
use crate::flags::{LoadArgs, PacingArgs};
use crate::proto::base::{Base, Configured};
use crate::units::parse_size_range;
use clap::Args;
use serde_json::json;

/// `wirebench echo`'s own flags (the shared load flags are `LoadArgs`). It takes
/// evh_perf's batch plan, so its flags show.
#[derive(Args, Debug)]
#[command(
    about = "Load a TCP echo server (no target: start the built-in one in this process)",
    mut_arg("iterations", |a| a.hide(false)),
    mut_arg("reconnects", |a| a.hide(false)),
    mut_arg("sleep", |a| a.hide(false)),
    after_long_help = "Examples:
  wirebench echo                                    # the built-in server, 10 s
  wirebench echo 127.0.0.1:8081 -t 2 -c 100 -d 30s  # wirebench serve echo listens there
  wirebench echo 127.0.0.1:8081 -c 50 --pipeline 16 -R 100000 --json result.json
  wirebench echo -t 1 -c 1 --pipeline 10000 --iterations 10 --reconnects 20   # evh_perf's batch plan",
)]
pub struct EchoArgs {
    /// HOST:PORT or unix:/PATH of the echo server; none starts the built-in server.
    pub target: Option<String>,
    /// Payload bytes per message, MIN or MIN..MAX.
    ///
    /// MIN..MAX draws each message's size uniformly; a frame adds a 28-byte header.
    #[arg(long, default_value = "64")]
    pub size: String,
    /// Built-in server only: its threads [default: the CPUs the load threads leave].
    #[arg(long, value_name = "N", hide_short_help = true)]
    pub server_threads: Option<usize>,
}

/// `wirebench serve echo`'s own flags (the shared server flags are `ServerArgs`).
#[derive(Args, Debug)]
#[command(about = "Byte echo server: whatever arrives goes back unchanged")]
pub struct ServeEchoArgs {
    #[command(flatten)]
    pub pacing: PacingArgs,
}

/// `wirebench echo`'s own settings, validated.
#[derive(Clone, Debug)]
pub struct EchoConfig {
    pub min_payload: usize,
    pub max_payload: usize,
}

impl EchoConfig {
    pub fn from_args(a: &EchoArgs, shared: &LoadArgs) -> Result<Configured<Self>> {
        let load = LoadConfig::from_args(shared, LoadOverrides::default())?;
        let (min, max) =
            parse_size_range(&a.size).map_err(|e| Error::usage(format!("--size: {e}")))?;
        let limit = MAX_PAYLOAD as u64;
        if max > limit {
            return Err(Error::usage(format!(
                "--size: at most {limit} payload bytes per message"
            )));
        }
        Ok(Configured {
            base: Base::aim(load, a.target.as_deref(), a.server_threads, shared)?,
            own: EchoConfig {
                min_payload: min as usize,
                max_payload: max as usize,
            },
        })
    }

    /// Its lines of the config block, after the shared ones (`Base::to_json`).
    pub fn add_json(&self, v: &mut serde_json::Value) {
        v["size_min"] = json!(self.min_payload);
        v["size_max"] = json!(self.max_payload);
        v["frame_header_bytes"] = json!(HEADER_LEN);
    }

    /// The config table's line for the payload sizes.
    pub fn size_text(&self) -> String {
        if self.min_payload == self.max_payload {
            format!(
                "{} payload bytes ({}-byte frames)",
                self.min_payload,
                self.min_payload + HEADER_LEN
            )
        } else {
            format!(
                "{}..{} payload bytes, uniform (+{HEADER_LEN}-byte header)",
                self.min_payload, self.max_payload
            )
        }
    }
}
