//! The validated suite: every key checked before anything starts, and every
//! problem reported as `FILE:LINE: sentence naming the key`, exit 2.

use super::cpuset::CpuSet;
use super::spec::{LoadSpecFile, ServerSpec, SuiteFile};
use crate::error::{Error, Result};
use crate::proto::entry::Entry;
use crate::units::{parse_bytes, parse_duration};
use serde::Serialize;
use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::Duration;
use toml::Spanned;

#[derive(Clone, Debug, Serialize)]
pub struct Suite {
    pub name: String,
    pub file: PathBuf,
    /// The file's text, stored with every result so a report shows what was run.
    #[serde(skip)]
    pub text: String,
    pub servers: Vec<Server>,
    pub loads: Vec<Load>,
    /// Each round starts every server again and runs every point `repeat` times.
    pub rounds: u32,
}

#[derive(Clone, Debug, Serialize)]
pub struct Server {
    pub name: String,
    pub command: String,
    pub setup: Option<String>,
    pub cwd: PathBuf,
    pub env: BTreeMap<String, String>,
    pub port: Option<u16>,
    pub host: String,
    pub cpus: Option<CpuSet>,
    pub ready: Ready,
    pub ready_timeout: Duration,
    pub grace: Duration,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub enum Ready {
    Tcp,
    Http(String),
}

#[derive(Clone, Copy, Debug, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Generator {
    Wirebench,
    Wrk,
    Ab,
    H2load,
}

impl Generator {
    pub fn name(self) -> &'static str {
        match self {
            Generator::Wirebench => "wirebench",
            Generator::Wrk => "wrk",
            Generator::Ab => "ab",
            Generator::H2load => "h2load",
        }
    }
}

#[derive(Clone, Copy, Debug, Serialize, PartialEq)]
#[serde(rename_all = "lowercase")]
pub enum Stop {
    Duration(#[serde(serialize_with = "secs")] Duration),
    Count(u64),
}

fn entry_name<S: serde::Serializer>(
    e: &&'static dyn Entry,
    s: S,
) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_str(e.name())
}

fn secs<S: serde::Serializer>(d: &Duration, s: S) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

/// One combination of the sweep axes.
#[derive(Clone, Copy, Debug, Serialize, PartialEq)]
pub struct Point {
    pub connections: u64,
    pub body_size: u64,
    pub pipeline: u64,
    pub rate: Option<f64>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Load {
    pub name: String,
    /// The registered load command that runs it (`registry::REGISTRY`), which also
    /// says how a point becomes its argv; serialized as its name.
    #[serde(serialize_with = "entry_name")]
    pub protocol: &'static dyn Entry,
    pub generator: Generator,
    pub servers: Option<Vec<String>>,
    /// The axes with more than one value, in the order connections, body_size, pipeline, rate.
    pub swept: Vec<String>,
    pub points: Vec<Point>,
    pub stop: Stop,
    #[serde(serialize_with = "secs")]
    pub warmup: Duration,
    pub repeat: u32,
    pub threads: u64,
    pub cpus: Option<CpuSet>,
    #[serde(serialize_with = "secs")]
    pub timeout: Duration,
    pub method: String,
    pub path: String,
    pub extra_args: Vec<String>,
}

impl Load {
    pub fn applies_to(&self, server: &str) -> bool {
        self.servers
            .as_ref()
            .map_or(true, |s| s.iter().any(|n| n == server))
    }
}

/// Most points one load's sweep may expand to, whatever `--yes` says: they are built in
/// memory before anything runs, and a million runs is weeks of benchmarking.
pub const MAX_POINTS_PER_LOAD: u64 = 1_000_000;
/// Beyond this many runs, or this long by the estimate, a suite runs only with `--yes`.
pub const MAX_RUNS_UNASKED: u64 = 10_000;
pub const MAX_ESTIMATE_UNASKED: Duration = Duration::from_secs(6 * 3600);
/// A server's start (ready probe) and stop, per server and round, for the estimate.
const SERVER_START_STOP: Duration = Duration::from_secs(2);
/// What a run adds to its plan's time (the generator's start, its connections, its
/// drain, its result read back), for the estimate.
const RUN_OVERHEAD: Duration = Duration::from_millis(300);

impl Suite {
    /// Runs of the whole suite: every point of every load on every server it applies
    /// to, `repeat` times, every round.
    pub fn runs(&self) -> u64 {
        let per_round: u64 = self
            .servers
            .iter()
            .map(|s| {
                self.loads
                    .iter()
                    .filter(|l| l.applies_to(&s.name))
                    .map(|l| l.points.len() as u64 * u64::from(l.repeat))
                    .sum::<u64>()
            })
            .sum();
        per_round.saturating_mul(u64::from(self.rounds))
    }

