//! A line chart as a standalone SVG: one line per series, whiskers for the range of
//! the repeats, log or linear axes, a legend below. Embedded inline in the HTML
//! report and rasterized by `report::image` for --png.

use std::fmt::Write as _;

pub const COLORS: [&str; 8] = [
    "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf",
];
const W: f64 = 560.0;
const PLOT_H: f64 = 250.0;
const LEFT: f64 = 78.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 40.0;

/// One plotted value with the range of its repeats.
#[derive(Clone, Copy, Debug)]
pub struct Pt {
    pub x: f64,
    pub y: f64,
    pub lo: f64,
    pub hi: f64,
}

pub struct Line {
    pub label: String,
    pub points: Vec<Pt>,
}

pub struct Chart<'a> {
    pub title: &'a str,
    pub x_label: &'a str,
    pub y_label: &'a str,
    pub lines: &'a [Line],
    pub log_y: bool,
    /// The x values are sizes in bytes: label them in IEC units.
    pub x_bytes: bool,
}

pub(super) fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Short tick labels: 1.5k, 2M, 0.25.
pub fn short(v: f64) -> String {
    let a = v.abs();
    let (n, suffix) = if a >= 1e9 {
        (v / 1e9, "G")
    } else if a >= 1e6 {
        (v / 1e6, "M")
    } else if a >= 1e3 {
        (v / 1e3, "k")
    } else {
        (v, "")
    };
    let t = if n.fract().abs() < 1e-9 || n.abs() >= 100.0 {
        format!("{n:.0}")
    } else if n.abs() >= 10.0 {
        format!("{n:.1}")
    } else {
        format!("{n:.2}")
    };
    let t = if t.contains('.') {
        t.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        t
    };
    format!("{t}{suffix}")
}

/// A "nice" step near range/target: 1, 2 or 5 times a power of ten.
fn nice_step(range: f64, target: f64) -> f64 {
    let raw = (range / target).max(1e-12);
    let mag = 10f64.powf(raw.log10().floor());
    let m = raw / mag;
    let n = if m < 1.5 {
        1.0
    } else if m < 3.5 {
        2.0
    } else if m < 7.5 {
        5.0
    } else {
        10.0
    };
    n * mag
}

/// A y (or x) axis: its range, linear or log; the time series (`series.rs`) use it too.
pub(super) struct Scale {
    lo: f64,
    hi: f64,
    log: bool,
}

impl Scale {
    pub(super) fn new(values: &[f64], log: bool, from_zero: bool) -> Scale {
        let v: Vec<f64> = values
            .iter()
            .copied()
            .filter(|x| x.is_finite() && (!log || *x > 0.0))
            .collect();
        if v.is_empty() {
            return Scale {
                lo: if log { 1.0 } else { 0.0 },
                hi: if log { 10.0 } else { 1.0 },
                log,
            };
        }
        let (mut lo, mut hi) = (
            v.iter().copied().fold(f64::MAX, f64::min),
            v.iter().copied().fold(f64::MIN, f64::max),
        );
        if log {
            lo = 10f64.powf(lo.log10().floor());
            hi = 10f64.powf(hi.log10().ceil());
            if hi <= lo {
                hi = lo * 10.0;
            }
        } else {
            if from_zero {
                lo = lo.min(0.0);
            }
            if hi <= lo {
                hi = lo + 1.0;
            }
            let step = nice_step(hi - lo, 5.0);
            lo = (lo / step).floor() * step;
            hi = (hi / step).ceil() * step;
        }
        Scale { lo, hi, log }
    }

    pub(super) fn frac(&self, v: f64) -> f64 {
        if self.log {
            (v.max(self.lo).log10() - self.lo.log10()) / (self.hi.log10() - self.lo.log10())
        } else {
            (v - self.lo) / (self.hi - self.lo)
        }
    }

    pub(super) fn ticks(&self) -> Vec<f64> {
        if self.log {
            let (a, b) = (
                self.lo.log10().round() as i32,
                self.hi.log10().round() as i32,
            );
            (a..=b).map(|d| 10f64.powi(d)).collect()
        } else {
            let step = nice_step(self.hi - self.lo, 5.0);
            let mut t = Vec::new();
            let mut v = self.lo;
            while v <= self.hi + step * 1e-6 {
                t.push(v);
                v += step;
            }
            t
        }
    }
}

/// Where values land on the plot: the swept x values, evenly spaced (categorical: 1,
/// 50, 250, 500, 1000 or 1k..64k), and the y scale over every point and its range.
struct Frame {
    xs: Vec<f64>,
    pw: f64,
    sy: Scale,
}

impl Frame {
    fn of(c: &Chart<'_>) -> Frame {
        let mut xs: Vec<f64> = c
            .lines
            .iter()
            .flat_map(|l| l.points.iter().map(|p| p.x))
            .collect();
        xs.sort_by(f64::total_cmp);
        xs.dedup();
        let ys: Vec<f64> = c
            .lines
            .iter()
            .flat_map(|l| l.points.iter().flat_map(|p| [p.y, p.lo, p.hi]))
            .collect();
        Frame {
            xs,
            pw: W - LEFT - RIGHT,
            sy: Scale::new(&ys, c.log_y, true),
        }
    }

    fn xpos(&self, x: f64) -> f64 {
        let i = self.xs.iter().position(|v| *v == x).unwrap_or(0) as f64;
        let n = self.xs.len().max(1) as f64;
        LEFT + (i + 0.5) / n * self.pw
    }

    fn ypos(&self, v: f64) -> f64 {
        TOP + PLOT_H - self.sy.frac(v).clamp(0.0, 1.0) * PLOT_H
    }
}

