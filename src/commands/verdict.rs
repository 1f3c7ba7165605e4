//! A load's thresholds (`--threshold`, docs/thresholds.md): read and checked against
//! what its protocol measures before anything runs (exit 2), held to its result after,
//! and the exit they decide with the run's own outcome.

use crate::error::{Error, Result};
use crate::flags::VerdictArgs;
use crate::proto::plugin::{ConfigOf, Protocol};
use crate::report::thresholds::failed;
use crate::stats::threshold::{self, Scope, Threshold, Verdict};
use crate::stats::RunResult;

/// What a run of `cfg` can be held to: its protocol's unit and blocks, open loop or
/// not, and whether it measures its server's CPU (the built-in server's).
fn scope_of<'a, P: Protocol>(cfg: &ConfigOf<P>, unit: &'a crate::stats::Unit) -> Scope<'a> {
    Scope {
        kind: P::NAME,
        unit,
        open_loop: cfg.base.load.shape.rate.is_some(),
        server_cpu: cfg.base.target.is_none(),
        blocks: P::result_blocks_schema(),
    }
}

/// `--threshold`s of a load, each read and checked: the first that does not parse or
/// that this run cannot measure is bad input, one sentence.
pub fn thresholds<P: Protocol>(cfg: &ConfigOf<P>, a: &VerdictArgs) -> Result<Vec<Threshold>> {
    if a.step_duration.is_some() {
        return Err(Error::usage(
            "--step-duration applies only to --search (the length of each step)",
        ));
    }
    conditions::<P>(cfg, &a.threshold)
}

/// `texts` read as thresholds of a run of `cfg`.
pub fn conditions<P: Protocol>(cfg: &ConfigOf<P>, texts: &[String]) -> Result<Vec<Threshold>> {
    let unit = P::unit(cfg);
    threshold::parse_all(texts, &scope_of::<P>(cfg, &unit)).map_err(Error::usage)
}

/// `ts` held to a result of protocol `P`.
pub fn evaluate<P: Protocol>(ts: &[Threshold], r: &RunResult) -> Vec<Verdict> {
    threshold::evaluate(ts, r, P::result_blocks_schema())
}

/// The exit of a run that ended with `outcome` and was held to `vs`: a failed
/// threshold is exit 3 even when the run also fell short (exit 1): the thresholds are
/// the verdict the user asked for, as a failed threshold is k6's exit 99 whatever else
/// went wrong in the run; the shortfall is said in the same sentence and stays in the
/// result's `outcome`.
pub fn exit(outcome: Result<()>, vs: &[Verdict]) -> Result<()> {
    match (failed(vs), outcome) {
        (None, outcome) => outcome,
        (Some(why), Ok(())) => Err(Error::Threshold(why)),
        (Some(why), Err(Error::ShortFall(short))) => {
            Err(Error::Threshold(format!("{why}; {short}")))
        }
        (Some(_), Err(other)) => Err(other),
    }
}
