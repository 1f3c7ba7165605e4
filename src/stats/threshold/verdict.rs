//! One threshold held to a result, as the JSON's `thresholds` lists it.

use serde::{Deserialize, Serialize};

/// One threshold held to a result: what the JSON's `thresholds` lists.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Verdict {
    /// The threshold as written (`p99<200ms`).
    pub expression: String,
    /// The figure measured, in the unit the limit was written in (ms for `p99<200ms`,
    /// percent for `errors<0.5%`); null when the run measured nothing of it.
    pub measured: Option<f64>,
    /// That unit ("ms", "%", "/s", "" for a count or a fraction).
    pub unit: String,
    pub pass: bool,
}
