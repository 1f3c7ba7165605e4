//! Thresholds: limits a run's figures must meet (`--threshold 'p99<200ms'`), one
//! grammar for every load, `wirebench merge`, a suite's loads and `--search`'s
//! conditions (docs/thresholds.md). `expr.rs` reads one, `figure.rs` names the
//! figures, `measure.rs` says whether a run can measure one and what it measured.

pub mod expr;
pub mod figure;
pub mod measure;
pub mod verdict;

pub use expr::Threshold;
pub use measure::Scope;
pub use verdict::Verdict;

use super::result::RunResult;

/// Thresholds read from their texts, each checked against what the run measures:
/// the first that does not parse or does not apply, in one sentence.
pub fn parse_all(texts: &[String], scope: &Scope<'_>) -> Result<Vec<Threshold>, String> {
    texts
        .iter()
        .map(|text| {
            let t = Threshold::parse(text)?;
            scope.check(&t)?;
            Ok(t)
        })
        .collect()
}

/// Each threshold held to `r` (`blocks`: its protocol's `result_blocks_schema`).
pub fn evaluate(ts: &[Threshold], r: &RunResult, blocks: &str) -> Vec<Verdict> {
    ts.iter()
        .map(|t| {
            let base = measure::measured(t, r, blocks);
            Verdict {
                expression: t.text.clone(),
                measured: base.map(|v| v * t.limit.scale),
                unit: t.limit.suffix.to_string(),
                pass: base.is_some_and(|v| t.holds(v)),
            }
        })
        .collect()
}

/// Whether every threshold passed (none given: true).
pub fn all_pass(vs: &[Verdict]) -> bool {
    vs.iter().all(|v| v.pass)
}
