//! Is a difference between two sets of rounds more than noise? Each point of a suite
//! with rounds (or repeats) has several results; the two sides' values are ranked
//! together. With enough rounds (4 a side and more) an exact two-sided Mann-Whitney U
//! test at `LEVEL`; with fewer, no rank test can reach that level, so the rule critcmp
//! uses: the two sides' min..max ranges must not overlap. One round says nothing.

/// The significance level of the rank test.
pub const LEVEL: f64 = 0.05;

/// Sides larger than this use the normal approximation of U (the exact count grows
/// with n1 * n2 * (n1 + n2)).
const EXACT_UP_TO: usize = 30;

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Evidence {
    /// A side has a single round: its noise is unknown.
    OneRound,
    /// Too few rounds for the rank test: the ranges do not overlap.
    Apart,
    /// Too few rounds for the rank test: the ranges overlap.
    Overlap,
    /// The two-sided p-value of the Mann-Whitney U test.
    RankTest { p: f64 },
}

impl Evidence {
    pub fn significant(&self) -> bool {
        match self {
            Evidence::Apart => true,
            Evidence::RankTest { p } => *p <= LEVEL,
            Evidence::OneRound | Evidence::Overlap => false,
        }
    }

    /// The `test` column of `compare`.
    pub fn label(&self) -> String {
        match self {
            Evidence::OneRound => "-".into(),
            Evidence::Apart => "ranges apart".into(),
            Evidence::Overlap => "ranges overlap".into(),
            Evidence::RankTest { p } => format!("U p={p:.3}"),
        }
    }
}

/// The standard deviation of the ratio of `a`'s mean to `b`'s, relative to the ratio,
/// from each side's rounds: hyperfine's propagation, √((σa/μa)² + (σb/μb)²) with each
/// side's sample standard deviation; 0 for a side of one round (its noise is unknown,
/// which `judge` says as `OneRound`).
pub fn ratio_rel_sd(a: &[f64], b: &[f64]) -> f64 {
    let rel = |v: &[f64]| {
        let n = v.len() as f64;
        let mean = v.iter().sum::<f64>() / n;
        if v.len() < 2 || mean <= 0.0 {
            return 0.0;
        }
        let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
        var.sqrt() / mean
    };
    (rel(a).powi(2) + rel(b).powi(2)).sqrt()
}

/// Ways to choose k of n (as f64: only ratios of them are used).
fn choose(n: usize, k: usize) -> f64 {
    (0..k).fold(1.0, |acc, i| acc * (n - i) as f64 / (i + 1) as f64)
}

/// U of `a` against `b`: pairs where a's value is larger, ties counting one half.
fn u_statistic(a: &[f64], b: &[f64]) -> f64 {
    a.iter()
        .map(|x| {
            b.iter()
                .map(|y| match x.total_cmp(y) {
                    std::cmp::Ordering::Greater => 1.0,
                    std::cmp::Ordering::Equal => 0.5,
                    std::cmp::Ordering::Less => 0.0,
                })
                .sum::<f64>()
        })
        .sum()
}

/// How many orderings of m a-values and n b-values give each U (0..=m*n), exactly.
fn u_counts(m: usize, n: usize) -> Vec<f64> {
    // counts[j][u] for the first i a-values and j b-values, built up over i.
    let mut prev: Vec<Vec<f64>> = (0..=n).map(|_| vec![1.0]).collect();
    for i in 1..=m {
        let mut cur: Vec<Vec<f64>> = vec![vec![1.0]];
        for j in 1..=n {
            let mut v = vec![0.0; i * j + 1];
            // The largest value is an a (beats all j b's) or a b (adds nothing).
            for (u, c) in prev[j].iter().enumerate() {
                v[u + j] += c;
            }
            for (u, c) in cur[j - 1].iter().enumerate() {
                v[u] += c;
            }
            cur.push(v);
        }
        prev = cur;
    }
    prev.swap_remove(n)
}

