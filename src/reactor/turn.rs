//! What a loop turn does around its wait, the same on both cores (`Reactor` on epoll,
//! `UringReactor` on io_uring): how long the wait may sleep (the handler's deadline,
//! its timers, a coarse tick, the measured phase's start; not at all while slots wait
//! in the ready list), and the turn's end once the wait's events or completions are
//! served (the ready list, the due timers, the turn-end flush, the measured CPU time,
//! the stop signal, `after_wake`); and how a loop is told to stop (`Stop`). Only the
//! wait and what it hands over differ.

use super::handler::Handler;
use super::measured_cpu::MeasuredCpu;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// How a loop is told to stop.
pub enum Stop {
    /// Set by a signal handler, which cannot wake the loop: it looks at least every
    /// coarse tick.
    Flag(Arc<AtomicBool>),
    /// An eventfd: readable means stop, at once (the epoll loop never reads it; the
    /// io_uring loop's read of it is its wake-up).
    Fd(i32),
}

pub struct Turn {
    /// The ready list being served, swapped with the handler's so neither reallocates.
    again: Vec<(u32, u32)>,
    /// The slots whose sends are being flushed at the end of a turn (`Pending`).
    flushing: Vec<u32>,
    /// The loop wakes at least this often (ns), to see a stop flag.
    coarse_ns: u64,
    stop: Stop,
    stopped: bool,
    /// The thread's CPU time over the measured phase.
    pub cpu: MeasuredCpu,
}

impl Turn {
    pub fn new(coarse_ns: u64, stop: Stop) -> Turn {
        Turn {
            again: Vec::new(),
            flushing: Vec::new(),
            coarse_ns: coarse_ns.max(1),
            stop,
            stopped: false,
            cpu: MeasuredCpu::default(),
        }
    }

    pub fn stop(&self) -> &Stop {
        &self.stop
    }

    /// How long (ns) the wait may sleep from `now`, the handler's `next` deadline given.
    #[inline]
    pub fn timeout<H: Handler>(&self, h: &mut H, next: u64, now: u64) -> u64 {
        let mut wake = next.min(now.saturating_add(self.coarse_ns));
        if let Some(t) = h.timers().next() {
            wake = wake.min(t);
        }
        if let Some(m) = self.cpu.wake_at() {
            wake = wake.min(m);
        }
        if h.ready().is_empty() {
            wake.saturating_sub(now)
        } else {
            0
        }
    }

    /// The turn's end, its events or completions served (`stop`: the wait handed over
    /// a stop signal): the slots that yielded, then, at `now()` (the epoll loop reads
    /// the clock there; the io_uring loop gives its turn's reading), the due timers,
    /// the gathered sends, the CPU time, the stop (once) and `after_wake`. Returns the
    /// handler's next deadline, or `None` when the loop ends.
    #[inline]
    pub fn end<H: Handler>(
        &mut self,
        h: &mut H,
        now: impl FnOnce() -> u64,
        stop: bool,
    ) -> Option<u64> {
        std::mem::swap(&mut self.again, h.ready());
        for (slot, gen) in self.again.drain(..) {
            h.on_ready(slot, gen);
        }
        let now = now();
        while let Some((at, slot, gen)) = h.timers().pop_due(now) {
            h.on_timer(at, slot, gen);
        }
        if let Some(p) = h.pending() {
            p.take(&mut self.flushing);
            for &slot in &self.flushing {
                h.on_flush(slot);
            }
        }
        self.cpu.on_turn(now);
        if !self.stopped {
            let flagged = matches!(&self.stop, Stop::Flag(f) if f.load(Ordering::Relaxed));
            if stop || flagged {
                self.stopped = true;
                if h.on_stop() {
                    return None;
                }
            }
        }
        h.after_wake(now)
    }
}
