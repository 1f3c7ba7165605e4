//! WebSocket (RFC 6455): frames, the upgrade, the load client and `serve ws`.

pub mod client;
pub mod codec;
pub mod config;
pub mod figures;
pub mod handshake;
pub mod message;
pub mod plugin;
pub mod server;
pub mod url;
