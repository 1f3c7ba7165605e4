//! Bytes in and out of one connection over its raw non-blocking descriptor, for loads
//! and servers alike: plain TCP, or a rustls session (client or server: generic over
//! rustls' `ConnectionCommon`) driven by readiness. A server's handshake runs inside
//! reads and writes; a client's is `handshake`, before its first request. No buffer of
//! its own: plaintext lands in the caller's (the thread's) buffer. The load engine sees
//! this through `engine/transport.rs`, which names failures in its error kinds.

use crate::net::socket::{self, FdIo};
use rustls::ConnectionCommon;
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
pub fn flush_tls<D>(s: &mut ConnectionCommon<D>, fd: i32) -> Result<bool, ErrorKind> {
    socket::flush_tls(s, fd).map_err(|e| e.kind())
}

/// Reads plaintext through a TLS session, advancing the handshake on the way.
/// `Failed(InvalidData)` is a TLS failure (`handshaking` tells when it happened).
pub fn read_tls<D>(s: &mut ConnectionCommon<D>, fd: i32, buf: &mut [u8]) -> Input {
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
pub fn write_tls<D>(s: &mut ConnectionCommon<D>, fd: i32, data: &[u8]) -> Result<usize, ErrorKind> {
    let n = s.writer().write(data).map_err(|e| e.kind())?;
    flush_tls(s, fd)?;
    Ok(n)
}

/// Advances a client's TLS handshake as far as the socket allows. Ok(true) once
/// complete; Err: why it failed, in words.
pub fn handshake<D>(s: &mut ConnectionCommon<D>, fd: i32) -> Result<bool, String> {
    loop {
        flush_tls(s, fd).map_err(|k| std::io::Error::from(k).to_string())?;
        if !s.is_handshaking() {
            return Ok(true);
        }
        if !s.wants_read() {
            return Ok(false);
        }
        match s.read_tls(&mut FdIo(fd)) {
            Ok(0) => return Err("the server closed the connection".into()),
            Ok(_) => {
                if let Err(e) = s.process_new_packets() {
                    let _ = flush_tls(s, fd);
                    return Err(crate::net::tls_words::failure(&e));
                }
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(false),
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e.to_string()),
        }
    }
}
