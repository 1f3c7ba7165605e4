//! Interval snapshots: each worker hands over its counters and its interval histogram
//! once per interval (one channel send per interval, never per request); the
//! aggregator turns them into one row per interval for progress and for the JSON series.

pub use super::intervals::IntervalRow;
use super::intervals::{summarise, Recycler, Returned};
use super::latency::Latency;
use super::outcome::Counters;

/// One worker's state at the end of interval `index`.
pub struct Snapshot {
    pub worker: usize,
    pub index: u64,
    /// Nanoseconds since the start of the measured phase.
    pub at_ns: u64,
    /// Cumulative measured counters.
    pub counters: Counters,
    /// Latency recorded during this interval only.
    pub latency: Latency,
    /// The worker's last snapshot: it contributes nothing to later intervals.
    pub last: bool,
}

struct Pending {
    index: u64,
    at_ns: u64,
    latency: Latency,
    reported: Vec<bool>,
}

/// Collects snapshots from `workers` workers and emits complete interval rows in order.
pub struct IntervalAggregator {
    latest: Vec<Counters>,
    finished_at: Vec<Option<u64>>,
    pending: Vec<Pending>,
    next_index: u64,
    prev_total: Counters,
    prev_at_ns: u64,
    rows: Vec<IntervalRow>,
    recycler: Recycler,
    /// Whether each row keeps its histogram, encoded (a shard's result).
    keep_histograms: bool,
}

impl IntervalAggregator {
    /// The aggregator of `workers` workers, and where each worker's emptied interval
    /// tables come back to it (`Snapshot::latency` is recycled, never dropped).
    pub fn new(workers: usize, keep_histograms: bool) -> (Self, Vec<Returned>) {
        let (recycler, returned) = Recycler::new(workers);
        let agg = IntervalAggregator {
            recycler,
            keep_histograms,
            latest: vec![Counters::default(); workers],
            finished_at: vec![None; workers],
            pending: Vec::new(),
            next_index: 0,
            prev_total: Counters::default(),
            prev_at_ns: 0,
            rows: Vec::new(),
        };
        (agg, returned)
    }

    /// Adds a snapshot; returns the rows (and their merged latency) it completed, in order.
    pub fn push(&mut self, s: Snapshot) -> Vec<(IntervalRow, Latency)> {
        let workers = self.latest.len();
        self.latest[s.worker] = s.counters;
        if s.last {
            self.finished_at[s.worker] = Some(s.index);
        }
        let slot = match self.pending.iter().position(|p| p.index == s.index) {
            Some(i) => i,
            None => {
                let latency = self.recycler.merged();
                self.pending.push(Pending {
                    index: s.index,
                    at_ns: 0,
                    latency,
                    reported: vec![false; workers],
                });
                self.pending.len() - 1
            }
        };
        let p = &mut self.pending[slot];
        p.at_ns = p.at_ns.max(s.at_ns);
        p.latency.add(&s.latency);
        p.reported[s.worker] = true;
        self.recycler.give_back(s.worker, s.latency);
        self.drain()
    }

    /// A completed interval's histogram, once told: its table serves a later interval.
    pub fn recycle(&mut self, l: Latency) {
        self.recycler.keep(l);
    }

    fn complete(&self, p: &Pending) -> bool {
        p.reported
            .iter()
            .enumerate()
            .all(|(w, r)| *r || self.finished_at[w].is_some_and(|f| f < p.index))
    }

    fn drain(&mut self) -> Vec<(IntervalRow, Latency)> {
        let mut out = Vec::new();
        while let Some(i) = self.pending.iter().position(|p| p.index == self.next_index) {
            if !self.complete(&self.pending[i]) {
                break;
            }
            let p = self.pending.swap_remove(i);
            let mut total = Counters::default();
            for c in &self.latest {
                total.add(c);
            }
            let dur_ns = p.at_ns.saturating_sub(self.prev_at_ns).max(1);
            let secs = dur_ns as f64 / 1e9;
            let ok = total.ok - self.prev_total.ok;
            let bytes = total.bytes_received - self.prev_total.bytes_received;
            let mut row = IntervalRow {
                t_s: p.at_ns as f64 / 1e9,
                duration_s: secs,
                sent: total.sent - self.prev_total.sent,
                ok,
                errors: total.request_errors() - self.prev_total.request_errors(),
                connect_errors: total.connect_errors() - self.prev_total.connect_errors(),
                bytes_received: bytes,
                msgs_per_s: ok as f64 / secs,
                mb_per_s: Some(bytes as f64 / secs / 1e6),
                total_ok: total.ok,
                ..IntervalRow::default()
            };
            summarise(&mut row, &p.latency, self.keep_histograms);
            self.prev_total = total;
            self.prev_at_ns = p.at_ns;
            self.next_index += 1;
            self.rows.push(row.clone());
            out.push((row, p.latency));
        }
        out
    }

    pub fn into_rows(self) -> Vec<IntervalRow> {
        self.rows
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snap(worker: usize, index: u64, ok: u64, last: bool) -> Snapshot {
        Snapshot {
            worker,
            index,
            at_ns: (index + 1) * 1_000_000_000,
            counters: Counters {
                sent: ok,
                ok,
                ..Default::default()
            },
            latency: Latency::new(),
            last,
        }
    }

    #[test]
    fn rows_wait_for_every_live_worker() {
        let (mut agg, _returned) = IntervalAggregator::new(2, false);
        assert!(agg.push(snap(0, 0, 10, false)).is_empty());
        let rows = agg.push(snap(1, 0, 5, false));
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].0.ok, 15);
        // Worker 1 finishes in interval 1; interval 2 needs only worker 0.
        assert!(agg.push(snap(1, 1, 7, true)).is_empty());
        assert_eq!(agg.push(snap(0, 1, 20, false))[0].0.ok, 12);
        let rows = agg.push(snap(0, 2, 25, true));
        assert_eq!(rows[0].0.ok, 5);
        assert_eq!(rows[0].0.total_ok, 32);
        assert_eq!(agg.into_rows().len(), 3);
    }
}
