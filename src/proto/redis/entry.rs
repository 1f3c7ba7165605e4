//! Redis in a suite and in the schema (`proto::entry::Entry`): a suite point runs the
//! default command (SET) with values of its size; its result carries the `redis` block.

use super::plugin::Redis;
use crate::proto::entry::{plain, Entry, SuiteLoad};
use crate::proto::plugin::Protocol;

impl Entry for Redis {
    fn name(&self) -> &'static str {
        <Redis as Protocol>::NAME
    }

    fn result_blocks_schema(&self) -> &'static str {
        include_str!("figures.schema.json")
    }

    /// The `redis` block holds settings beside its counters: it merges itself.
    fn block_merge(&self) -> crate::stats::merge::BlockMerge {
        super::figures::block_merge
    }

    /// redis-benchmark's default value size (`-d 3`), so a suite compares like with like.
    fn suite_default_size(&self) -> u64 {
        3
    }

    fn suite_load(
        &self,
        block: Option<&toml::Value>,
        _: &[u64],
    ) -> Result<Box<dyn SuiteLoad>, String> {
        plain(block, |p| {
            p.sized_load_args(<Redis as Protocol>::NAME, p.addr.to_string())
        })
    }
}
