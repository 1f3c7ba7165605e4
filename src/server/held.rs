//! Replies held back by --delay/--stall: their bytes back to back and when each is
//! due. Made on a connection's first paced reply and kept (nothing is allocated per
//! reply once the buffers have grown); the event loop wakes the connection when the
//! first one is due (`armed`).

use crate::rng::Rng;
use std::collections::VecDeque;
use std::time::Instant;

/// Most reply bytes one connection holds back for --delay/--stall: past it the
/// connection is not read until some have gone out (counted in `held_full`).
pub const MAX_HELD_BYTES: usize = 1 << 20;
/// Most replies one connection holds back (same rule).
pub const MAX_HELD_REPLIES: usize = 4096;

pub struct Held {
    bytes: Vec<u8>,
    /// Where the first reply still held starts in `bytes`.
    start: usize,
    queue: VecDeque<(Instant, usize)>,
    /// The due time the event loop was asked to wake this connection at.
    pub armed: Option<Instant>,
    pub rng: Rng,
    /// At the cap now (counted once per time it fills).
    pub full: bool,
}

impl Held {
    pub fn new(seed: u64) -> Box<Held> {
        Box::new(Held {
            bytes: Vec::new(),
            start: 0,
            queue: VecDeque::new(),
            armed: None,
            rng: Rng::new(seed),
            full: false,
        })
    }

    #[inline]
    pub fn holding(&self) -> bool {
        !self.queue.is_empty()
    }

    /// When the last reply held goes out: a new one never overtakes it.
    pub fn last_due(&self) -> Option<Instant> {
        self.queue.back().map(|&(d, _)| d)
    }

    pub fn push(&mut self, due: Instant, data: &[u8]) {
        if self.start > 0 && self.start >= self.bytes.len() / 2 {
            self.bytes.drain(..self.start);
            self.start = 0;
        }
        self.bytes.extend_from_slice(data);
        self.queue.push_back((due, data.len()));
    }

    pub fn over_cap(&self) -> bool {
        self.bytes.len() - self.start >= MAX_HELD_BYTES || self.queue.len() >= MAX_HELD_REPLIES
    }

    /// The first reply if it is due at `now`: (its bytes); call `pop` once written.
    pub fn due(&self, now: Instant) -> Option<&[u8]> {
        let &(due, len) = self.queue.front()?;
        (due <= now).then(|| &self.bytes[self.start..self.start + len])
    }

    /// When the first reply still held is due.
    pub fn next_due(&self) -> Option<Instant> {
        self.queue.front().map(|&(d, _)| d)
    }

    pub fn pop(&mut self) {
        if let Some((_, len)) = self.queue.pop_front() {
            self.start += len;
        }
        if self.queue.is_empty() {
            self.bytes.clear();
            self.start = 0;
        }
        if self.full && !self.over_cap() {
            self.full = false;
        }
    }
}
