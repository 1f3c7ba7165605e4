//! A point's generator run: wirebench itself (its protocol's argv for the point, the
//! result read back from `--json FILE`), or an external generator its protocol declares
//! (`proto::generator::Generator`: its command line, and its output read back into the
//! shared result, `external.rs`).

pub mod external;

use super::load::{Load, Point, Stop};
use crate::proto::entry::{RunFor, SuitePoint};
use crate::proto::generator::{with_ext, ExternalRun};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Threads that split `connections` evenly: at most `wanted`, and a divisor of it.
pub fn threads_for(connections: u64, wanted: u64) -> u64 {
    let mut t = wanted.clamp(1, connections.max(1));
    while connections % t != 0 {
        t -= 1;
    }
    t
}

/// One generator run: its argv, files to write first, and where it leaves its figures.
pub struct Invocation {
    pub argv: Vec<String>,
    pub inputs: Vec<(PathBuf, Vec<u8>)>,
    /// wirebench's --json file.
    pub json: Option<PathBuf>,
    /// An external generator's per-request file (read back, then removed).
    pub aux: Option<PathBuf>,
    /// How long the run should take, for the runner's time limit.
    pub expected: Duration,
}

/// What one generator run needs to know.
pub struct Target<'a> {
    pub exe: &'a Path,
    pub host: &'a str,
    pub port: u16,
    /// Files of this run go to `{prefix}.json`, `{prefix}.lua`, ...
    pub prefix: &'a Path,
}

impl Target<'_> {
    /// HOST:PORT, an IPv6 host in brackets.
    fn addr(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }
}

/// Point `p` of `load` as its protocol sees it, aimed at `addr`, for the plan `stop`
/// (the point's, or the warm-up's).
fn suite_point<'a>(load: &'a Load, p: &Point, stop: Stop, addr: &'a str) -> SuitePoint<'a> {
    let threads = threads_for(p.connections, load.threads);
    SuitePoint {
        addr,
        threads,
        connections: p.connections,
        size: p.body_size,
        pipeline: p.pipeline,
        rate: p.rate,
        run_for: match stop {
            Stop::Duration(d) | Stop::Stages(d) | Stop::Search(d) => RunFor::Duration(d),
            Stop::Count(n) => RunFor::Count(n),
        },
        // Only the point's own run: its warm-up is a flat `Stop::Duration`.
        stages: match stop {
            Stop::Stages(_) => load.stages.as_ref().map(|s| s.text.as_str()),
            _ => None,
        },
        search: match stop {
            Stop::Search(_) => load.search.as_deref(),
            _ => None,
        },
        timeout: load.timeout,
    }
}

/// The command for one point; `stop` is the point's plan (or the warm-up's).
pub fn invocation(load: &Load, p: &Point, stop: Stop, t: &Target<'_>) -> Invocation {
    let addr = t.addr();
    let point = suite_point(load, p, stop, &addr);
    let expected = match stop {
        Stop::Duration(d) | Stop::Stages(d) => d,
        Stop::Search(step) => super::shape::search_time(step),
        // A count has no natural length; the time limit is generous.
        Stop::Count(_) => Duration::from_secs(600),
    };
    let mut inv = match load.external() {
        None => {
            let json = with_ext(t.prefix, ".json");
            let mut argv: Vec<String> = vec![t.exe.display().to_string()];
            argv.extend(load.settings.args(&point));
            argv.extend(["--json".into(), json.display().to_string(), "-q".into()]);
            Invocation {
                argv,
                inputs: Vec::new(),
                json: Some(json),
                aux: None,
                expected,
            }
        }
        Some(g) => {
            let c = g.command(&point, t.prefix);
            Invocation {
                argv: c.argv,
                inputs: c.inputs,
                json: None,
                aux: c.aux,
                expected,
            }
        }
    };
    inv.argv.extend(load.extra_args.iter().cloned());
    inv
}

/// An external generator's output (`output`, stdout and stderr together, and its
/// per-request file `aux`) read back by the parser its protocol declared.
pub fn parse_external(
    load: &Load,
    p: &Point,
    t: &Target<'_>,
    output: &str,
    aux: Option<&str>,
) -> Result<ExternalRun, String> {
    let addr = t.addr();
    let point = suite_point(load, p, load.stop, &addr);
    let g = load
        .external()
        .ok_or("the load's generator is wirebench, not an external one")?;
    g.parse(output, aux, &point)
}

#[cfg(test)]
mod argv_tests;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threads_divide_connections() {
        assert_eq!(threads_for(1, 2), 1);
        assert_eq!(threads_for(250, 2), 2);
        assert_eq!(threads_for(7, 2), 1);
        assert_eq!(threads_for(100, 3), 2);
    }
}