/// The chart as an SVG document.
pub fn svg(c: &Chart<'_>) -> String {
    let rows = c.lines.len().div_ceil(2);
    let height = TOP + PLOT_H + 50.0 + rows as f64 * 18.0 + 8.0;
    let f = Frame::of(c);
    let mut o = format!(
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{height}" viewBox="0 0 {W} {height}" font-family="DejaVu Sans, Arial, sans-serif"><rect width="100%" height="100%" fill="white"/><text x="{:.1}" y="22" font-size="15" text-anchor="middle" font-weight="bold">{}</text>"##,
        W / 2.0,
        esc(c.title)
    );
    axes(&mut o, c, &f);
    for (i, line) in c.lines.iter().enumerate() {
        series(&mut o, i, line, &f);
    }
    o.push_str("</svg>\n");
    o
}

/// The grid, the ticks of both axes, the plot's frame and the axis labels.
fn axes(o: &mut String, c: &Chart<'_>, f: &Frame) {
    let pw = f.pw;
    for t in f.sy.ticks() {
        let y = f.ypos(t);
        let _ = write!(
            o,
            r##"<line x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#e3e3e3"/><text x="{:.1}" y="{:.1}" font-size="11" text-anchor="end">{}</text>"##,
            LEFT + pw,
            LEFT - 6.0,
            y + 4.0,
            short(t)
        );
    }
    for &x in &f.xs {
        let px = f.xpos(x);
        let _ = write!(
            o,
            r##"<line x1="{px:.1}" y1="{TOP}" x2="{px:.1}" y2="{:.1}" stroke="#f0f0f0"/><text x="{px:.1}" y="{:.1}" font-size="11" text-anchor="middle">{}</text>"##,
            TOP + PLOT_H,
            TOP + PLOT_H + 16.0,
            if c.x_bytes {
                crate::report::format::iec(x)
            } else {
                short(x)
            }
        );
    }
    let _ = write!(
        o,
        r##"<rect x="{LEFT}" y="{TOP}" width="{pw:.1}" height="{PLOT_H}" fill="none" stroke="#555"/><text x="{:.1}" y="{:.1}" font-size="12" text-anchor="middle">{}</text><text x="16" y="{:.1}" font-size="12" text-anchor="middle" transform="rotate(-90 16 {:.1})">{}</text>"##,
        LEFT + pw / 2.0,
        TOP + PLOT_H + 34.0,
        esc(c.x_label),
        TOP + PLOT_H / 2.0,
        TOP + PLOT_H / 2.0,
        esc(c.y_label)
    );
}

/// Line `i`: its polyline, a dot and a range bar per point, its legend entry.
fn series(o: &mut String, i: usize, line: &Line, f: &Frame) {
    let color = COLORS[i % COLORS.len()];
    let mut pts: Vec<Pt> = line
        .points
        .iter()
        .copied()
        .filter(|p| p.y.is_finite())
        .collect();
    pts.sort_by(|a, b| a.x.total_cmp(&b.x));
    let path: Vec<String> = pts
        .iter()
        .map(|p| format!("{:.1},{:.1}", f.xpos(p.x), f.ypos(p.y)))
        .collect();
    let _ = write!(
        o,
        r##"<polyline points="{}" fill="none" stroke="{color}" stroke-width="2.2"/>"##,
        path.join(" ")
    );
    for p in &pts {
        let (x, y) = (f.xpos(p.x), f.ypos(p.y));
        if p.hi > p.lo {
            let _ = write!(
                o,
                r##"<line x1="{x:.1}" y1="{:.1}" x2="{x:.1}" y2="{:.1}" stroke="{color}" stroke-width="1.2"/>"##,
                f.ypos(p.lo),
                f.ypos(p.hi)
            );
        }
        let _ = write!(
            o,
            r##"<circle cx="{x:.1}" cy="{y:.1}" r="3.6" fill="{color}"/>"##
        );
    }
    let lx = LEFT + (i % 2) as f64 * (f.pw / 2.0);
    let ly = TOP + PLOT_H + 56.0 + (i / 2) as f64 * 18.0;
    let _ = write!(
        o,
        r##"<rect x="{lx:.1}" y="{:.1}" width="16" height="4" fill="{color}"/><text x="{:.1}" y="{:.1}" font-size="12">{}</text>"##,
        ly - 5.0,
        lx + 22.0,
        ly,
        esc(&line.label)
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_labels() {
        assert_eq!(short(1500.0), "1.5k");
        assert_eq!(short(65536.0), "65.5k");
        assert_eq!(short(2_000_000.0), "2M");
        assert_eq!(short(0.25), "0.25");
        assert_eq!(short(50.0), "50");
    }

    #[test]
    fn draws_every_series_and_point() {
        let lines = vec![
            Line {
                label: "a".into(),
                points: vec![
                    Pt {
                        x: 1.0,
                        y: 10.0,
                        lo: 9.0,
                        hi: 11.0,
                    },
                    Pt {
                        x: 50.0,
                        y: 20.0,
                        lo: 20.0,
                        hi: 20.0,
                    },
                ],
            },
            Line {
                label: "b<c>".into(),
                points: vec![Pt {
                    x: 1.0,
                    y: 5.0,
                    lo: 5.0,
                    hi: 5.0,
                }],
            },
        ];
        let s = svg(&Chart {
            title: "t",
            x_label: "x",
            y_label: "y",
            lines: &lines,
            log_y: false,
            x_bytes: true,
        });
        assert!(s.contains(">1 B</text>") && s.contains(">50 B</text>"));
        assert_eq!(s.matches("<polyline").count(), 2);
        assert_eq!(s.matches("<circle").count(), 3);
        assert!(s.contains("b&lt;c&gt;"));
        assert!(s.starts_with("<svg") && s.trim_end().ends_with("</svg>"));
    }
}
