//! Rate stages (`--stages 30s:1000,60s:5000`, and `-R R --ramp T`, which is the stage
//! `T:R` held at R): the open loop's rate as one function of time for the whole run,
//! linear within each stage from the previous stage's target (0 before the first) to
//! its own, held at the last target after the last stage. Requests are numbered over
//! the run (`m`); the engine shares them out over connections exactly (connection `g`
//! of `total` sends `g, g + total, g + 2 total, ...`), so when a connection opens
//! changes nothing in the count sent by any time.

use std::time::Duration;

/// One stage: over `over`, the rate goes linearly to `target` requests per second.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Stage {
    pub over: Duration,
    pub target: f64,
}

/// The most stages a run takes: the list is kept inline, so the load's shape stays a
/// plain value every part copies.
pub const MAX_STAGES: usize = 32;

/// A run's stages, up to `MAX_STAGES`; empty: no stages. Rate stages (targets in
/// requests per second, open loop) unless made by `of_connections` (targets in open
/// connections, each running closed loop: `engine::vus`).
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct Stages {
    len: usize,
    list: [Stage; MAX_STAGES],
    connections: bool,
}

impl Default for Stage {
    fn default() -> Stage {
        Stage {
            over: Duration::ZERO,
            target: 0.0,
        }
    }
}

impl Stages {
    /// At most `MAX_STAGES` (`parse` refuses more).
    pub fn new(stages: &[Stage]) -> Stages {
        let mut s = Stages::default();
        for (slot, stage) in s.list.iter_mut().zip(stages) {
            *slot = *stage;
        }
        s.len = stages.len().min(MAX_STAGES);
        s
    }

    /// Connection stages (`--stages 10s:50c`): each target a number of connections.
    pub fn of_connections(stages: &[Stage]) -> Stages {
        Stages {
            connections: true,
            ..Stages::new(stages)
        }
    }

    /// Whether the targets are connections (`of_connections`), not rates.
    pub fn is_connections(&self) -> bool {
        self.connections && !self.is_empty()
    }

    pub fn list(&self) -> &[Stage] {
        &self.list[..self.len]
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The stages' whole length.
    pub fn total(&self) -> Duration {
        self.list().iter().map(|s| s.over).sum()
    }

    /// Each stage's end, ns from the run's start.
    pub fn ends_ns(&self) -> Vec<u64> {
        let mut end = Duration::ZERO;
        self.list()
            .iter()
            .map(|s| {
                end += s.over;
                end.as_nanos() as u64
            })
            .collect()
    }

    /// The highest target.
    pub fn peak(&self) -> f64 {
        self.list().iter().map(|s| s.target).fold(0.0, f64::max)
    }

    /// Every target made `f(target)` (a shard's part of connection targets).
    pub fn with_targets(&self, f: impl Fn(f64) -> f64) -> Stages {
        let mut s = *self;
        for stage in &mut s.list[..s.len] {
            stage.target = f(stage.target);
        }
        s
    }

    /// Every target times `share` (a shard's part of the rate).
    pub fn scaled(&self, share: f64) -> Stages {
        let mut s = *self;
        for stage in &mut s.list[..s.len] {
            stage.target *= share;
        }
        s
    }
}

/// The requests asked by time t, `N(t)`, and its inverse: piecewise quadratic, one
/// piece per stage and one for the hold after the last.
#[derive(Clone, Debug, PartialEq)]
pub struct Curve {
    pieces: Vec<Piece>,
}

/// From `t0` (ns), `n0` requests asked so far, the rate `r0` (per ns) changing by
/// `slope` per ns, until `n_end` requests (infinite for the hold).
#[derive(Clone, Copy, Debug, PartialEq)]
struct Piece {
    t0: f64,
    n0: f64,
    r0: f64,
    slope: f64,
    n_end: f64,
}

impl Curve {
    pub fn new(stages: &[Stage]) -> Curve {
        let (mut t0, mut n0, mut r0) = (0.0, 0.0, 0.0);
        let mut pieces = Vec::with_capacity(stages.len() + 1);
        for s in stages {
            let len = s.over.as_nanos() as f64;
            let r1 = s.target / 1e9;
            let n_end = n0 + (r0 + r1) / 2.0 * len;
            let slope = if len > 0.0 { (r1 - r0) / len } else { 0.0 };
            pieces.push(Piece {
                t0,
                n0,
                r0,
                slope,
                n_end,
            });
            (t0, n0, r0) = (t0 + len, n_end, r1);
        }
        pieces.push(Piece {
            t0,
            n0,
            r0,
            slope: 0.0,
            n_end: f64::INFINITY,
        });
        Curve { pieces }
    }