    /// The suite's time: each server's start and stop, each load's warm-up (once per
    /// server and round), and every run's duration with what a run adds to it; a count
    /// plan's runs count that overhead only (`has_count_plans`: then a lower bound).
    pub fn estimate(&self) -> Duration {
        let mut per_round = Duration::ZERO;
        for s in &self.servers {
            per_round += SERVER_START_STOP;
            for l in self.loads.iter().filter(|l| l.applies_to(&s.name)) {
                if !l.warmup.is_zero() {
                    per_round = per_round.saturating_add(l.warmup + RUN_OVERHEAD);
                }
                let one = RUN_OVERHEAD
                    + match l.stop {
                        Stop::Duration(d) => d,
                        Stop::Count(_) => Duration::ZERO,
                    };
                let n = (l.points.len() as u64).saturating_mul(u64::from(l.repeat));
                per_round =
                    per_round.saturating_add(one.saturating_mul(n.min(u32::MAX as u64) as u32));
            }
        }
        per_round.saturating_mul(self.rounds)
    }

    /// Some load runs for a count: its time is not known before it runs.
    pub fn has_count_plans(&self) -> bool {
        self.loads.iter().any(|l| matches!(l.stop, Stop::Count(_)))
    }

    /// Refuses a suite too large to be meant (too many runs, or too long by the
    /// estimate) unless the user said `--yes`, printing what it would take.
    pub fn check_size(&self, yes: bool) -> Result<()> {
        let (runs, est) = (self.runs(), self.estimate());
        if yes || (runs <= MAX_RUNS_UNASKED && est <= MAX_ESTIMATE_UNASKED) {
            return Ok(());
        }
        Err(Error::usage(format!(
            "{}: {runs} runs taking at least {} is more than {MAX_RUNS_UNASKED} runs or {} hours; check the sweeps, or pass --yes to run it anyway",
            self.file.display(),
            crate::report::format::span(est),
            MAX_ESTIMATE_UNASKED.as_secs() / 3600
        )))
    }
}

/// 1-based line of a byte offset.
pub fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

struct Ctx<'a> {
    file: &'a Path,
    text: &'a str,
}

impl Ctx<'_> {
    fn err(&self, span: Range<usize>, msg: impl std::fmt::Display) -> Error {
        Error::usage(format!(
            "{}:{}: {msg}",
            self.file.display(),
            line_of(self.text, span.start)
        ))
    }

    fn duration(&self, what: &str, v: &Spanned<String>) -> Result<Duration> {
        parse_duration(v.get_ref()).map_err(|e| self.err(v.span(), format!("key `{what}`: {e}")))
    }

    fn cpus(&self, what: &str, v: &Option<Spanned<String>>) -> Result<Option<CpuSet>> {
        match v {
            None => Ok(None),
            Some(s) => CpuSet::parse_usable(s.get_ref())
                .map(Some)
                .map_err(|e| self.err(s.span(), format!("{what} key `cpus`: {e}"))),
        }
    }
}

/// Reads and validates a suite file.
pub fn load(file: &Path) -> Result<Suite> {
    let text = std::fs::read_to_string(file).map_err(|e| {
        Error::usage(format!(
            "cannot read the suite file {}: {e}",
            file.display()
        ))
    })?;
    parse(file, &text)
}

