//! What a merge takes in: its parts, where each part's measured phase starts, and a
//! protocol's merge of its own blocks. A leaf of its own, so that the checks
//! (`check.rs`) and the plain sums (`parts.rs`) read it without importing `mod.rs`.

use crate::stats::result::RunResult;
use serde_json::Value;

/// One result to merge, and the name its refusals give it (its file).
pub struct Part<'a> {
    pub name: &'a str,
    pub result: &'a RunResult,
}

/// A protocol's merge of its own block `name` (the blocks of every part, in order),
/// given the merged result so far (totals, elapsed time); None: the protocol has no
/// merge of its own for that block, and the generic counter sum applies
/// (`counters::sum`). The stats layer names no protocol: `registry::block_merge` gives
/// this by the results' `kind` (`Entry::block_merge`).
pub type BlockMerge =
    fn(name: &str, blocks: &[&Value], merged: &RunResult) -> Option<Result<Value, String>>;

/// The block merge of a kind no protocol claims: every block by the counter sum.
pub fn no_block_merge(_: &str, _: &[&Value], _: &RunResult) -> Option<Result<Value, String>> {
    None
}

/// A protocol's check of one part's block `name` against that part's own figures, before
/// a merge (`wirebench merge`): the sentence naming the field that disagrees.
/// `registry::block_check` gives it by the results' `kind` (`Entry::block_check`).
pub type BlockCheck = fn(name: &str, block: &Value, part: &RunResult) -> Result<(), String>;

/// The block check of a kind whose blocks say nothing the totals say.
pub fn no_block_check(_: &str, _: &Value, _: &RunResult) -> Result<(), String> {
    Ok(())
}

/// A part's measured start, Unix ms.
pub fn measured_start_ms(r: &RunResult) -> u64 {
    match &r.shard {
        Some(s) => s.measured_start_unix_ms,
        None => r
            .started_unix_ms
            .saturating_add((r.warmup.duration_s.max(0.0) * 1e3).round() as u64),
    }
}
