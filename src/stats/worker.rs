//! What one load worker records while it runs. A worker is one thread with one
//! current-thread runtime; its connection tasks share these through an `Rc<RefCell>`,
//! so recording a reply is a few adds and one histogram increment: no lock, no atomic.

use super::latency::Latency;
use super::outcome::{Counters, ErrorKind};

pub struct WorkerStats {
    /// Requests sent during warm-up: counted apart, never in results.
    pub warmup: Counters,
    pub measured: Counters,
    /// Latency from the intended send time (equal to the actual one in closed loop).
    pub latency: Latency,
    /// Open loop only: latency from the actual send time, to show beside the corrected one.
    pub uncorrected: Option<Latency>,
    /// This interval's latency; handed to the reporter and reset each interval.
    pub interval: Latency,
}

impl WorkerStats {
    pub fn new(open_loop: bool) -> Self {
        WorkerStats {
            warmup: Counters::default(),
            measured: Counters::default(),
            latency: Latency::new(),
            uncorrected: open_loop.then(Latency::new),
            interval: Latency::new(),
        }
    }

    #[inline]
    pub fn phase(&mut self, measured: bool) -> &mut Counters {
        if measured {
            &mut self.measured
        } else {
            &mut self.warmup
        }
    }

    #[inline]
    pub fn record_sent(&mut self, measured: bool, bytes: u64) {
        let c = self.phase(measured);
        c.sent += 1;
        c.bytes_sent += bytes;
    }

    /// A correct reply: latency from the intended and from the actual send time.
    #[inline]
    pub fn record_ok(&mut self, measured: bool, corrected_ns: u64, actual_ns: u64, bytes: u64) {
        let c = self.phase(measured);
        c.ok += 1;
        c.bytes_received += bytes;
        if measured {
            self.latency.record(corrected_ns);
            self.interval.record(corrected_ns);
            if let Some(u) = self.uncorrected.as_mut() {
                u.record(actual_ns);
            }
        }
    }

    #[inline]
    pub fn record_error(&mut self, measured: bool, kind: ErrorKind, bytes: u64) {
        let c = self.phase(measured);
        c.error(kind, 1);
        c.bytes_received += bytes;
    }
}
