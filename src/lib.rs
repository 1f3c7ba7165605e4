//! wirebench: measure network servers (messages, requests, connections and bytes per
//! second, HDR latency, errors, CPU cost). Data flows one way:
//! flags (`cli`) -> validated config (`config`) -> `engine` -> `stats::RunResult` -> `report`.

pub mod cli;
pub mod clock;
pub mod commands;
pub mod config;
pub mod connect;
pub mod engine;
pub mod error;
pub mod flags;
pub mod ioevent;
pub mod net;
pub mod procs;
pub mod proto;
pub mod report;
pub mod rng;
pub mod server;
pub mod shard;
pub mod stats;
pub mod suite;
pub mod sys;
pub mod units;

use cli::{Cli, Command, ServeCommand};
use commands::{run_load, serve};
pub use error::{Error, Result};
use proto::{
    amqp::plugin::Amqp, echo::plugin::Echo, http::plugin::Http, redis::plugin::Redis,
    ws::plugin::Ws,
};

/// Runs one parsed command line. A protocol takes one arm for its load and one for
/// its server, both through `proto::plugin::Protocol`.
pub fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Echo(a) => run_load::run::<Echo>(&a),
        Command::Http(a) => run_load::run::<Http>(&a),
        Command::Amqp(a) => run_load::run::<Amqp>(&a),
        Command::Ws(a) => run_load::run::<Ws>(&a),
        Command::Redis(a) => run_load::run::<Redis>(&a),
        Command::Serve { server } => match server {
            ServeCommand::Echo(a) => serve::run::<Echo>(&a),
            ServeCommand::Http(a) => serve::run::<Http>(&a),
            ServeCommand::Amqp(a) => serve::run::<Amqp>(&a),
            ServeCommand::Ws(a) => serve::run::<Ws>(&a),
            ServeCommand::Redis(a) => serve::run::<Redis>(&a),
        },
        Command::Ioevent(a) => commands::ioevent::run(&a),
        Command::Connect(a) => commands::connect::run(&a),
        Command::Suite(a) => commands::suite::run(&a),
        Command::Report(a) => commands::suite_report::run(&a),
        Command::Compare(a) => commands::compare::run(&a),
        Command::K8s { k8s } => commands::k8s::run(&k8s),
        Command::Merge(a) => commands::merge::run(&a),
    }
}
