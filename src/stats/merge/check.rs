//! Whether results belong in one merge: each part's own figures agree with each
//! other as in every result wirebench writes (`own_figures`), the same wirebench result
//! schema, the same load (kind, target, config, unit), and for shards the same run,
//! every shard index exactly once (or, with `--allow-partial`, each at most once).
//! Every refusal is one sentence naming the file (and the field that disagrees).

use super::input::{BlockCheck, Part};
use crate::stats::latency::{Latency, LatencySummary};
use crate::stats::outcome::ErrorKind;
use crate::stats::result::{RunResult, SCHEMA_VERSION};

/// The shards a merge has: the run's N and the indexes present, ascending.
pub struct ShardSet {
    pub count: u32,
    pub present: Vec<u32>,
}

/// Same schema and the same load on every part.
pub fn same_load(parts: &[Part<'_>]) -> Result<(), String> {
    let first = parts.first().ok_or("nothing to merge")?;
    for p in parts {
        if p.result.schema_version != SCHEMA_VERSION {
            return Err(format!(
                "{} is a result of schema version {}, this wirebench reads version {SCHEMA_VERSION}",
                p.name, p.result.schema_version
            ));
        }
    }
    for p in &parts[1..] {
        let (a, b) = (first.result, p.result);
        let what = if a.kind != b.kind {
            Some(format!(
                "a {} load, {} a {} load",
                a.kind, first.name, b.kind
            ))
        } else if a.target != b.target {
            Some(format!(
                "aimed at {}, {} at {}",
                b.target, first.name, a.target
            ))
        } else if a.config != b.config {
            Some(format!("a different config from {}", first.name))
        } else if a.unit != b.unit {
            Some(format!("a different unit from {}", first.name))
        } else {
            None
        };
        if let Some(what) = what {
            return Err(format!("{} is {what}: only parts of one run merge", p.name));
        }
    }
    Ok(())
}

/// Each part's figures agree with each other, as wirebench writes them: a part that
/// does not was changed after it was written, and a merge of it would add figures
/// that disagree (totals against the histogram, the errors against their kinds).
pub fn own_figures(parts: &[Part<'_>]) -> Result<(), String> {
    for p in parts {
        let r = p.result;
        totals_agree(r)
            .and_then(|()| histograms_agree(r))
            .and_then(|()| intervals_agree(r))
            .map_err(|why| {
                format!(
                    "{}: {why}; a result changed after wirebench wrote it does not merge",
                    p.name
                )
            })?;
    }
    Ok(())
}

/// Each part's protocol blocks agree with its totals, where its protocol says they
/// must (`check`, the command's `Entry::block_check`).
pub fn blocks_agree(parts: &[Part<'_>], check: BlockCheck) -> Result<(), String> {
    for p in parts {
        for (name, block) in &p.result.extras {
            check(name, block, p.result).map_err(|why| {
                format!(
                    "{}: {why}; a result changed after wirebench wrote it does not merge",
                    p.name
                )
            })?;
        }
    }
    Ok(())
}

/// sent = ok + errors + in flight where the result says it holds; the errors by kind
/// against the totals (request kinds exactly, connection kinds at most).
fn totals_agree(r: &RunResult) -> Result<(), String> {
    let t = &r.totals;
    let parts =
        t.ok.checked_add(t.errors)
            .and_then(|x| x.checked_add(t.in_flight));
    // Every wirebench load says whether its counts add up; only a tool's result may not.
    if t.invariant_holds.is_none() && r.shard.is_some() {
        return Err(
            "totals.invariant_holds is null, but a shard always says whether its counts add up"
                .into(),
        );
    }
    if t.invariant_holds == Some(true) && parts != Some(t.sent) {
        return Err(format!(
            "totals.sent {} is not totals.ok {} + totals.errors {} + totals.in_flight {}, though totals.invariant_holds says it is",
            t.sent, t.ok, t.errors, t.in_flight
        ));
    }
    let (mut requests, mut connections) = (0u64, 0u64);
    for (name, n) in &r.errors {
        match ErrorKind::ALL.iter().find(|k| k.name() == name) {
            Some(k) if k.is_connect() => connections = connections.saturating_add(*n),
            Some(_) => requests = requests.saturating_add(*n),
            // A command's own names (connect's errnos and losses): not the totals' kinds.
            None => {}
        }
    }
    if requests != t.errors {
        return Err(format!(
            "its \"errors\" count {requests} failed requests by kind, totals.errors {}",
            t.errors
        ));
    }
    if connections > t.connect_errors {
        return Err(format!(
            "its \"errors\" count {connections} failed connections by kind, more than totals.connect_errors {}",
            t.connect_errors
        ));
    }
    Ok(())
}

/// The histograms hold what they say and what the unit times: every counted item
/// that has a reply (and at most the failed ones besides, a tool that times error
/// replies), none where items have no reply.
fn histograms_agree(r: &RunResult) -> Result<(), String> {
    let held = |what: &str, data: &str| -> Result<Latency, String> {
        if data.is_empty() {
            return Ok(Latency::new());
        }
        Latency::decode(data).map_err(|e| format!("{what}.data: {e}"))
    };
    let h = &r.histogram;
    let decoded = held("histogram", &h.data)?;
    let count = decoded.count();
    if count != h.count {
        return Err(format!(
            "histogram.count says {} but its data hold {count}",
            h.count
        ));
    }
    if r.latency_us.count != count || (count > 0 && !same(&r.latency_us, &decoded.summary())) {
        return Err(
            "latency_us is not the summary of its histogram (one of them is another run's)".into(),
        );
    }
    let (t, u) = (&r.totals, &r.unit);
    let most = t.ok.saturating_add(t.errors);
    if u.replies && !(t.ok..=most).contains(&count) {
        return Err(format!(
            "histogram.count {count} is not totals.ok {} (each {} {} is timed), nor at most totals.ok + totals.errors {most}",
            t.ok,
            u.one(),
            u.counted
        ));
    }
    if !u.replies && count > 0 {
        return Err(format!(
            "histogram.count is {count}, but {} {} have no reply to time",
            u.noun, u.counted
        ));
    }
    if let Some(un) = &r.histogram_uncorrected {
        let held = held("histogram_uncorrected", &un.data)?.count();
        if held != count || un.count != count {
            return Err(format!(
                "histogram_uncorrected holds {held} (its count says {}), histogram {count}: both time the same replies",
                un.count
            ));
        }
    }
    Ok(())
}

/// Two summaries of one histogram: equal counts, figures equal but for the last bits
/// a JSON round trip may change.
fn same(a: &LatencySummary, b: &LatencySummary) -> bool {
    let close = |x: f64, y: f64| (x - y).abs() <= 1e-9 * x.abs().max(y.abs()).max(1.0);
    a.count == b.count
        && [
            (a.min, b.min),
            (a.mean, b.mean),
            (a.stdev, b.stdev),
            (a.p50, b.p50),
            (a.p90, b.p90),
            (a.p99, b.p99),
            (a.p99_9, b.p99_9),
            (a.p99_99, b.p99_99),
            (a.max, b.max),
        ]
        .iter()
        .all(|(x, y)| close(*x, *y))
}

/// The interval rows: each row's running total is the sum of the rows' counts so far,
/// and the rows hold no more than the totals (the measured phase's).
fn intervals_agree(r: &RunResult) -> Result<(), String> {
    let (mut ok, mut sent, mut errors) = (0u64, 0u64, 0u64);
    for (i, row) in r.intervals.iter().enumerate() {
        ok = ok.saturating_add(row.ok);
        sent = sent.saturating_add(row.sent);
        errors = errors.saturating_add(row.errors);
        if row.total_ok != ok {
            return Err(format!(
                "intervals[{i}].total_ok {} is not the {ok} ok of the rows up to it",
                row.total_ok
            ));
        }
    }
    let t = &r.totals;
    for (what, rows, total) in [
        ("ok", ok, t.ok),
        ("sent", sent, t.sent),
        ("errors", errors, t.errors),
    ] {
        if rows > total {
            return Err(format!(
                "its intervals count {rows} {what}, more than totals.{what} {total}"
            ));
        }
    }
    Ok(())
}

/// Every part a shard of one run, each index once; every index present unless
/// `allow_partial`.
pub fn shards(parts: &[Part<'_>], allow_partial: bool) -> Result<ShardSet, String> {
    let first = parts.first().ok_or("nothing to merge")?;
    let shard = |p: &Part<'_>| {
        p.result.shard.clone().ok_or_else(|| {
            format!(
                "{} is not a shard (no \"shard\" block: run with --shard I/N), and only shards of one run merge",
                p.name
            )
        })
    };
    let s0 = shard(first)?;
    let mut present = Vec::with_capacity(parts.len());
    for p in parts {
        let s = shard(p)?;
        if s.run_id != s0.run_id {
            return Err(format!(
                "{} belongs to run {}, {} to run {}: only shards of one run merge",
                p.name,
                s.run_id.as_deref().unwrap_or("(no run id)"),
                first.name,
                s0.run_id.as_deref().unwrap_or("(no run id)")
            ));
        }
        if s.count != s0.count || s.index >= s.count {
            return Err(format!(
                "{} is shard {}/{}, {} shard {}/{}: only shards of one run merge",
                p.name, s.index, s.count, first.name, s0.index, s0.count
            ));
        }
        if present.contains(&s.index) {
            return Err(format!(
                "{} is shard {} of {} again: each shard merges once",
                p.name, s.index, s.count
            ));
        }
        present.push(s.index);
    }
    present.sort_unstable();
    if !allow_partial && present.len() < s0.count as usize {
        let missing: Vec<String> = (0..s0.count)
            .filter(|i| !present.contains(i))
            .map(|i| i.to_string())
            .collect();
        return Err(format!(
            "shard {} of {} is missing (give every shard, or --allow-partial to merge those present)",
            missing.join(", "),
            s0.count
        ));
    }
    Ok(ShardSet {
        count: s0.count,
        present,
    })
}
