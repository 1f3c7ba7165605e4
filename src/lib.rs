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
pub mod http_config;
pub mod ioevent;
pub mod net;
pub mod procs;
pub mod proto;
pub mod report;
pub mod rng;
pub mod server;
pub mod stats;
pub mod suite;
pub mod sys;
pub mod units;

use cli::{Cli, Command, ServeCommand};
pub use error::{Error, Result};

/// Runs one parsed command line.
pub fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Echo(a) => commands::echo::run(&a),
        Command::Ioevent(a) => commands::ioevent::run(&a),
        Command::Amqp(a) => commands::amqp::run(&a),
        Command::Serve {
            server: ServeCommand::Amqp(a),
        } => commands::amqp::serve(&a),
        Command::Connect(a) => commands::connect::run(&a),
        Command::Suite(a) => commands::suite::run(&a),
        Command::Report(a) => commands::suite_report::run(&a),
        Command::Compare(a) => commands::compare::run(&a),
        Command::Serve {
            server: ServeCommand::Echo(a),
        } => commands::serve::serve_echo(&a),
        Command::Http(a) => commands::http::run(&a),
        Command::Serve {
            server: ServeCommand::Http(a),
        } => commands::http::serve(&a),
    }
}
