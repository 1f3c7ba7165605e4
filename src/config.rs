//! Validated run configurations built from the flags. Engines never see clap types,
//! and every bad combination is refused here with one sentence (exit 2).

use crate::engine::{LoadShape, Plan, Refill, Stages};
use crate::error::{Error, Result};
use crate::flags::{ClientArgs, LoadArgs, PipelineMode, RampArgs, ServerArgs};
use crate::net::tls::{Identity, Trust};
use crate::shard::Coordination;
use crate::units::{parse_bytes, parse_duration};
use serde_json::json;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

/// Parses a duration flag; a negative one is refused as such, not as "not a duration".
pub fn duration_flag(flag: &str, text: &str) -> Result<Duration> {
    if text.trim_start().starts_with('-') {
        return Err(Error::usage(format!(
            "{flag} must be a positive duration (e.g. 10s, 500ms), not {text}"
        )));
    }
    parse_duration(text).map_err(|e| Error::usage(format!("{flag}: {e}")))
}

/// `--ramp T` (`--ramp-measured`), validated: None without a ramp or with `--ramp 0s`.
/// One parse for every load and for `connect`.
pub fn ramp(a: &RampArgs) -> Result<Option<crate::engine::Ramp>> {
    let Some(text) = &a.ramp else {
        return Ok(None);
    };
    let over = duration_flag("--ramp", text)?;
    Ok((!over.is_zero()).then_some(crate::engine::Ramp {
        over,
        measured: a.ramp_measured,
        share: None,
    }))
}

/// `--stages` read: the stages, and the plan and rate they make (the run lasts their
/// sum, at their highest target); without it, the plan and `-R` as they are. clap
/// refuses it beside -R, -d and -n; what it does not combine with else is refused here.
fn rate_stages(
    a: &LoadArgs,
    plan: Plan,
    batch: bool,
    warmup: &Duration,
    client: &ClientConfig,
) -> Result<(Stages, Plan, Option<f64>)> {
    let Some(text) = &a.stages else {
        return Ok((Stages::default(), plan, a.rate));
    };
    let stages = crate::engine::stages::parse_any("--stages", text).map_err(Error::usage)?;
    let refuse = |why: &str| Err(Error::usage(why.to_string()));
    if batch {
        return refuse("--stages does not combine with a batch plan (--iterations/--reconnects)");
    }
    if client.ramp.is_some() && stages.is_connections() {
        return refuse("--stages and --ramp both open the connections over time: write the ramp as the first stage (e.g. --stages 2s:50c,10s:50c)");
    }
    if client.ramp.is_some() {
        return refuse("--stages and --ramp both shape the rate: write the ramp as the first stage (e.g. --stages 2s:1000,10s:1000)");
    }
    if !warmup.is_zero() {
        return refuse(
            "--stages counts every stage: drop --warmup (make a first stage the warm-up instead)",
        );
    }
    if stages.is_connections() {
        // Closed loop: the stages set the connections, no rate.
        return Ok((stages, Plan::Duration(stages.total()), None));
    }
    check_rate(stages.peak())?;
    Ok((stages, Plan::Duration(stages.total()), Some(stages.peak())))
}

/// The run's connections: `-c` (or the protocol's), or under connection stages their
/// highest target, `-c` then refused unless left at its default or equal to it.
fn stage_connections(stages: &Stages, asked: usize, own: Option<usize>) -> Result<usize> {
    if !stages.is_connections() {
        return Ok(asked);
    }
    let peak = stages.peak() as usize;
    if own.is_some() || (asked != DEFAULT_CONNECTIONS && asked != peak) {
        return Err(Error::usage(format!(
            "-c {asked} and connection stages both set the connections: the stages' highest target ({peak}c) is the run's connection count, so drop -c"
        )));
    }
    Ok(peak)
}

/// `-c`'s default (flags::LoadArgs).
const DEFAULT_CONNECTIONS: usize = 10;

/// The stages as the plan line says them: `2.000s to 1000/s, 3.000s to 0/s`, or
/// `2.000s to 50 connections, ...`.
fn stages_text(stages: &Stages) -> String {
    let unit = match stages.is_connections() {
        true => " connections",
        false => "/s",
    };
    let list: Vec<String> = stages
        .list()
        .iter()
        .map(|s| {
            format!(
                "{} to {}{unit}",
                crate::report::format::seconds(s.over),
                show_number(s.target)
            )
        })
        .collect();
    list.join(", ")
}

