//! h2load: HTTP/1.1 with `--h1`, or h2c by prior knowledge for a load of
//! `version = "2"` (the point's pipeline its streams per connection, `-m`); the parser
//! of its summary and of its --log-file (one line per request: start time, status,
//! duration in microseconds), the same for both.

use super::super::suite_settings::{HttpSuite, Version};
use super::{whole_secs, NO_RATE};
use crate::proto::entry::{RunFor, SuitePoint};
use crate::proto::generator::{with_ext, Accounting, Ask, Command, ExternalRun, Generator};
use std::path::Path;

/// h2load, set up for a suite load.
pub struct H2load<'a>(pub &'a HttpSuite);

impl Generator for H2load<'_> {
    fn name(&self) -> &'static str {
        "h2load"
    }

    fn refuses(&self, ask: Ask) -> Option<&'static str> {
        (ask == Ask::Rate).then_some(NO_RATE)
    }

    fn command(&self, p: &SuitePoint<'_>, prefix: &Path) -> Command {
        let log = with_ext(prefix, ".log");
        let mut c = Command::default();
        let a = &mut c.argv;
        a.push("h2load".into());
        if self.0.version == Version::H1 {
            a.push("--h1".into());
        }
        a.push("-c".into());
        a.extend([
            p.connections.to_string(),
            "-t".into(),
            p.threads.to_string(),
            "-m".into(),
            p.pipeline.to_string(),
        ]);
        match p.run_for {
            RunFor::Duration(d) => a.extend(["-D".into(), whole_secs(d).to_string()]),
            RunFor::Count(n) => a.extend(["-n".into(), n.to_string()]),
        }
        if p.size > 0 {
            let body = with_ext(prefix, ".body");
            a.extend([
                "-d".into(),
                body.display().to_string(),
                "-H".into(),
                "Content-Type: text/plain".into(),
            ]);
            c.inputs.push((body, vec![b'x'; p.size as usize]));
        }
        c.argv.extend([
            "--log-file".into(),
            log.display().to_string(),
            self.0.url(p.addr),
        ]);
        c.aux = Some(log);
        c
    }

    fn parse(
        &self,
        output: &str,
        aux: Option<&str>,
        p: &SuitePoint<'_>,
    ) -> Result<ExternalRun, String> {
        let want = match self.0.version {
            Version::H1 => "http/1.1",
            Version::H2 => "h2c",
        };
        match application_protocol(output) {
            Some(spoke) if spoke != want => Err(format!(
                "h2load spoke {spoke}, not the {want} the load's version asks for"
            )),
            _ => parse(output, aux, p.size),
        }
    }
}

/// What h2load says it spoke ("Application protocol: h2c"), once connected.
pub fn application_protocol(out: &str) -> Option<&str> {
    line(out, "Application protocol: ").map(str::trim)
}

/// "requests: 5000 total, 5000 started, ..." -> the number before `what`.
fn count_before(line: &str, what: &str) -> Option<u64> {
    line.split(',').find_map(|part| {
        let mut w = part.split_whitespace().rev();
        let name = w.next()?;
        let n = w.next()?;
        (name == what).then(|| n.parse().ok()).flatten()
    })
}

fn line<'a>(out: &'a str, prefix: &str) -> Option<&'a str> {
    out.lines().find_map(|l| l.strip_prefix(prefix))
}

/// "finished in 37.55ms, ..." -> seconds.
fn finished_s(out: &str) -> Option<f64> {
    let t = line(out, "finished in ")?.split(',').next()?.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
    let (n, unit) = t.split_at(split);
    let v: f64 = n.parse().ok()?;
    Some(match unit {
        "s" => v,
        "ms" => v / 1e3,
        "us" => v / 1e6,
        _ => return None,
    })
}

pub fn parse(out: &str, log: Option<&str>, request_bytes: u64) -> Result<ExternalRun, String> {
    let reqs = line(out, "requests: ")
        .ok_or("h2load printed no 'requests:' line (did the run finish?)")?;
    let codes = line(out, "status codes: ").ok_or("h2load printed no 'status codes:' line")?;
    let get =
        |l: &str, w: &str| count_before(l, w).ok_or(format!("h2load's line lacks '{w}': {l}"));
    let (total, done, errored, timeout) = (
        get(reqs, "total")?,
        get(reqs, "done")?,
        get(reqs, "errored")?,
        get(reqs, "timeout")?,
    );
    let ok = get(codes, "2xx")?;
    let non2xx = get(codes, "3xx")? + get(codes, "4xx")? + get(codes, "5xx")?;
    let traffic = line(out, "traffic: ")
        .and_then(|t| t.split('(').nth(1)?.split(')').next()?.parse::<u64>().ok())
        .unwrap_or(0);
    let mut run = ExternalRun {
        tool: "h2load",
        elapsed_s: finished_s(out).ok_or("h2load printed no 'finished in' time")?,
        ok,
        bytes_received: traffic,
        bytes_sent: done * request_bytes,
        resolution_us: 1,
        ..Default::default()
    };
    if done == 0 && out.contains("unable to connect") {
        return Err("h2load: could not connect to the server".into());
    }
    // Every request h2load counts in its total either got a response (counted by
    // status class) or errored on the socket (timeouts included).
    run.accounting = Accounting::check(
        total,
        ok + non2xx + errored,
        "requests total != responses by status + errored",
    );
    run.add_error("status", non2xx);
    run.add_error("timeout", timeout);
    // errored: requests that failed on the socket; others that are neither 2xx nor counted.
    run.add_error("failed", errored.saturating_sub(timeout));
    if let Some(log) = log {
        for l in log.lines().filter(|l| !l.trim().is_empty()) {
            let us: u64 = l
                .split('\t')
                .nth(2)
                .and_then(|x| x.trim().parse().ok())
                .ok_or_else(|| format!("h2load log line is not understood: '{l}'"))?;
            run.latency.record(us * 1000);
        }
    }
    Ok(run)
}
