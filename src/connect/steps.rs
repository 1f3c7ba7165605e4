//! The `connect` parent's side of the series: each worker's steps (`WorkerMsg::Interval`,
//! in order) added into one row per step, as they come, and told to the observers
//! (`--hlog`) once every worker still running has sent that step. A step's percentiles
//! are those of its workers' histograms added, never an average of theirs; a step's
//! table goes back to a spare once told, so a long run holds a few tables, not one a
//! step. Each worker counts its steps from its own start; they start together at `go`.

use crate::stats::intervals::{add_counts, summarise};
use crate::stats::merge::intervals::MAX_ROWS;
use crate::stats::{IntervalRow, Latency, Observer};
use std::collections::VecDeque;

/// Nobody to tell (no `--hlog`).
pub struct Nobody;
impl Observer for Nobody {}

pub struct Steps {
    /// Each row keeps its histogram, encoded (a shard's result, for `wirebench merge`).
    keep: bool,
    /// The first step not told yet; `pending[i]` is step `next + i`.
    next: u64,
    pending: VecDeque<(IntervalRow, Latency)>,
    /// The last step each worker has sent.
    heard: Vec<Option<u64>>,
    rows: Vec<IntervalRow>,
    total_ok: u64,
    spare: Vec<Latency>,
}

impl Steps {
    pub fn new(workers: usize, keep: bool) -> Self {
        Steps {
            keep,
            next: 0,
            pending: VecDeque::new(),
            heard: vec![None; workers],
            rows: Vec::new(),
            total_ok: 0,
            spare: Vec::new(),
        }
    }

    /// Worker `w`'s step `step`; a step already told (it cannot be, from a worker
    /// that sends in order) or a histogram that does not decode is one sentence.
    pub fn add(&mut self, w: usize, step: u64, row: &IntervalRow) -> Result<(), String> {
        if step < self.next {
            return Err(format!(
                "connect worker {w} sent interval {step} after it was merged"
            ));
        }
        if step - self.next >= MAX_ROWS as u64 {
            return Err(format!(
                "connect worker {w} sent interval {step}, more than {MAX_ROWS} ahead of the merge"
            ));
        }
        if let Some(h) = self.heard.get_mut(w) {
            *h = Some(step);
        }
        let i = (step - self.next) as usize;
        while self.pending.len() <= i {
            let l = self.spare.pop().unwrap_or_default();
            self.pending.push_back((IntervalRow::default(), l));
        }
        let (into, l) = &mut self.pending[i];
        add_counts(into, row);
        into.t_s = into.t_s.max(row.t_s);
        into.duration_s = into.duration_s.max(row.duration_s);
        if let Some(text) = row.histogram.as_deref() {
            l.add(&Latency::decode(text).map_err(|e| format!("connect worker {w}: {e}"))?);
        }
        Ok(())
    }

    /// Tells every step that each worker not `done` has sent (a done worker sent all
    /// it will), in order.
    pub fn tell(&mut self, done: &[bool], to: &mut dyn Observer) {
        while !self.pending.is_empty() {
            let step = self.next;
            let all = self
                .heard
                .iter()
                .zip(done)
                .all(|(h, d)| *d || h.is_some_and(|h| h >= step));
            if !all {
                return;
            }
            self.tell_next(to);
        }
    }

    /// Tells every step left (the run is over).
    pub fn finish(&mut self, to: &mut dyn Observer) {
        while !self.pending.is_empty() {
            self.tell_next(to);
        }
    }

    fn tell_next(&mut self, to: &mut dyn Observer) {
        let Some((mut row, l)) = self.pending.pop_front() else {
            return;
        };
        self.next += 1;
        let secs = row.duration_s.max(1e-9);
        self.total_ok += row.ok;
        row.total_ok = self.total_ok;
        row.msgs_per_s = row.ok as f64 / secs;
        row.mb_per_s = Some(row.bytes_received as f64 / secs / 1e6);
        summarise(&mut row, &l, self.keep);
        to.on_interval(&row, &l);
        self.rows.push(row);
        // Two are enough: one being filled while the next comes.
        if l.holds_table() && self.spare.len() < 2 {
            let mut l = l;
            l.reset();
            self.spare.push(l);
        }
    }

    pub fn into_rows(self) -> Vec<IntervalRow> {
        self.rows
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Told(Vec<u64>);
    impl Observer for Told {
        fn on_interval(&mut self, row: &IntervalRow, l: &Latency) {
            assert_eq!(row.count, l.count());
            self.0.push(row.count);
        }
    }

    fn step(end_s: f64, connects: &[u64]) -> IntervalRow {
        let mut l = Latency::new();
        for v in connects {
            l.record(*v);
        }
        let mut row = IntervalRow {
            t_s: end_s,
            duration_s: 1.0,
            ok: connects.len() as u64,
            connect_errors: 1,
            ..Default::default()
        };
        summarise(&mut row, &l, true);
        row
    }

    #[test]
    fn a_step_waits_for_every_running_worker_and_adds_their_histograms() {
        let mut s = Steps::new(2, false);
        let mut told = Told(Vec::new());
        s.add(0, 0, &step(1.0, &[1_000, 2_000])).unwrap();
        s.add(0, 1, &step(2.0, &[3_000])).unwrap();
        s.tell(&[false, false], &mut told);
        assert!(told.0.is_empty(), "worker 1 has sent nothing yet");
        s.add(1, 0, &step(1.0, &[9_000_000])).unwrap();
        s.tell(&[false, false], &mut told);
        assert_eq!(told.0, [3]);
        // Worker 1 is done: step 1 is worker 0's alone.
        s.tell(&[false, true], &mut told);
        assert_eq!(told.0, [3, 1]);
        s.add(0, 2, &step(2.5, &[])).unwrap();
        s.finish(&mut told);
        let rows = s.into_rows();
        assert_eq!(rows.len(), 3);
        assert_eq!(
            rows.iter().map(|r| r.connect_errors).collect::<Vec<_>>(),
            [2, 1, 1]
        );
        assert_eq!(rows[0].total_ok, 3);
        assert_eq!(
            rows[0].max_us,
            Some(
                Latency::decode(&step(1.0, &[9_000_000]).histogram.unwrap())
                    .unwrap()
                    .inner()
                    .max() as f64
                    / 1e3
            )
        );
        assert_eq!(rows[2].p50_us, None);
        assert!(rows.iter().all(|r| r.histogram.is_none()));
    }

    #[test]
    fn a_step_sent_after_it_was_told_is_refused() {
        let mut s = Steps::new(1, true);
        s.add(0, 0, &step(1.0, &[1_000])).unwrap();
        s.finish(&mut Told(Vec::new()));
        assert!(s.rows[0].histogram.is_some(), "a shard keeps each row's");
        assert!(s.add(0, 0, &step(1.0, &[1_000])).is_err());
    }
}
