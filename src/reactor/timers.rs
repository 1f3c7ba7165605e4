//! One timer structure per event loop, loads and servers alike: a binary heap of
//! (when, slot, generation), ns on the loop's clock. A slot re-arms only for an
//! earlier time (a client's oldest request's deadline moves later with every reply; a
//! server's held reply or session wake-up is armed once per new due time); entries of
//! an older connection of the slot, or superseded by an earlier one, are recognised
//! when they fire and ignored. One heap push per re-arm, no allocation once the heap
//! has grown to the loop's connection count.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

#[derive(Default)]
pub struct Timers {
    heap: BinaryHeap<Reverse<(u64, u32, u32)>>,
}

impl Timers {
    pub fn with_capacity(n: usize) -> Timers {
        Timers {
            heap: BinaryHeap::with_capacity(n),
        }
    }

    /// Wakes connection `gen` of `slot` at `at` (ns on the run clock).
    #[inline]
    pub fn arm(&mut self, at: u64, slot: u32, gen: u32) {
        self.heap.push(Reverse((at, slot, gen)));
    }

    /// When the earliest entry is due, if any.
    #[inline]
    pub fn next(&self) -> Option<u64> {
        self.heap.peek().map(|Reverse((at, _, _))| *at)
    }

    /// The earliest entry due at or before `now`: (when, slot, generation).
    #[inline]
    pub fn pop_due(&mut self, now: u64) -> Option<(u64, u32, u32)> {
        if self.next()? > now {
            return None;
        }
        self.heap.pop().map(|Reverse(e)| e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_come_out_in_time_order_and_only_when_due() {
        let mut t = Timers::with_capacity(4);
        t.arm(30, 1, 0);
        t.arm(10, 2, 7);
        t.arm(20, 3, 1);
        assert_eq!(t.next(), Some(10));
        assert_eq!(t.pop_due(5), None);
        assert_eq!(t.pop_due(25), Some((10, 2, 7)));
        assert_eq!(t.pop_due(25), Some((20, 3, 1)));
        assert_eq!(t.pop_due(25), None);
        assert_eq!(t.pop_due(30), Some((30, 1, 0)));
        assert_eq!(t.next(), None);
    }
}
