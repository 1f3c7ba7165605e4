//! The summary's table of stages (`--stages`): per stage its length, target, the rate
//! it asked and the rate sent in it, its counts and latency (microseconds, from the
//! intended send time), and the connection attempts that failed in it. Requests count
//! in the stage they were meant to go in; failed attempts in the stage they began in.

use super::format::{group, micros, rate};
use crate::stats::stages::StageFigures;
use std::fmt::Write as _;

/// The table, a header and a row per stage; empty without stages. Connection stages
/// show their target and the connections open at each stage's end and at most, where
/// rate stages show the rate asked.
pub fn table(stages: Option<&Vec<StageFigures>>) -> String {
    let Some(list) = stages else {
        return String::new();
    };
    let conns = list.iter().any(|s| s.target_connections.is_some());
    let mut s = String::from(match conns {
        true => "stages:        #    seconds   conns to     at end       peak     sent/s         sent           ok     errors   conn err        p50        p99\n",
        false => "stages:        #    seconds   target/s    asked/s     sent/s         sent           ok     errors   conn err        p50        p99\n",
    });
    let na = |us: f64, n: u64| if n > 0 { micros(us) } else { "n/a".into() };
    for (i, st) in list.iter().enumerate() {
        let l = &st.latency_us;
        let (a, b, c) = match st.target_connections {
            Some(t) => (
                group(t),
                group(st.connections_at_end),
                group(st.connections_peak),
            ),
            None => (
                rate(st.target_per_s.unwrap_or(0.0)),
                rate(st.asked_per_s.unwrap_or(0.0)),
                String::new(),
            ),
        };
        let _ = write!(s, "{:>16} {:>10.3} {a:>10} {b:>10} ", i + 1, st.seconds);
        if conns {
            let _ = write!(s, "{c:>10} ");
        }
        let _ = writeln!(
            s,
            "{:>10} {:>12} {:>12} {:>10} {:>10} {:>10} {:>10}",
            rate(st.achieved_per_s),
            group(st.sent),
            group(st.ok),
            group(st.errors),
            group(st.connect_errors),
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
            connect_errors: 2,
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
            ["2", "1.500", "1,000", "1,000", "1,000", "1,500", "1,499", "1", "2", "250", "250"]
        );
        assert!(rows[1].ends_with("n/a        n/a"), "{t}");
        assert_eq!(table(None), "");
    }

    #[test]
    fn connection_stages_show_their_connections() {
        let c = StageCount {
            sent: 3_000,
            ok: 3_000,
            open_end: 48,
            open_peak: 50,
            ..StageCount::default()
        };
        let t = table(Some(&vec![StageFigures::of_connections(2.0, 50, &c)]));
        let rows: Vec<&str> = t.lines().collect();
        assert!(rows[0].contains("conns to     at end       peak"), "{t}");
        let cells: Vec<&str> = rows[1].split_whitespace().collect();
        assert_eq!(
            cells,
            ["1", "2.000", "50", "48", "50", "1,500", "3,000", "3,000", "0", "0", "n/a", "n/a"]
        );
        assert_eq!(rows[0].len(), rows[1].len(), "{t}");
    }
}
