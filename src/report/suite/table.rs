//! The summary table, as the game-server load test laid it out: one row per value of
//! the swept axis; per server: throughput, latency (p50, p99, max), errors, CPU.

use super::dataset::{Aggregate, LoadView};
use crate::report::format::{group, micros, rate};

pub struct Table {
    /// Server (series) labels, each spanning `COLUMNS`.
    pub groups: Vec<String>,
    pub axis: String,
    pub rows: Vec<Row>,
}

pub const COLUMNS: [&str; 6] = [
    "throughput",
    "p50 us",
    "p99 us",
    "max us",
    "errors",
    "CPU %",
];

pub struct Row {
    pub x: String,
    /// Per group: the six cells, or None where that server has no such point.
    pub cells: Vec<Option<[String; 6]>>,
    /// Per group: some repeats fell short.
    pub short: Vec<bool>,
    /// Per group: the rounds disagree (verdict::disagrees), or one ran while other
    /// processes took its CPUs (`marks`).
    pub noisy: Vec<bool>,
}

fn cells(a: &Aggregate) -> [String; 6] {
    let spread = if a.runs > 1 && a.throughput.median > 0.0 {
        format!(" ±{:.0}%", a.throughput.noise() * 100.0)
    } else {
        String::new()
    };
    [
        format!(
            "{}{spread}{}",
            rate(a.throughput.median),
            match (super::verdict::disagrees(a), a.busy.is_empty()) {
                (true, true) => " (noisy)",
                (true, false) => " (noisy, busy)",
                (false, false) => " (busy)",
                (false, true) => "",
            }
        ),
        micros(a.latency.p50),
        micros(a.latency.p99),
        micros(a.latency.max),
        group(a.errors),
        format!("{:.0}", a.cpu_pct.median),
    ]
}

pub fn of(load: &LoadView) -> Table {
    let mut xs: Vec<f64> = load
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.x))
        .collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    let rows = xs
        .iter()
        .map(|&x| {
            let found: Vec<Option<&Aggregate>> = load
                .series
                .iter()
                .map(|s| s.points.iter().find(|p| p.x == x))
                .collect();
            Row {
                x: super::axis_value(&load.axis, x),
                cells: found.iter().map(|a| a.map(cells)).collect(),
                short: found
                    .iter()
                    .map(|a| a.is_some_and(|a| a.failed_runs > 0))
                    .collect(),
                noisy: found
                    .iter()
                    .map(|a| a.is_some_and(|a| super::verdict::disagrees(a) || !a.busy.is_empty()))
                    .collect(),
            }
        })
        .collect();
    Table {
        groups: load.series.iter().map(|s| s.label.clone()).collect(),
        axis: super::axis_title(&load.axis).to_string(),
        rows,
    }
}
