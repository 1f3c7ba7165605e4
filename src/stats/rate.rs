//! Open loop: the rate asked, the rate achieved and how far the schedule fell behind.
//! A schedule the client (or the server) cannot keep is a result in itself, said
//! plainly rather than hidden behind a latency figure.

use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Below this share of the asked rate the run did not do what was asked (exit 1).
pub const ACHIEVED_AT_LEAST: f64 = 0.9;
/// A count plan whose schedule spans less than this is not judged: connecting (and a
/// ramp) delay its first sends by a share of the run it cannot make up.
pub const SHORTEST_JUDGED: Duration = Duration::from_secs(1);

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct RateFigures {
    /// Requests per second the schedule asked for over the window: `--rate`, or less
    /// where a measured `--ramp` lies in the window (its average).
    pub asked_per_s: f64,
    /// Measured requests sent per second of the sending window.
    pub achieved_per_s: f64,
    /// The furthest any connection's schedule fell behind the clock, seconds.
    pub behind_s: f64,
    /// achieved >= 90% of asked; None when the plan was too short to tell (a count
    /// plan scheduled over less than SHORTEST_JUDGED).
    pub kept_up: Option<bool>,
}

impl RateFigures {
    /// `sent` measured requests over `window` (the measured phase, up to the deadline);
    /// `judged`: whether the plan is long enough for the rate to be held against it.
    pub fn new(
        asked_per_s: f64,
        sent: u64,
        window: Duration,
        behind: Duration,
        judged: bool,
    ) -> Self {
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
            kept_up: judged.then_some(achieved_per_s >= asked_per_s * ACHIEVED_AT_LEAST),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_up_is_ninety_percent_of_asked() {
        let r = RateFigures::new(1000.0, 900, Duration::from_secs(1), Duration::ZERO, true);
        assert_eq!(r.kept_up, Some(true));
        let r = RateFigures::new(1000.0, 899, Duration::from_secs(1), Duration::ZERO, true);
        assert_eq!(r.kept_up, Some(false));
        assert_eq!(r.achieved_per_s, 899.0);
        let r = RateFigures::new(1000.0, 1, Duration::from_secs(1), Duration::ZERO, false);
        assert_eq!(r.kept_up, None);
    }

    #[test]
    fn an_empty_window_is_no_shortfall() {
        let r = RateFigures::new(5.0, 0, Duration::ZERO, Duration::ZERO, true);
        assert_eq!(r.kept_up, Some(true));
    }
}
