//! `wirebench connect`, validated: what to open, from where, to where, how fast, and
//! whether this machine can hold it at all (the capacity check).

use crate::cli::ConnectArgs;
use crate::config::{check_histogram_bucket, client_trust};
use crate::error::{Error, Result};
use crate::net::range;
use crate::net::tls::Trust;
use crate::report::format::group;
use crate::sys::limits::KernelLimits;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

/// Descriptors a worker keeps for itself (stdio, epoll, runtime) beyond its sockets.
pub const FD_MARGIN: u64 = 64;
/// Most worker processes on either side: more is a typo, not a plan.
pub const MAX_PROCESSES: usize = 1024;
/// Kernel memory per connection end (socket, inode, dentry, epoll item...): about half
/// of the ~9.6 KB per connection measured here with both ends on this machine.
pub const KERNEL_BYTES_PER_SOCKET: u64 = 4_800;
/// Connections per built-in server process by default: SO_REUSEPORT spreads by hash,
/// so leave room under the descriptor limit for an uneven share.
const SERVER_SHARE: u64 = 15_000;

#[derive(Clone, Debug, PartialEq)]
pub enum Mode {
    /// Open `total` connections and keep them for `hold` (pinging every `ping`).
    Hold {
        hold: Duration,
        ping: Option<Duration>,
    },
    /// Open, one echo round trip, close: `total` cycles, or for `duration`.
    Churn { duration: Option<Duration> },
}

#[derive(Clone, Debug)]
pub struct ConnectConfig {
    /// Connections (hold) or cycles (churn with -n); churn with -d: 0.
    pub total: u64,
    pub mode: Mode,
    /// None: the built-in echo server.
    pub targets: Option<Vec<SocketAddr>>,
    pub host: String,
    pub sources: Vec<IpAddr>,
    pub rate: f64,
    pub concurrency: usize,
    pub processes: usize,
    pub server_processes: usize,
    pub server_pids: Vec<u32>,
    pub timeout: Duration,
    pub progress: Duration,
    pub histogram_bucket_us: Option<u64>,
    pub json: Option<PathBuf>,
    pub quiet: bool,
    pub tls: Option<Trust>,
}

fn dur(flag: &str, text: &str) -> Result<Duration> {
    crate::config::duration_flag(flag, text)
}

