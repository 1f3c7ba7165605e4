//! `wirebench connect`, validated: what to open, from where, to where, how fast. The
//! flags are read once, top to bottom: those every client shares
//! (`config::ClientConfig`), then connect's own (`Asked`, the whole run as given);
//! then what connect chooses where no flag decided (`defaults.rs`), and a shard's share
//! (`sharding.rs`), from those values. Whether this machine can hold the plan is
//! `capacity.rs`'s word (`ConnectConfig::needs`).

use super::args::ConnectArgs;
use super::capacity::{self, Needs, SERVER_SHARE};
use super::defaults::{self, Chosen};
use super::sharding::{self, WholeConnect};
use crate::config::{duration_flag, series_interval, ClientConfig, OutputOptions, SourceFlag};
use crate::engine::{Ramp, Stages};
use crate::error::{Error, Result};
use crate::net::loopback::{self, Sources};
use crate::net::range;
use crate::net::tls::Trust;
use crate::report::format::group;
use crate::shard::Coordination;
use crate::sys::limits::KernelLimits;
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

/// The shortest `--progress` connect takes (its parent looks at its workers every 20 ms).
const MIN_PROGRESS: Duration = Duration::from_millis(100);

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
    pub output: OutputOptions,
    pub tls: Option<Trust>,
    /// What connect chose itself where no flag was given (sources, processes, in flight).
    pub chosen: Chosen,
    /// `--shard`/`--start-at` (or a scheduler's environment).
    pub coordination: Coordination,
    /// A shard's whole run as given (the config block); the fields above are then
    /// this shard's share. None outside a sharded run.
    pub whole: Option<WholeConnect>,
    /// `--ramp`: connection starts (churn: the slots' first cycles) spread over it;
    /// a hold's is always measured, a churn's only with `--ramp-measured`.
    pub ramp: Option<Ramp>,
    /// `--interval`: the length of one row of the series (connect latency per interval).
    pub interval: Duration,
    /// `--hlog`: where each interval's connect-latency histogram goes.
    pub hlog: Option<std::path::PathBuf>,
    /// `--stages` (churn): cycles started per second by stages, this shard's part;
    /// empty without. The run lasts their sum (`Mode::Churn`'s duration).
    pub stages: Stages,
}

/// Connect's own flags, validated: the whole run as the user gave it, before a
/// shard's share and before connect's own choices.
struct Asked {
    mode: Mode,
    /// Connections or cycles over every shard (0: churn for a duration).
    total: u64,
    targets: Option<Vec<SocketAddr>>,
    host: String,
    rate: f64,
    concurrency: Option<usize>,
    processes: Option<usize>,
    server_processes: Option<usize>,
    server_pids: Vec<u32>,
    interval: Duration,
    hlog: Option<std::path::PathBuf>,
    stages: Stages,
}

impl ConnectConfig {
    /// The validated plan, its defaults chosen, checked against this machine's capacity.
    pub fn from_args(a: &ConnectArgs, limits: &KernelLimits) -> Result<Self> {
        let cfg = Self::planned(a, limits, loopback::bindable)?;
        capacity::check(&cfg.needs(), limits)?;
        Ok(cfg)
    }

    /// The plan with its defaults chosen, before the capacity check: `usable` says
    /// which loopback addresses may serve as sources (a probe, or a test's answer).
    pub fn planned(
        a: &ConnectArgs,
        limits: &KernelLimits,
        usable: impl Fn(IpAddr) -> bool,
    ) -> Result<Self> {
        let client = ClientConfig::from_args(&a.client, None, MIN_PROGRESS)?;
        if client.identity.is_some() {
            return Err(crate::error::Error::usage(
                "wirebench connect sends no client certificate: drop --cert and --key",
            ));
        }
        let asked = Asked::read(a)?;
        if client.ramp.is_some() && !asked.stages.is_empty() {
            return Err(Error::usage(
                "--stages and --ramp both shape the rate of new cycles: write the ramp as the first stage (e.g. --stages 2s:500,10s:500)",
            ));
        }
        Self::choose(asked, client, limits, usable)
    }

