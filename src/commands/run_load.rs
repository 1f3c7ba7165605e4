//! `wirebench <protocol> [TARGET]`: one load command for every protocol. It reads the
//! shared flags once (through the protocol's config), starts the built-in server when
//! no target is given, runs the engine, builds the result, prints it and judges it;
//! the protocol (`proto::plugin::Protocol`) only says what differs.

use super::harness;
use super::live_metrics::LiveMetrics;
use super::load::{self, ResultInputs, ServerFigures};
use super::load_sources::LoadSources;
use super::verdict;
use crate::cli::LoadCommand;
use crate::engine;
use crate::engine::session::OffsetIds;
use crate::engine::EngineOutput;
use crate::error::Result;
use crate::net::tls::Trust;
use crate::net::unix::Dest;
use crate::proto::plugin::{Aim, ConfigOf, FiguresOf, Protocol, ServerFiguresOf};
use crate::report::console::Console;
use crate::report::json::JsonSink;
use crate::report::text;
use crate::server::ServerHandle;
use crate::stats::tee::Tee;
use crate::stats::RunResult;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

pub fn run<P: Protocol>(cmd: &LoadCommand<P::Args>) -> Result<()> {
    let cfg = P::config(&cmd.proto, &cmd.load)?;
    let thresholds = verdict::thresholds::<P>(&cfg, &cmd.load.verdict)?;
    let l = &cfg.base.load;
    check_fd_budget::<P>(&cfg)?;
    let json = l.output.json.as_deref().map(JsonSink::create).transpose()?;
    // `--json -`: the JSON takes stdout, the plan and the summary go to stderr.
    let console = Console::for_json(l.output.json.as_deref());
    let stop = load::stop_flag()?;
    // --metrics-listen: a busy address is refused before anything starts.
    let metrics = LiveMetrics::start(&cmd.load.metrics, P::NAME, l)?;
    let Step { mut result, out } = measure::<P>(&cfg, &console, stop, metrics.as_ref())?;
    result.thresholds = verdict::evaluate::<P>(&thresholds, &result);
    let mut extra = P::summary_lines(&cfg, &result);
    extra.push_str(&crate::report::thresholds::table(&result.thresholds));
    let outcome = load::report_with(&result, &out, &l.output, json, &extra);
    console.print(&P::closing_lines(&cfg, &result, &out));
    if let Some(m) = metrics {
        m.linger();
    }
    verdict::exit(outcome, &result.thresholds)
}

/// Refuses a plan that needs more sockets than this process may open.
pub(super) fn check_fd_budget<P: Protocol>(cfg: &ConfigOf<P>) -> Result<()> {
    // A built-in server holds the other end of every connection in this process.
    let builtin = cfg.base.target.is_none();
    load::check_fd_budget(cfg.base.load.sockets() * if builtin { 2 } else { 1 })
}

/// One run's result and the engine's output it was built from.
pub(super) struct Step<P: Protocol> {
    pub result: RunResult,
    pub out: EngineOutput<FiguresOf<P>>,
}

