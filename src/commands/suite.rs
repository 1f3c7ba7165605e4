//! `wirebench suite FILE`: validate the file (exit 2 before anything starts), run it,
//! print one line per server, exit 1 if a server failed or a point fell short, 3 if a
//! point failed its load's thresholds.

use crate::cli::SuiteArgs;
use crate::error::{Error, Result};
use crate::suite::plan::Suite;
use crate::suite::{plan, runner};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

pub fn run(a: &SuiteArgs) -> Result<()> {
    let suite = plan::load(&a.file)?;
    if a.check {
        print_check(a, &suite);
        return Ok(());
    }
    suite.check_size(a.yes)?;
    let stop = stop_flag()?;
    if !a.quiet {
        eprintln!(
            "suite: {} ({} servers, {} runs) -> {}",
            suite.name,
            suite.servers.len(),
            suite.runs(),
            a.out.display()
        );
    }
    let opts = runner::Options {
        out: a.out.clone(),
        profile: a.profile,
        stop: stop.clone(),
        quiet: a.quiet,
    };
    let statuses = runner::run(&suite, &opts)?;
    let mut problems = print_statuses(&suite, &statuses);
    print_verdict_and_hint(a);
    let over: u64 = statuses.iter().map(|s| s.points_over_threshold).sum();
    if stop.load(Ordering::Relaxed) {
        return Err(Error::ShortFall(
            "the suite was interrupted; the servers were stopped".into(),
        ));
    }
    if statuses.len() < suite.servers.len() * suite.rounds as usize {
        problems.push("not every server ran".into());
    }
    let short =
        (!problems.is_empty()).then(|| format!("the suite fell short: {}", problems.join("; ")));
    // A failed threshold is exit 3 even when the suite also fell short, as for one run
    // (commands/verdict.rs); the shortfall is said in the same sentence.
    match (over, short) {
        (0, None) => Ok(()),
        (0, Some(short)) => Err(Error::ShortFall(short)),
        (n, short) => Err(Error::Threshold(format!(
            "thresholds failed at {n} of the suite's points (the table above names them){}",
            short.map(|s| format!("; {s}")).unwrap_or_default()
        ))),
    }
}

/// `--check`: what the file would run, and about how long, without running it.
fn print_check(a: &SuiteArgs, suite: &Suite) {
    println!(
        "{}: {} servers x {} rounds, {} loads, {} runs, {} {}{}",
        a.file.display(),
        suite.servers.len(),
        suite.rounds,
        suite.loads.len(),
        suite.runs(),
        if suite.has_count_plans() {
            "at least"
        } else {
            "about"
        },
        crate::report::format::span(suite.estimate()),
        if suite.has_count_plans() {
            " (and the count plans' own time)"
        } else {
            ""
        }
    );
    for l in &suite.loads {
        println!(
            "  load {}: {} via {}, {} points x {} repeats, swept: {}",
            l.name,
            l.protocol.name(),
            l.generator,
            l.points.len(),
            l.repeat,
            if l.swept.is_empty() {
                "nothing".to_string()
            } else {
                l.swept.join(", ")
            }
        );
    }
}

/// Ctrl-C and SIGTERM only raise a flag: the runner stops the generator and the server
/// itself, so nothing is left running.
fn stop_flag() -> Result<Arc<AtomicBool>> {
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, stop.clone())
            .map_err(|e| Error::runtime(format!("cannot handle signals: {e}")))?;
    }
    Ok(stop)
}

/// One line per server (and round), its state in one column; returns what fell short.
fn print_statuses(suite: &Suite, statuses: &[runner::ServerStatus]) -> Vec<String> {
    let mut problems = Vec::new();
    let label = |s: &runner::ServerStatus| {
        if suite.rounds > 1 {
            format!("{} #{}", s.name, s.round)
        } else {
            s.name.clone()
        }
    };
    // The widest name sets the column, so every line's state starts in one place.
    let width = statuses
        .iter()
        .map(|s| label(s).chars().count())
        .max()
        .unwrap_or(0);
    for s in statuses {
        println!(
            "{:<width$} {:<22} {} points, {} fell short{}",
            label(s),
            s.state,
            s.points,
            s.points_failed,
            s.message
                .as_deref()
                .map(|m| format!(": {m}"))
                .unwrap_or_default()
        );
        if s.state != "ok" {
            problems.push(format!("server {} {}", s.name, s.state.replace('_', " ")));
        } else if s.points_failed > 0 {
            problems.push(format!(
                "server {}: {} points fell short",
                s.name, s.points_failed
            ));
        }
        if !s.left_behind.is_empty() {
            problems.push(format!(
                "server {} left processes {:?} running",
                s.name, s.left_behind
            ));
        }
    }
    problems
}

/// The verdict, read back from what was written (as `wirebench report` reads it), and
/// the hint to render it: the binary as it was called and the directory quoted, so it
/// works when pasted.
fn print_verdict_and_hint(a: &SuiteArgs) {
    if let Ok(d) = crate::report::suite::dataset::load_dir(&a.out) {
        for l in crate::report::suite::verdict::lines(&d) {
            println!("{l}");
        }
        for l in crate::report::suite::held::lines(&d.held) {
            println!("{l}");
        }
    }
    println!(
        "results in {} (render with: {} report {} -o report.html)",
        a.out.display(),
        crate::cli_help::program(),
        crate::cli_help::shell_word(&a.out.to_string_lossy())
    );
}
