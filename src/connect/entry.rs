//! `connect` in a suite and in the schema (`proto::entry::Entry`): a point opens its
//! connections (all of them, the count) and holds them for the duration; it has no
//! `serve` command and no reply timeout; its result carries the `connect` block.

use crate::proto::entry::{plain, Entry, RunFor, SuiteLoad, SuitePoint};

pub struct Connect;

impl Entry for Connect {
    fn name(&self) -> &'static str {
        "connect"
    }

    fn serves(&self) -> bool {
        false
    }

    fn result_blocks_schema(&self) -> &'static str {
        include_str!("report.schema.json")
    }

    /// The `connect` block holds rates, times and a histogram: it merges itself.
    fn block_merge(&self) -> crate::stats::merge::BlockMerge {
        super::block_merge::block_merge
    }

    /// The `connect` block's connections are the totals' (established, failed).
    fn block_check(&self) -> crate::stats::merge::BlockCheck {
        super::block_merge::block_check
    }

    fn suite_load(
        &self,
        block: Option<&toml::Value>,
        _: &[u64],
    ) -> Result<Box<dyn SuiteLoad>, String> {
        plain(block, suite_args)
    }
}

/// A point opens its connections and holds them for its duration.
fn suite_args(p: &SuitePoint<'_>) -> Vec<String> {
    let mut a: Vec<String> = vec![
        Connect.name().into(),
        p.addr.into(),
        "-n".into(),
        p.connections.to_string(),
    ];
    if let RunFor::Duration(d) = p.run_for {
        a.extend(["--hold".into(), format!("{}ms", d.as_millis())]);
    }
    if let Some(r) = p.rate {
        a.extend(["-R".into(), r.to_string()]);
    }
    a
}
