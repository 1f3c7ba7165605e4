//! Bytes in and out of one raw non-blocking socket, plain or through a rustls client
//! session, for the engine's event loop (edge-triggered: every call goes on until the
//! socket says EAGAIN).

use crate::net::socket::{self, FdIo};
use crate::stats::ErrorKind;
use rustls::ClientConnection;
use std::io::{ErrorKind as Io, Read, Write};

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

fn kind_of(errno: i32) -> ErrorKind {
    ErrorKind::from_io(&std::io::Error::from_raw_os_error(errno))
}

/// Reads once from the socket (through the session, with TLS) into `buf`.
pub fn read(fd: i32, tls: Option<&mut ClientConnection>, buf: &mut [u8]) -> Input {
    let Some(s) = tls else {
        return match socket::read(fd, buf) {
            Ok(0) => Input::Eof,
            Ok(n) => Input::Data(n),
            Err(libc::EAGAIN) => Input::Nothing,
            Err(libc::EINTR) => Input::Nothing,
            Err(e) => Input::Failed(kind_of(e)),
        };
    };
    // Plaintext already decrypted goes first.
    match s.reader().read(buf) {
        Ok(0) => return Input::Eof,
        Ok(n) => return Input::Data(n),
        Err(e) if e.kind() == Io::WouldBlock => {}
        Err(e) => return Input::Failed(ErrorKind::from_io(&e)),
    }
    loop {
        match s.read_tls(&mut FdIo(fd)) {
            Ok(0) => return Input::Eof,
            Ok(_) => {
                if s.process_new_packets().is_err() {
                    // The alert for the peer is best effort.
                    let _ = flush_tls(s, fd);
                    return Input::Failed(ErrorKind::Tls);
                }
            }
            Err(e) if e.kind() == Io::WouldBlock => return Input::Nothing,
            Err(e) if e.kind() == Io::Interrupted => continue,
            Err(e) => return Input::Failed(ErrorKind::from_io(&e)),
        }
        // Answers to the peer's records (key updates) go out now.
        if let Err(k) = flush_tls(s, fd) {
            return Input::Failed(k);
        }
        match s.reader().read(buf) {
            Ok(0) => return Input::Eof,
            Ok(n) => return Input::Data(n),
            Err(e) if e.kind() == Io::WouldBlock => continue,
            Err(e) => return Input::Failed(ErrorKind::from_io(&e)),
        }
    }
}

/// Writes what a TLS session has queued. Ok(true): all out; Ok(false): the socket is full.
pub fn flush_tls(s: &mut ClientConnection, fd: i32) -> Result<bool, ErrorKind> {
    socket::flush_tls(&mut **s, fd).map_err(|e| ErrorKind::from_io(&e))
}

/// Writes `data`; returns how many bytes the socket took (with TLS: all of them, the
/// session queues what the socket does not take yet and `flush_tls` sends it later).
pub fn write(fd: i32, tls: Option<&mut ClientConnection>, data: &[u8]) -> Result<usize, ErrorKind> {
    if let Some(s) = tls {
        s.writer()
            .write_all(data)
            .map_err(|e| ErrorKind::from_io(&e))?;
        flush_tls(s, fd)?;
        return Ok(data.len());
    }
    let mut done = 0;
    while done < data.len() {
        match socket::write(fd, &data[done..]) {
            Ok(0) => return Err(ErrorKind::Closed),
            Ok(n) => done += n,
            Err(libc::EAGAIN) => break,
            Err(libc::EINTR) => {}
            Err(e) => return Err(kind_of(e)),
        }
    }
    Ok(done)
}

/// Advances a client TLS handshake as far as the socket allows. Ok(true) once complete.
pub fn handshake(s: &mut ClientConnection, fd: i32) -> Result<bool, String> {
    loop {
        flush_tls(s, fd).map_err(|k| format!("{k:?}"))?;
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
                    return Err(e.to_string());
                }
            }
            Err(e) if e.kind() == Io::WouldBlock => return Ok(false),
            Err(e) if e.kind() == Io::Interrupted => {}
            Err(e) => return Err(e.to_string()),
        }
    }
}
