//! Bytes in and out of one server connection over its raw descriptor: plain TCP, or a
//! rustls server session driven by readiness (the handshake runs inside reads and
//! writes). No buffer of its own: plaintext lands in the caller's (the thread's) buffer.

use crate::net::socket::{self, FdIo};
use rustls::ServerConnection;
use std::io::{ErrorKind, Read, Write};

/// What one read produced.
pub enum Input {
    /// `n` bytes at the start of the buffer; `drained`: the socket had no more then.
    Data {
        n: usize,
        drained: bool,
    },
    /// Nothing now (EAGAIN, or TLS records with no application data).
    WouldBlock,
    Eof,
    Failed(ErrorKind),
}

fn kind(errno: i32) -> ErrorKind {
    std::io::Error::from_raw_os_error(errno).kind()
}

/// Reads from a plain socket. A short read means the socket was empty: with
/// edge-triggered readiness the next byte brings a new event, so no EAGAIN read is spent.
#[inline]
pub fn read_plain(fd: i32, buf: &mut [u8]) -> Input {
    loop {
        return match socket::recv(fd, buf) {
            Ok(0) => Input::Eof,
            Ok(n) => Input::Data {
                n,
                drained: n < buf.len(),
            },
            Err(libc::EINTR) => continue,
            Err(e) if e == libc::EAGAIN => Input::WouldBlock,
            Err(e) => Input::Failed(kind(e)),
        };
    }
}

/// Writes as much of `data` as the socket takes now.
#[inline]
pub fn write_plain(fd: i32, data: &[u8]) -> Result<usize, ErrorKind> {
    let mut at = 0;
    while at < data.len() {
        match socket::write(fd, &data[at..]) {
            Ok(0) => return Err(ErrorKind::WriteZero),
            Ok(n) => at += n,
            Err(libc::EINTR) => {}
            Err(e) if e == libc::EAGAIN => break,
            Err(e) => return Err(kind(e)),
        }
    }
    Ok(at)
}

/// Writes what the session has queued (records, handshake messages).
/// Ok(true): all out; Ok(false): the socket is full.
pub fn flush_tls(s: &mut ServerConnection, fd: i32) -> Result<bool, ErrorKind> {
    socket::flush_tls(&mut **s, fd).map_err(|e| e.kind())
}

/// Reads plaintext through a TLS session, advancing the handshake on the way.
/// `Failed(InvalidData)` is a TLS failure (`handshaking` tells when it happened).
pub fn read_tls(s: &mut ServerConnection, fd: i32, buf: &mut [u8]) -> Input {
    let mut eof = false;
    loop {
        match s.reader().read(buf) {
            Ok(0) => return Input::Eof,
            Ok(n) => return Input::Data { n, drained: false },
            Err(e) if e.kind() == ErrorKind::WouldBlock => {
                if eof {
                    return Input::Eof;
                }
            }
            // The peer closed without close_notify: a plain end of stream here.
            Err(e) if e.kind() == ErrorKind::UnexpectedEof => return Input::Eof,
            Err(e) => return Input::Failed(e.kind()),
        }
        match s.read_tls(&mut FdIo(fd)) {
            Ok(0) => eof = true,
            Ok(_) => {}
            Err(e) if e.kind() == ErrorKind::WouldBlock => return Input::WouldBlock,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Input::Failed(e.kind()),
        }
        if s.process_new_packets().is_err() {
            // Send the alert rustls queued, as a courtesy; the connection ends anyway.
            let _ = flush_tls(s, fd);
            return Input::Failed(ErrorKind::InvalidData);
        }
        // Handshake messages and replies to the peer's records go out now; what the
        // socket does not take waits for writability (the caller checks wants_write).
        if let Err(k) = flush_tls(s, fd) {
            return Input::Failed(k);
        }
    }
}

/// Queues as much plaintext as the session takes (its buffer limit) and writes it out.
pub fn write_tls(s: &mut ServerConnection, fd: i32, data: &[u8]) -> Result<usize, ErrorKind> {
    let n = s.writer().write(data).map_err(|e| e.kind())?;
    flush_tls(s, fd)?;
    Ok(n)
}
