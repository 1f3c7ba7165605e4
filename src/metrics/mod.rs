//! The live metrics endpoint, `--metrics-listen`: `/metrics` in the Prometheus text
//! format or OpenMetrics while a load or a server runs (docs/metrics.md). What it
//! serves is what the interval snapshots already carry, published once per interval
//! by the observer on the thread that gathers them; the endpoint answers scrapes on a
//! thread of its own, so the hot path never sees a scrape.

pub mod args;
pub mod buckets;
pub mod endpoint;
pub mod exposition;
pub mod figures;
pub mod observer;

pub use args::MetricsConfig;
pub use endpoint::Endpoint;
pub use figures::{Labels, LiveFigures};
pub use observer::Watched;
