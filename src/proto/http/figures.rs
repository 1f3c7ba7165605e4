//! HTTP's own figures: responses by status code, counted by the client session per
//! worker and phase, merged exactly, and put in the result as two blocks: its
//! `status_codes` (each code seen, 200 apart from 404 and 503) and its
//! `status_classes` (the same summed by class, 1xx to 5xx).

use crate::stats::Figures;
use crate::stats::RunResult;
use std::collections::BTreeMap;

/// The names of the blocks in the result.
pub const STATUS_CLASSES: &str = "status_classes";
pub const STATUS_CODES: &str = "status_codes";

/// Codes counted one by one: a status line has three digits (httparse: 0-999).
const CODES: usize = 1000;

/// Responses by status code: index = the code. One add per response, as the classes
/// alone were.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct StatusCounts(Vec<u64>);

impl Default for StatusCounts {
    fn default() -> Self {
        StatusCounts(vec![0; CODES])
    }
}

impl StatusCounts {
    #[inline]
    pub fn count(&mut self, status: u16) {
        if let Some(c) = self.0.get_mut(status as usize) {
            *c += 1;
        }
    }

    /// Responses with this code.
    pub fn of(&self, status: u16) -> u64 {
        self.0.get(status as usize).copied().unwrap_or(0)
    }

    /// "1xx" to "5xx", as the result shows them (codes of 600 and above in none).
    pub fn by_class(&self) -> BTreeMap<String, u64> {
        (1..6)
            .map(|c| {
                (
                    format!("{c}xx"),
                    self.0[c * 100..c * 100 + 100].iter().sum(),
                )
            })
            .collect()
    }

    /// Each code seen, by its three digits.
    pub fn by_code(&self) -> BTreeMap<String, u64> {
        self.0
            .iter()
            .enumerate()
            .filter(|(_, n)| **n > 0)
            .map(|(code, n)| (format!("{code:03}"), *n))
            .collect()
    }

    /// The blocks as (name, JSON value), for the result's extras.
    pub fn blocks(&self) -> [(&'static str, serde_json::Value); 2] {
        let json = |m: BTreeMap<String, u64>| serde_json::to_value(m).unwrap_or_default();
        [
            (STATUS_CLASSES, json(self.by_class())),
            (STATUS_CODES, json(self.by_code())),
        ]
    }
}

impl Figures for StatusCounts {
    fn merge(&mut self, other: &Self) {
        for (a, b) in self.0.iter_mut().zip(&other.0) {
            *a += b;
        }
    }
}

/// A block of counts by name read back from a result, when it has one.
pub fn counts_of(r: &RunResult, block: &str) -> Option<BTreeMap<String, u64>> {
    serde_json::from_value(r.extra(block)?.clone()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_count_and_merge_exactly_and_sum_to_their_classes() {
        let mut a = StatusCounts::default();
        a.count(200);
        a.count(204);
        a.count(404);
        a.count(999);
        let mut b = StatusCounts::default();
        b.count(503);
        b.count(404);
        b.merge(&a);
        let m = b.by_class();
        assert_eq!(
            m.keys().cloned().collect::<Vec<_>>(),
            ["1xx", "2xx", "3xx", "4xx", "5xx"]
        );
        assert_eq!((m["2xx"], m["4xx"], m["5xx"]), (2, 2, 1));
        let codes: Vec<(String, u64)> = b.by_code().into_iter().collect();
        assert_eq!(
            codes,
            [
                ("200".to_string(), 1),
                ("204".to_string(), 1),
                ("404".to_string(), 2),
                ("503".to_string(), 1),
                ("999".to_string(), 1)
            ]
        );
        assert_eq!(b.of(404), 2);
    }
}
