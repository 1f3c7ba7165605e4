//! One monotonic time base per run: every timestamp is nanoseconds since its start,
//! so frames can carry send times and workers can compare them without conversions.

use std::time::{Duration, Instant};

#[derive(Clone, Copy, Debug)]
pub struct Clock {
    start: Instant,
}

impl Clock {
    pub fn new() -> Self {
        Clock {
            start: Instant::now(),
        }
    }

    /// Nanoseconds since the clock started.
    #[inline]
    pub fn now_ns(&self) -> u64 {
        self.start.elapsed().as_nanos() as u64
    }

    /// The instant `ns` nanoseconds after the start.
    pub fn instant_at(&self, ns: u64) -> Instant {
        self.start + Duration::from_nanos(ns)
    }
}

impl Default for Clock {
    fn default() -> Self {
        Self::new()
    }
}
