//! A suite's loads, validated: the registered command that runs each (its own settings
//! read by its entry from the block named after it), the generator (wirebench or one
//! its protocol declares, with what that generator refuses), the sweep's points and the
//! plan. Every problem is `FILE:LINE: sentence naming the key` (`cx.rs`).

use super::cpuset::CpuSet;
use super::cx::Ctx;
use super::shape::{search_of, stages_of, thresholds_of, SuiteStages};
use super::spec::{load_keys, LoadSpecFile};
use crate::error::{Error, Result};
use crate::proto::entry::{Entry, SuiteLoad};
use crate::proto::generator::{Ask, Generator};
use crate::stats::threshold::Threshold;
use crate::units::parse_bytes;
use serde::Serialize;
use std::collections::BTreeMap;
use std::ops::Range;
use std::time::Duration;
use toml::Spanned;

/// The generator that is this binary itself.
pub const WIREBENCH: &str = "wirebench";

/// Most points one load's sweep may expand to, whatever `--yes` says: they are built in
/// memory before anything runs, and a million runs is weeks of benchmarking.
pub const MAX_POINTS_PER_LOAD: u64 = 1_000_000;

#[derive(Clone, Copy, Debug, Serialize, PartialEq)]
#[serde(rename_all = "lowercase")]
pub enum Stop {
    Duration(#[serde(serialize_with = "secs")] Duration),
    Count(u64),
    /// The load's stages (`Load::stages`), lasting this long in all.
    Stages(#[serde(serialize_with = "secs")] Duration),
    /// A capacity search (`Load::search`), each step lasting this long.
    Search(#[serde(serialize_with = "secs")] Duration),
}

fn secs<S: serde::Serializer>(d: &Duration, s: S) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

/// One combination of the sweep axes.
#[derive(Clone, Copy, Debug, Serialize, PartialEq)]
pub struct Point {
    pub connections: u64,
    pub body_size: u64,
    pub pipeline: u64,
    pub rate: Option<f64>,
}

#[derive(Debug)]
pub struct Load {
    pub name: String,
    /// The registered load command that runs it (`registry::REGISTRY`).
    pub protocol: &'static dyn Entry,
    /// Its command's own settings, and what they make of a point (its argv, its
    /// external generators).
    pub settings: Box<dyn SuiteLoad>,
    /// `WIREBENCH`, or an external generator its protocol declares.
    pub generator: &'static str,
    pub servers: Option<Vec<String>>,
    /// The axes with more than one value, in the order connections, body_size, pipeline, rate.
    pub swept: Vec<String>,
    pub points: Vec<Point>,
    pub stop: Stop,
    pub warmup: Duration,
    pub repeat: u32,
    pub threads: u64,
    pub cpus: Option<CpuSet>,
    pub timeout: Duration,
    pub extra_args: Vec<String>,
    /// The shape of every point by stages (`stages`), then `stop` is `Stop::Stages`.
    pub stages: Option<SuiteStages>,
    /// What every point's result is held to (`thresholds`).
    pub thresholds: Vec<Threshold>,
    /// A capacity search's conditions at every point (`search`), then `stop` is
    /// `Stop::Search`.
    pub search: Option<String>,
}

impl Load {
    pub fn applies_to(&self, server: &str) -> bool {
        self.servers
            .as_ref()
            .map_or(true, |s| s.iter().any(|n| n == server))
    }

    /// The external generator that runs it, set up with its settings; None: wirebench.
    pub fn external(&self) -> Option<Box<dyn Generator + '_>> {
        if self.generator == WIREBENCH {
            return None;
        }
        self.settings.generator(self.generator)
    }
}

/// The values of the sweep's axes.
struct Axes {
    conns: Vec<u64>,
    bodies: Vec<u64>,
    pipes: Vec<u64>,
    rates: Vec<Option<f64>>,
}

/// One `[[load]]`, validated; `keys` are all its keys as written (its protocol's block
/// among them) and `servers` the suite's.
pub fn load_of(
    cx: &Ctx,
    server_names: &[&str],
    index: usize,
    l: &LoadSpecFile,
    span: Range<usize>,
    keys: &BTreeMap<String, Spanned<toml::Value>>,
) -> Result<Load> {
    let name = l
        .name
        .clone()
        .unwrap_or_else(|| format!("load{}", index + 1));
    let who = format!("load '{name}'");
    let protocol = protocol_of(cx, &who, l)?;
    let block = block_of(cx, &who, protocol, keys)?;
    let generator = generator_of(cx, &who, protocol, l)?;
    if let Some(names) = &l.servers {
        if let Some(n) = names.iter().find(|n| !server_names.contains(&n.as_str())) {
            return Err(cx.err(
                span,
                format!("{who} key `servers`: no server is named '{n}'"),
            ));
        }
    }
    let mut axes = axes_of(cx, &who, protocol, l)?;
    let settings = protocol
        .suite_load(block.map(|b| b.get_ref()), &axes.bodies)
        .map_err(|e| {
            let at = block.map_or(l.protocol.span(), |b| b.span());
            cx.err(at, format!("{who} key `{}`: {e}", protocol.name()))
        })?;
    let tool = (generator != WIREBENCH)
        .then(|| settings.generator(generator))
        .flatten();
    if let Some(g) = &tool {
        if let Some(why) = g.refuses_settings() {
            let at = block.map_or(l.generator.span(), |b| b.span());
            let key = protocol.name();
            return Err(refusal(cx, &who, g.as_ref(), at, key, why));
        }
        refuse_axes(cx, &who, g.as_ref(), l, &axes, span.clone())?;
    }
    let stages = stages_of(cx, &who, protocol, generator, generator == WIREBENCH, l)?;
    if let Some(peak) = stages.as_ref().and_then(|s| s.connections) {
        // Connection stages: every point opens up to their highest target.
        axes.conns = vec![peak];
    }
    let search = search_of(cx, &who, protocol, generator, generator == WIREBENCH, l)?;
    let stop = match (&stages, &search) {
        (Some(s), _) => Stop::Stages(s.total),
        (None, Some(_)) => match &l.duration {
            Some(d) => Stop::Search(cx.duration("duration", d)?),
            None => Stop::Search(Duration::from_secs(5)),
        },
        (None, None) => stop_of(cx, &who, l, tool.as_deref(), span.clone())?,
    };
    drop(tool);
    let rate_stages = stages.as_ref().is_some_and(|s| s.connections.is_none());
    let open_loop = rate_stages || axes.rates.iter().all(Option::is_some);
    let thresholds = thresholds_of(cx, &who, protocol, open_loop, l)?;
    let (points, swept) = sweep(cx, &who, axes, span)?;
    let warmup = match &l.warmup {
        Some(w) => cx.duration("warmup", w)?,
        None => Duration::from_secs(1),
    };
    let repeat = *l.repeat.get_ref();
    if repeat == 0 || repeat > 100 {
        return Err(cx.err(l.repeat.span(), format!("{who} key `repeat`: use 1 to 100")));
    }
    let threads = *l.threads.get_ref();
    if threads == 0 || threads > 1024 {
        return Err(cx.err(
            l.threads.span(),
            format!("{who} key `threads`: use 1 to 1024"),
        ));
    }
    Ok(Load {
        cpus: cx.cpus(&who, &l.cpus)?,
        timeout: cx.duration("timeout", &l.timeout)?,
        name,
        protocol,
        settings,
        generator,
        servers: l.servers.clone(),
        swept,
        points,
        stop,
        warmup,
        repeat,
        threads,
        extra_args: l.extra_args.clone(),
        stages,
        thresholds,
        search,
    })
}

/// The registered command a load names.
fn protocol_of(cx: &Ctx, who: &str, l: &LoadSpecFile) -> Result<&'static dyn Entry> {
    crate::registry::find(l.protocol.get_ref()).ok_or_else(|| {
        cx.err(
            l.protocol.span(),
            format!(
                "{who} key `protocol`: '{}' is not one of {}",
                l.protocol.get_ref(),
                crate::registry::names().join(", ")
            ),
        )
    })
}

/// The load's block of its protocol's own settings, if it has one; any other key the
/// shared ones do not hold is refused where it stands.
fn block_of<'a>(
    cx: &Ctx,
    who: &str,
    protocol: &dyn Entry,
    keys: &'a BTreeMap<String, Spanned<toml::Value>>,
) -> Result<Option<&'a Spanned<toml::Value>>> {
    let shared = load_keys();
    let p = protocol.name();
    let mut block = None;
    for (k, v) in keys {
        if shared.contains(&k.as_str()) {
            continue;
        }
        if k == p {
            block = Some(v);
            continue;
        }
        let why = match crate::registry::find(k) {
            Some(_) => format!("{who} key `{k}`: {k}'s settings in a load of protocol {p}"),
            None => format!(
                "{who}: unknown key `{k}` (a protocol's own settings go in its block, as {p} = {{ {k} = ... }})"
            ),
        };
        return Err(cx.err(v.span(), why));
    }
    Ok(block)
}

