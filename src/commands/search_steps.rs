//! Which rate a capacity search (`--search`) tries next: bisection between the highest
//! rate that passed and the lowest that failed, starting at -R. Once the bracket is
//! within `RESOLUTION` of its top, each end is re-run once; a step that disagrees with
//! its rerun counts as failing (and the bisection resumes below it).
//!
//! Why bisection: a server's latency and errors grow with the offered rate, so "meets
//! every condition" is (up to noise) true below some rate and false above it; bisection
//! finds that edge in about log2(1 / RESOLUTION) steps whatever the curve's shape, with
//! no model of the server to fit. A shortcut through an overloaded step's achieved rate
//! was measured and dropped: what an overloaded open loop sends in its measured phase
//! trails the server's capacity (the warm-up's backlog goes first), so each such guess
//! passed low and the search zigzagged (15 steps against `serve echo --delay 10ms`
//! where bisection takes about 11).

/// The bracket is settled when its width is at most this share of its top.
pub const RESOLUTION: f64 = 0.02;
/// Below this share of -R with nothing passing, the search gives up.
const LOWEST: f64 = 0.001;
/// At most this many steps, reruns included.
pub const MAX_STEPS: usize = 32;

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Next {
    /// A new rate.
    Step(f64),
    /// A rate already tried, again.
    Rerun(f64),
    Done,
}

#[derive(Clone, Copy, Debug)]
struct Tried {
    rate: f64,
    pass: bool,
    rerun: bool,
}

#[derive(Debug)]
pub struct Search {
    top: f64,
    tried: Vec<Tried>,
    /// The highest rate that passed (below `fail`) and has not failed a rerun.
    pass: Option<f64>,
    /// The lowest rate that failed, or failed its rerun.
    fail: Option<f64>,
}

impl Search {
    pub fn new(top: f64) -> Search {
        Search {
            top,
            tried: Vec::new(),
            pass: None,
            fail: None,
        }
    }

    pub fn highest_pass(&self) -> Option<f64> {
        self.pass
    }

    pub fn first_fail(&self) -> Option<f64> {
        self.fail
    }

    pub fn next(&self) -> Next {
        if self.tried.len() >= MAX_STEPS {
            return Next::Done;
        }
        if let Some(r) = self.bisect() {
            return Next::Step(r);
        }
        for end in [self.pass, self.fail].into_iter().flatten() {
            if !self.tried.iter().any(|t| t.rate == end && t.rerun) {
                return Next::Rerun(end);
            }
        }
        Next::Done
    }

    /// The step at `rate` passed or not (`rerun`: a rate tried before, again).
    pub fn record(&mut self, rate: f64, pass: bool, rerun: bool) {
        self.tried.push(Tried { rate, pass, rerun });
        if rerun {
            let first = self.tried.iter().find(|t| t.rate == rate && !t.rerun);
            if first.is_some_and(|t| t.pass) && !pass {
                // It disagrees with itself: it counts as failing.
                self.fail = Some(self.fail.map_or(rate, |f| f.min(rate)));
                self.pass = self.highest_pass_below(rate);
            }
            return;
        }
        if pass {
            if self.fail.map_or(true, |f| rate < f) {
                self.pass = Some(self.pass.map_or(rate, |p| p.max(rate)));
            }
        } else {
            self.fail = Some(self.fail.map_or(rate, |f| f.min(rate)));
            if self.pass.is_some_and(|p| p >= rate) {
                self.pass = self.highest_pass_below(rate);
            }
        }
    }

    /// The next rate inside the bracket, or None when it is settled.
    fn bisect(&self) -> Option<f64> {
        let Some(hi) = self.fail else {
            return self.tried.is_empty().then_some(self.top);
        };
        let lo = self.pass.unwrap_or(0.0);
        if hi - lo <= RESOLUTION * hi || (self.pass.is_none() && hi <= self.top * LOWEST) {
            return None;
        }
        let mid = (lo + hi) / 2.0;
        Some(if self.top >= 100.0 { mid.round() } else { mid })
    }

    /// The highest rate below `rate` that passed and never failed a rerun.
    fn highest_pass_below(&self, rate: f64) -> Option<f64> {
        let failed = |r: f64| self.tried.iter().any(|t| t.rate == r && !t.pass);
        self.tried
            .iter()
            .filter(|t| t.pass && t.rate < rate && !failed(t.rate))
            .map(|t| t.rate)
            .fold(None, |m, r| Some(m.map_or(r, |m: f64| m.max(r))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs a search to its end against a server that passes below `edge` (`flaky`: a
    /// rate that fails when re-run), returning the rates tried.
    fn against(top: f64, edge: f64, flaky: Option<f64>) -> (Search, Vec<Next>) {
        let mut s = Search::new(top);
        let mut seen = Vec::new();
        loop {
            let next = s.next();
            seen.push(next);
            let (rate, rerun) = match next {
                Next::Step(r) => (r, false),
                Next::Rerun(r) => (r, true),
                Next::Done => return (s, seen),
            };
            let pass = rate < edge && !(rerun && flaky == Some(rate));
            s.record(rate, pass, rerun);
        }
    }

    #[test]
    fn it_brackets_the_edge_within_the_resolution_and_reruns_both_ends() {
        let (s, seen) = against(4000.0, 1020.0, None);
        let (lo, hi) = (s.highest_pass().unwrap(), s.first_fail().unwrap());
        assert!(
            lo < 1020.0 && hi >= 1020.0 && hi - lo <= RESOLUTION * hi,
            "{lo} {hi}"
        );
        assert_eq!(
            seen[..4],
            [
                Next::Step(4000.0),
                Next::Step(2000.0),
                Next::Step(1000.0),
                Next::Step(1500.0)
            ]
        );
        let n = seen.len();
        assert_eq!(
            seen[n - 3..],
            [Next::Rerun(lo), Next::Rerun(hi), Next::Done]
        );
        assert!(n <= 12, "{seen:?}");
    }

    #[test]
    fn a_top_that_passes_ends_the_search_after_its_rerun() {
        let (s, seen) = against(500.0, 1000.0, None);
        assert_eq!(seen, [Next::Step(500.0), Next::Rerun(500.0), Next::Done]);
        assert_eq!((s.highest_pass(), s.first_fail()), (Some(500.0), None));
    }

    #[test]
    fn a_pass_that_fails_its_rerun_counts_as_failing() {
        // 954 (the bracket's top pass) passes first, then fails when run again: the
        // bracket moves under it and its new top pass is re-run in turn.
        let (s, seen) = against(1000.0, 960.0, Some(954.0));
        assert_eq!(
            seen[6..],
            [
                Next::Step(954.0),
                Next::Rerun(954.0),
                Next::Rerun(938.0),
                Next::Done
            ]
        );
        assert_eq!(
            (s.highest_pass(), s.first_fail()),
            (Some(938.0), Some(954.0))
        );
    }

    #[test]
    fn nothing_passing_ends_near_zero() {
        let (s, seen) = against(1000.0, 0.0, None);
        assert_eq!(s.highest_pass(), None);
        assert!(s.first_fail().unwrap() <= 1.0, "{seen:?}");
        assert!(seen.len() <= MAX_STEPS + 1);
    }
}
