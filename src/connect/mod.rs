//! Mass connections (`wirebench connect`): open up to a million connections from
//! several worker processes (each holds ~20,000 descriptors here), hold and ping them
//! or churn them, and report what they cost: connect latency and rate, failures by
//! errno, server RSS and kernel slab per connection.

pub mod block_merge;
pub mod defaults;
pub mod entry;
pub mod messages;
pub mod parent;
pub mod plan;
pub mod report;
pub mod sharding;
pub mod worker;

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
