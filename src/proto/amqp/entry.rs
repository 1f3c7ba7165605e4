//! AMQP in a suite and in the schema (`proto::entry::Entry`): a suite point publishes
//! (as the guest user, RabbitMQ's default) and its result carries the `amqp` block.

use super::plugin::Amqp;
use crate::proto::entry::{Entry, SuitePoint};
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

    fn suite_target(&self, addr: &str, _path: &str) -> String {
        format!("amqp://guest:guest@{addr}/")
    }

    fn suite_args(&self, p: &SuitePoint<'_>) -> Vec<String> {
        let mut a: Vec<String> = vec![
            self.name().into(),
            self.suite_target(p.addr, p.path),
            "--mode".into(),
            "publish".into(),
            "-t".into(),
            p.threads.to_string(),
            "-c".into(),
            p.connections.to_string(),
            "--size".into(),
            p.size.to_string(),
        ];
        a.extend(p.shared_args());
        a
    }
}