impl ConnectConfig {
    pub fn from_args(a: &ConnectArgs, limits: &KernelLimits) -> Result<Self> {
        let mode = if a.churn {
            if a.hold.is_some() || a.ping.is_some() {
                return Err(Error::usage(
                    "--churn closes every connection after one echo: it takes neither --hold nor --ping",
                ));
            }
            let duration = a
                .duration
                .as_deref()
                .map(|d| dur("--duration", d))
                .transpose()?;
            if duration.is_some() && a.connections.is_some() {
                return Err(Error::usage(
                    "choose one of -d/--duration and -n/--connections",
                ));
            }
            if duration.is_some_and(|d| d.is_zero()) {
                return Err(Error::usage("--duration must be longer than zero"));
            }
            Mode::Churn { duration }
        } else {
            if a.duration.is_some() {
                return Err(Error::usage(
                    "-d/--duration applies to --churn; to keep connections open use --hold",
                ));
            }
            let ping = a.ping.as_deref().map(|p| dur("--ping", p)).transpose()?;
            if ping.is_some_and(|p| p < Duration::from_millis(1)) {
                return Err(Error::usage("--ping interval must be at least 1ms"));
            }
            let default_hold = if ping.is_some() { "10s" } else { "0s" };
            let hold = dur("--hold", a.hold.as_deref().unwrap_or(default_hold))?;
            if ping.is_some() && hold.is_zero() {
                return Err(Error::usage("--ping needs a --hold longer than zero"));
            }
            Mode::Hold { hold, ping }
        };
        let total = match (&mode, a.connections) {
            (_, Some(0)) => return Err(Error::usage("-n/--connections must be at least 1")),
            (Mode::Churn { duration: Some(_) }, _) => 0,
            (_, n) => n.unwrap_or(1000),
        };
        let (targets, host) = match a.target.as_deref() {
            None => (None, "127.0.0.1".to_string()),
            Some(t) if range::is_range(t) => {
                let v = range::parse_socket_range("target", t)?;
                crate::net::addr::refuse_port_zero(t, v[0])?;
                let h = v[0].ip().to_string();
                (Some(v), h)
            }
            Some(t) => {
                let (addr, host) = crate::net::addr::resolve_target(t)?;
                (Some(vec![addr]), host)
            }
        };
        let sources = a
            .source
            .as_deref()
            .map(|s| range::parse_ips("--source", s))
            .transpose()?
            .unwrap_or_default();
        if let (Some(t), Some(s)) = (&targets, sources.first()) {
            if t[0].is_ipv4() != s.is_ipv4() {
                return Err(Error::usage(
                    "--source and the target must both be IPv4 or both IPv6",
                ));
            }
        }
        if !(a.connect_rate.is_finite() && a.connect_rate >= 0.0) {
            return Err(Error::usage(
                "--connect-rate must be a number of connections per second, 0 for no limit",
            ));
        }
        if a.concurrency == 0 {
            return Err(Error::usage("--concurrency must be at least 1"));
        }
        let timeout = dur("--timeout", &a.timeout)?;
        if timeout.is_zero() {
            return Err(Error::usage("--timeout must be longer than zero"));
        }
        let progress = dur("--progress", &a.progress)?;
        if progress < Duration::from_millis(100) {
            return Err(Error::usage("--progress must be at least 100ms"));
        }
        check_histogram_bucket(a.histogram)?;
        let tls = client_trust(a.tls, a.insecure, a.ca.as_ref())?;
        let server_pids = match a.server_pid.as_deref() {
            None => Vec::new(),
            Some(_) if targets.is_none() => {
                return Err(Error::usage(
                    "--server-pid is for a separately started server; the built-in one is measured anyway",
                ))
            }
            Some(text) => text
                .split(',')
                .map(|p| {
                    p.trim()
                        .parse::<u32>()
                        .ok()
                        .filter(|pid| crate::sys::proc_fs::alive(*pid as i32))
                })
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| {
                    Error::usage(format!(
                        "--server-pid: '{text}' is not a list of running process ids"
                    ))
                })?,
        };
        if targets.is_some() && a.server_processes.is_some() {
            return Err(Error::usage(
                "--server-processes only applies to the built-in server (no target)",
            ));
        }
        let per_process = per_process_fds(limits);
        // In flight at once: every connection (hold), or the concurrent cycles (churn).
        let open_at_once = match mode {
            Mode::Hold { .. } => total,
            Mode::Churn { .. } => a.concurrency as u64,
        };
        // What the plan is called in messages: the flag the user gave (or its default).
        let asked = match mode {
            Mode::Hold { .. } => format!("-n {} connections", group(open_at_once)),
            Mode::Churn { .. } => format!("--concurrency {}", group(open_at_once)),
        };
        let processes = match a.processes {
            Some(p) => p,
            None => derived_processes(&asked, open_at_once, per_process, "client")?,
        };
        let server_processes = match a.server_processes {
            Some(p) => p,
            None if targets.is_none() => {
                derived_processes(&asked, open_at_once, SERVER_SHARE, "built-in server")?
            }
            None => 1,
        };
        let cfg = ConnectConfig {
            total,
            mode,
            targets,
            host,
            sources,
            rate: a.connect_rate,
            concurrency: a.concurrency,
            processes,
            server_processes,
            server_pids,
            timeout,
            progress,
            histogram_bucket_us: a.histogram,
            json: a.json.clone(),
            quiet: a.quiet,
            tls,
        };
        check_capacity(&cfg, open_at_once, limits)?;
        Ok(cfg)
    }

    pub fn builtin(&self) -> bool {
        self.targets.is_none()
    }

    pub fn is_churn(&self) -> bool {
        matches!(self.mode, Mode::Churn { .. })
    }
}

