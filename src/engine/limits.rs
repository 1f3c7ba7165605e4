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
/// connections together keep no more than the run's memory budget (`--memory-budget`,
/// `LoadShape::memory_budget`; each worker thread an equal share).
pub const MAX_READ_BUFFER: usize = 64 << 20;

/// The memory budget of a load without `--memory-budget`: most bytes its connections
/// keep together (the room of unfinished replies and of what the sockets did not take
/// yet), each worker thread an equal share. Without one, each connection's own cap
/// multiplied by the connections (eight fed an endless bulk string held 540 MB; a
/// thousand could hold 64 GB). A fixed size rather than a share of the machine's
/// memory, so a run keeps the same budget on every machine and its shards' configs
/// agree for `wirebench merge`. 1 GiB holds the largest legitimate messages on the
/// connections a load of them uses: a connection keeps about three times its message
/// (the reply's room, doubled as it grows, and what the socket did not take of the
/// request), so 20 connections of 16 MiB echoes or WebSocket messages keep about
/// 960 MiB at most. A load past that says `--memory-budget`.
pub const DEFAULT_MEMORY_BUDGET: usize = 1 << 30;
