//! The summary's table of stages (`--stages`): per stage its length, target, the rate
//! it asked and the rate sent in it, its counts and latency (microseconds, from the
//! intended send time). Requests count in the stage they were meant to go in.

use super::format::{group, micros, rate};
use crate::stats::stages::StageFigures;
use std::fmt::Write as _;

/// The table, a header and a row per stage; empty without stages.
pub fn table(stages: Option<&Vec<StageFigures>>) -> String {
    let Some(list) = stages else {
        return String::new();
    };
    let mut s = String::from(
        "stages:        #    seconds   target/s    asked/s     sent/s         sent           ok     errors        p50        p99\n",
    );
    let na = |us: f64, n: u64| if n > 0 { micros(us) } else { "n/a".into() };
    for (i, st) in list.iter().enumerate() {
        let l = &st.latency_us;
        let _ = writeln!(
            s,
            "{:>16} {:>10.3} {:>10} {:>10} {:>10} {:>12} {:>12} {:>10} {:>10} {:>10}",
            i + 1,
            st.seconds,
            rate(st.target_per_s),
            rate(st.asked_per_s),
            rate(st.achieved_per_s),
            group(st.sent),
            group(st.ok),
            group(st.errors),
            na(l.p50, l.count),
            na(l.p99, l.count),
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::stages::{StageCount, StageFigures};

    #[test]
    fn a_row_per_stage_with_its_figures() {
        let mut c = StageCount {
            sent: 1_500,
            ok: 1_499,
            errors: 1,
            ..StageCount::default()
        };
        c.latency.record_n(250_000, 1_499);
        let empty = StageCount::default();
        let list = vec![
            StageFigures::new(2.0, 1_000.0, 1_000.0, &empty),
            StageFigures::new(1.5, 1_000.0, 1_500.0, &c),
        ];
        let t = table(Some(&list));
        let rows: Vec<&str> = t.lines().collect();
        assert_eq!(rows.len(), 3, "{t}");
        let cells: Vec<&str> = rows[2].split_whitespace().collect();
        assert_eq!(
            cells,
            ["2", "1.500", "1,000", "1,000", "1,000", "1,500", "1,499", "1", "250", "250"]
        );
        assert!(rows[1].ends_with("n/a        n/a"), "{t}");
        assert_eq!(table(None), "");
    }
}
