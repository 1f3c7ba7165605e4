//! wirebench: measure network servers (messages, requests, connections and bytes per
//! second, HDR latency, errors, CPU cost). Data flows one way:
//! flags (`cli`) -> validated config (`config`) -> `engine` -> `stats::RunResult` -> `report`.

pub mod cli;
pub mod cli_help;
pub mod clock;
pub mod commands;
pub mod config;
pub mod connect;
pub mod engine;
pub mod error;
pub mod flags;
#[doc(hidden)]
pub mod fuzzing;
pub mod ioevent;
pub mod metrics;
pub mod net;
pub mod procs;
pub mod proto;
pub mod reactor;
pub mod registry;
pub mod report;
pub mod rng;
pub mod server;
pub mod shard;
pub mod stats;
pub mod suite;
pub mod sys;
pub mod units;

pub use error::{Error, Result};

/// Runs one parsed command line (`commands::run` dispatches it).
pub fn run(cli: cli::Cli) -> Result<()> {
    commands::run(cli)
}
