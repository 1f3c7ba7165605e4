//! Interval series of several parts as one. Parts that ran side by side (shards,
//! processes) are aligned on the wall clock: a part's row spans its measured start
//! plus the row's `t_s - duration_s` to `t_s`, and lands in the step of the merged
//! series (from the earliest measured start, steps of the parts' `--interval`,
//! `config.interval_s`) that holds its middle; the rows of a step are summed. Shards
//! that share a start (`--start-at`, as the schedulers' runs do) have their intervals
//! on the same wall-clock steps, so a step is exactly their samples of that interval;
//! shards that started apart have each row in the step it mostly covers. Parts that
//! ran one after another (rounds) follow each other.
//! A step's percentiles are those of the sum of its rows' histograms (shard results
//! keep each row's, `IntervalRow::histogram`): exactly the p99 of every sample of
//! every part in that step. Where a row of the step has no histogram (a result from
//! before they were kept, or not a shard's), the step's percentiles are null, never an
//! average of the parts'. Rows that follow each other keep their own.

use crate::stats::intervals::{add_counts, summarise};
use crate::stats::latency::Latency;
use crate::stats::snapshot::IntervalRow;

/// One part's rows and where they sit: its measured start, ms after the merged origin.
pub struct Placed<'a> {
    pub offset_ms: u64,
    pub rows: &'a [IntervalRow],
}

