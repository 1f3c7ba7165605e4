//! The flags every load and every server shares, as clap parses them: apart from the
//! command tree (cli.rs) so that a protocol's own flags (proto/<name>/config.rs) and
//! the shared configs (config.rs) can build on them without importing the commands.

use clap::{Args, ValueEnum};
use std::path::PathBuf;

/// `--pipeline-mode`'s help, ending with the default of the command it is on (sliding,
/// but a protocol may set its own: `#[command(mut_arg("pipeline_mode", ...))]`).
pub fn pipeline_mode_help(default: &str) -> String {
    format!("How the pipeline refills: sliding (each reply's place is refilled at once) or burst (the whole window in one write, the next when all of it is answered, as redis-benchmark -P) [default: {default}]")
}

/// Load shape and stop rule, then what every client shares: shared by every load command.
// (Plain comments from here: a doc comment of several paragraphs would become the
// long about text of every load command.) `-h` lists the few flags a first run needs
// (the others are `hide_short_help`); `--help` lists every flag the command takes. A
// protocol hides a shared flag it does not take
// (`#[command(mut_arg("id", |a| a.hide(true)))]`, src/proto/<p>/config.rs), and a
// hidden flag given on the command line is refused (`cli::refuse_hidden`). The batch
// plan's flags are hidden here: a protocol that takes the plan shows them.
#[derive(Args, Debug, Clone)]
pub struct LoadArgs {
    /// Worker threads [default: the CPUs; half with the built-in server].
    ///
    /// The CPUs are those of this process's affinity mask. Never more threads than
    /// connections: with -c below -t, one thread per connection (the plan's connections
    /// line says so).
    #[arg(short = 't', long, value_name = "N")]
    pub threads: Option<usize>,
    /// Connections in total, spread over the threads.
    ///
    /// As wrk, oha and redis-benchmark count them: each thread gets -c / -t, the first
    /// -c mod -t threads one more.
    #[arg(short = 'c', long, value_name = "N", default_value_t = 10)]
    pub connections: usize,
    /// Requests in flight per connection.
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub pipeline: usize,
    // Help from `pipeline_mode_help`: a protocol whose default differs says its own.
    #[arg(long, value_enum, value_name = "MODE", help = pipeline_mode_help("sliding"), hide_short_help = true)]
    pub pipeline_mode: Option<PipelineMode>,
    /// Send for this long (10s, 500ms, 2m) [default: 10s].
    #[arg(short = 'd', long, value_name = "TIME")]
    pub duration: Option<String>,
    /// Stop after this many requests in total.
    #[arg(short = 'n', long, value_name = "N")]
    pub requests: Option<u64>,
    /// Batch plan: iterations per reconnect round (each sends `pipeline` per connection and waits).
    #[arg(
        long,
        value_name = "N",
        hide = true,
        hide_short_help = true,
        help_heading = "Batch plan (evh_perf's)"
    )]
    pub iterations: Option<u64>,
    /// Batch plan: reconnect rounds.
    #[arg(
        long,
        value_name = "N",
        hide = true,
        hide_short_help = true,
        help_heading = "Batch plan (evh_perf's)"
    )]
    pub reconnects: Option<u64>,
    /// Batch plan: milliseconds to sleep between reconnect rounds.
    #[arg(
        long,
        value_name = "MS",
        hide = true,
        hide_short_help = true,
        help_heading = "Batch plan (evh_perf's)"
    )]
    pub sleep: Option<u64>,
    /// Open loop: requests per second in total, on a fixed schedule.
    #[arg(short = 'R', long, value_name = "PER_S")]
    pub rate: Option<f64>,
    /// Open loop by stages: DURATION:TARGET,... (30s:1000,60s:1000,10s:0), the rate
    /// linear within each stage from the previous target (0 first) to its own, in
    /// requests per second as -R; or connections by stages, each target with c
    /// (10s:50c,30s:50c,5s:0c), each running closed loop; the run lasts the stages' sum
    /// (docs/stages.md).
    #[arg(long, value_name = "LIST", conflicts_with_all = ["rate", "duration", "requests"], hide_short_help = true)]
    pub stages: Option<String>,
    /// Run this long before measuring; excluded from the results.
    #[arg(long, default_value = "0s", hide_short_help = true)]
    pub warmup: String,
    /// Leave Nagle's algorithm on (TCP_NODELAY is set by default).
    #[arg(long, hide_short_help = true)]
    pub no_nodelay: bool,
    /// With nothing to do, a worker naps before it waits for replies, so the server does not wake it once per reply: auto naps 1% of the recent reply latency (15-100 us; none under 1.5 ms), off reads every reply as it lands (docs/coalesce.md).
    #[arg(
        long,
        value_enum,
        value_name = "WHEN",
        default_value = "auto",
        hide_short_help = true
    )]
    pub coalesce: CoalesceMode,
    /// Length of one interval of the result's series: one row (count, errors, p50-max) and one histogram each, every worker's merged [default: 1s].
    #[arg(
        long,
        value_name = "DURATION",
        default_value = "1s",
        hide_short_help = true
    )]
    pub interval: String,
    /// Write every interval's histogram to FILE as it ends: an HdrHistogram interval log (HistogramLogAnalyzer, HdrHistogram's log readers).
    #[arg(long, value_name = "FILE", hide_short_help = true)]
    pub hlog: Option<PathBuf>,
    /// Draw the live terminal view (rate, ok, errors by kind, latency percentiles and a histogram, redrawn every interval) [default: when stdout is a terminal]; progress lines when stdout is not one.
    #[arg(long, conflicts_with = "no_tui", hide_short_help = true)]
    pub tui: bool,
    /// Print progress lines instead of the live terminal view.
    #[arg(long, hide_short_help = true)]
    pub no_tui: bool,
    /// Most bytes the run's connections may keep together (unfinished replies, requests and answers not written yet), each thread an equal share; a connection that would take its thread past its share is dropped as too_large and counted in totals.over_budget (e.g. 512m, 4g) [default: 1g].
    #[arg(long, value_name = "SIZE")]
    pub memory_budget: Option<String>,
    /// Connect to HOST:PORT instead of the target's address; the Host header, :authority, TLS server name and certificate name stay the target's (curl's and oha's --connect-to; their FROM_HOST:FROM_PORT:HOST:PORT form too).
    #[arg(long, value_name = "HOST:PORT", hide_short_help = true)]
    pub connect_to: Option<String>,
    #[command(flatten)]
    pub verdict: VerdictArgs,
    #[command(flatten)]
    pub client: ClientArgs,
    #[command(flatten)]
    pub metrics: MetricsArgs,
}

