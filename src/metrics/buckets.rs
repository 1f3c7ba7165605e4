//! The latency histogram's fixed buckets (docs/metrics.md lists them): the same on
//! every run and every generator, so Prometheus can add shards' buckets and
//! `histogram_quantile` reads them. Seconds, as Prometheus names time.

use crate::stats::Latency;

/// Upper bounds: the `le` label as written, and in nanoseconds. `+Inf` follows them.
pub const BOUNDS: [(&str, u64); 19] = [
    ("0.00001", 10_000),
    ("0.000025", 25_000),
    ("0.00005", 50_000),
    ("0.0001", 100_000),
    ("0.00025", 250_000),
    ("0.0005", 500_000),
    ("0.001", 1_000_000),
    ("0.0025", 2_500_000),
    ("0.005", 5_000_000),
    ("0.01", 10_000_000),
    ("0.025", 25_000_000),
    ("0.05", 50_000_000),
    ("0.1", 100_000_000),
    ("0.25", 250_000_000),
    ("0.5", 500_000_000),
    ("1.0", 1_000_000_000),
    ("2.5", 2_500_000_000),
    ("5.0", 5_000_000_000),
    ("10.0", 10_000_000_000),
];

/// Samples per bucket (not cumulative; the last is above every bound), and their sum
/// in seconds.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Buckets {
    pub counts: [u64; BOUNDS.len() + 1],
    pub sum_s: f64,
}

impl Buckets {
    /// Adds what `latency` recorded. A sample counts at the highest value its HDR
    /// bucket stands for, the value the result's percentiles report, so the bucket
    /// that holds the result's p99 is the one `histogram_quantile(0.99)` lands in.
    pub fn add(&mut self, latency: &Latency) {
        for v in latency.inner().iter_recorded() {
            let ns = v.value_iterated_to();
            let n = v.count_at_value();
            let i = BOUNDS.partition_point(|(_, le)| *le < ns);
            self.counts[i] += n;
            self.sum_s += ns as f64 * n as f64 / 1e9;
        }
    }

    /// From `latency` alone.
    pub fn of(latency: &Latency) -> Buckets {
        let mut b = Buckets::default();
        b.add(latency);
        b
    }

    pub fn count(&self) -> u64 {
        self.counts.iter().sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sample_goes_to_the_first_bound_at_or_above_it() {
        let mut l = Latency::new();
        l.record(5_000); // le="0.00001"
                         // Exactly 10 us, which the result reports as 10.007 us (the highest value of
                         // its HDR bucket): above le="0.00001", as the result's percentiles say.
        l.record(10_000);
        assert!(l.quantile_ns(1.0) > 10_000);
        l.record(20_000_000_000); // above 10 s: +Inf only
        let b = Buckets::of(&l);
        assert_eq!(b.counts[0], 1);
        assert_eq!(b.counts[1], 1);
        assert_eq!(b.counts[BOUNDS.len()], 1);
        assert_eq!(b.count(), 3);
        let mut twice = b;
        twice.add(&l);
        assert_eq!(twice.count(), 6);
    }

    #[test]
    fn bounds_rise_and_match_their_labels() {
        for w in BOUNDS.windows(2) {
            assert!(w[0].1 < w[1].1);
        }
        for (text, ns) in BOUNDS {
            let s: f64 = text.parse().unwrap();
            assert_eq!((s * 1e9).round() as u64, ns, "{text}");
        }
    }
}
