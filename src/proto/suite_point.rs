//! One point of a suite load as a command line needs it (`SuitePoint`): what a load
//! command's argv (`proto::entry::SuiteLoad`) and an external generator's
//! (`proto::generator::Generator`) are made from.

use std::time::Duration;

/// How long one suite point runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RunFor {
    Duration(Duration),
    /// This many requests (for `connect`: the connections are the count).
    Count(u64),
}

/// One point of a suite load, aimed at a started server: what a command line needs.
#[derive(Clone, Copy, Debug)]
pub struct SuitePoint<'a> {
    /// HOST:PORT (`[v6]:PORT`).
    pub addr: &'a str,
    /// Threads that share the connections evenly (`suite::gen::threads_for`).
    pub threads: u64,
    /// All connections of the point (`-c`: connections in total).
    pub connections: u64,
    /// The point's `body_size`: the payload size, in the protocol's sense.
    pub size: u64,
    pub pipeline: u64,
    pub rate: Option<f64>,
    pub run_for: RunFor,
    /// The load's shape by stages (`--stages`'s text): the point runs them in place of
    /// `run_for`'s duration and `rate`.
    pub stages: Option<&'a str>,
    /// A capacity search's conditions (`--search`'s text): the point searches up to
    /// `rate`, each step lasting `run_for`'s duration.
    pub search: Option<&'a str>,
    pub timeout: Duration,
}

impl SuitePoint<'_> {
    /// The argv of a load that sends payloads of the point's size over its
    /// connections (echo, redis, ws): `NAME TARGET -t -c --pipeline --size`, then the
    /// shared flags.
    pub fn sized_load_args(&self, name: &str, target: String) -> Vec<String> {
        let mut a: Vec<String> = vec![
            name.into(),
            target,
            "-t".into(),
            self.threads.to_string(),
            "-c".into(),
            self.connections.to_string(),
            "--pipeline".into(),
            self.pipeline.to_string(),
            "--size".into(),
            self.size.to_string(),
        ];
        a.extend(self.shared_args());
        a
    }

    /// The shared load flags (`flags::LoadArgs`) that end every argv of a command on
    /// the load engine: the plan (`-d` or `-n`, `--stages`, or `--search` with its
    /// step), the rate and the reply timeout.
    pub fn shared_args(&self) -> Vec<String> {
        let ms = |d: Duration| format!("{}ms", d.as_millis());
        let mut a = match (self.stages, self.search, self.run_for) {
            (Some(s), _, _) => vec!["--stages".into(), s.into()],
            (None, Some(c), RunFor::Duration(d)) => {
                vec!["--search".into(), c.into(), "--step-duration".into(), ms(d)]
            }
            (None, _, RunFor::Duration(d)) => vec!["-d".into(), ms(d)],
            (None, _, RunFor::Count(n)) => vec!["-n".into(), n.to_string()],
        };
        if let Some(r) = self.rate {
            a.extend(["-R".into(), r.to_string()]);
        }
        a.extend([
            "--timeout".into(),
            format!("{}ms", self.timeout.as_millis()),
        ]);
        a
    }
}