/// What every client command shares, `connect` too.
// How its connections start and time out, where they come from, TLS, what it prints
// and writes, and its place among several generators; validated once, by
// `config::ClientConfig::from_args`. A command may reword a flag's help or change its
// default for itself (`#[command(mut_arg("progress", ...))]`).
#[derive(Args, Debug, Clone)]
pub struct ClientArgs {
    #[command(flatten)]
    pub ramp: RampArgs,
    /// A reply later than this is an error and its connection is reopened.
    #[arg(long, default_value = "10s", hide_short_help = true)]
    pub timeout: String,
    /// Progress interval.
    #[arg(long, default_value = "3s", hide_short_help = true)]
    pub progress: String,
    /// Print a latency histogram, with buckets this many microseconds wide [default: 10].
    #[arg(long, value_name = "BUCKET_US", num_args = 0..=1, default_missing_value = "10", hide_short_help = true)]
    pub histogram: Option<u64>,
    /// Write the result as JSON to FILE (-: stdout).
    ///
    /// With `-`, the JSON goes to stdout and everything else (the plan, the summary) to
    /// stderr, so `--json - | jq` reads the result alone.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Print only the summary.
    #[arg(short = 'q', long, hide_short_help = true)]
    pub quiet: bool,
    /// Source addresses to connect from, connection n from the (n mod count)-th: an address, a range (127.0.0.2-127.0.0.254) or a comma list; `kernel` lets the kernel pick [default: 127.0.0.2-127.0.0.255 for 1,024 connections or more to an IPv4 loopback target, else the kernel's].
    #[arg(long, value_name = "ADDRS", hide_short_help = true)]
    pub source: Option<String>,
    /// Connect with TLS.
    #[arg(long, help_heading = "TLS", hide_short_help = true)]
    pub tls: bool,
    /// TLS: accept any server certificate (self-signed servers).
    #[arg(long, help_heading = "TLS", hide_short_help = true)]
    pub insecure: bool,
    /// TLS: trust only the CA certificates in this PEM file.
    #[arg(
        long,
        value_name = "FILE",
        help_heading = "TLS",
        hide_short_help = true
    )]
    pub ca: Option<PathBuf>,
    /// TLS: this client's certificate (chain), PEM, for servers that ask for one (mutual TLS); with --key.
    #[arg(
        long,
        value_name = "FILE",
        help_heading = "TLS",
        hide_short_help = true
    )]
    pub cert: Option<PathBuf>,
    /// TLS: the private key of --cert, PEM.
    #[arg(
        long,
        value_name = "FILE",
        help_heading = "TLS",
        hide_short_help = true
    )]
    pub key: Option<PathBuf>,
    #[command(flatten)]
    pub shard: ShardArgs,
}

