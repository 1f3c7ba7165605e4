//! The ramp (`--ramp T`): connection starts spread linearly over T, and in open loop
//! the rate rising linearly from 0 to R over T. Excluded from the figures (it is part
//! of the warm-up) unless asked.

use std::time::Duration;

#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Ramp {
    pub over: Duration,
    /// The ramp counts in the figures (`--ramp-measured`).
    pub measured: bool,
}

impl Ramp {
    /// `config.ramp` in the JSON result (schema/result.schema.json).
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({"seconds": self.over.as_secs_f64(), "measured": self.measured})
    }

    /// Of `count` units (connections, slots) numbered `k * stride + offset` among
    /// `total` spread over the ramp, how many may have started `elapsed_ns` into it
    /// (the first at once). A process's share interleaved with the others' keeps the
    /// whole spread linear and each share spread over the whole ramp.
    pub fn started_by(
        &self,
        elapsed_ns: u64,
        offset: u64,
        stride: u64,
        count: u64,
        total: u64,
    ) -> u64 {
        let over = self.over.as_nanos();
        if u128::from(elapsed_ns) >= over {
            return count;
        }
        // Unit g starts at over * g / total: those with g <= elapsed * total / over.
        let reached = (u128::from(elapsed_ns) * u128::from(total) / over.max(1)) as u64;
        if reached < offset {
            return 0;
        }
        ((reached - offset) / stride.max(1) + 1).min(count)
    }

    /// When connection slot `g` of `total` (over all workers) first connects, ns.
    pub fn start_of(&self, g: usize, total: usize) -> u64 {
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
        let r = Ramp {
            over: Duration::from_secs(1),
            measured: false,
        };
        // 10 units over 3 shares (4, 3, 3): share i has units i, i + 3, i + 6, ...
        let at = |t_ms: u64, i: u64, n: u64| r.started_by(t_ms * 1_000_000, i, 3, n, 10);
        assert_eq!((at(0, 0, 4), at(0, 1, 3), at(0, 2, 3)), (1, 0, 0));
        assert_eq!((at(100, 0, 4), at(100, 1, 3), at(199, 2, 3)), (1, 1, 0));
        assert_eq!(at(200, 2, 3), 1);
        assert_eq!((at(500, 0, 4), at(500, 1, 3), at(500, 2, 3)), (2, 2, 2));
        assert_eq!((at(999, 0, 4), at(999, 1, 3), at(999, 2, 3)), (4, 3, 3));
        assert_eq!(at(5000, 1, 3), 3);
        // Over all shares, units started by t never differ from the linear count by more than one.
        for t in 0..1000 {
            let all: u64 = (0..3).map(|i| at(t, i, if i == 0 { 4 } else { 3 })).sum();
            assert_eq!(all, (t * 10 / 1000 + 1).min(10), "at {t} ms");
        }
    }

    #[test]
    fn connection_starts_spread_linearly() {
        let r = Ramp {
            over: Duration::from_secs(2),
            measured: false,
        };
        assert_eq!(r.start_of(0, 100), 0);
        assert_eq!(r.start_of(50, 100), 1_000_000_000);
        assert_eq!(r.start_of(99, 100), 1_980_000_000);
    }
}
