//! Whether results belong in one merge: the same wirebench result schema, the same
//! load (kind, target, config, unit), and for shards the same run, every shard index
//! exactly once (or, with `--allow-partial`, each at most once). Every refusal is one
//! sentence naming the file.

use super::input::Part;
use crate::stats::result::SCHEMA_VERSION;

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
