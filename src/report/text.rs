//! Text output: the configuration table at start, the summary and the histogram at the end.

use super::format::{count_of, group, iec, mib_per_s, micros, rate, size};
use crate::stats::error_texts::MAX_TEXTS;
use crate::stats::result::ClientProcess;
use crate::stats::{ErrorTexts, Latency, LatencySummary, LoopCounts, RunResult};
use std::fmt::Write as _;

const RULE: &str = "----------------------------------------------------------------------------------------------------";

/// A two-column table of the run's settings, printed before it starts.
pub fn config_table(title: &str, rows: &[(&str, String)]) -> String {
    let width = rows.iter().map(|(k, _)| k.len()).max().unwrap_or(0) + 1;
    let mut s = format!("{title}\n{RULE}\n");
    for (k, v) in rows {
        let _ = writeln!(s, "{:<width$} {v}", format!("{k}:"));
    }
    s.push_str(RULE);
    s.push('\n');
    s
}

fn latency_line(l: &LatencySummary) -> String {
    format!(
        "min {}  mean {}  p50 {}  p90 {}  p99 {}  p99.9 {}  p99.99 {}  max {}",
        micros(l.min),
        micros(l.mean),
        micros(l.p50),
        micros(l.p90),
        micros(l.p99),
        micros(l.p99_9),
        micros(l.p99_99),
        micros(l.max)
    )
}

/// A label padded to the summary's column.
fn label(name: &str) -> String {
    format!("{:<14}", format!("{name}:"))
}

/// The final summary of a run, in the words of its protocol (`r.unit`): a figure that
/// does not exist (no replies: no latency, no received bytes) reads "n/a", never 0.
pub fn summary(r: &RunResult) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "{RULE}");
    outcome_lines(&mut s, r);
    traffic_lines(&mut s, r);
    connection_lines(&mut s, r);
    latency_lines(&mut s, r);
    s.push_str(&super::stages::table(r.stages.as_ref()));
    cost_lines(&mut s, r);
    s
}

/// The summary's verdict, what was counted of what was sent, and its accounting.
fn outcome_lines(s: &mut String, r: &RunResult) {
    let t = &r.totals;
    let u = &r.unit;
    match &r.outcome.reason {
        None => {
            let _ = writeln!(s, "result:       ok");
        }
        Some(why) => {
            let _ = writeln!(s, "result:       FELL SHORT: {why}");
        }
    }
    let expected = t
        .expected
        .map(|e| format!(" (expected {})", group(e)))
        .unwrap_or_default();
    let _ = writeln!(
        s,
        "{}{} {} of {} sent{expected}",
        label(&u.noun),
        group(t.ok),
        u.counted,
        group(t.sent)
    );
    let _ = writeln!(
        s,
        "accounting:   sent {} = ok {} + errors {} + in flight {}  [{}]",
        group(t.sent),
        group(t.ok),
        group(t.errors),
        group(t.in_flight),
        match t.invariant_holds {
            Some(true) => "holds",
            Some(false) => "VIOLATED",
            None => "not checkable",
        }
    );
}

/// Bytes, the measured phase's length, throughput and the open loop's rate.
fn traffic_lines(s: &mut String, r: &RunResult) {
    let t = &r.totals;
    let u = &r.unit;
    let secs = r.elapsed_s.max(1e-9);
    if u.replies {
        let _ = writeln!(
            s,
            "bytes:        {} received, {} sent",
            group(t.bytes_received),
            group(t.bytes_sent)
        );
    } else {
        let _ = writeln!(
            s,
            "bytes:        {} sent; received n/a ({} settle on write)",
            group(t.bytes_sent),
            u.noun
        );
    }
    let _ = writeln!(s, "elapsed:      {:.3} s (measured phase)", r.elapsed_s);
    let received = if u.replies {
        format!("  {} received", mib_per_s(t.bytes_received as f64 / secs))
    } else {
        String::new()
    };
    let _ = writeln!(
        s,
        "throughput:   {} {}{received}  {} sent",
        rate(r.throughput.msgs_per_s),
        u.per_s(),
        mib_per_s(t.bytes_sent as f64 / secs)
    );
    if let Some(p) = &r.rate {
        let _ = writeln!(
            s,
            "rate:         asked {}/s, sent {}/s, schedule at most {:.3} s behind",
            rate(p.asked_per_s),
            rate(p.achieved_per_s),
            p.behind_s
        );
    }
}

