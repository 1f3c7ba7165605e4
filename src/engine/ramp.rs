//! The ramp (`--ramp T`): in closed loop connection starts spread linearly over T; in
//! open loop the rate rising linearly from 0 to R over T (the stage `T:R`, `stages.rs`)
//! with every connection open from the start. Excluded from the figures (it is part
//! of the warm-up) unless asked; the duration follows it either way.
//! The open loop's schedule (`Schedule`) is here too.

use super::stages::{Curve, Stage};
use std::sync::Arc;
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

    /// In open loop at `rate`: the stage that rises to it (`stages.rs`).
    pub fn as_stage(&self, rate: f64) -> Stage {
        Stage {
            over: self.over,
            target: rate,
        }
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

/// The open loop's schedule, one function of time for the whole run: request `m` of
/// the run is due at `m / R` on a flat rate, or when the stages' curve (`stages.rs`)
/// has asked for `m`. Connection `g` of `total` sends requests `g, g + total, ...`:
/// its `k`-th on the flat scale at `x = offset + k * interval`, `interval = total / R`,
/// `offset = interval * g / total`, and `x * R` is `m`. The curve takes `R` as the
/// highest rate of the run, so a stage's count does not depend on when its
/// connections open.
#[derive(Clone, Debug)]
pub struct Schedule {
    pub interval_ns: f64,
    pub offset_ns: f64,
    /// Requests per ns on the flat scale (`R / 1e9`).
    per_ns: f64,
    curve: Option<Arc<Curve>>,
}

impl Schedule {
    pub fn new(rate: f64, g: usize, total: usize, curve: Option<Arc<Curve>>) -> Schedule {
        let interval = (total as f64 * 1e9 / rate).max(1.0);
        Schedule {
            interval_ns: interval,
            offset_ns: interval * g as f64 / total.max(1) as f64,
            per_ns: rate / 1e9,
            curve,
        }
    }

    /// The offset of connection `g` of `total` (as `new` gives it).
    pub fn offset_of(&self, g: usize, total: usize) -> f64 {
        self.interval_ns * g as f64 / total.max(1) as f64
    }

    /// When the `k`-th request of the connection at `offset_ns` is due (ns from the
    /// run's start).
    #[inline]
    pub fn intended(&self, offset_ns: f64, k: u64) -> u64 {
        let x = offset_ns + k as f64 * self.interval_ns;
        match &self.curve {
            None => x as u64,
            Some(c) => c.time_of((x * self.per_ns).round()) as u64,
        }
    }
}

/// The rate a schedule asks for on average over `window` from `from` (both from the
/// run's start): `rate` on a flat schedule, the curve's count over the window else.
pub fn average_rate(rate: f64, curve: Option<&Curve>, from: Duration, window: Duration) -> f64 {
    let (a, w) = (from.as_secs_f64(), window.as_secs_f64());
    match curve {
        Some(c) if w > 0.0 => (c.asked_by((a + w) * 1e9) - c.asked_by(a * 1e9)) / w,
        _ => rate,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ramped(rate: f64, secs: u64) -> Option<Arc<Curve>> {
        Some(Arc::new(Curve::new(&[Stage {
            over: Duration::from_secs(secs),
            target: rate,
        }])))
    }

    #[test]
    fn the_average_rate_counts_the_ramp_only_where_it_lies_in_the_window() {
        let c = ramped(1000.0, 1);
        let c = c.as_deref();
        let s = Duration::from_secs;
        assert_eq!(average_rate(1000.0, c, s(0), s(1)), 500.0);
        assert_eq!(average_rate(1000.0, c, s(0), s(2)), 750.0);
        assert_eq!(average_rate(1000.0, c, s(1), s(3)), 1000.0);
        assert_eq!(average_rate(1000.0, None, s(0), s(1)), 1000.0);
    }

    #[test]
    fn without_a_ramp_the_schedule_is_flat() {
        let s = Schedule::new(1000.0, 1, 4, None);
        // 4 connections at 1000/s: each every 4 ms, this one offset by 1 ms.
        assert_eq!(s.intended(s.offset_ns, 0), 1_000_000);
        assert_eq!(s.intended(s.offset_ns, 3), 13_000_000);
    }

    #[test]
    fn a_ramp_sends_its_integral_over_every_connection_together() {
        // 7 connections at 1000/s ramped over 2 s: 1000 requests by t = 2 s (half of
        // 2000), 250 by 1 s, then one per ms; each connection within one of its share.
        let all: Vec<Vec<u64>> = (0..7)
            .map(|g| {
                let s = Schedule::new(1000.0, g, 7, ramped(1000.0, 2));
                (0..1000).map(|k| s.intended(s.offset_ns, k)).collect()
            })
            .collect();
        let due_by = |t_ns: u64| all.iter().flatten().filter(|t| **t < t_ns).count();
        assert_eq!(due_by(2_000_000_000), 1000);
        assert_eq!(due_by(1_000_000_000), 250);
        assert_eq!(due_by(3_000_000_000), 2000);
        for c in &all {
            let mine = c.iter().filter(|t| **t < 2_000_000_000).count();
            assert!(mine.abs_diff(1000 / 7) <= 1, "{mine}");
            assert!(c.windows(2).all(|w| w[1] > w[0]));
        }
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
