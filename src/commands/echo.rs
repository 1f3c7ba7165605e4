//! `wirebench echo [HOST:PORT]`: load an echo server, or the built-in one in this process.

use super::load::{self, ResultInputs, ServerFigures};
use crate::cli::EchoArgs;
use crate::config::EchoConfig;
use crate::engine::connector::{ClientTls, Connector};
use crate::engine::{self, LoadSpec, Plan};
use crate::error::Result;
use crate::net::tls::{self, Trust};
use crate::proto::echo::client::EchoFactory;
use crate::proto::echo::codec::HEADER_LEN;
use crate::proto::echo::server::EchoHandlerFactory;
use crate::report::format::seconds;
use crate::report::json::JsonSink;
use crate::report::progress::Progress;
use crate::report::text;
use crate::server::{self, ServerConfig};
use std::cell::Cell;
use std::rc::Rc;
use std::time::Duration;

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
    let mut trust = load_cfg.tls.clone();
    let (server, addr, host) = match &cfg.target {
        Some((addr, host)) => (None, *addr, host.clone()),
        None => {
            let server_tls = match load_cfg.tls {
                Some(_) => Some(tls::server_self_signed()?),
                None => None,
            };
            if let (Some(Trust::System), Some(st)) = (&trust, &server_tls) {
                // Verify the built-in server's certificate for real rather than skipping checks.
                trust = Some(Trust::CaPem(st.generated_pem.clone().unwrap_or_default()));
            }
            let handle = server::start(
                ServerConfig {
                    listen: "127.0.0.1:0".parse().expect("literal address"),
                    threads: cfg.server_threads,
                    max_conns_per_thread: 0,
                    read_buffer: 64 * 1024,
                    tls: server_tls.map(|t| t.config),
                    nodelay: load_cfg.nodelay,
                    debug: false,
                },
                EchoHandlerFactory,
            )?;
            let addr = handle.addr;
            (Some(handle), addr, "127.0.0.1".to_string())
        }
    };
    let tls = match &trust {
        Some(t) => Some(ClientTls {
            config: tls::client_config(t)?,
            server_name: tls::server_name(&host)?,
        }),
        None => None,
    };

    if !load_cfg.output.quiet {
        print!(
            "{}",
            text::config_table(
                &format!("wirebench echo {}", env!("CARGO_PKG_VERSION")),
                &config_rows(&cfg, addr)
            )
        );
    }

    let spec = LoadSpec {
        connector: Connector {
            addr,
            tls,
            nodelay: load_cfg.nodelay,
            timeout: load_cfg.timeout,
        },
        threads: load_cfg.threads,
        connections: load_cfg.connections,
        pipeline: load_cfg.pipeline,
        plan: load_cfg.plan,
        rate: load_cfg.rate,
        warmup: load_cfg.warmup,
        timeout: load_cfg.timeout,
        interval: load_cfg.output.progress,
        stop,
    };
    let duration = match load_cfg.plan {
        Plan::Duration(d) => Some(d),
        _ => None,
    };
    let server_cpu_start = Rc::new(Cell::new(Duration::ZERO));
    let mut progress = Progress::new(!load_cfg.output.quiet, spec.expected(), duration);
    if let Some(s) = &server {
        let probe = s.cpu_probe();
        let start = server_cpu_start.clone();
        start.set(probe.cpu_time());
        progress = progress.on_start(move || start.set(probe.cpu_time()));
    }
    let started = load::unix_ms();
    let out = engine::run(
        spec,
        EchoFactory::new(cfg.min_payload, cfg.max_payload),
        &mut progress,
    )?;
    progress.finish();

    let server = server.map(|s| {
        let cpu = s
            .cpu_probe()
            .cpu_time()
            .saturating_sub(server_cpu_start.get());
        let totals = s.shutdown();
        ServerFigures {
            counters: serde_json::to_value(totals).unwrap_or_default(),
            cpu,
        }
    });
    let result = load::build_result(
        ResultInputs {
            kind: "echo",
            target: addr.to_string(),
            config: cfg.to_json(),
            started_unix_ms: started,
            warmup: load_cfg.warmup,
            server,
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
    let plan = match l.plan {
        Plan::Duration(d) => format!("for {}", seconds(d)),
        Plan::Count(n) => format!("{n} requests"),
        Plan::Batch {
            iterations,
            reconnects,
            sleep,
        } => format!(
            "batch: {reconnects} reconnects x {iterations} iterations, {} ms sleep",
            sleep.as_millis()
        ),
    };
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
                .map(|r| format!("{r} msgs/s open loop (latency from intended send time)"))
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
