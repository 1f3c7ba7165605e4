//! `wirebench connect`'s flags, as clap parses them: its own, then those every client
//! command shares (`flags::ClientArgs`: ramp, timeout, output, sources, TLS, shards),
//! some reworded here for what they mean to connect. Validated by `plan.rs`.

use crate::flags::ClientArgs;
use clap::Args;

// A hold's figure is the time to all established, which the ramp is part of, so a
// hold always counts its ramp; a churn leaves it out unless --ramp-measured, as the
// loads do. The help says which, rather than the loads' one sentence.
#[derive(Args, Debug)]
#[command(about = "Mass connections: open, hold (and ping) or churn connections, with their cost")]
#[command(mut_arg("ramp", |a| a.help(
    "Spread connection starts (with --churn: the cycling slots' first connects) linearly \
     over this long (e.g. 2s). A hold counts the ramp (time to all established and the \
     connect rate run from the first attempt); a churn leaves it out of its figures unless \
     --ramp-measured (its cycles are counted apart, as connect.ramp)"
)))]
#[command(mut_arg("ramp_measured", |a| a.help(
    "With --churn: count the ramp's cycles in the figures (connections/s, latencies). A hold \
     always counts its ramp and takes the flag; config.ramp.measured says how it ran"
)))]
#[command(mut_arg("timeout", |a| a.help(
    "A connect, TLS handshake or echo reply slower than this is a failure"
)))]
#[command(mut_arg("progress", |a| a.default_value("1s")))]
#[command(mut_arg("histogram", |a| a.default_missing_value("100").help(
    "Print the ping/echo latency histogram, with buckets this many microseconds wide [default: 100]"
)))]
#[command(mut_arg("source", |a| a.help(
    "Source addresses to connect from, connection n from the (n mod count)-th: an address, a \
     range (127.0.0.2-127.0.0.254) or a comma list, each with its own ephemeral ports; `kernel` \
     lets the kernel pick [default: 127.0.0.2-127.0.0.255 for a loopback target, else the kernel's]"
)))]
pub struct ConnectArgs {
    /// HOST:PORT or RANGE:PORT of the server (127.0.0.1-127.0.0.20:9000); none starts the built-in echo server.
    pub target: Option<String>,
    /// Connections in total (with --churn: open-echo-close cycles) [default: 1000].
    #[arg(short = 'n', long = "connections")]
    pub connections: Option<u64>,
    /// With --churn: cycle for this long instead of -n.
    #[arg(short = 'd', long)]
    pub duration: Option<String>,
    /// With --churn: cycles started per second by stages instead of -d and --connect-rate, DURATION:TARGET,... (10s:500,20s:500,5s:0), linear within each stage from the previous target (0 first) to its own; the run lasts their sum (docs/stages.md).
    #[arg(long, value_name = "LIST", hide_short_help = true)]
    pub stages: Option<String>,
    /// New connections per second over all processes (0: as fast as possible).
    #[arg(long, default_value_t = 0.0)]
    pub connect_rate: f64,
    /// Connection attempts in flight at once, over all processes [default: somaxconn, at most -n, for a loopback target; 1024 with --churn or another target].
    #[arg(long)]
    pub concurrency: Option<usize>,
    /// Keep the connections open this long once all are up [default: 0s; 10s with --ping].
    #[arg(long)]
    pub hold: Option<String>,
    /// While holding, every connection sends one echo frame per INTERVAL (spread evenly).
    #[arg(long, value_name = "INTERVAL")]
    pub ping: Option<String>,
    /// Open, one echo round trip, close, repeat: connections per second.
    #[arg(long)]
    pub churn: bool,
    /// Client worker processes [default: enough for the descriptor limit].
    #[arg(long)]
    pub processes: Option<usize>,
    /// Built-in server only: its worker processes [default: enough for -n].
    #[arg(long)]
    pub server_processes: Option<usize>,
    /// A separately started server's process ids (comma-separated), to report its memory per connection.
    #[arg(long, value_name = "PIDS")]
    pub server_pid: Option<String>,
    /// Length of one interval of the result's series: one row (connects established and failed, connect latency p50-max) and one histogram each, every process's merged [default: 1s].
    #[arg(
        long,
        value_name = "DURATION",
        default_value = "1s",
        hide_short_help = true
    )]
    pub interval: String,
    /// Write every interval's connect-latency histogram to FILE as it ends: an HdrHistogram interval log (HistogramLogAnalyzer, HdrHistogram's log readers).
    #[arg(long, value_name = "FILE", hide_short_help = true)]
    pub hlog: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub client: ClientArgs,
}
