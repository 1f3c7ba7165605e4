//! wrk: its command line, the Lua script the suite hands it (method, body, and a
//! `done` hook that prints wrk's exact totals and its whole latency histogram), and
//! the parser of what it prints.
//!
//! The accounting check (`invariant_holds`) sets two counts wrk keeps apart against
//! each other, at no cost to wrk's hot path (no Lua `response()` callback): its
//! completed responses (`summary.requests`, a per-thread counter) and its latency
//! histogram (one atomic record per completed response, wrk.c `response_complete`;
//! a response slower than `--timeout` is not recorded but counted as a timeout; one
//! record per response because the script has no `request()` hook, so wrk does not
//! pipeline). The histogram wrk hands `done` has had its coordinated-omission
//! correction added (stats.c `stats_correct`); `recorded` takes it back out.

use super::super::suite_settings::HttpSuite;
use super::{h1_only, whole_secs, NO_PIPELINE, NO_RATE};
use crate::proto::entry::{RunFor, SuitePoint};
use crate::proto::generator::{with_ext, Accounting, Ask, Command, ExternalRun, Generator};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// wrk, set up for a suite load.
pub struct Wrk<'a>(pub &'a HttpSuite);

impl Generator for Wrk<'_> {
    fn name(&self) -> &'static str {
        "wrk"
    }

    fn refuses(&self, ask: Ask) -> Option<&'static str> {
        Some(match ask {
            Ask::Rate => NO_RATE,
            Ask::Pipeline => NO_PIPELINE,
            Ask::Count => "runs only for a duration",
        })
    }

    fn refuses_settings(&self) -> Option<&'static str> {
        h1_only(self.0)
    }

    fn command(&self, p: &SuitePoint<'_>, prefix: &Path) -> Command {
        let lua = with_ext(prefix, ".lua");
        let secs = match p.run_for {
            RunFor::Duration(d) => whole_secs(d),
            RunFor::Count(_) => 1,
        };
        let argv = vec![
            "wrk".into(),
            "-t".into(),
            p.threads.to_string(),
            "-c".into(),
            p.connections.to_string(),
            "-d".into(),
            format!("{secs}s"),
            "--timeout".into(),
            format!("{}s", whole_secs(p.timeout)),
            "--latency".into(),
            "-s".into(),
            lua.display().to_string(),
            self.0.url(p.addr),
        ];
        Command {
            argv,
            inputs: vec![(lua, script(&self.0.method, p.size).into_bytes())],
            aux: None,
        }
    }

    fn parse(
        &self,
        output: &str,
        _aux: Option<&str>,
        p: &SuitePoint<'_>,
    ) -> Result<ExternalRun, String> {
        parse(output, p.size)
    }
}

/// The Lua script: the request, and a dump of the summary and every histogram bucket.
pub fn script(method: &str, body_size: u64) -> String {
    let mut s = format!("wrk.method = \"{method}\"\n");
    if body_size > 0 {
        s.push_str(&format!(
            "wrk.body = string.rep(\"x\", {body_size})\nwrk.headers[\"Content-Type\"] = \"text/plain\"\n"
        ));
    }
    s.push_str(
        r#"done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("wirebench-wrk summary duration_us=%d requests=%d bytes=%d connect=%d read=%d write=%d status=%d timeout=%d\n",
    summary.duration, summary.requests, summary.bytes, e.connect, e.read, e.write, e.status, e.timeout))
  for i = 1, #latency do
    local v, c = latency(i)
    io.write(string.format("wirebench-wrk latency %d %d\n", v, c))
  end
end
"#,
    );
    s
}

fn kv(line: &str, key: &str) -> Option<u64> {
    line.split_whitespace()
        .find_map(|w| w.strip_prefix(key)?.strip_prefix('=')?.parse().ok())
}

