//! The one event-loop core under every load and every server: a thread's epoll wait
//! (its timeout from the timer heap, a coarse tick and the handler's own next
//! deadline), dispatch of readiness by (slot, generation) tokens, the timer heap keyed
//! by slot and generation, the "ready" list of slots that yielded for fairness, the
//! "pending" list of slots whose sends wait for the end of the turn, the stop signal
//! and the thread's CPU time from the start of a measured phase.
//!
//! What a slot is, and what its events mean, is the handler's (`Handler`): the load
//! engine's connection slots (engine/worker.rs), the server's connections and
//! listeners (server/event_loop.rs). This module imports neither, nor any protocol.

mod core;
mod handler;
mod measured_cpu;
pub mod pending;
pub mod slab;
pub mod timers;
pub mod transport;
pub mod uring;
pub mod uring_load;

pub use self::core::{Reactor, Stop};
pub use handler::Handler;
pub use pending::Pending;
pub use slab::Slab;
pub use timers::Timers;

/// Tokens at or above this are no slot's: the reactor's own (`STOP_TOKEN`) and the
/// handler's (a server's listeners). A slot's generation stays below 2^30 wherever it
/// registers a descriptor next to such tokens (`Slab`).
pub const OWN_TOKENS: u64 = 1 << 62;

/// The token of a stop eventfd (`Stop::Fd`).
pub const STOP_TOKEN: u64 = OWN_TOKENS;

/// The epoll token of generation `gen` of `slot`.
#[inline]
pub fn token(slot: u32, gen: u32) -> u64 {
    ((gen as u64) << 32) | slot as u64
}

/// (slot, generation) of a token.
#[inline]
pub fn split(token: u64) -> (u32, u32) {
    (token as u32, (token >> 32) as u32)
}

#[cfg(test)]
mod tests;
