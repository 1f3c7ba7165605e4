//! Command-line flags, close to what the user typed. Validation lives in `config`.

use crate::flags::{LoadArgs, ServerArgs};
use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand};
use std::path::PathBuf;

/// Parses the process's arguments. A value that looks like a negative number (`-1`,
/// `-1s`, `-.5`) after a flag is attached to it (`-c=-1`), so it reaches validation
/// and is refused as a number ("must be ...") rather than as an unknown flag with a
/// misleading tip.
pub fn parse() -> Result<Cli, clap::Error> {
    parse_from(std::env::args())
}

/// `parse` over given arguments (the first is the program name): how `k8s render` checks
/// a load command and `k8s run` runs one.
pub fn parse_from(args: impl Iterator<Item = String>) -> Result<Cli, clap::Error> {
    Cli::from_arg_matches(&matches_from(args)?)
}

/// What clap matched in the given arguments, before they become a `Cli`. A flag the
/// command hides (a shared flag its protocol does not take) is refused here.
pub fn matches_from(args: impl Iterator<Item = String>) -> Result<clap::ArgMatches, clap::Error> {
    let cmd = command();
    let m = cmd
        .clone()
        .try_get_matches_from(attach_negative_values(args))?;
    refuse_hidden(&cmd, &m)?;
    Ok(m)
}

/// The command tree as wirebench shows and parses it: clap's, with the end of every
/// command's help (`help_tail`).
pub fn command() -> clap::Command {
    crate::cli_help::decorate(Cli::command(), "wirebench")
}

/// Refuses a hidden flag given on the command line: a load command hides the shared
/// flags its protocol does not take (`#[command(mut_arg(.., |a| a.hide(true)))]`), and
/// the batch plan's flags stay hidden unless the protocol shows them. A hidden flag's
/// `long_help`, when the protocol gives one, says what to use instead.
fn refuse_hidden(cmd: &clap::Command, m: &clap::ArgMatches) -> Result<(), clap::Error> {
    let (mut cmd, mut m, mut path) = (cmd, m, Vec::new());
    while let Some((name, sub)) = m.subcommand() {
        let Some(c) = cmd.find_subcommand(name) else {
            break;
        };
        path.push(name);
        (cmd, m) = (c, sub);
        let given = c.get_arguments().find(|a| {
            a.is_hide_set()
                && a.get_long().is_some()
                && sub.value_source(a.get_id().as_str())
                    == Some(clap::parser::ValueSource::CommandLine)
        });
        if let Some(a) = given {
            let flag = format!("--{}", a.get_long().unwrap_or_default());
            let name = path.join(" ");
            let why = match a.get_long_help() {
                Some(h) => format!("; {h}"),
                None => format!(
                    " ({} {name} --help lists the flags it takes)",
                    crate::cli_help::program()
                ),
            };
            return Err(clap::Error::raw(
                clap::error::ErrorKind::ArgumentConflict,
                format!("{flag} does not apply to {name}{why}\n"),
            ));
        }
    }
    Ok(())
}

fn attach_negative_values(args: impl Iterator<Item = String>) -> Vec<String> {
    let negative = |s: &str| {
        s.strip_prefix('-')
            .is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit() || c == '.'))
    };
    let mut out: Vec<String> = Vec::new();
    let mut rest = false;
    for a in args {
        let attach = !rest
            && negative(&a)
            && out.last().is_some_and(|f| {
                f.starts_with('-') && !f.contains('=') && !negative(f) && f != "--"
            });
        if attach {
            if let Some(f) = out.last_mut() {
                f.push('=');
                f.push_str(&a);
            }
            continue;
        }
        rest |= a == "--";
        out.push(a);
    }
    out
}

