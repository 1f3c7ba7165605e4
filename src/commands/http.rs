//! `wirebench http [URL]`: load an HTTP/1.1 server, or the built-in one in this
//! process; and `wirebench serve http`.

use super::load::{self, ResultInputs, ServerFigures};
use crate::cli::{HttpArgs, ServeHttpArgs};
use crate::engine::connector::{ClientTls, Connector};
use crate::engine::{self, LoadSpec, Plan};
use crate::error::Result;
use crate::http_config::{serve_limits, HttpConfig};
use crate::net::tls::{self, Trust};
use crate::proto::http::client::HttpFactory;
use crate::proto::http::request;
use crate::proto::http::server::{HttpHandlerFactory, Limits};
use crate::report::format::{group, seconds};
use crate::report::json::JsonSink;
use crate::report::progress::Progress;
use crate::report::text;
use crate::server::{self, ServerConfig};
use crate::stats::result::status_classes;
use crate::stats::RunResult;
use std::cell::Cell;
use std::fmt::Write as _;
use std::rc::Rc;
use std::time::Duration;

pub fn serve(args: &ServeHttpArgs) -> Result<()> {
    let limits = serve_limits(args)?;
    super::serve::serve(&args.server, HttpHandlerFactory::new(limits), "http")
}

pub fn run(args: &HttpArgs) -> Result<()> {
    let cfg = HttpConfig::from_args(args)?;
    let load_cfg = &cfg.load;
    let builtin = cfg.url.is_none();
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
    let (server, addr, host, authority, path) = match (&cfg.url, cfg.addr) {
        (Some(u), Some(addr)) => (None, addr, u.host.clone(), u.authority(), u.path.clone()),
        _ => {
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
                HttpHandlerFactory::new(Limits {
                    max_body: (cfg.body.len() + 1).max(Limits::default().max_body),
                    ..Limits::default()
                }),
            )?;
            let addr = handle.addr;
            (
                Some(handle),
                addr,
                "127.0.0.1".to_string(),
                addr.to_string(),
                "/".to_string(),
            )
        }
    };
    let tls = match &trust {
        Some(t) => Some(ClientTls {
            config: tls::client_config(t)?,
            server_name: tls::server_name(&host)?,
        }),
        None => None,
    };
    let spec_req = cfg.request(&authority, &path);
    let wire = request::serialize(&spec_req);
    let scheme = if trust.is_some() { "https" } else { "http" };
    let url_text = format!("{scheme}://{authority}{path}");

    if !load_cfg.output.quiet {
        print!(
            "{}",
            text::config_table(
                &format!("wirebench http {}", env!("CARGO_PKG_VERSION")),
                &config_rows(&cfg, &url_text, addr, wire.len())
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
    let factory = HttpFactory::new(
        wire,
        cfg.method == "HEAD",
        cfg.accept,
        cfg.expect_echo.then(|| cfg.body.clone()),
        cfg.keepalive,
    );
    let started = load::unix_ms();
    let out = engine::run(spec, factory, &mut progress)?;
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
    let mut result = load::build_result(
        ResultInputs {
            kind: "http",
            target: url_text,
            config: cfg.to_json(),
            started_unix_ms: started,
            warmup: load_cfg.warmup,
            server,
        },
        &out,
    );
    result.status_classes = Some(status_classes(&out.measured));
    let extra = http_lines(&result, &cfg);
    load::report_with(&result, &out, &load_cfg.output, json, &extra)
}

/// Status classes, then TPS, TP99 and TP999 the way hertz-benchmark prints them.
fn http_lines(r: &RunResult, cfg: &HttpConfig) -> String {
    let mut s = String::new();
    if let Some(classes) = &r.status_classes {
        let list: Vec<String> = classes
            .iter()
            .filter(|(k, n)| k.as_str() != "1xx" || **n > 0)
            .map(|(k, n)| format!("{k} {}", group(*n)))
            .collect();
        let _ = writeln!(s, "status:       {}", list.join(", "));
    }
    let ms = |us: f64| us / 1000.0;
    let _ = writeln!(
        s,
        "[wirebench]: TPS: {:.2}, TP99: {:.2}ms, TP999: {:.2}ms (b={} Byte, c={}, n={})",
        r.throughput.msgs_per_s,
        ms(r.latency_us.p99),
        ms(r.latency_us.p99_9),
        cfg.body.len(),
        cfg.load.sockets(),
        r.totals.ok + r.totals.errors
    );
    s
}

fn config_rows(
    cfg: &HttpConfig,
    url: &str,
    addr: std::net::SocketAddr,
    request_bytes: usize,
) -> Vec<(&'static str, String)> {
    let l = &cfg.load;
    let target = match &cfg.url {
        Some(_) => format!("{url} ({addr})"),
        None => format!(
            "{url} (built-in server, {} thread{})",
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
    vec![
        ("target", target),
        (
            "request",
            format!(
                "{} with body {}, {request_bytes} bytes on the wire",
                cfg.method, cfg.body_source
            ),
        ),
        ("threads", l.threads.to_string()),
        (
            "connections",
            format!("{} per thread ({} total)", l.connections, l.sockets()),
        ),
        (
            "pipeline",
            format!("{} in flight per connection", l.pipeline),
        ),
        (
            "keep-alive",
            if cfg.keepalive {
                "on".into()
            } else {
                "off: a new connection per request".into()
            },
        ),
        ("plan", plan),
        (
            "rate",
            l.rate
                .map(|r| format!("{r} req/s open loop (latency from intended send time)"))
                .unwrap_or_else(|| "closed loop".into()),
        ),
        (
            "expect",
            format!(
                "status {}{}",
                cfg.accept_text,
                if cfg.expect_echo {
                    ", body = request body"
                } else {
                    ""
                }
            ),
        ),
        ("timeout", seconds(l.timeout)),
        ("warmup", seconds(l.warmup)),
        ("nodelay", l.nodelay.to_string()),
    ]
}
