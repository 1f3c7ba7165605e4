//! The text summary of a `connect` run, read from its result alone (the JSON it
//! writes), so the words cannot disagree with it: every count by kind is printed under
//! its name there (`connect.failures`, `connect.lost`, the echo frames' `errors`), and
//! the frames' accounting in the terms of `totals` (ok, errors, in flight).

use super::messages::by_kind;
use super::report::{frame_errors, ConnectResult, ConnectSection};
use crate::report::format::{count_of, group, micros, rate, size};
use crate::stats::{LatencySummary, RunResult};
use std::fmt::Write as _;

/// The text summary of a connect run.
pub fn summary(r: &ConnectResult) -> String {
    let (b, c) = (&r.base, &r.connect);
    let mut s = format!("{}\n", "-".repeat(100));
    let _ = match &b.outcome.reason {
        None => writeln!(s, "result:        ok"),
        Some(why) => writeln!(s, "result:        FELL SHORT: {why}"),
    };
    connections(&mut s, b, c);
    let _ = writeln!(s, "connect (us):  {}", latency_line(&c.connect_latency_us));
    frames(&mut s, b, c);
    s.push_str(&super::stage_table::table(b.stages.as_ref()));
    // Memory per connection means something only with the connections held.
    if c.churn.is_none() {
        memory(&mut s, c);
    }
    if let Some(sv) = &b.server {
        let active = match (&c.churn, c.server_active) {
            (Some(_), _) => String::new(),
            (None, a) => format!(
                " (active when all were up: {})",
                a.map(group).unwrap_or_else(|| "n/a".into())
            ),
        };
        let _ = writeln!(
            s,
            "server:        accepts {} closes {}{active}",
            group(sv["accepts"].as_u64().unwrap_or(0)),
            group(sv["closes"].as_u64().unwrap_or(0)),
        );
    }
    let _ = writeln!(
        s,
        "cpu:           client {:.2} s{}",
        b.cpu.client_s,
        b.cpu
            .server_s
            .map(|v| format!(", server {v:.2} s"))
            .unwrap_or_default()
    );
    if let Some(p) = &b.client_process {
        let _ = writeln!(
            s,
            "client peak:   {} RSS (VmHWM summed over {})",
            size(p.peak_rss_bytes),
            count_of(c.processes as u64, "worker process")
        );
    }
    if let Some(l) = crate::report::text::event_loops(b) {
        let _ = writeln!(s, "loop:          {l}");
    }
    s
}

/// The connections: established, failed and lost by kind, and how fast they came up
/// (a churn: its cycles, and a ramp left out).
fn connections(s: &mut String, b: &RunResult, c: &ConnectSection) {
    let requested = if c.requested > 0 {
        format!(" of {} requested", group(c.requested))
    } else {
        String::new()
    };
    let _ = writeln!(
        s,
        "connections:   {} established{requested} ({} attempts); failed: {}",
        group(c.established),
        group(c.attempts),
        by_kind(&c.failures)
    );
    if !c.lost.is_empty() {
        let _ = writeln!(s, "lost:          {}", by_kind(&c.lost));
    }
    let Some(ch) = &c.churn else {
        let _ = writeln!(
            s,
            "time to all:   {:.3} s ({} connects/s over {}), then held {:.1} s",
            c.time_to_establish_s,
            rate(c.connect_rate_per_s),
            count_of(c.processes as u64, "process"),
            c.hold_s
        );
        return;
    };
    let _ = writeln!(
        s,
        "churn:         {} cycles ok of {} in {:.3} s: {} connections/s",
        group(ch.cycles_ok),
        group(ch.cycles),
        c.time_to_establish_s,
        rate(ch.connections_per_s)
    );
    if let Some(rp) = &c.ramp {
        let _ = writeln!(
            s,
            "ramp:          {:.3} s before that, left out (--ramp-measured counts it): {} cycles ok of {}; failed: {}",
            b.warmup.duration_s,
            group(rp.cycles_ok),
            group(rp.attempts),
            by_kind(&rp.failures)
        );
    }
}

/// The echo frames (pings, or a churn's round trips): where each one sent ended, as
/// `totals` and `errors` count them, and their latency.
fn frames(s: &mut String, b: &RunResult, c: &ConnectSection) {
    if b.totals.sent == 0 {
        return;
    }
    let what = if c.churn.is_some() { "echo" } else { "ping" };
    let _ = writeln!(
        s,
        "{:<15}{} ok of {} sent; errors: {}; in flight {}",
        format!("{what}:"),
        group(b.totals.ok),
        group(b.totals.sent),
        by_kind(&frame_errors(&b.errors)),
        group(b.totals.in_flight),
    );
    let _ = writeln!(
        s,
        "{:<15}{}",
        format!("{what} (us):"),
        latency_line(&b.latency_us)
    );
}

/// Memory per connection with every connection up: the server's, the client's and
/// the kernel's.
fn memory(s: &mut String, c: &ConnectSection) {
    let m = &c.memory;
    if m.server_processes > 0 {
        let _ = writeln!(
            s,
            "server memory: {} per connection (RSS of {}: {} -> {})",
            bytes(m.server_rss_per_conn_bytes),
            count_of(m.server_processes as u64, "process"),
            size(m.server_rss_bytes_before.unwrap_or(0)),
            size(m.server_rss_bytes_after.unwrap_or(0))
        );
    }
    let _ = writeln!(
        s,
        "client memory: {} per connection (RSS of {})",
        bytes(m.client_rss_per_conn_bytes),
        count_of(c.processes as u64, "process")
    );
    let _ = writeln!(
        s,
        "kernel slab:   {} per connection ({} -> {}, whole machine)",
        bytes(m.slab_per_conn_bytes),
        size(m.slab_bytes_before),
        size(m.slab_bytes_after)
    );
}

fn bytes(v: Option<f64>) -> String {
    match v {
        Some(b) => format!("{} bytes", group(b.max(0.0).round() as u64)),
        None => "n/a".into(),
    }
}

fn latency_line(l: &LatencySummary) -> String {
    if l.count == 0 {
        return "n/a (nothing timed)".into();
    }
    format!(
        "min {}  p50 {}  p90 {}  p99 {}  p99.9 {}  max {}",
        micros(l.min),
        micros(l.p50),
        micros(l.p90),
        micros(l.p99),
        micros(l.p99_9),
        micros(l.max)
    )
}
