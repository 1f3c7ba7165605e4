//! The ramp (`--ramp T`): connection starts spread linearly over T, and in open loop
//! the rate rising linearly from 0 to R over T. Excluded from the figures (it is part
//! of the warm-up) unless asked.

use std::time::Duration;

#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Ramp {
    pub over: Duration,
    /// The ramp counts in the figures (`--ramp-measured`).
    pub measured: bool,
    /// This process's place among several that share one ramp (connect's worker
    /// processes); None: the ramp is this process's alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub share: Option<Share>,
}

/// Process `index` of `of` sharing a ramp of `total` units (connections, churn slots)
/// over them all: its unit `k` is unit `k * of + index` of the whole, so the
/// processes' starts interleave and the spread over all of them stays linear (rather
/// than every process starting its first unit at once). The shares must be dealt as
/// `connect` deals them: the first `total % of` processes one unit more.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Share {
    pub index: u64,
    pub of: u64,
    pub total: u64,
}

impl Ramp {
    /// `config.ramp` in the JSON result (schema/result.schema.json).
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({"seconds": self.over.as_secs_f64(), "measured": self.measured})
    }

    /// When connection slot `g` of `total` (over all workers of this process) first
    /// connects, ns; with a `share`, its place among every process's slots.
    pub fn start_of(&self, g: usize, total: usize) -> u64 {
        let (g, total) = match self.share {
            Some(s) => (g as u64 * s.of + s.index, s.total),
            None => (g as u64, total as u64),
        };
        (self.over.as_nanos() as f64 * g as f64 / total.max(1) as f64) as u64
    }
}

/// One connection's open-loop schedule: its `k`-th request is intended at
/// `intended(k)`. At the full rate R over `total` connections each sends every
/// `interval = total / R`, the connections offset by `interval * g / total`. Over a ramp
/// of T the rate rises as R t / T, so the requests sent by time t number R t^2 / (2 T)
/// until T and R T / 2 + R (t - T) after: inverted, a request due at x on the flat
/// schedule is due at sqrt(2 T x) while x < T / 2 and at x + T / 2 after.
#[derive(Clone, Copy, Debug)]
pub struct Schedule {
    pub interval_ns: f64,
    pub offset_ns: f64,
    pub ramp_ns: f64,
}

impl Schedule {
    pub fn new(rate: f64, g: usize, total: usize, ramp: Option<Ramp>) -> Schedule {
        let interval = (total as f64 * 1e9 / rate).max(1.0);
        Schedule {
            interval_ns: interval,
            offset_ns: interval * g as f64 / total.max(1) as f64,
            ramp_ns: ramp.map_or(0.0, |r| r.over.as_nanos() as f64),
        }
    }

    #[inline]
    pub fn intended(&self, k: u64) -> u64 {
        let x = self.offset_ns + k as f64 * self.interval_ns;
        let t = if x < self.ramp_ns / 2.0 {
            (2.0 * self.ramp_ns * x).sqrt()
        } else {
            x + self.ramp_ns / 2.0
        };
        t as u64
    }
}

/// The rate a schedule of `rate` over `ramp` asks for on average over `window` from
/// `from` (both from the run's start): R where the ramp is over, less where it is
/// not. Requests asked by time t: R t^2 / (2 T) until T, R (t - T / 2) after.
pub fn average_rate(rate: f64, ramp: Ramp, from: Duration, window: Duration) -> f64 {
    let t_ramp = ramp.over.as_secs_f64();
    let asked_by = |t: f64| {
        if t < t_ramp {
            rate * t * t / (2.0 * t_ramp)
        } else {
            rate * (t - t_ramp / 2.0)
        }
    };
    let (a, w) = (from.as_secs_f64(), window.as_secs_f64());
    if w <= 0.0 {
        return rate;
    }
    (asked_by(a + w) - asked_by(a)) / w
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_average_rate_counts_the_ramp_only_where_it_lies_in_the_window() {
        let r = Ramp {
            over: Duration::from_secs(1),
            measured: true,
            share: None,
        };
        let s = Duration::from_secs;
        assert_eq!(average_rate(1000.0, r, s(0), s(1)), 500.0);
        assert_eq!(average_rate(1000.0, r, s(0), s(2)), 750.0);
        assert_eq!(average_rate(1000.0, r, s(1), s(3)), 1000.0);
    }

    #[test]
    fn without_a_ramp_the_schedule_is_flat() {
        let s = Schedule::new(1000.0, 1, 4, None);
        // 4 connections at 1000/s: each every 4 ms, this one offset by 1 ms.
        assert_eq!(s.intended(0), 1_000_000);
        assert_eq!(s.intended(3), 13_000_000);
    }

    #[test]
    fn a_ramp_sends_half_the_flat_count_over_it_then_the_full_rate() {
        let ramp = Some(Ramp {
            over: Duration::from_secs(2),
            measured: false,
            share: None,
        });
        // One connection at 1000/s ramped over 2 s: 1000 requests by t = 2 s (half of
        // 2000), then one per ms.
        let s = Schedule::new(1000.0, 0, 1, ramp);
        let due_by = |t_ns: u64| (0..5000).filter(|k| s.intended(*k) < t_ns).count();
        assert_eq!(due_by(2_000_000_000), 1000);
        assert_eq!(due_by(1_000_000_000), 250);
        assert_eq!(due_by(3_000_000_000), 2000);
        // Increasing, never two at once past the start.
        assert!((1..5000).all(|k| s.intended(k) > s.intended(k - 1)));
    }

    #[test]
    fn interleaved_shares_start_linearly_over_the_whole_ramp() {
        // 10 units over 3 processes (4, 3, 3): process i has units i, i + 3, i + 6, ...
        let of = |index: u64| Ramp {
            over: Duration::from_secs(1),
            measured: false,
            share: Some(Share {
                index,
                of: 3,
                total: 10,
            }),
        };
        let starts = |i: u64, n: usize| (0..n).map(|k| of(i).start_of(k, n)).collect::<Vec<_>>();
        let ms = 1_000_000;
        assert_eq!(starts(0, 4), [0, 300 * ms, 600 * ms, 900 * ms]);
        assert_eq!(starts(1, 3), [100 * ms, 400 * ms, 700 * ms]);
        assert_eq!(starts(2, 3), [200 * ms, 500 * ms, 800 * ms]);
        // Over all of them: one start every 100 ms, none twice.
        let mut all: Vec<u64> = [starts(0, 4), starts(1, 3), starts(2, 3)].concat();
        all.sort();
        assert_eq!(all, (0..10).map(|g| g * 100 * ms).collect::<Vec<_>>());
    }

    #[test]
    fn connection_starts_spread_linearly() {
        let r = Ramp {
            over: Duration::from_secs(2),
            measured: false,
            share: None,
        };
        assert_eq!(r.start_of(0, 100), 0);
        assert_eq!(r.start_of(50, 100), 1_000_000_000);
        assert_eq!(r.start_of(99, 100), 1_980_000_000);
    }
}
