//! What an event loop's owner gives a reactor: where its timers and ready list live
//! (inside its own state, because its slots arm timers and yield while they run), and
//! what to do with each timer and wake-up (`Handler`, shared by both loops); plus what
//! the epoll loop hands it (`EpollHandler`: readiness by token). The io_uring loop's
//! part (completions) is `uring_loop::UringHandler`.

use super::pending::Pending;
use super::timers::Timers;
use crate::net::epoll::Epoll;

pub trait Handler {
    fn timers(&mut self) -> &mut Timers;
    /// Slots that stopped before their socket was drained, to give the others a turn:
    /// (slot, generation), driven again before the next wait.
    fn ready(&mut self) -> &mut Vec<(u32, u32)>;

    /// Where the turn's sends are gathered (`Pending`), if the handler defers them to
    /// the end of the turn: a slot marked there gets `on_flush` once the turn's events,
    /// ready slots and timers are served.
    fn pending(&mut self) -> Option<&mut Pending> {
        None
    }
    /// A slot marked in `pending` this turn: write what it has now.
    fn on_flush(&mut self, _slot: u32) {}

    /// A slot from the ready list.
    fn on_ready(&mut self, slot: u32, gen: u32);
    /// A timer armed for `at` on (slot, generation) is due. Entries are never removed
    /// early: a stale one (the slot moved on, or re-armed earlier) is the handler's to
    /// recognise and ignore.
    fn on_timer(&mut self, at: u64, slot: u32, gen: u32);
    /// The stop signal came (once). true: the loop ends now; false: the handler winds
    /// down on its own and ends the loop from `after_wake`.
    fn on_stop(&mut self) -> bool;
    /// After every wake-up's events and timers, its periodic work (snapshots, coarse
    /// timeouts, publishing); returns when it next wants waking (ns on the reactor's
    /// clock, `u64::MAX`: only for events and timers), or `None` to end the loop.
    fn after_wake(&mut self, now: u64) -> Option<u64>;
    /// How long the loop naps (`nap.rs`) when a turn finds nothing to do, before it
    /// waits; 0 (the default): it waits at once. A nap longer than the wait's timeout
    /// is not taken: the loop waits at once.
    fn nap_ns(&self) -> u64 {
        0
    }
}

/// What the epoll loop (`Reactor`) hands a handler: readiness.
pub trait EpollHandler: Handler {
    fn epoll(&self) -> &Epoll;
    /// Right after a wait returns, before its events (no clock read of the reactor's
    /// own: a handler that needs the time reads it).
    fn woke(&mut self) {}
    /// Readiness for a token the handler registered (a slot's or one of its own).
    fn on_event(&mut self, token: u64, events: u32);
}
