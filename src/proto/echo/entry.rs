//! Echo in a suite and in the schema (`proto::entry::Entry`).

use super::plugin::Echo;
use crate::proto::entry::{Entry, SuitePoint};
use crate::proto::plugin::Protocol;

impl Entry for Echo {
    fn name(&self) -> &'static str {
        <Echo as Protocol>::NAME
    }

    /// A suite echoes 64-byte payloads unless told otherwise.
    fn suite_default_size(&self) -> u64 {
        64
    }

    fn suite_args(&self, p: &SuitePoint<'_>) -> Vec<String> {
        p.sized_load_args(self.name(), p.addr.to_string())
    }
}
