//! What every load command puts around the engine, whatever its protocol: the built-in
//! server it starts when no target is given, the client's TLS, the engine's spec, and
//! what it notes over the measured phase: the built-in server's CPU and the machine's
//! interference.

use super::load::ServerFigures;
use crate::config::LoadConfig;
use crate::engine::connector::{ClientTls, Connector};
use crate::engine::{LoadSpec, Plan};
use crate::error::Result;
use crate::net::tls::{self, Trust};
use crate::report::progress::Progress;
use crate::report::tui::TerminalView;
use crate::server::session::ServerFactory;
use crate::server::{self, ServerConfig, ServerHandle};
use crate::stats::hlog::HlogWriter;
use crate::stats::interference::{this_process_tree, Interference, Window};
use crate::stats::Unit;
use std::cell::{Cell, RefCell};
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
        Some(_) => Some(tls::server_self_signed(None)?),
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

/// The client side of TLS for `host`, when there is a trust to check the server with:
/// the load's client certificate shown if asked for, `alpn` offered.
pub fn client_tls(
    trust: Option<&Trust>,
    load: &LoadConfig,
    alpn: &[&[u8]],
    host: &str,
) -> Result<Option<ClientTls>> {
    let Some(trust) = trust else { return Ok(None) };
    Ok(Some(ClientTls {
        config: tls::client_config(trust, load.identity.as_ref(), alpn)?,
        server_name: tls::server_name(host)?,
    }))
}

/// The engine's spec for a load config aimed at `addr`.
pub fn load_spec(
    load: &LoadConfig,
    addr: crate::net::unix::Dest,
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
        interval: load.interval,
        keep_interval_histograms: load.coordination.shard.is_some(),
        interval_handshakes: false,
        stop,
        per_connection: None,
        attempts: Default::default(),
        release: None,
    }
}

/// What the run noted when the measured phase began (after the warm-up): the
/// built-in server's CPU time, and the machine's CPUs (`stats::interference`).
#[derive(Default)]
pub struct PhaseStart {
    server_cpu: Rc<Cell<Duration>>,
    machine: Rc<RefCell<Option<Window>>>,
}

impl PhaseStart {
    /// The built-in server's counters (as JSON, for the result) and its CPU time over
    /// the measured phase; shuts it down.
    pub fn figures(&self, server: ServerHandle) -> ServerFigures {
        let cpu = server
            .cpu_probe()
            .cpu_time()
            .saturating_sub(self.server_cpu.get());
        let totals = server.shutdown();
        ServerFigures {
            counters: serde_json::to_value(totals).unwrap_or_default(),
            cpu,
        }
    }

    /// What other processes took from this run's CPUs since the measured phase began
    /// (this process and its children are the run's own); None when it never began.
    /// Call it as the load ends, before the built-in server shuts down.
    pub fn interference(&self) -> Option<Interference> {
        let window = self.machine.borrow_mut().take()?;
        window.close(this_process_tree(), &[])
    }
}

/// `--hlog`: the interval log, created before the run (a path that cannot be written
/// is bad input, exit 2), its lines tagged with the load's name and its shard.
pub fn interval_log(load: &LoadConfig, name: &str) -> Result<Option<HlogWriter>> {
    interval_log_at(load.hlog.as_deref(), &load.coordination, name)
}

/// `--hlog`'s writer for a command named `name` (tagged with its shard), created before
/// the run: a path that cannot be written is bad input.
pub fn interval_log_at(
    path: Option<&std::path::Path>,
    coordination: &crate::shard::Coordination,
    name: &str,
) -> Result<Option<HlogWriter>> {
    let Some(path) = path else {
        return Ok(None);
    };
    let tag = match coordination.shard.as_ref() {
        Some(s) => format!("{name}.shard{}", s.index),
        None => name.to_string(),
    };
    HlogWriter::create(path, &tag)
        .map(Some)
        .map_err(crate::error::Error::usage)
}

/// The live terminal view of the run, when `load` asks for it (`LoadConfig::tui`).
pub fn terminal_view(
    load: &LoadConfig,
    spec: &LoadSpec,
    name: &str,
    unit: &Unit,
) -> Option<TerminalView> {
    let duration = match load.shape.plan {
        Plan::Duration(d) => Some(d),
        _ => None,
    };
    load.tui.then(|| {
        TerminalView::new(
            format!("wirebench {name}"),
            unit.clone(),
            spec.shape.rate,
            duration,
            spec.shape.expected(),
        )
    })
}

/// The progress display for `spec`; at the start of the measured phase it notes the
/// machine's CPUs and, with a built-in server, the server's CPU time.
pub fn progress(
    load: &LoadConfig,
    spec: &LoadSpec,
    server: Option<&ServerHandle>,
    unit: Unit,
) -> (Progress, PhaseStart) {
    let duration = match load.shape.plan {
        Plan::Duration(d) => Some(d),
        _ => None,
    };
    let phase = PhaseStart::default();
    let progress = Progress::new(!load.output.quiet, spec.shape.expected(), duration, unit)
        .every(load.output.progress);
    let probe = server.map(|s| s.cpu_probe());
    let (start, machine) = (phase.server_cpu.clone(), phase.machine.clone());
    if let Some(p) = &probe {
        start.set(p.cpu_time());
    }
    let progress = progress.on_start(move || {
        if let Some(p) = &probe {
            start.set(p.cpu_time());
        }
        *machine.borrow_mut() = Some(Window::open(this_process_tree()));
    });
    (progress, phase)
}
