//! `wirebench connect`, validated: what to open, from where, to where, how fast, and
//! whether this machine can hold it at all (the capacity check).

use super::defaults::{self, Chosen, Sources};
use super::sharding::{self, WholeConnect};
use crate::cli::ConnectArgs;
use crate::config::{check_histogram_bucket, client_trust};
use crate::error::{Error, Result};
use crate::net::range;
use crate::net::tls::Trust;
use crate::report::format::group;
use crate::shard::Coordination;
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
    /// What connect chose itself where no flag was given (sources, processes, in flight).
    pub chosen: Chosen,
    /// `--shard`/`--start-at` (or a scheduler's environment).
    pub coordination: Coordination,
    /// A shard's whole run as given (the config block); the fields above are then
    /// this shard's share. None outside a sharded run.
    pub whole: Option<WholeConnect>,
    /// `--ramp`: connection starts (churn: the slots' first cycles) spread over it;
    /// a hold's is always measured, a churn's only with `--ramp-measured`
    /// (`ConnectConfig::planned`).
    pub ramp: Option<crate::engine::Ramp>,
}

fn dur(flag: &str, text: &str) -> Result<Duration> {
    crate::config::duration_flag(flag, text)
}

impl ConnectConfig {
    /// The validated plan, its defaults chosen, checked against this machine's capacity.
    pub fn from_args(a: &ConnectArgs, limits: &KernelLimits) -> Result<Self> {
        let cfg = Self::planned(a, limits, defaults::bindable)?;
        check_capacity(&cfg, cfg.open_at_once(), limits)?;
        Ok(cfg)
    }

