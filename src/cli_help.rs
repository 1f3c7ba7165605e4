//! The end of every command's help: `-h` says where the rest is; `--help` ends with
//! examples and the exit codes. A protocol's load command gives its own examples (its
//! flags' `#[command(after_long_help = ...)]`, src/proto/<name>/config.rs); the other
//! commands' are here, and a command without any gets its plain run as an example.

use clap::Command;

/// `cmd` (named `path`, e.g. "wirebench serve echo") and its subcommands, with the
/// tail of their help.
pub fn decorate(mut cmd: Command, path: &str) -> Command {
    let names: Vec<String> = cmd
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .collect();
    for name in &names {
        let sub = format!("{path} {name}");
        cmd = cmd.mut_subcommand(name, |c| decorate(c, &sub));
    }
    cmd = short_help_of_connect(cmd, path);
    let examples = match cmd.get_after_long_help() {
        Some(own) => own.to_string(),
        None => format!("Examples:\n{}", examples(path)),
    };
    let long = format!(
        "{}\n\nExit codes:\n{}",
        examples.trim_end(),
        exit_codes(path)
    );
    cmd = cmd.after_long_help(long);
    if path == "wirebench" {
        // Its -h is the command list, which fills a screen (clap's own "-h, --help"
        // line says --help shows more).
        return cmd;
    }
    // Said with the program as the user called it, so it works as printed.
    let called = path.replacen("wirebench", &program(), 1);
    cmd.after_help(format!(
        "Every flag, examples and exit codes: {called} --help"
    ))
}

/// `connect`'s `-h`: the flags a first run needs (its args are not a protocol's, so
/// they are chosen here rather than on each flag).
fn short_help_of_connect(cmd: Command, path: &str) -> Command {
    const FIRST_RUN: &[&str] = &[
        "target",
        "connections",
        "duration",
        "hold",
        "ping",
        "churn",
        "tls",
        "json",
    ];
    if path != "wirebench connect" {
        return cmd;
    }
    cmd.mut_args(|a| {
        let keep = FIRST_RUN.contains(&a.get_id().as_str());
        a.hide_short_help(!keep)
    })
}

/// The examples of a command that names none itself.
fn examples(path: &str) -> String {
    let lines: Vec<String> = match path {
        "wirebench" => vec![
            "wirebench echo                          # load the built-in echo server for 10 s".into(),
            "wirebench http http://127.0.0.1:8080/ -t 2 -c 100 -d 30s   # as wrk -t2 -c100 -d30s".into(),
            "wirebench suite examples/quick.toml --out results && wirebench report results -o report.html".into(),
        ],
        "wirebench connect" => vec![
            "wirebench connect -n 10000                       # open 10,000 connections to the built-in server".into(),
            "wirebench connect 127.0.0.1:8081 -n 100000 --hold 30s --ping 1s".into(),
            "wirebench connect 127.0.0.1:8081 --churn -d 10s  # connections per second".into(),
        ],
        "wirebench ioevent" => vec![
            "wirebench ioevent".into(),
            "wirebench ioevent -n 100,1000,10000 --backend epoll --chart ioevent.svg".into(),
        ],
        "wirebench suite" => vec![
            "wirebench suite examples/quick.toml --check      # the plan, nothing started".into(),
            "wirebench suite examples/quick.toml --out results".into(),
        ],
        "wirebench report" => vec![
            "wirebench report results -o report.html".into(),
            "wirebench report results -o report.html --png charts --markdown report.md".into(),
        ],
        "wirebench compare" => vec![
            "wirebench compare results-before results-after".into(),
            "wirebench compare results-before results-after --threshold 2".into(),
        ],
        "wirebench merge" => vec![
            "wirebench merge shard-0.json shard-1.json shard-2.json -o merged.json".into(),
            "wirebench merge shards/ -o merged.json --allow-partial".into(),
        ],
        "wirebench k8s" | "wirebench k8s render" => vec![
            "wirebench k8s render --shards 3 -- echo 10.0.0.5:9000 -c 300 -d 30s > job.yaml"
                .into(),
        ],
        "wirebench k8s run" => vec![
            "(the pods of a rendered Job run it: wirebench k8s render --help)".into(),
        ],
        "wirebench serve" => vec![
            "wirebench serve echo".into(),
            "wirebench serve http --listen 127.0.0.1:8080 --threads 2 --stats 1s".into(),
        ],
        serve if serve.starts_with("wirebench serve ") => vec![
            serve.to_string(),
            format!("{serve} --listen 127.0.0.1:9000 --threads 2 --stats 1s"),
        ],
        // A load command that names no example of its own: its built-in server.
        load => vec![
            format!("{load}                       # the built-in server, 10 s"),
            format!("{load} -c 100 -d 30s --json result.json"),
        ],
    };
    lines.iter().map(|l| format!("  {l}\n")).collect()
}

/// A load's exit codes, then `$more` (a load that takes thresholds adds 3).
macro_rules! load_exits {
    ($more:literal) => {
        concat!(
            "  0  the run did all it was asked
  1  it ran and fell short: errors, replies missing, a rate not kept, or stopped early (its last line says why)
  2  bad input (a flag, a file, an address) or a failure to start",
            $more
        )
    };
}
const LOAD_EXITS: &str = load_exits!("");
const THRESHOLD_LOAD_EXITS: &str = load_exits!(
    "
  3  a --threshold failed, also when the run fell short (the thresholds are the verdict asked for), or --search found no rate that met its conditions"
);
const PLAIN_EXITS: &str = "  0  done
  2  bad input (a flag, a file, an address) or a failure to run";

/// What each exit code of a command means.
fn exit_codes(path: &str) -> &'static str {
    let name = path.strip_prefix("wirebench ").unwrap_or("");
    if name == "connect" {
        return LOAD_EXITS;
    }
    if crate::registry::names().contains(&name) || name == "k8s run" {
        return THRESHOLD_LOAD_EXITS;
    }
    match name {
        "" => "  0  the command did all it was asked
  1  it ran and fell short (a load: errors or replies missing; compare: a point worse; suite: a point or a server failed)
  2  bad input (a flag, a file, an address) or a failure to run",
        "suite" => "  0  every point of every server ran
  1  the suite fell short: a point failed, a server did not start or left processes behind, or it was stopped
  2  bad input (the suite file, a flag) or a failure to run",
        "compare" => "  0  no point is worse past --threshold beyond the noise of its rounds
  1  a point is worse past --threshold beyond the noise of its rounds, or missing
  2  bad input (a directory that holds no results, a flag)",
        "merge" => "  0  merged, and the merged run did all it was asked
  1  merged, and the merged run fell short (its last line says why)
  2  bad input (files that are not shards of one run, a flag, a --threshold)
  3  a threshold (the shards' own or merge's --threshold) failed on the merged run",
        serve if serve.starts_with("serve") => "  0  stopped by a signal (Ctrl-C, SIGTERM)
  2  bad input (a flag, an address) or it could not listen",
        _ => PLAIN_EXITS,
    }
}

/// How to call this binary again in a hint the user can paste: argv[0] as typed when
/// it names a path (`./target/release/wirebench`, which works from where they ran it),
/// else the name the shell found on PATH (`wirebench`).
pub fn program() -> String {
    let argv0 = std::env::args().next().unwrap_or_default();
    if argv0.is_empty() {
        return "wirebench".into();
    }
    shell_word(&argv0)
}

/// `s` as one shell word: as is when it holds nothing a shell would read, else in
/// single quotes.
pub fn shell_word(s: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_-./:=@%+,".contains(c);
    if !s.is_empty() && s.chars().all(plain) {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}