    /// When request `m` (counted from 0 over the run) is due, ns from the run's start:
    /// the time by which `N(t)` reaches `m`; u64::MAX when it never does (a rate held
    /// at 0).
    #[inline]
    pub fn time_of(&self, m: f64) -> f64 {
        let Some(p) = self.pieces.iter().find(|p| m < p.n_end) else {
            return f64::INFINITY;
        };
        // Solves n0 + r0 tau + slope tau^2 / 2 = m for the smallest tau >= 0, in the
        // form that stays exact as slope goes to 0 and for a falling rate.
        let dn = m - p.n0;
        if dn <= 0.0 {
            return p.t0;
        }
        let root = (p.r0 * p.r0 + 2.0 * p.slope * dn).max(0.0).sqrt();
        let denom = p.r0 + root;
        if denom <= 0.0 {
            return f64::INFINITY;
        }
        p.t0 + 2.0 * dn / denom
    }

    /// `N(t)`: the requests asked by `t` (ns from the run's start).
    pub fn asked_by(&self, t: f64) -> f64 {
        let p = self
            .pieces
            .iter()
            .rev()
            .find(|p| p.t0 <= t)
            .unwrap_or(&self.pieces[0]);
        let tau = (t - p.t0).max(0.0);
        p.n0 + p.r0 * tau + p.slope * tau * tau / 2.0
    }
}

/// The stages `--stages` reads: `DURATION:TARGET` separated by commas (`30s:1000,
/// 60s:1000,10s:0`). Every stage lasts longer than zero; a target is a rate in requests
/// per second (0 or more); at least one target is above 0. A list of connection
/// targets (`10s:50c`) is refused here: `parse_any` reads both.
pub fn parse(flag: &str, text: &str) -> Result<Vec<Stage>, String> {
    let stages = parse_any(flag, text)?;
    if stages.is_connections() {
        return Err(format!(
            "{flag}: connection stages (a target like 50c) do not apply here: give rates (e.g. 30s:1000)"
        ));
    }
    Ok(stages.list().to_vec())
}

/// `--stages` as a load reads it: rate stages (`30s:1000`) or connection stages
/// (`30s:50c`, a whole number of open connections), never both in one list.
pub fn parse_any(flag: &str, text: &str) -> Result<Stages, String> {
    let mut stages = Vec::new();
    let mut kinds = [None::<usize>; 2];
    for (i, item) in text.split(',').enumerate() {
        let n = i + 1;
        let (d, t) = item.trim().split_once(':').ok_or_else(|| {
            format!(
                "{flag}: stage {n} ({item:?}) is not DURATION:TARGET (e.g. 30s:1000 or 30s:50c)"
            )
        })?;
        let over = crate::units::parse_duration(d.trim())
            .map_err(|e| format!("{flag}: stage {n}: {e}"))?;
        if over.is_zero() {
            return Err(format!(
                "{flag}: stage {n} lasts no time: every stage must be longer than zero"
            ));
        }
        let (target, conns) = parse_target(flag, n, t.trim())?;
        kinds[conns as usize].get_or_insert(n);
        if let [Some(rate), Some(conn)] = kinds {
            return Err(format!(
                "{flag}: stage {rate} is a rate and stage {conn} a number of connections: a list is all rates (30s:1000) or all connections (30s:50c)"
            ));
        }
        stages.push(Stage { over, target });
    }
    if stages.len() > MAX_STAGES {
        return Err(format!(
            "{flag}: {} stages, at most {MAX_STAGES}",
            stages.len()
        ));
    }
    if stages.iter().all(|s| s.target == 0.0) {
        return Err(format!(
            "{flag}: every stage's target is 0: nothing would be sent"
        ));
    }
    Ok(match kinds[1] {
        Some(_) => Stages::of_connections(&stages),
        None => Stages::new(&stages),
    })
}

/// One target: a rate (`1000`) or, with a `c`, a whole number of connections (`50c`);
/// returns it and whether it is connections.
fn parse_target(flag: &str, n: usize, t: &str) -> Result<(f64, bool), String> {
    if let Some(c) = t.strip_suffix('c') {
        let count: u32 = c.trim().parse().map_err(|_| {
            format!("{flag}: stage {n}: the target {t:?} is not a whole number of connections (e.g. 50c)")
        })?;
        return Ok((count as f64, true));
    }
    let target: f64 = t.parse().map_err(|_| {
        format!("{flag}: stage {n}: the target {t:?} is not a number of requests per second (or of connections, as 50c)")
    })?;
    if !target.is_finite() || target < 0.0 {
        return Err(format!(
            "{flag}: stage {n}: the target must be 0 or more requests per second, not {t}"
        ));
    }
    Ok((target, false))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stage(secs: u64, target: f64) -> Stage {
        Stage {
            over: Duration::from_secs(secs),
            target,
        }
    }

    /// Requests due before `t` seconds, counting `time_of` over the run.
    fn due_before(c: &Curve, t: f64) -> usize {
        (0..1_000_000)
            .take_while(|m| c.time_of(*m as f64) < t * 1e9)
            .count()
    }

    #[test]
    fn each_stage_asks_its_integral() {
        // 0 -> 1000 over 2 s (1000), held 2 s (2000), 1000 -> 5000 over 1 s (3000),
        // 5000 -> 0 over 1 s (2500).
        let c = Curve::new(&[
            stage(2, 1000.0),
            stage(2, 1000.0),
            stage(1, 5000.0),
            stage(1, 0.0),
        ]);
        assert_eq!(c.time_of(0.0), 0.0);
        assert_eq!(due_before(&c, 2.0), 1000);
        assert_eq!(due_before(&c, 1.0), 250);
        assert_eq!(due_before(&c, 4.0), 3000);
        assert_eq!(due_before(&c, 5.0), 6000);
        assert_eq!(due_before(&c, 6.0), 8500);
        // Nothing more once the rate is held at 0.
        assert_eq!(c.time_of(8501.0), f64::INFINITY);
        assert_eq!(
            c.asked_by(4.5e9),
            3000.0 + 1000.0 * 0.5 + 4000.0 * 0.25 / 2.0
        );
    }

    #[test]
    fn the_times_never_go_back() {
        let c = Curve::new(&[stage(1, 300.0), stage(1, 10.0), stage(1, 700.0)]);
        let n = c.asked_by(3e9) as usize;
        assert!((1..n).all(|m| c.time_of(m as f64) >= c.time_of(m as f64 - 1.0)));
    }

    #[test]
    fn bad_lists_are_refused_in_one_sentence() {
        let p = |t: &str| parse("--stages", t);
        assert_eq!(p("1s:10, 2s:0").unwrap(), [stage(1, 10.0), stage(2, 0.0)]);
        for (bad, says) in [
            ("1s", "is not DURATION:TARGET"),
            ("0s:10", "lasts no time"),
            ("1s:-5", "0 or more"),
            ("1s:fast", "is not a number"),
            ("1s:0,2s:0", "every stage's target is 0"),
            ("soon:10", "stage 1"),
            (
                "1s:5c",
                "connection stages (a target like 50c) do not apply here",
            ),
        ] {
            let e = p(bad).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn a_list_is_all_rates_or_all_connections() {
        let any = |t: &str| parse_any("--stages", t);
        let c = any("1s:5c, 2s:0c").unwrap();
        assert!(c.is_connections());
        assert_eq!(c.list(), [stage(1, 5.0), stage(2, 0.0)]);
        assert!(!any("1s:5,2s:0").unwrap().is_connections());
        for (bad, says) in [
            (
                "1s:5c,2s:10",
                "stage 2 is a rate and stage 1 a number of connections",
            ),
            (
                "1s:10,2s:5c",
                "stage 1 is a rate and stage 2 a number of connections",
            ),
            ("1s:2.5c", "not a whole number of connections"),
            ("1s:-1c", "not a whole number of connections"),
            ("1s:0c,1s:0c", "every stage's target is 0"),
        ] {
            let e = any(bad).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }
}
