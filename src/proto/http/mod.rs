//! HTTP/1.1 and HTTP/2 on the codec in `proto::h2`: URL and request (serialized once),
//! the incremental response parser with its body framing, the load client and the
//! server handler; the HTTP/2 client (`h2_*.rs`) and the server's HTTP/2 (`h2serve/`),
//! chosen per connection by its first bytes (`serve_session.rs`).

pub mod alpn;
pub mod chunked;
pub mod client;
pub mod config;
pub mod date;
pub mod entry_figures;
pub mod figures;
pub mod gen;
pub mod h2_client;
pub mod h2_exchange;
pub mod h2_plugin;
pub mod h2_streams;
pub mod h2serve;
pub mod plugin;
pub mod raw_entry;
pub mod request;
pub mod request_set;
pub mod request_set_block;
pub mod request_wire;
pub mod requests_toml;
pub mod response;
pub mod serve_session;
pub mod server;
pub mod status;
pub mod suite;
pub mod suite_settings;
pub mod targets;
pub mod url;
