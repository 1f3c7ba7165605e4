//! Load generators: the command line of each (wirebench itself, wrk, ab, h2load) for
//! one point, and the collection of what it wrote into the shared result shape.

pub mod ab;
pub mod external;
pub mod h2load;
pub mod wrk;

use super::plan::{Generator, Load, Point, Stop};
use crate::proto::entry::{RunFor, SuitePoint};
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
    /// ab's -g file or h2load's --log-file.
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

fn whole_secs(d: Duration) -> u64 {
    d.as_secs_f64().ceil().max(1.0) as u64
}

fn with_ext(prefix: &Path, ext: &str) -> PathBuf {
    let mut s = prefix.as_os_str().to_owned();
    s.push(ext);
    PathBuf::from(s)
}

/// The command for one point; `stop` is the point's plan (or the warm-up's).
pub fn invocation(load: &Load, p: &Point, stop: Stop, t: &Target<'_>) -> Invocation {
    let addr = if t.host.contains(':') {
        format!("[{}]:{}", t.host, t.port)
    } else {
        format!("{}:{}", t.host, t.port)
    };
    // What an external generator is aimed at (a URL), in the protocol's terms.
    let url = load.protocol.suite_target(&addr, &load.path);
    let threads = threads_for(p.connections, load.threads);
    let expected = match stop {
        Stop::Duration(d) => d,
        // A count has no natural length; the time limit is generous.
        Stop::Count(_) => Duration::from_secs(600),
    };
    let mut inv = Invocation {
        argv: Vec::new(),
        inputs: Vec::new(),
        json: None,
        aux: None,
        expected,
    };
    let s = |x: &dyn ToString| x.to_string();
    let body_file = with_ext(t.prefix, ".body");
    match load.generator {
        Generator::Wirebench => {
            let json = with_ext(t.prefix, ".json");
            let point = SuitePoint {
                addr: &addr,
                path: &load.path,
                method: &load.method,
                threads,
                connections: p.connections,
                size: p.body_size,
                pipeline: p.pipeline,
                rate: p.rate,
                run_for: match stop {
                    Stop::Duration(d) => RunFor::Duration(d),
                    Stop::Count(n) => RunFor::Count(n),
                },
                timeout: load.timeout,
            };
            let mut a: Vec<String> = vec![t.exe.display().to_string()];
            a.extend(load.protocol.suite_args(&point));
            a.extend([s(&"--json"), json.display().to_string(), s(&"-q")]);
            inv.json = Some(json);
            inv.argv = a;
        }
        Generator::Wrk => {
            let lua = with_ext(t.prefix, ".lua");
            inv.inputs.push((
                lua.clone(),
                wrk::script(&load.method, p.body_size).into_bytes(),
            ));
            let secs = match stop {
                Stop::Duration(d) => whole_secs(d),
                Stop::Count(_) => 1,
            };
            inv.argv = vec![
                "wrk".into(),
                "-t".into(),
                s(&threads),
                "-c".into(),
                s(&p.connections),
                "-d".into(),
                format!("{secs}s"),
                "--timeout".into(),
                format!("{}s", whole_secs(load.timeout)),
                "--latency".into(),
                "-s".into(),
                lua.display().to_string(),
                url,
            ];
        }
        Generator::Ab => {
            let g = with_ext(t.prefix, ".tsv");
            let mut a: Vec<String> = vec![
                "ab".into(),
                "-k".into(),
                "-q".into(),
                "-c".into(),
                s(&p.connections),
            ];
            match stop {
                // -t implies -n 50000; a later -n lifts that cap. ab allocates 32 bytes
                // per request up front, so the cap is what 500k requests/s would need.
                Stop::Duration(d) => {
                    let cap = (whole_secs(d) * 500_000).max(50_000);
                    a.extend(["-t".into(), s(&whole_secs(d)), "-n".into(), s(&cap)])
                }
                Stop::Count(n) => a.extend(["-n".into(), s(&n)]),
            }
            a.extend([
                "-s".into(),
                s(&whole_secs(load.timeout)),
                "-g".into(),
                g.display().to_string(),
            ]);
            if p.body_size > 0 {
                inv.inputs
                    .push((body_file.clone(), vec![b'x'; p.body_size as usize]));
                let flag = if load.method == "PUT" { "-u" } else { "-p" };
                a.extend([
                    flag.into(),
                    body_file.display().to_string(),
                    "-T".into(),
                    "text/plain".into(),
                ]);
            }
            a.push(url);
            inv.aux = Some(g);
            inv.argv = a;
        }
        Generator::H2load => {
            let log = with_ext(t.prefix, ".log");
            let mut a: Vec<String> = vec![
                "h2load".into(),
                "--h1".into(),
                "-c".into(),
                s(&p.connections),
                "-t".into(),
                s(&threads),
                "-m".into(),
                s(&p.pipeline),
            ];
            match stop {
                Stop::Duration(d) => a.extend(["-D".into(), s(&whole_secs(d))]),
                Stop::Count(n) => a.extend(["-n".into(), s(&n)]),
            }
            if p.body_size > 0 {
                inv.inputs
                    .push((body_file.clone(), vec![b'x'; p.body_size as usize]));
                a.extend([
                    "-d".into(),
                    body_file.display().to_string(),
                    "-H".into(),
                    "Content-Type: text/plain".into(),
                ]);
            }
            a.extend(["--log-file".into(), log.display().to_string(), url]);
            inv.aux = Some(log);
            inv.argv = a;
        }
    }
    inv.argv.extend(load.extra_args.iter().cloned());
    inv
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
