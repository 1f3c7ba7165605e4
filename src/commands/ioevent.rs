//! `wirebench ioevent`: validate, run the backends, print, write JSON and the chart.

use super::load::unix_ms;
use crate::cli::IoeventArgs;
use crate::error::{Error, Result};
use crate::ioevent::result::{IoeventConfigRecord, IoeventCost, IoeventResult, Series};
use crate::ioevent::{self, IoeventConfig};
use crate::report::console::Console;
use crate::report::format::{group, size};
use crate::report::json::JsonSink;
use crate::report::text::config_table;
use crate::sys::Environment;
use std::fmt::Write as _;

fn summary_table(series: &[Series]) -> String {
    let mut s = String::from(
        "backend      N   total us: median       mean        min        max     stddev |  loop us: median       mean        min        max     stddev\n",
    );
    for r in series {
        let (t, l) = (&r.summary.total_us, &r.summary.loop_us);
        let _ = writeln!(
            s,
            "{:<6} {:>6} {:>17.1} {:>10.1} {:>10.1} {:>10.1} {:>10.1} | {:>15.1} {:>10.1} {:>10.1} {:>10.1} {:>10.1}",
            r.backend, r.pairs, t.median, t.mean, t.min, t.max, t.stddev, l.median, l.mean, l.min, l.max, l.stddev
        );
    }
    s
}

/// The run's CPU since `cpu_at_start` and its peak memory.
fn cost(series: &[Series], cpu_at_start: std::time::Duration) -> IoeventCost {
    let cpu_s = crate::sys::process_cpu_time()
        .saturating_sub(cpu_at_start)
        .as_secs_f64();
    let reads: u64 = series
        .iter()
        .flat_map(|s| s.iterations.iter().map(|i| i.reads))
        .sum();
    IoeventCost {
        cpu_s,
        cpu_us_per_read: (reads > 0).then(|| cpu_s * 1e6 / reads as f64),
        peak_rss_bytes: crate::sys::proc_fs::own_peak_rss_bytes(),
    }
}

fn cost_line(c: &IoeventCost) -> String {
    format!(
        "cost: cpu {:.2} s ({} per read), peak RSS {} (VmHWM of this process)",
        c.cpu_s,
        c.cpu_us_per_read
            .map(|us| format!("{us:.3} us"))
            .unwrap_or_else(|| "n/a".into()),
        c.peak_rss_bytes.map(size).unwrap_or_else(|| "n/a".into())
    )
}

pub fn run(a: &IoeventArgs) -> Result<()> {
    let cfg = IoeventConfig::from_args(a)?;
    let fd_limit = crate::sys::raise_nofile_limit();
    cfg.check_limits(fd_limit)?;
    let json = a.json.as_deref().map(JsonSink::create).transpose()?;
    // `--json -`: the JSON takes stdout, the tables go to stderr.
    let console = Console::for_json(a.json.as_deref());
    if let Some(c) = &a.chart {
        // Fail on an unwritable path now, not after the whole run.
        std::fs::File::create(c)
            .map_err(|e| Error::usage(format!("cannot write the chart to {}: {e}", c.display())))?;
    }
    let names: Vec<String> = cfg.backends.iter().map(|b| b.name().to_string()).collect();
    if !a.quiet {
        let pairs: Vec<String> = cfg.pairs.iter().map(|n| group(*n as u64)).collect();
        console.print(&config_table(
            &format!("wirebench ioevent {}", env!("CARGO_PKG_VERSION")),
            &[
                ("socketpairs (-n)", pairs.join(", ")),
                ("active (-a)", cfg.active.to_string()),
                ("writes (-w)", cfg.writes.to_string()),
                (
                    "iterations",
                    format!("{} (the first is left out of the summary)", cfg.iterations),
                ),
                ("backends", names.join(", ")),
            ],
        ));
    }
    let started = unix_ms();
    let cpu_at_start = crate::sys::process_cpu_time();
    // One line per iteration is for --verbose: by default the summary table says it all.
    let verbose = a.verbose;
    let (series, interleaved) = ioevent::run(&cfg, fd_limit, &mut |line| {
        if verbose {
            console.print(&format!("{line}\n"));
        }
    })?;
    let cost = cost(&series, cpu_at_start);
    if !interleaved {
        console.print("note: descriptors allow one set of pairs at a time at some N: backends ran one after another there\n");
    }
    console.print(&summary_table(&series));
    console.print(&format!("{}\n", cost_line(&cost)));
    let result = IoeventResult {
        schema_version: 1,
        kind: "ioevent".into(),
        started_unix_ms: started,
        environment: Environment::capture(),
        config: IoeventConfigRecord {
            pairs: cfg.pairs.clone(),
            active: cfg.active,
            writes: cfg.writes,
            iterations: cfg.iterations,
            backends: names,
            interleaved,
        },
        results: series,
        client_process: cost,
    };
    if let Some(sink) = json {
        sink.write(&result)?;
    }
    if let Some(path) = &a.chart {
        ioevent::chart::write(path, &result.results)?;
    }
    Ok(())
}