/// `config.stages` in the JSON result: `[{seconds, target_per_s}]`, null without.
fn stages_json(stages: &Stages) -> serde_json::Value {
    if stages.is_empty() {
        return serde_json::Value::Null;
    }
    stages
        .list()
        .iter()
        .map(|s| match stages.is_connections() {
            true => json!({"seconds": s.over.as_secs_f64(), "target_connections": s.target as u64}),
            false => json!({"seconds": s.over.as_secs_f64(), "target_per_s": s.target}),
        })
        .collect()
}

/// A count flag that must be at least 1.
/// Threads of the built-in server a load starts when it has no target: `asked`
/// (`--server-threads`), refused with a target; by default the client and the server
/// split this process's CPUs rather than oversubscribe them (2 CPUs: one load thread,
/// one server thread), so without `-t` the load's threads shrink to its half.
pub fn builtin_server_threads(
    has_target: bool,
    asked: Option<usize>,
    load: &mut LoadConfig,
    threads_given: bool,
) -> Result<usize> {
    if has_target && asked.is_some() {
        return Err(Error::usage(
            "--server-threads only applies to the built-in server (no target)",
        ));
    }
    let cpus = crate::sys::affinity_cpus();
    if !has_target && !threads_given {
        load.set_threads((cpus / 2).max(1));
    }
    at_least_one(
        "--server-threads",
        asked.unwrap_or_else(|| cpus.saturating_sub(load.shape.threads).max(1)),
    )
}

pub fn at_least_one(flag: &str, v: usize) -> Result<usize> {
    if v == 0 {
        Err(Error::usage(format!("{flag} must be at least 1")))
    } else {
        Ok(v)
    }
}

/// Most requests in flight per connection (their bookkeeping is allocated up front).
pub const MAX_PIPELINE: usize = 1 << 16;

/// Open loop bounds, requests per second. Below one request in 1,000 s the schedule's
/// arithmetic would overflow; above 100 million per second (10 ns apart) no client here
/// comes near, and the schedule would be all backlog.
pub const MIN_RATE: f64 = 0.001;
pub const MAX_RATE: f64 = 100_000_000.0;

/// Refuses a `--rate` that is not a number in [MIN_RATE, MAX_RATE].
pub fn check_rate(r: f64) -> Result<()> {
    if r.is_finite() && (MIN_RATE..=MAX_RATE).contains(&r) {
        return Ok(());
    }
    Err(Error::usage(format!(
        "--rate must be between 0.001 and 100,000,000 requests per second, not {}",
        show_number(r)
    )))
}

/// A number as typed-ish for a message: 1e300 and 1e-300 in full would be hundreds of digits.
pub fn show_number(v: f64) -> String {
    if v != 0.0 && v.is_finite() && !(1e-6..1e12).contains(&v.abs()) {
        format!("{v:e}")
    } else {
        v.to_string()
    }
}

/// What to print and write.
#[derive(Clone, Debug)]
pub struct OutputOptions {
    pub progress: Duration,
    pub quiet: bool,
    pub histogram_bucket_us: Option<u64>,
    pub json: Option<PathBuf>,
}

/// The shortest `--interval`: a histogram per worker per interval is merged and (with
/// `--hlog`) written as it ends, so intervals much shorter cost more than they show.
pub const MIN_INTERVAL: Duration = Duration::from_millis(10);

/// `--interval`, validated.
pub fn series_interval(text: &str) -> Result<Duration> {
    let d = duration_flag("--interval", text)?;
    if d < MIN_INTERVAL {
        return Err(Error::usage(format!(
            "--interval must be at least {}ms",
            MIN_INTERVAL.as_millis()
        )));
    }
    Ok(d)
}

/// The shortest `--progress` of a load.
pub const LOAD_MIN_PROGRESS: Duration = Duration::from_millis(10);

/// What every client command shares (`flags::ClientArgs`), validated: one reading for
/// every load and `connect`.
#[derive(Clone, Debug)]
pub struct ClientConfig {
    pub ramp: Option<crate::engine::Ramp>,
    pub timeout: Duration,
    pub output: OutputOptions,
    /// `--source`, when given.
    pub source: Option<SourceFlag>,
    pub tls: Option<Trust>,
    /// `--cert`/`--key`: the certificate this client shows (mutual TLS).
    pub identity: Option<Identity>,
    pub coordination: Coordination,
}

