//! WebSocket in a suite and in the schema (`proto::entry::Entry`): a suite point echoes
//! messages of its size over `ws://ADDR/PATH` (the load's `ws = { path = "/chat" }`,
//! "/" by default); its result carries the `ws` block.

use super::plugin::Ws;
use crate::proto::entry::{string_keys, Entry, SuiteLoad, SuitePoint};
use crate::proto::plugin::Protocol;

impl Entry for Ws {
    fn name(&self) -> &'static str {
        <Ws as Protocol>::NAME
    }

    fn result_blocks_schema(&self) -> &'static str {
        include_str!("figures.schema.json")
    }

    /// A suite echoes 64-byte messages unless told otherwise, as for echo.
    fn suite_default_size(&self) -> u64 {
        64
    }

    fn suite_load(
        &self,
        block: Option<&toml::Value>,
        _: &[u64],
    ) -> Result<Box<dyn SuiteLoad>, String> {
        let mut path = "/".to_string();
        for (_, value) in string_keys(block, &["path"])? {
            path = crate::proto::http::suite::path(value)?;
        }
        Ok(Box::new(WsSuite { path }))
    }
}

/// A suite load's WebSocket settings: the path of the upgrade.
#[derive(Debug)]
struct WsSuite {
    path: String,
}

impl SuiteLoad for WsSuite {
    fn args(&self, p: &SuitePoint<'_>) -> Vec<String> {
        p.sized_load_args(
            <Ws as Protocol>::NAME,
            format!("ws://{}{}", p.addr, self.path),
        )
    }
}