/// A clap error as the one sentence wirebench prints for bad input (clap's own text
/// spans several lines: usage, tips, "For more information").
pub fn error_line(e: &clap::Error) -> String {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    use std::error::Error as _;
    let ctx = |k| match e.get(k) {
        Some(ContextValue::String(s)) => Some(s.clone()),
        _ => None,
    };
    if e.kind() == ErrorKind::ValueValidation {
        if let (Some(arg), Some(value)) =
            (ctx(ContextKind::InvalidArg), ctx(ContextKind::InvalidValue))
        {
            // "--connections <CONNECTIONS>" -> "--connections"
            let flag = arg.split(' ').next().unwrap_or(&arg);
            if value.starts_with('-') {
                return format!("{flag} must be a positive number, not {value}");
            }
            return format!(
                "{flag}: '{value}' is not a valid value ({})",
                e.source()
                    .map(|s| s.to_string())
                    .unwrap_or_else(|| "see --help".into())
            );
        }
    }
    let text = e.render().to_string();
    let mut paragraphs = text.split("\n\n");
    let first = paragraphs
        .next()
        .unwrap_or_default()
        .trim_start_matches("error: ")
        .lines()
        .map(str::trim)
        .collect::<Vec<_>>()
        .join(" ");
    // Keep a "similar argument exists" tip; drop usage, "For more information" and
    // "to pass it as a value, use --" (wrong for a mistyped flag).
    let tips: String = paragraphs
        .flat_map(str::lines)
        .map(str::trim)
        .filter(|l| l.starts_with("tip: a similar"))
        .map(|l| format!(" ({l})"))
        .collect();
    format!("{first}{tips}")
}

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
    // A protocol is one line in each list (this one and `ServeCommand`): its about
    // text, hidden flags and defaults are its own, on its flags (src/proto/<name>/config.rs).
    Echo(LoadCommand<crate::proto::echo::config::EchoArgs>),
    /// Event-loop microbenchmark (the libev/libevent/evpp method) over several backends.
    Ioevent(IoeventArgs),
    Http(LoadCommand<crate::proto::http::config::HttpArgs>),
    Amqp(LoadCommand<crate::proto::amqp::config::AmqpArgs>),
    Ws(LoadCommand<crate::proto::ws::config::WsArgs>),
    Grpc(LoadCommand<crate::proto::grpc::config::GrpcArgs>),
    Redis(LoadCommand<crate::proto::redis::config::RedisArgs>),
    // Its flags, about text included, are its own too (src/connect/args.rs).
    Connect(crate::connect::args::ConnectArgs),
    // --- suites and reports (issue 7) ---
    /// Run a suite file: start each server pinned, sweep the loads over it, write one JSON per point.
    Suite(SuiteArgs),
    /// Draw a results directory as one self-contained HTML file (and PNG charts, Markdown).
    Report(ReportArgs),
    /// Compare two results directories; exit 1 when a point is worse past --threshold and beyond the noise of its rounds.
    Compare(CompareArgs),
    /// Merge the shards of one run (--shard I/N results) into one exact result.
    Merge(MergeArgs),
    // --- end of suites and reports ---
    /// Kubernetes: render an Indexed Job of N load shards; run one shard inside a pod.
    K8s {
        #[command(subcommand)]
        k8s: K8sCommand,
    },
    /// Run a built-in server.
    Serve {
        #[command(subcommand)]
        server: ServeCommand,
    },
}

#[derive(Subcommand, Debug)]
pub enum ServeCommand {
    Echo(ServerCommand<crate::proto::echo::config::ServeEchoArgs>),
    Http(ServerCommand<crate::proto::http::config::ServeHttpArgs>),
    Amqp(ServerCommand<crate::proto::amqp::config::ServeAmqpArgs>),
    Ws(ServerCommand<crate::proto::ws::config::ServeWsArgs>),
    Grpc(ServerCommand<crate::proto::grpc::config::ServeGrpcArgs>),
    Redis(ServerCommand<crate::proto::redis::config::ServeRedisArgs>),
}

#[derive(Subcommand, Debug)]
pub enum K8sCommand {
    /// Print an Indexed Job manifest that runs a load command as N shards with a common start.
    Render(K8sRenderArgs),
    /// Inside a pod of that Job: run the load, write its JSON to DIR and print it after a marker line.
    Run(K8sRunArgs),
}

