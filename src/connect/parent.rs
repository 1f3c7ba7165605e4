//! The `connect` parent: starts the built-in server's processes (when there is no
//! target) and the client workers, starts them together, shows progress, measures
//! memory once every connection is up, holds (and pings), stops, and adds up.

use super::messages::{
    Counts, TlsSpec, WorkerMsg, WorkerSpec, CMD_GO, CMD_PING, CMD_STOP, SPEC_ENV,
};
use super::plan::{ConnectConfig, Mode};
use super::report::{Memory, Outcome, Run, Timeline};
use crate::engine::{Ramp, Share};
use crate::error::{Error, Result};
use crate::net::tls::Trust;
use crate::procs::workers::{self, Msg, Workers};
use crate::report::format::{group, rate};
use crate::server::group::ServerGroup;
use crate::stats::merge::histograms;
use crate::stats::result::ClientProcess;
use crate::stats::Latency;
use crate::stats::LoopCounts;
use crate::sys::proc_fs as memory;
use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Each worker's last word, and whether it is done with its phase.
struct Gathered {
    /// Progress: everything so far; once connected or final: the measured phase.
    latest: Vec<Counts>,
    /// A churn ramp left out of the figures: what happened during it (from the
    /// worker's `connected` or final report).
    ramp: Vec<Option<Counts>>,
    connected: Vec<bool>,
    finals: Vec<Option<FinalParts>>,
    gone: Vec<bool>,
}

pub struct FinalParts {
    pub connect_hist: Latency,
    pub echo_hist: Latency,
    pub cpu_s: f64,
    pub event_loop: LoopCounts,
    pub peak_rss_bytes: Option<u64>,
    /// The worker's measured phase, seconds (after a ramp left out).
    pub measured_s: f64,
}

impl Gathered {
    fn new(n: usize) -> Self {
        Gathered {
            latest: vec![Counts::default(); n],
            ramp: vec![None; n],
            connected: vec![false; n],
            finals: (0..n).map(|_| None).collect(),
            gone: vec![false; n],
        }
    }

    fn take(&mut self, m: Msg) {
        match m {
            Msg::Gone(i) => self.gone[i] = true,
            Msg::Line(i, l) => match serde_json::from_str::<WorkerMsg>(&l) {
                Ok(WorkerMsg::Progress { c }) => self.latest[i] = c,
                Ok(WorkerMsg::Connected { c, ramp }) => {
                    self.latest[i] = c;
                    self.ramp[i] = ramp;
                    self.connected[i] = true;
                }
                Ok(WorkerMsg::Final {
                    c,
                    ramp,
                    measured_s,
                    connect_hist,
                    echo_hist,
                    cpu_s,
                    event_loop,
                    peak_rss_bytes,
                    ..
                }) => {
                    self.latest[i] = c;
                    self.ramp[i] = ramp;
                    self.connected[i] = true;
                    self.finals[i] = Some(FinalParts {
                        connect_hist: Latency::decode(&connect_hist).unwrap_or_default(),
                        echo_hist: Latency::decode(&echo_hist).unwrap_or_default(),
                        cpu_s,
                        event_loop,
                        peak_rss_bytes,
                        measured_s,
                    });
                }
                _ => {}
            },
        }
    }

    /// Everything so far, a ramp left out of the figures included: for progress and
    /// for what is open.
    fn sum(&self) -> Counts {
        let (t, ramp) = self.phases();
        t.with_ramp(ramp.as_ref())
    }

    /// The measured counts summed over the workers, and the ramp's apart when a worker
    /// left it out (each worker's counts are exact; so are their sums).
    fn phases(&self) -> (Counts, Option<Counts>) {
        let mut t = Counts::default();
        for c in &self.latest {
            t.add(c);
        }
        let mut ramp: Option<Counts> = None;
        for r in self.ramp.iter().flatten() {
            ramp.get_or_insert_with(Counts::default).add(r);
        }
        (t, ramp)
    }

