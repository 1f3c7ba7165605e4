//! Echo in a suite and in the schema (`proto::entry::Entry`).

use super::plugin::Echo;
use crate::proto::entry::{plain, Entry, SuiteLoad};
use crate::proto::plugin::Protocol;

impl Entry for Echo {
    fn name(&self) -> &'static str {
        <Echo as Protocol>::NAME
    }

    /// A suite echoes 64-byte payloads unless told otherwise.
    fn suite_default_size(&self) -> u64 {
        64
    }

    fn suite_load(
        &self,
        block: Option<&toml::Value>,
        _: &[u64],
    ) -> Result<Box<dyn SuiteLoad>, String> {
        plain(block, |p| {
            p.sized_load_args(<Echo as Protocol>::NAME, p.addr.to_string())
        })
    }
}
