//! One unary call as the HTTP/2 client sends it on every stream and judges each
//! answer (an `Exchange`): a POST to `/package.Service/Method` with
//! `content-type: application/grpc`, `te: trailers`, the deadline as `grpc-timeout`
//! and `-H`'s metadata; its body the message behind the 5-byte prefix (not
//! compressed, its length). A call is answered when its stream ends: its code is
//! the `grpc-status` of the trailers (or of a trailers-only response), else the one
//! its HTTP status maps to; `OK` is a correct reply, any other code a `status`
//! error with `grpc-message`'s words.

use super::codes::{self, StatusCodes};
use crate::engine::session::{Verdict, Words};
use crate::proto::h2::hpack;
use crate::proto::http::h2_exchange::{Exchange, Head, NO_CODE};
use crate::proto::http::h2_streams::Stream;
use crate::stats::ErrorKind;
use std::fmt::Write as _;

/// What every connection of a run shares.
pub struct GrpcCall {
    block: Vec<u8>,
    body: Vec<u8>,
    windows: (u32, u32),
}

/// What the request's header block says.
pub struct Request<'a> {
    pub tls: bool,
    pub authority: &'a str,
    /// `/package.Service/Method`.
    pub path: &'a str,
    /// `grpc-timeout`'s value, when a deadline is set.
    pub timeout: Option<String>,
    /// Metadata, names in lower case.
    pub metadata: &'a [(String, String)],
}

/// `message` behind gRPC's prefix: not compressed, its length (big-endian u32).
pub fn framed(message: &[u8]) -> Vec<u8> {
    let mut body = Vec::with_capacity(5 + message.len());
    body.push(0);
    body.extend_from_slice(&(message.len() as u32).to_be_bytes());
    body.extend_from_slice(message);
    body
}

/// A deadline as `grpc-timeout` (at most 8 digits and a unit): milliseconds, or
/// seconds when that is too many digits.
pub fn timeout_value(ms: u64) -> String {
    if ms <= 99_999_999 {
        format!("{}m", ms.max(1))
    } else {
        format!("{}S", (ms / 1000).min(99_999_999))
    }
}

impl GrpcCall {
    pub fn new(r: &Request<'_>, message: &[u8], windows: (u32, u32)) -> GrpcCall {
        let mut owned: Vec<(String, String)> = vec![
            (":method".into(), "POST".into()),
            (
                ":scheme".into(),
                if r.tls { "https" } else { "http" }.into(),
            ),
            (":authority".into(), r.authority.into()),
            (":path".into(), r.path.into()),
            ("content-type".into(), "application/grpc".into()),
            ("te".into(), "trailers".into()),
            ("user-agent".into(), "wirebench".into()),
        ];
        if let Some(t) = &r.timeout {
            owned.push(("grpc-timeout".into(), t.clone()));
        }
        owned.extend(r.metadata.iter().cloned());
        GrpcCall {
            block: hpack::encode_strings(&owned),
            body: framed(message),
            windows,
        }
    }
}

impl Exchange for GrpcCall {
    type Figures = StatusCodes;

    #[inline]
    fn block(&self) -> &[u8] {
        &self.block
    }

    #[inline]
    fn body(&self) -> &[u8] {
        &self.body
    }

    fn windows(&self) -> (u32, u32) {
        self.windows
    }

    #[inline]
    fn field(&self, name: &[u8], value: &[u8], head: &mut Head) {
        match name {
            b"grpc-status" => head.code = codes::parse(value),
            b"grpc-message" => head.keep_words(value),
            _ => {}
        }
    }

    /// The response's messages are not checked: the call's verdict is its status.
    #[inline]
    fn data(&self, _st: &mut Stream, _piece: &[u8]) {}

    #[inline]
    fn verdict(&self, st: &Stream, figures: &mut StatusCodes) -> Verdict {
        let code = if st.code == NO_CODE {
            codes::of_http(st.status)
        } else {
            st.code
        };
        figures.count(code);
        if code == codes::OK {
            Verdict::Ok
        } else {
            Verdict::Error(ErrorKind::Status)
        }
    }

    fn status_words(&self, status: u16, code: u16, kept: &[u8], words: &mut Words) {
        if code == NO_CODE {
            let mapped = codes::of_http(status);
            let _ = write!(
                words,
                "{}: no grpc-status (:status {status})",
                codes::name(mapped)
            );
            return;
        }
        words.push(codes::name(code).as_bytes());
        if !kept.is_empty() {
            words.push(b": ");
            words.push(kept);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_goes_behind_its_prefix() {
        assert_eq!(framed(b"ab"), b"\x00\x00\x00\x00\x02ab");
        assert_eq!(framed(b""), b"\x00\x00\x00\x00\x00");
    }

    #[test]
    fn a_deadline_fits_grpc_timeouts_eight_digits() {
        assert_eq!(timeout_value(250), "250m");
        assert_eq!(timeout_value(0), "1m");
        assert_eq!(timeout_value(100_000_000), "100000S");
    }
}
