//! Why a point is no basis for "faster", "slower", "better" or "worse": a round of it
//! ran while other processes (or the hypervisor) took more than
//! `stats::interference::THRESHOLD` of a CPU it used, or its rounds disagree beyond
//! the noise model (their spread past `DISAGREE`). The verdict and `compare` mark the
//! same points by the same rules.

use super::dataset::{Aggregate, Stat};
use crate::stats::interference::Mark;

/// Rounds disagree when (max - min) / median of a point's rounds passes this.
pub const DISAGREE: f64 = 0.20;

/// The rounds of one figure disagree.
fn spread(a: &Aggregate, s: &Stat) -> bool {
    a.runs > 1 && s.median > 0.0 && (s.max - s.min) / s.median > DISAGREE
}

/// The point's rounds disagree on throughput or on CPU per request (the verdict
/// reports both).
pub fn disagrees(a: &Aggregate) -> bool {
    spread(a, &a.throughput) || spread(a, &a.us_per_req)
}

/// Why a point (or a pair of points, one a side) does not count.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Trouble {
    /// A round ran while others took a share of its CPUs: the largest.
    Busy(Mark),
    /// Its rounds disagree by more than `DISAGREE`.
    Disagree,
}

impl Trouble {
    /// "busy: other processes took 30% of CPU 0", "rounds disagree".
    pub fn label(&self) -> String {
        match self {
            Trouble::Busy(m) => format!("busy: {}", m.describe()),
            Trouble::Disagree => "rounds disagree".into(),
        }
    }
}

/// The largest mark of these.
fn worst(marks: impl Iterator<Item = Mark>) -> Option<Mark> {
    marks.max_by(|a, b| a.share.total_cmp(&b.share))
}

/// What keeps a point from counting in `compare`, whose rows are throughput and
/// latency: interference first, then rounds that disagree on throughput.
pub fn of_rates(a: &Aggregate) -> Vec<Trouble> {
    let mut out: Vec<Trouble> = worst(a.busy.iter().copied())
        .map(Trouble::Busy)
        .into_iter()
        .collect();
    if spread(a, &a.throughput) {
        out.push(Trouble::Disagree);
    }
    out
}

/// What keeps a pair of points (either side's rounds) from counting in the verdict:
/// interference first, then disagreeing rounds.
pub fn of_pair(a: &Aggregate, b: &Aggregate) -> Vec<Trouble> {
    let mut out = Vec::new();
    if let Some(m) = worst(a.busy.iter().chain(&b.busy).copied()) {
        out.push(Trouble::Busy(m));
    }
    if disagrees(a) || disagrees(b) {
        out.push(Trouble::Disagree);
    }
    out
}

/// Why `marked` of `points` did not count, in one clause: "2 of 4 points measured while
/// other processes took 30% of CPU 0; 1 of 4 with rounds that disagree by more than
/// 20%". None when none is marked.
pub fn clause(marked: &[&[Trouble]], points: usize) -> Option<String> {
    let busy: Vec<Mark> = marked
        .iter()
        .flat_map(|t| t.iter())
        .filter_map(|t| match t {
            Trouble::Busy(m) => Some(*m),
            Trouble::Disagree => None,
        })
        .collect();
    let busy_points = marked
        .iter()
        .filter(|t| t.iter().any(|x| matches!(x, Trouble::Busy(_))))
        .count();
    let noisy = marked
        .iter()
        .filter(|t| t.contains(&Trouble::Disagree))
        .count();
    let mut parts = Vec::new();
    if let Some(m) = worst(busy.into_iter()) {
        let up_to = if busy_points > 1 { "up to " } else { "" };
        let said = m
            .describe()
            .replacen(" took ", &format!(" took {up_to}"), 1);
        parts.push(format!(
            "{busy_points} of {points} point{} measured while {said}",
            if points == 1 { "" } else { "s" }
        ));
    }
    if noisy > 0 {
        parts.push(format!(
            "{noisy} of {points} with rounds that disagree by more than {:.0}%",
            DISAGREE * 100.0
        ));
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mark(cpu: u32, share: f64) -> Trouble {
        Trouble::Busy(Mark {
            cpu,
            share,
            steal: false,
        })
    }

    #[test]
    fn the_clause_counts_points_and_names_the_worst_cpu() {
        let (a, b, noisy) = ([mark(0, 0.3)], [mark(1, 0.12)], [Trouble::Disagree]);
        assert_eq!(
            clause(&[&a, &b], 4).unwrap(),
            "2 of 4 points measured while other processes took up to 30% of CPU 0"
        );
        assert_eq!(
            clause(&[&b, &noisy], 4).unwrap(),
            "1 of 4 points measured while other processes took 12% of CPU 1; 1 of 4 with rounds that disagree by more than 20%"
        );
        assert_eq!(clause(&[], 4), None);
        assert_eq!(
            mark(0, 0.3).label(),
            "busy: other processes took 30% of CPU 0"
        );
    }
}