/// Parses wrk's output; `request_bytes` is the size of one request (wrk does not count them).
pub fn parse(out: &str, request_bytes: u64) -> Result<ExternalRun, String> {
    if let Some(l) = out.lines().find(|l| l.starts_with("unable to connect")) {
        return Err(format!("wrk: {}", l.trim()));
    }
    let summary = out
        .lines()
        .find(|l| l.starts_with("wirebench-wrk summary"))
        .ok_or("wrk printed no summary (did the run finish?)")?;
    let get = |k: &str| kv(summary, k).ok_or(format!("wrk summary lacks {k}"));
    let requests = get("requests")?;
    let status = get("status")?;
    let timeout = get("timeout")?;
    let duration_us = get("duration_us")?;
    let mut run = ExternalRun {
        tool: "wrk",
        elapsed_s: duration_us as f64 / 1e6,
        ok: requests.saturating_sub(status),
        connect_errors: get("connect")?,
        bytes_received: get("bytes")?,
        bytes_sent: requests * request_bytes,
        resolution_us: 1,
        ..Default::default()
    };
    // wrk's `requests` are the responses it completed, `status` those of them that were
    // not 2xx/3xx: the two must split the whole (its socket errors are counted apart).
    run.accounting =
        Accounting::check(requests, run.ok + status, "responses != good + non-2xx/3xx");
    run.add_error("status", status);
    run.add_error("read", get("read")?);
    run.add_error("write", get("write")?);
    run.add_error("timeout", timeout);
    // The standard text must agree with the hook's figures: catches a mixed-up file.
    let printed = out
        .lines()
        .find(|l| l.contains(" requests in "))
        .and_then(|l| l.split_whitespace().next()?.parse::<u64>().ok());
    if printed.is_some_and(|p| p != requests) {
        return Err("wrk's printed request count disagrees with its summary hook".into());
    }
    let mut buckets = Vec::new();
    for l in out
        .lines()
        .filter(|l| l.starts_with("wirebench-wrk latency "))
    {
        let mut f = l.split_whitespace().skip(2);
        let us: u64 = f
            .next()
            .and_then(|x| x.parse().ok())
            .ok_or("bad wrk latency line")?;
        let count: u64 = f
            .next()
            .and_then(|x| x.parse().ok())
            .ok_or("bad wrk latency line")?;
        // A bucket's value in microseconds, recorded `count` times in nanoseconds.
        run.latency.record_n(us * 1000, count);
        buckets.push((us, count));
    }
    if run.accounting == Accounting::Holds {
        run.accounting = match connections(out) {
            // Every completed response was either timed or counted as a timeout.
            Some(c) => match recorded(&buckets, duration_us, requests, c) {
                Some(timed) => Accounting::check(
                    requests,
                    timed.saturating_add(timeout),
                    "responses != timed (latency histogram) + timeouts",
                ),
                None => Accounting::Broken(
                    "the latency histogram is not one wrk's correction could have made".into(),
                ),
            },
            // wrk always prints it; output without it cannot be checked.
            None => Accounting::NotCheckable,
        };
    }
    Ok(run)
}

/// `-c` as wrk states it in its header: "  1 threads and 10 connections".
fn connections(out: &str) -> Option<u64> {
    let l = out.lines().find(|l| l.ends_with(" connections"))?;
    let mut w = l.split_whitespace().rev();
    w.next()?;
    w.next()?.parse().ok().filter(|c| *c > 0)
}

