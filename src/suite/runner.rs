//! `wirebench suite`: for each server, set it up, start it pinned, wait until it is
//! ready, warm up, run every point of every load `repeat` times while sampling the
//! server's CPU and RSS, then stop it. A server that fails is reported and the
//! suite goes on; Ctrl-C stops the generator and the server before returning.

use super::gen::{self, external, Invocation, Target};
use super::manifest::{self, Manifest};
use super::plan::{Load, Point, Server, Stop, Suite};
use super::process::{shell, Family, Launch};
use super::sampler::{self, read_family, Sampler, ServerCost};
use super::{profile, ready};
use crate::error::{Error, Result};
use crate::stats::threshold;
use crate::stats::RunResult;
use serde::Serialize;
use serde_json::{json, Value};
use std::cell::RefCell;
use std::fs::File;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub struct Options {
    pub out: PathBuf,
    pub profile: bool,
    pub stop: Arc<AtomicBool>,
    /// Progress lines on stderr.
    pub quiet: bool,
}

/// What happened to one server, written to servers.json.
#[derive(Debug, Default, Serialize, Clone)]
pub struct ServerStatus {
    pub name: String,
    /// Which round of the suite (1 unless the suite has `rounds`).
    pub round: u32,
    /// ok, setup_failed, start_failed, crashed_before_ready, never_ready, crashed, interrupted
    pub state: String,
    pub message: Option<String>,
    pub command: String,
    pub port: u16,
    /// Every process of the server seen while it ran.
    pub pids: Vec<i32>,
    pub points: u64,
    pub points_failed: u64,
    /// Points whose result failed one of its load's `thresholds`.
    pub points_over_threshold: u64,
    /// It ignored SIGTERM for the grace period and was killed.
    pub killed: bool,
    /// Processes still alive after the stop (should always be empty).
    pub left_behind: Vec<i32>,
    pub flame_graph: Option<String>,
}

impl ServerStatus {
    /// The server ended in `state` (not ok), for the reason `msg`.
    fn fail(&mut self, state: &str, msg: String) {
        self.state = state.into();
        self.message = Some(msg);
    }

    /// Every process of the family seen so far, once each.
    fn note_members(&mut self, family: &Family) {
        for p in family.members() {
            if !self.pids.contains(&p) {
                self.pids.push(p);
            }
        }
    }
}

struct Run<'a> {
    suite: &'a Suite,
    opts: &'a Options,
    exe: PathBuf,
    raw: PathBuf,
    points_dir: PathBuf,
    /// Every file this run wrote into --out, saved after each point.
    manifest: RefCell<Manifest>,
}

fn safe(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

pub fn point_tag(p: &Point) -> String {
    let mut t = format!("c{}-b{}-p{}", p.connections, p.body_size, p.pipeline);
    if let Some(r) = p.rate {
        t.push_str(&format!("-r{r}"));
    }
    t
}

fn free_port(host: &str) -> Result<u16> {
    crate::net::free_port::free_port(host)
        .map_err(|e| Error::runtime(format!("cannot find a free port on {host}: {e}")))
}

fn fill(template: &str, exe: &Path, dir: &Path, host: &str, port: u16) -> String {
    let addr = if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    };
    template
        .replace("{wirebench}", &exe.display().to_string())
        .replace("{dir}", &dir.display().to_string())
        .replace("{addr}", &addr)
        .replace("{host}", host)
        .replace("{port}", &port.to_string())
}

fn children_cpu_s() -> f64 {
    crate::sys::rusage::children_cpu_time().as_secs_f64()
}