/// Every generator a suite may name: wirebench, then those the protocols declare.
fn generator_names() -> Vec<&'static str> {
    let mut names = vec![WIREBENCH];
    for e in crate::registry::REGISTRY {
        for g in e.suite_generators() {
            if !names.contains(g) {
                names.push(g);
            }
        }
    }
    names
}

/// The load's generator: wirebench, or one its protocol declares.
fn generator_of(
    cx: &Ctx,
    who: &str,
    protocol: &dyn Entry,
    l: &LoadSpecFile,
) -> Result<&'static str> {
    let asked = l.generator.get_ref().as_str();
    let known = generator_names();
    let Some(g) = known.iter().copied().find(|g| *g == asked) else {
        return Err(cx.err(
            l.generator.span(),
            format!(
                "{who} key `generator`: '{asked}' is not one of {}",
                known.join(", ")
            ),
        ));
    };
    if g == WIREBENCH || protocol.suite_generators().contains(&g) {
        return Ok(g);
    }
    let drives: Vec<String> = crate::registry::REGISTRY
        .iter()
        .filter(|e| e.suite_generators().contains(&g))
        .map(|e| format!("\"{}\"", e.name()))
        .collect();
    Err(cx.err(
        l.generator.span(),
        format!(
            "{who} key `generator`: {g} drives only protocol{} {}",
            if drives.len() == 1 { "" } else { "s" },
            drives.join(", ")
        ),
    ))
}

