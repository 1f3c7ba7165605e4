//! HTTP/2 (RFC 9113) as bytes, sans-IO: frames parsed from and written to buffers,
//! header blocks through HPACK (RFC 7541), SETTINGS, and the flow-control windows as
//! pure bookkeeping. No socket, no clock: the HTTP client and server sessions (and
//! gRPC, which rides on them) own the connection state and call these.
//!
//! - `frame.rs`: the frame header and every frame type parsed (`Incomplete` until
//!   whole; a length past the receiver's max frame size is refused from the header
//!   alone, so nothing waits for a 2^24-byte payload);
//! - `write.rs`: every frame type written (HEADERS split into CONTINUATION frames at
//!   the peer's max frame size);
//! - `settings.rs`: SETTINGS parameters, validated and applied;
//! - `flow.rs`: send and receive windows (RFC 9113 6.9);
//! - `hpack.rs`: a header block assembled from HEADERS/PUSH_PROMISE and CONTINUATION
//!   frames under a cap, decoded under a header-list-size cap, and encoded;
//!   `hpack_walk.rs`: a block's fields checked whole before the crate decodes them;
//!   `hpack_memo.rs`: a client's last block remembered with its fields (a server
//!   repeats its response head), the dynamic table kept exact;
//! - `error.rs`: the error codes (RFC 9113 7) and what a parse refuses.

pub mod error;
pub mod flow;
pub mod frame;
pub mod hpack;
mod hpack_memo;
mod hpack_walk;
pub mod settings;
pub mod write;

#[cfg(test)]
mod hpack_memo_tests;
#[cfg(test)]
mod tests;

pub use error::{ErrorCode, FrameError};
pub use frame::{parse, Frame, FrameHeader, Parsed, PREFACE};
