//! A loop thread's CPU time over the measured phase of a load (from the end of its
//! warm-up), kept the same way by both load loops (`Reactor`, `UringReactor`).

use std::time::Duration;

#[derive(Default)]
pub struct MeasuredCpu {
    /// When the measured phase begins (ns on the loop's clock), once asked.
    from: Option<u64>,
    /// The thread's CPU time when it began, once it has.
    at_start: Option<Duration>,
}

impl MeasuredCpu {
    /// Measure from `at`: the loop wakes then (`wake_at`).
    pub fn start_at(&mut self, at: u64) {
        self.from = Some(at);
    }

    /// When the loop must wake to start counting: none once counting, or never asked.
    pub fn wake_at(&self) -> Option<u64> {
        self.from.filter(|_| self.at_start.is_none())
    }

    /// Called every turn: starts counting once `now` reaches the measured phase.
    pub fn on_turn(&mut self, now: u64) {
        if self.at_start.is_none() && self.from.is_some_and(|m| now >= m) {
            self.at_start = Some(crate::sys::thread_cpu_time());
        }
    }

    /// The thread's CPU time since the measured phase began (zero if it never did).
    pub fn measured(&self) -> Duration {
        self.at_start
            .map(|s| crate::sys::thread_cpu_time().saturating_sub(s))
            .unwrap_or(Duration::ZERO)
    }
}
