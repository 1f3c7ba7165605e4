//! The `connect` parent: starts the built-in server's processes (when there is no
//! target) and the client workers, both groups through `procs::group` (as `serve
//! --processes` does), starts the clients together, shows progress, measures memory
//! once every connection is up, holds (and pings), stops, and adds up.

use super::messages::{TlsSpec, WorkerSpec, CMD_GO, CMD_PING, SPEC_ENV};
use super::plan::{ConnectConfig, Mode};
use super::progress::Progress;
use super::report::{Memory, Run, Timeline};
use super::reports::{self, ClientReports, FinalParts};
use super::series::Series;
use crate::engine::{Ramp, Share};
use crate::error::{Error, Result};
use crate::net::tls::Trust;
use crate::procs::group::Group;
use crate::procs::workers::{Ended, Launch};
use crate::server::group::ServerGroup;
use crate::stats::hlog::HlogWriter;
use crate::stats::merge::histograms;
use crate::stats::result::ClientProcess;
use crate::sys::proc_fs as memory;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The built-in server's worker processes: their command line and serialized plan,
/// and the CA PEM its clients check it with (with TLS).
pub struct BuiltinServer {
    pub launch: Launch,
    pub ca_pem: Option<String>,
}

/// Runs the plan, against `builtin` when the plan has no target; each interval of the
/// series is written to `hlog` as it ends.
pub fn run(
    cfg: &ConnectConfig,
    stop: &AtomicBool,
    builtin: Option<BuiltinServer>,
    hlog: Option<HlogWriter>,
) -> Result<Run> {
    // The built-in server first, in its own processes, so its memory is its own.
    let server = match (&cfg.targets, &builtin) {
        (None, Some(b)) => Some(ServerGroup::start(
            &b.launch.args,
            &b.launch.env,
            &[SocketAddr::from(([127, 0, 0, 1], 0))],
            cfg.server_processes,
            stop,
        )?),
        _ => None,
    };
    let targets = match (&cfg.targets, &server) {
        (Some(t), _) => t.clone(),
        (None, Some(s)) => s.addrs.clone(),
        (None, None) => return Err(Error::runtime("no target and no built-in server")),
    };
    let server_pids = server
        .as_ref()
        .map_or(cfg.server_pids.clone(), |s| s.pids());
    let pem = builtin.as_ref().and_then(|b| b.ca_pem.as_deref());
    let launches = client_launches(cfg, &targets, pem);
    let clients = Group::start("connect", "connect worker process", &launches, stop)?;
    // Baselines, with every process up and no connection yet.
    let before = Readings::now(&server_pids, &clients.pids());
    // --start-at: every process is up and nothing has connected; go at the common start.
    if !cfg.coordination.wait_for_start(stop) {
        return Err(Error::ShortFall(
            "stopped while waiting for --start-at; nothing was sent".into(),
        ));
    }
    let go_unix_ms = crate::clock::unix_ms();
    let mut r = Running {
        cfg,
        stop,
        series: Series::new(cfg, clients.len(), hlog),
        clients,
        server,
        progress: Progress::new(cfg),
        t0: Instant::now(),
    };
    r.clients.tell_all(CMD_GO);
    let reached = r.come_up();
    let (after, server_active, held) = r.readings_when_up(&server_pids);
    let hold_s = r.hold();
    let interrupted = r.stopped();
    // The measured phase ends here: what follows is the teardown.
    let stopped = r.t0.elapsed();
    // A worker closes its connections before its final report (on the engine): a
    // million over processes sharing a CPU took ~20-40 s here, so be patient.
    r.clients.stop(cfg.timeout + Duration::from_secs(70));
    let teardown = r.t0.elapsed().saturating_sub(stopped);
    r.progress.finish();
    // Exiting with ~20,000 sockets takes a while, and dozens of workers share a CPU:
    // be patient, and hold it against a worker only if its report is missing too.
    let (mut reports, ended) = r.clients.reap(Duration::from_secs(60));
    let intervals = r.series.finish(&mut reports)?;
    let server_cpu_s =
        (!server_pids.is_empty()).then(|| server_cpu(&server_pids) - before.server_cpu_s);
    // After the clients left, the built-in server should be back to no connections.
    let server_totals = r.server.map(|mut s| {
        s.wait_for(Duration::from_secs(10), |t| t.active == 0);
        s.stop()
    });
    let mut run = gathered(&reports, &ended);
    run.intervals = intervals;
    run.server_cpu_s = server_cpu_s;
    run.timeline = Timeline {
        reached_s: reached.as_secs_f64(),
        hold_s,
        elapsed_s: stopped.as_secs_f64(),
        teardown_s: teardown.as_secs_f64(),
        go_unix_ms,
    };
    run.memory = before.memory(&after, held, server_active, server_pids.len());
    run.server = server_totals;
    run.targets = targets;
    run.interrupted = interrupted;
    Ok(run)
}

