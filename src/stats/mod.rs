//! Measurement core shared by every protocol: outcomes and counters, HDR latency,
//! per-worker recording, interval snapshots and the run result.

pub mod amqp_figures;
pub mod latency;
pub mod outcome;
pub mod rate;
pub mod result;
pub mod snapshot;
pub mod unit;
pub mod worker;

pub use latency::{Latency, LatencySummary};
pub use outcome::{Counters, ErrorKind};
pub use result::RunResult;
pub use snapshot::{IntervalRow, Snapshot};
pub use unit::Unit;
pub use worker::WorkerStats;
