//! One connection slot of a worker: a slab entry driven by readiness, no task and no
//! buffer of its own while idle. Its life: wait (ramp, back-off) -> connect -> TLS ->
//! the session's opening exchange -> requests -> the closing exchange -> again while the
//! plan and the connection policy (requests per connection) go on.
//!
//! Reading and writing in the same turn means a large pipeline never deadlocks against
//! a server that stops reading while its replies are unread.
//!
//! One `Conn` type (`slot.rs`), its methods in one file per concern: the reactor's calls
//! into it (`events.rs`), a connection attempt (`attempt.rs`), the opening and closing
//! exchanges (`exchange.rs`), the drive step of a running connection (`drive.rs`) over
//! its refill (`fill.rs`), open-loop pacing (`schedule.rs`), write (`write.rs`) and read
//! (`read.rs`) paths, the bytes it keeps (`memory.rs`), how its run ends (`close.rs`),
//! connection stages' opening and leaving (`stay.rs`), and
//! the tunnel through an HTTP CONNECT proxy before TLS (`tunnel.rs`).

mod attempt;
mod close;
mod drive;
mod events;
mod exchange;
mod fill;
mod memory;
mod read;
mod schedule;
mod slot;
mod stay;
mod tunnel;
mod write;

pub use crate::reactor::token as key;
pub use slot::{Conn, End, State};
