//! What every load command puts around the engine, whatever its protocol: the built-in
//! server it starts when no target is given, the client's TLS, the engine's spec, and
//! the built-in server's CPU over the measured phase.

use super::load::ServerFigures;
use crate::config::LoadConfig;
use crate::engine::connector::{ClientTls, Connector};
use crate::engine::{LoadSpec, Plan};
use crate::error::Result;
use crate::net::tls::{self, Trust};
use crate::report::progress::Progress;
use crate::server::session::ServerFactory;
use crate::server::{self, ServerConfig, ServerHandle};
use crate::stats::Unit;
use std::cell::Cell;
use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

/// Starts the built-in server on 127.0.0.1 with `threads` threads. When the load uses
/// TLS the server gets a self-signed certificate, and a client that would check the
/// system's roots checks that certificate instead: verified for real, not skipped.
/// Returns the server and the trust the client must use.
pub fn start_builtin<F: ServerFactory>(
    load: &LoadConfig,
    threads: usize,
    factory: F,
) -> Result<(ServerHandle, Option<Trust>)> {
    let server_tls = match load.tls {
        Some(_) => Some(tls::server_self_signed()?),
        None => None,
    };
    let trust = match (&load.tls, &server_tls) {
        (Some(Trust::System), Some(st)) => {
            Some(Trust::CaPem(st.generated_pem.clone().unwrap_or_default()))
        }
        (t, _) => t.clone(),
    };
    let handle = server::start(
        ServerConfig {
            listen: SocketAddr::from(([127, 0, 0, 1], 0)),
            threads,
            max_conns_per_thread: 0,
            read_buffer: 64 * 1024,
            tls: server_tls.map(|t| t.config),
            nodelay: load.nodelay,
            debug: false,
            // The load is ours: no timeout may cut a slow or sparse plan short.
            timeouts: Default::default(),
            pacing: crate::server::pacing::Pacing::off(),
            one_of_processes: false,
        },
        factory,
    )?;
    Ok((handle, trust))
}

/// The client side of TLS for `host`, when there is a trust to check the server with.
pub fn client_tls(trust: Option<&Trust>, host: &str) -> Result<Option<ClientTls>> {
    trust.map(|t| ClientTls::new(t, host)).transpose()
}

/// The engine's spec for a load config aimed at `addr`.
pub fn load_spec(
    load: &LoadConfig,
    addr: SocketAddr,
    tls: Option<ClientTls>,
    stop: Arc<AtomicBool>,
) -> LoadSpec {
    LoadSpec {
        connector: Connector::new(
            addr,
            tls,
            load.nodelay,
            load.shape.timeout,
            Default::default(),
        ),
        shape: load.shape,
        interval: load.output.progress,
        stop,
        per_connection: None,
        attempts: Default::default(),
        release: None,
    }
}

/// The built-in server's CPU time when the measured phase began (after the warm-up).
#[derive(Default)]
pub struct ServerCpu {
    at_start: Rc<Cell<Duration>>,
}

impl ServerCpu {
    /// The built-in server's counters (as JSON, for the result) and its CPU time over
    /// the measured phase; shuts it down.
    pub fn figures(&self, server: ServerHandle) -> ServerFigures {
        let cpu = server
            .cpu_probe()
            .cpu_time()
            .saturating_sub(self.at_start.get());
        let totals = server.shutdown();
        ServerFigures {
            counters: serde_json::to_value(totals).unwrap_or_default(),
            cpu,
        }
    }
}

/// The progress display for `spec`; with a built-in server it also notes the server's
/// CPU time when the measured phase starts.
pub fn progress(
    load: &LoadConfig,
    spec: &LoadSpec,
    server: Option<&ServerHandle>,
    unit: Unit,
) -> (Progress, ServerCpu) {
    let duration = match load.shape.plan {
        Plan::Duration(d) => Some(d),
        _ => None,
    };
    let cpu = ServerCpu::default();
    let mut progress = Progress::new(!load.output.quiet, spec.shape.expected(), duration, unit);
    if let Some(s) = server {
        let probe = s.cpu_probe();
        let start = cpu.at_start.clone();
        start.set(probe.cpu_time());
        progress = progress.on_start(move || start.set(probe.cpu_time()));
    }
    (progress, cpu)
}