/// Connections opened and failed, those dropped for the memory budget, and the
/// opening and closing exchanges.
fn connection_lines(s: &mut String, r: &RunResult) {
    let t = &r.totals;
    let opened = if t.connections_from_warmup > 0 {
        format!(
            "{} open (opened during warm-up), {} new",
            group(t.connections_from_warmup),
            group(t.connections)
        )
    } else {
        format!("{} opened", group(t.connections))
    };
    let _ = writeln!(
        s,
        "connections:  {opened}, {} failed (attempts or dropped for unsolicited bytes)",
        group(t.connect_errors)
    );
    if t.over_budget > 0 {
        let budget = r.config["memory_budget_bytes"]
            .as_u64()
            .map_or_else(String::new, |b| format!(" of {}", iec(b as f64)));
        let _ = writeln!(
            s,
            "memory budget: {} dropped as too_large: what the connections kept together reached the run's --memory-budget{budget} (each thread an equal share)",
            count_of(t.over_budget, "connection"),
        );
    }
    if t.exchange_sent + t.exchange_answered > 0 {
        let _ = writeln!(
            s,
            "exchanges:    {} requests of the opening and closing exchanges, {} answered (not in sent)",
            group(t.exchange_sent),
            group(t.exchange_answered)
        );
    }
}

/// Latency (corrected, and uncorrected when recorded), errors by kind and the peers'
/// words for them.
fn latency_lines(s: &mut String, r: &RunResult) {
    let u = &r.unit;
    let latency = if r.latency_us.count > 0 {
        latency_line(&r.latency_us)
    } else if !u.replies {
        format!("n/a ({} settle on write: no reply to time)", u.noun)
    } else {
        "n/a (no replies)".to_string()
    };
    let _ = writeln!(s, "latency (us): {latency}");
    if let Some(l) = r.latency_uncorrected_us.as_ref().filter(|l| l.count > 0) {
        let _ = writeln!(
            s,
            "uncorrected:  {}  (from actual send time)",
            latency_line(l)
        );
    }
    if !r.errors.is_empty() {
        let list: Vec<String> = r
            .errors
            .iter()
            .map(|(k, n)| format!("{k} {}", group(*n)))
            .collect();
        let _ = writeln!(s, "errors:       {}", list.join(", "));
    }
    s.push_str(&error_text_lines(&r.error_texts));
}

/// What the run cost (CPU, the client's memory, its event loops), its warm-up and the
/// machine's interference.
fn cost_lines(s: &mut String, r: &RunResult) {
    let u = &r.unit;
    let per = |us: Option<f64>| match us {
        Some(us) => format!("{us:.2} us/{}", u.one()),
        None => format!("n/a per {}", u.one()),
    };
    let mut cpu = format!(
        "client {:.2} s ({})",
        r.cpu.client_s,
        per(r.cpu.client_us_per_msg)
    );
    if let Some(sv) = r.cpu.server_s {
        let _ = write!(cpu, ", server {sv:.2} s ({})", per(r.cpu.server_us_per_msg));
    }
    let _ = writeln!(s, "cpu:          {cpu}");
    if let Some(p) = &r.client_process {
        let processes = r.merge.as_ref().map_or(1, |m| m.parts.len());
        let _ = writeln!(s, "memory:       {}", client_memory(p, processes));
    }
    if let Some(loops) = event_loops(r) {
        let _ = writeln!(s, "loop:         {loops}");
    }
    if r.warmup.duration_s > 0.0 {
        let _ = writeln!(
            s,
            "warm-up:      {:.1} s, {} sent, {} ok (excluded)",
            r.warmup.duration_s,
            group(r.warmup.sent),
            group(r.warmup.ok)
        );
    }
    if let Some(line) = interference_line(r) {
        let _ = writeln!(s, "{line}");
    }
}

