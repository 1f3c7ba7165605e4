//! The wait/dispatch loop itself. One clock read before a wait and one after its
//! events (for the timers); no allocation once the event buffer and the ready lists
//! have grown.

use super::handler::EpollHandler;
use super::measured_cpu::MeasuredCpu;
use super::token::STOP_TOKEN;
use crate::clock::Clock;
use crate::net::epoll::Epoll;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// How a loop is told to stop.
pub enum Stop {
    /// Set by a signal handler, which cannot wake the loop: it looks at least every
    /// coarse tick.
    Flag(Arc<AtomicBool>),
    /// An eventfd: readable means stop, at once (the epoll loop never reads it; the
    /// io_uring loop's read of it is its wake-up).
    Fd(i32),
}

pub struct Reactor {
    clock: Clock,
    events: Vec<libc::epoll_event>,
    /// The ready list being served, swapped with the handler's so neither reallocates.
    again: Vec<(u32, u32)>,
    /// The slots whose sends are being flushed at the end of a turn (`Pending`).
    flushing: Vec<u32>,
    /// The loop wakes at least this often (ns), to see a stop flag.
    coarse_ns: u64,
    stop: Stop,
    stopped: bool,
    /// The thread's CPU time over the measured phase.
    cpu: MeasuredCpu,
}

impl Reactor {
    /// A reactor over `epoll` (a `Stop::Fd` is registered in it now), waking at least
    /// every `coarse`, taking up to `events` events per wait.
    pub fn new(
        clock: Clock,
        epoll: &Epoll,
        events: usize,
        coarse: Duration,
        stop: Stop,
    ) -> std::io::Result<Reactor> {
        if let Stop::Fd(fd) = stop {
            epoll
                .add(fd, libc::EPOLLIN as u32, STOP_TOKEN)
                .map_err(std::io::Error::from_raw_os_error)?;
        }
        Ok(Reactor {
            clock,
            events: vec![libc::epoll_event { events: 0, u64: 0 }; events.max(1)],
            again: Vec::new(),
            flushing: Vec::new(),
            coarse_ns: coarse.as_nanos().max(1) as u64,
            stop,
            stopped: false,
            cpu: MeasuredCpu::default(),
        })
    }

    /// Measure the thread's CPU time from `at` (ns on the clock): the loop wakes then.
    pub fn measure_cpu_from(&mut self, at: u64) {
        self.cpu.start_at(at);
    }

    /// The thread's CPU time since the measured phase began (zero if it never did).
    pub fn cpu_measured(&self) -> Duration {
        self.cpu.measured()
    }

    /// Runs until the handler ends the loop (`after_wake` says `None`, or `on_stop`
    /// says true).
    pub fn run<H: EpollHandler>(&mut self, h: &mut H) {
        let Some(mut next) = h.after_wake(self.clock.now_ns()) else {
            return;
        };
        loop {
            let now = self.clock.now_ns();
            let mut wake = next.min(now.saturating_add(self.coarse_ns));
            if let Some(t) = h.timers().next() {
                wake = wake.min(t);
            }
            if let Some(m) = self.cpu.wake_at() {
                wake = wake.min(m);
            }
            let timeout = if h.ready().is_empty() {
                wake.saturating_sub(now)
            } else {
                0
            };
            let n = h.epoll().wait(&mut self.events, timeout);
            // The turn's sends are gathered while its events, ready slots and timers
            // are served, and written together at its end (`Pending`).
            if let Some(p) = h.pending() {
                p.start();
            }
            h.woke();
            let mut stop = false;
            for ev in &self.events[..n] {
                if ev.u64 == STOP_TOKEN {
                    stop = true;
                    continue;
                }
                h.on_event(ev.u64, ev.events);
            }
            std::mem::swap(&mut self.again, h.ready());
            for (slot, gen) in self.again.drain(..) {
                h.on_ready(slot, gen);
            }
            let now = self.clock.now_ns();
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
                if let Stop::Flag(f) = &self.stop {
                    stop |= f.load(Ordering::Relaxed);
                }
                if stop {
                    self.stopped = true;
                    if h.on_stop() {
                        return;
                    }
                }
            }
            match h.after_wake(now) {
                Some(n) => next = n,
                None => return,
            }
        }
    }
}
