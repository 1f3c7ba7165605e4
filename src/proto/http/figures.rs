//! What an HTTP run adds to the shared result, as its `status_classes` block: the
//! measured responses by status class ("1xx" to "5xx"), correct or not.

use crate::stats::{Counters, RunResult};
use std::collections::BTreeMap;

/// The name of the block in the result.
pub const STATUS_CLASSES: &str = "status_classes";

/// Measured replies by status class, "1xx" to "5xx", from the engine's reply classes.
pub fn status_classes(c: &Counters) -> BTreeMap<String, u64> {
    (1..c.classes.len())
        .map(|i| (format!("{i}xx"), c.classes[i]))
        .collect()
}

/// The block as a JSON value, for `RunResultBuilder::extra`.
pub fn status_classes_block(c: &Counters) -> serde_json::Value {
    serde_json::to_value(status_classes(c)).unwrap_or_default()
}

/// The block read back from a result, when it has one.
pub fn status_classes_of(r: &RunResult) -> Option<BTreeMap<String, u64>> {
    serde_json::from_value(r.extra(STATUS_CLASSES)?.clone()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_one_to_five() {
        let mut c = Counters::default();
        c.classes[2] = 7;
        c.classes[4] = 1;
        let m = status_classes(&c);
        assert_eq!(
            m.keys().cloned().collect::<Vec<_>>(),
            ["1xx", "2xx", "3xx", "4xx", "5xx"]
        );
        assert_eq!((m["2xx"], m["4xx"], m["5xx"]), (7, 1, 0));
    }
}
