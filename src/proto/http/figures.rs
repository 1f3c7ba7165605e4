//! HTTP's own figures: responses by status class, counted by the client session per
//! worker and phase, merged exactly, and put in the result as its `status_classes`
//! block.

use crate::stats::Figures;
use crate::stats::RunResult;
use std::collections::BTreeMap;

/// The name of the block in the result.
pub const STATUS_CLASSES: &str = "status_classes";

/// Responses by status class: index = status / 100 (0 unused, 1xx to 5xx).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct StatusClasses(pub [u64; 6]);

impl StatusClasses {
    #[inline]
    pub fn count(&mut self, status: u16) {
        if let Some(c) = self.0.get_mut((status / 100) as usize) {
            *c += 1;
        }
    }

    /// "1xx" to "5xx", as the result shows them.
    pub fn by_name(&self) -> BTreeMap<String, u64> {
        (1..self.0.len())
            .map(|i| (format!("{i}xx"), self.0[i]))
            .collect()
    }

    /// The block as a JSON value, for the result's extras.
    pub fn block(&self) -> serde_json::Value {
        serde_json::to_value(self.by_name()).unwrap_or_default()
    }
}

impl Figures for StatusClasses {
    fn merge(&mut self, other: &Self) {
        for (a, b) in self.0.iter_mut().zip(other.0) {
            *a += b;
        }
    }
}

/// The block read back from a result, when it has one.
pub fn status_classes_of(r: &RunResult) -> Option<BTreeMap<String, u64>> {
    serde_json::from_value(r.extra(STATUS_CLASSES)?.clone()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_count_and_merge_exactly() {
        let mut a = StatusClasses::default();
        a.count(200);
        a.count(204);
        a.count(404);
        a.count(999);
        let mut b = StatusClasses::default();
        b.count(503);
        b.merge(&a);
        let m = b.by_name();
        assert_eq!(
            m.keys().cloned().collect::<Vec<_>>(),
            ["1xx", "2xx", "3xx", "4xx", "5xx"]
        );
        assert_eq!((m["2xx"], m["4xx"], m["5xx"]), (2, 1, 1));
    }
}
