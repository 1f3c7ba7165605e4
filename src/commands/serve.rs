//! `wirebench serve <protocol>`: run a built-in server until SIGINT/SIGTERM, with
//! counters per interval and at exit.

use super::serve_metrics::ServeMetrics;
use super::serve_plan::ServePlan;
use super::serve_stats::{print_final, print_stats_until_stopped};
use crate::cli::ServerCommand;
use crate::config::{ProtocolTiming, ServeConfig, ServerTlsChoice};
use crate::error::{Error, Result};
use crate::net::tls;
use crate::proto::plugin::Protocol;
use crate::report::format::count_of;
use crate::server::counters::ServerTotals;
use crate::server::group as server_group;
use crate::server::session::{ServerFactory, ServerSession};
use crate::server::timeouts::Timeouts;
use crate::server::{self, ServerConfig};

/// `wirebench serve <protocol>`: the protocol's server factory on the server runtime.
/// A worker process of `--processes` (or of `connect`'s built-in server) takes its
/// validated configs from its parent's plan instead of its flags.
pub fn run<P: Protocol>(cmd: &ServerCommand<P::ServeArgs>) -> Result<()> {
    let worker = crate::procs::worker_role().as_deref() == Some("serve");
    let plan = if worker {
        ServePlan::<P::ServeConfig>::from_env(P::NAME)?
    } else {
        // The protocol's own flags first, then the shared ones.
        let proto = P::serve_config(&cmd.proto)?;
        ServePlan {
            protocol: P::NAME.to_string(),
            serve: ServeConfig::from_args(&cmd.server)?,
            proto,
        }
    };
    let cfg = &plan.serve;
    if cfg.processes > 1 && cfg.tls == ServerTlsChoice::SelfSigned {
        return Err(Error::usage(
            "with --processes, give --tls its --cert and --key so every process serves the same certificate",
        ));
    }
    // Listening before the server does: a busy address is refused before serving.
    let metrics = match worker {
        true => None,
        false => ServeMetrics::start(&cmd.server, P::NAME)?,
    };
    if cfg.processes > 1 && !worker {
        let plan = plan.to_env()?;
        return super::serve_procs::parent(cfg, P::NAME, plan, &P::serve_line, metrics);
    }
    serve_with(
        cfg,
        (worker, metrics),
        P::serve_timing(&plan.proto),
        P::server(&plan.proto),
        (P::NAME, P::ALPN),
        &P::serve_line,
    )
}

/// Writes the generated certificate to a file a foreign client can trust, and says
/// where on stderr; the file goes when the server stops.
fn written_certificate(pem: &str) -> Result<tls::CertFiles> {
    let files = tls::CertFiles::write("serve", pem, None)?;
    let path = files.cert.display();
    eprintln!(
        "self-signed certificate (for {}) written to {path}, removed when the server stops; trust it with --ca {path}, curl --cacert {path} or openssl s_client -CAfile {path}",
        tls::SELF_SIGNED_NAMES
    );
    Ok(files)
}

/// The TLS config with the protocol's ALPN protocols offered (`Protocol::ALPN`).
fn offering(
    config: &std::sync::Arc<rustls::ServerConfig>,
    alpn: &[&[u8]],
) -> std::sync::Arc<rustls::ServerConfig> {
    if alpn.is_empty() {
        return config.clone();
    }
    let mut c = (**config).clone();
    c.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    std::sync::Arc::new(c)
}

/// A session factory's figures type.
pub(crate) type FiguresOf<F> = <<F as ServerFactory>::Session as ServerSession>::Figures;

/// Serves `factory` in this process (a worker: on the addresses its parent chose),
/// with a protocol's own figures printed beside the runtime's counters, as `line`
/// words them (merged over threads).
fn serve_with<F: ServerFactory>(
    cfg: &ServeConfig,
    (worker, metrics): (bool, Option<ServeMetrics>),
    timing: ProtocolTiming,
    factory: F,
    (name, alpn): (&str, &[&[u8]]),
    line: &dyn Fn(&FiguresOf<F>) -> Option<String>,
) -> Result<()> {
    let tls = match &cfg.tls {
        ServerTlsChoice::Off => None,
        ServerTlsChoice::Files { cert, key } => {
            Some(tls::server_from_files(cert, key, cfg.client_ca.as_deref())?)
        }
        ServerTlsChoice::SelfSigned => Some(tls::server_self_signed(cfg.client_ca.as_deref())?),
    };
    // A generated certificate is written out (before the server listens), so a
    // foreign client can trust it.
    let _cert_file = match tls.as_ref().and_then(|t| t.generated_pem.as_deref()) {
        Some(pem) => Some(written_certificate(pem)?),
        None => None,
    };
    let stop = super::load::stop_flag()?;
    let fingerprint = tls.as_ref().map(|t| t.fingerprint.clone());
    let server_cfg = ServerConfig {
        listen: cfg.listen,
        threads: cfg.threads,
        max_conns_per_thread: cfg.max_conns_per_thread,
        read_buffer: cfg.read_buffer,
        tls: tls.as_ref().map(|t| offering(&t.config, alpn)),
        nodelay: cfg.nodelay,
        debug: cfg.debug,
        timeouts: Timeouts {
            header: timing.header_timeout,
            idle: cfg.idle_timeout,
        },
        pacing: timing.pacing,
        one_of_processes: worker,
    };
    if worker {
        let addrs = server_group::listen_override()?.unwrap_or_else(|| cfg.listen_all.clone());
        return server_group::run_worker(server_cfg, &addrs, factory, stop);
    }
    let handle = if let Some(path) = &cfg.unix {
        server::start_unix(server_cfg, path, factory)?
    } else if cfg.listen_all.len() > 1 {
        // One port on every address (port 0 picks one free on all of them).
        // The port stays held until this server's listeners are bound.
        let (addrs, _hold) = server_group::settle_port(&cfg.listen_all)?;
        server::start_many(server_cfg, &addrs, false, factory)?
    } else {
        server::start_many(server_cfg, &cfg.listen_all, true, factory)?
    };
    let addrs = if let Some(path) = &handle.unix {
        format!("unix:{}", path.display())
    } else if cfg.listen_all.len() > 1 {
        format!("{} addresses from {}", cfg.listen_all.len(), handle.addr)
    } else {
        handle.addr.to_string()
    };
    println!(
        "wirebench serve {name}: listening on {addrs} with {}{}",
        count_of(cfg.threads as u64, "thread"),
        if fingerprint.is_some() { ", TLS" } else { "" }
    );
    if let Some(fp) = fingerprint {
        println!("certificate SHA-256 fingerprint: {fp}");
    }

    let extra = || line(&handle.figures::<FiguresOf<F>>());
    let watch = |t: &ServerTotals| {
        if let Some(m) = &metrics {
            m.publish(t, Some(&handle.figures_json()));
        }
    };
    let started = print_stats_until_stopped(cfg, &stop, || handle.totals(), &extra, &watch);
    let figures = handle.figures_reader();
    let unix = handle.unix.clone();
    let totals = handle.shutdown();
    // The socket file is this server's: gone with it, as nginx and redis do.
    if let Some(path) = unix {
        let _ = std::fs::remove_file(path);
    }
    if let Some(m) = &metrics {
        m.publish(&totals, Some(&figures()));
    }
    let final_line = || {
        serde_json::from_value::<FiguresOf<F>>(figures())
            .ok()
            .and_then(|g| line(&g))
    };
    print_final(name, started, &totals, &final_line);
    Ok(())
}