/// The parts' interval: `config.interval_s` when they say it, else (results from
/// before it was said) their longest row, to the millisecond (a last row is shorter).
fn step_s(parts: &[Placed<'_>], interval_s: Option<f64>) -> f64 {
    if let Some(i) = interval_s.filter(|i| i.is_finite() && *i >= 1e-3) {
        return i;
    }
    let longest = parts
        .iter()
        .flat_map(|p| p.rows.iter().map(|r| r.duration_s))
        .fold(0.0f64, f64::max);
    ((longest * 1e3).round() / 1e3).max(1e-3)
}

fn empty(t_s: f64, duration_s: f64) -> IntervalRow {
    IntervalRow {
        t_s,
        duration_s,
        ..IntervalRow::default()
    }
}

/// Rates and the running total, once the counts of every row are in.
fn finish(rows: &mut [IntervalRow], replies: bool) {
    let mut total = 0u64;
    for r in rows {
        total += r.ok;
        r.total_ok = total;
        r.msgs_per_s = r.ok as f64 / r.duration_s;
        r.mb_per_s = replies.then(|| r.bytes_received as f64 / r.duration_s / 1e6);
    }
}

/// A step's histogram while its rows come in: the sum so far, or none once a row of
/// it came without one (and had replies timed).
enum StepLatency {
    Sum(Latency),
    Unknown,
}

/// Most rows a merged series may have: a week of one-second steps. Rows come from
/// files; one claiming to end a year after its start must not make the merge
/// allocate a row per step up to there.
pub const MAX_ROWS: usize = 7 * 24 * 3600;

/// Side by side, on the wall clock; the merged run lasts `elapsed_s`.
pub fn aligned(
    parts: &[Placed<'_>],
    elapsed_s: f64,
    replies: bool,
    interval_s: Option<f64>,
) -> Result<Vec<IntervalRow>, String> {
    if parts.iter().all(|p| p.rows.is_empty()) {
        return Ok(Vec::new());
    }
    let step = step_s(parts, interval_s);
    let mut out: Vec<IntervalRow> = Vec::new();
    let mut sums: Vec<StepLatency> = Vec::new();
    for p in parts {
        for r in p.rows {
            let end_s = p.offset_ms as f64 / 1e3 + r.t_s;
            let middle_s = end_s - r.duration_s.max(0.0) / 2.0;
            // The step that holds the row's middle (ms rounding keeps float noise out
            // of it; a row whose middle is on a boundary belongs to the later step).
            let k = (((middle_s * 1e3).round() / 1e3 / step).floor().max(0.0) as usize) + 1;
            if k > MAX_ROWS {
                return Err(format!(
                    "an interval row ends {end_s:.0} s after the merged start, more than {MAX_ROWS} steps of {step} s"
                ));
            }
            while out.len() < k {
                let end = (out.len() + 1) as f64 * step;
                out.push(empty(end, step));
                sums.push(StepLatency::Sum(Latency::new()));
            }
            add_counts(&mut out[k - 1], r);
            add_histogram(&mut sums[k - 1], r)?;
        }
    }
    for (row, sum) in out.iter_mut().zip(&sums) {
        match sum {
            StepLatency::Sum(l) => summarise(row, l, false),
            StepLatency::Unknown => row.count = 0,
        }
    }
    // The last step lasts up to the end of the merged run, not past it.
    if let Some(last) = out.last_mut() {
        let start = last.t_s - step;
        if elapsed_s > start && elapsed_s < last.t_s {
            last.t_s = elapsed_s;
            last.duration_s = elapsed_s - start;
        }
    }
    finish(&mut out, replies);
    Ok(out)
}

/// Adds a row's histogram to its step's; a row that timed replies but kept no
/// histogram leaves the step's percentiles unknown.
fn add_histogram(sum: &mut StepLatency, r: &IntervalRow) -> Result<(), String> {
    let StepLatency::Sum(l) = sum else {
        return Ok(());
    };
    match r.histogram.as_deref() {
        Some(text) => {
            let h = Latency::decode(text)
                .map_err(|e| format!("an interval row's histogram at {} s: {e}", r.t_s))?;
            if h.count() != r.count {
                return Err(format!(
                    "an interval row at {} s counts {} timed replies but its histogram holds {}",
                    r.t_s,
                    r.count,
                    h.count()
                ));
            }
            l.add(&h);
        }
        None if r.count > 0 || r.p50_us.is_some() => *sum = StepLatency::Unknown,
        None => {}
    }
    Ok(())
}

/// One after another: each part's rows shifted by the parts before it, each with its
/// own percentiles (its histogram is not carried on: the merged result is no shard).
pub fn sequential(parts: &[(f64, &[IntervalRow])], replies: bool) -> Vec<IntervalRow> {
    let mut out = Vec::new();
    let mut before = 0.0;
    for (elapsed_s, rows) in parts {
        for r in *rows {
            out.push(IntervalRow {
                t_s: before + r.t_s,
                histogram: None,
                ..r.clone()
            });
        }
        before += elapsed_s;
    }
    finish(&mut out, replies);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(t_s: f64, ok: u64) -> IntervalRow {
        IntervalRow {
            sent: ok,
            ok,
            bytes_received: ok * 10,
            ..empty(t_s, 1.0)
        }
    }

    #[test]
    fn rows_land_in_the_wall_clock_step_that_holds_their_middle() {
        let mut a = [row(1.0, 10), row(2.0, 20), row(2.5, 5)];
        a[2].duration_s = 0.5;
        let b = [row(1.0, 100), row(2.0, 200)];
        // b started 400 ms after a: its rows span 0.4-1.4 s and 1.4-2.4 s of the merged
        // run, mostly the first and the second step.
        let rows = aligned(
            &[
                Placed {
                    offset_ms: 0,
                    rows: &a,
                },
                Placed {
                    offset_ms: 400,
                    rows: &b,
                },
            ],
            2.9,
            true,
            Some(1.0),
        )
        .unwrap();
        let oks: Vec<u64> = rows.iter().map(|r| r.ok).collect();
        assert_eq!(oks, [110, 220, 5]);
        assert_eq!(rows[2].total_ok, 335);
        assert_eq!(rows[2].t_s, 2.9);
        assert!((rows[2].duration_s - 0.9).abs() < 1e-9);
        assert_eq!(rows[1].mb_per_s, Some(2200.0 / 1e6));
        assert_eq!(rows[0].p99_us, None);
        let far = [row(1e9, 1)];
        let e = aligned(
            &[Placed {
                offset_ms: 0,
                rows: &far,
            }],
            1.0,
            true,
            None,
        )
        .unwrap_err();
        assert!(
            e.starts_with("an interval row ends 1000000000 s after"),
            "{e}"
        );
        let seq = sequential(&[(2.5, &a[..]), (2.0, &b[..])], false);
        let ts: Vec<f64> = seq.iter().map(|r| r.t_s).collect();
        assert_eq!(ts, [1.0, 2.0, 2.5, 3.5, 4.5]);
        assert_eq!(seq[4].total_ok, 335);
        assert_eq!(seq[0].mb_per_s, None);
    }
}
