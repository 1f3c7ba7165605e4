//! Two result sets side by side: throughput and p99 per matching point. A row says
//! "better" or "worse" only when the rounds of the two sides differ beyond noise
//! (`noise::judge`) and by more than the threshold, and neither side's point is marked
//! (`marks::of_rates`: a round measured under interference, or rounds that disagree on
//! throughput): a marked point is `inconclusive`, as in the report's verdict. The p99 shown is read from the
//! rounds' HDR histograms merged, never averaged; the rank test uses each round's own.

use super::dataset::{Aggregate, Dataset};
use super::marks::{self, Trouble};
use super::noise::{self, Evidence};
use crate::report::format::{micros, rate};

#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    Better,
    Worse,
    /// The rounds do not tell the two sides apart.
    WithinNoise,
    /// A real difference, but smaller than the threshold.
    BelowThreshold,
    /// A side has one round: no way to tell a change from noise.
    OneRound,
    /// A side's point is marked (`marks`): what, and which side ("A" or "B").
    Inconclusive(Trouble, &'static str),
    /// The point is in A but not in B.
    Missing,
}

impl Verdict {
    pub fn label(&self) -> String {
        match self {
            Verdict::Better => "better".into(),
            Verdict::Worse => "worse".into(),
            Verdict::WithinNoise => "within noise".into(),
            Verdict::BelowThreshold => "below threshold".into(),
            Verdict::OneRound => "one round: cannot tell noise".into(),
            Verdict::Inconclusive(t, side) => format!("inconclusive ({} in {side})", t.label()),
            Verdict::Missing => "MISSING in B".into(),
        }
    }
}

/// The mark that keeps a pair of points from counting, A's first, with its side.
fn marked(a: &Aggregate, b: &Aggregate) -> Option<Verdict> {
    let first = |x: &Aggregate, side| {
        marks::of_rates(x)
            .first()
            .map(|t| Verdict::Inconclusive(*t, side))
    };
    first(a, "A").or_else(|| first(b, "B"))
}

pub struct Line {
    pub what: String,
    pub metric: &'static str,
    pub a: String,
    pub b: String,
    pub change_pct: f64,
    /// Rounds on each side: "4/4".
    pub rounds: String,
    pub evidence: Evidence,
    pub verdict: Verdict,
}

/// `higher_is_better` for throughput, not for latency.
fn judge(
    (a, a_runs): (f64, &[f64]),
    (b, b_runs): (f64, &[f64]),
    threshold_pct: f64,
    higher_is_better: bool,
) -> (f64, Evidence, Verdict) {
    let change = if a > 0.0 { (b - a) / a * 100.0 } else { 0.0 };
    let evidence = noise::judge(a_runs, b_runs);
    let gain = if higher_is_better { change } else { -change };
    let verdict = if evidence == Evidence::OneRound {
        Verdict::OneRound
    } else if !evidence.significant() || a <= 0.0 {
        Verdict::WithinNoise
    } else if gain.abs() <= threshold_pct {
        Verdict::BelowThreshold
    } else if gain > 0.0 {
        Verdict::Better
    } else {
        Verdict::Worse
    };
    (change, evidence, verdict)
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
                    super::axis_value(&la.axis, pa.x),
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
                        rounds: format!("{}/0", pa.runs),
                        evidence: Evidence::OneRound,
                        verdict: Verdict::Missing,
                    });
                    continue;
                };
                let rounds = format!("{}/{}", pa.runs, pb.runs);
                let mark = marked(pa, pb);
                let (c, e, v) = judge(
                    (pa.throughput.median, &pa.throughput_runs),
                    (pb.throughput.median, &pb.throughput_runs),
                    threshold_pct,
                    true,
                );
                out.push(Line {
                    what: what.clone(),
                    metric: "throughput",
                    a: rate(pa.throughput.median),
                    b: rate(pb.throughput.median),
                    change_pct: c,
                    rounds: rounds.clone(),
                    evidence: e,
                    verdict: mark.clone().unwrap_or(v),
                });
                let (c, e, v) = judge(
                    (pa.latency.p99, &pa.p99_runs),
                    (pb.latency.p99, &pb.p99_runs),
                    threshold_pct,
                    false,
                );
                out.push(Line {
                    what,
                    metric: "p99 us",
                    a: micros(pa.latency.p99),
                    b: micros(pb.latency.p99),
                    change_pct: c,
                    rounds,
                    evidence: e,
                    verdict: mark.unwrap_or(v),
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_significant_change_past_the_threshold_counts() {
        let (a, b) = ([100.0, 101.0], [80.0, 81.0]);
        let (c, _, v) = judge((100.5, &a), (80.5, &b), 5.0, true);
        assert!((c + 19.900497512437813).abs() < 1e-9);
        assert_eq!(v, Verdict::Worse);
        // Latency: higher is worse, so a drop is better.
        assert_eq!(
            judge((100.5, &a), (80.5, &b), 5.0, false).2,
            Verdict::Better
        );
        // Overlapping rounds: noise, however large the change of the medians.
        let wide = [50.0, 150.0];
        assert_eq!(
            judge((100.0, &wide), (80.5, &b), 5.0, true).2,
            Verdict::WithinNoise
        );
        // Apart but under the threshold.
        let near = [102.0, 103.0];
        assert_eq!(
            judge((100.5, &a), (102.5, &near), 5.0, true).2,
            Verdict::BelowThreshold
        );
        assert_eq!(
            judge((100.0, &[100.0]), (200.0, &b), 5.0, true).2,
            Verdict::OneRound
        );
    }
}
