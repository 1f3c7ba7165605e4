//! Redis (RESP2 and RESP3): the frame codec (codec), commands and the values keys
//! hold (command), key distributions (keys), the load client (client), the built-in
//! server (server) on a per-thread store (store), its figures and its flags.

pub mod client;
pub mod codec;
pub mod command;
pub mod config;
pub mod figures;
pub mod keys;
pub mod plugin;
pub mod server;
pub mod store;
