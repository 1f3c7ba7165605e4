//! Every protocol is a registered load command: its `Entry` (what a suite, the
//! published schema and `merge` see of it) is its `Protocol`'s own words, here once
//! for all of them.

use super::entry::{Entry, ReadyProbe, SuiteLoad};
use super::plugin::Protocol;

impl<P: Protocol> Entry for P {
    fn name(&self) -> &'static str {
        P::NAME
    }

    fn result_blocks_schema(&self) -> &'static str {
        P::result_blocks_schema()
    }

    fn block_merge(&self) -> crate::stats::merge::BlockMerge {
        P::block_merge()
    }

    fn suite_default_size(&self) -> u64 {
        P::SUITE_DEFAULT_SIZE
    }

    fn suite_generators(&self) -> &'static [&'static str] {
        P::suite_generators()
    }

    fn suite_load(
        &self,
        block: Option<&toml::Value>,
        sizes: &[u64],
    ) -> Result<Box<dyn SuiteLoad>, String> {
        P::suite_load(block, sizes)
    }

    fn ready_probe(&self, value: &toml::Value) -> Result<ReadyProbe, String> {
        P::ready_probe(value)
    }
}
