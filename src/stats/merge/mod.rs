//! The one exact merge of results: shards of one run (`wirebench merge`), a suite
//! point's rounds, worker processes. Counters and bytes are summed, HDR histograms
//! added (decoded, added, encoded: percentiles come from the sum, never averaged), CPU,
//! memory and threads per event loop summed, rates recomputed over the merged time,
//! interval series aligned, error texts merged within their bound (`ErrorTexts::merge_all`),
//! a protocol's own blocks merged by that protocol (or, when they hold only counters, by
//! the generic counter sum), the machine's interference summed, and every part's own
//! figures kept in `merge.parts`.
//!
//! Merged time: parts side by side (shards, processes) span from the earliest measured
//! start to the latest measured end, so the merged throughput is the whole output over
//! the wall-clock time it took; parts one after another (rounds) span the sum of their
//! measured times. A part's measured start is its shard's `measured_start_unix_ms`,
//! else its start plus its warm-up.

pub mod check;
pub mod counters;
pub mod histograms;
mod input;
pub mod intervals;
mod parts;

pub use input::{measured_start_ms, no_block_check, no_block_merge, BlockCheck, BlockMerge, Part};

use super::error_texts::ErrorTexts;
use super::interference::Interference;
use super::rate::{RateFigures, ACHIEVED_AT_LEAST};
use super::result::{ClientProcess, RunResult, Warmup};
use super::result_builder::Measured;
use super::shard::MergeInfo;

/// What is merged, which decides how time adds up and what `merge.of` says.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Of {
    /// Shards of one run (`--shard I/N`): side by side, checked to belong together.
    Shards { allow_partial: bool },
    /// Rounds of one suite point: one after another.
    Rounds,
    /// Worker processes of one run: side by side.
    Processes,
}

impl Of {
    fn name(self) -> &'static str {
        match self {
            Of::Shards { .. } => "shards",
            Of::Rounds => "rounds",
            Of::Processes => "processes",
        }
    }

    fn side_by_side(self) -> bool {
        self != Of::Rounds
    }
}

