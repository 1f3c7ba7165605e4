//! What the connections of one worker share: the clock, the worker's statistics and
//! the plan's limits. Single-threaded (one runtime per worker), so plain cells suffice.

use super::pacer::Pacer;
use crate::clock::Clock;
use crate::stats::WorkerStats;
use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

pub struct Shared {
    pub clock: Clock,
    pub stats: RefCell<WorkerStats>,
    pub pipeline: usize,
    pub timeout_ns: u64,
    /// Requests intended before this are warm-up.
    pub measure_start_ns: u64,
    /// No request is sent at or after this (duration plans).
    pub deadline_ns: Option<u64>,
    /// Count plans: measured requests this worker may still send.
    pub budget: Option<Cell<u64>>,
    /// Set on Ctrl-C: send nothing more, let replies drain.
    pub stop: Arc<AtomicBool>,
    /// Open loop: wakes connections at their scheduled send times, to the nanosecond.
    pub pacer: Option<Pacer>,
    /// Notified once when a stop is requested, to cut short back-off sleeps.
    pub stop_wake: tokio::sync::Notify,
    /// Open loop: the furthest any connection's schedule fell behind the clock (ns),
    /// measured up to the deadline. A Cell, not the stats' RefCell: one compare per fill.
    pub max_lag_ns: Cell<u64>,
}

/// How long replies are awaited after a duration plan's end before the requests still
/// unanswered are left `in_flight`: the run ends at warm-up + duration + this, at most.
pub const DRAIN_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

impl Shared {
    /// Sleeps for `d`, or less if a stop is requested meanwhile.
    pub async fn sleep_unless_stopped(&self, d: std::time::Duration) {
        if self.stopping() {
            return;
        }
        tokio::select! {
            _ = tokio::time::sleep(d) => {}
            _ = self.stop_wake.notified() => {}
        }
    }

    /// When a duration plan's connections give up on replies still in flight
    /// (u64::MAX for other plans).
    #[inline]
    pub fn cut_ns(&self) -> u64 {
        self.deadline_ns.map_or(u64::MAX, |d| {
            d.saturating_add(DRAIN_GRACE.as_nanos() as u64)
        })
    }

    /// Open loop: notes how far behind its schedule a connection is at `now`
    /// (`next_intended` is its next unsent request), counting no further than the deadline.
    #[inline]
    pub fn note_lag(&self, now: u64, next_intended: u64) {
        let upto = self.deadline_ns.map_or(now, |d| now.min(d));
        let lag = upto.saturating_sub(next_intended);
        if lag > self.max_lag_ns.get() {
            self.max_lag_ns.set(lag);
        }
    }

    #[inline]
    pub fn stopping(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }
}