/// Validates suite text; `file` names it in errors and anchors relative paths.
pub fn parse(file: &Path, text: &str) -> Result<Suite> {
    let cx = Ctx { file, text };
    let raw: SuiteFile = toml::from_str(text).map_err(|e| {
        let msg = e.message().trim_end_matches('\n').replace('\n', " ");
        cx.err(e.span().unwrap_or(0..0), msg)
    })?;
    let dir = file
        .parent()
        .map(|p| {
            if p.as_os_str().is_empty() {
                Path::new(".")
            } else {
                p
            }
        })
        .unwrap_or(Path::new("."));
    if raw.servers.is_empty() {
        return Err(cx.err(0..0, "the suite has no [[server]] table"));
    }
    if raw.loads.is_empty() {
        return Err(cx.err(0..0, "the suite has no [[load]] table"));
    }
    let mut servers: Vec<Server> = Vec::new();
    for s in &raw.servers {
        let srv = server(&cx, dir, s.get_ref(), s.span())?;
        if servers.iter().any(|o| o.name == srv.name) {
            return Err(cx.err(
                s.get_ref().name.span(),
                format!("key `name`: two servers are named '{}'", srv.name),
            ));
        }
        servers.push(srv);
    }
    if let Some(b) = raw.baseline.as_ref() {
        if !servers.iter().any(|s| s.name == *b.get_ref()) {
            return Err(cx.err(
                b.span(),
                format!("key `baseline`: no server is named '{}'", b.get_ref()),
            ));
        }
    }
    let rounds = match &raw.rounds {
        None => 1,
        Some(r) if (1..=100).contains(r.get_ref()) => *r.get_ref(),
        Some(r) => return Err(cx.err(r.span(), "key `rounds`: use 1 to 100")),
    };
    let mut loads = Vec::new();
    for (i, l) in raw.loads.iter().enumerate() {
        loads.push(load_of(&cx, &servers, i, l.get_ref(), l.span())?);
    }
    Ok(Suite {
        name: raw.name.unwrap_or_else(|| {
            file.file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "suite".into())
        }),
        file: file.to_path_buf(),
        text: text.to_string(),
        servers,
        loads,
        rounds,
    })
}

fn server(cx: &Ctx, dir: &Path, s: &ServerSpec, span: Range<usize>) -> Result<Server> {
    let name = s.name.get_ref().trim().to_string();
    let name_ok = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
    if !name_ok {
        return Err(cx.err(
            s.name.span(),
            "server key `name`: use letters, digits, '-', '_' or '.' (it names result files)",
        ));
    }
    if s.command.get_ref().trim().is_empty() {
        return Err(cx.err(
            s.command.span(),
            format!("server '{name}' key `command` is empty"),
        ));
    }
    let cwd = match &s.cwd {
        Some(c) => dir.join(c),
        None => dir.to_path_buf(),
    };
    if !cwd.is_dir() {
        return Err(cx.err(
            span,
            format!(
                "server '{name}' key `cwd`: {} is not a directory",
                cwd.display()
            ),
        ));
    }
    if let Some(p) = &s.port {
        if *p.get_ref() == 0 {
            return Err(cx.err(
                p.span(),
                format!(
                    "server '{name}' key `port`: 0 is not a port (leave it out to pick a free one)"
                ),
            ));
        }
    }
    let host = s.host.get_ref().clone();
    if host.parse::<std::net::IpAddr>().is_err() {
        return Err(cx.err(
            s.host.span(),
            format!("server '{name}' key `host`: '{host}' is not an IP address"),
        ));
    }
    let ready = match &s.ready.http {
        Some(p) if !p.starts_with('/') => {
            return Err(cx.err(
                span,
                format!("server '{name}' key `ready.http`: the path must start with '/'"),
            ))
        }
        Some(p) => Ready::Http(p.clone()),
        None => Ready::Tcp,
    };
    Ok(Server {
        command: s.command.get_ref().clone(),
        setup: s.setup.as_ref().map(|x| x.get_ref().clone()),
        cwd,
        env: s.env.clone(),
        port: s.port.as_ref().map(|p| *p.get_ref()),
        host,
        cpus: cx.cpus(&format!("server '{name}'"), &s.cpus)?,
        ready,
        ready_timeout: cx.duration("ready_timeout", &s.ready_timeout)?,
        grace: cx.duration("grace", &s.grace)?,
        name,
    })
}

