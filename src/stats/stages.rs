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
    /// Connections open at the stage's end, and the most open at once in it.
    pub open_end: u64,
    pub open_peak: u64,
    /// Connections established, and attempts that failed, whose attempt started in
    /// the stage (measured phase).
    pub connections: u64,
    pub connect_errors: u64,
    /// Their connect latency (attempt to established), when the tally times it
    /// (`StageTally::time_connects`: connect's churn stages).
    pub connect_latency: Option<Latency>,
}

/// A worker's counts per stage: `ends_ns[i]`, the end of stage `i` from the run's
/// start; a request sent after the last stage's end counts in the last.
pub struct StageTally {
    ends_ns: Vec<u64>,
    /// The stage of the last request looked up: requests come mostly in time order,
    /// so the next is mostly in it or the one after.
    at: usize,
    pub per: Vec<StageCount>,
    /// The stage the open count was last seen in, and that count.
    open_at: usize,
    open_now: u64,
    /// Connection stages: this worker's share of each stage's target (`aim_at`).
    targets: Option<Vec<u64>>,
}

impl StageTally {
    /// `ends_ns`: each stage's end, ascending (at least one).
    pub fn new(ends_ns: Vec<u64>) -> StageTally {
        let per = ends_ns.iter().map(|_| StageCount::default()).collect();
        StageTally {
            ends_ns,
            at: 0,
            per,
            open_at: 0,
            open_now: 0,
            targets: None,
        }
    }

    /// Connection stages: the count each stage ends at, this worker's share. A change
    /// after a stage's end that moves the count toward that stage's target without
    /// passing it is the stage's own (an open or a leave it asked for that landed
    /// late on a busy machine), so a stage's `open_end` is its target whenever every
    /// connection it asked for came up (or went), however late.
    pub fn aim_at(&mut self, targets: Vec<u64>) {
        self.targets = Some(targets);
    }

    /// Whether a change to `open` after the current stage's end is one it asked for:
    /// toward its target, not past it.
    fn late_for_stage(&self, open: u64) -> bool {
        let Some(t) = self.targets.as_ref().and_then(|t| t.get(self.open_at)) else {
            return false;
        };
        let (now, target) = (self.open_now, *t);
        (now < open && open <= target) || (target <= open && open < now)
    }

    /// The open connections became `open` at `t_ns`. Stages passed since the last
    /// change end with the count before it (connection stages: unless the change is
    /// one the stage asked for, landed late: `aim_at`); a change from the last
    /// stage's end on (the run's closing) counts in none.
    #[inline]
    pub fn open(&mut self, t_ns: u64, open: u64) {
        let last = self.ends_ns.len() - 1;
        if t_ns >= self.ends_ns[self.open_at] && self.late_for_stage(open) {
            self.open_now = open;
            let s = &mut self.per[self.open_at];
            s.open_peak = s.open_peak.max(open);
            return;
        }
        if t_ns >= self.ends_ns[last] {
            return;
        }
        while self.open_at < last && t_ns >= self.ends_ns[self.open_at] {
            self.per[self.open_at].open_end = self.open_now;
            self.open_at += 1;
            self.per[self.open_at].open_peak = self.open_now;
        }
        self.open_now = open;
        let s = &mut self.per[self.open_at];
        s.open_peak = s.open_peak.max(open);
    }

    /// Keep each stage's connect latency too (`connected`).
    pub fn time_connects(&mut self) {
        for s in &mut self.per {
            s.connect_latency.get_or_insert_with(Latency::new);
        }
    }

    /// A connection whose attempt started at `began_ns` came up.
    #[inline]
    pub fn connected(&mut self, began_ns: u64) {
        self.at(began_ns).connections += 1;
    }

    /// The connection whose attempt started at `began_ns` was ready after `ns` (its
    /// handshakes done), when the tally times connects.
    #[inline]
    pub fn connect_took(&mut self, began_ns: u64, ns: u64) {
        if let Some(l) = self.at(began_ns).connect_latency.as_mut() {
            l.record(ns);
        }
    }

