//! Request-head and idle timeouts that cost nothing per request. Each server thread
//! has a coarse clock (a tick counter a ticker task advances); a connection stamps its
//! activity with one load of that counter, and its one timer is re-armed only when it
//! fires early (the deadline moved on) or a deadline comes closer (a head started), so
//! busy connections never touch the timer wheel per request.

use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::Context;
use std::time::Duration;
use tokio::time::{Instant, Sleep};

/// The server's timeouts; `None` is off.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Timeouts {
    /// A request head must be complete this long after its first byte (after the
    /// accept, for a connection's first request). Only protocols with heads (HTTP).
    pub header: Option<Duration>,
    /// A connection with no bytes in or out for this long is closed.
    pub idle: Option<Duration>,
}

impl Timeouts {
    pub fn any(&self) -> bool {
        self.header.is_some() || self.idle.is_some()
    }

    /// A tenth of the shortest timeout, between 10 ms and 1 s: timeouts fire at most
    /// one tick late.
    pub fn tick(&self) -> Duration {
        let shortest = [self.header, self.idle]
            .into_iter()
            .flatten()
            .min()
            .unwrap_or(Duration::from_secs(10));
        (shortest / 10).clamp(Duration::from_millis(10), Duration::from_secs(1))
    }
}

/// Which timeout closed a connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expired {
    Header,
    Idle,
}

/// A per-thread clock in ticks since the thread started.
pub struct CoarseClock {
    ticks: Cell<u64>,
    tick: Duration,
    start: Instant,
}

impl CoarseClock {
    pub fn new(tick: Duration) -> CoarseClock {
        CoarseClock {
            ticks: Cell::new(0),
            tick,
            start: Instant::now(),
        }
    }

    #[inline]
    pub fn now(&self) -> u64 {
        self.ticks.get()
    }

    fn instant_of(&self, tick: u64) -> Instant {
        self.start + self.tick * tick.min(u32::MAX as u64) as u32
    }

    /// Advances the clock for as long as the thread runs (a task of its own).
    pub async fn run(self: Rc<Self>) {
        loop {
            tokio::time::sleep_until(self.instant_of(self.now() + 1)).await;
            let t = (self.start.elapsed().as_nanos() / self.tick.as_nanos()) as u64;
            self.ticks.set(t.max(self.now() + 1));
        }
    }
}

const NONE: u64 = u64::MAX;

/// One connection's deadlines, in ticks of its thread's clock.
pub struct ConnTimer {
    clock: Rc<CoarseClock>,
    header_ticks: u64,
    idle_ticks: u64,
    last_active: u64,
    /// When the head now arriving started (NONE: not in a head).
    head_since: u64,
    /// Made at the first wait, so a connection that never waits has no timer.
    sleep: Option<Pin<Box<Sleep>>>,
    /// The tick `sleep` fires at (NONE: not armed).
    armed: u64,
}

fn ticks_of(d: Option<Duration>, tick: Duration) -> u64 {
    d.map_or(0, |d| (d.as_nanos() / tick.as_nanos()).max(1) as u64)
}

impl ConnTimer {
    /// `in_head`: the connection starts waiting for a request head (HTTP).
    pub fn new(clock: Rc<CoarseClock>, t: &Timeouts, in_head: bool) -> ConnTimer {
        let now = clock.now();
        ConnTimer {
            header_ticks: ticks_of(t.header, clock.tick),
            idle_ticks: ticks_of(t.idle, clock.tick),
            clock,
            last_active: now,
            head_since: if in_head { now } else { NONE },
            sleep: None,
            armed: NONE,
        }
    }

    /// Bytes went in or out.
    #[inline]
    pub fn touch(&mut self) {
        self.last_active = self.clock.now();
    }

    /// Whether the connection now waits for the rest of a request head.
    #[inline]
    pub fn set_in_head(&mut self, in_head: bool) {
        if !in_head {
            self.head_since = NONE;
        } else if self.head_since == NONE {
            self.head_since = self.clock.now();
        }
    }

    /// Called when the connection is about to wait: which deadline has passed, if
    /// one has; otherwise makes sure the task wakes by the earliest one. `idle`: the
    /// idle timeout applies now (the server itself is not holding replies back).
    pub fn check(&mut self, cx: &mut Context<'_>, idle: bool) -> Option<Expired> {
        let mut now = self.clock.now();
        loop {
            if let Some(s) = &self.sleep {
                if self.armed != NONE && s.is_elapsed() {
                    // Woken by the timer: it may run ahead of the ticker task.
                    now = now.max(self.armed);
                    self.armed = NONE;
                }
            }
            let head = if self.header_ticks > 0 && self.head_since != NONE {
                self.head_since.saturating_add(self.header_ticks)
            } else {
                NONE
            };
            let quiet = if self.idle_ticks > 0 && idle {
                self.last_active.saturating_add(self.idle_ticks)
            } else {
                NONE
            };
            if head != NONE && now >= head {
                return Some(Expired::Header);
            }
            if quiet != NONE && now >= quiet {
                return Some(Expired::Idle);
            }
            let due = head.min(quiet);
            // Lazy: a deadline that moved later is found when the armed timer fires.
            if due == NONE || (self.armed != NONE && self.armed <= due) {
                return None;
            }
            let at = self.clock.instant_of(due);
            let sleep = match &mut self.sleep {
                Some(s) => {
                    s.as_mut().reset(at);
                    s
                }
                None => self.sleep.insert(Box::pin(tokio::time::sleep_until(at))),
            };
            self.armed = due;
            // Registers the task's waker; a tokio task keeps one waker for its life,
            // so later waits need not poll the timer again.
            if sleep.as_mut().poll(cx).is_pending() {
                return None;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tick_is_a_tenth_of_the_shortest_timeout() {
        let t = Timeouts {
            header: Some(Duration::from_secs(1)),
            idle: Some(Duration::from_secs(60)),
        };
        assert_eq!(t.tick(), Duration::from_millis(100));
        let t = Timeouts {
            header: None,
            idle: Some(Duration::from_secs(60)),
        };
        assert_eq!(t.tick(), Duration::from_secs(1));
        let t = Timeouts {
            header: Some(Duration::from_millis(20)),
            idle: None,
        };
        assert_eq!(t.tick(), Duration::from_millis(10));
        assert!(!Timeouts::default().any());
    }

    #[tokio::test]
    async fn deadlines_in_ticks() {
        let clock = Rc::new(CoarseClock::new(Duration::from_millis(100)));
        let t = Timeouts {
            header: Some(Duration::from_secs(1)),
            idle: Some(Duration::from_secs(3)),
        };
        let waker = futures_noop_waker();
        let mut cx = Context::from_waker(&waker);
        let mut c = ConnTimer::new(clock.clone(), &t, true);
        assert_eq!(c.check(&mut cx, true), None);
        assert_eq!(c.armed, 10, "armed for the head deadline");
        clock.ticks.set(9);
        c.touch();
        assert_eq!(c.check(&mut cx, true), None);
        clock.ticks.set(10);
        assert_eq!(c.check(&mut cx, true), Some(Expired::Header));
        // The head completed: only the idle deadline (from the last touch, tick 9) runs.
        c.set_in_head(false);
        assert_eq!(c.check(&mut cx, true), None);
        clock.ticks.set(38);
        assert_eq!(c.check(&mut cx, false), None, "idle does not apply");
        assert_eq!(c.check(&mut cx, true), None);
        clock.ticks.set(39);
        assert_eq!(c.check(&mut cx, true), Some(Expired::Idle));
    }

    fn futures_noop_waker() -> std::task::Waker {
        std::task::Waker::noop().clone()
    }
}
