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
    /// Slots that never started, served after the queue in slot order: a million
    /// slots waiting for their first attempt cost no queue.
    fresh: std::ops::Range<u32>,
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
            fresh: 0..0,
        }
    }

    /// Whether attempts wait for a limit at all.
    pub fn limited(&self) -> bool {
        self.max_connecting != usize::MAX || self.gap_ns > 0.0
    }

    /// Slots `0..n`, never started (generation 0), wait for their first attempt.
    pub fn wait_fresh(&mut self, n: u32) {
        self.fresh = 0..n;
    }

    fn waiting(&self) -> bool {
        !self.queue.is_empty() || !self.fresh.is_empty()
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
        if !self.waiting() || self.connecting >= self.max_connecting || now < self.due() {
            return None;
        }
        let Some(next) = self.queue.pop_front() else {
            return self.fresh.next().map(|slot| (slot, 0));
        };
        if self.queue.is_empty() && self.queue.capacity() > 1024 {
            // Once served, a long queue's room goes.
            self.queue = VecDeque::new();
        }
        Some(next)
    }

    /// When the loop must wake to start a waiting slot (None: none waits, or every
    /// one waits for an attempt in flight to settle, which is an event).
    pub fn wake_at(&self) -> Option<u64> {
        (self.waiting() && self.connecting < self.max_connecting).then(|| self.due())
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
        r.wait(4, 0);
        assert_eq!(r.wake_at(), Some(4_000_000));

        // Fresh slots come after the queue, in order, with generation 0.
        let mut f = Admission::new(
            &Attempts {
                max_connecting: Some(1),
                per_s: None,
                retry: true,
            },
            1,
        );
        assert!(f.limited());
        f.wait_fresh(2);
        f.wait(9, 4);
        assert_eq!(f.next(0), Some((9, 4)));
        assert_eq!(f.next(0), Some((0, 0)));
        assert_eq!(f.next(0), Some((1, 0)));
        assert_eq!(f.next(0), None);
        assert!(!Admission::new(&Attempts::default(), 1).limited());
    }
}
