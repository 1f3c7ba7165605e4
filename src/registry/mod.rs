//! The load commands wirebench has, once: each protocol (`src/proto/<name>/`) and
//! `connect`, as the suite, the schema, `merge` and `k8s` look them up by name. It
//! stands above both `proto` and `connect`, so neither imports the other.

pub mod schema;

use crate::proto::entry::Entry;

/// Every load command, once, as the suite and the schema see it (`proto::entry::Entry`):
/// each protocol (`wirebench NAME`, `serve NAME`) and `connect`. Adding a protocol
/// adds one line here, as in each command enum (cli.rs) and each dispatch
/// (commands/mod.rs); the rest of it lives in its folder, `src/proto/<name>/`.
pub const REGISTRY: &[&dyn Entry] = &[
    &crate::proto::echo::plugin::Echo,
    &crate::proto::http::plugin::Http,
    &crate::proto::amqp::plugin::Amqp,
    &crate::proto::redis::plugin::Redis,
    &crate::proto::ws::plugin::Ws,
    &crate::proto::grpc::plugin::Grpc,
    &crate::connect::entry::Connect,
];

/// The registered command named `name`.
pub fn find(name: &str) -> Option<&'static dyn Entry> {
    REGISTRY.iter().copied().find(|e| e.name() == name)
}

/// The registered commands' names, in registration order.
pub fn names() -> Vec<&'static str> {
    REGISTRY.iter().map(|e| e.name()).collect()
}

/// The block merge of the command whose results are of `kind` (`Entry::block_merge`):
/// how `wirebench merge` and the suite's rounds merge a protocol's blocks without
/// naming it. A kind not registered (an external generator) merges by the generic
/// counter sum.
pub fn block_merge(kind: &str) -> crate::stats::merge::BlockMerge {
    find(kind)
        .map(|e| e.block_merge())
        .unwrap_or(crate::stats::merge::no_block_merge)
}

/// The block check of the command whose results are of `kind` (`Entry::block_check`),
/// which `wirebench merge` runs on every part; a kind not registered checks nothing.
pub fn block_check(kind: &str) -> crate::stats::merge::BlockCheck {
    find(kind)
        .map(|e| e.block_check())
        .unwrap_or(crate::stats::merge::no_block_check)
}
