//! The suite report: a results directory read back (`dataset`), drawn as line charts
//! (`chart`), summarized in tables (`table`), and written as one self-contained HTML
//! file (`html`), PNG files and Markdown (`markdown`). Nothing here runs anything.

pub mod chart;
pub mod compare;
pub mod dataset;
pub mod guard;
pub mod held;
pub mod html;
pub mod markdown;
pub mod marks;
pub mod noise;
pub mod search_curve;
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

/// What a point's aggregate gives a chart: the point, with its range.
type Pick = fn(&Aggregate) -> Pt;

/// One chart of a load: its file name, title, y axis, what it plots, and whether it
/// may go to a log scale (latencies, when they span decades).
struct ChartSpec<'a> {
    slug: &'static str,
    title: String,
    y_label: &'a str,
    pick: Pick,
    maybe_log: bool,
}

/// A latency percentile has no range across rounds: it is read from their merged histogram.
fn exact(x: f64, v: f64) -> Pt {
    Pt {
        x,
        y: v,
        lo: v,
        hi: v,
    }
}

/// The charts of every load, in report order; `per_s` is the load's unit per second.
fn chart_specs(per_s: &str) -> Vec<ChartSpec<'_>> {
    let spec = |slug, title: &str, y_label, pick: Pick, maybe_log| ChartSpec {
        slug,
        title: title.to_string(),
        y_label,
        pick,
        maybe_log,
    };
    vec![
        spec(
            "throughput",
            &format!("throughput ({per_s})"),
            per_s,
            |a| stat_pt(a.x, a.throughput),
            false,
        ),
        spec(
            "p50",
            "p50 latency",
            "microseconds",
            |a| exact(a.x, a.latency.p50),
            true,
        ),
        spec(
            "p99",
            "p99 latency",
            "microseconds",
            |a| exact(a.x, a.latency.p99),
            true,
        ),
        spec(
            "p99_9",
            "p99.9 latency",
            "microseconds",
            |a| exact(a.x, a.latency.p99_9),
            true,
        ),
        spec(
            "server_cpu",
            "server CPU (100% = one core)",
            "percent",
            |a| stat_pt(a.x, a.cpu_pct),
            false,
        ),
        spec(
            "cpu_per_request",
            "server CPU per request",
            "CPU microseconds",
            |a| stat_pt(a.x, a.us_per_req),
            false,
        ),
        spec(
            "rss",
            "server memory (RSS)",
            "MiB",
            |a| stat_pt(a.x, a.rss_mib),
            false,
        ),
    ]
}

/// Every chart of one load, in report order.
pub fn charts(load: &LoadView) -> Vec<Drawn> {
    let per_s = load.unit.per_s();
    chart_specs(&per_s)
        .into_iter()
        .map(|spec| draw(load, spec))
        .collect()
}

/// One chart of `load`: a line per series, on a log scale when it may and its values
/// span decades.
fn draw(load: &LoadView, spec: ChartSpec<'_>) -> Drawn {
    let lines: Vec<Line> = load
        .series
        .iter()
        .map(|s| Line {
            label: s.label.clone(),
            points: s.points.iter().map(spec.pick).collect(),
        })
        .collect();
    let log_y = spec.maybe_log && spans_decades(&lines);
    let title = if log_y {
        format!("{} (log scale)", spec.title)
    } else {
        spec.title
    };
    let svg = chart::svg(&Chart {
        title: &title,
        x_label: axis_title(&load.axis),
        y_label: spec.y_label,
        lines: &lines,
        log_y,
        x_bytes: load.axis == "body_size",
    });
    Drawn {
        slug: spec.slug.to_string(),
        title,
        svg,
    }
}
