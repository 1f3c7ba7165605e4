//! The one way to make a `RunResult`: the load commands, `connect`, the suite's
//! external generators (wrk, ab, h2load) and the merge all build through here. What every result
//! must say is one struct literal (`Measured`), so no producer can leave a field out;
//! what follows from it (throughput, per-request CPU, histogram blobs, environment,
//! schema version, the outcome) is computed here once. A protocol's own figures enter
//! as named JSON blocks through `extra`, so this file names no protocol.

use super::latency::Latency;
use super::rate::RateFigures;
use super::result::{
    per_item, ClientProcess, Cpu, HistogramBlob, Outcome, RunResult, Throughput, Totals, Warmup,
    SCHEMA_VERSION,
};
use super::snapshot::IntervalRow;
use super::unit::Unit;
use crate::sys::Environment;
use std::collections::BTreeMap;

/// What every result must say: all of it, always.
pub struct Measured<'a> {
    /// The command that produced it, as the protocol names itself.
    pub kind: &'a str,
    pub target: String,
    /// The validated run configuration, as the protocol describes it.
    pub config: serde_json::Value,
    pub started_unix_ms: u64,
    /// The measured phase only.
    pub elapsed_s: f64,
    pub totals: Totals,
    /// Request and connection errors by kind, only the kinds that occurred.
    pub errors: BTreeMap<String, u64>,
    pub unit: Unit,
    /// Latency from the intended send time, nanoseconds.
    pub latency: &'a Latency,
    /// The generator's CPU time over the measured phase, seconds.
    pub client_cpu_s: f64,
}

/// A `RunResult` under construction; `finish` hands it over.
pub struct RunResultBuilder {
    r: RunResult,
}

impl RunResult {
    pub fn builder(m: Measured<'_>) -> RunResultBuilder {
        let secs = m.elapsed_s;
        let per_sec = |v: u64| if secs > 0.0 { v as f64 / secs } else { 0.0 };
        let t = &m.totals;
        let throughput = Throughput {
            msgs_per_s: per_sec(t.ok),
            mb_per_s: m.unit.replies.then(|| per_sec(t.bytes_received) / 1e6),
            mb_sent_per_s: per_sec(t.bytes_sent) / 1e6,
        };
        let cpu = Cpu {
            client_s: m.client_cpu_s,
            client_us_per_msg: per_item(t.ok, m.client_cpu_s),
            server_s: None,
            server_us_per_msg: None,
        };
        RunResultBuilder {
            r: RunResult {
                schema_version: SCHEMA_VERSION,
                kind: m.kind.to_string(),
                started_unix_ms: m.started_unix_ms,
                target: m.target,
                config: m.config,
                environment: Environment::capture(),
                elapsed_s: secs,
                errors: m.errors,
                error_texts: Default::default(),
                throughput,
                latency_us: m.latency.summary(),
                latency_uncorrected_us: None,
                histogram: HistogramBlob::of(m.latency),
                histogram_uncorrected: None,
                intervals: Vec::new(),
                warmup: Warmup::default(),
                cpu,
                client_process: None,
                server: None,
                outcome: Outcome {
                    success: true,
                    reason: None,
                },
                extras: BTreeMap::new(),
                rate: None,
                stages: None,
                thresholds: Vec::new(),
                search: None,
                shard: None,
                merge: None,
                machine: None,
                totals: m.totals,
                unit: m.unit,
            },
        }
    }
}

impl RunResultBuilder {
    /// The machine it ran on, when it is not this one now (a merge of results made
    /// elsewhere: their hosts, `stats::merge`).
    pub fn environment(mut self, e: Environment) -> Self {
        self.r.environment = e;
        self
    }

    /// Open loop: latency from the actual send time, beside the corrected one.
    pub fn uncorrected(mut self, l: Option<&Latency>) -> Self {
        self.r.latency_uncorrected_us = l.map(Latency::summary);
        self.r.histogram_uncorrected = l.map(HistogramBlob::of);
        self
    }

