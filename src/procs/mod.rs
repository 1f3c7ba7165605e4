//! Several processes as one: past ~20,000 sockets a process runs out of descriptors
//! here (the limit cannot be raised), so servers and `connect` re-execute this binary
//! as worker processes and gather their counters. `workers.rs` starts, talks to and
//! reaps the processes; `group.rs` is the parent's one mechanism over them (ready,
//! reports, commands, stop) for every group. What /proc says about them is read
//! through `crate::sys::proc_fs`.

pub mod group;
pub mod workers;

/// Most worker processes of one built-in server (`serve --processes`). Each holds up to
/// ~20,000 sockets (the descriptor limit here), so 256 of them could hold 5 million:
/// past the kernel memory of these machines (about 4.8 KB per socket end, 20 GB free
/// holds ~4 million), and each worker also costs a few MB and a share of 2 CPUs.
/// Beyond it the number is a typo, and starting thousands of processes only to stop
/// them is what the user would get.
pub const MAX_SERVER_PROCESSES: usize = 256;

/// Set in a worker's environment: the role it plays (`serve`, `connect`).
pub const WORKER_ENV: &str = "WIREBENCH_WORKER";

/// The role this process was started for, when it is a worker.
pub fn worker_role() -> Option<String> {
    std::env::var(WORKER_ENV).ok().filter(|r| !r.is_empty())
}
