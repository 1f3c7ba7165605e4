//! What only a client connection with work holds (requests in flight, unfinished
//! bytes), and the worker's pool of them.
//!
//! Out of the slab, so an idle connection costs its slot alone. A connection takes a
//! `Busy` when it first has work and gives it back when it is idle for a while or its
//! slot retires; the pool keeps what was given back for the next one. Through malloc,
//! the boxes of ~19,000 slow open-loop connections (one request each per 10 s) were
//! freed between other allocations and the worker's arena kept the pages: 314 B per
//! idle connection instead of 217 (the client rows of
//! BENCHMARKS.md#memory-per-idle-connection). Pooled, a box and its queue's room are
//! reused as they are: no allocation per request for such connections either.

use super::session::InFlight;
use std::collections::VecDeque;

/// Most in-flight entries a pooled box's queue keeps room for when given back: a
/// deeper pipeline's queue is dropped to this (32 bytes an entry), so a pool filled by
/// a burst of deep pipelines does not hold their whole room.
const KEEP_IN_FLIGHT: usize = 64;

#[derive(Default)]
pub struct Busy {
    pub inflight: VecDeque<InFlight>,
    /// An unfinished reply's bytes (allocated on demand, freed once idle).
    pub input: Vec<u8>,
    /// What the socket did not take yet (allocated on demand, freed once idle).
    pub output: Vec<u8>,
    /// Bytes this connection counts in its worker's `Ctx::kept`: its buffers' room
    /// (and on io_uring what its sends hold), as last brought up to date.
    pub held: usize,
    /// Settles-on-write requests already written (warm-up, measured): not counted yet,
    /// as nothing says the peer read them until the connection closes cleanly.
    pub written: [u64; 2],
    /// Entries of `inflight` that settle on write (`InFlight::on_write`), not written
    /// yet: 0 for every protocol whose requests all get replies, so its replies take
    /// the paths that never look for them.
    pub on_write: u32,
}

impl Busy {
    /// Holds nothing that must outlive a release.
    pub fn is_empty(&self) -> bool {
        self.inflight.is_empty()
            && self.input.is_empty()
            && self.output.is_empty()
            && self.written == [0; 2]
            && self.held == 0
    }

    /// The oldest request that waits for a reply, passing over those that settle on
    /// write.
    #[inline]
    pub fn awaited(&self) -> Option<&InFlight> {
        if self.on_write == 0 {
            return self.inflight.front();
        }
        self.inflight.iter().find(|r| !r.on_write)
    }

    /// A reply came: the requests that settle on write sent before the oldest awaited
    /// one were written (the peer answered a later request), so they leave the queue.
    pub fn written_before_awaited(&mut self) {
        while let Some(r) = self.inflight.front().filter(|r| r.on_write).copied() {
            self.inflight.pop_front();
            self.note_written(&r);
        }
    }

    /// Everything encoded is written: every request that settles on write leaves the
    /// queue, counted when the connection ends.
    pub fn all_written(&mut self) {
        if self.on_write as usize == self.inflight.len() {
            for r in self.inflight.drain(..) {
                self.written[r.measured as usize] += 1;
            }
            self.on_write = 0;
            return;
        }
        let mut written = [0u64; 2];
        self.inflight.retain(|r| {
            written[r.measured as usize] += r.on_write as u64;
            !r.on_write
        });
        self.written[0] += written[0];
        self.written[1] += written[1];
        self.on_write = 0;
    }

    /// A request that settles on write left the queue written.
    #[inline]
    pub fn note_written(&mut self, r: &InFlight) {
        self.written[r.measured as usize] += 1;
        self.on_write -= 1;
    }

    /// Takes the oldest entry out of the queue (a timeout, a reply past the cap).
    pub fn pop_oldest(&mut self) -> Option<InFlight> {
        let r = self.inflight.pop_front()?;
        self.on_write -= r.on_write as u32;
        Some(r)
    }

    /// Takes the oldest request that waits for a reply out of the queue.
    pub fn pop_awaited(&mut self) -> Option<InFlight> {
        if self.on_write == 0 {
            return self.inflight.pop_front();
        }
        let at = self.inflight.iter().position(|r| !r.on_write)?;
        self.inflight.remove(at)
    }

    /// Empties the queue (its entries settled or counted by the caller).
    pub fn clear_queue(&mut self) {
        self.inflight.clear();
        self.on_write = 0;
    }
}

/// The boxes given back by this worker's connections. It never holds more than were
/// out at once (the peak of busy connections, at most the worker's slots), each with
/// its in-flight queue's room (at most `KEEP_IN_FLIGHT` entries) and no byte buffer.
pub struct BusyPool {
    // Boxes, not values: a slot holds its `Busy` by pointer (8 bytes in the slab), and
    // a box moves between a slot and the pool without being copied or reallocated.
    #[allow(clippy::vec_box)]
    free: Vec<Box<Busy>>,
    /// Room a new box's queue starts with: the pipeline (up to `KEEP_IN_FLIGHT`), so a
    /// window of one holds one entry, not the four a growing `VecDeque` starts at.
    room: usize,
}

impl BusyPool {
    pub fn new(pipeline: usize) -> BusyPool {
        BusyPool {
            free: Vec::new(),
            room: pipeline.clamp(1, KEEP_IN_FLIGHT),
        }
    }

    /// A box for a connection that has work now.
    #[inline]
    pub fn take(&mut self) -> Box<Busy> {
        self.free.pop().unwrap_or_else(|| {
            Box::new(Busy {
                inflight: VecDeque::with_capacity(self.room),
                ..Busy::default()
            })
        })
    }

    /// Takes back a connection's box; what it still held is the caller's to settle
    /// first (it is cleared here).
    pub fn give(&mut self, mut b: Box<Busy>) {
        b.clear_queue();
        b.inflight.shrink_to(KEEP_IN_FLIGHT);
        b.input = Vec::new();
        b.output = Vec::new();
        b.written = [0; 2];
        self.free.push(b);
    }

    #[cfg(test)]
    pub fn pooled(&self) -> usize {
        self.free.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::session::Lane;

    #[test]
    fn boxes_come_back_emptied_and_are_reused() {
        let mut pool = BusyPool::new(1);
        let mut a = pool.take();
        assert!(a.inflight.capacity() >= 1 && a.inflight.capacity() < 4);
        a.input.extend_from_slice(b"partial");
        a.written = [1, 2];
        let at = &*a as *const Busy;
        pool.give(a);
        assert_eq!(pool.pooled(), 1);
        let b = pool.take();
        assert_eq!(&*b as *const Busy, at, "the same box");
        assert!(b.is_empty());
        assert_eq!(b.input.capacity(), 0);
        assert_eq!(pool.pooled(), 0);
        // A new box when none is pooled; the pool holds what was out at once.
        let c = pool.take();
        pool.give(b);
        pool.give(c);
        assert_eq!(pool.pooled(), 2);
    }

    #[test]
    fn a_deep_queue_keeps_bounded_room() {
        let mut pool = BusyPool::new(1_000_000);
        let mut a = pool.take();
        assert_eq!(a.inflight.capacity(), KEEP_IN_FLIGHT);
        for seq in 0..1000 {
            a.inflight.push_back(InFlight {
                seq,
                intended_ns: 0,
                sent_ns: 0,
                tag: 0,
                lane: Lane::ANY,
                measured: true,
                on_write: false,
            });
        }
        pool.give(a);
        assert!(pool.take().inflight.capacity() <= KEEP_IN_FLIGHT);
    }
}