#[derive(Args, Debug)]
pub struct K8sRenderArgs {
    /// Shards: pods, each running its share of the load (completions = parallelism = N).
    #[arg(long, value_name = "N")]
    pub shards: u32,
    /// Container image with wirebench as its entrypoint (deploy/Containerfile) [default: wirebench:VERSION].
    #[arg(long, value_name = "IMG")]
    pub image: Option<String>,
    /// Common start of the measured phase, this long after rendering [default: 60s].
    #[arg(long, value_name = "DURATION", conflicts_with = "start_at")]
    pub start_in: Option<String>,
    /// Common start of the measured phase: RFC 3339 (2026-05-01T12:00:00Z) or Unix milliseconds.
    #[arg(long, value_name = "TIME")]
    pub start_at: Option<String>,
    /// Run id every shard records, so merge refuses shards of other runs [default: generated, printed on stderr].
    #[arg(long, value_name = "ID")]
    pub run_id: Option<String>,
    /// Namespace of the Job [default: kubectl's current one].
    #[arg(long, value_name = "NS")]
    pub namespace: Option<String>,
    /// A load command before `--` (caught only to say where it belongs).
    #[arg(hide = true)]
    pub stray: Vec<String>,
    /// The load command, after `--`: echo|http|amqp|redis|ws|grpc|connect TARGET and its flags.
    #[arg(last = true, value_name = "LOAD-COMMAND")]
    pub load: Vec<String>,
}

#[derive(Args, Debug)]
pub struct K8sRunArgs {
    /// Directory for the result: DIR/shard-INDEX.json (INDEX from JOB_COMPLETION_INDEX).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// The load command, after `--`.
    #[arg(last = true, value_name = "LOAD-COMMAND")]
    pub load: Vec<String>,
}

// A protocol's load command: the shared load flags, then the protocol's own (its
// target among them), each read once. `A` is `Protocol::Args` (src/proto/plugin.rs).
// Plain comments, not doc comments: clap would make a doc comment here the command's
// about text, over the one `A` gives. `A` comes after `load`, so its own
// `#[command(mut_arg(...))]` can hide or reword a shared flag for its command.
#[derive(Args, Debug)]
pub struct LoadCommand<A: Args> {
    #[command(flatten)]
    pub load: LoadArgs,
    #[command(flatten)]
    pub proto: A,
}

// A protocol's `serve` command: the shared server flags, then the protocol's own
// (`A` is `Protocol::ServeArgs`), which may set a shared flag's default (its port).
// Plain comments for the reason given at `LoadCommand`.
#[derive(Args, Debug)]
pub struct ServerCommand<A: Args> {
    #[command(flatten)]
    pub server: ServerArgs,
    #[command(flatten)]
    pub proto: A,
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
    /// Print only the summary (no settings table).
    #[arg(short = 'q', long)]
    pub quiet: bool,
    /// Also print one line per iteration (by default only the summary table).
    #[arg(short = 'v', long, conflicts_with = "quiet")]
    pub verbose: bool,
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
    /// Run a suite even past 10,000 runs or an estimated 6 hours (refused otherwise).
    #[arg(long)]
    pub yes: bool,
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
    /// A throughput drop or p99 rise beyond this percent (and beyond the noise of the rounds) reads as worse.
    #[arg(long, default_value_t = 5.0)]
    pub threshold: f64,
}
// --- end of suites and reports ---

#[derive(Args, Debug)]
pub struct MergeArgs {
    /// The shards' result files (--json of each shard); a directory stands for its .json files.
    #[arg(required = true, value_name = "SHARD.json|DIR")]
    pub inputs: Vec<PathBuf>,
    /// The merged result to write (JSON, the same schema as any result).
    #[arg(short = 'o', long, value_name = "FILE")]
    pub output: PathBuf,
    /// Merge the shards present when some are missing (said in the result's merge block).
    #[arg(long)]
    pub allow_partial: bool,
    /// Print only the closing line, not the merged run's summary.
    #[arg(short = 'q', long)]
    pub quiet: bool,
    /// Hold the merged run to FIGURE<LIMIT too (the shards' own thresholds always are): p99<200ms, errors<0.5% (docs/thresholds.md). One failed: exit 3.
    #[arg(long, value_name = "EXPR")]
    pub threshold: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::attach_negative_values;

    fn attach(args: &[&str]) -> Vec<String> {
        attach_negative_values(args.iter().map(|s| s.to_string()))
    }

    #[test]
    fn negative_values_are_attached_to_their_flag() {
        assert_eq!(
            attach(&["wb", "echo", "-c", "-1", "--hold", "-1s", "--rate", "-.5"]),
            ["wb", "echo", "-c=-1", "--hold=-1s", "--rate=-.5"]
        );
        // Flags, attached values and everything after "--" are left alone.
        assert_eq!(
            attach(&["wb", "echo", "-q", "-c=2", "-d", "1s", "--", "-x", "-1"]),
            ["wb", "echo", "-q", "-c=2", "-d", "1s", "--", "-x", "-1"]
        );
    }
}
