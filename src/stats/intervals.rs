//! Per-interval histograms: what an interval row says of its latency (count, p50, p90,
//! p99, p99.9, max), the compact form a row's histogram travels in (a shard's result,
//! so `wirebench merge` adds the histograms of one wall-clock step exactly), and the
//! recycling that keeps their memory bounded: a worker hands its interval's table over
//! and gets an emptied one back, so a run of 3,600 intervals allocates no more tables
//! than a run of ten.

use super::latency::Latency;
use serde::{Deserialize, Serialize};
use std::sync::mpsc::{Receiver, Sender};

/// One interval of the whole run.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct IntervalRow {
    /// End of the interval, seconds since the start of the measured phase.
    pub t_s: f64,
    pub duration_s: f64,
    pub sent: u64,
    pub ok: u64,
    /// Failed requests.
    pub errors: u64,
    /// Failed connection attempts and dropped connections, as they happen.
    #[serde(default)]
    pub connect_errors: u64,
    pub bytes_received: u64,
    pub msgs_per_s: f64,
    /// Reply bytes per second, 10^6; null in results whose items have no reply.
    pub mb_per_s: Option<f64>,
    /// Replies timed in the interval: the count of its histogram.
    #[serde(default)]
    pub count: u64,
    /// The interval's latency percentiles and maximum, microseconds; null when nothing
    /// was timed in it (`stats::intervals::summarise`).
    pub p50_us: Option<f64>,
    #[serde(default)]
    pub p90_us: Option<f64>,
    pub p99_us: Option<f64>,
    #[serde(default)]
    pub p99_9_us: Option<f64>,
    #[serde(default)]
    pub max_us: Option<f64>,
    /// Cumulative ok replies at the end of the interval.
    pub total_ok: u64,
    /// The interval's histogram (HdrHistogram V2, deflate, base64), in a shard's result
    /// only: what `wirebench merge` adds up per wall-clock step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub histogram: Option<String>,
}

/// Sets the row's latency figures from the interval's histogram: null when nothing was
/// timed in it. `keep`: the histogram travels with the row (encoded, `Latency::encode`).
pub fn summarise(row: &mut IntervalRow, latency: &Latency, keep: bool) {
    let timed = latency.count() > 0;
    let at = |q: f64| timed.then(|| latency.quantile_ns(q) as f64 / 1e3);
    row.count = latency.count();
    row.p50_us = at(0.5);
    row.p90_us = at(0.9);
    row.p99_us = at(0.99);
    row.p99_9_us = at(0.999);
    row.max_us = timed.then(|| latency.inner().max() as f64 / 1e3);
    row.histogram = (keep && timed).then(|| latency.encode());
}

/// Adds `other`'s counts to `row` (rows of one step of a merged series, or the rows one
/// progress line covers); rates, running totals and percentiles are the caller's.
pub fn add_counts(row: &mut IntervalRow, other: &IntervalRow) {
    row.sent += other.sent;
    row.ok += other.ok;
    row.errors += other.errors;
    row.connect_errors += other.connect_errors;
    row.bytes_received += other.bytes_received;
    row.count += other.count;
}

/// A worker's side of the recycling: where its emptied tables come back.
pub struct Returned(Receiver<Latency>);

impl Returned {
    /// The table for the next interval: an emptied one back from the aggregator, or
    /// none yet (it comes with the interval's first sample).
    pub fn next(&self) -> Latency {
        self.0.try_recv().unwrap_or_default()
    }
}

/// The aggregator's side: the channel back to each worker.
pub struct Recycler {
    back: Vec<Sender<Latency>>,
    /// Emptied tables of the merged intervals, for the next ones.
    spare: Vec<Latency>,
}

impl Recycler {
    /// One channel per worker; the receivers go to the workers, in order.
    pub fn new(workers: usize) -> (Recycler, Vec<Returned>) {
        let (back, returned) = (0..workers)
            .map(|_| {
                let (tx, rx) = std::sync::mpsc::channel();
                (tx, Returned(rx))
            })
            .unzip();
        (
            Recycler {
                back,
                spare: Vec::new(),
            },
            returned,
        )
    }

    /// Empties a worker's interval table and sends it back to that worker (a table
    /// that never held anything is no table: nothing to send). A worker that has ended
    /// no longer takes it; it is dropped then.
    pub fn give_back(&mut self, worker: usize, mut l: Latency) {
        if l.holds_table() {
            l.reset();
            if let Some(tx) = self.back.get(worker) {
                let _ = tx.send(l);
            }
        }
    }

    /// An empty table for a merged interval.
    pub fn merged(&mut self) -> Latency {
        self.spare.pop().unwrap_or_default()
    }

    /// A merged interval's table, done with.
    pub fn keep(&mut self, mut l: Latency) {
        // Two are enough: one being filled, one being told to the observer.
        if l.holds_table() && self.spare.len() < 2 {
            l.reset();
            self.spare.push(l);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_says_its_percentiles_and_nulls_when_nothing_was_timed() {
        let mut l = Latency::new();
        for v in 1..=1000u64 {
            l.record(v * 1000);
        }
        let mut row = IntervalRow::default();
        summarise(&mut row, &l, true);
        assert_eq!(row.count, 1000);
        assert_eq!(row.p50_us, Some(l.quantile_ns(0.5) as f64 / 1e3));
        assert_eq!(row.p90_us, Some(l.quantile_ns(0.9) as f64 / 1e3));
        assert_eq!(row.p99_9_us, Some(l.quantile_ns(0.999) as f64 / 1e3));
        assert_eq!(row.max_us, Some(l.inner().max() as f64 / 1e3));
        let back = Latency::decode(row.histogram.as_deref().unwrap()).unwrap();
        assert_eq!(back.encode(), l.encode());
        summarise(&mut row, &Latency::new(), true);
        assert_eq!((row.count, row.p50_us, row.max_us), (0, None, None));
        assert_eq!(row.histogram, None);
        summarise(&mut row, &l, false);
        assert_eq!(row.histogram, None, "kept only when asked");
    }

    #[test]
    fn tables_go_back_to_their_worker_emptied() {
        let (mut r, returned) = Recycler::new(2);
        let mut l = Latency::new();
        l.record(5_000);
        r.give_back(1, l);
        r.give_back(0, Latency::new());
        let got = returned[1].next();
        assert!(got.holds_table(), "worker 1 gets its table back");
        assert_eq!(got.count(), 0, "emptied");
        assert!(
            !returned[0].next().holds_table(),
            "nothing held, nothing sent"
        );
        assert!(!returned[1].next().holds_table(), "one table, back once");
        drop(returned);
        let mut l = Latency::new();
        l.record(1);
        r.give_back(1, l); // an ended worker: dropped, no panic
        let mut m = r.merged();
        m.record(7);
        r.keep(m);
        let again = r.merged();
        assert!(again.holds_table() && again.count() == 0);
    }
}
