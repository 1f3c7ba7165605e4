//! Which connection attempts may start now: at most `max_connecting` of a worker's
//! slots connecting at once (connect, TLS and the opening exchange), and at most
//! `per_s` new attempts a second. A slot over either limit waits its turn in a
//! queue, served in order as attempts settle or the rate allows: waiting is not a
//! failure. With neither limit every attempt starts at once and the queue is unused.

use std::collections::VecDeque;

/// The limits of a load (LoadSpec::attempts), over the whole run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Attempts {
    /// Attempts in flight at once, per worker.
    pub max_connecting: Option<usize>,
    /// New attempts per second, over all workers.
    pub per_s: Option<f64>,
    /// A slot whose attempt failed, or whose connection was lost, tries again (after
    /// a back-off); without, the slot's run ends there and the loss is tallied.
    pub retry: bool,
}

impl Default for Attempts {
    fn default() -> Self {
        Attempts {
            max_connecting: None,
            per_s: None,
            retry: true,
        }
    }
}

/// One worker's side of the limits.
pub struct Admission {
    max_connecting: usize,
    /// ns between two starts (0: no rate).
    gap_ns: f64,
    /// Attempts in flight now.
    pub connecting: usize,
    /// Attempts started (for the rate).
    started: u64,
    /// Slots waiting their turn, first come first served (generation to tell a
    /// slot that moved on since).
    queue: VecDeque<(u32, u32)>,
}

impl Admission {
    pub fn new(a: &Attempts, threads: usize) -> Admission {
        let per_worker = a
            .per_s
            .filter(|r| *r > 0.0)
            .map(|r| r / threads.max(1) as f64);
        Admission {
            max_connecting: a.max_connecting.unwrap_or(usize::MAX).max(1),
            gap_ns: per_worker.map_or(0.0, |r| 1e9 / r),
            connecting: 0,
            started: 0,
            queue: VecDeque::new(),
        }
    }

    /// When the next attempt may start by the rate (ns on the run clock).
    #[inline]
    fn due(&self) -> u64 {
        (self.started as f64 * self.gap_ns) as u64
    }

    /// Whether an attempt may start at `now`; if so it counts as started.
    #[inline]
    pub fn try_start(&mut self, now: u64) -> bool {
        if self.connecting >= self.max_connecting || now < self.due() {
            return false;
        }
        self.connecting += 1;
        self.started += 1;
        true
    }

    /// An attempt ended (up, or failed).
    #[inline]
    pub fn settled(&mut self) {
        self.connecting = self.connecting.saturating_sub(1);
    }

    pub fn wait(&mut self, slot: u32, gen: u32) {
        self.queue.push_back((slot, gen));
    }

    /// The next waiting slot that may start now, if any.
    pub fn next(&mut self, now: u64) -> Option<(u32, u32)> {
        if self.queue.is_empty() {
            return None;
        }
        if self.connecting >= self.max_connecting || now < self.due() {
            return None;
        }
        let next = self.queue.pop_front();
        if self.queue.is_empty() {
            // A million waiting slots took 8 MB: once served, it goes.
            self.queue = VecDeque::new();
        }
        next
    }

    /// When the loop must wake for the rate (None: no slot waits on it).
    pub fn wake_at(&self) -> Option<u64> {
        (!self.queue.is_empty() && self.connecting < self.max_connecting && self.gap_ns > 0.0)
            .then(|| self.due())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cap_and_the_rate_hold_starts_back() {
        let mut a = Admission::new(
            &Attempts {
                max_connecting: Some(2),
                per_s: None,
                retry: true,
            },
            1,
        );
        assert!(a.try_start(0) && a.try_start(0));
        assert!(!a.try_start(0));
        a.wait(7, 1);
        assert_eq!(a.next(0), None);
        a.settled();
        assert_eq!(a.next(0), Some((7, 1)));
        assert!(a.try_start(0));

        // 1000 a second over two workers: one start per 2 ms each.
        let mut r = Admission::new(
            &Attempts {
                max_connecting: None,
                per_s: Some(1000.0),
                retry: true,
            },
            2,
        );
        assert!(r.try_start(0));
        assert!(!r.try_start(1_999_999));
        r.wait(3, 0);
        assert_eq!(r.wake_at(), Some(2_000_000));
        assert_eq!(r.next(2_000_000), Some((3, 0)));
        assert!(r.try_start(2_000_000));
        assert_eq!(r.wake_at(), None);
    }
}
