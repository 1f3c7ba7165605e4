//! Measurement core shared by every protocol: outcomes and counters, HDR latency,
//! per-worker recording, interval snapshots and the run result.

pub mod conn_tally;
pub mod error_texts;
pub mod event_loop;
pub mod figures;
pub mod hlog;
pub mod interference;
pub mod intervals;
pub mod latency;
pub mod merge;
pub mod observer;
pub mod outcome;
pub mod rate;
pub mod result;
pub mod result_builder;
pub mod search;
pub mod shard;
pub mod snapshot;
pub mod stages;
pub mod tee;
pub mod threshold;
pub mod unit;
pub mod worker;

pub use conn_tally::ConnTally;
pub use error_texts::{ErrorTexts, Words};
pub use event_loop::{EventLoop, LoopCounts};
pub use figures::Figures;
pub use latency::{Latency, LatencySummary};
pub use observer::Observer;
pub use outcome::{Counters, ErrorKind, Exchanges};
pub use result::RunResult;
pub use result_builder::{Measured, RunResultBuilder};
pub use shard::{MergeInfo, ShardInfo};
pub use snapshot::{IntervalRow, Snapshot};
pub use unit::Unit;
pub use worker::WorkerStats;
