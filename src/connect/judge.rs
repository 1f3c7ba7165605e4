//! Whether a `connect` run did all it was asked: every connection established and
//! kept (hold) or every cycle done (churn), no failure, every echo frame answered, and
//! the server's accepts equal to the client's connections. Each reason names its
//! counts by the words of the JSON result.

use super::messages::by_kind;
use super::plan::{ConnectConfig, Mode};
use super::report::{Outcome, Run};
use crate::report::format::group;

/// Judges a finished run: None when it did all it was asked.
pub fn judge(cfg: &ConnectConfig, r: &Run) -> Outcome {
    // The plan's cycles are the measured ones (a churn ramp left out runs before
    // them); failures and lost frames count wherever they happened, ramp included.
    let measured = &r.counts;
    let c = &r.whole();
    let mut why = Vec::new();
    if r.interrupted {
        why.push("interrupted by a signal before the plan was done".to_string());
    }
    if r.workers_failed > 0 {
        why.push(format!("{} worker processes failed", r.workers_failed));
    }
    match &cfg.mode {
        Mode::Hold { .. } => {
            if c.established < cfg.total {
                why.push(format!(
                    "{} of {} connections established",
                    group(c.established),
                    group(cfg.total)
                ));
            }
            if c.lost_total() > 0 {
                why.push(format!(
                    "{} held connections were lost ({})",
                    group(c.lost_total()),
                    by_kind(&c.lost)
                ));
            }
        }
        Mode::Churn { duration } => {
            let after_ramp = if r.ramp.is_some() {
                " after the ramp"
            } else {
                ""
            };
            if duration.is_none() && measured.cycles_ok < cfg.total {
                why.push(format!(
                    "{} of {} cycles completed{after_ramp}",
                    group(measured.cycles_ok),
                    group(cfg.total)
                ));
            }
            if measured.cycles_ok == 0 {
                why.push(format!("no cycle completed{after_ramp}"));
            }
            // Stages: the cycles they asked, as the loads' open loop is held to its
            // rate (`stats::rate::ACHIEVED_AT_LEAST`).
            let asked = stages_asked(&cfg.stages);
            if (measured.attempts as f64) < asked * crate::stats::rate::ACHIEVED_AT_LEAST {
                why.push(format!(
                    "the stages asked {} cycles and {} started",
                    group(asked.round() as u64),
                    group(measured.attempts)
                ));
            }
        }
    }
    if c.failed() > 0 {
        why.push(format!(
            "{} connection attempts failed ({})",
            group(c.failed()),
            by_kind(&c.failures)
        ));
    }
    if c.echo_errors() > 0 {
        why.push(format!(
            "{} echo frames failed ({})",
            group(c.echo_errors()),
            by_kind(&c.errors)
        ));
    }
    if c.in_flight > 0 {
        why.push(format!(
            "{} echo frames got no reply (in flight)",
            group(c.in_flight)
        ));
    }
    if let Some(t) = &r.server {
        if t.accepts != c.established {
            why.push(format!(
                "the server accepted {} connections, the client established {}",
                group(t.accepts),
                group(c.established)
            ));
        }
    }
    Outcome {
        reason: (!why.is_empty()).then(|| why.join("; ")),
    }
}

/// The cycles churn stages ask over the run (their curve's integral); 0 without.
fn stages_asked(stages: &crate::engine::Stages) -> f64 {
    let curve = crate::engine::stages::Curve::new(stages.list());
    match stages.is_empty() {
        true => 0.0,
        false => curve.asked_by(stages.total().as_nanos() as f64),
    }
}