impl ClientConfig {
    /// `tls`: what a command's own flags decide instead of `--tls` (an amqps:// URL);
    /// `min_progress`: the shortest `--progress` the command takes.
    pub fn from_args(a: &ClientArgs, tls: Option<bool>, min_progress: Duration) -> Result<Self> {
        let ramp = ramp(&a.ramp)?;
        let timeout = duration_flag("--timeout", &a.timeout)?;
        if timeout.is_zero() {
            return Err(Error::usage("--timeout must be longer than zero"));
        }
        let progress = duration_flag("--progress", &a.progress)?;
        if progress < min_progress {
            return Err(Error::usage(format!(
                "--progress must be at least {}ms",
                min_progress.as_millis()
            )));
        }
        check_histogram_bucket(a.histogram)?;
        let tls = client_trust(tls.unwrap_or(a.tls), a.insecure, a.ca.as_ref())?;
        let identity = client_identity(tls.is_some(), a.cert.as_ref(), a.key.as_ref())?;
        let coordination = Coordination::from_args(&a.shard)?;
        Ok(ClientConfig {
            ramp,
            timeout,
            output: OutputOptions {
                progress,
                quiet: a.quiet,
                histogram_bucket_us: a.histogram,
                json: a.json.clone(),
            },
            source: a.source.as_deref().map(SourceFlag::parse).transpose()?,
            tls,
            identity,
            coordination,
        })
    }
}

/// A validated load, shared by every load command.
#[derive(Clone, Debug)]
pub struct LoadConfig {
    /// What the engine takes as given (`refill`: `--pipeline-mode`, or the protocol's
    /// default, `LoadOverrides::refill`; `ramp`: `--ramp`). `shape.threads` never
    /// exceeds `shape.connections` (`set_threads`).
    pub shape: LoadShape,
    /// The threads asked for (`-t`, or the default): more than `shape.threads` when
    /// there are fewer connections than that.
    pub threads_asked: usize,
    pub nodelay: bool,
    /// `--source`, when given (what a load without it uses: `commands::load_sources`).
    pub source: Option<SourceFlag>,
    pub tls: Option<Trust>,
    /// `--cert`/`--key`: the certificate this client shows (mutual TLS).
    pub identity: Option<Identity>,
    pub output: OutputOptions,
    /// `--shard`/`--start-at` (or a scheduler's environment): this run's place among
    /// several generators, and when it starts.
    pub coordination: Coordination,
    /// `--interval`: the length of one interval of the series (rows, histograms, the
    /// interval log); progress lines come every `output.progress`.
    pub interval: Duration,
    /// `--hlog`: where the interval log goes.
    pub hlog: Option<std::path::PathBuf>,
    /// The live terminal view draws the run (`--tui`, or stdout a terminal without
    /// `--no-tui`; never with `-q` or `--json -`, nor when stdout is not a terminal).
    pub tui: bool,
    /// A shard's whole run as given, for the config block (identical on every shard);
    /// `connections`, `plan` and `rate` above are then this shard's share. None
    /// outside a sharded run.
    pub whole: Option<WholeLoad>,
}

/// `--source` of a load: the kernel's choice, or these addresses (connection n of the
/// run from the (n mod count)-th).
#[derive(Clone, Debug, PartialEq)]
pub enum SourceFlag {
    Kernel,
    Addrs(Vec<IpAddr>),
}

impl SourceFlag {
    pub fn parse(text: &str) -> Result<SourceFlag> {
        if text.trim() == "kernel" {
            return Ok(SourceFlag::Kernel);
        }
        let v = crate::net::range::parse_ips("--source", text)?;
        if v.iter().any(|a| a.is_ipv4()) && v.iter().any(|a| a.is_ipv6()) {
            return Err(Error::usage(
                "--source mixes IPv4 and IPv6 addresses: give addresses of the target's family",
            ));
        }
        Ok(SourceFlag::Addrs(v))
    }
}

/// The totals of a sharded run before they were shared out (`shard::split`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WholeLoad {
    /// The threads asked for (each shard runs up to this many of its own).
    pub threads: usize,
    pub connections: usize,
    pub plan: Plan,
    pub rate: Option<f64>,
}

impl WholeLoad {
    /// The totals of a shape not shared out (yet, or at all).
    fn of(shape: &LoadShape, threads: usize) -> WholeLoad {
        WholeLoad {
            threads,
            connections: shape.connections,
            plan: shape.plan,
            rate: shape.rate,
        }
    }
}

/// What a protocol's own flags decide in place of shared load flags: AMQP's
/// --concurrency decides the threads and connections (in total), --inflight the pipeline,
/// --clients x --messages the request count; an amqps:// or https:// URL is the TLS
/// switch. Each stands for its flag and is validated once, like it.
#[derive(Clone, Copy, Debug, Default)]
pub struct LoadOverrides {
    pub threads: Option<usize>,
    pub connections: Option<usize>,
    pub pipeline: Option<usize>,
    pub requests: Option<u64>,
    /// The request count is made of whole units of this many (AMQP churn: a client's
    /// messages): shards get whole units.
    pub request_unit: Option<u64>,
    pub tls: Option<bool>,
    /// The protocol's pipelining policy when `--pipeline-mode` is not given (redis:
    /// burst, as redis-benchmark -P); an open loop keeps sliding whatever this says.
    pub refill: Option<Refill>,
}

