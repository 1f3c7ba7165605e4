//! What a protocol is to the commands: the `Protocol` trait. `wirebench <name>` and
//! `wirebench serve <name>` run any protocol through it (commands/run_load.rs and
//! commands/serve.rs), a suite and the published schema through the registry's
//! `Entry`, which every protocol is (`registered.rs`), so a protocol lives in its
//! folder, `src/proto/<name>/`, and is named outside it only by one line per list (the
//! command enums in cli.rs, the dispatch in commands/mod.rs, `REGISTRY` in
//! registry/mod.rs). What every protocol's load shares (the load shape, the target or
//! the built-in server, the TLS of a URL's scheme) is `base::Base`, defined once.

pub use super::base::{Aim, Base, Configured};
use super::entry::{no_ready_probe, plain, ReadyProbe, SuiteLoad, SuitePoint};
use crate::config::ProtocolTiming;
use crate::engine::session::{ClientSession, SessionFactory};
use crate::engine::{EngineOutput, LoadSpec};
use crate::error::Result;
use crate::flags::LoadArgs;
use crate::server::session::{ServerFactory, ServerSession};
use crate::stats::{RunResult, Unit};

/// A protocol's per-worker figures: those of its client sessions, kept per worker and
/// phase by the engine and merged exactly (`stats::Figures`).
pub type FiguresOf<P> =
    <<<P as Protocol>::Client as SessionFactory>::Session as ClientSession>::Figures;

/// A protocol's server figures: those of its server sessions, merged exactly over
/// threads and worker processes (`stats::Figures`).
pub type ServerFiguresOf<P> =
    <<<P as Protocol>::Server as ServerFactory>::Session as ServerSession>::Figures;

/// A protocol's validated load: the shared `Base` and its own settings.
pub type ConfigOf<P> = Configured<<P as Protocol>::Config>;

