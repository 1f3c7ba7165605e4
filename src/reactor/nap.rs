//! A loop's nap: a short sleep off the wait queue, taken when a turn finds nothing to
//! do, before the loop waits (`Handler::nap_ns` says how long).
//!
//! Why: a thread asleep in `epoll_wait` or `io_uring_enter` is woken by the first byte
//! that lands for it, and the sender pays for that wake-up, in its own system call: a
//! cross-CPU wake and, on a virtual machine, an inter-processor interrupt and its exit
//! to the hypervisor. A load generator that needs less CPU than its server idles between
//! replies, so it is woken about once per few replies, and the server spends part of
//! its time waking it (docs/coalesce.md: against nginx on HTTP/2, 0.35 sleeps per
//! request over h2c, where nginx serves it 0.88x the requests a second it serves
//! h2load, and 0.18 over TLS, at 0.81-0.83x). Asleep in `nanosleep`, the thread is on no
//! wait queue: replies land without waking it, and the next turn reads them all in one
//! go.
//!
//! The cost: a reply that lands during a nap is read up to a nap late (and the time the
//! thread takes to run again after it), so its latency reads up to that much high. The load engine keeps naps to 1% of its replies' recent
//! latency (`engine::coalesce`); a server never naps.

use super::handler::Handler;
use std::time::Duration;

/// The nap a turn takes before a wait of `timeout` ns: the handler's, or none when the
/// deadline comes before the nap would end (a nap cut short saves too little to pay
/// for itself, and an open loop's next send may be microseconds away).
pub fn nap_before<H: Handler>(h: &H, timeout: u64) -> u64 {
    match h.nap_ns() {
        nap if nap > timeout => 0,
        nap => nap,
    }
}

/// Sleeps `ns` nanoseconds, off every wait queue. The thread's first nap makes its
/// timers precise (`precise_timers`): a thread that never naps keeps the kernel's.
pub fn nap(ns: u64) {
    thread_local! {
        static PRECISE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    }
    PRECISE.with(|p| {
        if !p.get() {
            p.set(true);
            precise_timers();
        }
    });
    std::thread::sleep(Duration::from_nanos(ns));
}

/// Timer slack of a napping thread, in nanoseconds: how late the kernel may end its
/// sleeps and timeouts to group them with others. The default, 50 us, is longer than
/// most naps: it would make every nap up to 50 us longer than asked.
const TIMER_SLACK_NS: libc::c_ulong = 1_000;

/// Makes the calling thread's sleeps and timeouts end within `TIMER_SLACK_NS` of when
/// they were asked to (its naps, and its waits for a request's scheduled send).
fn precise_timers() {
    // SAFETY: PR_SET_TIMERSLACK takes one integer and touches only this thread.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, TIMER_SLACK_NS);
    }
}