/// The processes a plan needs when the user named none: `open` sockets at `share` per
/// process. Beyond MAX_PROCESSES the plan is refused naming what the user gave (`asked`)
/// and how far to bring it down, not a flag never typed.
fn derived_processes(asked: &str, open: u64, share: u64, side: &str) -> Result<usize> {
    let p = open.div_ceil(share).max(1);
    if p > MAX_PROCESSES as u64 {
        return Err(Error::usage(format!(
            "{asked} would need {} {side} processes of {} sockets each, more than the {} allowed: ask for at most {}",
            group(p),
            group(share),
            group(MAX_PROCESSES as u64),
            group(share * MAX_PROCESSES as u64)
        )));
    }
    Ok(p as usize)
}

/// Sockets one process may hold: the hard descriptor limit less a margin.
pub fn per_process_fds(limits: &KernelLimits) -> u64 {
    limits.nofile_hard.saturating_sub(FD_MARGIN).max(1)
}

/// Refuses a plan this machine cannot hold, naming the limit in one sentence.
pub fn check_capacity(cfg: &ConnectConfig, open: u64, limits: &KernelLimits) -> Result<()> {
    let per_process = per_process_fds(limits);
    for (flag, p) in [
        ("--processes", cfg.processes),
        ("--server-processes", cfg.server_processes),
    ] {
        if p == 0 || p > MAX_PROCESSES {
            return Err(Error::usage(format!(
                "{flag} must be between 1 and {MAX_PROCESSES}"
            )));
        }
    }
    let need = open.div_ceil(cfg.processes as u64);
    if need > per_process {
        return Err(Error::usage(format!(
            "{} connections over {} client processes need {} sockets per process, but a process may open only {} files here (ulimit -n {}): use --processes {} or more",
            group(open),
            cfg.processes,
            group(need),
            group(per_process),
            limits.nofile_hard,
            open.div_ceil(per_process)
        )));
    }
    if cfg.builtin() {
        let need = open.div_ceil(cfg.server_processes as u64);
        if need > per_process {
            return Err(Error::usage(format!(
                "{} connections over {} built-in server processes need {} sockets per process, but a process may open only {} files here (ulimit -n {}): use --server-processes {} or more",
                group(open),
                cfg.server_processes,
                group(need),
                group(per_process),
                limits.nofile_hard,
                open.div_ceil(SERVER_SHARE)
            )));
        }
    }
    let (lo, hi) = limits.ip_local_port_range;
    let ports = u64::from(hi - lo) + 1;
    let sources = cfg.sources.len().max(1) as u64;
    let dests = cfg.targets.as_ref().map_or(1, |t| t.len()) as u64;
    let pairs = sources * dests;
    if open > pairs * ports {
        return Err(Error::usage(format!(
            "{} connections need more than the {} ephemeral ports ({lo}-{hi}, net.ipv4.ip_local_port_range) that {} source x {} destination address pairs give: add source addresses with --source (e.g. 127.0.0.2-127.0.0.254) or destinations",
            group(open),
            group(pairs * ports),
            sources,
            dests
        )));
    }
    let loopback = cfg
        .targets
        .as_ref()
        .map_or(true, |t| t.iter().all(|a| a.ip().is_loopback()));
    let sockets = open * if loopback { 2 } else { 1 };
    if let Some(max) = limits.file_max {
        if sockets > max {
            return Err(Error::usage(format!(
                "{} sockets exceed the system-wide limit of {} open files (fs.file-max)",
                group(sockets),
                group(max)
            )));
        }
    }
    let kernel = sockets * KERNEL_BYTES_PER_SOCKET;
    if let Some(avail) = crate::sys::proc_fs::meminfo_bytes("MemAvailable") {
        if kernel > avail {
            return Err(Error::usage(format!(
                "{} sockets need about {:.1} GB of kernel memory but only {:.1} GB is available (MemAvailable)",
                group(sockets),
                kernel as f64 / 1e9,
                avail as f64 / 1e9
            )));
        }
    }
    Ok(())
}