/// A protocol as the commands see it. Everything is a function of its validated
/// config, built once from its own flags and the shared ones.
pub trait Protocol: Sized + Sync + 'static {
    /// `wirebench NAME`, `wirebench serve NAME`, the result's `kind`, a suite load's
    /// `protocol`.
    const NAME: &'static str;
    /// Its load command's own flags (its target among them), flattened beside the
    /// shared `LoadArgs` (`cli::LoadCommand`).
    type Args: clap::Args;
    /// Its `serve` command's own flags, flattened beside `ServerArgs`.
    type ServeArgs: clap::Args;
    /// Its own settings of a load, validated (the shared part is `Base`).
    type Config;
    /// Its `serve` command, validated (the shared part is `config::ServeConfig`);
    /// serialized into the plan of `serve --processes` workers.
    type ServeConfig: serde::Serialize + serde::de::DeserializeOwned;
    /// One client session per connection (the engine's seam).
    type Client: SessionFactory;
    /// One server session per accepted connection (the server runtime's seam).
    type Server: ServerFactory;

    /// Validates its flags with the shared ones, once; a bad value is `Error::Usage`.
    fn config(args: &Self::Args, shared: &LoadArgs) -> Result<ConfigOf<Self>>;
    /// The built-in server a load with no target measures.
    fn builtin_server(cfg: &ConfigOf<Self>) -> Self::Server;
    /// The client sessions' factory for a load aimed at `aim`.
    fn client(cfg: &ConfigOf<Self>, aim: &Aim) -> Self::Client;
    /// What it counts, in its words (messages echoed, requests answered, ...).
    fn unit(cfg: &ConfigOf<Self>) -> Unit;

    /// The target as the result and the config table name it. Default: HOST:PORT.
    fn target_text(_cfg: &ConfigOf<Self>, aim: &Aim) -> String {
        aim.addr.to_string()
    }
    /// Its own rows of the config table, between the target and the shared ones.
    fn own_rows(_cfg: &ConfigOf<Self>, _aim: &Aim) -> Vec<(&'static str, String)> {
        Vec::new()
    }
    /// The config table printed before a run, row by row: the target, its own rows,
    /// then the rows every load shares (`Base::rows`, its plan line among them).
    fn plan_rows(cfg: &ConfigOf<Self>, aim: &Aim) -> Vec<(&'static str, String)> {
        let target = cfg
            .base
            .target_row(Self::target_text(cfg, aim), aim, "server");
        let mut rows = vec![("target", target)];
        rows.extend(Self::own_rows(cfg, aim));
        rows.extend(cfg.base.rows(&Self::unit(cfg).per_s()));
        rows
    }
    /// Its own settings in the result's `config` block, after the shared ones.
    fn own_json(_cfg: &ConfigOf<Self>, _block: &mut serde_json::Value) {}
    /// The result's `config` block: the shared part (`Base::to_json`), then its own.
    fn config_json(cfg: &ConfigOf<Self>) -> serde_json::Value {
        let mut v = cfg.base.to_json();
        Self::own_json(cfg, &mut v);
        v
    }
    /// Its connection policy, which the engine carries out for every protocol alike:
    /// requests per connection (HTTP keep-alive off: 1; AMQP churn: its messages),
    /// and whether a ramp counts in the figures.
    fn connection_policy(_cfg: &ConfigOf<Self>, _spec: &mut LoadSpec) {}
    /// Adds its own blocks to the result (HTTP `status_classes`, the `amqp` block),
    /// from its figures merged over the workers (`out.figures`), and its own judgement
    /// of the run.
    fn finish(
        _cfg: &ConfigOf<Self>,
        _out: &EngineOutput<FiguresOf<Self>>,
        _result: &mut RunResult,
    ) {
    }
    /// Lines printed right after the summary, before the histogram.
    fn summary_lines(_cfg: &ConfigOf<Self>, _result: &RunResult) -> String {
        String::new()
    }
    /// Lines printed last, after the histogram.
    fn closing_lines(
        _cfg: &ConfigOf<Self>,
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
    /// The ALPN protocols its server offers under `--tls`, in order of preference
    /// (rustls picks the first the client also offers); none by default.
    const ALPN: &'static [&'static [u8]] = &[];
    /// The ALPN protocols its load offers over TLS, in order of preference; none by
    /// default.
    const CLIENT_ALPN: &'static [&'static [u8]] = &[];
    /// Its server's own figures as one line for `serve NAME --stats` and the final report.
    fn serve_line(_figures: &ServerFiguresOf<Self>) -> Option<String> {
        None
    }
    /// Its built-in server's own figures as a block of the result's `server` counters
    /// (named by the protocol), or None when it has none worth a block.
    fn server_block(_figures: &ServerFiguresOf<Self>) -> Option<serde_json::Value> {
        None
    }

    // In a suite and in the published schema (the registry's `proto::entry::Entry`).

    /// The result blocks it adds at the top level, as JSON schema text (`Entry::
    /// result_blocks_schema`): `include_str!("figures.schema.json")` where it has any.
    fn result_blocks_schema() -> &'static str {
        "{}"
    }
    /// How its result blocks merge over shards and rounds (`Entry::block_merge`).
    fn block_merge() -> crate::stats::merge::BlockMerge {
        crate::stats::merge::no_block_merge
    }
    /// A suite load's size when its file gives no `body_size`.
    const SUITE_DEFAULT_SIZE: u64 = 0;
    /// The external generators that drive it (`Entry::suite_generators`).
    fn suite_generators() -> &'static [&'static str] {
        &[]
    }
    /// A suite load of it (`Entry::suite_load`). Default: no settings of its own, and
    /// the point's payloads over its connections (`SuitePoint::sized_load_args`).
    fn suite_load(
        block: Option<&toml::Value>,
        _sizes: &[u64],
    ) -> std::result::Result<Box<dyn SuiteLoad>, String> {
        plain(block, sized_args::<Self>)
    }
    /// A suite server's readiness check in its words (`Entry::ready_probe`).
    fn ready_probe(_value: &toml::Value) -> std::result::Result<ReadyProbe, String> {
        Err(no_ready_probe(Self::NAME))
    }
}

/// A suite point of `P` as payloads of the point's size: `NAME HOST:PORT -t -c
/// --pipeline --size`, then the shared flags.
fn sized_args<P: Protocol>(p: &SuitePoint<'_>) -> Vec<String> {
    p.sized_load_args(P::NAME, p.addr.to_string())
}
