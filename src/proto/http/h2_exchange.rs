//! What a protocol carried over the HTTP/2 client (`h2_client.rs`) makes of its
//! requests and responses: HTTP's status and `--expect-echo` checks, or gRPC's
//! `grpc-status` trailer (`proto/grpc/`). The client owns the connection (frames,
//! SETTINGS, flow control, streams, HPACK); an `Exchange` owns the request it sends
//! on every stream and the verdict on each response, statically dispatched.

pub use super::h2_streams::NO_CODE;
use super::h2_streams::{Stream, BODY_WORDS};
use super::status::StatusSet;
use crate::engine::session::{Verdict, Words};
use crate::stats::{ErrorKind, Figures};
use std::fmt::Write as _;

/// What one response header block (its head or its trailers) said.
pub struct Head {
    /// `:status`, 0 when the block has none (trailers), `u16::MAX` when malformed.
    pub status: u16,
    /// A protocol's own code from the block (gRPC's grpc-status), else `NO_CODE`.
    pub code: u16,
    /// Its words for that code (gRPC's grpc-message), the first `BODY_WORDS` bytes.
    pub words: [u8; BODY_WORDS],
    pub words_len: u8,
}

impl Default for Head {
    fn default() -> Self {
        Head {
            status: 0,
            code: NO_CODE,
            words: [0; BODY_WORDS],
            words_len: 0,
        }
    }
}

impl Head {
    /// Keeps the start of `text` as the code's words.
    pub fn keep_words(&mut self, text: &[u8]) {
        let n = text.len().min(self.words.len());
        self.words[..n].copy_from_slice(&text[..n]);
        self.words_len = n as u8;
    }
}

pub trait Exchange: Send + Sync + 'static {
    type Figures: Figures;
    /// The request's header block, HPACK-encoded once.
    fn block(&self) -> &[u8];
    /// The request body sent on every stream.
    fn body(&self) -> &[u8];
    /// The receive windows offered, per stream and for the connection.
    fn windows(&self) -> (u32, u32);
    /// A response header field other than `:status` (every field of the trailers).
    #[inline]
    fn field(&self, _name: &[u8], _value: &[u8], _head: &mut Head) {}
    /// A piece of a response's body.
    fn data(&self, st: &mut Stream, piece: &[u8]);
    /// A whole response: counted in `figures`, judged.
    fn verdict(&self, st: &Stream, figures: &mut Self::Figures) -> Verdict;
    /// The words of a response judged `ErrorKind::Status`: its `:status`, its
    /// protocol code, the words kept of its body or its code.
    fn status_words(&self, status: u16, code: u16, kept: &[u8], words: &mut Words);
}

/// HTTP over HTTP/2 (`wirebench http --h2`).
pub struct H2Shared {
    /// The request's header block, HPACK-encoded once.
    pub block: Vec<u8>,
    pub body: Vec<u8>,
    pub head: bool,
    pub accept: StatusSet,
    pub echo: bool,
    /// Receive windows offered (tests make them small).
    pub stream_window: u32,
    pub conn_window: u32,
}

impl Exchange for H2Shared {
    type Figures = super::figures::StatusCounts;

    #[inline]
    fn block(&self) -> &[u8] {
        &self.block
    }

    #[inline]
    fn body(&self) -> &[u8] {
        &self.body
    }

    fn windows(&self) -> (u32, u32) {
        (self.stream_window, self.conn_window)
    }

    #[inline]
    fn data(&self, st: &mut Stream, piece: &[u8]) {
        if self.echo {
            st.check_echo(&self.body, piece);
        }
        if !self.accept.contains(st.status) {
            st.keep_words(piece);
        }
    }

    #[inline]
    fn verdict(&self, st: &Stream, codes: &mut Self::Figures) -> Verdict {
        codes.count(st.status);
        if !self.accept.contains(st.status) {
            Verdict::Error(ErrorKind::Status)
        } else if self.echo && (st.echo_bad || st.echo_pos != self.body.len()) {
            Verdict::Error(ErrorKind::Mismatch)
        } else {
            Verdict::Ok
        }
    }

    fn status_words(&self, status: u16, _code: u16, kept: &[u8], words: &mut Words) {
        let _ = write!(words, ":status {status}");
        if !kept.is_empty() {
            words.push(b": ");
            words.push(kept);
        }
    }
}
