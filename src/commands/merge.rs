//! `wirebench merge SHARD.json... -o merged.json [--allow-partial]`: the shards of one
//! run as one exact result (stats/merge), written only when every check passed, then
//! summarised as a load's own result is.

use super::merge_inputs::{check_output, files, read};
use crate::cli::MergeArgs;
use crate::error::{Error, Result};
use crate::report::json::JsonSink;
use crate::report::text;
use crate::stats::merge::{check, merge, Of, Part};
use crate::stats::threshold::{self, Scope, Verdict};
use crate::stats::RunResult;

pub fn run(a: &MergeArgs) -> Result<()> {
    check_output(&a.output)?;
    let paths = files(&a.inputs, &a.output)?;
    let mut results = Vec::with_capacity(paths.len());
    for p in &paths {
        results.push(read(p)?);
    }
    let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    let mut merged = merge_results(&results, &names, a.allow_partial)?;
    merged.thresholds = thresholds(&results, &a.threshold, &merged)?;
    JsonSink::create(&a.output)?.write(&merged)?;
    if !a.quiet {
        print!("{}", text::summary(&merged));
        print!("{}", crate::report::thresholds::table(&merged.thresholds));
    }
    if let Some(m) = &merged.merge {
        let run = results[0]
            .shard
            .as_ref()
            .and_then(|s| s.run_id.as_deref())
            .map(|id| format!(" of run {id}"))
            .unwrap_or_default();
        let partial = if m.partial {
            format!(" (partial: {} of {} shards)", m.present.len(), m.expected)
        } else {
            String::new()
        };
        println!(
            "merged {} shards{run}{partial}, start spread {} ms -> {}",
            m.present.len(),
            m.start_spread_ms,
            a.output.display()
        );
    }
    let outcome = match &merged.outcome.reason {
        None => Ok(()),
        Some(why) => Err(Error::ShortFall(format!(
            "the merged run fell short: {why}"
        ))),
    };
    super::verdict::exit(outcome, &merged.thresholds)
}

/// The shards' own thresholds (each recorded in its result) and `asked`, once each in
/// the order first given, held to the merged result: the verdict is the merged run's,
/// never a shard's.
fn thresholds(shards: &[RunResult], asked: &[String], merged: &RunResult) -> Result<Vec<Verdict>> {
    let mut texts: Vec<String> = Vec::new();
    let recorded = shards
        .iter()
        .flat_map(|r| r.thresholds.iter().map(|v| &v.expression));
    for t in recorded.chain(asked) {
        if !texts.contains(t) {
            texts.push(t.clone());
        }
    }
    let blocks = crate::registry::find(&merged.kind).map_or("{}", |e| e.result_blocks_schema());
    let ts = threshold::parse_all(&texts, &Scope::of(merged, blocks)).map_err(Error::usage)?;
    Ok(threshold::evaluate(&ts, merged, blocks))
}

/// The shards `results` (each named by its file, `names`) checked and merged: the
/// merged result, or the one sentence naming the file and the field that disagrees.
pub fn merge_results(
    results: &[RunResult],
    names: &[String],
    allow_partial: bool,
) -> Result<RunResult> {
    let parts: Vec<Part<'_>> = results
        .iter()
        .zip(names)
        .map(|(r, n)| Part { name: n, result: r })
        .collect();
    let kind = results.first().map(|r| r.kind.clone()).unwrap_or_default();
    check::blocks_agree(&parts, crate::registry::block_check(&kind)).map_err(Error::usage)?;
    merge(
        &parts,
        Of::Shards { allow_partial },
        crate::registry::block_merge(&kind),
    )
    .map_err(Error::usage)
}
