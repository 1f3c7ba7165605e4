//! One module per command; each validates its flags, runs, and reports. Every
//! protocol's load runs through `run_load` (or `search`, which runs it step by step),
//! its server through `serve`.

pub mod connect;
pub mod harness;
pub mod ioevent;
pub mod k8s;
pub mod live_metrics;
pub mod load;
pub mod load_sources;
pub mod merge;
pub mod merge_inputs;
pub mod run_load;
pub mod search;
pub mod search_steps;
pub mod serve;
pub mod serve_metrics;
pub mod serve_plan;
pub mod serve_procs;
pub mod serve_stats;
pub mod serve_stats_log;
pub mod verdict;

// suites and reports (issue 7)
pub mod compare;
pub mod suite;
pub mod suite_report;

use crate::cli::{Cli, Command, LoadCommand, ServeCommand};
use crate::error::Result;
use crate::proto::plugin::Protocol;

/// A protocol's load command: a capacity search (`--search`: steps, each one run) or
/// one run (`run_load`).
fn load_command<P: Protocol>(cmd: &LoadCommand<P::Args>) -> Result<()> {
    match &cmd.load.verdict.search {
        Some(conditions) => search::run::<P>(cmd, conditions),
        None => run_load::run::<P>(cmd),
    }
}

/// Runs one parsed command line. A protocol takes one arm for its load and one for
/// its server, both through `proto::plugin::Protocol`, each naming it by its path
/// (no `use` line of its own).
pub fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Echo(a) => load_command::<crate::proto::echo::plugin::Echo>(&a),
        Command::Http(mut a) => match crate::proto::http::alpn::speak_h2(&mut a.proto, &a.load)? {
            true => load_command::<crate::proto::http::h2_plugin::Http2>(&a),
            false => load_command::<crate::proto::http::plugin::Http>(&a),
        },
        Command::Amqp(a) => load_command::<crate::proto::amqp::plugin::Amqp>(&a),
        Command::Ws(a) => load_command::<crate::proto::ws::plugin::Ws>(&a),
        Command::Grpc(a) => load_command::<crate::proto::grpc::plugin::Grpc>(&a),
        Command::Redis(a) => load_command::<crate::proto::redis::plugin::Redis>(&a),
        Command::Serve { server } => match server {
            ServeCommand::Echo(a) => serve::run::<crate::proto::echo::plugin::Echo>(&a),
            ServeCommand::Http(a) => serve::run::<crate::proto::http::plugin::Http>(&a),
            ServeCommand::Amqp(a) => serve::run::<crate::proto::amqp::plugin::Amqp>(&a),
            ServeCommand::Ws(a) => serve::run::<crate::proto::ws::plugin::Ws>(&a),
            ServeCommand::Grpc(a) => serve::run::<crate::proto::grpc::plugin::Grpc>(&a),
            ServeCommand::Redis(a) => serve::run::<crate::proto::redis::plugin::Redis>(&a),
        },
        Command::Ioevent(a) => ioevent::run(&a),
        Command::Connect(a) => connect::run(&a),
        Command::Suite(a) => suite::run(&a),
        Command::Report(a) => suite_report::run(&a),
        Command::Compare(a) => compare::run(&a),
        Command::K8s { k8s } => k8s::run(&k8s, run),
        Command::Merge(a) => merge::run(&a),
    }
}
