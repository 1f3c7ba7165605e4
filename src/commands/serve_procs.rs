//! `wirebench serve <protocol> --processes N`: the parent side. It starts N worker
//! processes of the same command (they share SO_REUSEPORT listeners), prints their
//! summed counters, and forwards SIGINT/SIGTERM as a stop.

use crate::config::ServeConfig;
use crate::error::Result;
use crate::report::format::count_of;
use crate::server::group::ServerGroup;
use std::time::Duration;

/// `plan`: the environment entry holding the validated configs every worker serves
/// (`serve_plan.rs`); the workers' command line only names the protocol.
pub fn parent(cfg: &ServeConfig, name: &str, plan: (String, String)) -> Result<()> {
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
    let mut g = g;
    let mut warned = 0;
    let started = super::serve::print_stats_until_stopped(
        cfg,
        &stop,
        || {
            g.poll(Duration::ZERO);
            if g.gone() > warned {
                warned = g.gone();
                eprintln!("wirebench: {warned} server worker processes have exited");
            }
            g.totals()
        },
        // A protocol's own counters (AMQP's messages) live in each worker process and
        // are not gathered; the runtime's totals above are.
        &|| None,
    );
    super::serve::print_final(name, started, &g.stop(), &|| None);
    Ok(())
}