/// `--coalesce`: whether a load worker naps when it has nothing to do
/// (engine::coalesce).
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum CoalesceMode {
    /// Naps of 1% of the recent reply latency.
    Auto,
    /// No nap: every reply is read as it lands.
    Off,
}

/// `--pipeline-mode`: when a closed-loop connection sends again (engine::Refill).
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum PipelineMode {
    /// Keep --pipeline requests in flight: refill each place a reply frees.
    Sliding,
    /// Send --pipeline requests in one write; send again when every reply is in.
    Burst,
}

/// One generator of several: which shard this is and when they all start. Every client
/// command has them (`ClientArgs`), so a new protocol gets them with `LoadArgs`.
/// Validated by `shard::Coordination`; docs/shards.md.
#[derive(Args, Debug, Clone, Default)]
pub struct ShardArgs {
    /// Run shard I of N (0-based) of one run: -c, -n and -R are the whole run's, shared out by index [default: from SLURM_PROCID/SLURM_NTASKS or OMPI_COMM_WORLD_RANK/OMPI_COMM_WORLD_SIZE].
    #[arg(
        long,
        value_name = "I/N",
        help_heading = "Shards (docs/shards.md)",
        hide_short_help = true
    )]
    pub shard: Option<String>,
    /// Kubernetes Indexed Job: N shards, this one's index from JOB_COMPLETION_INDEX.
    #[arg(
        long,
        value_name = "N",
        help_heading = "Shards (docs/shards.md)",
        hide_short_help = true
    )]
    pub shards: Option<u32>,
    /// The run every shard belongs to, for `wirebench merge` [default: WIREBENCH_RUN_ID, else SLURM_JOB_ID.SLURM_STEP_ID].
    #[arg(
        long,
        value_name = "ID",
        help_heading = "Shards (docs/shards.md)",
        hide_short_help = true
    )]
    pub run_id: Option<String>,
    /// Open no connection before TIME (RFC 3339, or Unix ms as `date +%s%3N` prints), so every shard's measured phase starts together.
    #[arg(
        long,
        value_name = "TIME",
        help_heading = "Shards (docs/shards.md)",
        hide_short_help = true
    )]
    pub start_at: Option<String>,
}

/// `--ramp T` and `--ramp-measured`: shared by every client command (`ClientArgs`),
/// validated by `config::ramp`.
#[derive(Args, Debug, Clone, Default)]
pub struct RampArgs {
    /// Spread connection starts linearly over this long (e.g. 2s); with -R the rate also
    /// rises from 0 to R over it. Excluded from the results unless --ramp-measured.
    #[arg(long, value_name = "T", hide_short_help = true)]
    pub ramp: Option<String>,
    /// Count the ramp in the results.
    #[arg(long, requires = "ramp", hide_short_help = true)]
    pub ramp_measured: bool,
}

/// Listener, threads, limits, TLS, stats: shared by every built-in server.
#[derive(Args, Debug, Clone)]
pub struct ServerArgs {
    /// Address to listen on; a range listens on each (127.0.0.1-127.0.0.20:9000); unix:/PATH a unix socket.
    #[arg(long, default_value = "127.0.0.1:8081")]
    pub listen: String,
    /// Worker processes sharing the SO_REUSEPORT listeners (each holds ~20,000 sockets at most here).
    #[arg(long, default_value_t = 1)]
    pub processes: usize,
    /// Server threads, each with its own SO_REUSEPORT listener [default: CPUs in the affinity mask].
    #[arg(long)]
    pub threads: Option<usize>,
    /// Close new connections beyond this many per thread (0: no limit).
    #[arg(long, default_value_t = 0, hide_short_help = true)]
    pub max_conns_per_thread: usize,
    /// Read buffer per thread, bytes (e.g. 64k).
    #[arg(long, default_value = "64k", hide_short_help = true)]
    pub read_buffer: String,
    /// Serve TLS (with --cert/--key, or a self-signed certificate made at start).
    #[arg(long)]
    pub tls: bool,
    /// TLS certificate chain, PEM.
    #[arg(long, value_name = "FILE", hide_short_help = true)]
    pub cert: Option<PathBuf>,
    /// TLS private key, PEM.
    #[arg(long, value_name = "FILE", hide_short_help = true)]
    pub key: Option<PathBuf>,
    /// With --tls: require every client to show a certificate signed by a CA in FILE, PEM (mutual TLS).
    #[arg(long, value_name = "FILE", hide_short_help = true)]
    pub client_ca: Option<PathBuf>,
    /// Print counters every INTERVAL and at exit [default interval: 5s].
    #[arg(long, value_name = "INTERVAL", num_args = 0..=1, default_missing_value = "5s")]
    pub stats: Option<String>,
    /// With --stats: write each interval's counters to FILE as a JSON line, and one more at stop (they add up to the final counters).
    #[arg(long, value_name = "FILE", hide_short_help = true)]
    pub stats_json: Option<PathBuf>,
    /// Print every connection's accept and close on stderr.
    #[arg(long, hide_short_help = true)]
    pub debug: bool,
    /// Leave Nagle's algorithm on.
    #[arg(long, hide_short_help = true)]
    pub no_nodelay: bool,
    /// Close a connection with no byte in or out for this long (0: never).
    #[arg(
        long,
        value_name = "DURATION",
        default_value = "60s",
        hide_short_help = true
    )]
    pub idle_timeout: String,
    /// Serve the server's counters as live Prometheus/OpenMetrics metrics at http://ADDR/metrics (e.g. 127.0.0.1:9465); loopback only unless --metrics-allow-remote.
    #[arg(long, value_name = "ADDR", hide_short_help = true)]
    pub metrics_listen: Option<String>,
    /// Let --metrics-listen take an address other than loopback (anyone who reaches it can read the metrics).
    #[arg(long, hide_short_help = true)]
    pub metrics_allow_remote: bool,
}