impl LoadConfig {
    /// The shared load flags, read and validated once (`over`: what the protocol's
    /// own flags decided instead).
    pub fn from_args(a: &LoadArgs, over: LoadOverrides) -> Result<Self> {
        let threads_asked = at_least_one(
            "--threads",
            over.threads
                .or(a.threads)
                .unwrap_or_else(crate::sys::affinity_cpus),
        )?;
        let connections = at_least_one("--connections", over.connections.unwrap_or(a.connections))?;
        let pipeline = at_least_one("--pipeline", over.pipeline.unwrap_or(a.pipeline))?;
        let requests = over.requests.or(a.requests);
        if pipeline > MAX_PIPELINE {
            return Err(Error::usage(format!(
                "--pipeline must be at most {MAX_PIPELINE} requests in flight per connection"
            )));
        }
        let batch = a.iterations.is_some() || a.reconnects.is_some() || a.sleep.is_some();
        let plan = match (batch, &a.duration, requests) {
            (true, Some(_), _) | (true, _, Some(_)) => {
                return Err(Error::usage(
                    "--iterations/--reconnects/--sleep make a batch plan: combine it with neither -d nor -n",
                ))
            }
            (false, Some(_), Some(_)) => return Err(Error::usage("choose one of -d/--duration and -n/--requests")),
            (true, None, None) => {
                let iterations = a.iterations.unwrap_or(1);
                let reconnects = a.reconnects.unwrap_or(1);
                if iterations == 0 || reconnects == 0 {
                    return Err(Error::usage("--iterations and --reconnects must be at least 1"));
                }
                Plan::Batch {
                    iterations,
                    reconnects,
                    sleep: Duration::from_millis(a.sleep.unwrap_or(0)),
                }
            }
            (false, None, Some(0)) => return Err(Error::usage("-n/--requests must be at least 1")),
            (false, None, Some(n)) => Plan::Count(n),
            (false, d, None) => {
                let d = duration_flag("--duration", d.as_deref().unwrap_or("10s"))?;
                if d.is_zero() {
                    return Err(Error::usage("--duration must be longer than zero"));
                }
                Plan::Duration(d)
            }
        };
        if let Some(r) = a.rate {
            check_rate(r)?;
            if batch {
                return Err(Error::usage(
                    "--rate does not combine with a batch plan (--iterations/--reconnects)",
                ));
            }
        }
        let refill = pipeline_refill(a.pipeline_mode, over.refill, a.rate.is_some())?;
        let warmup = duration_flag("--warmup", &a.warmup)?;
        if batch && !warmup.is_zero() {
            return Err(Error::usage(
                "--warmup does not apply to a batch plan, which counts every reply",
            ));
        }
        let client = ClientConfig::from_args(&a.client, over.tls, LOAD_MIN_PROGRESS)?;
        if batch && client.ramp.is_some() {
            return Err(Error::usage(
                "--ramp does not apply to a batch plan, which opens every connection at once",
            ));
        }
        let (stages, plan, rate) = rate_stages(a, plan, batch, &warmup, &client)?;
        let connections = stage_connections(&stages, connections, over.connections)?;
        let memory_budget = memory_budget(a.memory_budget.as_deref())?;
        let interval = series_interval(&a.interval)?;
        let tui = (a.tui || !a.no_tui)
            && !client.output.quiet
            && client.output.json.as_deref() != Some(std::path::Path::new("-"))
            && std::io::IsTerminal::is_terminal(&std::io::stdout());
        let mut cfg = LoadConfig {
            interval,
            tui,
            hlog: a.hlog.clone(),
            shape: LoadShape {
                threads: threads_asked.min(connections),
                connections,
                pipeline,
                refill,
                plan,
                rate,
                warmup,
                ramp: client.ramp,
                stages,
                timeout: client.timeout,
                memory_budget,
                coalesce: a.coalesce == crate::flags::CoalesceMode::Auto,
            },
            threads_asked,
            nodelay: !a.no_nodelay,
            source: client.source,
            tls: client.tls,
            identity: client.identity,
            output: client.output,
            coordination: client.coordination,
            whole: None,
        };
        cfg.take_share(over.request_unit.unwrap_or(1))?;
        cfg.set_threads(threads_asked);
        Ok(cfg)
    }

    /// Sets the threads asked for; the load runs at most one per connection.
    pub fn set_threads(&mut self, asked: usize) {
        self.threads_asked = asked.max(1);
        self.shape.threads = self.threads_asked.min(self.shape.connections).max(1);
    }

