//! The summary's table of churn stages (`connect --churn --stages`, read from the
//! result's `stages`): per stage its length, the rate of new cycles it ended at and
//! asked, the cycles started in it (attempts: established and failed), their echo
//! (sent, ok, errors) and their connect latency. A cycle counts in the stage its
//! attempt started in; its echo in the stage it was sent in.

use crate::report::format::{group, micros, rate};
use crate::stats::stages::StageFigures;
use crate::stats::LatencySummary;
use std::fmt::Write as _;

/// The table, a header and a row per stage; empty without stages.
pub fn table(stages: Option<&Vec<StageFigures>>) -> String {
    let Some(list) = stages else {
        return String::new();
    };
    let mut s = String::from(
        "stages:        #    seconds   target/s    asked/s   attempts established     failed  cycles ok echo errors connect p50 connect p99\n",
    );
    let na = |l: Option<&LatencySummary>, p: fn(&LatencySummary) -> f64| match l {
        Some(l) if l.count > 0 => micros(p(l)),
        _ => "n/a".into(),
    };
    for (i, st) in list.iter().enumerate() {
        let l = st.connect.as_ref().map(|c| &c.latency_us);
        let _ = writeln!(
            s,
            "{:>16} {:>10.3} {:>10} {:>10} {:>10} {:>11} {:>10} {:>10} {:>11} {:>11} {:>11}",
            i + 1,
            st.seconds,
            rate(st.target_per_s.unwrap_or(0.0)),
            rate(st.asked_per_s.unwrap_or(0.0)),
            group(st.connections + st.connect_errors),
            group(st.connections),
            group(st.connect_errors),
            group(st.ok),
            group(st.errors),
            na(l, |l| l.p50),
            na(l, |l| l.p99),
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::stages::StageCount;
    use crate::stats::Latency;

    #[test]
    fn a_row_per_stage_with_its_cycles() {
        let mut c = StageCount {
            sent: 40,
            ok: 39,
            errors: 1,
            connections: 40,
            connect_errors: 2,
            connect_latency: Some(Latency::new()),
            ..StageCount::default()
        };
        if let Some(l) = c.connect_latency.as_mut() {
            l.record_n(120_000, 40);
        }
        let list = vec![StageFigures::new(2.0, 20.0, 40.0, &c)];
        let t = table(Some(&list));
        let rows: Vec<&str> = t.lines().collect();
        assert_eq!(rows.len(), 2, "{t}");
        let cells: Vec<&str> = rows[1].split_whitespace().collect();
        assert_eq!(
            cells,
            ["1", "2.000", "20", "20", "42", "40", "2", "39", "1", "120", "120"]
        );
        assert_eq!(table(None), "");
    }
}