/// The client workers and the built-in server while the plan runs.
struct Running<'a> {
    cfg: &'a ConnectConfig,
    stop: &'a AtomicBool,
    clients: Group<ClientReports>,
    server: Option<ServerGroup>,
    progress: Progress,
    series: Series,
    /// When the workers were told to go.
    t0: Instant,
}

impl Running<'_> {
    fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// One look at the workers: their reports (waiting up to 20 ms), progress, and the
    /// built-in server's counters.
    fn turn(&mut self) {
        self.clients.poll(Duration::from_millis(20));
        self.series.take(self.t0, self.clients.reports_mut());
        let so_far = reports::sum(self.clients.reports());
        self.progress.tick(self.t0, &so_far, self.cfg, false);
        if let Some(s) = &mut self.server {
            s.poll(Duration::ZERO);
        }
    }

    /// Runs until every worker has settled all its connects (or Ctrl-C); returns when.
    fn come_up(&mut self) -> Duration {
        while !self.clients.all(|w| w.connected) && !self.stopped() {
            self.turn();
        }
        let reached = self.t0.elapsed();
        let up = reports::sum(self.clients.reports());
        self.progress.tick(self.t0, &up, self.cfg, true);
        reached
    }

    /// Memory once everything is up, read after the built-in server has accepted every
    /// connection still open; with the server's active count then and the connections held.
    fn readings_when_up(&mut self, server_pids: &[u32]) -> (Readings, Option<u64>, u64) {
        let up = reports::sum(self.clients.reports());
        if let Some(s) = &mut self.server {
            if !self.cfg.is_churn() {
                let want = up.established - up.lost_total();
                s.wait_for(Duration::from_secs(10), |t| t.active >= want);
            }
        }
        let active = self.server.as_ref().map(|s| s.totals().active);
        (
            Readings::now(server_pids, &self.clients.pids()),
            active,
            up.open,
        )
    }

    /// A hold's time with every connection up (pinging when asked), in seconds; 0
    /// for a churn or a run already interrupted.
    fn hold(&mut self) -> f64 {
        let cfg = self.cfg;
        let (Mode::Hold { hold, ping }, false) = (&cfg.mode, self.stopped()) else {
            return 0.0;
        };
        let started = Instant::now();
        if ping.is_some() {
            self.clients.tell_all(CMD_PING);
        }
        while started.elapsed() < *hold && !self.stopped() {
            self.turn();
        }
        started.elapsed().as_secs_f64()
    }
}

/// What /proc says about both sides at one moment.
struct Readings {
    slab: u64,
    server_rss: u64,
    client_rss: u64,
    server_cpu_s: f64,
}

impl Readings {
    fn now(server_pids: &[u32], client_pids: &[u32]) -> Readings {
        Readings {
            slab: memory::slab_bytes(),
            server_rss: memory::total_rss(server_pids),
            client_rss: memory::total_rss(client_pids),
            server_cpu_s: server_cpu(server_pids),
        }
    }

