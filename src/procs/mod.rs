//! Several processes as one: past ~20,000 sockets a process runs out of descriptors
//! here (the limit cannot be raised), so servers and `connect` re-execute this binary
//! as worker processes and gather their counters. Plus what /proc says about them.

pub mod memory;
pub mod workers;

/// Set in a worker's environment: the role it plays (`serve`, `connect`).
pub const WORKER_ENV: &str = "WIREBENCH_WORKER";

/// The role this process was started for, when it is a worker.
pub fn worker_role() -> Option<String> {
    std::env::var(WORKER_ENV).ok().filter(|r| !r.is_empty())
}
