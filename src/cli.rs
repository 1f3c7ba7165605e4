//! Command-line flags, close to what the user typed. Validation lives in `config`.

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

#[derive(Parser, Debug)]
#[command(
    name = "wirebench",
    version,
    about = "Measure network servers: messages/s, latency (HDR), errors, CPU cost",
    propagate_version = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Load a TCP echo server (no target: start the built-in one in this process).
    Echo(EchoArgs),
    /// Event-loop microbenchmark (the libev/libevent/evpp method) over several backends.
    Ioevent(IoeventArgs),
    // --- suites and reports (issue 7) ---
    /// Run a suite file: start each server pinned, sweep the loads over it, write one JSON per point.
    Suite(SuiteArgs),
    /// Draw a results directory as one self-contained HTML file (and PNG charts, Markdown).
    Report(ReportArgs),
    /// Compare two results directories; exit 1 on a regression past --threshold.
    Compare(CompareArgs),
    // --- end of suites and reports ---
    /// Run a built-in server.
    Serve {
        #[command(subcommand)]
        server: ServeCommand,
    },
}

#[derive(Subcommand, Debug)]
pub enum ServeCommand {
    /// Byte echo server: whatever arrives goes back unchanged.
    Echo(ServeEchoArgs),
}

/// Load shape, stop rule, timing and output: shared by every load command.
#[derive(Args, Debug, Clone)]
pub struct LoadArgs {
    /// Worker threads [default: CPUs in this process's affinity mask; half of them with the built-in server].
    #[arg(short = 't', long)]
    pub threads: Option<usize>,
    /// Connections per thread.
    #[arg(short = 'c', long, default_value_t = 10)]
    pub connections: usize,
    /// Requests in flight per connection.
    #[arg(long, default_value_t = 1)]
    pub pipeline: usize,
    /// Stop sending after this long (e.g. 10s, 500ms, 2m) [default: 10s].
    #[arg(short = 'd', long)]
    pub duration: Option<String>,
    /// Stop after this many requests in total.
    #[arg(short = 'n', long)]
    pub requests: Option<u64>,
    /// Batch plan: iterations per reconnect round (each sends `pipeline` per connection and waits).
    #[arg(long)]
    pub iterations: Option<u64>,
    /// Batch plan: reconnect rounds.
    #[arg(long)]
    pub reconnects: Option<u64>,
    /// Batch plan: milliseconds to sleep between reconnect rounds.
    #[arg(long)]
    pub sleep: Option<u64>,
    /// Open loop: requests per second in total, on a fixed schedule.
    #[arg(short = 'R', long)]
    pub rate: Option<f64>,
    /// Run this long before measuring; excluded from the results.
    #[arg(long, default_value = "0s")]
    pub warmup: String,
    /// A reply later than this is an error and its connection is reopened.
    #[arg(long, default_value = "10s")]
    pub timeout: String,
    /// Progress interval.
    #[arg(long, default_value = "3s")]
    pub progress: String,
    /// Print a latency histogram, with buckets this many microseconds wide [default: 10].
    #[arg(long, value_name = "BUCKET_US", num_args = 0..=1, default_missing_value = "10")]
    pub histogram: Option<u64>,
    /// Write the full result as JSON to this file.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Print only the summary.
    #[arg(short = 'q', long)]
    pub quiet: bool,
    /// Leave Nagle's algorithm on (TCP_NODELAY is set by default).
    #[arg(long)]
    pub no_nodelay: bool,
    /// Connect with TLS.
    #[arg(long)]
    pub tls: bool,
    /// TLS: accept any server certificate (self-signed servers).
    #[arg(long)]
    pub insecure: bool,
    /// TLS: trust only the CA certificates in this PEM file.
    #[arg(long, value_name = "FILE")]
    pub ca: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct EchoArgs {
    /// HOST:PORT of the echo server; none starts the built-in server.
    pub target: Option<String>,
    #[command(flatten)]
    pub load: LoadArgs,
    /// Payload bytes per message, MIN or MIN..MAX (uniform random per message); a frame adds a 28-byte header.
    #[arg(long, default_value = "64")]
    pub size: String,
    /// Built-in server only: its threads [default: the CPUs the load threads leave].
    #[arg(long)]
    pub server_threads: Option<usize>,
}

/// Listener, threads, limits, TLS, stats: shared by every built-in server.
#[derive(Args, Debug, Clone)]
pub struct ServerArgs {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8081")]
    pub listen: String,
    /// Server threads, each with its own SO_REUSEPORT listener [default: CPUs in the affinity mask].
    #[arg(long)]
    pub threads: Option<usize>,
    /// Close new connections beyond this many per thread (0: no limit).
    #[arg(long, default_value_t = 0)]
    pub max_conns_per_thread: usize,
    /// Read buffer per thread, bytes (e.g. 64k).
    #[arg(long, default_value = "64k")]
    pub read_buffer: String,
    /// Serve TLS (with --cert/--key, or a self-signed certificate made at start).
    #[arg(long)]
    pub tls: bool,
    /// TLS certificate chain, PEM.
    #[arg(long, value_name = "FILE")]
    pub cert: Option<PathBuf>,
    /// TLS private key, PEM.
    #[arg(long, value_name = "FILE")]
    pub key: Option<PathBuf>,
    /// Print counters every INTERVAL and at exit [default interval: 5s].
    #[arg(long, value_name = "INTERVAL", num_args = 0..=1, default_missing_value = "5s")]
    pub stats: Option<String>,
    /// Print every connection's accept and close on stderr.
    #[arg(long)]
    pub debug: bool,
    /// Leave Nagle's algorithm on.
    #[arg(long)]
    pub no_nodelay: bool,
}

#[derive(Args, Debug)]
pub struct ServeEchoArgs {
    #[command(flatten)]
    pub server: ServerArgs,
}

#[derive(Args, Debug)]
pub struct IoeventArgs {
    /// Socketpairs; a comma-separated list sweeps (e.g. 100,1000,5000,9900).
    #[arg(short = 'n', long = "pairs", default_value = "100")]
    pub pairs: String,
    /// Active pairs: each gets one byte to start a chain of writes.
    #[arg(short = 'a', long, default_value_t = 1)]
    pub active: usize,
    /// Writes per iteration: each read forwards one byte to the next pair while writes remain.
    #[arg(short = 'w', long, default_value_t = 100)]
    pub writes: u64,
    /// Iterations per backend and N; the first is shown but left out of the summary.
    #[arg(long, default_value_t = 25)]
    pub iterations: usize,
    /// epoll, poll, uring, tokio, or all (interleaved in this process).
    #[arg(long, default_value = "all")]
    pub backend: String,
    /// Write the full result as JSON to this file.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Draw time versus N per backend to FILE.svg or FILE.png.
    #[arg(long, value_name = "FILE")]
    pub chart: Option<PathBuf>,
    /// Print only the summary.
    #[arg(short = 'q', long)]
    pub quiet: bool,
}

// --- suites and reports (issue 7) ---
#[derive(Args, Debug)]
pub struct SuiteArgs {
    /// The suite file (TOML).
    pub file: PathBuf,
    /// Results directory: one JSON per point, raw generator output, servers.json.
    #[arg(long, default_value = "results")]
    pub out: PathBuf,
    /// Record each server with perf (cpu-clock) and write a flame graph SVG per server.
    #[arg(long)]
    pub profile: bool,
    /// Check the suite file and print the plan without starting anything.
    #[arg(long)]
    pub check: bool,
    /// Print only the final summary.
    #[arg(short = 'q', long)]
    pub quiet: bool,
}

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// A results directory written by `wirebench suite`.
    pub dir: PathBuf,
    /// The HTML file to write.
    #[arg(short = 'o', long, default_value = "report.html")]
    pub output: PathBuf,
    /// Also write every chart as a PNG into this directory.
    #[arg(long, value_name = "DIR", num_args = 0..=1, default_missing_value = "charts")]
    pub png: Option<PathBuf>,
    /// Also write the summary tables as Markdown to this file.
    #[arg(long, value_name = "FILE", num_args = 0..=1, default_missing_value = "report.md")]
    pub markdown: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct CompareArgs {
    /// The baseline results directory.
    pub a: PathBuf,
    /// The results directory to judge against it.
    pub b: PathBuf,
    /// A throughput drop or p99 rise beyond this percent (and beyond the noise) is a regression.
    #[arg(long, default_value_t = 5.0)]
    pub threshold: f64,
}
// --- end of suites and reports ---
