//! HTTP/2 in `serve http` (RFC 9113): the session a connection switches to when its
//! first bytes are the client preface (h2c by prior knowledge, or h2 chosen by ALPN
//! under `--tls`: the client sends the preface either way). Built on the codec in
//! `proto::h2`; the routes are HTTP/1.1's (`server.rs`).
//!
//! - `session.rs`: the connection: preface, SETTINGS, the frame loop, its limits;
//! - `streams.rs`: a stream's response body and the DATA it may send under the
//!   flow-control windows;
//! - `head.rs`: a request's header fields as the routes need them, and a response's
//!   header block (static-table names, literal values: no allocation per request);
//! - `figures.rs`: what the HTTP/2 connections of a server thread counted, each
//!   connection closed for abuse by its reason.

mod figures;
mod grpc;
mod head;
mod session;
mod streams;

#[cfg(test)]
mod tests;

pub use figures::{H2Figures, Reason};
pub use session::H2Session;
