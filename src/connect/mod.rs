//! Mass connections (`wirebench connect`): open up to a million connections from
//! several worker processes (each holds ~20,000 descriptors here), hold and ping them
//! or churn them, and report what they cost: connect latency and rate, failures by
//! errno, server RSS and kernel slab per connection.
//!
//! The flags (`args.rs`) are read once into the plan (`plan.rs`, with `defaults.rs`,
//! `sharding.rs` and the machine's `capacity.rs`); the parent (`parent.rs`) runs it
//! over its worker processes (`worker.rs`, speaking `messages.rs`; their reports kept
//! by `reports.rs`, shown by `progress.rs`), judges it (`judge.rs`) and reports it
//! (`report.rs`, the JSON; `summary.rs`, the text read from it). The series of
//! connect latency per `--interval`: each worker's steps (`worker_steps.rs`), merged
//! by the parent as they come (`steps.rs`) and written to `--hlog` (`series.rs`).
//! Churn stages (`--stages`): each worker's engine paces its cycles by them and
//! counts per stage; the parent adds the workers' stages; `stage_table.rs` prints them.

pub mod args;
pub mod block_merge;
pub mod capacity;
pub mod defaults;
pub mod entry;
pub mod judge;
pub mod messages;
pub mod parent;
pub mod plan;
pub mod progress;
pub mod report;
pub mod reports;
pub mod series;
pub mod sharding;
pub mod stage_table;
pub mod steps;
pub mod summary;
pub mod worker;
pub mod worker_steps;

use crate::error::{Error, Result};

/// In a worker process: run the share described in the environment.
pub fn worker_main() -> Result<()> {
    let text = std::env::var(messages::SPEC_ENV)
        .map_err(|_| Error::runtime("a connect worker started without its spec"))?;
    let spec: messages::WorkerSpec = serde_json::from_str(&text)
        .map_err(|e| Error::runtime(format!("a connect worker got a bad spec: {e}")))?;
    crate::sys::raise_nofile_limit();
    worker::run(spec)
}
