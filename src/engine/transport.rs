//! The load engine's view of the one transport (`crate::reactor::transport`): the
//! same reads, writes and TLS driving, with failures named in the result's error kinds
//! and a read's outcome reduced to what a client slot asks (it reads until `Nothing`).

use crate::reactor::transport as shared;
use crate::stats::ErrorKind;
use rustls::ClientConnection;

/// What one read produced.
pub enum Input {
    /// `n` bytes at the start of the buffer.
    Data(usize),
    /// Nothing now (EAGAIN, or TLS records with no application data).
    Nothing,
    /// The peer closed.
    Eof,
    Failed(ErrorKind),
}

/// A failure as the result names it (a socket that took zero bytes is closed).
fn kind_of(k: std::io::ErrorKind) -> ErrorKind {
    match k {
        std::io::ErrorKind::WriteZero => ErrorKind::Closed,
        k => ErrorKind::from_io(&k.into()),
    }
}

/// Reads once from the socket (through the session, with TLS) into `buf`.
#[inline]
pub fn read(fd: i32, tls: Option<&mut ClientConnection>, buf: &mut [u8]) -> Input {
    let got = match tls {
        None => shared::read_plain(fd, buf),
        Some(s) => shared::read_tls(s, fd, buf),
    };
    match got {
        shared::Input::Data { n, .. } => Input::Data(n),
        shared::Input::WouldBlock => Input::Nothing,
        shared::Input::Eof => Input::Eof,
        shared::Input::Failed(k) => Input::Failed(kind_of(k)),
    }
}

/// Writes what a TLS session has queued. Ok(true): all out; Ok(false): the socket is full.
#[inline]
pub fn flush_tls(s: &mut ClientConnection, fd: i32) -> Result<bool, ErrorKind> {
    shared::flush_tls(s, fd).map_err(kind_of)
}

/// Writes `data`; returns how many bytes the socket took (with TLS: all of them, the
/// session's buffer is unlimited (`connector.rs`), so it queues what the socket does
/// not take yet and `flush_tls` sends it later).
#[inline]
pub fn write(fd: i32, tls: Option<&mut ClientConnection>, data: &[u8]) -> Result<usize, ErrorKind> {
    match tls {
        None => shared::write_plain(fd, data),
        Some(s) => shared::write_tls(s, fd, data),
    }
    .map_err(kind_of)
}

pub use shared::handshake;