    /// The plan with its defaults chosen, before the capacity check: `usable` says
    /// which loopback addresses may serve as sources (a probe, or a test's answer).
    pub fn planned(
        a: &ConnectArgs,
        limits: &KernelLimits,
        usable: impl Fn(IpAddr) -> bool,
    ) -> Result<Self> {
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
        let whole_total = match (&mode, a.connections) {
            (_, Some(0)) => return Err(Error::usage("-n/--connections must be at least 1")),
            (Mode::Churn { duration: Some(_) }, _) => 0,
            (_, n) => n.unwrap_or(1000),
        };
        let coordination = Coordination::from_args(&a.shard)?;
        let shard = coordination.shard.clone();
        let total = match &shard {
            Some(s) => sharding::total(s, whole_total)?,
            None => whole_total,
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
        let (all_sources, chosen_sources) = match a.source.as_deref() {
            Some(s) => (range::parse_ips("--source", s)?, Sources::Given),
            None => match defaults::sources(targets.as_deref(), usable) {
                Sources::Loopback(v) => (v.clone(), Sources::Loopback(v)),
                other => (Vec::new(), other),
            },
        };
        let sources = match &shard {
            Some(s) => sharding::sources(s, &all_sources)?,
            None => all_sources.clone(),
        };
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
        if a.concurrency == Some(0) {
            return Err(Error::usage("--concurrency must be at least 1"));
        }
        let chosen_concurrency = match a.concurrency {
            Some(_) => None,
            None => Some(defaults::in_flight(
                matches!(mode, Mode::Churn { .. }),
                targets
                    .as_ref()
                    .map_or(true, |t| t.iter().all(|a| a.ip().is_loopback())),
                total,
                limits.somaxconn,
            )),
        };
        let concurrency = match (&shard, a.concurrency) {
            (Some(s), Some(c)) => sharding::concurrency(s, c),
            (_, given) => given.or(chosen_concurrency).unwrap_or(1),
        };
        // A hold's figure is the time to establish all N, and the ramp is part of it:
        // leaving it out would leave out the thing measured, so a hold always counts
        // its ramp (`--ramp-measured` is accepted and changes nothing). A churn's
        // figures are rates and latencies over the run, which the ramp's slow start
        // would dilute: as for the loads, its ramp is left out of them (counted apart,
        // as the report's `connect.ramp`) unless `--ramp-measured`.
        let ramp = crate::config::ramp(&a.ramp)?.map(|r| crate::engine::Ramp {
            measured: r.measured || matches!(mode, Mode::Hold { .. }),
            ..r
        });
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
        // Open at once: every connection (hold), or the concurrent cycles (churn).
        let open_at_once = match mode {
            Mode::Hold { .. } => total,
            Mode::Churn { .. } => concurrency as u64,
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
            rate: shard
                .as_ref()
                .map_or(a.connect_rate, |s| sharding::rate(s, a.connect_rate)),
            concurrency,
            ramp,
            processes,
            server_processes,
            server_pids,
            timeout,
            progress,
            histogram_bucket_us: a.histogram,
            json: a.json.clone(),
            quiet: a.quiet,
            tls,
            chosen: Chosen {
                sources: chosen_sources,
                processes: a.processes.is_none().then_some(processes),
                concurrency: chosen_concurrency,
            },
            whole: shard.as_ref().map(|_| WholeConnect {
                total: whole_total,
                rate: a.connect_rate,
                concurrency: a.concurrency,
                sources: all_sources.len(),
                processes: a.processes,
            }),
            coordination,
        };
        Ok(cfg)
    }

    /// Sockets open at once: every connection (hold), or the concurrent cycles (churn).
    pub fn open_at_once(&self) -> u64 {
        match self.mode {
            Mode::Hold { .. } => self.total,
            Mode::Churn { .. } => self.concurrency as u64,
        }
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
        // With every loopback source already chosen, only destinations can add pairs.
        let remedy = match cfg.chosen.sources {
            Sources::Loopback(_) => "add destinations (a target range such as 127.0.0.1-127.0.0.20:PORT, served with --listen on the same range)",
            _ => "add source addresses with --source (e.g. 127.0.0.2-127.0.0.254) or destinations",
        };
        return Err(Error::usage(format!(
            "{} connections need more than the {} ephemeral ports ({lo}-{hi}, net.ipv4.ip_local_port_range) that {} source x {} destination address pairs give: {remedy}",
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

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    /// This machine kind's limits: ulimit -n 20,000, somaxconn 4096, the default ports.
    fn here() -> KernelLimits {
        KernelLimits {
            somaxconn: Some(4096),
            tcp_max_syn_backlog: Some(2048),
            file_max: Some(2_466_177),
            nr_open: Some(1_048_576),
            nofile_hard: 20_000,
            ip_local_port_range: (32768, 60999),
            nf_conntrack_max: None,
            nf_conntrack_count: None,
            tcp_max_tw_buckets: None,
        }
    }

    fn plan(args: &[&str], usable: impl Fn(IpAddr) -> bool) -> ConnectConfig {
        let argv = ["wirebench", "connect"].iter().chain(args);
        let crate::cli::Command::Connect(a) = crate::cli::Cli::parse_from(argv).command else {
            panic!("not a connect command")
        };
        ConnectConfig::planned(&a, &here(), usable).unwrap()
    }

    #[test]
    fn a_million_to_loopback_chooses_every_source_51_processes_and_1024_in_flight() {
        let c = plan(&["127.0.0.1:9000", "-n", "1000000"], |_| true);
        assert_eq!(c.sources.len(), 254);
        assert_eq!(c.sources[0].to_string(), "127.0.0.2");
        assert_eq!(c.sources[253].to_string(), "127.0.0.255");
        // 19,936 sockets a process (20,000 less the margin): 1,000,000 / 19,936 -> 51.
        assert_eq!(c.processes, 51);
        assert_eq!(c.concurrency, 1024);
        assert_eq!(c.chosen.processes, Some(51));
        assert_eq!(c.chosen.concurrency, Some(1024));
        assert!(matches!(&c.chosen.sources, Sources::Loopback(v) if v.len() == 254));
        // Every (source, destination) pair stays under 15% of its 28,232 ports.
        let per_pair = 1_000_000u64.div_ceil(254);
        assert_eq!(per_pair, 3_938);
        assert!(per_pair * 100 / 28_232 < 15);
    }

    #[test]
    fn small_plans_and_the_builtin_server_size_themselves_too() {
        let c = plan(&["-n", "30000"], |_| true);
        assert_eq!(
            (c.sources.len(), c.processes, c.concurrency),
            (254, 2, 1024)
        );
        assert_eq!(c.server_processes, 2);
        let c = plan(&[], |_| true);
        assert_eq!((c.total, c.processes, c.concurrency), (1000, 1, 1000));
        // Churn keeps its in-flight default; sources are still every loopback address.
        let c = plan(&["127.0.0.1:9000", "--churn", "-d", "1s"], |_| true);
        assert_eq!(
            (c.sources.len(), c.processes, c.concurrency),
            (254, 1, 1024)
        );
    }

    #[test]
    fn a_churn_leaves_its_ramp_out_unless_measured_and_a_hold_always_counts_its_own() {
        let measured = |args: &[&str]| plan(args, |_| true).ramp.map(|r| r.measured);
        let churn = ["127.0.0.1:9000", "--churn", "-d", "1s", "--ramp", "1s"];
        assert_eq!(measured(&churn), Some(false));
        assert_eq!(
            measured(&[&churn[..], &["--ramp-measured"]].concat()),
            Some(true)
        );
        let hold = ["127.0.0.1:9000", "--ramp", "1s"];
        assert_eq!(measured(&hold), Some(true));
        assert_eq!(
            measured(&[&hold[..], &["--ramp-measured"]].concat()),
            Some(true)
        );
        assert_eq!(measured(&["127.0.0.1:9000", "--churn", "-d", "1s"]), None);
    }

    #[test]
    fn a_flag_given_always_wins() {
        let c = plan(
            &[
                "127.0.0.1:9000",
                "-n",
                "1000000",
                "--source",
                "127.0.0.11-127.0.0.60",
                "--processes",
                "60",
                "--concurrency",
                "1024",
            ],
            |_| true,
        );
        assert_eq!(
            (c.sources.len(), c.processes, c.concurrency),
            (50, 60, 1024)
        );
        assert_eq!(
            c.chosen,
            Chosen {
                sources: Sources::Given,
                processes: None,
                concurrency: None
            }
        );
        assert_eq!(c.chosen.line(), None);
    }

    #[test]
    fn non_loopback_targets_keep_the_kernels_choice_of_source() {
        let c = plan(&["192.0.2.1:9000", "-n", "100000"], |_| true);
        assert!(c.sources.is_empty());
        // Today's behaviour: the kernel's sources, 1024 in flight; said so.
        assert_eq!((c.processes, c.concurrency), (6, 1024));
        assert_eq!(
            c.chosen.line().unwrap(),
            "connect chose: sources: the kernel's (not a loopback target: give --source to add addresses), 6 client processes, 1,024 attempts in flight (a flag given overrides each)"
        );
        // No usable loopback source (a container without the /8): the kernel's, said so.
        let c = plan(&["127.0.0.1:9000"], |_| false);
        assert!(c.sources.is_empty());
        assert!(matches!(c.chosen.sources, Sources::Kernel(_)));
    }

    #[test]
    fn capacity_counts_the_chosen_sources_and_names_the_way_out() {
        // 254 sources x 1 destination x 28,232 ports = 7,170,928.
        let ok = plan(&["127.0.0.1:9000", "-n", "7000000"], |_| true);
        assert_eq!(ok.processes, 352);
        let over = plan(&["127.0.0.1:9000", "-n", "8000000"], |_| true);
        let e = check_capacity(&over, over.open_at_once(), &here()).unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("7,170,928 ephemeral ports"), "{msg}");
        assert!(msg.contains("add destinations"), "{msg}");
        // Four destinations give four times the pairs: the port check passes.
        let four = plan(&["127.0.0.1-127.0.0.4:9000", "-n", "8000000"], |_| true);
        let ports = 254 * 4 * 28_232u64;
        assert!(four.total < ports);
    }
}