/// The peers' words for the errors, one line per text kept (largest count first):
/// "count kind: text", counts aligned; then those not kept. Empty when there are none.
pub fn error_text_lines(t: &ErrorTexts) -> String {
    if t.is_empty() {
        return String::new();
    }
    let other = (t.other > 0).then(|| group(t.other));
    let counts: Vec<String> = t.kept.iter().map(|e| group(e.count)).collect();
    let w = counts
        .iter()
        .chain(&other)
        .map(String::len)
        .max()
        .unwrap_or(0);
    let mut s = String::new();
    for (i, (e, n)) in t.kept.iter().zip(&counts).enumerate() {
        let head = if i == 0 {
            label("error texts")
        } else {
            " ".repeat(14)
        };
        let _ = writeln!(s, "{head}{n:>w$} {}: {}", e.kind, e.text);
    }
    if let Some(n) = other {
        let head = if t.kept.is_empty() {
            label("error texts")
        } else {
            " ".repeat(14)
        };
        let _ = writeln!(
            s,
            "{head}{n:>w$} more, whose texts were not kept (at most {MAX_TEXTS} distinct texts are)"
        );
    }
    s
}

/// The line saying other processes took a share of the run's CPUs, when they took
/// more than `stats::interference::THRESHOLD` of one; its server is the run's own when
/// it was built in or a suite started it.
pub fn interference_line(r: &RunResult) -> Option<String> {
    let server_ours = r.server.is_some() || r.extra("suite").is_some();
    r.interference()?
        .line((!server_ours).then_some("the target server is"))
}

/// "client peak RSS 12.3 MiB (VmHWM of the wirebench process, built-in server
/// included)"; a merge of `processes` results says its figure is their peaks' sum.
pub fn client_memory(p: &ClientProcess, processes: usize) -> String {
    let whose = if processes > 1 {
        format!("the sum of {processes} wirebench processes' own peaks (VmHWM)")
    } else {
        "VmHWM of the wirebench process".to_string()
    };
    format!(
        "client peak RSS {} ({whose}{})",
        size(p.peak_rss_bytes),
        match (p.includes_builtin_server, processes > 1) {
            (false, _) => "",
            (true, false) => ", built-in server included",
            (true, true) => ", built-in servers included",
        }
    )
}

