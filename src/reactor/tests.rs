//! The reactor with a recording handler: events by token, the ready list before the
//! next wait, timers in time order, the turn's gathered sends flushed after all of
//! them, the stop signals, and the end of the loop.

use super::*;
use crate::clock::Clock;
use crate::net::epoll::Epoll;
use std::collections::BTreeSet;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

fn eventfd() -> i32 {
    // SAFETY: no preconditions.
    let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
    assert!(fd >= 0);
    fd
}

fn signal(fd: i32) {
    let one: u64 = 1;
    // SAFETY: writes 8 bytes from a valid u64.
    let n = unsafe { libc::write(fd, &one as *const u64 as *const libc::c_void, 8) };
    assert_eq!(n, 8);
}

#[derive(Debug, PartialEq)]
enum Seen {
    Event(u64),
    Ready(u32, u32),
    Timer(u64, u32, u32),
    Flush(u32),
    Stop,
}

struct Recorder {
    ep: Epoll,
    timers: Timers,
    ready: Vec<(u32, u32)>,
    pending: Pending,
    seen: Vec<Seen>,
    /// The loop ends after this many wake-ups (a bound, in case a signal is lost).
    wakes_left: u32,
    end_on_stop: bool,
    stopped: bool,
    /// What `nap_ns` says.
    nap_ns: u64,
    /// The loop does not end before this token's event came.
    awaited: Option<u64>,
}

impl Recorder {
    fn new(end_on_stop: bool) -> Recorder {
        Recorder {
            ep: Epoll::new().expect("epoll"),
            timers: Timers::default(),
            ready: Vec::new(),
            pending: Pending::default(),
            seen: Vec::new(),
            wakes_left: 200,
            end_on_stop,
            stopped: false,
            nap_ns: 0,
            awaited: None,
        }
    }
}

impl EpollHandler for Recorder {
    fn epoll(&self) -> &Epoll {
        &self.ep
    }
    fn on_event(&mut self, token: u64, _events: u32) {
        assert!(self.pending.collecting());
        self.seen.push(Seen::Event(token));
        let (slot, gen) = split(token);
        self.pending.mark(slot);
        // Yields: served again before the next wait.
        self.ready.push((slot, gen));
    }
}

impl Handler for Recorder {
    fn timers(&mut self) -> &mut Timers {
        &mut self.timers
    }
    fn ready(&mut self) -> &mut Vec<(u32, u32)> {
        &mut self.ready
    }
    fn pending(&mut self) -> Option<&mut Pending> {
        Some(&mut self.pending)
    }
    fn on_flush(&mut self, slot: u32) {
        assert!(!self.pending.collecting(), "a flush writes at once");
        self.seen.push(Seen::Flush(slot));
    }
    fn on_ready(&mut self, slot: u32, gen: u32) {
        self.seen.push(Seen::Ready(slot, gen));
        // Marked again in the same turn: flushed once.
        self.pending.mark(slot);
    }
    fn on_timer(&mut self, at: u64, slot: u32, gen: u32) {
        self.seen.push(Seen::Timer(at, slot, gen));
        self.pending.mark(slot);
    }
    fn on_stop(&mut self) -> bool {
        assert!(!self.pending.collecting());
        self.seen.push(Seen::Stop);
        self.stopped = true;
        self.end_on_stop
    }
    fn after_wake(&mut self, _now: u64) -> Option<u64> {
        assert!(!self.pending.collecting() && self.pending.is_empty());
        self.wakes_left = self.wakes_left.checked_sub(1)?;
        let timers_done = self
            .seen
            .iter()
            .filter(|s| matches!(s, Seen::Timer(..)))
            .count()
            == 3;
        let came = self
            .awaited
            .is_none_or(|t| self.seen.contains(&Seen::Event(t)));
        (!(self.stopped && timers_done && came)).then_some(u64::MAX)
    }
    fn nap_ns(&self) -> u64 {
        self.nap_ns
    }
}

/// `seen` cut into turns: the entries up to the next flush, then that run of flushes.
fn turns(seen: &[Seen]) -> Vec<(Vec<&Seen>, Vec<u32>)> {
    let mut turns = Vec::new();
    let mut i = 0;
    while i < seen.len() {
        let mut did = Vec::new();
        while let Some(s) = seen.get(i).filter(|s| !matches!(s, Seen::Flush(_))) {
            did.push(s);
            i += 1;
        }
        let mut flushed = Vec::new();
        while let Some(Seen::Flush(slot)) = seen.get(i) {
            flushed.push(*slot);
            i += 1;
        }
        turns.push((did, flushed));
    }
    turns
}