    /// Memory from these readings (before the first connect) to `after` (all up).
    fn memory(&self, after: &Readings, held: u64, active: Option<u64>, servers: usize) -> Memory {
        Memory {
            held,
            server_active: active,
            server_processes: servers,
            server_rss_before: self.server_rss,
            server_rss_after: after.server_rss,
            client_rss_before: self.client_rss,
            client_rss_after: after.client_rss,
            slab_before: self.slab,
            slab_after: after.slab,
        }
    }
}

/// The workers' counts and figures combined by the one exact merge (stats::merge):
/// their histograms added, never their percentiles averaged; CPU summed. The rest of
/// the run (times, memory, the server) is the parent's to fill in.
fn gathered(all: &[ClientReports], ended: &[Ended]) -> Run {
    let finals: Vec<&FinalParts> = all.iter().filter_map(|w| w.last.as_ref()).collect();
    let (counts, ramp) = reports::phases(all);
    // The peak memory and the loops of the workers that reported, each in its own
    // words (a worker without a final report is counted among `workers_failed`). Not
    // read here from /proc: a churn worker may have exited already. Each peaked on its
    // own, so the sum is an upper bound of a simultaneous peak.
    let client_process = (!finals.is_empty()).then(|| ClientProcess {
        peak_rss_bytes: finals.iter().filter_map(|f| f.peak_rss_bytes).sum(),
        includes_builtin_server: false,
        event_loop: Some(finals.iter().map(|f| &f.event_loop).sum()),
    });
    Run {
        // A churn ramp left out: the figures are over the measured phase after it, the
        // longest any worker had (each ran its own from its own start).
        measured_s: ramp
            .as_ref()
            .map(|_| finals.iter().map(|f| f.measured_s).fold(0.0, f64::max)),
        counts,
        ramp,
        connect_hist: histograms::add_all(finals.iter().map(|f| &f.connect_hist)),
        echo_hist: histograms::add_all(finals.iter().map(|f| &f.echo_hist)),
        client_cpu_s: finals.iter().map(|f| f.cpu_s).sum(),
        client_process,
        workers_failed: ended
            .iter()
            .zip(all)
            .filter(|(e, w)| w.last.is_none() || **e == Ended::Failed)
            .count(),
        server_cpu_s: None,
        timeline: Timeline::default(),
        memory: Memory::default(),
        intervals: Vec::new(),
        server: None,
        targets: Vec::new(),
        interrupted: false,
        stages: stage_sums(&finals),
    }
}

/// `--stages`: the workers' figures added stage by stage (each ran its part of every
/// stage's targets, so the sums are the whole run's); None without stages, or when a
/// worker did not report them (then no stage's figure is whole).
fn stage_sums(finals: &[&FinalParts]) -> Option<Vec<crate::stats::stages::StageFigures>> {
    let parts: Vec<_> = finals.iter().map(|f| f.stages.as_ref()).collect();
    crate::stats::stages::merge(&parts, true).ok().flatten()
}

