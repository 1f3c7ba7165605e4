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
}

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

    #[inline]
    pub fn stopping(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }
}