/// The merge of `parts` (at least one), or the one sentence saying why they do not merge.
pub fn merge(parts: &[Part<'_>], of: Of, blocks: BlockMerge) -> Result<RunResult, String> {
    check::same_load(parts)?;
    check::own_figures(parts)?;
    let shards = match of {
        Of::Shards { allow_partial } => Some(check::shards(parts, allow_partial)?),
        _ => None,
    };
    let mut order: Vec<&Part<'_>> = parts.iter().collect();
    order.sort_by_key(|p| p.result.shard.as_ref().map(|s| s.index));
    let rs: Vec<&RunResult> = order.iter().map(|p| p.result).collect();
    let first = rs[0];

    let starts: Vec<u64> = rs.iter().map(|r| measured_start_ms(r)).collect();
    let origin = starts.iter().copied().min().unwrap_or(0);
    let spread_ms = starts.iter().copied().max().unwrap_or(0) - origin;
    let elapsed_s = if of.side_by_side() {
        rs.iter()
            .zip(&starts)
            .map(|(r, s)| (s - origin) as f64 / 1e3 + r.elapsed_s)
            .fold(0.0, f64::max)
    } else {
        rs.iter().map(|r| r.elapsed_s).sum()
    };

    let latency = histograms::add_blobs("histogram", rs.iter().map(|r| &r.histogram))?;
    let uncorrected = match rs
        .iter()
        .filter(|r| r.histogram_uncorrected.is_some())
        .count()
    {
        0 => None,
        n if n == rs.len() => Some(histograms::add_blobs(
            "histogram_uncorrected",
            rs.iter().filter_map(|r| r.histogram_uncorrected.as_ref()),
        )?),
        _ => {
            return Err("some parts ran open loop (an uncorrected histogram) and others not".into())
        }
    };
    let totals = parts::totals(&rs)?;
    let replies = first.unit.replies;
    let client_s: f64 = rs.iter().map(|r| r.cpu.client_s).sum();
    let server_s = all_some(rs.iter().map(|r| r.cpu.server_s)).map(|v| v.iter().sum::<f64>());
    let rows = if of.side_by_side() {
        let placed: Vec<intervals::Placed<'_>> = rs
            .iter()
            .zip(&starts)
            .map(|(r, s)| intervals::Placed {
                offset_ms: s - origin,
                rows: &r.intervals,
            })
            .collect();
        intervals::aligned(
            &placed,
            elapsed_s,
            replies,
            first.config["interval_s"].as_f64(),
        )?
    } else {
        let seq: Vec<(f64, &[_])> = rs.iter().map(|r| (r.elapsed_s, &r.intervals[..])).collect();
        intervals::sequential(&seq, replies)
    };
    let warmup = Warmup {
        duration_s: if of.side_by_side() {
            rs.iter().map(|r| r.warmup.duration_s).fold(0.0, f64::max)
        } else {
            rs.iter().map(|r| r.warmup.duration_s).sum()
        },
        sent: sum_of(&rs, |r| r.warmup.sent),
        ok: sum_of(&rs, |r| r.warmup.ok),
        errors: sum_of(&rs, |r| r.warmup.errors),
    };
    // Peak RSS of several processes: the sum of each one's own peak (an upper bound of
    // what they held at once; they ran on different hosts, or at once).
    let client_process = all_some(rs.iter().map(|r| r.client_process.clone())).map(|ps| {
        ClientProcess {
            peak_rss_bytes: ps.iter().map(|p| p.peak_rss_bytes).sum(),
            includes_builtin_server: ps.iter().any(|p| p.includes_builtin_server),
            // Threads per loop add up; unknown when any part does not say.
            event_loop: all_some(ps.iter().map(|p| p.event_loop)).map(|ls| ls.iter().sum()),
        }
    });
    // The built-in servers' counters add up when they are counters; otherwise each
    // part keeps its own in `merge.parts`.
    let server = all_some(rs.iter().map(|r| r.server.clone()))
        .and_then(|v| counters::sum("server", &v.iter().collect::<Vec<_>>()).ok());

    // Built like every other result (`RunResult::builder`): rates and per-item CPU are
    // derived from the merged counts and time there, once for all producers.
    let mut merged = RunResult::builder(Measured {
        kind: &first.kind,
        target: first.target.clone(),
        config: first.config.clone(),
        started_unix_ms: rs.iter().map(|r| r.started_unix_ms).min().unwrap_or(0),
        elapsed_s,
        totals,
        errors: parts::errors(&rs)?,
        unit: first.unit.clone(),
        latency: &latency,
        client_cpu_s: client_s,
    })
    .environment(parts::environment(&rs))
    .uncorrected(uncorrected.as_ref())
    .intervals(&rows)
    .warmup(warmup)
    .error_texts(ErrorTexts::merge_all(rs.iter().map(|r| &r.error_texts)))
    .server_cpu(server_s)
    .client_process(client_process)
    .server(server)
    .rate(rate(&rs, of, elapsed_s)?)
    .stages(super::stages::merge(
        &rs.iter().map(|r| r.stages.as_ref()).collect::<Vec<_>>(),
        of.side_by_side(),
    )?)
    .finish(shortfall(&order, of));
    merged.extras = parts::extras(&rs, &merged, blocks)?;
    // Interference adds up exactly when every part measured it (interference/figures.rs).
    merged.set_interference(
        all_some(rs.iter().map(|r| r.interference())).and_then(|v| Interference::merge(&v)),
    );
    merged.merge = Some(MergeInfo {
        of: of.name().into(),
        expected: shards.as_ref().map_or(rs.len() as u32, |s| s.count),
        present: shards
            .as_ref()
            .map_or_else(|| (0..rs.len() as u32).collect(), |s| s.present.clone()),
        partial: shards
            .as_ref()
            .is_some_and(|s| s.present.len() < s.count as usize),
        start_spread_ms: spread_ms as f64,
        parts: rs.iter().map(|r| parts::own_figures(r)).collect(),
    });
    Ok(merged)
}

/// A count summed over the parts; a sum past u64 (only a forged file gets there)
/// stays at the largest count rather than wrapping.
fn sum_of(rs: &[&RunResult], f: fn(&RunResult) -> u64) -> u64 {
    rs.iter().fold(0u64, |a, r| a.saturating_add(f(r)))
}

/// All the values when every one is there, else None.
fn all_some<T>(it: impl Iterator<Item = Option<T>>) -> Option<Vec<T>> {
    it.collect()
}

/// None when every part succeeded; else each shortfall, naming its part.
fn shortfall(order: &[&Part<'_>], of: Of) -> Option<String> {
    let reasons: Vec<String> = order
        .iter()
        .enumerate()
        .filter_map(|(i, p)| {
            let r = p.result;
            let who = match &r.shard {
                Some(s) => format!("shard {}", s.index),
                None => format!("{} {}", &of.name()[..of.name().len() - 1], i + 1),
            };
            match (&r.outcome.reason, r.outcome.success) {
                (Some(why), _) => Some(format!("{who}: {why}")),
                (None, false) => Some(format!("{who}: fell short")),
                (None, true) => None,
            }
        })
        .collect();
    (!reasons.is_empty()).then(|| reasons.join("; "))
}

/// Open loop: side by side, the asked and achieved rates add up (each part asked its
/// share) and the schedule's lag is the worst part's; one after another, the rate is
/// the rounds' average weighted by their time.
fn rate(rs: &[&RunResult], of: Of, elapsed_s: f64) -> Result<Option<RateFigures>, String> {
    let Some(all) = all_some(rs.iter().map(|r| r.rate.clone())) else {
        return if rs.iter().any(|r| r.rate.is_some()) {
            Err("some parts ran open loop (--rate) and others not".into())
        } else {
            Ok(None)
        };
    };
    let behind_s = all.iter().map(|r| r.behind_s).fold(0.0, f64::max);
    let (asked, achieved) = if of.side_by_side() {
        (
            all.iter().map(|r| r.asked_per_s).sum::<f64>(),
            all.iter().map(|r| r.achieved_per_s).sum::<f64>(),
        )
    } else {
        let w = |f: fn(&RateFigures) -> f64| {
            let weighted: f64 = all.iter().zip(rs).map(|(a, r)| f(a) * r.elapsed_s).sum();
            if elapsed_s > 0.0 {
                weighted / elapsed_s
            } else {
                f(&all[0])
            }
        };
        (w(|r| r.asked_per_s), w(|r| r.achieved_per_s))
    };
    let judged = all.iter().all(|r| r.kept_up.is_some());
    Ok(Some(RateFigures {
        asked_per_s: asked,
        achieved_per_s: achieved,
        behind_s,
        kept_up: judged.then_some(achieved >= asked * ACHIEVED_AT_LEAST),
    }))
}

#[cfg(test)]
mod tests;
