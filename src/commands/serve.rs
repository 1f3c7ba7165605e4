//! `wirebench serve <protocol>`: run a built-in server until SIGINT/SIGTERM, with
//! counters per interval and at exit.

use crate::cli::ServerArgs;
use crate::config::{ServeConfig, ServerTlsChoice};
use crate::error::Result;
use crate::net::tls;
use crate::report::format::group;
use crate::server::counters::ServerTotals;
use crate::server::handler::HandlerFactory;
use crate::server::{self, ServerConfig};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

fn stats_line(label: &str, t: &ServerTotals) -> String {
    format!(
        "{label}: accepts {} closes {} reads {} bytes in {} out {} rejected {} tls failures {}",
        group(t.accepts),
        group(t.closes),
        group(t.reads),
        group(t.bytes_in),
        group(t.bytes_out),
        group(t.rejected),
        group(t.tls_failures)
    )
}

pub fn serve<F: HandlerFactory>(args: &ServerArgs, factory: F, name: &str) -> Result<()> {
    serve_with(args, factory, name, &|| None)
}

/// `serve`, with a protocol's own counters (`extra`) printed beside the runtime's.
pub fn serve_with<F: HandlerFactory>(
    args: &ServerArgs,
    factory: F,
    name: &str,
    extra: &dyn Fn() -> Option<String>,
) -> Result<()> {
    let cfg = ServeConfig::from_args(args)?;
    let tls = match &cfg.tls {
        ServerTlsChoice::Off => None,
        ServerTlsChoice::Files { cert, key } => Some(tls::server_from_files(cert, key)?),
        ServerTlsChoice::SelfSigned => Some(tls::server_self_signed()?),
    };
    let stop = super::load::stop_flag()?;
    let fingerprint = tls.as_ref().map(|t| t.fingerprint.clone());
    let handle = server::start(
        ServerConfig {
            listen: cfg.listen,
            threads: cfg.threads,
            max_conns_per_thread: cfg.max_conns_per_thread,
            read_buffer: cfg.read_buffer,
            tls: tls.map(|t| t.config),
            nodelay: cfg.nodelay,
            debug: cfg.debug,
        },
        factory,
    )?;
    println!(
        "wirebench serve {name}: listening on {} with {} threads{}",
        handle.addr,
        cfg.threads,
        if fingerprint.is_some() { ", TLS" } else { "" }
    );
    if let Some(fp) = fingerprint {
        println!("certificate SHA-256 fingerprint: {fp}");
    }

    let started = Instant::now();
    let mut last = ServerTotals::default();
    let mut next = cfg.stats.map(|iv| started + iv);
    while !stop.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(50));
        if let (Some(at), Some(iv)) = (next, cfg.stats) {
            if Instant::now() >= at {
                let now = handle.totals();
                println!(
                    "[{:>7.1}s] active {} | {} | {}",
                    started.elapsed().as_secs_f64(),
                    group(now.active),
                    stats_line("interval", &now.since(&last)),
                    stats_line("total", &now)
                );
                if let Some(line) = extra() {
                    println!("[{:>7.1}s] {line}", started.elapsed().as_secs_f64());
                }
                last = now;
                next = Some(at + iv);
            }
        }
    }
    let totals = handle.shutdown();
    println!(
        "wirebench serve {name}: stopped after {:.1}s; {}",
        started.elapsed().as_secs_f64(),
        stats_line("final", &totals)
    );
    if let Some(line) = extra() {
        println!("wirebench serve {name}: final {line}");
    }
    Ok(())
}
