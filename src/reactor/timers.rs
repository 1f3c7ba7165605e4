//! One timer structure per event loop, loads and servers alike: a binary heap of
//! (when, slot, generation), ns on the loop's clock. A slot re-arms only for an
//! earlier time (a client's oldest request's deadline moves later with every reply; a
//! server's held reply or session wake-up is armed once per new due time); entries of
//! an older connection of the slot, or superseded by an earlier one, are recognised
//! when they fire and ignored. One heap push per re-arm, no allocation once the heap
//! has grown to the loop's connection count.
//!
//! Superseded entries wait for their time: a slow open-loop connection (one request per
//! 10 s) leaves its request's deadline (the timeout, 10 s by default) behind each time
//! its reply arms the next send, so 19,000 such connections grew the heap to 4 entries
//! each (~35 B per connection; the client rows of
//! BENCHMARKS.md#memory-per-idle-connection). A handler that can tell a live entry
//! from a stale one calls `sweep` after each wake: once the heap holds a quarter more
//! than after the last sweep (plus `SWEEP_SLACK`), the stale entries go. So the heap
//! stays under 1.25 times the entries live at the last sweep plus the slack, and a
//! sweep (O(len), no allocation) comes once per at least len/4 pushes: O(1) per push.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Stale entries tolerated on top of a quarter of the live ones: small loops (a few
/// connections at a high rate) sweep once per this many pushes, not once per wake.
pub const SWEEP_SLACK: usize = 1024;

#[derive(Default)]
pub struct Timers {
    heap: BinaryHeap<Reverse<(u64, u32, u32)>>,
    /// Entries the last sweep kept (all live then).
    kept: usize,
}

impl Timers {
    pub fn with_capacity(n: usize) -> Timers {
        Timers {
            heap: BinaryHeap::with_capacity(n),
            kept: 0,
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

    /// Entries in the heap, live or stale.
    #[inline]
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// Drops the entries `live(when, slot, generation)` says would be ignored when they
    /// fire, once enough have piled up (see the module comment); a cheap comparison
    /// otherwise. Entries keep their order; nothing is allocated.
    #[inline]
    pub fn sweep(&mut self, live: impl FnMut(u64, u32, u32) -> bool) {
        if self.heap.len() > self.kept + self.kept / 4 + SWEEP_SLACK {
            self.sweep_now(live);
        }
    }

    #[cold]
    fn sweep_now(&mut self, mut live: impl FnMut(u64, u32, u32) -> bool) {
        let mut entries = std::mem::take(&mut self.heap).into_vec();
        entries.retain(|Reverse((at, slot, gen))| live(*at, *slot, *gen));
        self.kept = entries.len();
        // Heapifies in place, O(n): the vector keeps its room.
        self.heap = BinaryHeap::from(entries);
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

    /// The slow open-loop pattern: every connection's request arms its deadline, then
    /// its reply arms the next send, earlier; the deadline entry is left behind. With a
    /// sweep after every wake the heap stays within 1.25 times the live entries plus
    /// the slack, whatever the number of rounds, and every live entry still fires in
    /// time order.
    #[test]
    fn re_arming_earlier_keeps_the_heap_bounded() {
        const SLOTS: u32 = 20_000;
        const PERIOD: u64 = 10;
        const TIMEOUT: u64 = 35;
        let mut t = Timers::with_capacity(SLOTS as usize * 2);
        // The time each slot's live entry is armed for (its `wake_at`).
        let mut wake = vec![0u64; SLOTS as usize];
        for s in 0..SLOTS {
            wake[s as usize] = u64::from(s % 7);
            t.arm(wake[s as usize], s, 0);
        }
        let mut fired = 0u64;
        let mut most = 0;
        let mut last = 0;
        for now in 0..2_000u64 {
            while let Some((at, s, _)) = t.pop_due(now) {
                assert!(at >= last, "entries come out in time order");
                last = at;
                if wake[s as usize] != at {
                    continue; // stale: ignored, as a handler does
                }
                fired += 1;
                // Sends: arms the request's deadline (the slot's only entry now) ...
                wake[s as usize] = now + TIMEOUT;
                t.arm(now + TIMEOUT, s, 0);
                // ... and the reply arms the next send, earlier: the deadline is stale.
                wake[s as usize] = now + PERIOD;
                t.arm(now + PERIOD, s, 0);
            }
            t.sweep(|at, s, _| wake[s as usize] == at);
            most = most.max(t.len());
        }
        let bound = SLOTS as usize + SLOTS as usize / 4 + SWEEP_SLACK;
        assert!(
            most <= bound,
            "the heap reached {most} entries (bound {bound})"
        );
        // Without sweeping it holds TIMEOUT / PERIOD + 1 entries per slot.
        assert!(most < SLOTS as usize * 2);
        // Every slot fired once per period: 2,000 ticks / 10.
        assert!(fired >= u64::from(SLOTS) * 199, "{fired} fired");
        // A sweep keeps exactly the live entries (one per slot here).
        t.sweep_now(|at, s, _| wake[s as usize] == at);
        assert_eq!(t.len(), SLOTS as usize);
    }

    #[test]
    fn a_small_heap_is_not_swept_on_every_wake() {
        let mut t = Timers::with_capacity(4);
        for i in 0..SWEEP_SLACK as u64 {
            t.arm(i, 0, 0);
        }
        let mut asked = 0;
        t.sweep(|_, _, _| {
            asked += 1;
            false
        });
        assert_eq!((asked, t.len()), (0, SWEEP_SLACK));
        t.arm(0, 0, 0);
        t.sweep(|at, _, _| at == 0);
        assert_eq!(t.len(), 2, "the two live entries are kept");
    }
}
