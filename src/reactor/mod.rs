//! The one event-loop core under every load and every server: a thread's epoll wait
//! (its timeout from the timer heap, a coarse tick and the handler's own next
//! deadline), dispatch of readiness by (slot, generation) tokens, the timer heap keyed
//! by slot and generation, the "ready" list of slots that yielded for fairness, the
//! "pending" list of slots whose sends wait for the end of the turn, the stop signal
//! and the thread's CPU time from the start of a measured phase.
//!
//! What a slot is, and what its events mean, is the handler's (`Handler`): the load
//! engine's connection slots (engine/worker.rs), the server's connections and
//! listeners (server/thread.rs). This module imports neither, nor any protocol.

mod core;
mod handler;
mod measured_cpu;
pub mod nap;
pub mod pending;
pub mod slab;
pub mod timers;
mod token;
pub mod transport;
mod turn;
pub mod uring;
pub mod uring_loop;

pub use self::core::Reactor;
pub use handler::{EpollHandler, Handler};
pub use pending::Pending;
pub use slab::Slab;
pub use timers::Timers;
pub use token::{split, token, OWN_TOKENS, STOP_TOKEN};
pub use turn::Stop;

#[cfg(test)]
mod tests;