/// The slot an entry marks for the turn's flush, if any.
fn marked_slot(s: &Seen) -> Option<u32> {
    match s {
        Seen::Event(token) => Some(split(*token).0),
        Seen::Ready(slot, _) | Seen::Timer(_, slot, _) => Some(*slot),
        Seen::Flush(_) | Seen::Stop => None,
    }
}

#[test]
fn events_ready_list_timers_and_a_stop_flag() {
    events_ready_list_timers_and_a_stop_flag_napping(0);
}

/// The same with a nap before each wait: nothing is lost, late or out of order, and
/// an event that comes while the loop waits (after its nap) still wakes it.
#[test]
fn a_napping_loop_serves_the_same() {
    events_ready_list_timers_and_a_stop_flag_napping(50_000);
}

fn events_ready_list_timers_and_a_stop_flag_napping(nap_ns: u64) {
    let clock = Clock::new();
    let mut h = Recorder::new(false);
    h.nap_ns = nap_ns;
    let fd = eventfd();
    let tok = token(7, 3);
    h.ep.add(fd, libc::EPOLLIN as u32 | libc::EPOLLET as u32, tok)
        .expect("add");
    signal(fd);
    let late = eventfd();
    let late_tok = token(5, 2);
    h.awaited = Some(late_tok);
    // A coarse wake-up every 5 ms: 10 s at most, however slowly the signaller runs.
    h.wakes_left = 2000;
    h.ep.add(late, libc::EPOLLIN as u32 | libc::EPOLLET as u32, late_tok)
        .expect("add");
    let signaller = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(2));
        signal(late);
    });
    let t0 = clock.now_ns();
    h.timers.arm(t0 + 20_000_000, 2, 1);
    h.timers.arm(t0 + 5_000_000, 1, 9);
    h.timers.arm(t0 + 10_000_000, 3, 4);
    let flag = Arc::new(AtomicBool::new(true));
    let mut r =
        Reactor::new(clock, &h.ep, 8, Duration::from_millis(5), Stop::Flag(flag)).expect("reactor");
    r.measure_cpu_from(0);
    r.run(&mut h);
    // The turn's sends go after its events, ready slots and timers, once per slot. A
    // turn is what it did, then its flushes; which timers share a turn depends on how
    // late the thread woke, so only what each turn marked is compared with what it
    // flushed.
    let turns = turns(&h.seen);
    assert_eq!(
        turns[0].0[..2],
        [&Seen::Event(tok), &Seen::Ready(7, 3)],
        "{:?}",
        h.seen
    );
    for (did, flushed) in &turns {
        let marked: BTreeSet<u32> = did.iter().filter_map(|s| marked_slot(s)).collect();
        let once: BTreeSet<u32> = flushed.iter().copied().collect();
        assert_eq!(
            once.len(),
            flushed.len(),
            "a slot flushed twice: {:?}",
            h.seen
        );
        assert_eq!(once, marked, "{:?}", h.seen);
    }
    let timers: Vec<(u32, u32)> = h
        .seen
        .iter()
        .filter_map(|s| match s {
            Seen::Timer(at, slot, gen) => {
                assert!(*at >= t0 + 5_000_000);
                Some((*slot, *gen))
            }
            _ => None,
        })
        .collect();
    assert_eq!(timers, [(1, 9), (3, 4), (2, 1)], "in time order");
    signaller.join().expect("signaller");
    assert_eq!(
        h.seen
            .iter()
            .filter(|s| **s == Seen::Event(late_tok))
            .count(),
        1,
        "{:?}",
        h.seen
    );
    assert_eq!(h.seen.iter().filter(|s| **s == Seen::Stop).count(), 1);
    assert!(
        clock.now_ns() >= t0 + 20_000_000,
        "the last timer was waited for"
    );
    assert!(h.wakes_left > 0, "ended by the handler, not the bound");
    crate::net::socket::close(fd);
    crate::net::socket::close(late);
}

#[test]
fn a_stop_eventfd_ends_the_loop_at_once() {
    let clock = Clock::new();
    let mut h = Recorder::new(true);
    let stop = eventfd();
    let mut r =
        Reactor::new(clock, &h.ep, 8, Duration::from_secs(10), Stop::Fd(stop)).expect("reactor");
    signal(stop);
    h.timers.arm(clock.now_ns() + 60_000_000_000, 0, 0);
    r.run(&mut h);
    assert_eq!(h.seen, [Seen::Stop]);
    assert!(clock.now_ns() < 5_000_000_000);
    assert_eq!(r.cpu_measured(), Duration::ZERO, "never asked to measure");
    crate::net::socket::close(stop);
}
