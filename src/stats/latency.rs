//! Latency histograms: HDR, nanoseconds, 3 significant digits. Adding two is exact,
//! so per-worker histograms merge into the run's without losing anything, and the
//! whole histogram is stored in results (V2, deflate, base64) to merge runs later.

use base64::Engine as _;
use hdrhistogram::serialization::{Deserializer, Serializer as _, V2DeflateSerializer};
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// Highest latency tracked: one hour. Longer values are recorded as one hour.
const HIGHEST_NS: u64 = 3_600_000_000_000;
/// Most samples one stored histogram may hold (2^48: nine years at a million per
/// second). Percentiles sum bucket counts in a u64, so a file claiming more, e.g. a
/// bucket of 2^64-1 from a corrupt or hostile file, would overflow them; with this cap
/// 65,536 such files still add up safely.
pub const MAX_STORED_SAMPLES: u64 = 1 << 48;

/// A histogram that has recorded nothing holds no table: an HDR table over these
/// bounds is ~270 KB, and a worker keeps several (the run's, the interval's, the
/// uncorrected one, the handshakes'), most of which a hold-only worker (`connect`) or a
/// protocol without handshakes never records into: 2.4 MB per `connect` worker
/// process before (BENCHMARKS.md#memory-per-idle-connection). The
/// table comes with the first sample or the first non-empty addition; an empty one
/// reads, summarises and encodes exactly as a full table with nothing in it.
#[derive(Clone, Debug, Default)]
pub struct Latency {
    h: Option<Histogram<u64>>,
}

fn table() -> Histogram<u64> {
    Histogram::new_with_bounds(1, HIGHEST_NS, 3).expect("static histogram bounds")
}

/// The empty table an empty `Latency` reads as (made once, on the first such read).
fn empty() -> &'static Histogram<u64> {
    static EMPTY: std::sync::OnceLock<Histogram<u64>> = std::sync::OnceLock::new();
    EMPTY.get_or_init(table)
}

impl Latency {
    /// An empty histogram: no table until something is recorded.
    pub fn new() -> Self {
        Latency { h: None }
    }

    #[inline]
    fn table(&mut self) -> &mut Histogram<u64> {
        self.h.get_or_insert_with(table)
    }

    #[inline]
    pub fn record(&mut self, ns: u64) {
        self.table().saturating_record(ns.max(1));
    }

    /// Records `count` samples of one value (histograms imported from other tools).
    pub fn record_n(&mut self, ns: u64, count: u64) {
        self.table().saturating_record_n(ns.max(1), count);
    }

    pub fn add(&mut self, other: &Latency) {
        if let Some(o) = other.h.as_ref() {
            // Same bounds on both sides, so the addition cannot fail.
            self.table().add(o).expect("histograms share bounds");
        }
    }

    /// Empties it, keeping its table for reuse.
    pub fn reset(&mut self) {
        if let Some(h) = self.h.as_mut() {
            h.reset();
        }
    }

    /// Hands over what was recorded and leaves this one empty, with no table: cheaper
    /// than a clone and a reset (no copy), and nothing is held while nothing comes.
    pub fn take(&mut self) -> Latency {
        std::mem::take(self)
    }

    /// Whether it holds a table (something was recorded or added since it was made).
    pub fn holds_table(&self) -> bool {
        self.h.is_some()
    }

    pub fn count(&self) -> u64 {
        self.h.as_ref().map_or(0, |h| h.len())
    }

    pub fn inner(&self) -> &Histogram<u64> {
        self.h.as_ref().unwrap_or_else(|| empty())
    }

    /// Value at quantile `q` (0..=1), nanoseconds; 0 when empty.
    pub fn quantile_ns(&self, q: f64) -> u64 {
        match self.h.as_ref() {
            Some(h) if !h.is_empty() => h.value_at_quantile(q),
            _ => 0,
        }
    }

    pub fn summary(&self) -> LatencySummary {
        match self.h.as_ref() {
            Some(h) => LatencySummary::of(h),
            None => LatencySummary::default(),
        }
    }

    /// HdrHistogram V2 with deflate, base64: readable by every HdrHistogram library.
    /// An empty one encodes as a table with nothing in it (the same bytes as before
    /// tables were lazy).
    pub fn encode(&self) -> String {
        let mut buf = Vec::new();
        V2DeflateSerializer::new()
            .serialize(self.inner(), &mut buf)
            .expect("serializing into memory cannot fail");
        base64::engine::general_purpose::STANDARD.encode(buf)
    }

    pub fn decode(text: &str) -> Result<Latency, String> {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(text.trim())
            .map_err(|e| format!("histogram is not base64: {e}"))?;
        let h: Histogram<u64> = Deserializer::new()
            .deserialize(&mut bytes.as_slice())
            .map_err(|e| format!("histogram does not decode: {e}"))?;
        let mut total: u64 = 0;
        for v in h.iter_recorded() {
            total = total
                .checked_add(v.count_at_value())
                .filter(|&t| t <= MAX_STORED_SAMPLES)
                .ok_or_else(|| format!("histogram holds more than {MAX_STORED_SAMPLES} samples"))?;
        }
        let mut out = table();
        out.add(&h)
            .map_err(|e| format!("histogram out of range: {e}"))?;
        Ok(Latency { h: Some(out) })
    }
}

