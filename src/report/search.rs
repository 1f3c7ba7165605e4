//! A capacity search in text: one line per step as it ends, and the curve (rate vs
//! p50, p99 and errors, by rate) with the boundary and how settled it is.

use super::format::{micros, rate};
use crate::stats::search::{SearchFigures, SearchStep};
use crate::stats::Unit;
use std::fmt::Write as _;

/// "step 3: 1,000 requests/s  sent 1,000/s  p50 10.1ms ... pass".
pub fn step_line(n: usize, s: &SearchStep, unit: &Unit) -> String {
    format!(
        "step {n}{}: {} {}  {}\n",
        if s.rerun { " (rerun)" } else { "" },
        rate(s.asked_per_s),
        unit.per_s(),
        row(s)
    )
}

fn row(s: &SearchStep) -> String {
    let us = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{} us", micros(v)));
    let share = match s.sent {
        0 => "-".to_string(),
        n => format!("{:.2}%", s.errors as f64 * 100.0 / n as f64),
    };
    format!(
        "sent {}/s  p50 {}  p99 {}  errors {share}  {}",
        s.achieved_per_s.map_or("-".to_string(), rate),
        us(s.p50_us),
        us(s.p99_us),
        match (&s.why, s.pass) {
            (_, true) => "pass".to_string(),
            (Some(why), false) => format!("FAIL ({why})"),
            (None, false) => "FAIL".to_string(),
        }
    )
}

/// The curve by rate, the boundary and its confidence.
pub fn curve(f: &SearchFigures, unit: &Unit) -> String {
    let mut steps: Vec<&SearchStep> = f.steps.iter().collect();
    steps.sort_by(|a, b| {
        a.asked_per_s
            .total_cmp(&b.asked_per_s)
            .then(a.rerun.cmp(&b.rerun))
    });
    let mut s = format!(
        "search:       {}, up to {} {}, steps of {} s after {} s of warm-up\n",
        f.conditions.join(", "),
        rate(f.upper_per_s),
        unit.per_s(),
        f.step_s,
        f.warmup_s
    );
    let width = steps
        .iter()
        .map(|x| rate(x.asked_per_s).len())
        .max()
        .unwrap_or(0);
    for x in &steps {
        let again = if x.rerun { " again" } else { "" };
        let _ = writeln!(s, "  {:>width$}/s{again}  {}", rate(x.asked_per_s), row(x));
    }
    let per_s = unit.per_s();
    let _ = match (f.highest_pass_per_s, f.first_fail_per_s) {
        (Some(p), Some(x)) => writeln!(
            s,
            "capacity:     {} {per_s} met every condition; {} was the first rate that failed",
            rate(p),
            rate(x)
        ),
        (Some(p), None) => writeln!(
            s,
            "capacity:     at least {} {per_s}: -R itself met every condition (raise -R to find the edge)",
            rate(p)
        ),
        (None, Some(x)) => writeln!(
            s,
            "capacity:     no rate met every condition, down to {} {per_s}",
            rate(x)
        ),
        (None, None) => writeln!(s, "capacity:     no step ran to its end"),
    };
    s.push_str(&confidence(f));
    s
}

fn confidence(f: &SearchFigures) -> String {
    let said: Vec<String> = f
        .confidence
        .reruns
        .iter()
        .map(|r| {
            let v = |p: bool| if p { "passed" } else { "failed" };
            if r.first == r.again {
                format!("{} {} again", rate(r.rate_per_s), v(r.again))
            } else {
                format!(
                    "{} {} then {} (counted as failing)",
                    rate(r.rate_per_s),
                    v(r.first),
                    v(r.again)
                )
            }
        })
        .collect();
    let head = if f.confidence.settled {
        "settled"
    } else {
        "unsettled"
    };
    // An end the search never ran again: it stopped at its step cap first.
    let not_rerun: Vec<String> = [f.highest_pass_per_s, f.first_fail_per_s]
        .into_iter()
        .flatten()
        .filter(|end| !f.confidence.reruns.iter().any(|r| r.rate_per_s == *end))
        .map(|end| format!("{} not re-run (the step cap came first)", rate(end)))
        .collect();
    let mut parts = Vec::new();
    if !said.is_empty() {
        parts.push(format!("on rerun {}", said.join(", ")));
    }
    parts.extend(not_rerun);
    match parts.is_empty() {
        true => format!("confidence:   {head}: no step was re-run\n"),
        false => format!("confidence:   {head}: {}\n", parts.join("; ")),
    }
}