/// How many latencies wrk recorded, from the histogram it hands `done`
/// (`(microseconds, count)` buckets) with its coordinated-omission correction taken
/// out; None if no recording could have been corrected into it.
///
/// wrk (stats.c `stats_correct`, after the run) takes `e` = duration_us /
/// (requests / connections), and for every recorded bucket `n` adds its count to the
/// buckets `n - e`, `n - 2e`, ... while they are above `e`. The additions only go
/// down, so the highest bucket is as recorded, and walking down, a bucket `m > e`
/// holds the recordings of every higher bucket with the same remainder mod `e`:
/// subtracting their running sum leaves its own. Its reads are of recorded counts
/// alone (it walks up, adding below), hence one pass.
fn recorded(
    buckets: &[(u64, u64)],
    duration_us: u64,
    requests: u64,
    connections: u64,
) -> Option<u64> {
    // One count per bucket (wrk prints each once), highest first.
    let mut b: BTreeMap<u64, u64> = BTreeMap::new();
    for (us, count) in buckets {
        *b.entry(*us).or_default() += count;
    }
    // wrk corrects only when each connection averaged one response at least; an `e`
    // of 0 would have kept it correcting forever, so it did not print at all.
    let e = match requests / connections.max(1) {
        0 => 0,
        per_connection => duration_us / per_connection,
    };
    // Recorded counts of the buckets walked so far, by remainder mod `e`.
    let mut above: HashMap<u64, u64> = HashMap::new();
    let mut total = 0u64;
    for (us, count) in b.into_iter().rev() {
        let added = match e {
            0 => 0,
            e if us > e => above.get(&(us % e)).copied().unwrap_or(0),
            _ => 0,
        };
        let own = count.checked_sub(added)?;
        if e > 0 {
            let sum = above.entry(us % e).or_default();
            *sum = sum.saturating_add(own);
        }
        total = total.saturating_add(own);
    }
    Some(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// wrk's stats.c `stats_correct`, as it is, on a histogram of 1 us buckets.
    fn wrk_correct(hist: &mut BTreeMap<u64, u64>, expected: u64) {
        let max = hist.keys().max().copied().unwrap_or(0);
        for n in expected * 2..=max {
            let count = hist.get(&n).copied().unwrap_or(0);
            let mut m = n as i64 - expected as i64;
            while count > 0 && m > expected as i64 {
                *hist.entry(m as u64).or_default() += count;
                m -= expected as i64;
            }
        }
    }

    #[test]
    fn the_correction_is_taken_back_out_exactly() {
        // 4 connections, 40 responses in 1000 us: e = 1000 / 10 = 100 us.
        let mut hist: BTreeMap<u64, u64> =
            [(50, 30), (120, 4), (250, 3), (420, 2), (999, 1)].into();
        let recorded_n: u64 = hist.values().sum();
        wrk_correct(&mut hist, 100);
        let corrected: Vec<(u64, u64)> = hist.into_iter().collect();
        let dumped: u64 = corrected.iter().map(|(_, c)| c).sum();
        // 250 adds 1 (150) x3, 420 adds 3 x2, 999 adds 8: 3 + 6 + 8.
        assert_eq!(dumped, recorded_n + 17);
        assert_eq!(recorded(&corrected, 1000, 40, 4), Some(40));
        // No correction when a connection averaged less than one response.
        assert_eq!(recorded(&[(10, 3)], 1000, 3, 4), Some(3));
    }

    #[test]
    fn a_histogram_no_correction_could_make_is_refused() {
        // e = 100: a recording at 350 adds one to 250 and to 150.
        assert_eq!(
            recorded(&[(150, 1), (250, 1), (350, 1)], 1000, 40, 4),
            Some(1)
        );
        // Two at 350 would have added two to 250, which holds one.
        assert_eq!(recorded(&[(250, 1), (350, 2)], 1000, 40, 4), None);
    }

    fn output(requests: u64, timeout: u64, buckets: &[(u64, u64)]) -> String {
        let mut s = format!(
            "Running 1s test @ http://127.0.0.1:1/\n  1 threads and 4 connections\n  {requests} requests in 1.00s, 1.00KB read\nwirebench-wrk summary duration_us=1000 requests={requests} bytes=100 connect=0 read=0 write=0 status=0 timeout={timeout}\n"
        );
        for (us, c) in buckets {
            s.push_str(&format!("wirebench-wrk latency {us} {c}\n"));
        }
        s
    }

    #[test]
    fn responses_must_match_the_timed_ones_and_the_timeouts() {
        // 40 responses: 38 timed at 50 us, 2 over --timeout (not in the histogram).
        let ok = parse(&output(40, 2, &[(50, 38)]), 0).unwrap();
        assert_eq!(ok.accounting, Accounting::Holds);
        // A wrk that counted a response it never timed (or timed one it never counted).
        let r = parse(&output(40, 0, &[(50, 38)]), 0).unwrap();
        assert_eq!(
            r.accounting,
            Accounting::Broken(
                "responses != timed (latency histogram) + timeouts: 40 != 38".into()
            )
        );
        let r = parse(&output(40, 0, &[(50, 41)]), 0).unwrap();
        assert!(matches!(r.accounting, Accounting::Broken(_)), "{r:?}");
        // Without wrk's header line there is no -c to undo the correction with.
        let headless = output(40, 0, &[(50, 40)]).replace("  1 threads and 4 connections\n", "");
        assert_eq!(
            parse(&headless, 0).unwrap().accounting,
            Accounting::NotCheckable
        );
    }
}