    /// A shard keeps its share of the whole run's connections (each shard spreads its
    /// share over its own threads), of a count plan's requests (in whole `unit`s) and
    /// of the rate; the whole is kept for the config block. A shard left with no
    /// connection or no request is refused.
    fn take_share(&mut self, unit: u64) -> Result<()> {
        let Some(s) = self.coordination.shard.clone() else {
            return Ok(());
        };
        let whole = WholeLoad::of(&self.shape, self.threads_asked);
        let shape = &mut self.shape;
        let (i, n) = (s.index, s.count);
        shape.connections = s.share(shape.connections as u64) as usize;
        if shape.stages.is_connections() {
            // Each stage's target shared as -c is, so the shards' counts add up to it.
            shape.stages = shape.stages.with_targets(|t| s.share(t as u64) as f64);
        }
        if shape.connections == 0 {
            return Err(Error::usage(format!(
                "-c {} connections cannot be shared over {n} shards: shard {i} would get none (give -c {n} or more)",
                whole.connections
            )));
        }
        if let Plan::Count(total) = shape.plan {
            let unit = unit.max(1);
            let mine = s.share(total / unit) * unit;
            if mine == 0 {
                return Err(Error::usage(format!(
                    "-n {total} cannot be shared over {n} shards: shard {i} would send nothing"
                )));
            }
            shape.plan = Plan::Count(mine);
        }
        if let Some(r) = shape.rate {
            let mine = s.rate(r);
            if mine < MIN_RATE {
                return Err(Error::usage(format!(
                    "--rate {} cannot be shared over {n} shards: shard {i} would get less than 0.001 per second",
                    show_number(r)
                )));
            }
            shape.stages = shape.stages.scaled(mine / r);
            shape.rate = Some(mine);
        }
        self.whole = Some(whole);
        Ok(())
    }

    /// A shard's `portion`: its share of what the config block gives whole, named as
    /// there, and the base of its connection ids.
    pub fn portion_json(&self) -> serde_json::Value {
        json!({
            "threads": self.shape.threads,
            "connections": self.shape.connections,
            "plan": plan_json(self.shape.plan),
            "rate": self.shape.rate,
            "connection_id_base": self.coordination.shard.as_ref().map(|s| s.connection_id_base()),
        })
    }

    /// The config table's connections line: the total (for a shard, its share of the
    /// whole run's), how the threads share it, and why there are fewer threads than
    /// asked when there are.
    pub fn connections_text(&self) -> String {
        let (c, t) = (self.shape.connections, self.shape.threads);
        let threads = |n: usize| match n {
            1 => "thread".to_string(),
            n => format!("{n} threads"),
        };
        let mut text = match self.whole {
            Some(w) => format!("{c}, this shard's share of {}", w.connections),
            None => c.to_string(),
        };
        let mut notes = Vec::new();
        if t > 1 && c % t == 0 {
            notes.push(format!("{} per thread", c / t));
        } else if t > 1 {
            notes.push(format!(
                "{} on the first {}, {} on the other {}",
                c / t + 1,
                threads(c % t),
                c / t,
                threads(t - c % t)
            ));
        }
        if t < self.threads_asked {
            notes.push(format!(
                "{}, not {}: never more threads than connections",
                if t == 1 {
                    "1 thread".into()
                } else {
                    threads(t)
                },
                self.threads_asked
            ));
        }
        if !notes.is_empty() {
            text.push_str(&format!(" ({})", notes.join("; ")));
        }
        text
    }

    /// The plan as the config table shows it.
    pub fn plan_text(&self) -> String {
        self.with_ramp_and_shard(self.plan_text_alone())
    }

    /// A protocol's plan words with what every plan line adds: the ramp, then the
    /// shard (`amqp` words its own plan and adds these the same way).
    pub fn with_ramp_and_shard(&self, plan: String) -> String {
        let plan = self.with_ramp(plan);
        match self.coordination.plan_text() {
            Some(shard) => format!("{plan}; {shard}"),
            None => plan,
        }
    }

    fn plan_text_alone(&self) -> String {
        let plan = match self.shape.plan {
            Plan::Duration(d) if !self.shape.stages.is_empty() => format!(
                "for {} by stages: {}",
                crate::report::format::seconds(d),
                stages_text(&self.shape.stages)
            ),
            Plan::Duration(d) => format!("for {}", crate::report::format::seconds(d)),
            Plan::Count(n) => format!("{n} requests"),
            Plan::Batch {
                iterations,
                reconnects,
                sleep,
            } => format!(
                "batch: {reconnects} reconnects x {iterations} iterations, {} ms sleep",
                sleep.as_millis()
            ),
            Plan::Hold => "connections held until stopped".into(),
        };
        plan
    }