/// Runs the whole suite; Ok(statuses) even when servers failed (they are reported).
pub fn run(suite: &Suite, opts: &Options) -> Result<Vec<ServerStatus>> {
    let exe = std::env::current_exe()
        .map_err(|e| Error::runtime(format!("cannot find the wirebench binary: {e}")))?;
    let mk = |p: &Path| {
        std::fs::create_dir_all(p)
            .map_err(|e| Error::runtime(format!("cannot create {}: {e}", p.display())))
    };
    // Only what an earlier run wrote goes (see manifest.rs); a user's file stops the run.
    mk(&opts.out)?;
    let manifest = Manifest::clear(&opts.out, &manifest::SUITE, "--out")?;
    let raw = opts.out.join("raw");
    let points_dir = opts.out.join("points");
    mk(&raw)?;
    mk(&points_dir)?;
    std::fs::write(opts.out.join("suite.toml"), &suite.text)
        .map_err(|e| Error::runtime(format!("cannot write into {}: {e}", opts.out.display())))?;
    let r = Run {
        suite,
        opts,
        exe,
        raw,
        points_dir,
        manifest: RefCell::new(manifest),
    };
    r.manifest.borrow_mut().sync()?;
    let mut statuses = Vec::new();
    for (round, server) in
        (1..=suite.rounds).flat_map(|n| suite.servers.iter().map(move |s| (n, s)))
    {
        if opts.stop.load(Ordering::Relaxed) {
            break;
        }
        if suite.rounds > 1 && !opts.quiet && std::ptr::eq(server, &suite.servers[0]) {
            eprintln!("suite: round {round} of {}", suite.rounds);
        }
        let st = r.server(server, round);
        r.say(&format!(
            "suite: server {}: {}{}",
            st.name,
            st.state,
            st.message
                .as_deref()
                .map(|m| format!(" ({m})"))
                .unwrap_or_default()
        ));
        statuses.push(st);
        write_statuses(&opts.out, &statuses)?;
        r.manifest.borrow_mut().sync()?;
    }
    write_statuses(&opts.out, &statuses)?;
    r.manifest.borrow_mut().finish()?;
    Ok(statuses)
}

fn write_statuses(out: &Path, s: &[ServerStatus]) -> Result<()> {
    let text = serde_json::to_string_pretty(s).map_err(|e| Error::runtime(e.to_string()))?;
    std::fs::write(out.join("servers.json"), text + "\n")
        .map_err(|e| Error::runtime(format!("cannot write servers.json: {e}")))
}