/// The sweep's axes, each value checked.
fn axes_of(cx: &Ctx, who: &str, protocol: &dyn Entry, l: &LoadSpecFile) -> Result<Axes> {
    let nonempty = |key: &str, sp: Range<usize>, len: usize| -> Result<()> {
        if len == 0 {
            Err(cx.err(sp, format!("{who} key `{key}`: give at least one value")))
        } else {
            Ok(())
        }
    };
    let conns = l.connections.get_ref().clone();
    nonempty("connections", l.connections.span(), conns.len())?;
    if conns.contains(&0) {
        return Err(cx.err(
            l.connections.span(),
            format!("{who} key `connections`: 0 connections"),
        ));
    }
    let bodies: Vec<u64> = match &l.body_size {
        None => vec![protocol.suite_default_size()],
        Some(v) => {
            nonempty("body_size", v.span(), v.get_ref().len())?;
            v.get_ref()
                .iter()
                .map(|b| {
                    parse_bytes(b)
                        .map_err(|e| cx.err(v.span(), format!("{who} key `body_size`: {e}")))
                })
                .collect::<Result<_>>()?
        }
    };
    let pipes: Vec<u64> = match &l.pipeline {
        None => vec![1],
        Some(v) => {
            nonempty("pipeline", v.span(), v.get_ref().len())?;
            if v.get_ref().contains(&0) {
                return Err(cx.err(
                    v.span(),
                    format!("{who} key `pipeline`: 0 requests in flight"),
                ));
            }
            v.get_ref().clone()
        }
    };
    let rates: Vec<Option<f64>> = match &l.rate {
        None => vec![None],
        Some(v) => {
            nonempty("rate", v.span(), v.get_ref().len())?;
            if v.get_ref().iter().any(|r| !r.is_finite() || *r <= 0.0) {
                return Err(cx.err(v.span(), format!("{who} key `rate`: rates must be above 0")));
            }
            v.get_ref().iter().map(|r| Some(*r)).collect()
        }
    };
    Ok(Axes {
        conns,
        bodies,
        pipes,
        rates,
    })
}