    /// A plan line with the ramp, when there is one, inside it: every protocol's
    /// plan row says how its connections start the same way.
    pub fn with_ramp(&self, plan: String) -> String {
        match self.ramp_text() {
            Some(ramp) => format!("{plan}; ramp: {ramp}"),
            None => plan,
        }
    }

    /// The ramp as the config table shows it.
    fn ramp_text(&self) -> Option<String> {
        let r = self.shape.ramp?;
        let what = match self.shape.rate {
            Some(_) => "the rate rising from 0 (every connection open from the start)",
            None => "connection starts",
        };
        Some(format!(
            "{what} spread over {}, {}",
            crate::report::format::seconds(r.over),
            if r.measured {
                "counted in the results"
            } else {
                "excluded from the results"
            }
        ))
    }

    /// The config table's pipeline line.
    pub fn pipeline_text(&self) -> String {
        match self.shape.refill {
            Refill::EachReply => format!("{} in flight per connection", self.shape.pipeline),
            Refill::WhenEmpty => format!(
                "{0} per connection in one write, the next {0} when all are answered (burst)",
                self.shape.pipeline
            ),
        }
    }

    /// The config table's rate line; `per_s` names the unit ("messages/s").
    pub fn rate_text(&self, per_s: &str) -> String {
        self.shape
            .rate
            .map(|r| match self.shape.stages.is_empty() {
                true => format!("{r} {per_s} open loop (latency from intended send time)"),
                false => format!(
                    "up to {r} {per_s} by stages, open loop (latency from intended send time)"
                ),
            })
            .unwrap_or_else(|| match self.shape.stages.is_connections() {
                true => "closed loop on each connection, the connections by stages".into(),
                false => "closed loop".into(),
            })
    }

    /// The config table's TLS line.
    pub fn tls_text(&self) -> String {
        if self.tls.is_some() { "on" } else { "off" }.to_string()
    }

    /// `--coalesce`: "auto" or "off" (the config table's line and the JSON's).
    pub fn coalesce_text(&self) -> &'static str {
        if self.shape.coalesce {
            "auto"
        } else {
            "off"
        }
    }

    /// Sockets this load needs at once (one per connection).
    pub fn sockets(&self) -> u64 {
        self.shape.connections as u64
    }

    /// The config block: for a shard, the whole run as given (the same on every
    /// shard) and how many shards share it; its own part is `portion_json`.
    pub fn to_json(&self) -> serde_json::Value {
        let shape = &self.shape;
        // A shard's threads are the ones asked for, the same on every shard (its own,
        // fewer when its share of connections is smaller, are in `portion_json`).
        let w = self.whole.unwrap_or(WholeLoad::of(shape, shape.threads));
        let mut v = json!({
            "threads": w.threads,
            "connections": w.connections,
            "pipeline": shape.pipeline,
            "pipeline_mode": shape.refill.name(),
            "plan": plan_json(w.plan),
            "rate": w.rate,
            "warmup_s": shape.warmup.as_secs_f64(),
            "interval_s": self.interval.as_secs_f64(),
            "ramp": shape.ramp.map(|r| r.to_json()),
            "stages": stages_json(&shape.stages),
            "timeout_s": shape.timeout.as_secs_f64(),
            "memory_budget_bytes": shape.memory_budget,
            "coalesce": self.coalesce_text(),
            "nodelay": self.nodelay,
            "tls": self.tls.is_some(),
        });
        if let Some(s) = &self.coordination.shard {
            v["shards"] = json!(s.count);
        }
        v
    }
}

/// Least `--memory-budget` taken: below it no connection could keep one read's bytes.
pub const MIN_MEMORY_BUDGET: u64 = 1 << 20;

/// `--memory-budget SIZE`, validated (the engine's default without it).
fn memory_budget(flag: Option<&str>) -> Result<usize> {
    let Some(text) = flag else {
        return Ok(crate::engine::DEFAULT_MEMORY_BUDGET);
    };
    let bytes = parse_bytes(text).map_err(|e| Error::usage(format!("--memory-budget: {e}")))?;
    if bytes < MIN_MEMORY_BUDGET {
        return Err(Error::usage(format!(
            "--memory-budget must be at least 1m (one megabyte), not {text}"
        )));
    }
    usize::try_from(bytes)
        .map_err(|_| Error::usage(format!("--memory-budget: '{text}' is too large")))
}

