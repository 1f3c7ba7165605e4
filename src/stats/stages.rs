//! Figures per stage (`--stages`, docs/stages.md): each request counts in the stage it
//! was sent in, by its intended send time. A worker records into `StageTally`, made
//! once before the run with one histogram per stage (at most 32 stages), so recording
//! costs a compare against the current stage's end and a few adds: no search, no
//! allocation beyond each stage's table on its first sample. The run's `StageFigures`
//! are the workers' tallies added, and merge exactly, stage by stage.

use super::latency::{HistogramBlob, Latency, LatencySummary};
use serde::{Deserialize, Serialize};

/// One stage's counts and latency, as a worker records them.
#[derive(Default)]
pub struct StageCount {
    pub sent: u64,
    pub ok: u64,
    pub errors: u64,
    /// Latency from the intended send time, of every reply timed (as the run's).
    pub latency: Latency,
}

/// A worker's counts per stage: `ends_ns[i]`, the end of stage `i` from the run's
/// start; a request sent after the last stage's end counts in the last.
pub struct StageTally {
    ends_ns: Vec<u64>,
    /// The stage of the last request looked up: requests come mostly in time order,
    /// so the next is mostly in it or the one after.
    at: usize,
    pub per: Vec<StageCount>,
}

impl StageTally {
    /// `ends_ns`: each stage's end, ascending (at least one).
    pub fn new(ends_ns: Vec<u64>) -> StageTally {
        let per = ends_ns.iter().map(|_| StageCount::default()).collect();
        StageTally {
            ends_ns,
            at: 0,
            per,
        }
    }

    /// The stage a request meant to go at `t_ns` belongs to: the current one unless
    /// `t_ns` lies past its end or before its start, then a step at a time.
    #[inline]
    fn at(&mut self, t_ns: u64) -> &mut StageCount {
        let mut i = self.at;
        let last = self.ends_ns.len() - 1;
        while i < last && t_ns >= self.ends_ns[i] {
            i += 1;
        }
        while i > 0 && t_ns < self.ends_ns[i - 1] {
            i -= 1;
        }
        self.at = i;
        &mut self.per[i]
    }

    #[inline]
    pub fn sent(&mut self, intended_ns: u64) {
        self.at(intended_ns).sent += 1;
    }

    /// `n` correct replies to requests meant to go at `intended_ns`, each `corrected_ns`.
    #[inline]
    pub fn ok(&mut self, intended_ns: u64, corrected_ns: u64, n: u64) {
        let s = self.at(intended_ns);
        s.ok += n;
        s.latency.record_n(corrected_ns, n);
    }

    /// A request error; `corrected_ns`: its latency when it was answered in step.
    #[inline]
    pub fn error(&mut self, intended_ns: u64, corrected_ns: Option<u64>) {
        let s = self.at(intended_ns);
        s.errors += 1;
        if let Some(ns) = corrected_ns {
            s.latency.record(ns);
        }
    }

    /// Adds another worker's tally (the same stages).
    pub fn add(&mut self, other: &StageTally) {
        for (a, b) in self.per.iter_mut().zip(&other.per) {
            a.sent += b.sent;
            a.ok += b.ok;
            a.errors += b.errors;
            a.latency.add(&b.latency);
        }
    }
}

/// One stage in the result: its length, its target, the rate it asked (its integral
/// over its length) and achieved, its counts and latency (an exact histogram).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct StageFigures {
    pub seconds: f64,
    pub target_per_s: f64,
    /// The requests the stage's curve asks for over it, per second of it.
    pub asked_per_s: f64,
    /// The requests sent in it (by intended send time), per second of it.
    pub achieved_per_s: f64,
    pub sent: u64,
    pub ok: u64,
    pub errors: u64,
    #[serde(with = "super::latency::null_when_empty")]
    pub latency_us: LatencySummary,
    pub histogram: HistogramBlob,
}

impl StageFigures {
    /// A stage of `seconds` to `target_per_s`, asking `asked` requests in all.
    pub fn new(seconds: f64, target_per_s: f64, asked: f64, c: &StageCount) -> StageFigures {
        StageFigures {
            seconds,
            target_per_s,
            asked_per_s: asked / seconds,
            achieved_per_s: c.sent as f64 / seconds,
            sent: c.sent,
            ok: c.ok,
            errors: c.errors,
            latency_us: c.latency.summary(),
            histogram: HistogramBlob::of(&c.latency),
        }
    }
}

