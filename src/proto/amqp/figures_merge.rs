//! The `amqp` block of several results as one (shards, rounds): counts summed, the
//! handshake histograms added (its percentiles read from the sum), the rates
//! recomputed over the merged time, the first broker close kept. The generic counter
//! sum cannot do this: the block holds rates and a latency summary.

use super::figures::AmqpFigures;
use crate::stats::merge::histograms;
use crate::stats::result::HistogramBlob;
use crate::stats::RunResult;
use serde_json::Value;

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
    let sum = |g: fn(&AmqpFigures) -> u64| fs.iter().map(g).sum::<u64>();
    let handshakes = handshake.count();
    let messages = sum(|f| f.messages);
    let payload = sum(|f| f.payload_bytes);
    let out = AmqpFigures {
        mode: first.mode.clone(),
        confirm: first.confirm,
        counted_from: first.counted_from.clone(),
        handshakes: sum(|f| f.handshakes),
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
