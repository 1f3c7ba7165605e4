//! One monotonic time base per run: every timestamp is nanoseconds since its start,
//! so frames can carry send times and workers can compare them without conversions.

use std::time::{Duration, Instant};

#[derive(Clone, Copy, Debug)]
pub struct Clock {
    start: Instant,
    /// The start on CLOCK_MONOTONIC (what `Instant` reads on Linux), for kernel timers.
    start_monotonic_ns: u64,
}

/// Wall-clock time now, milliseconds since the Unix epoch (when a run started).
pub fn unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// The civil date (year, month 1-12, day 1-31) of a day counted from 1970-01-01, in
/// the proleptic Gregorian calendar (Howard Hinnant's civil_from_days): for the dates
/// wirebench writes (HTTP `Date`, RFC 3339 start times) without a date crate.
pub fn civil_from_days(days: u64) -> (i64, u32, u32) {
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month as u32, day as u32)
}

/// CLOCK_MONOTONIC now, in nanoseconds.
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: ts is a valid timespec to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

impl Clock {
    pub fn new() -> Self {
        Clock {
            start: Instant::now(),
            start_monotonic_ns: monotonic_ns(),
        }
    }

    /// A clock whose time zero is `epoch` (an instant already past), so times taken
    /// as `Instant`s and as nanoseconds on this clock agree. `epoch.elapsed()` is read
    /// before CLOCK_MONOTONIC: the clock may run a few ns behind the instants, never
    /// ahead, so a timer armed for an instant never fires before it.
    pub fn since(epoch: Instant) -> Self {
        let elapsed = epoch.elapsed().as_nanos() as u64;
        Clock {
            start: epoch,
            start_monotonic_ns: monotonic_ns().saturating_sub(elapsed),
        }
    }

    /// `t` as nanoseconds on this clock (0 before its start).
    pub fn ns_of(&self, t: Instant) -> u64 {
        t.saturating_duration_since(self.start).as_nanos() as u64
    }

    /// Nanoseconds since the clock started. Read straight from CLOCK_MONOTONIC (a
    /// vDSO call): `Instant::elapsed` adds a checked timespec subtraction and a
    /// Duration, ~90 instructions a read, and the engine reads the clock per reply.
    #[inline]
    pub fn now_ns(&self) -> u64 {
        monotonic_ns().saturating_sub(self.start_monotonic_ns)
    }

    /// The instant `ns` nanoseconds after the start.
    pub fn instant_at(&self, ns: u64) -> Instant {
        self.start + Duration::from_nanos(ns)
    }

    /// `ns` after the start, on CLOCK_MONOTONIC.
    pub fn monotonic_at(&self, ns: u64) -> u64 {
        self.start_monotonic_ns + ns
    }
}

impl Default for Clock {
    fn default() -> Self {
        Self::new()
    }
}