impl Run<'_> {
    fn say(&self, line: &str) {
        if !self.opts.quiet {
            eprintln!("{line}");
        }
    }

    fn stopped(&self) -> bool {
        self.opts.stop.load(Ordering::Relaxed)
    }

    fn dir(&self) -> PathBuf {
        let d = self.suite.file.parent().unwrap_or(Path::new("."));
        let d = if d.as_os_str().is_empty() {
            Path::new(".")
        } else {
            d
        };
        std::fs::canonicalize(d).unwrap_or_else(|_| d.to_path_buf())
    }

    /// stdout and stderr of a child, both into raw/NAME.
    fn log(&self, name: &str) -> (Stdio, Stdio) {
        match File::create(self.raw.join(name)).and_then(|a| a.try_clone().map(|b| (a, b))) {
            Ok((a, b)) => (Stdio::from(a), Stdio::from(b)),
            Err(_) => (Stdio::null(), Stdio::null()),
        }
    }

    fn server(&self, s: &Server, round: u32) -> ServerStatus {
        let mut st = ServerStatus {
            name: s.name.clone(),
            round,
            state: "ok".into(),
            ..Default::default()
        };
        // The setup (a build) runs in the first round only.
        if let Some(setup) = s.setup.as_ref().filter(|_| round == 1) {
            self.say(&format!("suite: server {}: setup: {setup}", s.name));
            if let Err(msg) = self.setup(s, setup) {
                st.fail("setup_failed", msg);
                return st;
            }
        }
        let Some((mut family, port)) = self.start(s, &mut st) else {
            return st;
        };
        if let Err((state, msg)) = self.wait_ready(s, &mut family, port, round) {
            st.fail(state, msg);
            return self.finish(s, family, st, None);
        }
        st.note_members(&family);
        let recording = self.start_profile(s, &family, round);
        let sampler = Sampler::start(family.pid, Duration::from_secs(1));
        self.run_loads(s, &mut family, &sampler, &mut st, port);
        if st.state == "ok" {
            if let Some(code) = family.exited() {
                st.fail(
                    "crashed",
                    format!("it exited ({code}) during the last point"),
                );
            }
        }
        drop(sampler);
        self.finish(s, family, st, recording)
    }

    /// Starts the server's process family on its port; None: it could not start
    /// (said in `st`).
    fn start(&self, s: &Server, st: &mut ServerStatus) -> Option<(Family, u16)> {
        let port = match s.port.map(Ok).unwrap_or_else(|| free_port(&s.host)) {
            Ok(p) => p,
            Err(e) => {
                st.fail("start_failed", e.to_string());
                return None;
            }
        };
        st.port = port;
        st.command = fill(&s.command, &self.exe, &self.dir(), &s.host, port);
        let (out, err) = self.log(&format!("{}.round{}.server.log", safe(&s.name), st.round));
        let family = Family::start(Launch {
            argv: shell(&st.command),
            cwd: Some(&s.cwd),
            env: Some(&s.env),
            cpus: s.cpus.as_ref(),
            stdout: out,
            stderr: err,
        });
        let family = match family {
            Ok(f) => f,
            Err(e) => {
                let msg = format!("cannot start '{}': {e}", st.command);
                st.fail("start_failed", msg);
                return None;
            }
        };
        st.pids.push(family.pid);
        self.say(&format!(
            "suite: server {} started (pid {}) on {}:{port}",
            s.name, family.pid, s.host
        ));
        Some((family, port))
    }

    /// Waits until the server answers its readiness check; Err: the state and why not.
    fn wait_ready(
        &self,
        s: &Server,
        family: &mut Family,
        port: u16,
        round: u32,
    ) -> std::result::Result<(), (&'static str, String)> {
        let addr: SocketAddr = format!("{}:{port}", s.host)
            .parse()
            .or_else(|_| format!("[{}]:{port}", s.host).parse())
            .map_err(|_| ("start_failed", format!("bad address {}:{port}", s.host)))?;
        let began = Instant::now();
        loop {
            if let Some(code) = family.exited() {
                let log = format!("raw/{}.round{round}.server.log", safe(&s.name));
                return Err((
                    "crashed_before_ready",
                    format!("it exited ({code}) before it became ready; see {log}"),
                ));
            }
            if self.stopped() {
                return Err(("interrupted", "stopped by a signal".into()));
            }
            if ready::probe(addr, &s.ready) {
                return Ok(());
            }
            if began.elapsed() >= s.ready_timeout {
                let after = s.ready_timeout.as_secs_f64();
                let missed = ready::missed(addr, &s.ready);
                return Err((
                    "never_ready",
                    format!("not ready after {after:.1} s ({missed})"),
                ));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// With `--profile`: perf recording the server's processes, if it starts.
    fn start_profile(&self, s: &Server, family: &Family, round: u32) -> Option<profile::Recording> {
        if !self.opts.profile {
            return None;
        }
        let data = self
            .raw
            .join(format!("{}.round{}.perf.data", safe(&s.name), round));
        match profile::start(&family.members(), &data) {
            Ok(r) => Some(r),
            Err(e) => {
                self.say(&format!("suite: server {}: {e}", s.name));
                None
            }
        }
    }

    /// Every load that applies to the server: its warm-up, then each point `repeat`
    /// times; stops at a signal or when the server dies (said in `st`).
    fn run_loads(
        &self,
        s: &Server,
        family: &mut Family,
        sampler: &Sampler,
        st: &mut ServerStatus,
        port: u16,
    ) {
        let round = st.round;
        for load in self.suite.loads.iter().filter(|l| l.applies_to(&s.name)) {
            self.warm_up(s, load, port, round);
            for p in &load.points {
                for rep in (round - 1) * load.repeat + 1..=round * load.repeat {
                    if self.stopped() {
                        st.fail("interrupted", "stopped by a signal".into());
                        return;
                    }
                    if let Some(code) = family.exited() {
                        let msg = format!("it exited ({code}) during the load '{}'", load.name);
                        st.fail("crashed", msg);
                        return;
                    }
                    let ok = self.point(s, family, sampler, st, load, p, rep, port);
                    st.points += 1;
                    if !ok {
                        st.points_failed += 1;
                    }
                }
            }
        }
    }

    /// A load's warm-up on the server, at its first point: run, not recorded.
    fn warm_up(&self, s: &Server, load: &Load, port: u16, round: u32) {
        let Some(p) = load.points.first().filter(|_| !load.warmup.is_zero()) else {
            return;
        };
        self.say(&format!(
            "suite: {} / {}: warm-up {:.1} s",
            s.name,
            load.name,
            load.warmup.as_secs_f64()
        ));
        let prefix = self.raw.join(format!(
            "{}__{}__warmup{round}",
            safe(&load.name),
            safe(&s.name)
        ));
        let t = Target {
            exe: &self.exe,
            host: &s.host,
            port,
            prefix: &prefix,
        };
        let inv = gen::invocation(load, p, Stop::Duration(load.warmup), &t);
        let _ = self.execute(&inv, &prefix, load);
        for f in [inv.json.as_ref(), inv.aux.as_ref()].into_iter().flatten() {
            let _ = std::fs::remove_file(f);
        }
    }

    fn finish(
        &self,
        s: &Server,
        mut family: Family,
        mut st: ServerStatus,
        rec: Option<profile::Recording>,
    ) -> ServerStatus {
        // Stop perf first so the flame graph covers the load, not the shutdown.
        if let Some(r) = rec {
            let svg = self.opts.out.join(if st.round > 1 {
                format!("flame-{}-round{}.svg", safe(&s.name), st.round)
            } else {
                format!("flame-{}.svg", safe(&s.name))
            });
            match r.finish(&format!("{} ({})", s.name, self.suite.name), &svg) {
                Ok(()) => {
                    st.flame_graph = svg.file_name().map(|f| f.to_string_lossy().into_owned())
                }
                Err(e) => self.say(&format!("suite: server {}: no flame graph: {e}", s.name)),
            }
        }
        st.note_members(&family);
        st.killed = family.stop(s.grace);
        st.left_behind = st
            .pids
            .iter()
            .copied()
            .filter(|p| crate::sys::proc_fs::alive(*p))
            .collect();
        st
    }

    fn setup(&self, s: &Server, cmd: &str) -> std::result::Result<(), String> {
        let filled = fill(cmd, &self.exe, &self.dir(), &s.host, s.port.unwrap_or(0));
        let log_name = format!("{}.setup.log", safe(&s.name));
        let (out, err) = self.log(&log_name);
        let mut f = Family::start(Launch {
            argv: vec!["/bin/sh".into(), "-c".into(), filled.clone()],
            cwd: Some(&s.cwd),
            env: Some(&s.env),
            cpus: None,
            stdout: out,
            stderr: err,
        })
        .map_err(|e| format!("cannot run the setup '{filled}': {e}"))?;
        let limit = Instant::now() + Duration::from_secs(900);
        loop {
            if let Some(code) = f.exited() {
                return if code.success() {
                    Ok(())
                } else {
                    Err(format!(
                        "the setup '{filled}' failed ({code}); see raw/{log_name}"
                    ))
                };
            }
            if self.stopped() || Instant::now() > limit {
                f.stop(Duration::from_secs(2));
                return Err(format!(
                    "the setup '{filled}' was stopped before it finished"
                ));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Runs a generator to its end (or until Ctrl-C / its time limit); returns its exit code.
    fn execute(
        &self,
        inv: &Invocation,
        prefix: &Path,
        load: &Load,
    ) -> std::result::Result<i32, String> {
        for (path, bytes) in &inv.inputs {
            std::fs::write(path, bytes)
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        }
        for f in [inv.json.as_ref(), inv.aux.as_ref()].into_iter().flatten() {
            let _ = std::fs::remove_file(f);
        }
        let out = File::create(with(prefix, ".out")).map_err(|e| e.to_string())?;
        let err = File::create(with(prefix, ".err")).map_err(|e| e.to_string())?;
        let mut f = Family::start(Launch {
            argv: inv.argv.clone(),
            cwd: None,
            env: None,
            cpus: load.cpus.as_ref(),
            stdout: Stdio::from(out),
            stderr: Stdio::from(err),
        })
        .map_err(|e| format!("cannot start {}: {e}", inv.argv[0]))?;
        let limit =
            Instant::now() + inv.expected + load.warmup + load.timeout + Duration::from_secs(60);
        let mut signalled = false;
        loop {
            if let Some(code) = f.exited() {
                f.wait_gone(Duration::from_secs(5));
                return Ok(code.code().unwrap_or(128 + 9));
            }
            if (self.stopped() || Instant::now() > limit) && !signalled {
                // SIGINT lets wirebench and wrk print what they have; then the grace.
                f.signal(libc::SIGINT);
                signalled = true;
                let mut waited = 0;
                while f.exited().is_none() && waited < 100 {
                    std::thread::sleep(Duration::from_millis(50));
                    waited += 1;
                }
                if f.exited().is_none() {
                    f.stop(Duration::from_secs(1));
                }
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn point(
        &self,
        s: &Server,
        family: &Family,
        sampler: &Sampler,
        st: &mut ServerStatus,
        load: &Load,
        p: &Point,
        rep: u32,
        port: u16,
    ) -> bool {
        let tag = format!(
            "{}__{}__{}__r{rep}",
            safe(&load.name),
            safe(&s.name),
            point_tag(p)
        );
        let prefix = self.raw.join(&tag);
        let t = Target {
            exe: &self.exe,
            host: &s.host,
            port,
            prefix: &prefix,
        };
        let inv = gen::invocation(load, p, load.stop, &t);
        let started_ms = crate::clock::unix_ms();
        let cpu0 = children_cpu_s();
        let machine = super::interference::open(family.pid);
        let (t0, s0) = (Instant::now(), read_family(family.pid).0);
        let exit = self.execute(&inv, &prefix, load);
        let (t1, s1) = (Instant::now(), read_family(family.pid).0);
        let client_cpu = (children_cpu_s() - cpu0).max(0.0);
        let interference =
            super::interference::close(machine, family.pid, client_cpu, load.cpus.as_ref());
        let cost = sampler::cost((t0, s0), (t1, s1), &sampler.window(t0, t1));
        let stdout = std::fs::read_to_string(with(&prefix, ".out")).unwrap_or_default();
        let stderr = std::fs::read_to_string(with(&prefix, ".err")).unwrap_or_default();
        let result = match &exit {
            Err(e) => Err(e.clone()),
            Ok(code) => self.collect(
                load, p, &t, &inv, &stdout, &stderr, *code, started_ms, client_cpu,
            ),
        };
        // Auxiliary per-request files can be large; their figures are in the result now.
        if let Some(a) = &inv.aux {
            let _ = std::fs::remove_file(a);
        }
        let mut r = match result {
            Ok(r) => r,
            Err(msg) => failed_result(load, p, &inv, &msg, started_ms),
        };
        r.set_server_cpu(Some(cost.cpu_s));
        // The suite's own measure: the generator's counted the server as another's.
        r.set_interference(interference);
        // Held to the load's thresholds last, with the server's CPU in.
        if !load.thresholds.is_empty() {
            let blocks = load.protocol.result_blocks_schema();
            r.thresholds = threshold::evaluate(&load.thresholds, &r, blocks);
            if !threshold::all_pass(&r.thresholds) {
                st.points_over_threshold += 1;
            }
        }
        let success = r.outcome.success;
        let meta = self.meta(
            s,
            st,
            load,
            p,
            rep,
            &inv,
            exit.as_ref().ok().copied(),
            &cost,
        );
        r.extras.insert("suite".into(), meta);
        self.write_point(&tag, &r);
        self.say(&point_line(s, load, p, rep, &r, cost.cpu_percent.avg));
        success
    }

    /// Writes a point's result as `points/TAG.json` and brings the manifest up to date;
    /// a failure is said and the suite goes on.
    fn write_point(&self, tag: &str, r: &RunResult) {
        let file = self.points_dir.join(format!("{tag}.json"));
        let text = serde_json::to_string_pretty(r).unwrap_or_default();
        if let Err(e) = std::fs::write(&file, text + "\n") {
            self.say(&format!("suite: cannot write {}: {e}", file.display()));
        }
        if let Err(e) = self.manifest.borrow_mut().sync() {
            self.say(&format!("suite: {e}"));
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn collect(
        &self,
        load: &Load,
        p: &Point,
        t: &Target<'_>,
        inv: &Invocation,
        stdout: &str,
        stderr: &str,
        code: i32,
        started_ms: u64,
        client_cpu: f64,
    ) -> std::result::Result<RunResult, String> {
        let last_err = || {
            stderr
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("")
                .trim()
                .to_string()
        };
        if let Some(json) = &inv.json {
            return read_result(json, code, &last_err());
        }
        let aux = inv
            .aux
            .as_ref()
            .and_then(|a| std::fs::read_to_string(a).ok());
        let both = format!("{stdout}\n{stderr}");
        let parsed = gen::parse_external(load, p, t, &both, aux.as_deref()).map_err(|e| {
            match last_err() {
                l if l.is_empty() => e,
                l => format!("{e}; it said: {l}"),
            }
        })?;
        let mut config = config_of(load, p, &inv.argv);
        if let Some(counts) = parsed.bytes_sent_counts {
            config["bytes_sent_counts"] = json!(counts);
        }
        let cx = external::Context {
            kind: load.protocol.name(),
            target: inv.argv.last().cloned().unwrap_or_default(),
            config,
            started_unix_ms: started_ms,
            warmup_s: 0.0,
            client_cpu_s: client_cpu,
        };
        Ok(external::to_result(&parsed, cx))
    }

    #[allow(clippy::too_many_arguments)]
    fn meta(
        &self,
        s: &Server,
        st: &ServerStatus,
        load: &Load,
        p: &Point,
        rep: u32,
        inv: &Invocation,
        exit: Option<i32>,
        cost: &ServerCost,
    ) -> Value {
        json!({
            "name": self.suite.name,
            "file": self.suite.file.display().to_string(),
            "load": load.name,
            "server": s.name,
            "protocol": load.protocol.name(),
            "generator": load.generator,
            "swept": load.swept,
            "point": p,
            "repeat": rep,
            "repeats": load.repeat * self.suite.rounds,
            "round": st.round,
            "server_command": st.command,
            "server_pid": st.pids.first(),
            "server_cpus": s.cpus.as_ref().map(|c| c.to_string_list()),
            "generator_cpus": load.cpus.as_ref().map(|c| c.to_string_list()),
            "generator_argv": inv.argv,
            "generator_exit": exit,
            "server_cost": cost,
        })
    }
}

/// The RunResult wirebench wrote to `json`, or the one sentence why there is none.
fn read_result(json: &Path, code: i32, last_err: &str) -> std::result::Result<RunResult, String> {
    let text = std::fs::read_to_string(json)
        .map_err(|_| format!("wirebench exited with {code} and wrote no result: {last_err}"))?;
    serde_json::from_str(&text).map_err(|e| {
        format!(
            "wirebench's result {} cannot be read as a result: {e}",
            json.display()
        )
    })
}

fn with(prefix: &Path, ext: &str) -> PathBuf {
    let mut s = prefix.as_os_str().to_owned();
    s.push(ext);
    PathBuf::from(s)
}

/// A point's line as it ends: its rate in its unit, p99, the server's CPU, what
/// interfered most and why it fell short, if it did.
fn point_line(s: &Server, load: &Load, p: &Point, rep: u32, r: &RunResult, cpu: f64) -> String {
    let why = r
        .outcome
        .reason
        .as_deref()
        .map(|r| format!("  FELL SHORT: {r}"))
        .unwrap_or_default();
    let busy = r
        .interference()
        .and_then(|i| i.worst())
        .map(|m| format!(" ({})", m.describe()))
        .unwrap_or_default();
    format!(
        "suite: {} / {} / {} #{rep}: {} {}, p99 {} us, server CPU {cpu:.0}%{busy}{why}",
        s.name,
        load.name,
        point_tag(p),
        crate::report::format::group(r.throughput.msgs_per_s as u64),
        r.unit.per_s(),
        r.latency_us.p99.round(),
    )
}

/// The config object the schema asks for, for an external generator's point.
fn config_of(load: &Load, p: &Point, argv: &[String]) -> Value {
    let threads = gen::threads_for(p.connections, load.threads);
    let plan = match load.stop {
        // An external generator runs no stages (`suite::shape` refuses them).
        Stop::Duration(d) | Stop::Stages(d) | Stop::Search(d) => {
            json!({"type": "duration", "seconds": d.as_secs_f64()})
        }
        Stop::Count(n) => json!({"type": "count", "requests": n}),
    };
    let mut config = json!({
        "threads": threads,
        "connections": p.connections,
        "pipeline": p.pipeline,
        "plan": plan,
        "body_size": p.body_size,
        "timeout_s": load.timeout.as_secs_f64(),
        "command": argv,
        "bytes_sent_counts": "request bodies only",
    });
    // The protocol's own settings (HTTP's method), as its suite load names them.
    if let Some(o) = config.as_object_mut() {
        o.extend(load.settings.settings_json());
    }
    config
}

/// A schema-valid result for a point whose generator gave no figures at all.
fn failed_result(
    load: &Load,
    p: &Point,
    inv: &Invocation,
    msg: &str,
    started_ms: u64,
) -> RunResult {
    let run = external::ExternalRun {
        tool: load.generator,
        ..Default::default()
    };
    let cx = external::Context {
        kind: load.protocol.name(),
        target: inv.argv.get(2).cloned().unwrap_or_else(|| "unknown".into()),
        config: config_of(load, p, &inv.argv),
        started_unix_ms: started_ms,
        warmup_s: 0.0,
        client_cpu_s: 0.0,
    };
    let mut r = external::to_result(&run, cx);
    r.outcome.reason = Some(format!("the generator failed: {msg}"));
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::result::Totals;
    use crate::stats::{Latency, Measured, Unit};

    #[test]
    fn a_point_result_reads_typed_or_is_one_sentence() {
        let dir = std::env::temp_dir().join(format!("wb-read-result-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("r.json");
        let missing = read_result(&file, 2, "bad flag").unwrap_err();
        assert_eq!(
            missing,
            "wirebench exited with 2 and wrote no result: bad flag"
        );
        std::fs::write(&file, "{\"totals\": 3}").unwrap();
        let bad = read_result(&file, 0, "").unwrap_err();
        assert!(
            bad.starts_with(&format!(
                "wirebench's result {} cannot be read as a result: ",
                file.display()
            )),
            "{bad}"
        );
        assert_eq!(bad.lines().count(), 1);
        let l = Latency::new();
        let r = RunResult::builder(Measured {
            kind: "echo",
            target: "t".into(),
            config: json!({}),
            started_unix_ms: 1,
            elapsed_s: 1.0,
            totals: Totals {
                sent: 4,
                ok: 4,
                invariant_holds: Some(true),
                ..Default::default()
            },
            errors: Default::default(),
            unit: Unit::default(),
            latency: &l,
            client_cpu_s: 0.0,
        })
        .finish(None);
        std::fs::write(&file, serde_json::to_string(&r).unwrap()).unwrap();
        let back = read_result(&file, 0, "").unwrap();
        assert_eq!((back.totals.ok, back.kind.as_str()), (4, "echo"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
