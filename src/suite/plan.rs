//! The validated suite: every key checked before anything starts, and every
//! problem reported as `FILE:LINE: sentence naming the key`, exit 2.

use super::cpuset::CpuSet;
pub use super::cx::line_of;
use super::cx::Ctx;
use super::load::load_of;
pub use super::load::{Load, Point, Stop, MAX_POINTS_PER_LOAD, WIREBENCH};
use super::spec::{LoadTables, ServerSpec, SuiteFile};
use crate::error::{Error, Result};
use crate::proto::entry::ReadyProbe;
use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::Duration;
use toml::Spanned;

#[derive(Debug)]
pub struct Suite {
    pub name: String,
    pub file: PathBuf,
    /// The file's text, stored with every result so a report shows what was run.
    pub text: String,
    pub servers: Vec<Server>,
    pub loads: Vec<Load>,
    /// Each round starts every server again and runs every point `repeat` times.
    pub rounds: u32,
}

#[derive(Clone, Debug)]
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

/// When a server counts as ready.
#[derive(Clone, Debug, PartialEq)]
pub enum Ready {
    /// A TCP connect succeeds.
    Tcp,
    /// A protocol's own check answers (`ready = { NAME = ... }`).
    Probe {
        protocol: &'static str,
        probe: ReadyProbe,
    },
}

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
                        Stop::Duration(d) | Stop::Stages(d) => d,
                        Stop::Search(step) => super::shape::search_time(step),
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
    let toml_err = |e: toml::de::Error| {
        let msg = e.message().trim_end_matches('\n').replace('\n', " ");
        cx.err(e.span().unwrap_or(0..0), msg)
    };
    let raw: SuiteFile = toml::from_str(text).map_err(toml_err)?;
    // The same text again, each load as its keys: its protocol's block is among them.
    let tables: LoadTables = toml::from_str(text).map_err(toml_err)?;
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
    let names: Vec<&str> = servers.iter().map(|s| s.name.as_str()).collect();
    let mut loads = Vec::new();
    for (i, (l, keys)) in raw.loads.iter().zip(&tables.loads).enumerate() {
        loads.push(load_of(&cx, &names, i, l.get_ref(), l.span(), keys)?);
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
    let ready = match &s.ready {
        Some(r) => ready_of(cx, &name, r)?,
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

/// A server's `ready = { NAME = VALUE }`: the check of the registered command NAME.
fn ready_of(cx: &Ctx, name: &str, r: &Spanned<toml::Table>) -> Result<Ready> {
    let mut checks = r.get_ref().iter();
    let (Some((protocol, value)), None) = (checks.next(), checks.next()) else {
        return Err(cx.err(
            r.span(),
            format!("server '{name}' key `ready`: name one protocol and its check, as ready = {{ PROTOCOL = ... }}"),
        ));
    };
    let key = format!("server '{name}' key `ready.{protocol}`");
    let Some(entry) = crate::registry::find(protocol) else {
        return Err(cx.err(
            r.span(),
            format!(
                "{key}: '{protocol}' is not one of {}",
                crate::registry::names().join(", ")
            ),
        ));
    };
    let probe = entry
        .ready_probe(value)
        .map_err(|e| cx.err(r.span(), format!("{key}: {e}")))?;
    Ok(Ready::Probe {
        protocol: entry.name(),
        probe,
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
        let point = crate::proto::entry::SuitePoint {
            addr: "127.0.0.1:1",
            threads: 1,
            connections: 1,
            size: 1024,
            pipeline: 1,
            rate: None,
            run_for: crate::proto::entry::RunFor::Count(1),
            stages: None,
            search: None,
            timeout: Duration::from_secs(1),
        };
        let argv = l.settings.args(&point).join(" ");
        assert!(
            argv.contains(" -m POST "),
            "a body means POST unless told: {argv}"
        );
        assert_eq!((l.repeat, l.threads, s.rounds), (1, 1, 1));
        assert_eq!(s.servers[0].ready, Ready::Tcp);
        assert_eq!(l.generator, WIREBENCH);
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
            let tools = crate::registry::REGISTRY
                .iter()
                .flat_map(|e| e.suite_generators());
            for g in tools {
                let with = format!("{text}generator = \"{g}\"\n");
                let r = parse(Path::new("t.toml"), &with);
                assert_eq!(
                    r.is_ok(),
                    e.suite_generators().contains(g),
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
