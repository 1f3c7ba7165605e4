//! wrk: its command line, the Lua script the suite hands it (method, body, and a
//! `done` hook that prints wrk's exact totals and its whole latency histogram), and
//! the parser of what it prints.

use super::external::{Accounting, ExternalRun};

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
    let mut run = ExternalRun {
        tool: "wrk",
        elapsed_s: get("duration_us")? as f64 / 1e6,
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
    run.add_error("timeout", get("timeout")?);
    // The standard text must agree with the hook's figures: catches a mixed-up file.
    let printed = out
        .lines()
        .find(|l| l.contains(" requests in "))
        .and_then(|l| l.split_whitespace().next()?.parse::<u64>().ok());
    if printed.is_some_and(|p| p != requests) {
        return Err("wrk's printed request count disagrees with its summary hook".into());
    }
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
    }
    Ok(run)
}
