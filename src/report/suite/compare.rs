//! Two result sets side by side: throughput and p99 per matching point, each change
//! set against the noise of the repeats (half their range, both sides added). A
//! change is a regression only past the threshold and past that noise.

use super::dataset::{Aggregate, Dataset, Stat};
use crate::report::format::{micros, rate};

#[derive(Debug, PartialEq)]
pub enum Verdict {
    Same,
    Better,
    Regression,
    /// The point is in A but not in B.
    Missing,
}

pub struct Line {
    pub what: String,
    pub metric: &'static str,
    pub a: String,
    pub b: String,
    pub change_pct: f64,
    pub noise_pct: f64,
    pub verdict: Verdict,
}

/// `higher_is_better` for throughput, not for latency.
fn judge(a: &Stat, b: &Stat, threshold_pct: f64, higher_is_better: bool) -> (f64, f64, Verdict) {
    if a.median <= 0.0 {
        return (0.0, 0.0, Verdict::Same);
    }
    let change = (b.median - a.median) / a.median * 100.0;
    let noise = (a.noise() + b.noise()) * 100.0;
    let worse = if higher_is_better { -change } else { change };
    let verdict = if worse > threshold_pct && worse > noise {
        Verdict::Regression
    } else if -worse > threshold_pct && -worse > noise {
        Verdict::Better
    } else {
        Verdict::Same
    };
    (change, noise, verdict)
}

pub fn compare(a: &Dataset, b: &Dataset, threshold_pct: f64) -> Vec<Line> {
    let mut out = Vec::new();
    for la in &a.loads {
        let lb = b.loads.iter().find(|l| l.name == la.name);
        for sa in &la.series {
            let sb = lb.and_then(|l| l.series.iter().find(|s| s.label == sa.label));
            for pa in &sa.points {
                let what = format!(
                    "{} / {} / {} {}",
                    la.name,
                    sa.label,
                    super::chart::short(pa.x),
                    la.axis
                );
                let pb: Option<&Aggregate> = sb.and_then(|s| s.points.iter().find(|p| p.x == pa.x));
                let Some(pb) = pb else {
                    out.push(Line {
                        what,
                        metric: "all",
                        a: "present".into(),
                        b: "missing".into(),
                        change_pct: 0.0,
                        noise_pct: 0.0,
                        verdict: Verdict::Missing,
                    });
                    continue;
                };
                let (c, n, v) = judge(&pa.throughput, &pb.throughput, threshold_pct, true);
                out.push(Line {
                    what: what.clone(),
                    metric: "throughput",
                    a: rate(pa.throughput.median),
                    b: rate(pb.throughput.median),
                    change_pct: c,
                    noise_pct: n,
                    verdict: v,
                });
                let (c, n, v) = judge(&pa.p99_runs, &pb.p99_runs, threshold_pct, false);
                out.push(Line {
                    what,
                    metric: "p99 us",
                    a: micros(pa.p99_runs.median),
                    b: micros(pb.p99_runs.median),
                    change_pct: c,
                    noise_pct: n,
                    verdict: v,
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn st(m: f64, lo: f64, hi: f64) -> Stat {
        Stat {
            median: m,
            min: lo,
            max: hi,
        }
    }

    #[test]
    fn a_drop_inside_the_noise_is_not_a_regression() {
        // -10% but the repeats spread +-10% on each side: noise 20%.
        let (c, n, v) = judge(&st(100.0, 90.0, 110.0), &st(90.0, 81.0, 99.0), 5.0, true);
        assert!((c + 10.0).abs() < 1e-9 && (n - 20.0).abs() < 1e-9);
        assert_eq!(v, Verdict::Same);
    }

    #[test]
    fn a_drop_past_threshold_and_noise_is_a_regression() {
        let (_, _, v) = judge(&st(100.0, 99.0, 101.0), &st(80.0, 79.0, 81.0), 5.0, true);
        assert_eq!(v, Verdict::Regression);
        let (_, _, v) = judge(&st(100.0, 99.0, 101.0), &st(120.0, 119.0, 121.0), 5.0, true);
        assert_eq!(v, Verdict::Better);
        // Latency: higher is worse.
        let (_, _, v) = judge(
            &st(100.0, 99.0, 101.0),
            &st(120.0, 119.0, 121.0),
            5.0,
            false,
        );
        assert_eq!(v, Verdict::Regression);
        // Under the threshold.
        let (_, _, v) = judge(&st(100.0, 100.0, 100.0), &st(97.0, 97.0, 97.0), 5.0, true);
        assert_eq!(v, Verdict::Same);
    }
}
