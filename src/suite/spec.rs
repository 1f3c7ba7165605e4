//! The suite file as written (TOML): servers to start and loads to sweep over them.
//! Unknown keys are refused (deny_unknown_fields); values that need checking keep
//! their span so an error can name the line. Validation lives in `plan.rs`.

use serde::Deserialize;
use std::collections::BTreeMap;
use toml::Spanned;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SuiteFile {
    /// Shown in the report's title.
    pub name: Option<String>,
    /// Run every server this many times in turn (A B A B ...), so slow drift of the
    /// machine spreads over all servers instead of biasing one; default 1.
    pub rounds: Option<Spanned<u32>>,
    /// The server the report's verdict compares the others with; default the first.
    pub baseline: Option<Spanned<String>>,
    #[serde(rename = "server", default)]
    pub servers: Vec<Spanned<ServerSpec>>,
    #[serde(rename = "load", default)]
    pub loads: Vec<Spanned<LoadSpecFile>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerSpec {
    pub name: Spanned<String>,
    /// Run with /bin/sh -c; `{port}`, `{addr}`, `{host}` and `{wirebench}` are filled in.
    pub command: Spanned<String>,
    /// Run once before the server starts (a build step), in the same directory.
    pub setup: Option<Spanned<String>>,
    /// Relative paths are relative to the suite file.
    pub cwd: Option<String>,
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// A fixed port; by default a free one is picked for each start.
    pub port: Option<Spanned<u16>>,
    #[serde(default = "default_host")]
    pub host: Spanned<String>,
    /// CPU list for sched_setaffinity, e.g. "0" or "0-1" or "0,2".
    pub cpus: Option<Spanned<String>>,
    #[serde(default)]
    pub ready: ReadySpec,
    /// How long readiness may take, e.g. "10s".
    #[serde(default = "default_ready_timeout")]
    pub ready_timeout: Spanned<String>,
    /// Time between SIGTERM and SIGKILL.
    #[serde(default = "default_grace")]
    pub grace: Spanned<String>,
}

#[derive(Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct ReadySpec {
    /// An HTTP GET of this path must answer (any status); without it, a TCP connect.
    pub http: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoadSpecFile {
    pub name: Option<String>,
    /// A registered load command's name (`registry::REGISTRY`: echo, http, amqp, ...).
    pub protocol: Spanned<String>,
    /// wirebench, wrk, ab or h2load.
    #[serde(default = "default_generator")]
    pub generator: Spanned<String>,
    /// Only these servers (by name); all by default.
    pub servers: Option<Vec<String>>,
    /// Sweep axes: every combination is one point.
    #[serde(default = "one")]
    pub connections: Spanned<Vec<u64>>,
    pub body_size: Option<Spanned<Vec<String>>>,
    pub pipeline: Option<Spanned<Vec<u64>>>,
    pub rate: Option<Spanned<Vec<f64>>>,
    pub duration: Option<Spanned<String>>,
    pub count: Option<Spanned<u64>>,
    pub warmup: Option<Spanned<String>>,
    #[serde(default = "one_repeat")]
    pub repeat: Spanned<u32>,
    /// Generator threads (split the connections); default 1.
    #[serde(default = "one_thread")]
    pub threads: Spanned<u64>,
    pub cpus: Option<Spanned<String>>,
    /// A reply later than this is an error (the game-server test's 10 s rule).
    #[serde(default = "default_timeout")]
    pub timeout: Spanned<String>,
    /// HTTP only.
    pub method: Option<String>,
    #[serde(default = "default_path")]
    pub path: String,
    /// Extra arguments appended to the generator's command line.
    #[serde(default)]
    pub extra_args: Vec<String>,
}

fn default_host() -> Spanned<String> {
    Spanned::new(0..0, "127.0.0.1".into())
}
fn default_ready_timeout() -> Spanned<String> {
    Spanned::new(0..0, "30s".into())
}
fn default_grace() -> Spanned<String> {
    Spanned::new(0..0, "3s".into())
}
fn default_generator() -> Spanned<String> {
    Spanned::new(0..0, "wirebench".into())
}
fn default_timeout() -> Spanned<String> {
    Spanned::new(0..0, "10s".into())
}
fn default_path() -> String {
    "/".into()
}
fn one() -> Spanned<Vec<u64>> {
    Spanned::new(0..0, vec![1])
}
fn one_repeat() -> Spanned<u32> {
    Spanned::new(0..0, 1)
}
fn one_thread() -> Spanned<u64> {
    Spanned::new(0..0, 1)
}
