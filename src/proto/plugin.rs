//! What a protocol is to the commands: the `Protocol` trait. `wirebench <name>` and
//! `wirebench serve <name>` run any protocol through it (commands/run_load.rs and
//! commands/serve.rs), so a protocol lives in its folder, `src/proto/<name>/`, and is
//! named outside it only by one line per list (the command enums in cli.rs, the
//! dispatch in commands/mod.rs, `REGISTRY` in registry/mod.rs).

use crate::config::{LoadConfig, ProtocolTiming};
use crate::engine::session::{ClientSession, SessionFactory};
use crate::engine::{EngineOutput, LoadSpec};
use crate::error::Result;
use crate::flags::LoadArgs;
use crate::server::session::{ServerFactory, ServerSession};
use crate::stats::{RunResult, Unit};
use std::net::SocketAddr;

/// Where a run's load goes, known once its built-in server (if any) listens.
#[derive(Clone, Debug)]
pub struct Aim {
    /// The address connected to.
    pub addr: SocketAddr,
    /// The host a TLS client checks the certificate against.
    pub host: String,
    /// The load started the built-in server at `addr`.
    pub builtin: bool,
    /// The client speaks TLS.
    pub tls: bool,
}

/// A protocol's per-worker figures: those of its client sessions, kept per worker and
/// phase by the engine and merged exactly (`stats::Figures`).
pub type FiguresOf<P> =
    <<<P as Protocol>::Client as SessionFactory>::Session as ClientSession>::Figures;

/// A protocol's server figures: those of its server sessions, merged exactly over
/// threads and worker processes (`stats::Figures`).
pub type ServerFiguresOf<P> =
    <<<P as Protocol>::Server as ServerFactory>::Session as ServerSession>::Figures;

/// A protocol as the commands see it. Everything is a function of its validated
/// config, built once from its own flags and the shared ones.
pub trait Protocol: 'static {
    /// `wirebench NAME`, `wirebench serve NAME`, the result's `kind`.
    const NAME: &'static str;
    /// Its load command's own flags (its target among them), flattened beside the
    /// shared `LoadArgs` (`cli::LoadCommand`).
    type Args: clap::Args;
    /// Its `serve` command's own flags, flattened beside `ServerArgs`.
    type ServeArgs: clap::Args;
    /// Its load, validated.
    type Config;
    /// Its `serve` command, validated (the shared part is `config::ServeConfig`);
    /// serialized into the plan of `serve --processes` workers.
    type ServeConfig: serde::Serialize + serde::de::DeserializeOwned;
    /// One client session per connection (the engine's seam).
    type Client: SessionFactory;
    /// One server session per accepted connection (the server runtime's seam).
    type Server: ServerFactory;

    /// Validates its flags with the shared ones, once; a bad value is `Error::Usage`.
    fn config(args: &Self::Args, shared: &LoadArgs) -> Result<Self::Config>;
    /// The shared load shape inside its config.
    fn load(cfg: &Self::Config) -> &LoadConfig;
    /// The address and TLS host of the target given, or None: start the built-in server.
    fn target(cfg: &Self::Config) -> Option<(SocketAddr, String)>;
    /// The built-in server's threads.
    fn server_threads(cfg: &Self::Config) -> usize;
    /// The built-in server a load with no target measures.
    fn builtin_server(cfg: &Self::Config) -> Self::Server;
    /// The client sessions' factory for a load aimed at `aim`.
    fn client(cfg: &Self::Config, aim: &Aim) -> Self::Client;
    /// What it counts, in its words (messages echoed, requests answered, ...).
    fn unit(cfg: &Self::Config) -> Unit;

    /// The target as the result and the config table name it (a URL, HOST:PORT).
    fn target_text(cfg: &Self::Config, aim: &Aim) -> String;
    /// The config table printed before a run, row by row (its plan line among them).
    fn plan_rows(cfg: &Self::Config, aim: &Aim) -> Vec<(&'static str, String)>;
    /// The result's `config` block.
    fn config_json(cfg: &Self::Config) -> serde_json::Value;

    /// Its connection policy, which the engine carries out for every protocol alike:
    /// requests per connection (HTTP keep-alive off: 1; AMQP churn: its messages),
    /// and whether a ramp counts in the figures.
    fn connection_policy(_cfg: &Self::Config, _spec: &mut LoadSpec) {}
    /// Adds its own blocks to the result (HTTP `status_classes`, the `amqp` block),
    /// from its figures merged over the workers (`out.figures`), and its own judgement
    /// of the run.
    fn finish(_cfg: &Self::Config, _out: &EngineOutput<FiguresOf<Self>>, _result: &mut RunResult) {}
    /// Lines printed right after the summary, before the histogram.
    fn summary_lines(_cfg: &Self::Config, _result: &RunResult) -> String {
        String::new()
    }
    /// Lines printed last, after the histogram.
    fn closing_lines(
        _cfg: &Self::Config,
        _result: &RunResult,
        _out: &EngineOutput<FiguresOf<Self>>,
    ) -> String {
        String::new()
    }

    /// Validates `serve NAME`'s own flags.
    fn serve_config(args: &Self::ServeArgs) -> Result<Self::ServeConfig>;
    /// What it adds to the server's timing (a head timeout, pacing).
    fn serve_timing(cfg: &Self::ServeConfig) -> ProtocolTiming;
    /// The server sessions' factory of `serve NAME`.
    fn server(cfg: &Self::ServeConfig) -> Self::Server;
    /// Its server's own figures as one line for `serve NAME --stats` and the final report.
    fn serve_line(_figures: &ServerFiguresOf<Self>) -> Option<String> {
        None
    }
    /// Its built-in server's own figures as a block of the result's `server` counters
    /// (named by the protocol), or None when it has none worth a block.
    fn server_block(_figures: &ServerFiguresOf<Self>) -> Option<serde_json::Value> {
        None
    }
}
