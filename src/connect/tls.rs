//! TLS over the raw descriptors of the connect loop: a rustls client session per
//! connection (only with --tls), driven by readiness like the plain sockets.

use super::messages::TlsSpec;
use crate::error::Result;
use crate::net::socket::FdIo;
use crate::net::tls::{self, Trust};
use rustls::pki_types::ServerName;
use rustls::ClientConnection;
use std::io::{ErrorKind, Read, Write};
use std::sync::Arc;

pub struct ClientTls {
    config: Arc<rustls::ClientConfig>,
    name: ServerName<'static>,
}

impl ClientTls {
    pub fn new(spec: &TlsSpec, server_name: &str) -> Result<ClientTls> {
        let trust = match spec {
            TlsSpec::Insecure => Trust::Insecure,
            TlsSpec::CaFile(p) => Trust::CaFile(p.into()),
            TlsSpec::CaPem(p) => Trust::CaPem(p.clone()),
            TlsSpec::System => Trust::System,
        };
        Ok(ClientTls {
            config: tls::client_config(&trust)?,
            name: tls::server_name(server_name)?,
        })
    }

    pub fn session(&self) -> std::result::Result<Box<ClientConnection>, &'static str> {
        ClientConnection::new(self.config.clone(), self.name.clone())
            .map(Box::new)
            .map_err(|_| "tls")
    }
}

/// Why a TLS step failed, as the report names it.
pub fn io_kind(e: &std::io::Error) -> &'static str {
    match e.raw_os_error() {
        Some(code) => super::messages::io_kind(code),
        None if e.kind() == ErrorKind::InvalidData => "tls",
        None => "io",
    }
}

/// Writes what the session has queued. Ok(true): all out; Ok(false): the socket is full.
pub fn flush(s: &mut ClientConnection, fd: i32) -> std::result::Result<bool, &'static str> {
    let mut io = FdIo(fd);
    while s.wants_write() {
        match s.write_tls(&mut io) {
            Ok(_) => {}
            Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(false),
            Err(e) => return Err(io_kind(&e)),
        }
    }
    Ok(true)
}

/// Advances a handshake as far as the socket allows. Ok(true) once it is complete.
pub fn handshake(s: &mut ClientConnection, fd: i32) -> std::result::Result<bool, &'static str> {
    loop {
        flush(s, fd)?;
        if !s.is_handshaking() {
            return Ok(true);
        }
        if !s.wants_read() {
            return Ok(false);
        }
        match s.read_tls(&mut FdIo(fd)) {
            Ok(0) => return Err("closed"),
            Ok(_) => {
                s.process_new_packets().map_err(|_| "tls")?;
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => return Ok(false),
            Err(e) => return Err(io_kind(&e)),
        }
    }
}

/// What one read of a connection produced.
pub enum Input {
    /// `n` plaintext bytes at the start of the buffer.
    Data(usize),
    /// Nothing for the application (EAGAIN, or TLS records such as session tickets).
    Nothing,
    Eof,
    Failed(&'static str),
}

/// Reads from the socket into the session and returns the plaintext now available.
pub fn read(s: &mut ClientConnection, fd: i32, buf: &mut [u8]) -> Input {
    match s.read_tls(&mut FdIo(fd)) {
        Ok(0) => return Input::Eof,
        Ok(_) => {
            if s.process_new_packets().is_err() {
                return Input::Failed("tls");
            }
        }
        Err(e) if e.kind() == ErrorKind::WouldBlock => {}
        Err(e) => return Input::Failed(io_kind(&e)),
    }
    // Replies to the peer's records (key updates) go out now.
    if let Err(k) = flush(s, fd) {
        return Input::Failed(k);
    }
    match s.reader().read(buf) {
        Ok(0) => Input::Eof,
        Ok(n) => Input::Data(n),
        Err(e) if e.kind() == ErrorKind::WouldBlock => Input::Nothing,
        Err(e) => Input::Failed(io_kind(&e)),
    }
}

/// Queues `data` as application data and writes it out. Ok(true) when all went out.
pub fn write(
    s: &mut ClientConnection,
    fd: i32,
    data: &[u8],
) -> std::result::Result<bool, &'static str> {
    s.writer().write_all(data).map_err(|_| "tls")?;
    flush(s, fd)
}
