//! What the HTTP client counts besides the engine: responses by status code for the
//! run, and with a request set (`--request-set`) per request of the set: responses,
//! correct ones, their codes and a latency histogram. Kept per worker and phase by the
//! client session, merged exactly (sums, HDR buckets added).
//!
//! A request's histogram has two significant digits (1% resolution, ~46 KB once it
//! records; the run's has three, ~270 KB): a set may hold 1,024 requests per thread.

use super::figures::StatusCounts;
use crate::stats::{Figures, LatencySummary};
use hdrhistogram::Histogram;

/// Highest latency a request's histogram tracks: one hour, as the run's.
const HIGHEST_NS: u64 = 3_600_000_000_000;

/// A request's latency histogram: no table until it records.
#[derive(Clone, Debug, Default)]
pub struct EntryLatency(Option<Histogram<u64>>);

fn table() -> Histogram<u64> {
    Histogram::new_with_bounds(1, HIGHEST_NS, 2).expect("static histogram bounds")
}

impl EntryLatency {
    #[inline]
    pub fn record(&mut self, ns: u64) {
        self.0
            .get_or_insert_with(table)
            .saturating_record(ns.max(1));
    }

    pub fn add(&mut self, other: &EntryLatency) {
        if let Some(o) = &other.0 {
            self.add_histogram(o);
        }
    }

    /// Adds a histogram of any bounds (one read back from a result): exact where its
    /// buckets are this one's.
    pub fn add_histogram(&mut self, h: &Histogram<u64>) {
        let t = self.0.get_or_insert_with(table);
        for v in h.iter_recorded() {
            t.saturating_record_n(v.value_iterated_to().max(1), v.count_at_value());
        }
    }

    pub fn count(&self) -> u64 {
        self.0.as_ref().map_or(0, |h| h.len())
    }

    /// Percentiles in microseconds, as the run's (`latency_us`).
    pub fn summary(&self) -> LatencySummary {
        self.0
            .as_ref()
            .map_or_else(LatencySummary::default, LatencySummary::of)
    }

    /// HdrHistogram V2 with deflate, base64, as the run's histogram is stored.
    pub fn encode(&self) -> String {
        use base64::Engine as _;
        use hdrhistogram::serialization::{Serializer as _, V2DeflateSerializer};
        let empty;
        let h = match &self.0 {
            Some(h) => h,
            None => {
                empty = table();
                &empty
            }
        };
        let mut buf = Vec::new();
        V2DeflateSerializer::new()
            .serialize(h, &mut buf)
            .expect("serializing into memory cannot fail");
        base64::engine::general_purpose::STANDARD.encode(buf)
    }

    /// Reads what `encode` wrote (from a result file: any bounds, at most 2^48 samples).
    pub fn decode(text: &str) -> Result<EntryLatency, String> {
        use base64::Engine as _;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(text.trim())
            .map_err(|e| format!("histogram is not base64: {e}"))?;
        let h: Histogram<u64> = hdrhistogram::serialization::Deserializer::new()
            .deserialize(&mut bytes.as_slice())
            .map_err(|e| format!("histogram does not decode: {e}"))?;
        if h.len() > crate::stats::latency::MAX_STORED_SAMPLES {
            return Err("histogram holds too many samples".into());
        }
        let mut out = EntryLatency::default();
        out.add_histogram(&h);
        Ok(out)
    }
}

impl serde::Serialize for EntryLatency {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.encode())
    }
}

impl<'de> serde::Deserialize<'de> for EntryLatency {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        EntryLatency::decode(&text).map_err(serde::de::Error::custom)
    }
}

/// One request of the set: its responses, the correct ones, their codes, latencies.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct EntryFigures {
    /// Responses received (any status), the correct ones among them.
    pub answered: u64,
    pub ok: u64,
    /// (code, responses), in the order first seen: few codes per request.
    pub codes: Vec<(u16, u64)>,
    pub latency: EntryLatency,
}

impl EntryFigures {
    #[inline]
    fn count_code(&mut self, status: u16, n: u64) {
        match self.codes.iter_mut().find(|(c, _)| *c == status) {
            Some((_, k)) => *k += n,
            None => self.codes.push((status, n)),
        }
    }

    pub fn merge(&mut self, o: &EntryFigures) {
        self.answered += o.answered;
        self.ok += o.ok;
        for &(c, n) in &o.codes {
            self.count_code(c, n);
        }
        self.latency.add(&o.latency);
    }
}

/// HTTP's figures: responses by status code, and per request of a set.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct HttpFigures {
    pub codes: StatusCounts,
    /// Per request of the set, by its index (empty without `--request-set`; grown to a
    /// request's index on its first response, never per response).
    pub entries: Vec<EntryFigures>,
}

impl HttpFigures {
    /// A response to request `entry` of the set with `status`, correct or not, after
    /// `latency_ns`.
    #[inline]
    pub fn entry_reply(&mut self, entry: u32, status: u16, ok: bool, latency_ns: u64) {
        let i = entry as usize;
        if self.entries.len() <= i {
            self.entries.resize_with(i + 1, EntryFigures::default);
        }
        let e = &mut self.entries[i];
        e.answered += 1;
        e.ok += ok as u64;
        e.count_code(status, 1);
        e.latency.record(latency_ns);
    }
}

impl Figures for HttpFigures {
    fn merge(&mut self, other: &Self) {
        self.codes.merge(&other.codes);
        if self.entries.len() < other.entries.len() {
            self.entries
                .resize_with(other.entries.len(), EntryFigures::default);
        }
        for (a, b) in self.entries.iter_mut().zip(&other.entries) {
            a.merge(b);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_merge_exactly() {
        let mut a = HttpFigures::default();
        a.entry_reply(2, 200, true, 1_000);
        a.entry_reply(2, 500, false, 3_000);
        let mut b = HttpFigures::default();
        b.entry_reply(0, 200, true, 2_000);
        b.entry_reply(2, 500, false, 5_000);
        a.merge(&b);
        assert_eq!(a.entries.len(), 3);
        let e = &a.entries[2];
        assert_eq!((e.answered, e.ok), (3, 1));
        assert_eq!(e.codes, [(200, 1), (500, 2)]);
        assert_eq!(e.latency.count(), 3);
        assert_eq!((a.entries[0].answered, a.entries[1].answered), (1, 0));
        let back = EntryLatency::decode(&e.latency.encode()).unwrap();
        assert_eq!(back.summary(), e.latency.summary());
    }
}
