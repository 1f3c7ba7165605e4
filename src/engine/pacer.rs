//! Open-loop pacing with nanosecond precision. The runtime's timers tick in whole
//! milliseconds, so a send scheduled between ticks would go out up to 1 ms late and
//! that lateness would be blamed on the server (latency counts from the intended
//! time). Each worker instead keeps one timerfd armed at the earliest due send and a
//! heap of (due time, waker); the timer's task wakes every connection that is due.

use crate::clock::Clock;
use std::cell::{Cell, RefCell};
use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::task::Waker;
use tokio::io::unix::AsyncFd;

struct Due {
    at: u64,
    waker: Waker,
}

impl PartialEq for Due {
    fn eq(&self, o: &Self) -> bool {
        self.at == o.at
    }
}
impl Eq for Due {}
impl PartialOrd for Due {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Due {
    fn cmp(&self, o: &Self) -> Ordering {
        self.at.cmp(&o.at)
    }
}

pub struct Pacer {
    clock: Clock,
    fd: AsyncFd<OwnedFd>,
    heap: RefCell<BinaryHeap<Reverse<Due>>>,
    /// When the timerfd fires next (ns on the run clock); u64::MAX when disarmed.
    armed: Cell<u64>,
}

impl Pacer {
    /// Must be called inside the worker's runtime.
    pub fn new(clock: Clock) -> std::io::Result<Pacer> {
        // SAFETY: plain syscall; the result is checked before use.
        let raw = unsafe {
            libc::timerfd_create(
                libc::CLOCK_MONOTONIC,
                libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
            )
        };
        if raw < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: raw is a fresh descriptor that nothing else owns.
        let owned = unsafe { OwnedFd::from_raw_fd(raw) };
        Ok(Pacer {
            clock,
            // SAFETY: the descriptor is owned by the AsyncFd and closed only when it drops.
            fd: unsafe { AsyncFd::register(owned) }.map_err(|e| e.into_parts().1)?,
            heap: RefCell::new(BinaryHeap::new()),
            armed: Cell::new(u64::MAX),
        })
    }

    fn arm(&self, at: u64) {
        let abs = self.clock.monotonic_at(at.max(1));
        let spec = libc::itimerspec {
            it_interval: libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            it_value: libc::timespec {
                tv_sec: (abs / 1_000_000_000) as libc::time_t,
                tv_nsec: (abs % 1_000_000_000) as libc::c_long,
            },
        };
        // SAFETY: valid descriptor and itimerspec; a past time fires at once.
        unsafe {
            libc::timerfd_settime(
                self.fd.get_ref().as_raw_fd(),
                libc::TFD_TIMER_ABSTIME,
                &spec,
                std::ptr::null_mut(),
            )
        };
        self.armed.set(at);
    }

    /// Wakes `waker` at `at` (ns on the run clock).
    pub fn schedule(&self, at: u64, waker: &Waker) {
        self.heap.borrow_mut().push(Reverse(Due {
            at,
            waker: waker.clone(),
        }));
        if at < self.armed.get() {
            self.arm(at);
        }
    }

    /// Wakes every connection waiting for its send time (the run is stopping).
    pub fn wake_all(&self) {
        for Reverse(d) in self.heap.borrow_mut().drain() {
            d.waker.wake();
        }
    }

    /// The timer's task: wakes whoever is due, re-arms for the next. Runs until aborted.
    pub async fn run(&self) {
        loop {
            let Ok(mut guard) = self.fd.readable().await else {
                return;
            };
            let mut expirations = [0u8; 8];
            // SAFETY: reading 8 bytes into an 8-byte buffer from our own timerfd.
            let n = unsafe {
                libc::read(
                    self.fd.get_ref().as_raw_fd(),
                    expirations.as_mut_ptr().cast(),
                    8,
                )
            };
            // Each expiry is a new edge, so readiness is cleared either way; EAGAIN
            // means a re-arm beat us to it.
            guard.clear_ready();
            if n < 0 {
                continue;
            }
            self.armed.set(u64::MAX);
            let now = self.clock.now_ns();
            let mut heap = self.heap.borrow_mut();
            while heap.peek().is_some_and(|d| d.0.at <= now) {
                if let Some(Reverse(d)) = heap.pop() {
                    d.waker.wake();
                }
            }
            if let Some(next) = heap.peek().map(|d| d.0.at) {
                drop(heap);
                self.arm(next);
            }
        }
    }
}
