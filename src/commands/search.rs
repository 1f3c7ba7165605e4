//! `--search CONDITIONS` with `-R` as its top (docs/search.md): open-loop steps of
//! `--step-duration`, each a whole run of the load (`run_load::measure`, the built-in
//! server started afresh when there is no target), held to the conditions (threshold
//! grammar), the next rate chosen by `search_steps`; then the curve, the boundary and
//! its confidence in the summary, and in the JSON as the best step's result with a
//! `search` block.

use super::load;
use super::run_load::{check_fd_budget, measure, Step};
use super::search_steps::{Next, Search};
use super::verdict;
use crate::cli::LoadCommand;
use crate::config::duration_flag;
use crate::error::{Error, Result};
use crate::flags::{LoadArgs, VerdictArgs};
use crate::proto::plugin::{ConfigOf, Protocol};
use crate::report::console::Console;
use crate::report::json::JsonSink;
use crate::report::{search as said, text};
use crate::stats::search::{Confidence, Rerun, SearchFigures, SearchStep};
use crate::stats::threshold::{self, figure::Figure, Threshold};
use crate::stats::RunResult;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// What every step shares: the conditions, its length and warm-up, the top rate.
struct Plan {
    texts: Vec<String>,
    conditions: Vec<Threshold>,
    names_errors: bool,
    top: f64,
    step: Duration,
    warmup: Duration,
}

pub fn run<P: Protocol>(cmd: &LoadCommand<P::Args>, conditions: &str) -> Result<()> {
    let plan = plan::<P>(cmd, conditions)?;
    let top_cfg = P::config(&cmd.proto, &step_args(&cmd.load, &plan, plan.top))?;
    check_fd_budget::<P>(&top_cfg)?;
    let out = &cmd.load.client;
    let json = out.json.as_deref().map(JsonSink::create).transpose()?;
    let console = Console::for_json(out.json.as_deref());
    let stop = load::stop_flag()?;
    let unit = P::unit(&top_cfg);
    if !out.quiet {
        console.print(&format!(
            "wirebench {}: searching for the highest rate up to {} {} that meets {} (steps of {} s after {} s of warm-up)\n",
            P::NAME,
            crate::report::format::rate(plan.top),
            unit.per_s(),
            plan.texts.join(", "),
            plan.step.as_secs_f64(),
            plan.warmup.as_secs_f64()
        ));
    }
    let mut search = Search::new(plan.top);
    let mut steps: Vec<(SearchStep, RunResult)> = Vec::new();
    loop {
        let (rate, rerun) = match search.next() {
            Next::Step(r) => (r, false),
            Next::Rerun(r) => (r, true),
            Next::Done => break,
        };
        let cfg = P::config(&cmd.proto, &step_args(&cmd.load, &plan, rate))?;
        let Step { result, .. } = measure::<P>(&cfg, &console, stop.clone(), None)?;
        if stop.load(Ordering::Relaxed) {
            return Err(Error::ShortFall(
                "the search was stopped by a signal before it settled".into(),
            ));
        }
        let step = judge::<P>(&plan, rate, rerun, &result);
        search.record(rate, step.pass, rerun);
        if !out.quiet {
            console.print(&said::step_line(steps.len() + 1, &step, &unit));
        }
        steps.push((step, result));
    }
    let figures = figures(&plan, &search, &steps);
    let mut best = best_result(&search, steps);
    best.thresholds = verdict::evaluate::<P>(&plan.conditions, &best);
    let highest = figures.highest_pass_per_s;
    best.search = Some(figures);
    if let Some(sink) = json {
        sink.write(&best)?;
    }
    if highest.is_some() {
        console.print(&text::summary(&best));
    }
    console.print(&said::curve(best.search.as_ref().expect("just set"), &unit));
    match highest {
        Some(_) => Ok(()),
        None => Err(Error::Threshold(format!(
            "no rate up to {} {} met {}",
            crate::report::format::rate(plan.top),
            unit.per_s(),
            plan.texts.join(", ")
        ))),
    }
}

