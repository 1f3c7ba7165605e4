//! Which part of a larger run a result is: one shard of N generators started by a
//! scheduler (Slurm, a Kubernetes Indexed Job, mpirun, ssh), or the exact merge of
//! several. `config` in a shard's result is the whole run's configuration as the user
//! gave it (identical on every shard, so a merge can check they belong together);
//! what this shard itself did is `portion`.

use serde::{Deserialize, Serialize};

/// Set on a result produced with `--shard I/N` (or the scheduler's equivalent).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ShardInfo {
    /// 0-based index of this shard.
    pub index: u32,
    /// How many shards the whole run has.
    pub count: u32,
    /// The run every shard belongs to (`--run-id`, or the scheduler's job id); null
    /// when neither was given.
    pub run_id: Option<String>,
    /// The common start asked with `--start-at`, Unix ms; null when not asked.
    pub start_at_unix_ms: Option<u64>,
    /// This shard's wall clock when its measured phase began, Unix ms (what the merge
    /// compares to report the spread of start times).
    pub measured_start_unix_ms: u64,
    /// This shard's share of the whole: the split totals (connections, requests, rate,
    /// sources...), named as in `config`.
    pub portion: serde_json::Value,
}

/// Set on a result made by `wirebench merge` (and by every other exact merge: suite
/// rounds, `--processes` workers): where it came from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MergeInfo {
    /// What was merged: "shards", "rounds" or "processes".
    pub of: String,
    /// Shards the run was meant to have (N of `--shard I/N`); for rounds and
    /// processes, how many were merged.
    pub expected: u32,
    /// The shard indexes present, ascending.
    pub present: Vec<u32>,
    /// True when merged with `--allow-partial` and some shard is missing.
    pub partial: bool,
    /// Latest minus earliest measured start over the merged parts, milliseconds.
    pub start_spread_ms: f64,
    /// Each part's own figures, in index order, as that part's result gave them
    /// (totals, throughput, latency summary, cpu, shard block): the merge keeps them.
    pub parts: Vec<serde_json::Value>,
}