impl ServerArgs {
    /// The metrics flags as a load's (a server takes no --metrics-linger: it serves
    /// until it is stopped, so every scrape while its clients run sees its counts).
    pub fn metrics_args(&self) -> MetricsArgs {
        MetricsArgs {
            metrics_listen: self.metrics_listen.clone(),
            metrics_linger: "0s".into(),
            metrics_allow_remote: self.metrics_allow_remote,
        }
    }
}

/// The live metrics endpoint of a load or a server (validated by
/// `metrics::MetricsConfig`; docs/metrics.md).
#[derive(Args, Debug, Clone, Default)]
pub struct MetricsArgs {
    /// Serve live Prometheus/OpenMetrics metrics at http://ADDR/metrics while the run goes (e.g. 127.0.0.1:9464); loopback only unless --metrics-allow-remote.
    #[arg(long, value_name = "ADDR", hide_short_help = true)]
    pub metrics_listen: Option<String>,
    /// Keep /metrics up this long after the run, so the last scrape sees the final counts.
    #[arg(
        long,
        value_name = "TIME",
        default_value = "0s",
        hide_short_help = true
    )]
    pub metrics_linger: String,
    /// Let --metrics-listen take an address other than loopback (anyone who reaches it can read the metrics).
    #[arg(long, hide_short_help = true)]
    pub metrics_allow_remote: bool,
}

/// A server of known latency (`serve echo`, `serve http`).
#[derive(Args, Debug, Default)]
pub struct PacingArgs {
    /// Hold every reply back by DIST: 2ms, uniform:1ms..5ms or exp:2ms (mean); other connections keep being served.
    #[arg(long, value_name = "DIST")]
    pub delay: Option<String>,
    /// Answer nothing for D at the start of every EVERY from server start, e.g. 1s/10s; then answer what queued up.
    #[arg(long, value_name = "D/EVERY")]
    pub stall: Option<String>,
}

/// What a load is held to (`--threshold`) or searches for (`--search`): docs/thresholds.md
/// and docs/search.md. Validated by `commands::verdict` against what the protocol measures.
#[derive(Args, Debug, Clone, Default)]
pub struct VerdictArgs {
    /// Hold the run to FIGURE<LIMIT (or <=, >, >=); repeat for more: p99<200ms, errors<0.5%, rate>=0.95, throughput>=50000/s (docs/thresholds.md). One failed: exit 3.
    #[arg(
        long,
        value_name = "EXPR",
        help_heading = "Verdicts (docs/thresholds.md)",
        hide_short_help = true
    )]
    pub threshold: Vec<String>,
    /// Find the highest rate up to -R that meets every condition (thresholds, comma-separated: 'p99<5ms,errors<0.1%'), by open-loop steps (docs/search.md).
    #[arg(
        long,
        value_name = "CONDITIONS",
        help_heading = "Verdicts (docs/thresholds.md)",
        hide_short_help = true
    )]
    pub search: Option<String>,
    /// --search: how long each step is measured, after its warm-up (--warmup, else a fifth of this) [default: 10s].
    #[arg(
        long,
        value_name = "TIME",
        help_heading = "Verdicts (docs/thresholds.md)",
        hide_short_help = true
    )]
    pub step_duration: Option<String>,
}