/// One run of `cfg`, as far as its result: the built-in server (when there is no
/// target), the plan printed (unless quiet), the engine, the result built and finished
/// by the protocol. `wirebench <protocol>` runs it once, `--search` once per step.
/// `metrics`, the live endpoint, is fed while it runs and given its final figures.
pub(super) fn measure<P: Protocol>(
    cfg: &ConfigOf<P>,
    console: &Console,
    stop: Arc<AtomicBool>,
    metrics: Option<&LiveMetrics>,
) -> Result<Step<P>> {
    let l = &cfg.base.load;
    let target = cfg.base.target.clone();
    let builtin = target.is_none();
    let mut hlog = harness::interval_log(l, P::NAME)?;

    let Aimed {
        server,
        trust,
        addr,
        host,
    } = aim_at::<P>(cfg, target)?;
    let tls = harness::client_tls(trust.as_ref(), l, P::CLIENT_ALPN, &host)?;
    let aim = Aim {
        addr: addr.clone(),
        host,
        builtin,
        tls: trust.is_some(),
    };
    let target_text = P::target_text(cfg, &aim);
    let sources = sources_and_plan::<P>(cfg, console, &aim)?;

    let mut spec = harness::load_spec(l, addr, tls, stop);
    spec.connector.set_sources(sources.addrs.clone());
    spec.connector.tunnel = cfg.base.tunnel.clone();
    P::connection_policy(cfg, &mut spec);
    // A ramp is warm-up unless measured: the result says when measuring began.
    let measure_start = spec.shape.measure_start();
    let unit = P::unit(cfg);
    let (mut progress, phase) = harness::progress(l, &spec, server.as_ref(), unit.clone());
    let mut view = harness::terminal_view(l, &spec, P::NAME, &unit);
    if view.is_some() {
        progress = progress.silent();
    }
    // A shard's connection ids start at its own base, so no two shards share one.
    let client = OffsetIds {
        inner: P::client(cfg, &aim),
        base: l
            .coordination
            .shard
            .as_ref()
            .map_or(0, |s| s.connection_id_base()),
    };
    // --start-at: nothing connects before the common start (the built-in server, if
    // any, already listens).
    if !l.coordination.wait_for_start(&spec.stop) {
        return Err(crate::error::Error::ShortFall(
            "stopped while waiting for --start-at; nothing was sent".into(),
        ));
    }
    let started = load::unix_ms();
    let mut watched = crate::metrics::Watched {
        inner: &mut progress,
        endpoint: metrics.map(LiveMetrics::endpoint),
    };
    let mut observers: Vec<&mut dyn crate::stats::Observer> = vec![&mut watched];
    if let Some(h) = hlog.as_mut() {
        observers.push(h);
    }
    if let Some(v) = view.as_mut() {
        observers.push(v);
    }
    let out = engine::run(spec, client, &mut Tee(observers))?;
    let interference = phase.interference();
    progress.finish();
    if let Some(v) = view.as_mut() {
        v.finish(&out.measured, &out.latency, out.elapsed);
    }
    if let Some(m) = metrics {
        m.finish(&out);
    }
    if let Some(h) = hlog {
        h.finish().map_err(crate::error::Error::runtime)?;
    }

    let server = server.map(|s| server_figures::<P>(s, &phase));
    let mut result = load::build_result(
        ResultInputs {
            extras: Vec::new(),
            kind: P::NAME,
            target: target_text,
            config: with_sources(P::config_json(cfg), &sources),
            started_unix_ms: started,
            warmup: measure_start,
            server,
            unit,
        },
        &out,
    );
    result.set_interference(interference);
    P::finish(cfg, &out, &mut result);
    result.shard = l
        .coordination
        .info(started + measure_start.as_millis() as u64, l.portion_json());
    Ok(Step { result, out })
}

/// The built-in server's figures over the measured phase, its protocol's own block among
/// its counters; final once it has shut down.
fn server_figures<P: Protocol>(s: ServerHandle, phase: &harness::PhaseStart) -> ServerFigures {
    let figures = s.figures_reader();
    let mut f = phase.figures(s);
    let own = serde_json::from_value::<ServerFiguresOf<P>>(figures()).unwrap_or_default();
    if let Some(block) = P::server_block(&own) {
        f.counters[P::NAME] = block;
    }
    f
}

/// Where the load's connections come from (`--source`, or the loopback sources a large
/// load spreads over), and the plan printed with them unless quiet.
fn sources_and_plan<P: Protocol>(
    cfg: &ConfigOf<P>,
    console: &Console,
    aim: &Aim,
) -> Result<LoadSources> {
    let l = &cfg.base.load;
    let sources = match &aim.addr {
        Dest::Tcp(addr) => LoadSources::choose(
            l.source.as_ref(),
            *addr,
            usize::try_from(l.sockets()).unwrap_or(usize::MAX),
            crate::net::loopback::bindable,
        )?,
        Dest::Unix(_) => LoadSources::for_unix(l.source.as_ref())?,
    };
    if !l.output.quiet {
        let mut rows = P::plan_rows(cfg, aim);
        rows.extend(sources.row().map(|r| ("sources", r)));
        rows.extend(cfg.base.tunnel.as_ref().map(|t| ("proxy", t.shown.clone())));
        console.print(&text::config_table(
            &format!("wirebench {} {}", P::NAME, env!("CARGO_PKG_VERSION")),
            &rows,
        ));
    }
    Ok(sources)
}

/// The server a load aims at, and the TLS trust its client needs.
struct Aimed {
    server: Option<ServerHandle>,
    trust: Option<Trust>,
    addr: Dest,
    host: String,
}

/// The target given, or the built-in server, started first (the run's clock starts once
/// it listens).
fn aim_at<P: Protocol>(cfg: &ConfigOf<P>, target: Option<(Dest, String)>) -> Result<Aimed> {
    let l = &cfg.base.load;
    Ok(match target {
        Some((addr, host)) => Aimed {
            server: None,
            trust: l.tls.clone(),
            addr,
            host,
        },
        None => {
            let factory = P::builtin_server(cfg);
            let (handle, trust) = harness::start_builtin(l, cfg.base.server_threads, factory)?;
            Aimed {
                addr: Dest::Tcp(handle.addr),
                server: Some(handle),
                trust,
                host: "127.0.0.1".to_string(),
            }
        }
    })
}

/// The protocol's config block, with `sources` when the load chose or was given them.
fn with_sources(mut config: serde_json::Value, sources: &LoadSources) -> serde_json::Value {
    let said = sources.json();
    if let (false, Some(o)) = (said.is_null(), config.as_object_mut()) {
        o.insert("sources".into(), said);
    }
    config
}