/// The two-sided p-value of the Mann-Whitney U test of `a` against `b`.
pub fn mann_whitney_p(a: &[f64], b: &[f64]) -> f64 {
    let (m, n) = (a.len(), b.len());
    let u = u_statistic(a, b);
    let small = u.min((m * n) as f64 - u);
    let p = if m <= EXACT_UP_TO && n <= EXACT_UP_TO {
        let counts = u_counts(m, n);
        let total = choose(m + n, m);
        // Ties make U a half-integer: count the orderings at least as extreme.
        let tail: f64 = counts.iter().take(small.floor() as usize + 1).sum();
        2.0 * tail / total
    } else {
        let mean = (m * n) as f64 / 2.0;
        let sd = ((m * n * (m + n + 1)) as f64 / 12.0).sqrt();
        let z = (mean - small - 0.5).max(0.0) / sd;
        2.0 * normal_upper_tail(z)
    };
    p.min(1.0)
}

/// P(Z > z) for a standard normal Z (Abramowitz and Stegun 7.1.26, error < 1.5e-7).
fn normal_upper_tail(z: f64) -> f64 {
    let x = z / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.3275911 * x);
    let poly = t
        * (0.254829592
            + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
    0.5 * poly * (-x * x).exp()
}

/// The smallest p-value sides of these sizes can give: 2 / C(m+n, m).
fn best_p(m: usize, n: usize) -> f64 {
    2.0 / choose(m + n, m)
}

/// The evidence that `a` and `b` (the rounds of one point on two sides) differ.
pub fn judge(a: &[f64], b: &[f64]) -> Evidence {
    if a.len() < 2 || b.len() < 2 {
        return Evidence::OneRound;
    }
    if best_p(a.len(), b.len()) > LEVEL {
        let lo = |v: &[f64]| v.iter().copied().fold(f64::MAX, f64::min);
        let hi = |v: &[f64]| v.iter().copied().fold(f64::MIN, f64::max);
        return if hi(a) < lo(b) || hi(b) < lo(a) {
            Evidence::Apart
        } else {
            Evidence::Overlap
        };
    }
    Evidence::RankTest {
        p: mann_whitney_p(a, b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_p_values_match_the_tables() {
        // 4 vs 4, completely separated: 2 of 70 orderings are as extreme.
        let p = mann_whitney_p(&[1.0, 2.0, 3.0, 4.0], &[5.0, 6.0, 7.0, 8.0]);
        assert!((p - 2.0 / 70.0).abs() < 1e-12, "{p}");
        // U = 1 of 16: P(U <= 1) = 2/70, two-sided 4/70.
        let p = mann_whitney_p(&[1.0, 2.0, 3.0, 5.0], &[4.0, 6.0, 7.0, 8.0]);
        assert!((p - 4.0 / 70.0).abs() < 1e-12, "{p}");
        // Interleaved: nothing.
        let p = mann_whitney_p(&[1.0, 3.0, 5.0, 7.0], &[2.0, 4.0, 6.0, 8.0]);
        assert!(p > 0.5, "{p}");
        assert_eq!(u_counts(2, 2), vec![1.0, 1.0, 2.0, 1.0, 1.0]);
    }

    #[test]
    fn the_ratios_spread_is_hyperfines() {
        // σ/μ of [9, 11] is √2/10; of [20, 20] 0: the ratio's is √2/10.
        let r = ratio_rel_sd(&[9.0, 11.0], &[20.0, 20.0]);
        assert!((r - 2f64.sqrt() / 10.0).abs() < 1e-12, "{r}");
        let both = ratio_rel_sd(&[9.0, 11.0], &[18.0, 22.0]);
        assert!((both - 0.2).abs() < 1e-12, "{both}");
        assert_eq!(ratio_rel_sd(&[5.0], &[7.0]), 0.0);
    }

    #[test]
    fn evidence_by_number_of_rounds() {
        assert_eq!(judge(&[1.0], &[5.0, 6.0]), Evidence::OneRound);
        assert_eq!(judge(&[1.0, 2.0], &[5.0, 6.0]), Evidence::Apart);
        assert_eq!(judge(&[1.0, 5.5], &[5.0, 6.0]), Evidence::Overlap);
        assert!(judge(&[1.0, 2.0, 3.0, 4.0], &[5.0, 6.0, 7.0, 8.0]).significant());
        assert!(!judge(&[1.0, 3.0, 5.0, 7.0], &[2.0, 4.0, 6.0, 8.0]).significant());
        // Large sides use the normal approximation; separated is still significant.
        let a: Vec<f64> = (0..40).map(f64::from).collect();
        let b: Vec<f64> = (100..140).map(f64::from).collect();
        assert!(mann_whitney_p(&a, &b) < 1e-6);
    }
}
