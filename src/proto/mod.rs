//! Protocols: each owns its bytes (codec, client session, server session) and its
//! config, in its folder; `plugin::Protocol` is what the commands see of it.

pub mod amqp;
pub mod echo;
pub mod http;
pub mod plugin;

/// Every protocol, once: its name (`wirebench NAME`, `serve NAME`). Adding a protocol
/// adds one line here, as in the command enums (cli.rs) and the dispatch (lib.rs).
pub const REGISTRY: &[&str] = &[
    <echo::plugin::Echo as plugin::Protocol>::NAME,
    <http::plugin::Http as plugin::Protocol>::NAME,
    <amqp::plugin::Amqp as plugin::Protocol>::NAME,
];