fn load_of(
    cx: &Ctx,
    servers: &[Server],
    index: usize,
    l: &LoadSpecFile,
    span: Range<usize>,
) -> Result<Load> {
    let name = l
        .name
        .clone()
        .unwrap_or_else(|| format!("load{}", index + 1));
    let who = format!("load '{name}'");
    let Some(protocol) = crate::registry::find(l.protocol.get_ref()) else {
        return Err(cx.err(
            l.protocol.span(),
            format!(
                "{who} key `protocol`: '{}' is not one of {}",
                l.protocol.get_ref(),
                crate::registry::names().join(", ")
            ),
        ));
    };
    let generator = match l.generator.get_ref().as_str() {
        "wirebench" => Generator::Wirebench,
        "wrk" => Generator::Wrk,
        "ab" => Generator::Ab,
        "h2load" => Generator::H2load,
        other => {
            return Err(cx.err(
                l.generator.span(),
                format!(
                    "{who} key `generator`: '{other}' is not one of wirebench, wrk, ab, h2load"
                ),
            ))
        }
    };
    if generator != Generator::Wirebench && !protocol.suite_generators().contains(&generator.name())
    {
        let drives: Vec<String> = crate::registry::REGISTRY
            .iter()
            .filter(|e| e.suite_generators().contains(&generator.name()))
            .map(|e| format!("\"{}\"", e.name()))
            .collect();
        return Err(cx.err(
            l.generator.span(),
            format!(
                "{who} key `generator`: {} drives only protocol{} {}",
                generator.name(),
                if drives.len() == 1 { "" } else { "s" },
                drives.join(", ")
            ),
        ));
    }
    if let Some(names) = &l.servers {
        for n in names {
            if !servers.iter().any(|s| &s.name == n) {
                return Err(cx.err(
                    span,
                    format!("{who} key `servers`: no server is named '{n}'"),
                ));
            }
        }
    }
    let nonempty = |key: &str, sp: Range<usize>, len: usize| -> Result<()> {
        if len == 0 {
            Err(cx.err(sp, format!("{who} key `{key}`: give at least one value")))
        } else {
            Ok(())
        }
    };
    let conns = l.connections.get_ref().clone();
    nonempty("connections", l.connections.span(), conns.len())?;
    if conns.contains(&0) {
        return Err(cx.err(
            l.connections.span(),
            format!("{who} key `connections`: 0 connections"),
        ));
    }
    let bodies: Vec<u64> = match &l.body_size {
        None => vec![protocol.suite_default_size()],
        Some(v) => {
            nonempty("body_size", v.span(), v.get_ref().len())?;
            let mut out = Vec::new();
            for b in v.get_ref() {
                out.push(
                    parse_bytes(b)
                        .map_err(|e| cx.err(v.span(), format!("{who} key `body_size`: {e}")))?,
                );
            }
            out
        }
    };
    let pipes: Vec<u64> = match &l.pipeline {
        None => vec![1],
        Some(v) => {
            nonempty("pipeline", v.span(), v.get_ref().len())?;
            if v.get_ref().contains(&0) {
                return Err(cx.err(
                    v.span(),
                    format!("{who} key `pipeline`: 0 requests in flight"),
                ));
            }
            v.get_ref().clone()
        }
    };
    let rates: Vec<Option<f64>> = match &l.rate {
        None => vec![None],
        Some(v) => {
            nonempty("rate", v.span(), v.get_ref().len())?;
            if v.get_ref().iter().any(|r| !r.is_finite() || *r <= 0.0) {
                return Err(cx.err(v.span(), format!("{who} key `rate`: rates must be above 0")));
            }
            v.get_ref().iter().map(|r| Some(*r)).collect()
        }
    };
    // What each external generator cannot do, refused here rather than mid-suite.
    let refuse = |sp: Range<usize>, key: &str, why: &str| -> Error {
        cx.err(sp, format!("{who} key `{key}`: {} {why}", generator.name()))
    };
    if generator != Generator::Wirebench {
        if let Some(r) = &l.rate {
            return Err(refuse(
                r.span(),
                "rate",
                "has no constant-rate mode (use generator = \"wirebench\")",
            ));
        }
        if generator != Generator::H2load && pipes.iter().any(|p| *p > 1) {
            let sp = l
                .pipeline
                .as_ref()
                .map(|p| p.span())
                .unwrap_or(span.clone());
            return Err(refuse(
                sp,
                "pipeline",
                "does not pipeline requests (h2load and wirebench do)",
            ));
        }
    }
    let stop = match (&l.duration, &l.count) {
        (Some(d), None) => Stop::Duration(cx.duration("duration", d)?),
        (None, Some(n)) if *n.get_ref() == 0 => {
            return Err(cx.err(n.span(), format!("{who} key `count`: 0 requests")))
        }
        (None, Some(n)) if generator == Generator::Wrk => {
            return Err(refuse(n.span(), "count", "runs only for a duration"))
        }
        (None, Some(n)) => Stop::Count(*n.get_ref()),
        (None, None) => Stop::Duration(Duration::from_secs(5)),
        (Some(_), Some(n)) => {
            return Err(cx.err(
                n.span(),
                format!("{who}: give `duration` or `count`, not both"),
            ))
        }
    };
    if let Stop::Duration(d) = stop {
        if d.is_zero() {
            return Err(cx.err(span, format!("{who} key `duration`: 0 s")));
        }
    }
    let warmup = match &l.warmup {
        Some(w) => cx.duration("warmup", w)?,
        None => Duration::from_secs(1),
    };
    let repeat = *l.repeat.get_ref();
    if repeat == 0 || repeat > 100 {
        return Err(cx.err(l.repeat.span(), format!("{who} key `repeat`: use 1 to 100")));
    }
    let threads = *l.threads.get_ref();
    if threads == 0 || threads > 1024 {
        return Err(cx.err(
            l.threads.span(),
            format!("{who} key `threads`: use 1 to 1024"),
        ));
    }
    let method = l.method.clone().unwrap_or_else(|| {
        if bodies.iter().any(|b| *b > 0) {
            "POST"
        } else {
            "GET"
        }
        .into()
    });
    if !method.chars().all(|c| c.is_ascii_uppercase()) || method.is_empty() {
        return Err(cx.err(
            span,
            format!("{who} key `method`: '{method}' is not an HTTP method"),
        ));
    }
    if !l.path.starts_with('/') {
        return Err(cx.err(
            span,
            format!("{who} key `path`: the path must start with '/'"),
        ));
    }
    let sweep = [conns.len(), bodies.len(), pipes.len(), rates.len()];
    let n_points = sweep
        .iter()
        .fold(1u64, |acc, n| acc.saturating_mul(*n as u64));
    if n_points > MAX_POINTS_PER_LOAD {
        return Err(cx.err(
            span,
            format!(
                "{who}: the sweep has {n_points} points ({} connections x {} body sizes x {} pipelines x {} rates), more than the {MAX_POINTS_PER_LOAD} a load may have",
                sweep[0], sweep[1], sweep[2], sweep[3]
            ),
        ));
    }
    let mut points = Vec::with_capacity(n_points as usize);
    for &connections in &conns {
        for &body_size in &bodies {
            for &pipeline in &pipes {
                for &rate in &rates {
                    points.push(Point {
                        connections,
                        body_size,
                        pipeline,
                        rate,
                    });
                }
            }
        }
    }
    let mut swept = Vec::new();
    for (axis, n) in [
        ("connections", conns.len()),
        ("body_size", bodies.len()),
        ("pipeline", pipes.len()),
        ("rate", rates.len()),
    ] {
        if n > 1 {
            swept.push(axis.to_string());
        }
    }
    Ok(Load {
        name,
        protocol,
        generator,
        servers: l.servers.clone(),
        swept,
        points,
        stop,
        warmup,
        repeat,
        threads,
        cpus: cx.cpus(&who, &l.cpus)?,
        timeout: cx.duration("timeout", &l.timeout)?,
        method,
        path: l.path.clone(),
        extra_args: l.extra_args.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sweeps_expand_to_every_combination() {
        let text = r#"
[[server]]
name = "a"
command = "x {port}"
[[load]]
protocol = "http"
connections = [1, 50]
body_size = ["1k", "64k"]
count = 1000
"#;
        let s = parse(Path::new("t.toml"), text).unwrap();
        let l = &s.loads[0];
        assert_eq!(l.points.len(), 4);
        assert_eq!(l.swept, ["connections", "body_size"]);
        assert_eq!(
            l.points[1],
            Point {
                connections: 1,
                body_size: 65536,
                pipeline: 1,
                rate: None
            }
        );
        assert_eq!(l.stop, Stop::Count(1000));
        assert_eq!(l.method, "POST", "a body means POST unless told");
        assert_eq!((l.repeat, l.threads, s.rounds), (1, 1, 1));
        assert_eq!(s.servers[0].ready, Ready::Tcp);
        assert_eq!(l.generator, Generator::Wirebench);
    }

    #[test]
    fn runs_and_estimate_count_every_point_server_repeat_and_round() {
        let text = r#"
rounds = 2
[[server]]
name = "a"
command = "x {port}"
[[server]]
name = "b"
command = "y {port}"
[[load]]
protocol = "echo"
connections = [1, 2, 3]
duration = "10s"
warmup = "2s"
repeat = 2
"#;
        let s = parse(Path::new("t.toml"), text).unwrap();
        // 3 points x 2 repeats x 2 servers x 2 rounds.
        assert_eq!(s.runs(), 24);
        // Each run 10 s and 0.3 s of its own, each warm-up 2 s and 0.3 s once per
        // server and round, plus 2 s per server per round.
        assert_eq!(
            s.estimate(),
            Duration::from_millis(24 * 10_300 + 2 * 2 * (2_300 + 2_000))
        );
        assert!(!s.has_count_plans());
        assert!(s.check_size(false).is_ok());
    }

    #[test]
    fn an_absurd_sweep_needs_yes_and_a_huge_one_is_refused() {
        let axis = |n: u32| (1..=n).map(|i| i.to_string()).collect::<Vec<_>>().join(",");
        let text = |n: u32| {
            format!(
                "[[server]]\nname = \"a\"\ncommand = \"x {{port}}\"\n[[load]]\nprotocol = \"echo\"\nconnections = [{}]\npipeline = [{}]\nduration = \"1s\"\n",
                axis(n),
                axis(n)
            )
        };
        // 200 x 200 = 40,000 runs: refused with the estimate unless --yes.
        let s = parse(Path::new("t.toml"), &text(200)).unwrap();
        assert_eq!(s.runs(), 40_000);
        let e = s.check_size(false).unwrap_err().to_string();
        assert!(e.contains("40000 runs taking at least 14 h 26 min"), "{e}");
        assert!(e.contains("--yes"), "{e}");
        assert!(s.check_size(true).is_ok());
        // 1,100 x 1,100 points is past what any --yes allows.
        let e = parse(Path::new("t.toml"), &text(1100))
            .unwrap_err()
            .to_string();
        assert!(e.contains("the sweep has 1210000 points"), "{e}");
    }

    #[test]
    fn duration_and_count_together_are_refused() {
        let text = "[[server]]\nname = \"a\"\ncommand = \"x\"\n[[load]]\nprotocol = \"echo\"\nduration = \"1s\"\ncount = 5\n";
        let e = parse(Path::new("t.toml"), text).unwrap_err().to_string();
        assert!(e.starts_with("t.toml:7: ") && e.contains("not both"), "{e}");
    }

    #[test]
    fn every_registered_command_is_a_suite_protocol_on_its_own_terms() {
        for e in crate::registry::REGISTRY {
            let text = format!(
                "[[server]]\nname = \"a\"\ncommand = \"x\"\n[[load]]\nprotocol = \"{}\"\n",
                e.name()
            );
            let s = parse(Path::new("t.toml"), &text).unwrap();
            assert_eq!(s.loads[0].protocol.name(), e.name());
            assert_eq!(s.loads[0].points[0].body_size, e.suite_default_size());
            // An external generator drives what the protocol says it drives, no more.
            for g in ["wrk", "ab", "h2load"] {
                let with = format!("{text}generator = \"{g}\"\n");
                let r = parse(Path::new("t.toml"), &with);
                assert_eq!(
                    r.is_ok(),
                    e.suite_generators().contains(&g),
                    "{} via {g}: {:?}",
                    e.name(),
                    r.err()
                );
            }
        }
        let text = "[[server]]\nname = \"a\"\ncommand = \"x\"\n[[load]]\nprotocol = \"nope\"\n";
        let e = parse(Path::new("t.toml"), text).unwrap_err().to_string();
        // The list is the registry's, in its order.
        let want = format!(
            "key `protocol`: 'nope' is not one of {}",
            crate::registry::names().join(", ")
        );
        assert!(e.ends_with(&want), "{e}");
        let text = "[[server]]\nname = \"a\"\ncommand = \"x\"\n[[load]]\nprotocol = \"echo\"\ngenerator = \"wrk\"\n";
        let e = parse(Path::new("t.toml"), text).unwrap_err().to_string();
        assert!(e.ends_with("wrk drives only protocol \"http\""), "{e}");
    }
}