/// The pipelining policy: `--pipeline-mode` as given, else the protocol's default, else
/// sliding. An open loop sends each request at its scheduled time, so burst (a closed
/// loop's window) is refused with a rate, and a protocol's burst default gives way.
fn pipeline_refill(
    flag: Option<PipelineMode>,
    default: Option<Refill>,
    open_loop: bool,
) -> Result<Refill> {
    match flag {
        Some(PipelineMode::Burst) if open_loop => Err(Error::usage(
            "--pipeline-mode burst is a closed loop's policy: an open loop (-R/--rate) sends every request at its scheduled time; leave out one of them",
        )),
        Some(PipelineMode::Burst) => Ok(Refill::WhenEmpty),
        Some(PipelineMode::Sliding) => Ok(Refill::EachReply),
        None if open_loop => Ok(Refill::EachReply),
        None => Ok(default.unwrap_or_default()),
    }
}

fn plan_json(plan: Plan) -> serde_json::Value {
    match plan {
        Plan::Duration(d) => json!({"type": "duration", "duration_s": d.as_secs_f64()}),
        Plan::Count(n) => json!({"type": "count", "requests": n}),
        Plan::Batch {
            iterations,
            reconnects,
            sleep,
        } => {
            json!({"type": "batch", "iterations": iterations, "reconnects": reconnects, "sleep_ms": sleep.as_millis() as u64})
        }
        Plan::Hold => json!({"type": "hold"}),
    }
}

/// How a built-in server gets its TLS certificate.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum ServerTlsChoice {
    Off,
    Files { cert: PathBuf, key: PathBuf },
    SelfSigned,
}

/// What a protocol adds to its server's timing: a head timeout, reply pacing.
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
pub struct ProtocolTiming {
    pub header_timeout: Option<Duration>,
    pub pacing: crate::server::pacing::Pacing,
}

impl Default for ProtocolTiming {
    fn default() -> Self {
        ProtocolTiming {
            header_timeout: None,
            pacing: crate::server::pacing::Pacing::off(),
        }
    }
}

/// `wirebench serve ...`, validated (protocol-independent part). Serialized whole
/// into the plan of `serve --processes` workers, which never re-read the flags.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct ServeConfig {
    /// The first listen address (the only one unless --listen named a range).
    pub listen: SocketAddr,
    /// Every listen address, all on one port (empty with `unix`).
    pub listen_all: Vec<SocketAddr>,
    /// `--listen unix:/path`: the unix socket listened on instead (`listen` is then
    /// unspecified, 0.0.0.0:0).
    #[serde(default)]
    pub unix: Option<std::path::PathBuf>,
    /// Worker processes (1: serve in this process).
    pub processes: usize,
    pub threads: usize,
    pub max_conns_per_thread: usize,
    pub read_buffer: usize,
    pub tls: ServerTlsChoice,
    /// `--client-ca`: clients must show a certificate this CA signed (mutual TLS).
    #[serde(default)]
    pub client_ca: Option<PathBuf>,
    pub stats: Option<Duration>,
    /// `--stats-json`: where the intervals' rows go (checked writable by `from_args`).
    #[serde(default)]
    pub stats_json: Option<PathBuf>,
    pub debug: bool,
    pub nodelay: bool,
    /// --idle-timeout (None: never).
    pub idle_timeout: Option<Duration>,
}

/// A timeout flag: a duration, 0 for never.
pub fn timeout_flag(flag: &str, text: &str) -> Result<Option<Duration>> {
    let d = duration_flag(flag, text)?;
    Ok((!d.is_zero()).then_some(d))
}

/// `--delay` and `--stall`, validated.
pub fn pacing(a: &crate::flags::PacingArgs) -> Result<crate::server::pacing::Pacing> {
    use crate::server::pacing::{DelayDist, Pacing, Stall};
    let mut p = Pacing::off();
    if let Some(d) = &a.delay {
        p.delay = Some(DelayDist::parse(d).map_err(|e| Error::usage(format!("--delay: {e}")))?);
    }
    if let Some(s) = &a.stall {
        p.stall = Some(Stall::parse(s).map_err(|e| Error::usage(format!("--stall: {e}")))?);
    }
    Ok(p)
}

