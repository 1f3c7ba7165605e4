//! Which connection attempts may start now: at most `max_connecting` of a worker's
//! slots connecting at once (connect, TLS and the opening exchange), and at most
//! `per_s` new attempts a second. A slot over either limit waits its turn in a
//! queue, served in order as attempts settle or the rate allows: waiting is not a
//! failure. With neither limit every attempt starts at once and the queue is unused.
//! The rate is flat (`per_s`) or by stages (`stages`, connect's churn stages): then
//! attempt m of the whole run is due when the stages' curve (`stages::Curve`, the one
//! the loads' rate stages run on) has asked for m.

use super::stages::{Curve, Stages};
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
    /// New attempts per second by rate stages (instead of `per_s`): attempt m of the
    /// whole run is due when the stages' curve asks for m; empty: none.
    pub stages: Stages,
    /// This process's place among the processes sharing `stages` (index, count):
    /// worker w of `threads` takes the whole run's attempts `(k threads + w) count +
    /// index`, so every process's and worker's attempts interleave and their sum by
    /// any time is the curve's.
    pub place: (u64, u64),
}

impl Default for Attempts {
    fn default() -> Self {
        Attempts {
            max_connecting: None,
            per_s: None,
            retry: true,
            stages: Stages::default(),
            place: (0, 1),
        }
    }
}

/// A worker's attempts paced by rate stages: its k-th is the run's `k stride + first`.
struct Paced {
    curve: Curve,
    stride: u64,
    first: u64,
    /// No attempt waits past this (the run's end): a waiting slot then starts and
    /// finds the run over.
    until_ns: u64,
}

/// One worker's side of the limits.
pub struct Admission {
    max_connecting: usize,
    /// ns between two starts (0: no rate).
    gap_ns: f64,
    /// Starts by rate stages instead of `gap_ns`.
    paced: Option<Paced>,
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
            paced: None,
            connecting: 0,
            started: 0,
            queue: VecDeque::new(),
            fresh: 0..0,
        }
    }

    /// Worker `worker` of `threads`: with rate stages (`Attempts::stages`), its
    /// attempts paced by their curve until `until_ns` (the run's end).
    pub fn for_worker(
        a: &Attempts,
        threads: usize,
        worker: usize,
        until_ns: Option<u64>,
    ) -> Admission {
        let mut adm = Admission::new(a, threads);
        if !a.stages.is_empty() && !a.stages.is_connections() {
            let (index, of) = (a.place.0, a.place.1.max(1));
            let threads = threads.max(1) as u64;
            adm.paced = Some(Paced {
                curve: Curve::new(a.stages.list()),
                stride: threads * of,
                first: worker as u64 * of + index,
                until_ns: until_ns.unwrap_or(u64::MAX),
            });
        }
        adm
    }

    /// Whether attempts wait for a limit at all.
    pub fn limited(&self) -> bool {
        self.max_connecting != usize::MAX || self.gap_ns > 0.0 || self.paced.is_some()
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
        match &self.paced {
            None => (self.started as f64 * self.gap_ns) as u64,
            Some(p) => {
                let m = self.started * p.stride + p.first;
                let at = p.curve.time_of(m as f64);
                // Past the curve's last request (a rate held at 0): the run's end.
                match at.is_finite() {
                    true => (at as u64).min(p.until_ns),
                    false => p.until_ns,
                }
            }
        }
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
                ..Attempts::default()
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
                per_s: Some(1000.0),
                ..Attempts::default()
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
                ..Attempts::default()
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

    /// Starts by time over the 3 s of `1s:20,1s:20,1s:0` (10, 20 and 10 attempts
    /// asked), each worker taking as many as it may at every millisecond.
    fn starts_by_stage(a: &mut Admission) -> [u64; 3] {
        let mut n = [0u64; 3];
        let ms = 1_000_000;
        for t in (0..3_000).map(|t| t * ms) {
            while a.try_start(t) {
                a.settled();
                n[(t / (1_000 * ms)) as usize] += 1;
            }
        }
        n
    }

    #[test]
    fn stages_pace_the_attempts_of_every_process_together() {
        let s = |secs, target| crate::engine::stages::Stage {
            over: std::time::Duration::from_secs(secs),
            target,
        };
        let stages = Stages::new(&[s(1, 20.0), s(1, 20.0), s(1, 0.0)]);
        let of = |index: u64, of: u64, worker: usize, threads: usize| {
            let a = Attempts {
                stages,
                place: (index, of),
                ..Attempts::default()
            };
            Admission::for_worker(&a, threads, worker, Some(3_000_000_000))
        };
        // Alone: each stage's integral; nothing more once the rate is held at 0, and
        // the run's end lets a waiting slot through (to find the run over).
        let mut alone = of(0, 1, 0, 1);
        assert!(alone.limited());
        assert_eq!(starts_by_stage(&mut alone), [10, 20, 10]);
        assert_eq!(alone.wake_at(), None);
        alone.wait(0, 1);
        let last = alone.wake_at().unwrap();
        assert!((2_999_000_000..=3_000_000_000).contains(&last), "{last}");
        // Two processes of two workers each: interleaved, the same sums.
        let mut sum = [0u64; 3];
        for (index, worker) in [(0, 0), (0, 1), (1, 0), (1, 1)] {
            let mine = starts_by_stage(&mut of(index, 2, worker, 2));
            for (all, n) in sum.iter_mut().zip(mine) {
                *all += n;
            }
        }
        assert_eq!(sum, [10, 20, 10]);
    }
}
