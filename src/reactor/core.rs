//! The epoll wait/dispatch loop. One clock read before a wait and one after its
//! events (for the timers); no allocation once the event buffer and the ready lists
//! have grown. What the turn does around the wait is `turn.rs`, shared with the
//! io_uring loop.

use super::handler::EpollHandler;
use super::token::STOP_TOKEN;
use super::turn::{Stop, Turn};
use crate::clock::Clock;
use crate::net::epoll::Epoll;
use std::time::Duration;

pub struct Reactor {
    clock: Clock,
    events: Vec<libc::epoll_event>,
    /// What the turn does around its wait, as on io_uring.
    turn: Turn,
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
            turn: Turn::new(coarse.as_nanos() as u64, stop),
        })
    }

    /// Measure the thread's CPU time from `at` (ns on the clock): the loop wakes then.
    pub fn measure_cpu_from(&mut self, at: u64) {
        self.turn.cpu.start_at(at);
    }

    /// The thread's CPU time since the measured phase began (zero if it never did).
    pub fn cpu_measured(&self) -> Duration {
        self.turn.cpu.measured()
    }

    /// Runs until the handler ends the loop (`after_wake` says `None`, or `on_stop`
    /// says true).
    pub fn run<H: EpollHandler>(&mut self, h: &mut H) {
        let Some(mut next) = h.after_wake(self.clock.now_ns()) else {
            return;
        };
        loop {
            let now = self.clock.now_ns();
            let timeout = self.turn.timeout(h, next, now);
            let n = wait(h, &mut self.events, timeout);
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
            let clock = self.clock;
            match self.turn.end(h, || clock.now_ns(), stop) {
                Some(n) => next = n,
                None => return,
            }
        }
    }
}

/// The turn's wait: at once when there is no nap to take (`nap::nap_before`); else a
/// look (no wait), and, if nothing is ready, the nap, another look, and the wait for
/// what is left of the timeout.
fn wait<H: EpollHandler>(h: &H, events: &mut [libc::epoll_event], timeout: u64) -> usize {
    let nap = super::nap::nap_before(h, timeout);
    if nap == 0 {
        return h.epoll().wait(events, timeout);
    }
    let n = h.epoll().wait(events, 0);
    if n > 0 {
        return n;
    }
    super::nap::nap(nap);
    let n = h.epoll().wait(events, 0);
    if n > 0 {
        return n;
    }
    h.epoll().wait(events, timeout - nap)
}
