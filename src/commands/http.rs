//! `wirebench http [URL]`: load an HTTP/1.1 server, or the built-in one in this
//! process; and `wirebench serve http`.

use super::harness;
use super::load::{self, ResultInputs};
use crate::cli::{HttpArgs, ServeHttpArgs};
use crate::engine;
use crate::error::Result;
use crate::http_config::{serve_limits, HttpConfig};
use crate::proto::http::client::HttpFactory;
use crate::proto::http::request;
use crate::proto::http::server::{HttpHandlerFactory, Limits};
use crate::report::format::{group, seconds};
use crate::report::json::JsonSink;
use crate::report::text;
use crate::stats::RunResult;
use crate::stats::Unit;
use std::fmt::Write as _;

pub fn serve(args: &ServeHttpArgs) -> Result<()> {
    let limits = serve_limits(args)?;
    let timing = super::serve::ProtocolTiming {
        header_timeout: crate::config::timeout_flag("--header-timeout", &args.header_timeout)?,
        pacing: crate::config::pacing(&args.pacing)?,
    };
    super::serve::serve(
        &args.server,
        timing,
        HttpHandlerFactory::new(limits),
        "http",
    )
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
    let (server, trust, addr, host, authority, path) = match (&cfg.url, cfg.addr) {
        (Some(u), Some(addr)) => (
            None,
            load_cfg.tls.clone(),
            addr,
            u.host.clone(),
            u.authority(),
            u.path.clone(),
        ),
        _ => {
            let factory = HttpHandlerFactory::new(Limits {
                max_body: (cfg.body.len() + 1).max(Limits::default().max_body),
                ..Limits::default()
            });
            let (handle, trust) = harness::start_builtin(load_cfg, cfg.server_threads, factory)?;
            let addr = handle.addr;
            (
                Some(handle),
                trust,
                addr,
                "127.0.0.1".to_string(),
                addr.to_string(),
                "/".to_string(),
            )
        }
    };
    let tls = harness::client_tls(trust.as_ref(), &host)?;
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

    let mut spec = harness::load_spec(load_cfg, addr, tls, stop);
    // The ramp is warm-up unless measured: the result says the real warm-up.
    let measure_start = spec.measure_start();
    let (mut progress, server_cpu) = harness::progress(
        load_cfg,
        &spec,
        server.as_ref(),
        Unit::new("requests", "answered", true),
    );
    let factory = HttpFactory::new(
        wire,
        cfg.method == "HEAD",
        cfg.accept,
        cfg.expect_echo.then(|| cfg.body.clone()),
        cfg.keepalive,
    );
    spec.per_connection = factory.per_connection();
    let started = load::unix_ms();
    let out = engine::run(spec, factory, &mut progress)?;
    progress.finish();

    let server = server.map(|s| server_cpu.figures(s));
    let mut result = load::build_result(
        ResultInputs {
            kind: "http",
            target: url_text,
            config: cfg.to_json(),
            started_unix_ms: started,
            warmup: measure_start,
            server,
            unit: Unit::new("requests", "answered", true),
        },
        &out,
    );
    result.status_classes = Some(out.figures.by_name());
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
    let timed = r.latency_us.count > 0;
    let ms = |us: f64| {
        if timed {
            format!("{:.2}ms", us / 1000.0)
        } else {
            "n/a".to_string()
        }
    };
    let _ = writeln!(
        s,
        "[wirebench]: TPS: {:.2}, TP99: {}, TP999: {} (b={} Byte, c={}, n={})",
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
    let mut plan = harness::plan_text(l.plan);
    if let Some(ramp) = harness::ramp_text(l) {
        plan = format!("{plan}; ramp: {ramp}");
    }
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
                .map(|r| format!("{r} requests/s open loop (latency from intended send time)"))
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
