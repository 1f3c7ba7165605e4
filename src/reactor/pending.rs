//! The sends of one loop turn, issued together at its end.
//!
//! Why: a loop that reads, decodes and writes each ready connection in turn spreads
//! its writes over the whole turn, with reads between them; the peer on the other CPU
//! can be woken by the first write, run dry and sleep again before the next one comes,
//! and is then woken again (a wake-up, on a VM an IPI, and its epoll_wait's return per
//! write instead of per turn). Redis queues its replies for the same reason and writes
//! them in `beforeSleep`. While a turn's events, ready slots and timers are served the
//! list is *collecting*: a handler that would write marks the slot instead; then the
//! reactor stops collecting and hands every marked slot back (`Handler::on_flush`),
//! in the order they were marked, before the next wait.
//!
//! Keyed by slot alone: a slot reused within the turn (a new generation) is asked to
//! flush what it has then, which is exactly what the new connection needs; a slot that
//! has nothing left to write does nothing. No allocation per request: the list and the
//! bit set grow with the highest slot seen (the handler's slab) and are kept.

#[derive(Default)]
pub struct Pending {
    /// Marked slots, in marking order.
    slots: Vec<u32>,
    /// One bit per slot: marked this turn (no slot is listed twice).
    marked: Vec<u64>,
    collecting: bool,
}

impl Pending {
    /// Room for slots 0..n without growing.
    pub fn with_capacity(n: usize) -> Pending {
        Pending {
            slots: Vec::with_capacity(n),
            marked: vec![0; n.div_ceil(64)],
            collecting: false,
        }
    }

    /// Whether sends are being gathered now (a turn's events, ready slots and timers),
    /// rather than written at once (the flush itself, and work outside a turn).
    #[inline]
    pub fn collecting(&self) -> bool {
        self.collecting
    }

    /// Marks `slot` for the flush at the end of this turn (once, however often asked).
    #[inline]
    pub fn mark(&mut self, slot: u32) {
        let (word, bit) = (slot as usize / 64, 1u64 << (slot % 64));
        if word >= self.marked.len() {
            // Grows with the handler's slab, not per request.
            self.marked.resize(word + 1, 0);
        }
        if self.marked[word] & bit == 0 {
            self.marked[word] |= bit;
            self.slots.push(slot);
        }
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// The reactor: a turn begins to gather its sends.
    pub(super) fn start(&mut self) {
        self.collecting = true;
    }

    /// The reactor: the turn's gathering ends. The marked slots move into `into` (kept
    /// by the reactor, swapped back and forth so neither reallocates) and are unmarked;
    /// from now on sends go out at once, so the flush itself marks nothing.
    pub(super) fn take(&mut self, into: &mut Vec<u32>) {
        self.collecting = false;
        for &s in &self.slots {
            self.marked[s as usize / 64] &= !(1u64 << (s % 64));
        }
        into.clear();
        std::mem::swap(into, &mut self.slots);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_each_slot_once_in_marking_order() {
        let mut p = Pending::with_capacity(4);
        p.start();
        assert!(p.collecting());
        for s in [3, 1, 3, 200, 1, 0] {
            p.mark(s);
        }
        let mut out = Vec::new();
        p.take(&mut out);
        assert_eq!(out, [3, 1, 200, 0]);
        assert!(!p.collecting());
        assert!(p.is_empty());
    }

    #[test]
    fn a_taken_turn_unmarks_its_slots() {
        let mut p = Pending::with_capacity(130);
        let mut out = Vec::new();
        p.start();
        p.mark(129);
        p.mark(5);
        p.take(&mut out);
        assert_eq!(out, [129, 5]);
        // The next turn marks the same slots afresh.
        p.start();
        p.mark(5);
        p.mark(129);
        p.mark(5);
        p.take(&mut out);
        assert_eq!(out, [5, 129]);
        assert!(p.marked.iter().all(|w| *w == 0));
    }

    #[test]
    fn no_allocation_once_grown() {
        let mut p = Pending::with_capacity(64);
        let mut out = Vec::with_capacity(64);
        for _ in 0..3 {
            p.start();
            for s in 0..64 {
                p.mark(s);
            }
            p.take(&mut out);
        }
        let (list, into, bits) = (p.slots.capacity(), out.capacity(), p.marked.capacity());
        for _ in 0..100 {
            p.start();
            for s in (0..64).rev() {
                p.mark(s);
            }
            p.take(&mut out);
            assert_eq!(out.len(), 64);
        }
        assert_eq!(
            (p.slots.capacity(), out.capacity(), p.marked.capacity()),
            (list, into, bits)
        );
    }
}
