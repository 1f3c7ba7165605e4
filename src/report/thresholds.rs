//! Thresholds in text: the pass/fail table printed after the summary, and the sentence
//! a run that failed one ends with (exit 3).

use super::format::group;
use crate::stats::threshold::Verdict;
use std::fmt::Write as _;

/// "thresholds: 1 of 2 failed" and one row per threshold; empty when none were given.
pub fn table(vs: &[Verdict]) -> String {
    if vs.is_empty() {
        return String::new();
    }
    let failed = vs.iter().filter(|v| !v.pass).count();
    let mut s = match failed {
        0 => format!("thresholds:   all {} passed\n", vs.len()),
        n => format!("thresholds:   {n} of {} failed\n", vs.len()),
    };
    let width = vs.iter().map(|v| v.expression.len()).max().unwrap_or(0);
    for v in vs {
        let _ = writeln!(
            s,
            "  {}  {:<width$}  measured {}",
            if v.pass { "pass" } else { "FAIL" },
            v.expression,
            measured(v)
        );
    }
    s
}

/// "1 of 2 thresholds failed: p99<1ms (measured 10.21ms)", or None when all passed.
pub fn failed(vs: &[Verdict]) -> Option<String> {
    let bad: Vec<String> = vs
        .iter()
        .filter(|v| !v.pass)
        .map(|v| format!("{} (measured {})", v.expression, measured(v)))
        .collect();
    (!bad.is_empty()).then(|| {
        format!(
            "{} of {} thresholds failed: {}",
            bad.len(),
            vs.len(),
            bad.join(", ")
        )
    })
}

fn measured(v: &Verdict) -> String {
    match v.measured {
        Some(m) => format!("{}{}", shown(m), v.unit),
        None => "nothing".into(),
    }
}

/// A value with the digits that matter: 0.0123, 12.34, 123.4, 12,345.
fn shown(v: f64) -> String {
    let a = v.abs();
    if v.fract() == 0.0 && a < 1e15 {
        // A count (or a whole number of anything) reads as one.
        group(a as u64)
    } else if a >= 1000.0 {
        group(v.round() as u64)
    } else if a >= 100.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.4}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(e: &str, m: Option<f64>, unit: &str, pass: bool) -> Verdict {
        Verdict {
            expression: e.into(),
            measured: m,
            unit: unit.into(),
            pass,
        }
    }

    #[test]
    fn the_table_names_the_failing_threshold() {
        let vs = [
            v("p99<200ms", Some(10.214), "ms", true),
            v("errors<0.5%", Some(1.25), "%", false),
            v("rate>=0.95", None, "", false),
        ];
        assert_eq!(
            table(&vs),
            "thresholds:   2 of 3 failed\n  pass  p99<200ms    measured 10.21ms\n  FAIL  errors<0.5%  measured 1.25%\n  FAIL  rate>=0.95   measured nothing\n"
        );
        assert_eq!(
            failed(&vs).unwrap(),
            "2 of 3 thresholds failed: errors<0.5% (measured 1.25%), rate>=0.95 (measured nothing)"
        );
        assert_eq!(failed(&vs[..1]), None);
        assert_eq!(table(&[]), "");
        assert_eq!(shown(52_345.4), "52,345");
    }
}
