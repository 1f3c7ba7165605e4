//! `wirebench echo [HOST:PORT]`: load an echo server, or the built-in one in this process.

use super::harness;
use super::load::{self, ResultInputs};
use crate::cli::EchoArgs;
use crate::config::EchoConfig;
use crate::engine;
use crate::error::Result;
use crate::proto::echo::client::EchoFactory;
use crate::proto::echo::codec::HEADER_LEN;
use crate::proto::echo::server::EchoHandlerFactory;
use crate::report::format::seconds;
use crate::report::json::JsonSink;
use crate::report::text;
use crate::stats::Unit;

pub fn run(args: &EchoArgs) -> Result<()> {
    let cfg = EchoConfig::from_args(args)?;
    let load_cfg = &cfg.load;
    let builtin = cfg.target.is_none();
    let sockets = load_cfg.sockets() * if builtin { 2 } else { 1 };
    load::check_fd_budget(sockets)?;
    let json = load_cfg
        .output
        .json
        .as_deref()
        .map(JsonSink::create)
        .transpose()?;
    let stop = load::stop_flag()?;

    // The built-in server starts first; the run's clock starts once it listens.
    let (server, trust, addr, host) = match &cfg.target {
        Some((addr, host)) => (None, load_cfg.tls.clone(), *addr, host.clone()),
        None => {
            let (handle, trust) =
                harness::start_builtin(load_cfg, cfg.server_threads, EchoHandlerFactory)?;
            let addr = handle.addr;
            (Some(handle), trust, addr, "127.0.0.1".to_string())
        }
    };
    let tls = harness::client_tls(trust.as_ref(), &host)?;

    if !load_cfg.output.quiet {
        print!(
            "{}",
            text::config_table(
                &format!("wirebench echo {}", env!("CARGO_PKG_VERSION")),
                &config_rows(&cfg, addr)
            )
        );
    }

    let spec = harness::load_spec(load_cfg, addr, tls, stop);
    // The ramp is warm-up unless measured: the result says the real warm-up.
    let measure_start = spec.measure_start();
    let (mut progress, server_cpu) = harness::progress(
        load_cfg,
        &spec,
        server.as_ref(),
        Unit::new("messages", "echoed", true),
    );
    let started = load::unix_ms();
    let out = engine::run(
        spec,
        EchoFactory::new(cfg.min_payload, cfg.max_payload),
        &mut progress,
    )?;
    progress.finish();

    let server = server.map(|s| server_cpu.figures(s));
    let result = load::build_result(
        ResultInputs {
            kind: "echo",
            target: addr.to_string(),
            config: cfg.to_json(),
            started_unix_ms: started,
            warmup: measure_start,
            server,
            unit: Unit::new("messages", "echoed", true),
        },
        &out,
    );
    load::report(&result, &out, &load_cfg.output, json)
}

fn config_rows(cfg: &EchoConfig, addr: std::net::SocketAddr) -> Vec<(&'static str, String)> {
    let l = &cfg.load;
    let target = match &cfg.target {
        Some(_) => addr.to_string(),
        None => format!(
            "{addr} (built-in server, {} thread{})",
            cfg.server_threads,
            if cfg.server_threads == 1 { "" } else { "s" }
        ),
    };
    let mut plan = harness::plan_text(l.plan);
    if let Some(ramp) = harness::ramp_text(l) {
        plan = format!("{plan}; ramp: {ramp}");
    }
    let size = if cfg.min_payload == cfg.max_payload {
        format!(
            "{} payload bytes ({}-byte frames)",
            cfg.min_payload,
            cfg.min_payload + HEADER_LEN
        )
    } else {
        format!(
            "{}..{} payload bytes, uniform (+{HEADER_LEN}-byte header)",
            cfg.min_payload, cfg.max_payload
        )
    };
    vec![
        ("target", target),
        ("threads", l.threads.to_string()),
        (
            "connections",
            format!("{} per thread ({} total)", l.connections, l.sockets()),
        ),
        (
            "pipeline",
            format!("{} in flight per connection", l.pipeline),
        ),
        ("plan", plan),
        ("size", size),
        (
            "rate",
            l.rate
                .map(|r| format!("{r} messages/s open loop (latency from intended send time)"))
                .unwrap_or_else(|| "closed loop".into()),
        ),
        ("timeout", seconds(l.timeout)),
        ("warmup", seconds(l.warmup)),
        (
            "tls",
            if l.tls.is_some() {
                "on".into()
            } else {
                "off".into()
            },
        ),
        ("nodelay", l.nodelay.to_string()),
    ]
}