    /// The plan from what was asked: a shard's share of it, and connect's own choices
    /// where no flag decided.
    fn choose(
        asked: Asked,
        client: ClientConfig,
        limits: &KernelLimits,
        usable: impl Fn(IpAddr) -> bool,
    ) -> Result<Self> {
        let shard = client.coordination.shard.clone();
        let churn = matches!(asked.mode, Mode::Churn { .. });
        let total = match &shard {
            Some(s) => sharding::total(s, asked.total)?,
            None => asked.total,
        };
        let (all_sources, chosen_sources) =
            sources(client.source.as_ref(), asked.targets.as_deref(), usable);
        let sources = match &shard {
            Some(s) => sharding::sources(s, &all_sources)?,
            None => all_sources.clone(),
        };
        if let (Some(t), Some(s)) = (&asked.targets, sources.first()) {
            if t[0].is_ipv4() != s.is_ipv4() {
                return Err(Error::usage(
                    "--source and the target must both be IPv4 or both IPv6",
                ));
            }
        }
        let loopback = all_loopback(asked.targets.as_deref());
        let chosen_concurrency = asked
            .concurrency
            .is_none()
            .then(|| defaults::in_flight(churn, loopback, total, limits.somaxconn));
        let concurrency = match (&shard, asked.concurrency) {
            (Some(s), Some(c)) => sharding::concurrency(s, c),
            (_, given) => given.or(chosen_concurrency).unwrap_or(1),
        };
        let open_at_once = if churn { concurrency as u64 } else { total };
        let (processes, server_processes) = processes(&asked, open_at_once, limits)?;
        Ok(ConnectConfig {
            total,
            rate: shard
                .as_ref()
                .map_or(asked.rate, |s| sharding::rate(s, asked.rate)),
            concurrency,
            processes,
            server_processes,
            chosen: Chosen {
                sources: chosen_sources,
                processes: asked.processes.is_none().then_some(processes),
                concurrency: chosen_concurrency,
            },
            whole: shard.as_ref().map(|_| WholeConnect {
                total: asked.total,
                rate: asked.rate,
                concurrency: asked.concurrency,
                sources: all_sources.len(),
                processes: asked.processes,
                stages: asked.stages,
            }),
            // A hold's figure is the time to establish all N, and the ramp is part of
            // it: leaving it out would leave out the thing measured, so a hold always
            // counts its ramp (`--ramp-measured` is accepted and changes nothing). A
            // churn's figures are rates and latencies over the run, which the ramp's
            // slow start would dilute: as for the loads, its ramp is left out of them
            // (counted apart, as the report's `connect.ramp`) unless `--ramp-measured`.
            ramp: client.ramp.map(|r| Ramp {
                measured: r.measured || !churn,
                ..r
            }),
            sources,
            interval: asked.interval,
            hlog: asked.hlog,
            // A shard starts its part of every stage's cycles (`Shard::rate`).
            stages: match &shard {
                Some(s) => asked.stages.with_targets(|t| s.rate(t)),
                None => asked.stages,
            },
            mode: asked.mode,
            targets: asked.targets,
            host: asked.host,
            server_pids: asked.server_pids,
            timeout: client.timeout,
            output: client.output,
            tls: client.tls,
            coordination: client.coordination,
        })
    }

    /// Sockets open at once: every connection (hold), or the concurrent cycles (churn).
    pub fn open_at_once(&self) -> u64 {
        match self.mode {
            Mode::Hold { .. } => self.total,
            Mode::Churn { .. } => self.concurrency as u64,
        }
    }

    /// What the plan asks of this machine, for the capacity check.
    pub fn needs(&self) -> Needs {
        Needs {
            open: self.open_at_once(),
            processes: self.processes,
            server_processes: self.server_processes,
            builtin: self.builtin(),
            sources: self.sources.len(),
            destinations: self.targets.as_ref().map_or(1, |t| t.len()),
            loopback: all_loopback(self.targets.as_deref()),
            loopback_sources_chosen: matches!(self.chosen.sources, Sources::Loopback(_)),
        }
    }

    pub fn builtin(&self) -> bool {
        self.targets.is_none()
    }

