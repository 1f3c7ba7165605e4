//! `serve grpc`: the HTTP/2 session's gRPC mode. Every stream is a unary call: its
//! response is `content-type: application/grpc`, its request's message echoed, then
//! the trailers `grpc-status: 0` (`streams.rs`); `grpc.health.v1.Health/Check`
//! answers SERVING whatever the request. A message whose 5-byte length prefix says
//! more than `--max-message` is refused before its bytes come: RESOURCE_EXHAUSTED
//! in its trailers, then the connection ends (GOAWAY), so no message past the limit
//! is ever held.

use super::head::{self, Response};
use super::streams::Stream;

/// The health service's method (grpc/doc/health-checking.md).
pub const HEALTH_CHECK: &[u8] = b"/grpc.health.v1.Health/Check";
/// `HealthCheckResponse { status: SERVING }` behind its prefix: field 1, varint 1.
const SERVING: &[u8] = b"\x00\x00\x00\x00\x02\x08\x01";
/// grpc-status 8.
pub const RESOURCE_EXHAUSTED: u16 = 8;

/// The head of a call's response: 200, application/grpc, no length.
pub fn response_head(out: &mut Vec<u8>, stream: u32) {
    let r = Response {
        status: 200,
        typed: true,
        grpc: true,
        length: None,
        allow: false,
    };
    head::headers(out, stream, false, r);
}

/// The whole answer to a health check: SERVING, status OK. Its DATA is 7 bytes, so
/// any window the peer can give (at least its 65,535 initial bytes) takes it.
pub fn serving(out: &mut Vec<u8>, stream: u32) {
    response_head(out, stream);
    crate::proto::h2::write::data(out, stream, false, SERVING);
    head::trailers(out, stream, 0, b"");
}

/// A call whose request ended with no message: an empty answer, status OK.
pub fn empty(out: &mut Vec<u8>, stream: u32) {
    response_head(out, stream);
    head::trailers(out, stream, 0, b"");
}

/// Reads the prefix from a call's next DATA bytes (`s.received` of them came
/// before): the message's length once the prefix is whole with these bytes.
pub fn message_length(s: &mut Stream, data: &[u8]) -> Option<u32> {
    let had = s.received as usize;
    if had >= 5 {
        return None;
    }
    let n = data.len().min(5 - had);
    s.prefix[had..had + n].copy_from_slice(&data[..n]);
    (had + n == 5).then(|| u32::from_be_bytes([s.prefix[1], s.prefix[2], s.prefix[3], s.prefix[4]]))
}

/// The trailers that refuse a message past the limit.
pub fn refuse_message(out: &mut Vec<u8>, stream: u32) {
    head::trailers(
        out,
        stream,
        RESOURCE_EXHAUSTED,
        b"request message larger than the server's --max-message",
    );
}