/// The search's flags checked and its conditions read against what the load measures.
fn plan<P: Protocol>(cmd: &LoadCommand<P::Args>, conditions: &str) -> Result<Plan> {
    let l = &cmd.load;
    if l.stages.is_some() {
        return Err(Error::usage(
            "--stages does not combine with --search: each step runs one flat rate",
        ));
    }
    let top = l.rate.ok_or_else(|| {
        Error::usage("--search needs -R/--rate: the highest rate it tries (e.g. -R 50000)")
    })?;
    let refuse = |why: &str| Err(Error::usage(why.to_string()));
    if !l.verdict.threshold.is_empty() {
        return refuse("--threshold does not combine with --search: its conditions are what each step is held to");
    }
    if l.duration.is_some() || l.requests.is_some() {
        return refuse("-d and -n do not apply to --search: each step runs --step-duration");
    }
    if l.client.shard.shard.is_some() || l.client.shard.shards.is_some() {
        return refuse("--search runs on one generator: drop --shard/--shards");
    }
    if l.metrics.metrics_listen.is_some() {
        return refuse("--metrics-listen serves one run's figures: it does not combine with --search, whose steps are runs of their own");
    }
    if l.hlog.is_some() {
        return refuse("--hlog logs one run's intervals: it does not combine with --search, whose steps are runs of their own");
    }
    let step = duration_flag(
        "--step-duration",
        l.verdict.step_duration.as_deref().unwrap_or("10s"),
    )?;
    if step < Duration::from_millis(100) {
        return refuse("--step-duration must be at least 100ms");
    }
    let warmup = match duration_flag("--warmup", &l.warmup)? {
        w if w.is_zero() => step / 5,
        w => w,
    };
    let texts: Vec<String> = conditions
        .split(',')
        .map(|c| c.trim().to_string())
        .filter(|c| !c.is_empty())
        .collect();
    if texts.is_empty() {
        return refuse(
            "--search needs at least one condition, e.g. --search 'p99<5ms,errors<0.1%'",
        );
    }
    let plan = Plan {
        names_errors: false,
        conditions: Vec::new(),
        texts,
        top,
        step,
        warmup,
    };
    let cfg: ConfigOf<P> = P::config(&cmd.proto, &step_args(l, &plan, top))?;
    let conditions = verdict::conditions::<P>(&cfg, &plan.texts)?;
    Ok(Plan {
        names_errors: conditions
            .iter()
            .any(|c| matches!(c.figure, Figure::Errors(_))),
        conditions,
        ..plan
    })
}

/// The load's flags for one step at `rate`: measured for the step's length after its
/// warm-up, quiet, with no JSON of its own.
fn step_args(l: &LoadArgs, plan: &Plan, rate: f64) -> LoadArgs {
    let mut a = l.clone();
    a.rate = Some(rate);
    a.duration = Some(format!("{}ms", plan.step.as_millis()));
    a.warmup = format!("{}ms", plan.warmup.as_millis());
    a.verdict = VerdictArgs::default();
    a.client.json = None;
    a.client.quiet = true;
    a
}

/// A step passes when it met every condition, kept its rate, and (unless a condition
/// names errors, which then decides) no request failed.
fn judge<P: Protocol>(plan: &Plan, rate: f64, rerun: bool, r: &RunResult) -> SearchStep {
    let vs = verdict::evaluate::<P>(&plan.conditions, r);
    let mut why: Vec<String> = vs
        .iter()
        .filter(|v| !v.pass)
        .map(|v| v.expression.clone())
        .collect();
    if r.rate.as_ref().is_some_and(|x| x.kept_up == Some(false)) {
        why.push("rate not kept".into());
    }
    if !plan.names_errors && r.totals.errors > 0 {
        why.push("requests failed".into());
    }
    if r.totals.ok == 0 {
        why.push("nothing counted".into());
    }
    let timed = r.latency_us.count > 0;
    SearchStep {
        asked_per_s: rate,
        achieved_per_s: r.rate.as_ref().map(|x| x.achieved_per_s),
        p50_us: timed.then_some(r.latency_us.p50),
        p99_us: timed.then_some(r.latency_us.p99),
        sent: r.totals.sent,
        errors: r.totals.errors,
        pass: why.is_empty() && threshold::all_pass(&vs),
        rerun,
        why: (!why.is_empty()).then(|| why.join(", ")),
    }
}

fn figures(plan: &Plan, s: &Search, steps: &[(SearchStep, RunResult)]) -> SearchFigures {
    let reruns: Vec<Rerun> = steps
        .iter()
        .filter(|(x, _)| x.rerun)
        .filter_map(|(x, _)| {
            let first = steps
                .iter()
                .find(|(y, _)| !y.rerun && y.asked_per_s == x.asked_per_s)?;
            Some(Rerun {
                rate_per_s: x.asked_per_s,
                first: first.0.pass,
                again: x.pass,
            })
        })
        .collect();
    SearchFigures {
        conditions: plan.texts.clone(),
        upper_per_s: plan.top,
        step_s: plan.step.as_secs_f64(),
        warmup_s: plan.warmup.as_secs_f64(),
        highest_pass_per_s: s.highest_pass(),
        first_fail_per_s: s.first_fail(),
        steps: steps.iter().map(|(x, _)| x.clone()).collect(),
        confidence: Confidence {
            settled: Confidence::settled(s.highest_pass(), s.first_fail(), &reruns),
            resolution_per_s: s.highest_pass().zip(s.first_fail()).map(|(p, f)| f - p),
            reruns,
        },
    }
}

/// The result of the highest passing step's first run; with none, the lowest failing
/// step's (the last run when nothing else is known).
fn best_result(s: &Search, steps: Vec<(SearchStep, RunResult)>) -> RunResult {
    let at = s.highest_pass().or(s.first_fail());
    let i = steps
        .iter()
        .position(|(x, _)| Some(x.asked_per_s) == at && !x.rerun)
        .unwrap_or(steps.len().saturating_sub(1));
    steps
        .into_iter()
        .nth(i)
        .map(|(_, r)| r)
        .expect("a search runs at least one step")
}