    /// An attempt started at `began_ns` failed.
    #[inline]
    pub fn connect_error(&mut self, began_ns: u64) {
        self.at(began_ns).connect_errors += 1;
    }

    /// The run is over: the stages after the last change hold its count to their end.
    pub fn finish_open(&mut self) {
        let now = self.open_now;
        for (i, s) in self.per.iter_mut().enumerate().skip(self.open_at) {
            s.open_end = now;
            if i > self.open_at {
                s.open_peak = now;
            }
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

    /// `n` requests meant to go (and sent) at `t_ns`.
    #[inline]
    pub fn sent_n(&mut self, t_ns: u64, n: u64) {
        self.at(t_ns).sent += n;
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
            a.connections += b.connections;
            a.connect_errors += b.connect_errors;
            if let (Some(x), Some(y)) = (a.connect_latency.as_mut(), b.connect_latency.as_ref()) {
                x.add(y);
            }
            // Each worker's highest: their sum bounds the run's from above (workers
            // hold equal shares, so they peak together).
            a.open_end += b.open_end;
            a.open_peak += b.open_peak;
        }
    }
}

/// One stage in the result: its length, its target (a rate, or connections), the
/// rate it asked (its integral over its length; rate stages) and achieved, its counts
/// and latency (an exact histogram), and the connections open at its end and at most.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct StageFigures {
    pub seconds: f64,
    /// Rate stages: where the stage's rate ends; null for connection stages.
    pub target_per_s: Option<f64>,
    /// Connection stages: the connections the stage ends at; null for rate stages.
    #[serde(default)]
    pub target_connections: Option<u64>,
    /// Rate stages: the requests the stage's curve asks for over it, per second of it.
    pub asked_per_s: Option<f64>,
    /// The requests sent in it (by intended send time), per second of it.
    pub achieved_per_s: f64,
    pub sent: u64,
    pub ok: u64,
    pub errors: u64,
    /// Connections open at the stage's end, and the most open at once in it (over
    /// several workers or shards: the sum of each one's).
    #[serde(default)]
    pub connections_at_end: u64,
    #[serde(default)]
    pub connections_peak: u64,
    #[serde(with = "super::latency::null_when_empty")]
    pub latency_us: LatencySummary,
    pub histogram: HistogramBlob,
    /// Connections established and attempts failed, each in the stage its attempt
    /// started in (measured phase).
    #[serde(default)]
    pub connections: u64,
    #[serde(default)]
    pub connect_errors: u64,
    /// connect's churn stages: their connect latency (attempt to established), and its
    /// exact histogram; absent elsewhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connect: Option<StageConnects>,
}

/// A stage's connect latency (connect's churn stages).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct StageConnects {
    #[serde(with = "super::latency::null_when_empty")]
    pub latency_us: LatencySummary,
    pub histogram: HistogramBlob,
}

impl StageConnects {
    pub fn of(l: &Latency) -> StageConnects {
        StageConnects {
            latency_us: l.summary(),
            histogram: HistogramBlob::of(l),
        }
    }
}

impl StageFigures {
    /// A stage of `seconds` to `target_per_s`, asking `asked` requests in all.
    pub fn new(seconds: f64, target_per_s: f64, asked: f64, c: &StageCount) -> StageFigures {
        StageFigures {
            target_per_s: Some(target_per_s),
            asked_per_s: Some(asked / seconds),
            ..StageFigures::counted(seconds, c)
        }
    }

    /// A connection stage of `seconds` to `target` connections.
    pub fn of_connections(seconds: f64, target: u64, c: &StageCount) -> StageFigures {
        StageFigures {
            target_connections: Some(target),
            ..StageFigures::counted(seconds, c)
        }
    }

