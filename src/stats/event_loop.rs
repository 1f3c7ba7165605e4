//! Which event loop ran. A load worker and a built-in server thread each run one loop,
//! io_uring or epoll, chosen at its start (by the plan, `WIREBENCH_LOAD_LOOP` /
//! `WIREBENCH_SERVER_LOOP`, and whether this kernel gives a ring); the two differ in
//! cost, so a result counts its threads per loop and two runs can be told apart. In
//! the JSON only the loops that ran appear: `{"io_uring": 2}`, `{"epoll": 1,
//! "io_uring": 1}`; the counts add up exactly over shards, rounds and processes.

use serde::{Deserialize, Serialize};

/// One thread's loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventLoop {
    Epoll,
    IoUring,
}

/// Threads per event loop.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoopCounts {
    #[serde(default, skip_serializing_if = "is_zero")]
    pub epoll: u64,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub io_uring: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The threads of several parts together (workers, processes, shards).
impl<'a> std::iter::Sum<&'a LoopCounts> for LoopCounts {
    fn sum<I: Iterator<Item = &'a LoopCounts>>(it: I) -> LoopCounts {
        it.fold(LoopCounts::default(), |mut a, l| {
            a.add(l);
            a
        })
    }
}

impl LoopCounts {
    /// One thread on `l`.
    pub fn one(l: EventLoop) -> Self {
        let mut c = LoopCounts::default();
        c.count(l);
        c
    }

    pub fn count(&mut self, l: EventLoop) {
        match l {
            EventLoop::Epoll => self.epoll = self.epoll.saturating_add(1),
            EventLoop::IoUring => self.io_uring = self.io_uring.saturating_add(1),
        }
    }

    /// A sum past u64 (only a forged file gets there) stays at the largest count.
    pub fn add(&mut self, o: &LoopCounts) {
        self.epoll = self.epoll.saturating_add(o.epoll);
        self.io_uring = self.io_uring.saturating_add(o.io_uring);
    }

    pub fn is_empty(&self) -> bool {
        self.epoll == 0 && self.io_uring == 0
    }

    /// "io_uring x2", "epoll x1 + io_uring x1"; "none" when no thread is counted.
    pub fn describe(&self) -> String {
        let parts: Vec<String> = [("epoll", self.epoll), ("io_uring", self.io_uring)]
            .iter()
            .filter(|(_, n)| *n > 0)
            .map(|(name, n)| format!("{name} x{n}"))
            .collect();
        if parts.is_empty() {
            "none".into()
        } else {
            parts.join(" + ")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_loops_that_ran_are_written_and_counts_add() {
        let mut c = LoopCounts::one(EventLoop::IoUring);
        c.count(EventLoop::IoUring);
        assert_eq!(serde_json::to_string(&c).unwrap(), r#"{"io_uring":2}"#);
        assert_eq!(c.describe(), "io_uring x2");
        c.add(&LoopCounts::one(EventLoop::Epoll));
        assert_eq!(
            serde_json::to_string(&c).unwrap(),
            r#"{"epoll":1,"io_uring":2}"#
        );
        assert_eq!(c.describe(), "epoll x1 + io_uring x2");
        let back: LoopCounts = serde_json::from_str(r#"{"epoll":3}"#).unwrap();
        assert_eq!(
            back,
            LoopCounts {
                epoll: 3,
                io_uring: 0
            }
        );
        assert_eq!(serde_json::to_string(&LoopCounts::default()).unwrap(), "{}");
        assert!(LoopCounts::default().is_empty());
        assert_eq!(LoopCounts::default().describe(), "none");
    }
}
