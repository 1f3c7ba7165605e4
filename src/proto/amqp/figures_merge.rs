//! The `amqp` block of several results as one (shards, rounds): counts summed, the
//! handshake histograms added (its percentiles read from the sum), the rates
//! recomputed over the merged time, the first broker close kept. The generic counter
//! sum cannot do this: the block holds rates and a latency summary.

use super::figures::AmqpFigures;
use crate::stats::merge::histograms;
use crate::stats::result::HistogramBlob;
use crate::stats::RunResult;
use serde_json::Value;

/// AMQP's block merge (`Entry::block_merge`): only the `amqp` block is its own.
pub fn block_merge(
    name: &str,
    blocks: &[&Value],
    merged: &RunResult,
) -> Option<Result<Value, String>> {
    (name == AmqpFigures::BLOCK).then(|| merge(blocks, merged))
}

/// The merged block, or why the blocks do not merge.
pub fn merge(blocks: &[&Value], merged: &RunResult) -> Result<Value, String> {
    let mut fs = Vec::with_capacity(blocks.len());
    for b in blocks {
        fs.push(
            serde_json::from_value::<AmqpFigures>((*b).clone())
                .map_err(|e| format!("an \"amqp\" block does not read: {e}"))?,
        );
    }
    let first = fs.first().ok_or("no \"amqp\" block to merge")?;
    if fs.iter().any(|f| {
        (&f.mode, f.confirm, &f.counted_from) != (&first.mode, first.confirm, &first.counted_from)
    }) {
        return Err(
            "the \"amqp\" blocks differ in mode or confirms: only parts of one run merge".into(),
        );
    }
    let handshake = histograms::add_blobs(
        "amqp.handshake_histogram",
        fs.iter().map(|f| &f.handshake_histogram),
    )?;
    let secs = merged.elapsed_s;
    let per_sec = |v: f64| if secs > 0.0 { v / secs } else { 0.0 };
    // Saturating: only a forged file has counts that would pass u64.
    let sum = |g: fn(&AmqpFigures) -> u64| fs.iter().fold(0u64, |a, f| a.saturating_add(g(f)));
    let handshakes = sum(|f| f.handshakes);
    let messages = sum(|f| f.messages);
    let payload = sum(|f| f.payload_bytes);
    let out = AmqpFigures {
        mode: first.mode.clone(),
        confirm: first.confirm,
        counted_from: first.counted_from.clone(),
        handshakes,
        connections_per_s: first.connections_per_s.map(|_| per_sec(handshakes as f64)),
        clean_closes: sum(|f| f.clean_closes),
        messages,
        nacked: sum(|f| f.nacked),
        payload_bytes: payload,
        msgs_per_s: per_sec(messages as f64),
        payload_mb_per_s: per_sec(payload as f64) / 1e6,
        handshake_latency_us: handshake.summary(),
        handshake_histogram: HistogramBlob::of(&handshake),
        broker_close: fs.iter().find_map(|f| f.broker_close.clone()),
    };
    serde_json::to_value(&out).map_err(|e| format!("the merged \"amqp\" block: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::latency::Latency;
    use crate::stats::result::Totals;
    use crate::stats::{Measured, Unit};

    fn block(handshake_ns: &[u64], messages: u64, close: Option<&str>) -> Value {
        let mut h = Latency::new();
        for &ns in handshake_ns {
            h.record(ns);
        }
        serde_json::to_value(AmqpFigures {
            mode: "churn".into(),
            confirm: true,
            counted_from: "confirmed by the broker".into(),
            handshakes: h.count(),
            connections_per_s: Some(1.0),
            clean_closes: h.count(),
            messages,
            nacked: 1,
            payload_bytes: messages * 10,
            msgs_per_s: 1.0,
            payload_mb_per_s: 1.0,
            handshake_latency_us: h.summary(),
            handshake_histogram: HistogramBlob::of(&h),
            broker_close: close.map(String::from),
        })
        .unwrap()
    }

    #[test]
    fn counts_add_handshake_histograms_add_and_rates_follow_the_merged_time() {
        let l = Latency::new();
        let merged = RunResult::builder(Measured {
            kind: "amqp",
            target: "t".into(),
            config: serde_json::json!({}),
            started_unix_ms: 0,
            elapsed_s: 4.0,
            totals: Totals::default(),
            errors: Default::default(),
            unit: Unit::new("publishes", "confirmed", true),
            latency: &l,
            client_cpu_s: 0.0,
        })
        .finish(None);
        let (a, b) = (
            block(&[1_000, 2_000], 100, None),
            block(&[50_000], 60, Some("404")),
        );
        let m: AmqpFigures = serde_json::from_value(merge(&[&a, &b], &merged).unwrap()).unwrap();
        assert_eq!(
            (m.handshakes, m.clean_closes, m.messages, m.nacked),
            (3, 3, 160, 2)
        );
        assert_eq!(m.payload_bytes, 1600);
        assert_eq!((m.msgs_per_s, m.connections_per_s), (40.0, Some(0.75)));
        let mut all = Latency::new();
        for ns in [1_000, 2_000, 50_000] {
            all.record(ns);
        }
        assert_eq!(m.handshake_histogram.data, all.encode());
        assert_eq!(m.handshake_latency_us, all.summary());
        assert_eq!(m.broker_close.as_deref(), Some("404"));
        let mut publish = b.clone();
        publish["mode"] = "publish".into();
        assert!(merge(&[&a, &publish], &merged)
            .unwrap_err()
            .contains("differ in mode"));
    }
}
