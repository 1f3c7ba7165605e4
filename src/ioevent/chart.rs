//! Time versus N per backend, as libev's and evpp's charts show it: two log-log panels
//! (total time per iteration, time in event processing), medians of each series.
//! SVG is written directly; PNG is that SVG rasterized (resvg, system fonts).

use super::result::Series;
use crate::error::{Error, Result};
use std::fmt::Write as _;
use std::path::Path;

const COLORS: [&str; 6] = [
    "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b",
];
const PANEL_W: f64 = 480.0;
const PANEL_H: f64 = 360.0;
const MARGIN: f64 = 75.0;

fn log_bounds(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (mut lo, mut hi) = (f64::MAX, f64::MIN);
    for v in values.filter(|v| *v > 0.0) {
        lo = lo.min(v.log10());
        hi = hi.max(v.log10());
    }
    if lo > hi {
        return (0.0, 1.0);
    }
    let (lo, hi) = (lo.floor(), hi.ceil());
    if hi - lo < 1.0 {
        (lo, lo + 1.0)
    } else {
        (lo, hi)
    }
}

fn backends(series: &[Series]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for s in series {
        if !names.contains(&s.backend) {
            names.push(s.backend.clone());
        }
    }
    names
}

/// One panel at horizontal offset `x0`; `pick` selects the plotted median.
fn panel(out: &mut String, series: &[Series], x0: f64, title: &str, pick: fn(&Series) -> f64) {
    let (xl, xh) = log_bounds(series.iter().map(|s| s.pairs as f64));
    let (yl, yh) = log_bounds(series.iter().map(pick));
    let (left, top) = (x0 + MARGIN, MARGIN);
    let (w, h) = (PANEL_W - MARGIN - 20.0, PANEL_H - 2.0 * MARGIN);
    let px = |n: f64| left + (n.log10() - xl) / (xh - xl) * w;
    let py = |v: f64| top + h - (v.max(1e-9).log10() - yl) / (yh - yl) * h;
    let _ = write!(
        out,
        r##"<text x="{:.1}" y="{:.1}" font-size="15" text-anchor="middle">{title}</text><rect x="{left:.1}" y="{top:.1}" width="{w:.1}" height="{h:.1}" fill="none" stroke="#444"/>"##,
        left + w / 2.0,
        top - 15.0
    );
    for d in (yl as i32)..=(yh as i32) {
        let y = py(10f64.powi(d));
        let _ = write!(
            out,
            r##"<line x1="{left:.1}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#ddd"/><text x="{:.1}" y="{:.1}" font-size="11" text-anchor="end">{}</text>"##,
            left + w,
            left - 6.0,
            y + 4.0,
            super::super::report::format::group(10f64.powi(d) as u64)
        );
    }
    let mut ns: Vec<usize> = series.iter().map(|s| s.pairs).collect();
    ns.sort_unstable();
    ns.dedup();
    for n in &ns {
        let x = px(*n as f64);
        let _ = write!(
            out,
            r##"<line x1="{x:.1}" y1="{:.1}" x2="{x:.1}" y2="{:.1}" stroke="#ddd"/><text x="{x:.1}" y="{:.1}" font-size="11" text-anchor="middle">{n}</text>"##,
            top,
            top + h,
            top + h + 16.0
        );
    }
    let _ = write!(
        out,
        r##"<text x="{:.1}" y="{:.1}" font-size="12" text-anchor="middle">socketpairs (N)</text><text x="{:.1}" y="{:.1}" font-size="12" text-anchor="middle" transform="rotate(-90 {:.1} {:.1})">microseconds per iteration</text>"##,
        left + w / 2.0,
        top + h + 36.0,
        x0 + 14.0,
        top + h / 2.0,
        x0 + 14.0,
        top + h / 2.0
    );
    for (i, name) in backends(series).iter().enumerate() {
        let color = COLORS[i % COLORS.len()];
        let mut pts: Vec<(f64, f64)> = series
            .iter()
            .filter(|s| &s.backend == name)
            .map(|s| (px(s.pairs as f64), py(pick(s))))
            .collect();
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        let path: Vec<String> = pts.iter().map(|(x, y)| format!("{x:.1},{y:.1}")).collect();
        let _ = write!(
            out,
            r##"<polyline points="{}" fill="none" stroke="{color}" stroke-width="2"/>"##,
            path.join(" ")
        );
        for (x, y) in &pts {
            let _ = write!(
                out,
                r##"<circle cx="{x:.1}" cy="{y:.1}" r="3.5" fill="{color}"/>"##
            );
        }
    }
}

/// The whole chart as a standalone SVG document.
pub fn svg(series: &[Series]) -> String {
    let width = 2.0 * PANEL_W;
    let height = PANEL_H + 30.0;
    let mut out = format!(
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="DejaVu Sans, Arial, sans-serif"><rect width="100%" height="100%" fill="white"/>"##
    );
    panel(
        &mut out,
        series,
        0.0,
        "total time per iteration (median)",
        |s| s.summary.total_us.median,
    );
    panel(
        &mut out,
        series,
        PANEL_W,
        "time in event processing (median)",
        |s| s.summary.loop_us.median,
    );
    for (i, name) in backends(series).iter().enumerate() {
        let x = MARGIN + i as f64 * 110.0;
        let y = PANEL_H + 10.0;
        let color = COLORS[i % COLORS.len()];
        let _ = write!(
            out,
            r##"<rect x="{x:.1}" y="{:.1}" width="14" height="4" fill="{color}"/><text x="{:.1}" y="{:.1}" font-size="12">{name}</text>"##,
            y - 4.0,
            x + 20.0,
            y + 2.0
        );
    }
    out.push_str("</svg>\n");
    out
}

/// Writes the chart as SVG or PNG, by the file's extension.
pub fn write(path: &Path, series: &[Series]) -> Result<()> {
    let doc = svg(series);
    let fail =
        |e: String| Error::runtime(format!("cannot write the chart {}: {e}", path.display()));
    match path.extension().and_then(|e| e.to_str()) {
        Some("svg") => std::fs::write(path, doc).map_err(|e| fail(e.to_string())),
        Some("png") => crate::report::image::write_png(&doc, path),
        _ => Err(Error::usage(format!(
            "--chart {}: the file name must end in .svg or .png",
            path.display()
        ))),
    }
}
