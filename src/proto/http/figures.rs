//! HTTP's own figures: responses by status class, counted by the client session per
//! worker and phase, merged exactly, and put in the result as `status_classes`.

use crate::engine::session::Figures;
use std::collections::BTreeMap;

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
}

impl Figures for StatusClasses {
    fn merge(&mut self, other: &Self) {
        for (a, b) in self.0.iter_mut().zip(other.0) {
            *a += b;
        }
    }
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
        assert_eq!(m["2xx"], 2);
        assert_eq!(m["4xx"], 1);
        assert_eq!(m["5xx"], 1);
        assert_eq!(m.len(), 5);
    }
}
