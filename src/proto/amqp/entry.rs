//! AMQP in a suite and in the schema (`proto::entry::Entry`): a suite point publishes
//! (as the guest user, RabbitMQ's default) and its result carries the `amqp` block.

use super::plugin::Amqp;
use crate::proto::entry::{plain, Entry, SuiteLoad, SuitePoint};
use crate::proto::plugin::Protocol;

impl Entry for Amqp {
    fn name(&self) -> &'static str {
        <Amqp as Protocol>::NAME
    }

    fn result_blocks_schema(&self) -> &'static str {
        include_str!("figures.schema.json")
    }

    /// The `amqp` block holds rates and handshake histograms: it merges itself.
    fn block_merge(&self) -> crate::stats::merge::BlockMerge {
        super::figures_merge::block_merge
    }

    fn suite_load(
        &self,
        block: Option<&toml::Value>,
        _: &[u64],
    ) -> Result<Box<dyn SuiteLoad>, String> {
        plain(block, suite_args)
    }
}

/// A suite point publishes as RabbitMQ's default user, guest.
fn suite_args(p: &SuitePoint<'_>) -> Vec<String> {
    let mut a: Vec<String> = vec![
        <Amqp as Protocol>::NAME.into(),
        format!("amqp://guest:guest@{}/", p.addr),
        "--mode".into(),
        "publish".into(),
        "-t".into(),
        p.threads.to_string(),
        "-c".into(),
        p.connections_per_thread.to_string(),
        "--size".into(),
        p.size.to_string(),
    ];
    a.extend(p.shared_args());
    a
}
