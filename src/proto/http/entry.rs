//! HTTP in a suite and in the schema (`proto::entry::Entry`): its suite loads
//! (`suite.rs`, driven by wirebench or the external HTTP generators of `gen/`), a
//! server's readiness as an answered GET, and its `status_classes` block.

use super::plugin::Http;
use super::suite::{self, HttpSuite};
use crate::proto::entry::{Entry, ReadyProbe, SuiteLoad};
use crate::proto::plugin::Protocol;

impl Entry for Http {
    fn name(&self) -> &'static str {
        <Http as Protocol>::NAME
    }

    fn result_blocks_schema(&self) -> &'static str {
        include_str!("figures.schema.json")
    }

    fn suite_generators(&self) -> &'static [&'static str] {
        suite::GENERATORS
    }

    fn suite_load(
        &self,
        block: Option<&toml::Value>,
        sizes: &[u64],
    ) -> Result<Box<dyn SuiteLoad>, String> {
        Ok(Box::new(HttpSuite::from_block(block, sizes)?))
    }

    fn ready_probe(&self, value: &toml::Value) -> Result<ReadyProbe, String> {
        suite::ready_probe(value)
    }
}