/// What an external generator cannot do, refused here rather than mid-suite.
fn refusal(
    cx: &Ctx,
    who: &str,
    g: &dyn Generator,
    sp: Range<usize>,
    key: &str,
    why: &str,
) -> Error {
    cx.err(sp, format!("{who} key `{key}`: {} {why}", g.name()))
}

/// A rate or a pipeline the generator refuses.
fn refuse_axes(
    cx: &Ctx,
    who: &str,
    g: &dyn Generator,
    l: &LoadSpecFile,
    axes: &Axes,
    span: Range<usize>,
) -> Result<()> {
    if let (Some(r), Some(why)) = (&l.rate, g.refuses(Ask::Rate)) {
        return Err(refusal(cx, who, g, r.span(), "rate", why));
    }
    if let Some(why) = g
        .refuses(Ask::Pipeline)
        .filter(|_| axes.pipes.iter().any(|p| *p > 1))
    {
        let sp = l.pipeline.as_ref().map_or(span, |p| p.span());
        return Err(refusal(cx, who, g, sp, "pipeline", why));
    }
    Ok(())
}

/// The plan of each point: a duration (5 s by default) or a count.
fn stop_of(
    cx: &Ctx,
    who: &str,
    l: &LoadSpecFile,
    tool: Option<&dyn Generator>,
    span: Range<usize>,
) -> Result<Stop> {
    let stop = match (&l.duration, &l.count) {
        (Some(d), None) => Stop::Duration(cx.duration("duration", d)?),
        (None, Some(n)) if *n.get_ref() == 0 => {
            return Err(cx.err(n.span(), format!("{who} key `count`: 0 requests")))
        }
        (None, Some(n)) => {
            if let Some((g, why)) = tool.and_then(|g| Some((g, g.refuses(Ask::Count)?))) {
                return Err(refusal(cx, who, g, n.span(), "count", why));
            }
            Stop::Count(*n.get_ref())
        }
        (None, None) => Stop::Duration(Duration::from_secs(5)),
        (Some(_), Some(n)) => {
            return Err(cx.err(
                n.span(),
                format!("{who}: give `duration` or `count`, not both"),
            ))
        }
    };
    if stop == Stop::Duration(Duration::ZERO) {
        return Err(cx.err(span, format!("{who} key `duration`: 0 s")));
    }
    Ok(stop)
}

/// Every combination of the axes, and the axes with more than one value.
fn sweep(cx: &Ctx, who: &str, a: Axes, span: Range<usize>) -> Result<(Vec<Point>, Vec<String>)> {
    let sizes = [a.conns.len(), a.bodies.len(), a.pipes.len(), a.rates.len()];
    let n_points = sizes
        .iter()
        .fold(1u64, |acc, n| acc.saturating_mul(*n as u64));
    if n_points > MAX_POINTS_PER_LOAD {
        return Err(cx.err(
            span,
            format!(
                "{who}: the sweep has {n_points} points ({} connections x {} body sizes x {} pipelines x {} rates), more than the {MAX_POINTS_PER_LOAD} a load may have",
                sizes[0], sizes[1], sizes[2], sizes[3]
            ),
        ));
    }
    let mut points = Vec::with_capacity(n_points as usize);
    for &connections in &a.conns {
        for &body_size in &a.bodies {
            for &pipeline in &a.pipes {
                for &rate in &a.rates {
                    points.push(Point {
                        connections,
                        body_size,
                        pipeline,
                        rate,
                    });
                }
            }
        }
    }
    let swept = ["connections", "body_size", "pipeline", "rate"]
        .iter()
        .zip(sizes)
        .filter(|(_, n)| *n > 1)
        .map(|(axis, _)| axis.to_string())
        .collect();
    Ok((points, swept))
}
