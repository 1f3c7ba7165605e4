//! Time series of one point: its rounds' interval rows one after another (a merged
//! shard result's rows are already one per wall-clock step), drawn as one SVG of two
//! panels on one time axis: throughput and errors per second above, p50, p99 and
//! p99.9 per interval below (log scale when they span decades). Dashed lines mark
//! where a round ends. Every axis says its unit.

use super::chart::{esc, short, Scale, COLORS};
use crate::stats::IntervalRow;
use std::fmt::Write as _;

const W: f64 = 760.0;
const LEFT: f64 = 78.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 40.0;
const PANEL_H: f64 = 170.0;
const GAP: f64 = 62.0;

/// A point's series: its rows (times from the start of its first round) and where each
/// round but the last ends, seconds.
#[derive(Clone, Debug, Default)]
pub struct PointSeries {
    pub rows: Vec<IntervalRow>,
    pub round_ends_s: Vec<f64>,
}

impl PointSeries {
    /// A point's rounds, in order (each its measured time and its rows), one after
    /// another: the rows as `wirebench merge` lays rounds end to end.
    pub fn of_rounds(rounds: &[(f64, &[IntervalRow])], replies: bool) -> PointSeries {
        let mut ends = Vec::new();
        let mut at = 0.0;
        for (elapsed_s, _) in rounds.iter().take(rounds.len().saturating_sub(1)) {
            at += elapsed_s;
            ends.push(at);
        }
        PointSeries {
            rows: crate::stats::merge::intervals::sequential(rounds, replies),
            round_ends_s: ends,
        }
    }
}

/// One panel's line: a label and its (t, value) points; a missing value breaks it.
struct Curve<'a> {
    label: &'a str,
    points: Vec<(f64, Option<f64>)>,
}

/// The SVG of `s`, titled `title`; `per_s` names what the throughput counts
/// ("requests/s"). None when there is no interval to draw.
pub fn svg(title: &str, per_s: &str, s: &PointSeries) -> Option<String> {
    if s.rows.is_empty() {
        return None;
    }
    let end = s.rows.iter().map(|r| r.t_s).fold(0.0, f64::max).max(1e-3);
    let xs = Scale::new(&[0.0, end], false, true);
    let pw = W - LEFT - RIGHT;
    let height = TOP + 2.0 * PANEL_H + GAP + 56.0;
    let mut o = format!(
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{height}" viewBox="0 0 {W} {height}" font-family="DejaVu Sans, Arial, sans-serif"><rect width="100%" height="100%" fill="white"/><text x="{:.1}" y="22" font-size="15" text-anchor="middle" font-weight="bold">{}</text>"##,
        W / 2.0,
        esc(title)
    );
    // Each row drawn at its middle: a rate or a percentile holds over its interval.
    let mid = |r: &IntervalRow| r.t_s - r.duration_s / 2.0;
    let per = |n: u64, r: &IntervalRow| n as f64 / r.duration_s.max(1e-9);
    let rates = [
        Curve {
            label: "throughput",
            points: s
                .rows
                .iter()
                .map(|r| (mid(r), Some(r.msgs_per_s)))
                .collect(),
        },
        Curve {
            label: "errors",
            points: s
                .rows
                .iter()
                .map(|r| (mid(r), Some(per(r.errors + r.connect_errors, r))))
                .collect(),
        },
    ];
    let pick = |f: fn(&IntervalRow) -> Option<f64>| -> Vec<(f64, Option<f64>)> {
        s.rows.iter().map(|r| (mid(r), f(r))).collect()
    };
    let latency = [
        Curve {
            label: "p50",
            points: pick(|r| r.p50_us),
        },
        Curve {
            label: "p99",
            points: pick(|r| r.p99_us),
        },
        Curve {
            label: "p99.9",
            points: pick(|r| r.p99_9_us),
        },
    ];
    let lat_values: Vec<f64> = latency
        .iter()
        .flat_map(|c| c.points.iter().filter_map(|p| p.1))
        .filter(|v| *v > 0.0)
        .collect();
    let log = spans_decades(&lat_values);
    let panels = [
        (TOP, format!("{per_s} per interval"), &rates[..], false, 0),
        (
            TOP + PANEL_H + GAP,
            format!(
                "latency per interval (microseconds{})",
                if log { ", log scale" } else { "" }
            ),
            &latency[..],
            log,
            2,
        ),
    ];
    for (top, y_label, curves, log, first_color) in panels {
        panel(&mut o, top, &y_label, curves, log, first_color, &xs, s);
    }
    let _ = write!(
        o,
        r##"<text x="{:.1}" y="{:.1}" font-size="12" text-anchor="middle">time (seconds of the measured phase{})</text>"##,
        LEFT + pw / 2.0,
        height - 10.0,
        if s.round_ends_s.is_empty() {
            ""
        } else {
            ", rounds one after another"
        }
    );
    o.push_str("</svg>\n");
    Some(o)
}

fn spans_decades(v: &[f64]) -> bool {
    let (lo, hi) = v
        .iter()
        .fold((f64::MAX, 0f64), |(a, b), y| (a.min(*y), b.max(*y)));
    !v.is_empty() && hi / lo > 20.0
}

