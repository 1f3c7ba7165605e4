//! ghz as a suite's generator of gRPC loads: the load's `grpc` block as ghz's flags
//! (`--call`, `--proto`, `-d` for `data`, `-B` for `data_file`), a point's connections
//! as `--connections` with `-c` workers = connections x pipeline (ghz spreads its
//! workers evenly over its connections, each with one call in flight, so the pipeline
//! is the streams per connection), `-z` with `--duration-stop wait` (calls in flight
//! at the end are waited for and counted, as the server counts them) or `-n`, the
//! timeout as `-t`, the threads as `--cpus`; and the parser of its `--format json`
//! result file: the count, the calls by status, and the latency of every OK call from
//! its per-call details (nanoseconds).

use super::codes;
use super::plugin::BLOCK;
use super::suite_settings::GrpcSuite;
use crate::proto::entry::{RunFor, SuitePoint};
use crate::proto::generator::{with_ext, Accounting, Ask, Command, ExternalRun, Generator};
use crate::stats::Unit;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// ghz, set up for a suite load.
pub struct Ghz<'a>(pub &'a GrpcSuite);

impl Generator for Ghz<'_> {
    fn name(&self) -> &'static str {
        "ghz"
    }

    fn refuses(&self, ask: Ask) -> Option<&'static str> {
        (ask == Ask::Rate).then_some(
            "paces its workers (--rps) rather than sending each call when it is due, so a late call is timed from when it went out (use generator = \"wirebench\")",
        )
    }

    fn command(&self, p: &SuitePoint<'_>, prefix: &Path) -> Command {
        let out = with_ext(prefix, ".ghz.json");
        let mut a: Vec<String> = vec!["ghz".into(), "--insecure".into()];
        a.extend(["--call".into(), self.0.call.clone()]);
        for pair in self.0.message.chunks(2) {
            let flag = match pair[0].as_str() {
                "--data" => "-d",
                "--data-file" => "-B",
                other => other,
            };
            a.extend([flag.to_string(), pair[1].clone()]);
        }
        a.extend([
            "--connections".into(),
            p.connections.to_string(),
            "-c".into(),
            (p.connections * p.pipeline).to_string(),
            "--cpus".into(),
            p.threads.to_string(),
        ]);
        match p.run_for {
            RunFor::Duration(d) => a.extend([
                "-z".into(),
                format!("{}ms", d.as_millis()),
                "--duration-stop".into(),
                "wait".into(),
            ]),
            RunFor::Count(n) => a.extend(["-n".into(), n.to_string()]),
        }
        a.extend([
            "-t".into(),
            format!("{}ms", p.timeout.as_millis()),
            "-O".into(),
            "json".into(),
            "-o".into(),
            out.display().to_string(),
            p.addr.to_string(),
        ]);
        Command {
            argv: a,
            inputs: Vec::new(),
            aux: Some(out),
        }
    }

    fn parse(
        &self,
        output: &str,
        aux: Option<&str>,
        _p: &SuitePoint<'_>,
    ) -> Result<ExternalRun, String> {
        match aux {
            Some(json) if !json.trim().is_empty() => parse(json),
            _ => Err(match output.lines().find(|l| !l.trim().is_empty()) {
                Some(l) => format!("ghz wrote no result ({})", l.trim()),
                None => "ghz wrote no result".into(),
            }),
        }
    }
}

/// ghz's status name ("DeadlineExceeded", Go's `codes.Code` text) as wirebench's
/// (`DEADLINE_EXCEEDED`, `proto::grpc::codes`), OTHER for one it does not know.
pub fn status_name(ghz: &str) -> &'static str {
    let mut upper = String::with_capacity(ghz.len() + 4);
    for (i, c) in ghz.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            upper.push('_');
        }
        upper.push(c.to_ascii_uppercase());
    }
    match upper.as_str() {
        "O_K" => "OK",
        "CANCELED" => "CANCELLED",
        u => codes::NAMES
            .iter()
            .copied()
            .find(|n| *n == u)
            .unwrap_or("OTHER"),
    }
}

fn count(v: &Value, what: &str) -> Result<u64, String> {
    v.as_u64()
        .ok_or_else(|| format!("ghz's `{what}` is not a count: {v}"))
}

/// ghz's `--format json` result, read into the shared shape.
pub fn parse(json: &str) -> Result<ExternalRun, String> {
    let doc: Value =
        serde_json::from_str(json).map_err(|e| format!("ghz's result is not JSON ({e})"))?;
    let total = count(&doc["count"], "count")?;
    let elapsed_ns = count(&doc["total"], "total")?;
    let mut by_status: BTreeMap<&'static str, u64> = BTreeMap::new();
    if let Some(m) = doc["statusCodeDistribution"].as_object() {
        for (name, n) in m {
            let at = by_status.entry(status_name(name)).or_insert(0);
            *at = at.saturating_add(count(n, name)?);
        }
    } else if !doc["statusCodeDistribution"].is_null() {
        return Err("ghz's `statusCodeDistribution` is not a table".into());
    }
    let ok = by_status.get("OK").copied().unwrap_or(0);
    let answered = by_status.values().fold(0u64, |a, n| a.saturating_add(*n));
    let mut run = ExternalRun {
        tool: "ghz",
        elapsed_s: elapsed_ns as f64 / 1e9,
        ok,
        resolution_us: 1,
        bytes_sent_counts: Some("nothing: ghz reports no byte counts"),
        unit: Some(Unit::new("calls", "answered OK", true)),
        ..Default::default()
    };
    run.add_error("status", answered - ok);
    run.accounting = Accounting::check(total, answered, "count != calls by status");
    let details = match &doc["details"] {
        Value::Null => &[][..],
        Value::Array(d) => d.as_slice(),
        _ => return Err("ghz's `details` is not a list".into()),
    };
    for d in details {
        if d["status"].as_str() == Some("OK") {
            run.latency.record(count(&d["latency"], "latency")?);
        }
    }
    if run.accounting == Accounting::Holds {
        let n = details.len() as u64;
        run.accounting = Accounting::check(total, n, "count != calls in its details");
    }
    let block = serde_json::to_value(&by_status).map_err(|e| e.to_string())?;
    run.blocks.insert(BLOCK.to_string(), block);
    Ok(run)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ghz_status_names_are_wirebench_s() {
        let names = [
            ("OK", "OK"),
            ("Canceled", "CANCELLED"),
            ("DeadlineExceeded", "DEADLINE_EXCEEDED"),
            ("Unavailable", "UNAVAILABLE"),
            ("Unauthenticated", "UNAUTHENTICATED"),
            ("Code(42)", "OTHER"),
            ("", "OTHER"),
        ];
        for (ghz, ours) in names {
            assert_eq!(status_name(ghz), ours, "{ghz}");
        }
    }

    #[test]
    fn counts_that_do_not_add_up_are_said() {
        let r = parse(r#"{"count": 3, "total": 1000000000, "statusCodeDistribution": {"OK": 2}, "details": null}"#).unwrap();
        assert_eq!(
            r.accounting,
            Accounting::Broken("count != calls by status: 3 != 2".into())
        );
        let r = parse(r#"{"count": 2, "total": 5, "statusCodeDistribution": {"OK": 2}, "details": [{"latency": 7, "status": "OK"}]}"#).unwrap();
        assert_eq!(
            r.accounting,
            Accounting::Broken("count != calls in its details: 2 != 1".into())
        );
        assert_eq!(r.latency.count(), 1);
        assert!(parse("[]").is_err());
        assert!(parse(r#"{"count": -1, "total": 5}"#).is_err());
    }
}
