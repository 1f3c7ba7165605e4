//! WebSocket in a suite and in the schema (`proto::entry::Entry`): a suite point echoes
//! messages of its size over `ws://ADDR/PATH`; its result carries the `ws` block.

use super::plugin::Ws;
use crate::proto::entry::{Entry, SuitePoint};
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

    fn suite_args(&self, p: &SuitePoint<'_>) -> Vec<String> {
        p.sized_load_args(self.name(), format!("ws://{}{}", p.addr, p.path))
    }
}
