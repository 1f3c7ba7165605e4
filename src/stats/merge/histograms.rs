//! The one exact sum of latency histograms: every stored blob decoded, added bucket by
//! bucket, and encoded again. A percentile of a merge is read from this sum, never
//! averaged from the parts' percentiles (the mean of two p99s is no p99 of anything).

use crate::stats::latency::{Latency, MAX_STORED_SAMPLES};
use crate::stats::result::HistogramBlob;

/// The sum of `parts`, exactly (HDR buckets added). Used by `merge` and by every other
/// place that folds several runs into one figure (a suite point's rounds).
pub fn add_all<'a>(parts: impl IntoIterator<Item = &'a Latency>) -> Latency {
    let mut sum = Latency::new();
    for l in parts {
        sum.add(l);
    }
    sum
}

/// Decodes every blob (`what` names the field in the refusal) and adds them. A merge of
/// more than `MAX_STORED_SAMPLES` samples is refused: it could not be read back.
pub fn add_blobs<'a>(
    what: &str,
    blobs: impl IntoIterator<Item = &'a HistogramBlob>,
) -> Result<Latency, String> {
    let mut decoded = Vec::new();
    for (i, b) in blobs.into_iter().enumerate() {
        decoded.push(Latency::decode(&b.data).map_err(|e| format!("part {}: {what}: {e}", i + 1))?);
    }
    let sum = add_all(&decoded);
    if sum.count() > MAX_STORED_SAMPLES {
        return Err(format!(
            "the merged {what} would hold more than {MAX_STORED_SAMPLES} samples"
        ));
    }
    Ok(sum)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adding_stored_blobs_gives_the_bytes_of_one_recording() {
        let samples: Vec<u64> = (1..=3000u64).map(|i| i * i * 37 % 9_000_000 + 1).collect();
        let mut whole = Latency::new();
        let mut thirds = [Latency::new(), Latency::new(), Latency::new()];
        for (i, &ns) in samples.iter().enumerate() {
            whole.record(ns);
            thirds[i % 3].record(ns);
        }
        let blobs: Vec<HistogramBlob> = thirds.iter().map(HistogramBlob::of).collect();
        let merged = add_blobs("histogram", &blobs).unwrap();
        assert_eq!(merged.encode(), whole.encode());
        assert_eq!(merged.count(), 3000);
        let bad = HistogramBlob {
            data: "not base64!".into(),
            ..HistogramBlob::of(&whole)
        };
        let e = add_blobs("histogram", [&blobs[0], &bad]).unwrap_err();
        assert!(
            e.starts_with("part 2: histogram: histogram is not base64"),
            "{e}"
        );
    }
}