/// One panel: its grid and y ticks, x ticks, round ends, curves and legend.
#[allow(clippy::too_many_arguments)]
fn panel(
    o: &mut String,
    top: f64,
    y_label: &str,
    curves: &[Curve<'_>],
    log: bool,
    first_color: usize,
    xs: &Scale,
    s: &PointSeries,
) {
    let pw = W - LEFT - RIGHT;
    let values: Vec<f64> = curves
        .iter()
        .flat_map(|c| c.points.iter().filter_map(|p| p.1))
        .collect();
    let ys = Scale::new(&values, log, true);
    let y = |v: f64| top + PANEL_H - ys.frac(v).clamp(0.0, 1.0) * PANEL_H;
    let x = |t: f64| LEFT + xs.frac(t).clamp(0.0, 1.0) * pw;
    for t in ys.ticks() {
        let _ = write!(
            o,
            r##"<line x1="{LEFT}" y1="{0:.1}" x2="{1:.1}" y2="{0:.1}" stroke="#e3e3e3"/><text x="{2:.1}" y="{3:.1}" font-size="11" text-anchor="end">{4}</text>"##,
            y(t),
            LEFT + pw,
            LEFT - 6.0,
            y(t) + 4.0,
            short(t)
        );
    }
    for t in xs.ticks() {
        let _ = write!(
            o,
            r##"<line x1="{0:.1}" y1="{top}" x2="{0:.1}" y2="{1:.1}" stroke="#f0f0f0"/><text x="{0:.1}" y="{2:.1}" font-size="11" text-anchor="middle">{3}</text>"##,
            x(t),
            top + PANEL_H,
            top + PANEL_H + 15.0,
            short(t)
        );
    }
    for &end in &s.round_ends_s {
        let _ = write!(
            o,
            r##"<line x1="{0:.1}" y1="{top}" x2="{0:.1}" y2="{1:.1}" stroke="#888" stroke-dasharray="4 3"/>"##,
            x(end),
            top + PANEL_H
        );
    }
    let mid = top + PANEL_H / 2.0;
    let _ = write!(
        o,
        r##"<rect x="{LEFT}" y="{top}" width="{pw:.1}" height="{PANEL_H}" fill="none" stroke="#555"/><text x="16" y="{mid:.1}" font-size="12" text-anchor="middle" transform="rotate(-90 16 {mid:.1})">{}</text>"##,
        esc(y_label)
    );
    for (i, c) in curves.iter().enumerate() {
        let color = COLORS[(first_color + i) % COLORS.len()];
        // A missing value (nothing timed in the interval) breaks the line there.
        for run in c.points.split(|p| p.1.is_none()) {
            let pts: Vec<String> = run
                .iter()
                .filter_map(|&(t, v)| v.map(|v| format!("{:.1},{:.1}", x(t), y(v))))
                .collect();
            if !pts.is_empty() {
                let _ = write!(
                    o,
                    r##"<polyline points="{}" fill="none" stroke="{color}" stroke-width="1.6"/>"##,
                    pts.join(" ")
                );
            }
        }
        let lx = LEFT + i as f64 * 110.0;
        let ly = top + PANEL_H + 32.0;
        let _ = write!(
            o,
            r##"<rect x="{lx:.1}" y="{:.1}" width="16" height="4" fill="{color}"/><text x="{:.1}" y="{ly:.1}" font-size="12">{}</text>"##,
            ly - 5.0,
            lx + 22.0,
            esc(c.label)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(t_s: f64, ok: u64, errors: u64, p99: Option<f64>) -> IntervalRow {
        IntervalRow {
            t_s,
            duration_s: 1.0,
            ok,
            errors,
            msgs_per_s: ok as f64,
            p50_us: p99.map(|p| p / 10.0),
            p99_us: p99,
            p99_9_us: p99.map(|p| p * 2.0),
            ..Default::default()
        }
    }

    #[test]
    fn draws_both_panels_with_their_units_and_breaks_where_nothing_was_timed() {
        let s = PointSeries {
            rows: vec![
                row(1.0, 1000, 0, Some(100.0)),
                row(2.0, 0, 5, None),
                row(3.0, 2000, 0, Some(50_000.0)),
                row(4.0, 1500, 0, Some(200.0)),
            ],
            round_ends_s: vec![2.0],
        };
        let drawn = svg("http 50 conns", "requests/s", &s).unwrap();
        assert!(drawn.contains(">requests/s per interval</text>"), "{drawn}");
        assert!(drawn.contains(">latency per interval (microseconds, log scale)</text>"));
        assert!(drawn
            .contains(">time (seconds of the measured phase, rounds one after another)</text>"));
        for label in ["throughput", "errors", "p50", "p99", "p99.9"] {
            assert!(drawn.contains(&format!(">{label}</text>")), "{label}");
        }
        // Throughput and errors: one line each; each percentile broken by the
        // interval that timed nothing: two pieces each.
        assert_eq!(drawn.matches("<polyline").count(), 2 + 3 * 2);
        assert_eq!(
            drawn.matches("stroke-dasharray").count(),
            2,
            "a round end per panel"
        );
        assert!(drawn.starts_with("<svg ") && drawn.ends_with("</svg>\n"));
        // Rounds one after another: the second's rows shifted by the first's time.
        let (a, b) = (
            [row(1.0, 10, 0, None)],
            [row(1.0, 20, 0, None), row(2.0, 30, 0, None)],
        );
        let two = PointSeries::of_rounds(&[(1.5, &a[..]), (2.0, &b[..])], true);
        let ts: Vec<f64> = two.rows.iter().map(|r| r.t_s).collect();
        assert_eq!((ts, two.round_ends_s), (vec![1.0, 2.5, 3.5], vec![1.5]));
        assert_eq!(two.rows[2].total_ok, 60);
        assert_eq!(super::svg("x", "requests/s", &PointSeries::default()), None);
    }
}
