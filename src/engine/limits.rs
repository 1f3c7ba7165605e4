//! The engine's fixed bounds: its buffers' sizes and how long it waits. A leaf, so
//! that every part of the engine reads them without importing another part.

/// How long replies are awaited after a duration plan's end before the requests still
/// unanswered are left `in_flight`: the run ends at warm-up + duration + this, at most.
pub const DRAIN_GRACE: std::time::Duration = std::time::Duration::from_secs(2);

/// How long a worker whose every connection attempt was refused keeps trying: nothing
/// listens there, and running out the whole duration would only hide it.
pub const NOTHING_LISTENS: std::time::Duration = std::time::Duration::from_secs(3);

/// The per-worker read buffer: every socket is read into it, and only an unfinished
/// reply's bytes are copied to its connection.
pub const READ_BUFFER: usize = 64 * 1024;

/// Most bytes one unfinished reply (or one connection's unwritten output) may hold.
/// Protocols keep less (HTTP: a 64 KiB head, bodies are consumed as they arrive; echo:
/// 16 MiB payloads); this catches any protocol that does not, as `too_large`. All
/// connections together keep no more than `MEMORY_BUDGET` (each worker its share).
pub const MAX_READ_BUFFER: usize = 64 << 20;

pub use crate::stats::MEMORY_BUDGET;