/// Percentiles in microseconds, as printed and written to JSON.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct LatencySummary {
    pub count: u64,
    pub min: f64,
    pub mean: f64,
    pub stdev: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub p99_9: f64,
    pub p99_99: f64,
    pub max: f64,
}

impl LatencySummary {
    /// The percentiles of `h` (nanoseconds) in microseconds; zeros when it is empty.
    pub fn of(h: &Histogram<u64>) -> LatencySummary {
        if h.is_empty() {
            return LatencySummary::default();
        }
        let us = |ns: u64| ns as f64 / 1e3;
        LatencySummary {
            count: h.len(),
            min: us(h.min()),
            mean: h.mean() / 1e3,
            stdev: h.stdev() / 1e3,
            p50: us(h.value_at_quantile(0.50)),
            p90: us(h.value_at_quantile(0.90)),
            p99: us(h.value_at_quantile(0.99)),
            p99_9: us(h.value_at_quantile(0.999)),
            p99_99: us(h.value_at_quantile(0.9999)),
            max: us(h.max()),
        }
    }
}

/// Serde for a summary that is null when it summarises nothing: a figure that does
/// not exist reads null, never a row of zeros. Null reads back as the empty summary.
pub mod null_when_empty {
    use super::LatencySummary;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(l: &LatencySummary, s: S) -> Result<S::Ok, S::Error> {
        if l.count == 0 {
            s.serialize_none()
        } else {
            l.serialize(s)
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<LatencySummary, D::Error> {
        Ok(Option::<LatencySummary>::deserialize(d)?.unwrap_or_default())
    }
}

/// A histogram as a result stores it: HdrHistogram's V2 deflate encoding in base64.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct HistogramBlob {
    pub format: String,
    pub unit: String,
    pub significant_digits: u8,
    pub count: u64,
    pub data: String,
}

impl HistogramBlob {
    pub fn of(l: &Latency) -> Self {
        HistogramBlob {
            format: "hdrhistogram-v2-deflate-base64".into(),
            unit: "ns".into(),
            significant_digits: 3,
            count: l.count(),
            data: l.encode(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merge_is_exact_and_roundtrips() {
        let mut a = Latency::new();
        let mut b = Latency::new();
        for i in 1..=1000u64 {
            a.record(i * 1000);
            b.record(i * 7919);
        }
        let mut all = a.clone();
        all.add(&b);
        assert_eq!(all.count(), 2000);
        let back = Latency::decode(&all.encode()).unwrap();
        assert_eq!(back.count(), 2000);
        assert_eq!(back.quantile_ns(0.99), all.quantile_ns(0.99));
        assert_eq!(back.inner().max(), all.inner().max());
    }

    /// Found by fuzzing (fuzz/fuzz_targets/result_json.rs): a stored histogram whose
    /// bucket counts sum past u64 made every percentile overflow (a panic with overflow
    /// checks, wrong percentiles without). The fuzzer got there with a deflate stream
    /// whose checksum is not checked under cfg(fuzzing); a file written with a valid
    /// checksum, as here, gets there in any build.
    #[test]
    fn refuses_counts_that_overflow_the_percentiles() {
        // Four buckets of 2^62 (each fits the format's i64 counts): 2^64 in all.
        let mut l = Latency::new();
        for ns in [1000, 2000, 3000, 4000] {
            l.record_n(ns, 1 << 62);
        }
        let e = Latency::decode(&l.encode()).unwrap_err();
        assert_eq!(e, "histogram holds more than 281474976710656 samples");
        // At the cap it still decodes, and a percentile of it is exact.
        let mut l = Latency::new();
        l.record_n(1000, MAX_STORED_SAMPLES - 1);
        l.record(5000);
        let back = Latency::decode(&l.encode()).unwrap();
        assert_eq!(back.count(), MAX_STORED_SAMPLES);
        assert_eq!(back.quantile_ns(1.0), l.quantile_ns(1.0));
    }

    /// Lazy tables: nothing is held until something is recorded, and an empty
    /// histogram reads and encodes exactly as a table with nothing in it, so merged
    /// and stored histograms keep their bytes.
    #[test]
    fn an_empty_histogram_holds_no_table_and_encodes_as_one() {
        let mut l = Latency::new();
        assert!(l.h.is_none());
        l.add(&Latency::new());
        l.reset();
        assert!(
            l.h.is_none(),
            "adding or resetting nothing allocates nothing"
        );
        assert_eq!((l.count(), l.quantile_ns(0.5)), (0, 0));
        assert_eq!(l.summary(), LatencySummary::default());
        let full_but_empty = Latency { h: Some(table()) };
        assert_eq!(l.encode(), full_but_empty.encode());
        assert_eq!(l.inner().len(), 0);
        // Decoded, an empty table adds nothing to a recording.
        let mut a = Latency::new();
        a.record(1234);
        let before = a.encode();
        a.add(&Latency::decode(&l.encode()).unwrap());
        assert_eq!(a.encode(), before);
        // `take` hands the table over and leaves nothing behind.
        let got = a.take();
        assert!(a.h.is_none());
        assert_eq!((got.count(), a.count()), (1, 0));
        assert_eq!(got.encode(), before);
    }

    #[test]
    fn empty_summary_is_zero() {
        assert_eq!(Latency::new().summary().count, 0);
        assert!(Latency::decode("not base64!").is_err());
    }
}