/// Each client worker's command line and its share of the plan (in its environment).
fn client_launches(cfg: &ConnectConfig, targets: &[SocketAddr], pem: Option<&str>) -> Vec<Launch> {
    let (churn, duration_ms, ping_ms) = match &cfg.mode {
        Mode::Churn { duration } => (true, duration.map(|d| d.as_millis() as u64), None),
        Mode::Hold { ping, .. } => (false, None, ping.map(|p| p.as_millis().max(1) as u64)),
    };
    let p = cfg.processes;
    let concurrency = cfg.concurrency.div_ceil(p).max(1);
    (0..p)
        .map(|i| {
            let (first, count) = share(cfg.total, p, i);
            let spec = WorkerSpec {
                index: i,
                first,
                count,
                churn,
                duration_ms,
                rate: cfg.rate / p as f64,
                concurrency,
                dests: targets.to_vec(),
                sources: cfg.sources.clone(),
                timeout_ms: cfg.timeout.as_millis() as u64,
                ping_interval_ms: ping_ms,
                id_base: cfg
                    .coordination
                    .shard
                    .as_ref()
                    .map_or(0, |s| s.connection_id_base()),
                tls: tls_spec(cfg, pem),
                server_name: cfg.host.clone(),
                ramp: cfg
                    .ramp
                    .map(|r| ramp_share(r, i, p, churn, cfg.total, concurrency)),
                step_ms: cfg.interval.as_millis().max(1) as u64,
                stages: cfg.stages.list().to_vec(),
                processes: p,
            };
            Launch {
                args: vec!["connect".to_string()],
                env: vec![(
                    SPEC_ENV.to_string(),
                    serde_json::to_string(&spec).unwrap_or_default(),
                )],
            }
        })
        .collect()
}

fn tls_spec(cfg: &ConnectConfig, builtin_pem: Option<&str>) -> Option<TlsSpec> {
    cfg.tls.as_ref().map(|t| match (t, builtin_pem) {
        (Trust::System, Some(pem)) => TlsSpec::CaPem(pem.to_string()),
        (Trust::Insecure, _) => TlsSpec::Insecure,
        (Trust::CaFile(p), _) => TlsSpec::CaFile(p.display().to_string()),
        (Trust::System, None) => TlsSpec::System,
        (Trust::CaPem(pem), _) => TlsSpec::CaPem(pem.clone()),
    })
}

/// Splits `total` into `parts` shares that differ by at most one.
fn share(total: u64, parts: usize, i: usize) -> (u64, u64) {
    let (base, extra) = (total / parts as u64, total % parts as u64);
    let i = i as u64;
    let first = i * base + i.min(extra);
    (first, base + u64::from(i < extra))
}

/// Process `i`'s place in the ramp over all `p` processes: its connections (churn:
/// its `slots` cycling slots) interleaved with the others', so the server sees one
/// start every T / total rather than `p` at once at every step. The hold shares are
/// dealt as `share` deals them, which is what `Share` asks for.
fn ramp_share(r: Ramp, i: usize, p: usize, churn: bool, total: u64, slots: usize) -> Ramp {
    let total = if churn { (slots * p) as u64 } else { total };
    Ramp {
        share: Some(Share {
            index: i as u64,
            of: p as u64,
            total,
        }),
        ..r
    }
}

fn server_cpu(pids: &[u32]) -> f64 {
    pids.iter()
        .filter_map(|p| memory::cpu_time(*p))
        .map(|d| d.as_secs_f64())
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every worker's connection starts, as the plan it is given says: over all of
    /// them, one start every T / total, none twice.
    fn starts_over_all(total: u64, p: usize, churn: bool, slots: usize) -> Vec<u64> {
        let r = Ramp {
            over: Duration::from_millis(total.max(1)),
            measured: false,
            share: None,
        };
        let mut all = Vec::new();
        for i in 0..p {
            let mine = ramp_share(r, i, p, churn, total, slots);
            let n = if churn {
                slots
            } else {
                share(total, p, i).1 as usize
            };
            all.extend((0..n).map(|k| mine.start_of(k, n)));
        }
        all.sort();
        all
    }

    #[test]
    fn each_workers_ramp_interleaves_with_the_others() {
        // 1 ms per connection over the ramp: connection g of the whole starts at g ms.
        let ms = |n: u64| (0..n).map(|g| g * 1_000_000).collect::<Vec<_>>();
        assert_eq!(starts_over_all(10, 10, false, 0), ms(10));
        assert_eq!(starts_over_all(103, 4, false, 0), ms(103));
        // Churn: each of 3 workers cycles 5 slots; 15 slots over the ramp.
        let mut r = starts_over_all(0, 3, true, 5);
        r.dedup();
        assert_eq!(r.len(), 15);
    }
}