    pub fn is_churn(&self) -> bool {
        matches!(self.mode, Mode::Churn { .. })
    }
}

impl Asked {
    fn read(a: &ConnectArgs) -> Result<Asked> {
        let (targets, host) = targets(a.target.as_deref())?;
        let server_pids = server_pids(a.server_pid.as_deref(), targets.is_some())?;
        let stages = read_stages(a)?;
        let mode = Mode::read(a, &stages)?;
        let total = match (&mode, a.connections) {
            (_, Some(0)) => return Err(Error::usage("-n/--connections must be at least 1")),
            (Mode::Churn { duration: Some(_) }, _) => 0,
            (_, n) => n.unwrap_or(1000),
        };
        if !(a.connect_rate.is_finite() && a.connect_rate >= 0.0) {
            return Err(Error::usage(
                "--connect-rate must be a number of connections per second, 0 for no limit",
            ));
        }
        if a.concurrency == Some(0) {
            return Err(Error::usage("--concurrency must be at least 1"));
        }
        if targets.is_some() && a.server_processes.is_some() {
            return Err(Error::usage(
                "--server-processes only applies to the built-in server (no target)",
            ));
        }
        Ok(Asked {
            mode,
            total,
            targets,
            host,
            rate: a.connect_rate,
            concurrency: a.concurrency,
            processes: a.processes,
            server_processes: a.server_processes,
            server_pids,
            interval: series_interval(&a.interval)?,
            hlog: a.hlog.clone(),
            stages,
        })
    }
}

impl Mode {
    /// `--churn` (with `-d`, or `--stages`) or a hold (with `--hold`, `--ping`).
    fn read(a: &ConnectArgs, stages: &Stages) -> Result<Mode> {
        if a.churn {
            if a.hold.is_some() || a.ping.is_some() {
                return Err(Error::usage(
                    "--churn closes every connection after one echo: it takes neither --hold nor --ping",
                ));
            }
            if !stages.is_empty() {
                return Ok(Mode::Churn {
                    duration: Some(stages.total()),
                });
            }
            let duration = a
                .duration
                .as_deref()
                .map(|d| duration_flag("--duration", d))
                .transpose()?;
            if duration.is_some() && a.connections.is_some() {
                return Err(Error::usage(
                    "choose one of -d/--duration and -n/--connections",
                ));
            }
            if duration.is_some_and(|d| d.is_zero()) {
                return Err(Error::usage("--duration must be longer than zero"));
            }
            return Ok(Mode::Churn { duration });
        }
        if a.duration.is_some() {
            return Err(Error::usage(
                "-d/--duration applies to --churn; to keep connections open use --hold",
            ));
        }
        let ping = a
            .ping
            .as_deref()
            .map(|p| duration_flag("--ping", p))
            .transpose()?;
        if ping.is_some_and(|p| p < Duration::from_millis(1)) {
            return Err(Error::usage("--ping interval must be at least 1ms"));
        }
        let default_hold = if ping.is_some() { "10s" } else { "0s" };
        let hold = duration_flag("--hold", a.hold.as_deref().unwrap_or(default_hold))?;
        if ping.is_some() && hold.is_zero() {
            return Err(Error::usage("--ping needs a --hold longer than zero"));
        }
        Ok(Mode::Hold { hold, ping })
    }
}

/// `--stages`: churn's cycles started per second by stages (rates only), which set the
/// run's length and pace alone.
fn read_stages(a: &ConnectArgs) -> Result<Stages> {
    let Some(text) = a.stages.as_deref() else {
        return Ok(Stages::default());
    };
    let refuse = |why: &str| Err(Error::usage(why));
    if !a.churn {
        return refuse("--stages applies to --churn (cycles started per second): a hold opens -n connections and keeps them");
    }
    if a.connections.is_some() {
        return refuse("--stages decides how many cycles start and when: drop -n/--connections");
    }
    if a.duration.is_some() {
        return refuse("the run lasts the stages' sum: drop -d/--duration");
    }
    if a.connect_rate != 0.0 {
        return refuse("--stages sets the rate of new cycles: drop --connect-rate");
    }
    let list = crate::engine::stages::parse("--stages", text).map_err(Error::usage)?;
    Ok(Stages::new(&list))
}