impl ServeConfig {
    pub fn from_args(a: &ServerArgs) -> Result<Self> {
        let unix = crate::net::unix::listen_path(&a.listen)?;
        let listen_all = if unix.is_some() {
            Vec::new()
        } else if crate::net::range::is_range(&a.listen) {
            crate::net::range::parse_socket_range("--listen", &a.listen)?
        } else {
            vec![crate::net::addr::resolve(&a.listen)?.0]
        };
        let listen = listen_all
            .first()
            .copied()
            .unwrap_or(SocketAddr::from(([0, 0, 0, 0], 0)));
        let processes = at_least_one("--processes", a.processes)?;
        if unix.is_some() && processes > 1 {
            return Err(Error::usage(
                "--processes shares a TCP port between processes (SO_REUSEPORT), which a unix socket cannot do: use --threads to serve unix: with several threads",
            ));
        }
        if processes > crate::procs::MAX_SERVER_PROCESSES {
            return Err(Error::usage(format!(
                "--processes {processes} is more than the {} server worker processes allowed (each holds ~20,000 connections here)",
                crate::procs::MAX_SERVER_PROCESSES
            )));
        }
        // Many processes on few CPUs: one thread each unless asked otherwise.
        let default_threads = if processes > 1 {
            1
        } else {
            crate::sys::affinity_cpus()
        };
        let threads = at_least_one("--threads", a.threads.unwrap_or(default_threads))?;
        let read_buffer =
            parse_bytes(&a.read_buffer).map_err(|e| Error::usage(format!("--read-buffer: {e}")))?;
        if !(512..=64 << 20).contains(&read_buffer) {
            return Err(Error::usage(
                "--read-buffer must be between 512 bytes and 64m",
            ));
        }
        let tls = match (a.tls, &a.cert, &a.key) {
            (false, None, None) => ServerTlsChoice::Off,
            (false, _, _) => return Err(Error::usage("--cert and --key only apply with --tls")),
            (true, None, None) => ServerTlsChoice::SelfSigned,
            (true, Some(c), Some(k)) => ServerTlsChoice::Files {
                cert: c.clone(),
                key: k.clone(),
            },
            (true, _, _) => {
                return Err(Error::usage(
                    "--tls takes both --cert and --key, or neither",
                ))
            }
        };
        if a.client_ca.is_some() && !a.tls {
            return Err(Error::usage(
                "--client-ca asks TLS clients for a certificate: add --tls",
            ));
        }
        let stats = a
            .stats
            .as_deref()
            .map(|s| duration_flag("--stats", s))
            .transpose()?;
        if stats.is_some_and(|d| d < Duration::from_millis(10)) {
            return Err(Error::usage("--stats interval must be at least 10ms"));
        }
        if let Some(path) = &a.stats_json {
            if stats.is_none() {
                return Err(Error::usage(
                    "--stats-json writes the --stats intervals: add --stats",
                ));
            }
            // Created (or emptied) now, so a path that cannot be written is refused
            // before the server listens.
            std::fs::File::create(path).map_err(|e| {
                Error::usage(format!(
                    "--stats-json {}: cannot write it: {e}",
                    path.display()
                ))
            })?;
        }
        Ok(ServeConfig {
            listen,
            listen_all,
            unix,
            processes,
            threads,
            max_conns_per_thread: a.max_conns_per_thread,
            read_buffer: read_buffer as usize,
            tls,
            client_ca: a.client_ca.clone(),
            stats,
            stats_json: a.stats_json.clone(),
            debug: a.debug,
            nodelay: !a.no_nodelay,
            idle_timeout: timeout_flag("--idle-timeout", &a.idle_timeout)?,
        })
    }
}

/// Checks a `--histogram` bucket width (microseconds).
pub fn check_histogram_bucket(bucket_us: Option<u64>) -> Result<()> {
    if bucket_us.is_some_and(|b| !(1..=3_600_000_000).contains(&b)) {
        return Err(Error::usage(
            "--histogram bucket width must be between 1 microsecond and 3,600,000,000 (one hour)",
        ));
    }
    Ok(())
}

/// The client's certificate from `--cert` and `--key`: both or neither, and only for TLS.
pub fn client_identity(
    tls: bool,
    cert: Option<&PathBuf>,
    key: Option<&PathBuf>,
) -> Result<Option<Identity>> {
    match (cert, key) {
        (None, None) => Ok(None),
        (Some(_), Some(_)) if !tls => Err(Error::usage(
            "--cert and --key are a TLS client certificate: use an https://, wss://, amqps:// URL or --tls",
        )),
        (Some(c), Some(k)) => Ok(Some(Identity {
            cert: c.clone(),
            key: k.clone(),
        })),
        _ => Err(Error::usage(
            "a client certificate takes both --cert and --key",
        )),
    }
}

/// The client's TLS trust from `--tls`, `--insecure` and `--ca`; None without `--tls`.
pub fn client_trust(tls: bool, insecure: bool, ca: Option<&PathBuf>) -> Result<Option<Trust>> {
    Ok(match (tls, insecure, ca) {
        (false, true, _) | (false, _, Some(_)) => {
            return Err(Error::usage("--insecure and --ca only apply with --tls"))
        }
        (true, true, Some(_)) => return Err(Error::usage("choose one of --insecure and --ca")),
        (true, true, None) => Some(Trust::Insecure),
        (true, false, Some(p)) => Some(Trust::CaFile(p.clone())),
        (true, false, None) => Some(Trust::System),
        (false, false, None) => None,
    })
}
