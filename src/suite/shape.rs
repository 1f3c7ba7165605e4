//! A suite load's stages and thresholds (`stages = "10s:1000,20s:5000"`,
//! `thresholds = ["p99<5ms"]`), validated before anything runs: the stages as
//! `--stages` reads them, the thresholds in `--threshold`'s grammar against what every
//! point of the load measures. Each problem is `FILE:LINE: sentence naming the key`.

use super::cx::Ctx;
use super::spec::LoadSpecFile;
use crate::error::Result;
use crate::proto::entry::Entry;
use crate::stats::threshold::{self, Scope, Threshold};
use crate::stats::Unit;
use std::time::Duration;

/// A load's stages, checked: the text each point passes as `--stages`, their sum, and
/// for connection stages (`10s:50c`) their highest target, every point's connections.
#[derive(Clone, Debug, PartialEq)]
pub struct SuiteStages {
    pub text: String,
    pub total: Duration,
    pub connections: Option<u64>,
}

/// Why a key only wirebench's own loads take is refused for this load, if it is:
/// `connect` (`on_connect` says why) or an external generator (wirebench `does` it).
fn only_wirebench(
    protocol: &dyn Entry,
    generator: &str,
    wirebench: bool,
    on_connect: &str,
    does: &str,
) -> Option<String> {
    if protocol.name() == "connect" {
        return Some(on_connect.to_string());
    }
    (!wirebench).then(|| format!("only wirebench {does}, not the generator {generator}"))
}

/// The load's `stages`, if given: they parse as `--stages`, and nothing else of the
/// file shapes the same load (`rate`, `duration`, `count`), which would be ignored.
pub fn stages_of(
    cx: &Ctx,
    who: &str,
    protocol: &dyn Entry,
    generator: &str,
    wirebench: bool,
    l: &LoadSpecFile,
) -> Result<Option<SuiteStages>> {
    let Some(s) = &l.stages else {
        return Ok(None);
    };
    let refuse = |msg: String| Err(cx.err(s.span(), format!("{who} key `stages`: {msg}")));
    let connect = "connect takes no stages (its churn rate is `rate`)";
    if let Some(why) = only_wirebench(protocol, generator, wirebench, connect, "runs stages") {
        return refuse(why);
    }
    let list = crate::engine::stages::parse_any("stages", s.get_ref()).map_err(|e| {
        cx.err(
            s.span(),
            format!("{who} key `stages`: {}", e.trim_start_matches("stages: ")),
        )
    })?;
    let what = match list.is_connections() {
        true => "connections",
        false => "rate",
    };
    for (key, given) in [
        ("rate", l.rate.is_some()),
        ("duration", l.duration.is_some()),
        ("count", l.count.is_some()),
        // A default (no span) is no axis given.
        (
            "connections",
            list.is_connections() && l.connections.span() != (0..0),
        ),
    ] {
        if given {
            return refuse(format!(
                "the stages set the {what} and the length of every point: drop `{key}`"
            ));
        }
    }
    Ok(Some(SuiteStages {
        text: s.get_ref().clone(),
        total: list.total(),
        connections: list.is_connections().then(|| list.peak() as u64),
    }))
}

/// The load's `thresholds`, each read and checked against what every point of it
/// measures: the suite measures the server's CPU, and `rate` needs every point open
/// loop (`rate` or `stages`). Whether the protocol's items have replies (AMQP without
/// confirms has none) is known only from its result: a latency there measures nothing,
/// and fails.
pub fn thresholds_of(
    cx: &Ctx,
    who: &str,
    protocol: &dyn Entry,
    open_loop: bool,
    l: &LoadSpecFile,
) -> Result<Vec<Threshold>> {
    let Some(t) = &l.thresholds else {
        return Ok(Vec::new());
    };
    let unit = Unit::new("requests", "answered", true);
    let scope = Scope {
        kind: protocol.name(),
        unit: &unit,
        open_loop,
        server_cpu: true,
        blocks: protocol.result_blocks_schema(),
    };
    threshold::parse_all(t.get_ref(), &scope)
        .map_err(|e| cx.err(t.span(), format!("{who} key `thresholds`: {e}")))
}

/// The load's `search`, if given: conditions `--search` reads, each checked against
/// what a step measures (a step aims at the suite's server, so not its CPU); `rate` is
/// its upper bound (one search per rate), `duration` each step's length, and nothing
/// else shapes or judges the same load (`count`, `stages`, `thresholds`).
pub fn search_of(
    cx: &Ctx,
    who: &str,
    protocol: &dyn Entry,
    generator: &str,
    wirebench: bool,
    l: &LoadSpecFile,
) -> Result<Option<String>> {
    let Some(s) = &l.search else {
        return Ok(None);
    };
    let refuse = |msg: String| Err(cx.err(s.span(), format!("{who} key `search`: {msg}")));
    let connect = "connect has no capacity search";
    if let Some(why) = only_wirebench(protocol, generator, wirebench, connect, "searches") {
        return refuse(why);
    }
    if l.rate.is_none() {
        return refuse("give `rate`: the highest rate each search tries".into());
    }
    for (key, given, why) in [
        ("count", l.count.is_some(), "each step lasts `duration`"),
        ("stages", l.stages.is_some(), "each step runs one flat rate"),
        (
            "thresholds",
            l.thresholds.is_some(),
            "its conditions are what each step is held to",
        ),
    ] {
        if given {
            return refuse(format!("drop `{key}`: {why}"));
        }
    }
    let unit = Unit::new("requests", "answered", true);
    let scope = Scope {
        kind: protocol.name(),
        unit: &unit,
        open_loop: true,
        server_cpu: false,
        blocks: protocol.result_blocks_schema(),
    };
    let texts: Vec<String> = s
        .get_ref()
        .split(',')
        .map(|c| c.trim().to_string())
        .collect();
    threshold::parse_all(&texts, &scope)
        .map_err(|e| cx.err(s.span(), format!("{who} key `search`: {e}")))?;
    Ok(Some(s.get_ref().clone()))
}

/// The most a search of `step`-long steps may take: every step (at most
/// `commands::search_steps::MAX_STEPS`, and a rerun) with its warm-up, a fifth of the
/// step, and a second to start.
pub fn search_time(step: Duration) -> Duration {
    (step + step / 5 + Duration::from_secs(1)) * 34
}