/// The target's addresses and the name its certificate is checked against; None: the
/// built-in server, on 127.0.0.1.
fn targets(target: Option<&str>) -> Result<(Option<Vec<SocketAddr>>, String)> {
    match target {
        None => Ok((None, "127.0.0.1".to_string())),
        Some(t) if range::is_range(t) => {
            let v = range::parse_socket_range("target", t)?;
            crate::net::addr::refuse_port_zero(t, v[0])?;
            let host = v[0].ip().to_string();
            Ok((Some(v), host))
        }
        Some(t) => {
            let (addr, host) = crate::net::addr::resolve_target(t)?;
            Ok((Some(vec![addr]), host))
        }
    }
}

/// `--server-pid`: running processes of a server started apart (not the built-in one).
fn server_pids(text: Option<&str>, has_target: bool) -> Result<Vec<u32>> {
    let Some(text) = text else {
        return Ok(Vec::new());
    };
    if !has_target {
        return Err(Error::usage(
            "--server-pid is for a separately started server; the built-in one is measured anyway",
        ));
    }
    text.split(',')
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
        })
}

/// The whole run's sources: `--source` as given (`kernel`: none), else every usable
/// loopback address for a loopback target (`net::loopback`); and how they came.
fn sources(
    flag: Option<&SourceFlag>,
    targets: Option<&[SocketAddr]>,
    usable: impl Fn(IpAddr) -> bool,
) -> (Vec<IpAddr>, Sources) {
    match flag {
        Some(SourceFlag::Addrs(v)) => (v.clone(), Sources::Given),
        Some(SourceFlag::Kernel) => (Vec::new(), Sources::Given),
        None => match loopback::sources(targets, usable) {
            Sources::Loopback(v) => (v.clone(), Sources::Loopback(v)),
            other => (Vec::new(), other),
        },
    }
}

/// Every destination is on loopback (the built-in server is).
fn all_loopback(targets: Option<&[SocketAddr]>) -> bool {
    targets.map_or(true, |t| t.iter().all(|a| a.ip().is_loopback()))
}

/// The client's and the built-in server's processes: as given, or just enough for the
/// sockets open at once (the server's only without a target).
fn processes(asked: &Asked, open: u64, limits: &KernelLimits) -> Result<(usize, usize)> {
    // What the plan is called in messages: the flag the user gave (or its default).
    let what = match asked.mode {
        Mode::Hold { .. } => format!("-n {} connections", group(open)),
        Mode::Churn { .. } => format!("--concurrency {}", group(open)),
    };
    let per_process = capacity::per_process_fds(limits);
    let client = match asked.processes {
        Some(p) => p,
        None => capacity::processes_for(&what, open, per_process, "client")?,
    };
    let server = match asked.server_processes {
        Some(p) => p,
        None if asked.targets.is_none() => {
            capacity::processes_for(&what, open, SERVER_SHARE, "built-in server")?
        }
        None => 1,
    };
    Ok((client, server))
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
        let e = capacity::check(&over.needs(), &here()).unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("7,170,928 ephemeral ports"), "{msg}");
        assert!(msg.contains("add destinations"), "{msg}");
        // Four destinations give four times the pairs: the port check passes.
        let four = plan(&["127.0.0.1-127.0.0.4:9000", "-n", "8000000"], |_| true);
        let ports = 254 * 4 * 28_232u64;
        assert!(four.total < ports);
    }

    #[test]
    fn the_source_flag_reads_as_the_loads_do() {
        // `kernel`: no source, and nothing chosen (the flag decided).
        let c = plan(&["127.0.0.1:9000", "--source", "kernel"], |_| true);
        assert!(c.sources.is_empty());
        assert_eq!(c.chosen.sources, Sources::Given);
        // A comma list.
        let c = plan(
            &["127.0.0.1:9000", "--source", "127.0.0.7,127.0.0.9"],
            |_| true,
        );
        assert_eq!(c.sources.len(), 2);
    }
}
