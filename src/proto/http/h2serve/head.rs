//! Header fields both ways. A request's fields are kept only as far as the routes
//! need them (method, path, content-length), in buffers reused from request to
//! request. A response's header block is written straight into the HEADERS frame:
//! every name is an index of HPACK's static table (RFC 7541 appendix A) and every
//! value a literal without indexing, not Huffman-coded, so the block depends on its
//! values alone, the peer's decoder table is never touched, and nothing is allocated.

use super::super::date;
use super::super::server::push_decimal;
use crate::proto::h2::frame::{FrameHeader, END_HEADERS, END_STREAM, HEADERS, HEADER_LEN};
use crate::proto::h2::write;

/// The methods the routes tell apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    Get,
    Head,
    Post,
    Put,
    Other,
}

impl Method {
    fn of(value: &[u8]) -> Method {
        match value {
            b"GET" => Method::Get,
            b"HEAD" => Method::Head,
            b"POST" => Method::Post,
            b"PUT" => Method::Put,
            _ => Method::Other,
        }
    }

    /// The name the HTTP/1.1 router takes (`server::route`).
    pub fn name(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Head => "HEAD",
            Method::Post => "POST",
            Method::Put => "PUT",
            Method::Other => "OTHER",
        }
    }
}

/// What a request's header block said that the routes use.
#[derive(Debug, Default)]
pub struct Request {
    pub method: Option<Method>,
    /// `:path` (empty: none came).
    pub path: Vec<u8>,
    pub content_length: Option<u64>,
    /// A field the RFC forbids or a content-length that is not a number: 400.
    pub malformed: bool,
}

impl Request {
    /// Ready for the next block (the path's buffer kept).
    pub fn clear(&mut self) {
        self.method = None;
        self.path.clear();
        self.content_length = None;
        self.malformed = false;
    }

    /// One decoded field, in order.
    pub fn field(&mut self, name: &[u8], value: &[u8]) {
        match name {
            b":method" => self.method = Some(Method::of(value)),
            b":path" => {
                self.path.clear();
                self.path.extend_from_slice(value);
            }
            b"content-length" => {
                let n = std::str::from_utf8(value)
                    .ok()
                    .filter(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()))
                    .and_then(|v| v.parse::<u64>().ok());
                match n {
                    Some(n) => self.content_length = Some(n),
                    None => self.malformed = true,
                }
            }
            // Connection-specific fields are malformed in HTTP/2 (RFC 9113 8.2.2).
            b"connection" | b"keep-alive" | b"proxy-connection" | b"transfer-encoding"
            | b"upgrade" => self.malformed = true,
            _ => {}
        }
    }
}

/// Static-table indices of the names a response uses.
const STATUS: u8 = 8;
const ALLOW: u8 = 22;
const CONTENT_LENGTH: u8 = 28;
const CONTENT_TYPE: u8 = 31;
const DATE: u8 = 33;
const SERVER: u8 = 54;

/// What a response's HEADERS frame says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Response {
    pub status: u16,
    /// content-type: text/plain (a status with a body), application/grpc with `grpc`.
    pub typed: bool,
    /// A gRPC response (`serve grpc`): its content-type is application/grpc.
    pub grpc: bool,
    /// content-length, when known.
    pub length: Option<usize>,
    /// 405's allow field.
    pub allow: bool,
}

/// Appends one HEADERS frame (END_HEADERS; END_STREAM when `end_stream`) with
/// `r`'s header block. The block is under 200 bytes, one frame at any max frame size.
pub fn headers(out: &mut Vec<u8>, stream: u32, end_stream: bool, r: Response) {
    let start = out.len();
    let flags = END_HEADERS | if end_stream { END_STREAM } else { 0 };
    write::header(
        out,
        FrameHeader {
            len: 0,
            kind: HEADERS,
            flags,
            stream,
        },
    );
    status(out, r.status);
    literal(out, SERVER, b"wirebench");
    literal(out, DATE, &date::now());
    if r.grpc {
        literal(out, CONTENT_TYPE, b"application/grpc");
    } else if r.typed {
        literal(out, CONTENT_TYPE, b"text/plain");
    }
    if let Some(n) = r.length {
        name(out, CONTENT_LENGTH);
        let at = out.len();
        out.push(0);
        push_decimal(out, n);
        out[at] = (out.len() - at - 1) as u8;
    }
    if r.allow {
        literal(out, ALLOW, b"GET, HEAD, POST, PUT");
    }
    let len = (out.len() - start - HEADER_LEN) as u32;
    out[start..start + 3].copy_from_slice(&len.to_be_bytes()[1..]);
}

/// A gRPC response's trailers: one HEADERS frame (END_HEADERS, END_STREAM) with
/// `grpc-status: code` and, when given, `grpc-message` (under 127 bytes, already
/// percent-encoded), both names literal (they are in no static table).
pub fn trailers(out: &mut Vec<u8>, stream: u32, code: u16, message: &[u8]) {
    let start = out.len();
    write::header(
        out,
        FrameHeader {
            len: 0,
            kind: HEADERS,
            flags: END_HEADERS | END_STREAM,
            stream,
        },
    );
    let mut digits = Vec::with_capacity(3);
    push_decimal(&mut digits, code as usize);
    literal_name(out, b"grpc-status", &digits);
    if !message.is_empty() {
        literal_name(out, b"grpc-message", message);
    }
    let len = (out.len() - start - HEADER_LEN) as u32;
    out[start..start + 3].copy_from_slice(&len.to_be_bytes()[1..]);
}

/// A literal field without indexing with a literal name (RFC 7541 6.2.2, index 0),
/// name and value raw strings under 127 bytes.
fn literal_name(out: &mut Vec<u8>, name: &[u8], value: &[u8]) {
    debug_assert!(name.len() < 127 && value.len() < 127);
    out.push(0);
    out.push(name.len() as u8);
    out.extend_from_slice(name);
    out.push(value.len() as u8);
    out.extend_from_slice(value);
}

/// `:status`: an indexed field for the seven codes the static table holds.
fn status(out: &mut Vec<u8>, code: u16) {
    let indexed = match code {
        200 => 8,
        204 => 9,
        206 => 10,
        304 => 11,
        400 => 12,
        404 => 13,
        500 => 14,
        _ => 0,
    };
    if indexed != 0 {
        out.push(0x80 | indexed);
        return;
    }
    let digits = [
        b'0' + (code / 100 % 10) as u8,
        b'0' + (code / 10 % 10) as u8,
        b'0' + (code % 10) as u8,
    ];
    literal(out, STATUS, &digits);
}

/// A literal field without indexing whose name is static index `index` (RFC 7541
/// 6.2.2: a 4-bit prefix), its value a raw string under 127 bytes.
fn literal(out: &mut Vec<u8>, index: u8, value: &[u8]) {
    debug_assert!(value.len() < 127);
    name(out, index);
    out.push(value.len() as u8);
    out.extend_from_slice(value);
}

fn name(out: &mut Vec<u8>, index: u8) {
    // Every index used here is below 15 + 128: at most two bytes.
    if index < 15 {
        out.push(index);
    } else {
        out.extend_from_slice(&[0x0f, index - 15]);
    }
}