/// The exact merge of several results' stages (`None` when none has stages): counts
/// and histograms added stage by stage; side by side (shards) the rates add up, one
/// after another (rounds) they average. Parts with different stage lists are refused.
pub fn merge(
    parts: &[Option<&Vec<StageFigures>>],
    side_by_side: bool,
) -> Result<Option<Vec<StageFigures>>, String> {
    let Some(first) = parts.first().copied().flatten() else {
        return match parts.iter().any(Option::is_some) {
            true => Err("some parts ran by stages (--stages) and others not".into()),
            false => Ok(None),
        };
    };
    let mut all = Vec::with_capacity(parts.len());
    for (i, p) in parts.iter().enumerate() {
        let p = p.ok_or("some parts ran by stages (--stages) and others not")?;
        let same =
            p.len() == first.len() && p.iter().zip(first).all(|(a, b)| a.seconds == b.seconds);
        if !same {
            return Err(format!(
                "part {} ran other stages (their number or lengths differ from part 1's)",
                i + 1
            ));
        }
        all.push(p);
    }
    let n = all.len() as f64;
    let mut merged = Vec::with_capacity(first.len());
    for (k, f) in first.iter().enumerate() {
        let of = || all.iter().map(move |p| &p[k]);
        let what = format!("stages[{k}].histogram");
        let latency = super::merge::histograms::add_blobs(&what, of().map(|s| &s.histogram))?;
        let rate = |g: fn(&StageFigures) -> f64| {
            let sum: f64 = of().map(g).sum();
            if side_by_side {
                sum
            } else {
                sum / n
            }
        };
        merged.push(StageFigures {
            seconds: f.seconds,
            target_per_s: rate(|s| s.target_per_s),
            asked_per_s: rate(|s| s.asked_per_s),
            achieved_per_s: rate(|s| s.achieved_per_s),
            sent: of().map(|s| s.sent).sum(),
            ok: of().map(|s| s.ok).sum(),
            errors: of().map(|s| s.errors).sum(),
            latency_us: latency.summary(),
            histogram: HistogramBlob::of(&latency),
        });
    }
    Ok(Some(merged))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tally() -> StageTally {
        StageTally::new(vec![1_000, 3_000, 4_000])
    }

    #[test]
    fn a_request_counts_in_the_stage_it_was_meant_to_go_in() {
        let mut t = tally();
        for at in [0, 999, 1_000, 2_999, 500, 3_000, 3_999, 4_000, 9_999, 10] {
            t.sent(at);
        }
        let sent: Vec<u64> = t.per.iter().map(|s| s.sent).collect();
        // After the last stage's end: the last stage.
        assert_eq!(sent, [4, 2, 4]);
        t.ok(1_500, 7_000, 3);
        t.error(3_500, Some(9_000));
        t.error(3_500, None);
        assert_eq!((t.per[1].ok, t.per[1].latency.count()), (3, 3));
        assert_eq!((t.per[2].errors, t.per[2].latency.count()), (2, 1));
    }

    fn figures(sent: u64, ns: u64) -> Vec<StageFigures> {
        let mut t = tally();
        for _ in 0..sent {
            t.sent(1_500);
            t.ok(1_500, ns, 1);
        }
        t.per
            .iter()
            .map(|c| StageFigures::new(2.0, 10.0, 20.0, c))
            .collect()
    }

    #[test]
    fn a_merge_adds_stage_by_stage() {
        let (a, b) = (figures(3, 1_000), figures(5, 9_000));
        let m = merge(&[Some(&a), Some(&b)], true).unwrap().unwrap();
        assert_eq!(m[1].sent, 8);
        assert_eq!(m[1].ok, 8);
        assert_eq!(m[1].latency_us.count, 8);
        // Both parts' samples in one table: 1 us from the first, 9 us (to HDR's
        // precision) from the second.
        assert_eq!(m[1].latency_us.min, 1.0);
        assert!(
            (m[1].latency_us.max - 9.0).abs() < 0.01,
            "{:?}",
            m[1].latency_us
        );
        assert_eq!(m[1].achieved_per_s, 4.0);
        assert_eq!(m[1].asked_per_s, 20.0);
        let rounds = merge(&[Some(&a), Some(&b)], false).unwrap().unwrap();
        assert_eq!(
            (rounds[1].achieved_per_s, rounds[1].asked_per_s),
            (2.0, 10.0)
        );
        assert_eq!(m[0].sent + m[2].sent, 0);
    }

    #[test]
    fn other_stage_lists_are_refused() {
        let a = figures(1, 1_000);
        let mut b = figures(1, 1_000);
        b[2].seconds = 3.0;
        let e = merge(&[Some(&a), Some(&b)], true).unwrap_err();
        assert!(e.contains("part 2 ran other stages"), "{e}");
        let e = merge(&[Some(&a), None], true).unwrap_err();
        assert!(e.contains("others not"), "{e}");
        assert!(merge(&[None, None], true).unwrap().is_none());
    }
}
