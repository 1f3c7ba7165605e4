//! A `connect` worker's side of the series: the engine's rows (one every engine
//! interval, a whole divisor of `--interval` of at most 100 ms, so progress keeps its
//! pace) summed into steps of `--interval`, each step's connect-latency histogram
//! beside them; a step goes to the parent (`WorkerMsg::Interval`) once a row of a
//! later one comes, and the last at the end. One table for the whole run, emptied
//! after each step: nothing is allocated per connect, one encoding per step.

use crate::stats::intervals::{add_counts, summarise};
use crate::stats::{IntervalRow, Latency};
use std::time::Duration;

/// The longest engine interval: progress reaches the parent at least this often.
pub const MAX_ENGINE_INTERVAL: Duration = Duration::from_millis(100);

/// The engine's interval for steps of `step`: `step` split into equal parts of at
/// most `MAX_ENGINE_INTERVAL`, so every step ends on an engine interval's end.
pub fn engine_interval(step: Duration) -> Duration {
    let parts = step
        .as_nanos()
        .div_ceil(MAX_ENGINE_INTERVAL.as_nanos())
        .max(1);
    Duration::from_nanos((step.as_nanos() / parts).max(1) as u64)
}

/// The step being summed and its histogram.
pub struct StepRows {
    step_s: f64,
    step: u64,
    row: IntervalRow,
    latency: Latency,
    /// Whether a row has come since the last step went.
    any: bool,
}

impl StepRows {
    pub fn new(step: Duration) -> Self {
        StepRows {
            step_s: step.as_secs_f64(),
            step: 0,
            row: IntervalRow::default(),
            latency: Latency::new(),
            any: false,
        }
    }

    /// The step that holds the row's middle (ms rounding keeps float noise out, as
    /// `stats::merge::intervals` places rows).
    fn step_of(&self, row: &IntervalRow) -> u64 {
        let middle_s = row.t_s - row.duration_s.max(0.0) / 2.0;
        ((middle_s * 1e3).round() / 1e3 / self.step_s)
            .floor()
            .max(0.0) as u64
    }

    /// An engine row and its histogram: a step that is over comes back to be sent.
    pub fn add(&mut self, row: &IntervalRow, latency: &Latency) -> Option<(u64, IntervalRow)> {
        let k = self.step_of(row);
        let done = match self.any && k != self.step {
            true => self.take(),
            false => None,
        };
        self.step = k;
        self.any = true;
        add_counts(&mut self.row, row);
        self.row.t_s = row.t_s;
        self.latency.add(latency);
        done
    }

    /// The step being summed, if a row came: its counts, span and histogram (encoded).
    pub fn take(&mut self) -> Option<(u64, IntervalRow)> {
        if !self.any {
            return None;
        }
        self.any = false;
        let mut row = std::mem::take(&mut self.row);
        let start = self.step as f64 * self.step_s;
        row.duration_s = (row.t_s - start).max(1e-9);
        summarise(&mut row, &self.latency, true);
        self.latency.reset();
        Some((self.step, row))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_engine_interval_divides_the_step() {
        let ms = |v| Duration::from_millis(v);
        assert_eq!(engine_interval(ms(1000)), ms(100));
        assert_eq!(engine_interval(ms(250)), Duration::from_nanos(83_333_333));
        assert_eq!(engine_interval(ms(100)), ms(100));
        assert_eq!(engine_interval(ms(10)), ms(10));
        assert_eq!(engine_interval(ms(150)), ms(75));
    }

    #[test]
    fn rows_sum_into_steps_with_their_histograms() {
        let mut s = StepRows::new(Duration::from_millis(200));
        let row = |end_ms: u64, ok: u64| IntervalRow {
            t_s: end_ms as f64 / 1e3,
            duration_s: 0.1,
            ok,
            connect_errors: 1,
            ..Default::default()
        };
        let mut l = Latency::new();
        l.record(5_000);
        assert!(s.add(&row(100, 1), &l).is_none());
        assert!(s.add(&row(200, 2), &l).is_none());
        let (k, done) = s.add(&row(300, 4), &Latency::new()).unwrap();
        assert_eq!((k, done.ok, done.connect_errors, done.count), (0, 3, 2, 2));
        assert_eq!(done.t_s, 0.2);
        let back = Latency::decode(done.histogram.as_deref().unwrap()).unwrap();
        assert_eq!(back.count(), 2);
        // The last step: cut short where its last row ended.
        let mut last = row(350, 8);
        last.duration_s = 0.05;
        assert!(s.add(&last, &l).is_none());
        let (k, done) = s.take().unwrap();
        assert_eq!((k, done.ok, done.count), (1, 12, 1));
        assert!((done.duration_s - 0.15).abs() < 1e-9);
        assert!(s.take().is_none());
    }
}
