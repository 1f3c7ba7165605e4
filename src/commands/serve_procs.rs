//! `wirebench serve <protocol> --processes N`: the parent side. It starts N worker
//! processes of the same command (they share SO_REUSEPORT listeners), prints their
//! summed counters, and forwards SIGINT/SIGTERM as a stop.

use crate::config::ServeConfig;
use crate::error::Result;
use crate::report::format::count_of;
use crate::server::group::ServerGroup;
use crate::stats::Figures;
use std::time::Duration;

/// `plan`: the environment entry holding the validated configs every worker serves
/// (`serve_plan.rs`); the workers' command line only names the protocol. `line` words
/// the protocol's figures (`G`), merged exactly over the workers.
pub fn parent<G: Figures>(
    cfg: &ServeConfig,
    name: &str,
    plan: (String, String),
    line: &dyn Fn(&G) -> Option<String>,
    metrics: Option<super::serve_metrics::ServeMetrics>,
) -> Result<()> {
    let stop = super::load::stop_flag()?;
    let args = super::serve_plan::worker_args(name);
    let g = ServerGroup::start(&args, &[plan], &cfg.listen_all, cfg.processes, &stop)?;
    let addrs = if g.addrs.len() > 1 {
        format!("{} addresses from {}", g.addrs.len(), g.addrs[0])
    } else {
        g.addrs[0].to_string()
    };
    let pids: Vec<String> = g.pids().iter().map(|p| p.to_string()).collect();
    println!(
        "wirebench serve {name}: listening on {addrs} with {} x {}",
        count_of(cfg.processes as u64, "process"),
        count_of(cfg.threads as u64, "thread")
    );
    println!("worker pids: {}", pids.join(","));
    let g = std::cell::RefCell::new(g);
    let mut warned = 0;
    let started = super::serve_stats::print_stats_until_stopped(
        cfg,
        &stop,
        || {
            let mut g = g.borrow_mut();
            g.poll(Duration::ZERO);
            if g.gone() > warned {
                warned = g.gone();
                eprintln!("wirebench: {warned} server worker processes have exited");
            }
            g.totals()
        },
        // The protocol's own figures, from every worker's latest report.
        &|| line(&g.borrow().figures::<G>()),
        &|t| {
            if let Some(m) = &metrics {
                let figures = serde_json::to_value(g.borrow().figures::<G>()).ok();
                m.publish(t, figures.as_ref());
            }
        },
    );
    let (totals, figures) = g.into_inner().stop_with_figures::<G>();
    if let Some(m) = &metrics {
        m.publish(&totals, serde_json::to_value(&figures).ok().as_ref());
    }
    super::serve_stats::print_final(name, started, &totals, &|| line(&figures));
    Ok(())
}