/// "client io_uring x2; server epoll x1": the event loops the generator's workers and
/// the built-in server's threads ran on, the ones the result knows; None for neither.
pub fn event_loops(r: &RunResult) -> Option<String> {
    let client = r
        .client_process
        .as_ref()
        .and_then(|p| p.event_loop)
        .filter(|l| !l.is_empty());
    let server = r
        .server
        .as_ref()
        .and_then(|v| v.get("event_loop"))
        .and_then(|v| serde_json::from_value::<LoopCounts>(v.clone()).ok())
        .filter(|l| !l.is_empty());
    let parts: Vec<String> = [("client", client), ("server", server)]
        .into_iter()
        .filter_map(|(who, l)| l.map(|l| format!("{who} {}", l.describe())))
        .collect();
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// Most non-empty buckets listed before the rest is folded into one line.
const MAX_BUCKET_LINES: usize = 60;

/// evh_perf's histogram: fixed-width buckets in microseconds, non-empty ones only.
pub fn histogram(l: &Latency, bucket_us: u64) -> String {
    let h = l.inner();
    let total = h.len();
    let mut s = format!("latency histogram ({bucket_us} us buckets)\n");
    if total == 0 {
        s.push_str("  (no replies)\n");
        return s;
    }
    let step = bucket_us * 1000;
    let mut rows: Vec<(u64, u64)> = Vec::new();
    for v in h.iter_linear(step) {
        let n = v.count_since_last_iteration();
        if n > 0 {
            // value_iterated_to is the bucket's upper edge, in ns.
            let start = (v.value_iterated_to() + 1).saturating_sub(step) / 1000;
            rows.push((start, n));
        }
    }
    let folded: u64 = rows.iter().skip(MAX_BUCKET_LINES).map(|r| r.1).sum();
    let fold_from = rows.get(MAX_BUCKET_LINES).map(|r| r.0);
    rows.truncate(MAX_BUCKET_LINES);
    let peak = rows.iter().map(|r| r.1).max().unwrap_or(1).max(folded);
    let bar = |n: u64| "=".repeat(((n * 50).div_ceil(peak)) as usize);
    for (start, n) in &rows {
        let _ = writeln!(
            s,
            "[{:>8} us - {:>8} us] {}> {} ({:.2}%)",
            group(*start),
            group(start + bucket_us),
            bar(*n),
            group(*n),
            *n as f64 * 100.0 / total as f64
        );
    }
    if let Some(from) = fold_from {
        let _ = writeln!(
            s,
            "[{:>8} us - {:>8} us] {}> {} ({:.2}%)",
            group(from),
            group(h.max() / 1000 + 1),
            bar(folded),
            group(folded),
            folded as f64 * 100.0 / total as f64
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_buckets_are_exact() {
        let mut l = Latency::new();
        for _ in 0..3 {
            l.record(5_000); // 5 us
        }
        l.record(25_000); // 25 us
        let text = histogram(&l, 10);
        let lines: Vec<&str> = text.lines().skip(1).collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert!(
            lines[0].starts_with("[       0 us -       10 us]"),
            "{text}"
        );
        assert!(lines[0].ends_with("3 (75.00%)"), "{text}");
        assert!(
            lines[1].starts_with("[      20 us -       30 us]"),
            "{text}"
        );
        assert!(lines[1].ends_with("1 (25.00%)"), "{text}");
    }

    #[test]
    fn exchange_round_trips_get_a_line_only_when_there_are_some() {
        use crate::stats::result::Totals;
        use crate::stats::{Measured, Unit};
        let l = Latency::new();
        let of = |exchange_sent, exchange_answered| {
            summary(
                &RunResult::builder(Measured {
                    kind: "t",
                    target: "127.0.0.1:1".into(),
                    config: serde_json::json!({}),
                    started_unix_ms: 0,
                    elapsed_s: 1.0,
                    totals: Totals {
                        exchange_sent,
                        exchange_answered,
                        ..Totals::default()
                    },
                    errors: Default::default(),
                    unit: Unit::new("requests", "answered", true),
                    latency: &l,
                    client_cpu_s: 0.0,
                })
                .finish(None),
            )
        };
        let with = of(3000, 2999);
        assert!(
            with.contains(
                "exchanges:    3,000 requests of the opening and closing exchanges, 2,999 answered (not in sent)"
            ),
            "{with}"
        );
        assert!(!of(0, 0).contains("exchanges:"));
    }

    #[test]
    fn the_loops_get_one_line_client_then_server_only_when_known() {
        use crate::stats::result::{ClientProcess, Totals};
        use crate::stats::{Measured, Unit};
        let l = Latency::new();
        let of = |client: Option<LoopCounts>, server: Option<serde_json::Value>| {
            let mut r = RunResult::builder(Measured {
                kind: "t",
                target: "127.0.0.1:1".into(),
                config: serde_json::json!({}),
                started_unix_ms: 0,
                elapsed_s: 1.0,
                totals: Totals::default(),
                errors: Default::default(),
                unit: Unit::new("requests", "answered", true),
                latency: &l,
                client_cpu_s: 0.0,
            })
            .server(server)
            .finish(None);
            r.client_process = Some(ClientProcess {
                peak_rss_bytes: 1 << 20,
                includes_builtin_server: true,
                event_loop: client,
            });
            summary(&r)
        };
        let two = LoopCounts {
            epoll: 0,
            io_uring: 2,
        };
        let both = of(
            Some(two),
            Some(serde_json::json!({"accepts": 1, "event_loop": {"epoll": 1}})),
        );
        let lines: Vec<&str> = both.lines().filter(|l| l.starts_with("loop:")).collect();
        assert_eq!(
            lines,
            ["loop:         client io_uring x2; server epoll x1"],
            "{both}"
        );
        let mixed = of(
            Some(LoopCounts {
                epoll: 1,
                io_uring: 1,
            }),
            None,
        );
        assert!(
            mixed.contains("\nloop:         client epoll x1 + io_uring x1\n"),
            "{mixed}"
        );
        // An external generator's result (or one written before loops were recorded).
        assert!(!of(None, Some(serde_json::json!({"accepts": 1}))).contains("loop:"));
    }

    #[test]
    fn table_aligns() {
        let t = config_table("t", &[("a", "1".into()), ("long key", "2".into())]);
        assert!(t.contains("a:        1"), "{t}");
        assert!(t.contains("long key: 2"), "{t}");
    }
}
