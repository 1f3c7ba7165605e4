//! A capacity search's figures (`--search`, docs/search.md): every open-loop step it
//! ran, the highest rate that met every condition, the first that failed, and how
//! settled that boundary is. The search itself is `commands/search.rs`.

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct SearchFigures {
    /// The conditions each step was held to, as written (threshold grammar).
    pub conditions: Vec<String>,
    /// `-R`: the highest rate tried.
    pub upper_per_s: f64,
    /// Each step's measured time and the warm-up before it, seconds.
    pub step_s: f64,
    pub warmup_s: f64,
    /// The highest rate whose step met every condition (null: none did).
    pub highest_pass_per_s: Option<f64>,
    /// The lowest rate whose step failed (null: -R itself passed).
    pub first_fail_per_s: Option<f64>,
    /// Every step, in the order run.
    pub steps: Vec<SearchStep>,
    pub confidence: Confidence,
}

/// One open-loop step: the curve's point at its rate.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct SearchStep {
    pub asked_per_s: f64,
    /// Requests sent per second of the step (null when nothing was measured).
    pub achieved_per_s: Option<f64>,
    /// Latency percentiles, microseconds (null when nothing was timed).
    pub p50_us: Option<f64>,
    pub p99_us: Option<f64>,
    pub sent: u64,
    pub errors: u64,
    pub pass: bool,
    /// Run again at a rate already tried, to check the boundary.
    pub rerun: bool,
    /// Why it failed: the conditions it missed, a rate not kept, errors.
    pub why: Option<String>,
}

/// How settled the boundary is: each end re-run once; a step that disagrees with its
/// rerun counts as failing.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct Confidence {
    /// Both ends of the boundary were re-run, and every rerun agreed with its first step.
    pub settled: bool,
    /// first_fail - highest_pass, requests per second (null without both).
    pub resolution_per_s: Option<f64>,
    pub reruns: Vec<Rerun>,
}

impl Confidence {
    /// Settled: both ends (those there are) were run again, and every rerun agreed with
    /// its first run. A search its step cap stopped before it re-ran an end is not.
    pub fn settled(pass: Option<f64>, fail: Option<f64>, reruns: &[Rerun]) -> bool {
        [pass, fail]
            .into_iter()
            .flatten()
            .all(|end| reruns.iter().any(|r| r.rate_per_s == end))
            && reruns.iter().all(|r| r.first == r.again)
    }
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Rerun {
    pub rate_per_s: f64,
    pub first: bool,
    pub again: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rerun(rate_per_s: f64, first: bool, again: bool) -> Rerun {
        Rerun {
            rate_per_s,
            first,
            again,
        }
    }

    #[test]
    fn settled_needs_both_ends_re_run_and_every_rerun_agreeing() {
        let both = [rerun(1000.0, true, true), rerun(1020.0, false, false)];
        assert!(Confidence::settled(Some(1000.0), Some(1020.0), &both));
        // Stopped by the step cap before the highest pass was run again.
        let one = [rerun(1020.0, false, false)];
        assert!(!Confidence::settled(Some(1000.0), Some(1020.0), &one));
        assert!(!Confidence::settled(Some(1000.0), Some(1020.0), &[]));
        let disagreed = [rerun(1000.0, true, false), rerun(990.0, true, true)];
        assert!(!Confidence::settled(Some(990.0), Some(1000.0), &disagreed));
        // Nothing passed: the one end there is.
        assert!(Confidence::settled(
            None,
            Some(4.0),
            &[rerun(4.0, false, false)]
        ));
    }
}