    /// The interval rows; reply bandwidth is dropped where the counted items have no reply.
    pub fn intervals(mut self, rows: &[IntervalRow]) -> Self {
        let replies = self.r.unit.replies;
        self.r.intervals = rows
            .iter()
            .map(|row| IntervalRow {
                mb_per_s: row.mb_per_s.filter(|_| replies),
                ..row.clone()
            })
            .collect();
        self
    }

    /// What the peers said when things failed (`stats::ErrorTexts`).
    pub fn error_texts(mut self, t: super::error_texts::ErrorTexts) -> Self {
        self.r.error_texts = t;
        self
    }

    pub fn warmup(mut self, w: Warmup) -> Self {
        self.r.warmup = w;
        self
    }

    /// The measured server's CPU time, seconds, when the run knows it.
    pub fn server_cpu(mut self, server_s: Option<f64>) -> Self {
        self.r.set_server_cpu(server_s);
        self
    }

    /// The built-in server's counters, when the run started one.
    pub fn server(mut self, counters: Option<serde_json::Value>) -> Self {
        self.r.server = counters;
        self
    }

    pub fn client_process(mut self, p: Option<ClientProcess>) -> Self {
        self.r.client_process = p;
        self
    }

    pub fn rate(mut self, r: Option<RateFigures>) -> Self {
        self.r.rate = r;
        self
    }

    /// `--stages`: each stage's figures.
    pub fn stages(mut self, s: Option<Vec<super::stages::StageFigures>>) -> Self {
        self.r.stages = s;
        self
    }

    /// A protocol's own block, at the top level of the JSON under `name`.
    pub fn extra(mut self, name: &str, block: serde_json::Value) -> Self {
        self.r.extras.insert(name.to_string(), block);
        self
    }

    /// The result, successful when `fell_short` is None, else fallen short for that reason.
    pub fn finish(mut self, fell_short: Option<String>) -> RunResult {
        self.r.outcome = Outcome {
            success: fell_short.is_none(),
            reason: fell_short,
        };
        self.r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn measured(latency: &Latency, totals: Totals, replies: bool) -> Measured<'_> {
        Measured {
            kind: "test",
            target: "127.0.0.1:1".into(),
            config: serde_json::json!({}),
            started_unix_ms: 1,
            elapsed_s: 2.0,
            totals,
            errors: BTreeMap::new(),
            unit: Unit::new("items", "done", replies),
            latency,
            client_cpu_s: 0.5,
        }
    }

    #[test]
    fn derived_figures_follow_from_what_was_measured() {
        let mut l = Latency::new();
        l.record(1_000);
        let totals = Totals {
            sent: 10,
            ok: 10,
            bytes_sent: 4_000_000,
            bytes_received: 2_000_000,
            invariant_holds: Some(true),
            ..Default::default()
        };
        let r = RunResult::builder(measured(&l, totals.clone(), true))
            .server_cpu(Some(1.0))
            .finish(None);
        assert_eq!(r.throughput.msgs_per_s, 5.0);
        assert_eq!(r.throughput.mb_per_s, Some(1.0));
        assert_eq!(r.throughput.mb_sent_per_s, 2.0);
        assert_eq!(r.cpu.client_us_per_msg, Some(50_000.0));
        assert_eq!(r.cpu.server_us_per_msg, Some(100_000.0));
        assert_eq!(r.histogram.count, 1);
        assert!(r.outcome.success);
        let silent = RunResult::builder(measured(&l, totals, false)).finish(Some("why".into()));
        assert_eq!(silent.throughput.mb_per_s, None);
        assert!(!silent.outcome.success);
        assert_eq!(silent.outcome.reason.as_deref(), Some("why"));
    }

    #[test]
    fn an_extra_block_sits_at_the_top_level_and_reads_back() {
        let l = Latency::new();
        let r = RunResult::builder(measured(&l, Totals::default(), true))
            .extra("figures", serde_json::json!({"n": 3}))
            .finish(None);
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(v["figures"]["n"], 3);
        assert!(v.get("extras").is_none());
        let back: RunResult = serde_json::from_value(v).unwrap();
        assert_eq!(back.extra("figures"), Some(&serde_json::json!({"n": 3})));
    }
}
