//! TCP echo: frames, the load client and the server handler.

pub mod client;
pub mod codec;
pub mod config;
pub mod plugin;
pub mod server;
