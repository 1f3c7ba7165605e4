//! gRPC unary calls (`wirebench grpc`, `wirebench serve grpc`): HTTP/2 with a 5-byte
//! message prefix, `content-type: application/grpc`, `te: trailers` and the call's
//! status in a `grpc-status` trailer. Built on the HTTP/2 client and server of
//! `proto::http`, not beside them:
//!
//! - `call.rs`: the request every stream sends and the verdict on each response
//!   (an `Exchange` of the HTTP/2 client);
//! - `codes.rs`: the status codes by name, and the result's per-code counts;
//! - `message.rs`: the request message from JSON and a `.proto` file compiled at
//!   run time (protox, prost-reflect), or raw bytes;
//! - `config.rs`, `plugin.rs`: flags, the `Protocol`;
//! - `suite_settings.rs`, `suite.rs`, `ghz.rs`: a suite's load, its block, and ghz as
//!   its external generator.
//!
//! The server is `serve http`'s HTTP/2 session in its gRPC mode
//! (`proto/http/h2serve/grpc.rs`).

pub mod call;
pub mod codes;
pub mod config;
pub mod ghz;
pub mod message;
pub mod plugin;
pub mod suite;
pub mod suite_settings;
