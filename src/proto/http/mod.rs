//! HTTP/1.1: URL and request (serialized once), the incremental response parser with
//! its body framing, the load client and the server handler.

pub mod chunked;
pub mod client;
pub mod config;
pub mod date;
pub mod entry_figures;
pub mod figures;
pub mod gen;
pub mod plugin;
pub mod raw_entry;
pub mod request;
pub mod request_set;
pub mod request_set_block;
pub mod request_wire;
pub mod requests_toml;
pub mod response;
pub mod server;
pub mod status;
pub mod suite;
pub mod suite_settings;
pub mod targets;
pub mod url;
