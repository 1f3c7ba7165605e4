//! Points held to their load's thresholds (a suite file's `thresholds`): each point's
//! verdicts as its result holds them, and the table the suite prints under its verdict.

use crate::report::thresholds::failed;
use crate::stats::threshold::Verdict;

/// One point file's thresholds and what each measured.
#[derive(Clone, Debug, PartialEq)]
pub struct Held {
    pub file: String,
    pub load: String,
    pub server: String,
    pub verdicts: Vec<Verdict>,
}

impl Held {
    pub fn pass(&self) -> bool {
        self.verdicts.iter().all(|v| v.pass)
    }
}

/// "thresholds: 1 of 4 points failed" and a line per point, the failed ones naming
/// what failed; empty when no point was held to any.
pub fn lines(held: &[Held]) -> Vec<String> {
    if held.is_empty() {
        return Vec::new();
    }
    let bad = held.iter().filter(|h| !h.pass()).count();
    let mut out = vec![match bad {
        0 => format!("thresholds: all {} points passed", held.len()),
        n => format!("thresholds: {n} of {} points failed", held.len()),
    }];
    let width = held.iter().map(|h| h.file.len()).max().unwrap_or(0);
    for h in held {
        let why = failed(&h.verdicts).unwrap_or_else(|| {
            let names: Vec<&str> = h.verdicts.iter().map(|v| v.expression.as_str()).collect();
            format!("{} passed", names.join(", "))
        });
        out.push(format!(
            "  {}  {:<width$}  {why}",
            if h.pass() { "pass" } else { "FAIL" },
            h.file
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(e: &str, measured: f64, pass: bool) -> Verdict {
        Verdict {
            expression: e.into(),
            measured: Some(measured),
            unit: "ms".into(),
            pass,
        }
    }

    #[test]
    fn the_table_names_each_point_and_what_failed() {
        let held = [
            Held {
                file: "a.json".into(),
                load: "l".into(),
                server: "s".into(),
                verdicts: vec![verdict("p99<5ms", 1.5, true)],
            },
            Held {
                file: "bb.json".into(),
                load: "l".into(),
                server: "s".into(),
                verdicts: vec![
                    verdict("p99<5ms", 7.25, false),
                    verdict("p50<9ms", 2.0, true),
                ],
            },
        ];
        assert_eq!(
            lines(&held),
            [
                "thresholds: 1 of 2 points failed",
                "  pass  a.json   p99<5ms passed",
                "  FAIL  bb.json  1 of 2 thresholds failed: p99<5ms (measured 7.25ms)",
            ]
        );
        assert!(lines(&[]).is_empty());
    }
}
