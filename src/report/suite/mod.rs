//! The suite report: a results directory read back (`dataset`), drawn as line charts
//! (`chart`), summarized in tables (`table`), and written as one self-contained HTML
//! file (`html`), PNG files and Markdown (`markdown`). Nothing here runs anything.

pub mod chart;
pub mod compare;
pub mod dataset;
pub mod guard;
pub mod html;
pub mod markdown;
pub mod marks;
pub mod noise;
pub mod series;
pub mod table;
pub mod verdict;

use chart::{Chart, Line, Pt};
use dataset::{Aggregate, LoadView, Stat};

/// One chart of a load: a file-safe slug, its title, its SVG.
pub struct Drawn {
    pub slug: String,
    pub title: String,
    pub svg: String,
}

pub fn axis_title(axis: &str) -> &'static str {
    match axis {
        "body_size" => "body size",
        "pipeline" => "pipeline depth",
        "rate" => "offered rate (requests/s)",
        _ => "connections",
    }
}

/// A value of a swept axis as a reader wants it: sizes in IEC units ("1 KiB").
pub fn axis_value(axis: &str, v: f64) -> String {
    if axis == "body_size" {
        crate::report::format::iec(v)
    } else {
        chart::short(v)
    }
}

fn stat_pt(x: f64, s: Stat) -> Pt {
    Pt {
        x,
        y: s.median,
        lo: s.min,
        hi: s.max,
    }
}

fn spans_decades(lines: &[Line]) -> bool {
    let ys: Vec<f64> = lines
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.y))
        .filter(|y| *y > 0.0)
        .collect();
    let (lo, hi) = ys
        .iter()
        .fold((f64::MAX, 0f64), |(a, b), y| (a.min(*y), b.max(*y)));
    !ys.is_empty() && hi / lo > 20.0
}

/// Every chart of one load, in report order.
pub fn charts(load: &LoadView) -> Vec<Drawn> {
    type Pick = fn(&Aggregate) -> Pt;
    let x_label = axis_title(&load.axis);
    let per_s = load.unit.per_s();
    let tput = format!("throughput ({per_s})");
    let specs: Vec<(&str, String, &str, Pick, bool)> = vec![
        (
            "throughput",
            tput.clone(),
            &per_s,
            |a| stat_pt(a.x, a.throughput),
            false,
        ),
        (
            "p50",
            "p50 latency".into(),
            "microseconds",
            |a| Pt {
                x: a.x,
                y: a.latency.p50,
                lo: a.latency.p50,
                hi: a.latency.p50,
            },
            true,
        ),
        (
            "p99",
            "p99 latency".into(),
            "microseconds",
            |a| Pt {
                x: a.x,
                y: a.latency.p99,
                lo: a.latency.p99,
                hi: a.latency.p99,
            },
            true,
        ),
        (
            "p99_9",
            "p99.9 latency".into(),
            "microseconds",
            |a| Pt {
                x: a.x,
                y: a.latency.p99_9,
                lo: a.latency.p99_9,
                hi: a.latency.p99_9,
            },
            true,
        ),
        (
            "server_cpu",
            "server CPU (100% = one core)".into(),
            "percent",
            |a| stat_pt(a.x, a.cpu_pct),
            false,
        ),
        (
            "cpu_per_request",
            "server CPU per request".into(),
            "CPU microseconds",
            |a| stat_pt(a.x, a.us_per_req),
            false,
        ),
        (
            "rss",
            "server memory (RSS)".into(),
            "MiB",
            |a| stat_pt(a.x, a.rss_mib),
            false,
        ),
    ];
    specs
        .into_iter()
        .map(|(slug, title, y_label, pick, maybe_log)| {
            let lines: Vec<Line> = load
                .series
                .iter()
                .map(|s| Line {
                    label: s.label.clone(),
                    points: s.points.iter().map(pick).collect(),
                })
                .collect();
            let log_y = maybe_log && spans_decades(&lines);
            let title = if log_y {
                format!("{title} (log scale)")
            } else {
                title
            };
            let svg = chart::svg(&Chart {
                title: &title,
                x_label,
                y_label,
                lines: &lines,
                log_y,
                x_bytes: load.axis == "body_size",
            });
            Drawn {
                slug: slug.to_string(),
                title,
                svg,
            }
        })
        .collect()
}
