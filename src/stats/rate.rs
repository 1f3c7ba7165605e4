//! Open loop: the rate asked, the rate achieved and how far the schedule fell behind.
//! A schedule the client (or the server) cannot keep is a result in itself, said
//! plainly rather than hidden behind a latency figure.

use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Below this share of the asked rate the run did not do what was asked (exit 1).
pub const ACHIEVED_AT_LEAST: f64 = 0.9;

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct RateFigures {
    /// Requests per second the schedule asked for (`--rate`).
    pub asked_per_s: f64,
    /// Measured requests sent per second of the sending window.
    pub achieved_per_s: f64,
    /// The furthest any connection's schedule fell behind the clock, seconds.
    pub behind_s: f64,
    /// achieved >= 90% of asked.
    pub kept_up: bool,
}

impl RateFigures {
    /// `sent` measured requests over `window` (the measured phase, up to the deadline).
    pub fn new(asked_per_s: f64, sent: u64, window: Duration, behind: Duration) -> Self {
        let secs = window.as_secs_f64();
        // Nothing measured (a zero window) is judged elsewhere; it is no rate shortfall.
        let achieved_per_s = if secs > 0.0 {
            sent as f64 / secs
        } else {
            asked_per_s
        };
        RateFigures {
            asked_per_s,
            achieved_per_s,
            behind_s: behind.as_secs_f64(),
            kept_up: achieved_per_s >= asked_per_s * ACHIEVED_AT_LEAST,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_up_is_ninety_percent_of_asked() {
        let r = RateFigures::new(1000.0, 900, Duration::from_secs(1), Duration::ZERO);
        assert!(r.kept_up);
        let r = RateFigures::new(1000.0, 899, Duration::from_secs(1), Duration::ZERO);
        assert!(!r.kept_up);
        assert_eq!(r.achieved_per_s, 899.0);
    }

    #[test]
    fn an_empty_window_is_no_shortfall() {
        assert!(RateFigures::new(5.0, 0, Duration::ZERO, Duration::ZERO).kept_up);
    }
}