    /// What every stage has: its counts, latency and connections.
    fn counted(seconds: f64, c: &StageCount) -> StageFigures {
        StageFigures {
            seconds,
            target_per_s: None,
            target_connections: None,
            asked_per_s: None,
            achieved_per_s: c.sent as f64 / seconds,
            sent: c.sent,
            ok: c.ok,
            errors: c.errors,
            connections_at_end: c.open_end,
            connections_peak: c.open_peak,
            latency_us: c.latency.summary(),
            histogram: HistogramBlob::of(&c.latency),
            connections: c.connections,
            connect_errors: c.connect_errors,
            connect: c.connect_latency.as_ref().map(StageConnects::of),
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
        let same = p.len() == first.len()
            && p.iter().zip(first).all(|(a, b)| {
                a.seconds == b.seconds
                    && a.target_connections.is_some() == b.target_connections.is_some()
            });
        if !same {
            return Err(format!(
                "part {} ran other stages (their number, lengths or kind differ from part 1's)",
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
        let connect = match of().all(|s| s.connect.is_some()) {
            true => {
                let what = format!("stages[{k}].connect.histogram");
                let blobs = of().filter_map(|s| s.connect.as_ref().map(|c| &c.histogram));
                let l = super::merge::histograms::add_blobs(&what, blobs)?;
                Some(StageConnects::of(&l))
            }
            false => None,
        };
        let rate = |g: fn(&StageFigures) -> f64| {
            let sum: f64 = of().map(g).sum();
            if side_by_side {
                sum
            } else {
                sum / n
            }
        };
        let count = |g: fn(&StageFigures) -> u64| {
            let sum: u64 = of().map(g).sum();
            match side_by_side {
                true => sum,
                false => (sum as f64 / n).round() as u64,
            }
        };
        merged.push(StageFigures {
            seconds: f.seconds,
            target_per_s: f
                .target_per_s
                .map(|_| rate(|s| s.target_per_s.unwrap_or(0.0))),
            target_connections: f
                .target_connections
                .map(|_| count(|s| s.target_connections.unwrap_or(0))),
            asked_per_s: f
                .asked_per_s
                .map(|_| rate(|s| s.asked_per_s.unwrap_or(0.0))),
            achieved_per_s: rate(|s| s.achieved_per_s),
            sent: of().map(|s| s.sent).sum(),
            ok: of().map(|s| s.ok).sum(),
            errors: of().map(|s| s.errors).sum(),
            connections_at_end: count(|s| s.connections_at_end),
            connections_peak: count(|s| s.connections_peak),
            latency_us: latency.summary(),
            histogram: HistogramBlob::of(&latency),
            connections: of().map(|s| s.connections).sum(),
            connect_errors: of().map(|s| s.connect_errors).sum(),
            connect,
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
        assert_eq!(m[1].asked_per_s, Some(20.0));
        let rounds = merge(&[Some(&a), Some(&b)], false).unwrap().unwrap();
        assert_eq!(
            (rounds[1].achieved_per_s, rounds[1].asked_per_s),
            (2.0, Some(10.0))
        );
        assert_eq!(m[0].sent + m[2].sent, 0);
    }

    #[test]
    fn the_open_connections_end_each_stage_and_peak_in_it() {
        let mut t = tally();
        // Stage 0 (to 1,000): up to 3, then 2 at its end; stage 1 (to 3,000): no
        // change, so 2 throughout; stage 2 (to 4,000): 5 at most, 4 at its end; the
        // closing after the last end counts in none.
        for (at, open) in [(10, 1), (20, 2), (30, 3), (900, 2), (3_100, 5), (3_500, 4)] {
            t.open(at, open);
        }
        t.open(4_000, 0);
        t.finish_open();
        let ends: Vec<u64> = t.per.iter().map(|s| s.open_end).collect();
        let peaks: Vec<u64> = t.per.iter().map(|s| s.open_peak).collect();
        assert_eq!((ends, peaks), (vec![2, 2, 4], vec![3, 2, 5]));
        let mut other = tally();
        other.open(5, 7);
        other.finish_open();
        t.add(&other);
        assert_eq!((t.per[1].open_end, t.per[2].open_peak), (9, 12));
    }

    #[test]
    fn a_connection_a_stage_asked_for_counts_at_its_end_however_late_it_came() {
        // Stages to 2, 2 and 0 connections (ends 1,000, 3,000, 4,000): the second
        // connection comes up at 1,200, after the first stage's end; the first stage
        // still ends on 2 (it asked for it), and its peak is 2. A loss and its
        // reconnection in the second stage leave it on 2. The last leave lands after
        // the run's end: the last stage still ends on 0.
        let mut t = tally();
        t.aim_at(vec![2, 2, 0]);
        for (at, open) in [(100, 1), (1_200, 2), (2_000, 1), (2_100, 2), (3_500, 1)] {
            t.open(at, open);
        }
        t.open(4_100, 0);
        t.finish_open();
        let ends: Vec<u64> = t.per.iter().map(|s| s.open_end).collect();
        let peaks: Vec<u64> = t.per.iter().map(|s| s.open_peak).collect();
        assert_eq!((ends, peaks), (vec![2, 2, 0], vec![2, 2, 2]));
        // Without targets (rate stages) the same changes count where they came.
        let mut r = tally();
        for (at, open) in [(100, 1), (1_200, 2), (3_500, 1)] {
            r.open(at, open);
        }
        r.open(4_100, 0);
        r.finish_open();
        let ends: Vec<u64> = r.per.iter().map(|s| s.open_end).collect();
        assert_eq!(ends, [1, 2, 1]);
    }

    #[test]
    fn connection_stages_merge_their_connections() {
        let c = |end: u64, peak: u64| StageCount {
            open_end: end,
            open_peak: peak,
            ..StageCount::default()
        };
        let a = vec![StageFigures::of_connections(1.0, 4, &c(4, 4))];
        let b = vec![StageFigures::of_connections(1.0, 6, &c(5, 6))];
        let m = merge(&[Some(&a), Some(&b)], true).unwrap().unwrap();
        assert_eq!(
            (
                m[0].target_connections,
                m[0].connections_at_end,
                m[0].connections_peak
            ),
            (Some(10), 9, 10)
        );
        assert_eq!((m[0].target_per_s, m[0].asked_per_s), (None, None));
        let r = merge(&[Some(&a), Some(&b)], false).unwrap().unwrap();
        assert_eq!(
            (r[0].target_connections, r[0].connections_peak),
            (Some(5), 5)
        );
        // A rate stage and a connection stage of the same length are other stages.
        let rate = vec![StageFigures::new(1.0, 10.0, 10.0, &c(0, 0))];
        let e = merge(&[Some(&a), Some(&rate)], true).unwrap_err();
        assert!(e.contains("kind differ"), "{e}");
    }

    #[test]
    fn connections_and_failed_attempts_count_in_their_attempts_stage_and_merge() {
        let mut t = tally();
        t.time_connects();
        // Attempts started at 500 (stage 0) and 2,500 (stage 1); one late to come up.
        t.connected(500);
        t.connect_took(500, 40);
        t.connect_error(2_500);
        t.connect_error(9_000);
        t.connected(2_999);
        t.connect_took(2_999, 70);
        let per: Vec<(u64, u64)> = t
            .per
            .iter()
            .map(|s| (s.connections, s.connect_errors))
            .collect();
        assert_eq!(per, [(1, 0), (1, 1), (0, 1)]);
        let f: Vec<StageFigures> = t
            .per
            .iter()
            .map(|c| StageFigures::new(1.0, 1.0, 1.0, c))
            .collect();
        assert_eq!(f[1].connect.as_ref().unwrap().latency_us.count, 1);
        let m = merge(&[Some(&f), Some(&f)], true).unwrap().unwrap();
        let merged: Vec<(u64, u64, u64)> = m
            .iter()
            .map(|s| {
                let timed = s.connect.as_ref().map_or(0, |c| c.latency_us.count);
                (s.connections, s.connect_errors, timed)
            })
            .collect();
        assert_eq!(merged, [(2, 0, 2), (2, 2, 2), (0, 2, 0)]);
        // A stage list without connect latency (a load's) merges to none.
        let plain: Vec<StageFigures> = tally()
            .per
            .iter()
            .map(|c| StageFigures::new(1.0, 1.0, 1.0, c))
            .collect();
        let m = merge(&[Some(&plain), Some(&plain)], true).unwrap().unwrap();
        assert!(m.iter().all(|s| s.connect.is_none()));
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