    /// Every worker is done with its connect phase (or gone).
    fn all_connected(&self) -> bool {
        self.connected.iter().zip(&self.gone).all(|(c, g)| *c || *g)
    }

    fn all_final(&self) -> bool {
        self.finals
            .iter()
            .zip(&self.gone)
            .all(|(f, g)| f.is_some() || *g)
    }
}

fn drain(w: &Workers, g: &mut Gathered, wait: Duration) {
    let mut wait = wait;
    while let Some(m) = w.recv(wait) {
        g.take(m);
        wait = Duration::ZERO;
    }
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

/// Runs the plan; `server_args` holds the built-in server's worker command line, its
/// serialized plan (environment) and its CA PEM.
pub fn run(
    cfg: &ConnectConfig,
    stop: &AtomicBool,
    server_args: Option<(workers::Launch, Option<String>)>,
) -> Result<Run> {
    // The built-in server first, in its own processes, so its memory is its own.
    let mut server = match (&cfg.targets, &server_args) {
        (None, Some((launch, _))) => Some(ServerGroup::start(
            &launch.args,
            &launch.env,
            &["127.0.0.1:0".parse().expect("literal address")],
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
    let server_pids = match &server {
        Some(s) => s.pids(),
        None => cfg.server_pids.clone(),
    };
    let pem = server_args.as_ref().and_then(|(_, p)| p.as_deref());
    let (churn, duration_ms, ping_ms) = match &cfg.mode {
        Mode::Churn { duration } => (true, duration.map(|d| d.as_millis() as u64), None),
        Mode::Hold { ping, .. } => (false, None, ping.map(|p| p.as_millis().max(1) as u64)),
    };
    let p = cfg.processes;
    let concurrency = cfg.concurrency.div_ceil(p).max(1);
    let specs: Vec<WorkerSpec> = (0..p)
        .map(|i| {
            let (first, count) = share(cfg.total, p, i);
            WorkerSpec {
                index: i,
                first,
                count,
                churn,
                duration_ms,
                rate: cfg.rate / p as f64,
                concurrency,
                dests: targets.clone(),
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
            }
        })
        .collect();
    let mut w = workers::spawn(
        "connect",
        p,
        |_| vec!["connect".to_string()],
        |i| {
            vec![(
                SPEC_ENV.to_string(),
                serde_json::to_string(&specs[i]).unwrap_or_default(),
            )]
        },
    )?;
    let client_pids = w.pids();
    let mut g = Gathered::new(p);
    let mut ready = 0;
    let end = Instant::now() + Duration::from_secs(30);
    while ready < p {
        if Instant::now() >= end || g.gone.iter().any(|x| *x) {
            return Err(Error::runtime(
                "the connect worker processes did not all start (see the message above)",
            ));
        }
        if let Some(m) = w.recv(Duration::from_millis(100)) {
            match &m {
                Msg::Line(_, l) if l.contains("\"ready\"") => ready += 1,
                _ => g.take(m),
            }
        }
    }

    // Baselines, with every process up and no connection yet.
    let slab0 = memory::slab_bytes();
    let server_rss0 = memory::total_rss(&server_pids);
    let client_rss0 = memory::total_rss(&client_pids);
    let server_cpu0 = server_cpu(&server_pids);

    // --start-at: every process is up and nothing has connected; go at the common start.
    if !cfg.coordination.wait_for_start(stop) {
        return Err(Error::ShortFall(
            "stopped while waiting for --start-at; nothing was sent".into(),
        ));
    }
    let go_unix_ms = crate::clock::unix_ms();
    let t0 = Instant::now();
    w.tell_all(CMD_GO);
    let mut progress = Progress::new(cfg);
    while !g.all_connected() && !stop.load(Ordering::Relaxed) {
        drain(&w, &mut g, Duration::from_millis(20));
        progress.tick(t0, &g.sum(), cfg, false);
        if let Some(s) = &mut server {
            s.poll(Duration::ZERO);
        }
    }
    let mut interrupted = stop.load(Ordering::Relaxed);
    let reached = t0.elapsed();
    let counts_up = g.sum();
    progress.tick(t0, &counts_up, cfg, true);

    // Memory once everything is up: wait for the built-in server to have accepted all.
    if let Some(s) = &mut server {
        if !cfg.is_churn() {
            let want = counts_up.established - counts_up.lost_total();
            s.wait_for(Duration::from_secs(10), |t| t.active >= want);
        }
    }
    let server_active = server.as_ref().map(|s| s.totals().active);
    let slab1 = memory::slab_bytes();
    let server_rss1 = memory::total_rss(&server_pids);
    let client_rss1 = memory::total_rss(&client_pids);
    let held = counts_up.open;

    let mut hold_s = 0.0;
    if let (Mode::Hold { hold, ping }, false) = (&cfg.mode, interrupted) {
        let started = Instant::now();
        if ping.is_some() {
            w.tell_all(CMD_PING);
        }
        while started.elapsed() < *hold && !stop.load(Ordering::Relaxed) {
            drain(&w, &mut g, Duration::from_millis(20));
            progress.tick(t0, &g.sum(), cfg, false);
            if let Some(s) = &mut server {
                s.poll(Duration::ZERO);
            }
        }
        hold_s = started.elapsed().as_secs_f64();
        interrupted = stop.load(Ordering::Relaxed);
    }
    // The measured phase ends here: what follows is the teardown.
    let stopped = t0.elapsed();
    w.tell_all(CMD_STOP);
    // A worker closes its connections before its final report (on the engine): a
    // million over processes sharing a CPU took ~20-40 s here, so be patient.
    let end = Instant::now() + cfg.timeout + Duration::from_secs(70);
    while !g.all_final() && Instant::now() < end {
        drain(&w, &mut g, Duration::from_millis(50));
    }
    let teardown = t0.elapsed().saturating_sub(stopped);
    progress.finish();
    // Exiting with ~20,000 sockets takes a while, and dozens of workers share a CPU:
    // be patient, and hold it against a worker only if its report is missing too.
    let ended = w.reap(Duration::from_secs(60));
    drop(w);
    let server_cpu_s = (!server_pids.is_empty()).then(|| server_cpu(&server_pids) - server_cpu0);

    // After the clients left, the built-in server should be back to no connections.
    let server_totals = server.map(|mut s| {
        s.wait_for(Duration::from_secs(10), |t| t.active == 0);
        s.stop()
    });

    // The workers' figures combined by the one exact merge (stats::merge): their
    // histograms added, never their percentiles averaged; CPU summed.
    let finals: Vec<&FinalParts> = g.finals.iter().flatten().collect();
    let connect_hist = histograms::add_all(finals.iter().map(|f| &f.connect_hist));
    let echo_hist = histograms::add_all(finals.iter().map(|f| &f.echo_hist));
    let client_cpu_s: f64 = finals.iter().map(|f| f.cpu_s).sum();
    // The peak memory and the loops of the workers that reported, each in its own
    // words (a worker without a final report is counted among `workers_failed`). Not
    // read here from /proc: a churn worker may have exited already. Each peaked on its
    // own, so the sum is an upper bound of a simultaneous peak.
    let client_process = (!finals.is_empty()).then(|| ClientProcess {
        peak_rss_bytes: finals.iter().filter_map(|f| f.peak_rss_bytes).sum(),
        includes_builtin_server: false,
        event_loop: Some(finals.iter().map(|f| &f.event_loop).sum()),
    });
    let workers_failed = ended
        .iter()
        .zip(&g.finals)
        .filter(|(e, f)| f.is_none() || **e == workers::Ended::Failed)
        .count();
    let (counts, ramp) = g.phases();
    // A churn ramp left out: the figures are over the measured phase after it, the
    // longest any worker had (each ran its own from its own start).
    let measured_s = ramp
        .as_ref()
        .map(|_| finals.iter().map(|f| f.measured_s).fold(0.0, f64::max));
    Ok(Run {
        counts,
        ramp,
        measured_s,
        connect_hist,
        echo_hist,
        client_cpu_s,
        server_cpu_s,
        timeline: Timeline {
            reached_s: reached.as_secs_f64(),
            hold_s,
            elapsed_s: stopped.as_secs_f64(),
            teardown_s: teardown.as_secs_f64(),
            go_unix_ms,
        },
        memory: Memory {
            held,
            server_active,
            server_processes: server_pids.len(),
            server_rss_before: server_rss0,
            server_rss_after: server_rss1,
            client_rss_before: client_rss0,
            client_rss_after: client_rss1,
            slab_before: slab0,
            slab_after: slab1,
        },
        server: server_totals,
        targets,
        interrupted,
        workers_failed,
        client_process,
    })
}

/// Progress while connecting and holding: a line redrawn on a terminal, plain lines otherwise.
struct Progress {
    enabled: bool,
    terminal: bool,
    next: Duration,
    every: Duration,
    last_attempts: u64,
    last_t: Duration,
    drawn: bool,
}

impl Progress {
    fn new(cfg: &ConnectConfig) -> Self {
        Progress {
            enabled: !cfg.quiet,
            terminal: std::io::stderr().is_terminal(),
            next: cfg.progress,
            every: cfg.progress,
            last_attempts: 0,
            last_t: Duration::ZERO,
            drawn: false,
        }
    }

    fn tick(&mut self, t0: Instant, c: &Counts, cfg: &ConnectConfig, force: bool) {
        let t = t0.elapsed();
        if !self.enabled || (t < self.next && !force) {
            return;
        }
        let dt = (t - self.last_t).as_secs_f64();
        let count = if cfg.is_churn() {
            c.attempts
        } else {
            c.established
        };
        let r = if dt > 0.0 {
            (c.attempts - self.last_attempts) as f64 / dt
        } else {
            0.0
        };
        self.last_attempts = c.attempts;
        self.last_t = t;
        while self.next <= t {
            self.next += self.every;
        }
        let failed = if c.failures.is_empty() {
            "0".to_string()
        } else {
            c.failures
                .iter()
                .map(|(k, v)| format!("{k} {}", group(*v)))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let what = if cfg.is_churn() {
            format!(
                "cycles {} ok {} | failed {failed} | {} conns/s",
                group(count),
                group(c.cycles_ok),
                rate(r)
            )
        } else {
            let mut s = format!(
                "established {} of {} | open {} | failed {failed} | {} conns/s",
                group(c.established),
                group(cfg.total),
                group(c.open),
                rate(r)
            );
            if c.sent > 0 {
                s.push_str(&format!(" | pings {} ok {}", group(c.sent), group(c.ok)));
            }
            s
        };
        let line = format!("[{:>7.1}s] {what}", t.as_secs_f64());
        if self.terminal {
            eprint!("\r\x1b[2K{line}");
            self.drawn = true;
        } else {
            eprintln!("{line}");
        }
    }

    fn finish(&mut self) {
        if self.drawn {
            eprintln!();
            self.drawn = false;
        }
    }
}

/// Judges a finished run: None when it did all it was asked.
pub fn judge(cfg: &ConnectConfig, r: &Run) -> Outcome {
    // The plan's cycles are the measured ones (a churn ramp left out runs before
    // them); failures and lost frames count wherever they happened, ramp included.
    let measured = &r.counts;
    let c = &r.whole();
    let mut why = Vec::new();
    if r.interrupted {
        why.push("interrupted by a signal before the plan was done".to_string());
    }
    if r.workers_failed > 0 {
        why.push(format!("{} worker processes failed", r.workers_failed));
    }
    match &cfg.mode {
        Mode::Hold { .. } => {
            if c.established < cfg.total {
                why.push(format!(
                    "{} of {} connections established",
                    group(c.established),
                    group(cfg.total)
                ));
            }
            if c.lost_total() > 0 {
                why.push(format!(
                    "{} held connections were lost",
                    group(c.lost_total())
                ));
            }
        }
        Mode::Churn { duration } => {
            let after_ramp = if r.ramp.is_some() {
                " after the ramp"
            } else {
                ""
            };
            if duration.is_none() && measured.cycles_ok < cfg.total {
                why.push(format!(
                    "{} of {} cycles completed{after_ramp}",
                    group(measured.cycles_ok),
                    group(cfg.total)
                ));
            }
            if measured.cycles_ok == 0 {
                why.push(format!("no cycle completed{after_ramp}"));
            }
        }
    }
    if c.failed() > 0 {
        let kinds: Vec<String> = c
            .failures
            .iter()
            .map(|(k, v)| format!("{k} {}", group(*v)))
            .collect();
        why.push(format!(
            "{} connection attempts failed ({})",
            group(c.failed()),
            kinds.join(", ")
        ));
    }
    if c.echo_errors() > 0 {
        why.push(format!("{} echo frames failed", group(c.echo_errors())));
    }
    if c.in_flight > 0 {
        why.push(format!("{} echo frames got no reply", group(c.in_flight)));
    }
    if let Some(t) = &r.server {
        if t.accepts != c.established {
            why.push(format!(
                "the server accepted {} connections, the client established {}",
                group(t.accepts),
                group(c.established)
            ));
        }
    }
    Outcome {
        reason: (!why.is_empty()).then(|| why.join("; ")),
    }
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

    fn line(i: usize, m: &WorkerMsg) -> Msg {
        Msg::Line(i, serde_json::to_string(m).unwrap())
    }

    fn counts(established: u64, ok: u64, fail: u64) -> Counts {
        let mut c = Counts {
            attempts: established + fail,
            established,
            sent: ok,
            ok,
            cycles_ok: ok,
            ..Default::default()
        };
        if fail > 0 {
            c.failures.insert("ECONNREFUSED".into(), fail);
        }
        c
    }

    fn final_of(c: Counts, ramp: Option<Counts>, measured_s: f64) -> WorkerMsg {
        WorkerMsg::Final {
            c,
            ramp,
            measured_s,
            connect_hist: Latency::new().encode(),
            echo_hist: Latency::new().encode(),
            cpu_s: 0.0,
            rss_bytes: 0,
            peak_rss_bytes: Some(1 << 20),
            event_loop: LoopCounts::default(),
        }
    }

    #[test]
    fn workers_ramps_left_out_merge_apart_and_progress_counts_them() {
        let mut g = Gathered::new(2);
        // Progress counts the ramp in; the final reports split it off.
        g.take(line(0, &WorkerMsg::Progress { c: counts(9, 9, 0) }));
        assert_eq!(g.sum().established, 9);
        assert_eq!(g.phases().1, None);
        g.take(line(
            0,
            &final_of(counts(5, 5, 0), Some(counts(7, 7, 1)), 1.5),
        ));
        g.take(line(
            1,
            &final_of(counts(6, 6, 0), Some(counts(3, 2, 0)), 2.0),
        ));
        let (measured, ramp) = g.phases();
        let ramp = ramp.unwrap();
        assert_eq!((measured.established, measured.cycles_ok), (11, 11));
        assert_eq!((ramp.attempts, ramp.established, ramp.ok), (11, 10, 9));
        assert_eq!(ramp.failures["ECONNREFUSED"], 1);
        let all = g.sum();
        assert_eq!((all.attempts, all.established), (22, 21));
        assert!(g.all_final());
        // Without a ramp left out, the counts are the whole run's, as before.
        let mut g = Gathered::new(1);
        g.take(line(0, &final_of(counts(4, 4, 0), None, 1.0)));
        assert_eq!(g.phases(), (counts(4, 4, 0), None));
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
