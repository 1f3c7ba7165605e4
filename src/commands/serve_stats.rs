//! What `serve` prints while it runs and when it stops: the runtime's counters every
//! --stats interval and once at the end, with the protocol's own line beside them.
//! Shared by a single-process server (serve.rs) and the parent of --processes
//! (serve_procs.rs).

use super::serve_stats_log::StatsLog;
use crate::config::ServeConfig;
use crate::report::format::group;
use crate::server::counters::ServerTotals;
use crate::stats::interference::{this_process_tree, Interference, Window};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

fn stats_line(label: &str, t: &ServerTotals) -> String {
    format!(
        "{label}: accepts {} closes {} reads {} bytes in {} out {} rejected {} tls failures {}{}{}{}",
        group(t.accepts),
        group(t.closes),
        group(t.reads),
        group(t.bytes_in),
        group(t.bytes_out),
        group(t.rejected),
        group(t.tls_failures),
        if t.requests > 0 {
            format!(" requests {}", group(t.requests))
        } else {
            String::new()
        },
        timing_counts(t),
        if t.too_large > 0 {
            format!(" too large {}", group(t.too_large))
        } else {
            String::new()
        }
    )
}

/// The timeout and pacing counters, when any is above zero (most runs have none).
fn timing_counts(t: &ServerTotals) -> String {
    if t.header_timeouts + t.idle_timeouts + t.held_full == 0 {
        return String::new();
    }
    format!(
        " timeouts header {} idle {} held full {}",
        group(t.header_timeouts),
        group(t.idle_timeouts),
        group(t.held_full)
    )
}

/// What a server's run was: its start, and the interference while it served.
pub(crate) struct Served {
    started: Instant,
    interference: Option<Interference>,
    /// `--stats-json`: its last row is written with the final counters.
    log: Option<StatsLog>,
}

/// Prints counters every --stats interval until SIGINT/SIGTERM, and hands every sum
/// of them (each 50 ms) to `watch` (the `--metrics-listen` endpoint); returns when it
/// started and what other processes took from its CPUs meanwhile (this process and
/// its worker processes are the server's own).
pub(crate) fn print_stats_until_stopped(
    cfg: &ServeConfig,
    stop: &std::sync::atomic::AtomicBool,
    mut totals: impl FnMut() -> ServerTotals,
    extra: &dyn Fn() -> Option<String>,
    watch: &dyn Fn(&ServerTotals),
) -> Served {
    let started = Instant::now();
    let machine = Window::open(this_process_tree());
    let mut last = ServerTotals::default();
    let mut next = cfg.stats.map(|iv| started + iv);
    let mut log = cfg.stats_json.as_deref().and_then(StatsLog::open);
    while !stop.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(50));
        // Read every time round, so a multi-process server's reports never pile up.
        let now = totals();
        watch(&now);
        if let (Some(at), Some(iv)) = (next, cfg.stats) {
            if Instant::now() >= at {
                println!(
                    "[{:>7.1}s] active {} | {} | {}",
                    started.elapsed().as_secs_f64(),
                    group(now.active),
                    stats_line("interval", &now.since(&last)),
                    stats_line("total", &now)
                );
                if let Some(line) = extra() {
                    println!("[{:>7.1}s] {line}", started.elapsed().as_secs_f64());
                }
                last = now;
                log = log.and_then(|l| l.row(started.elapsed(), &now, false));
                next = Some(at + iv);
            }
        }
    }
    Served {
        started,
        interference: machine.close(this_process_tree(), &[]),
        log,
    }
}

pub(crate) fn print_final(
    name: &str,
    served: Served,
    totals: &ServerTotals,
    extra: &dyn Fn() -> Option<String>,
) {
    if let Some(log) = served.log {
        // The rest since the last interval, so the rows add up to the final line.
        let _ = log.row(served.started.elapsed(), totals, true);
    }
    // The loop before the counters: scripts read the counters to the line's end.
    println!(
        "wirebench serve {name}: stopped after {:.1}s; loop: {}; {}",
        served.started.elapsed().as_secs_f64(),
        totals.event_loop.describe(),
        stats_line("final", totals)
    );
    if let Some(line) = extra() {
        println!("wirebench serve {name}: final {line}");
    }
    // Its clients are not its own: a load on this machine counts among the others.
    let line = served
        .interference
        .as_ref()
        .and_then(|i| i.line(Some("a client is")));
    if let Some(line) = line {
        println!("wirebench serve {name}: {line}");
    }
}
