//! Where and how the engine connects: the target, TLS when asked, TCP_NODELAY (on by
//! default), the connect timeout. Connecting itself is the event loop's (non-blocking
//! connect on a raw socket, then a rustls client session driven by readiness).

use crate::stats::ErrorKind;
use rustls::pki_types::ServerName;
use rustls::ClientConnection;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

#[derive(Clone)]
pub struct ClientTls {
    pub config: Arc<rustls::ClientConfig>,
    pub server_name: ServerName<'static>,
}

/// A failed connection attempt: its kind for the counters, its text for the report.
#[derive(Debug)]
pub struct ConnectError {
    pub kind: ErrorKind,
    pub detail: String,
}

#[derive(Clone)]
pub struct Connector {
    pub addr: SocketAddr,
    pub tls: Option<ClientTls>,
    pub nodelay: bool,
    pub timeout: Duration,
}

impl Connector {
    /// Starts a non-blocking connect: (descriptor, connected already).
    pub fn start(&self) -> Result<(i32, bool), ConnectError> {
        crate::net::socket::start_connect(self.addr, None, self.nodelay).map_err(|e| {
            self.failed(
                ErrorKind::from_connect(&std::io::Error::from_raw_os_error(e)),
                e,
            )
        })
    }

    /// The error of a connect that finished with `errno`.
    pub fn failed(&self, kind: ErrorKind, errno: i32) -> ConnectError {
        ConnectError {
            kind,
            detail: format!(
                "connecting to {}: {}",
                self.addr,
                std::io::Error::from_raw_os_error(errno)
            ),
        }
    }

    /// A fresh TLS client session, when the load uses TLS. Output is bounded by the
    /// pipeline, so the session's own buffer limit is lifted.
    pub fn tls_session(&self) -> Option<Result<Box<ClientConnection>, ConnectError>> {
        let t = self.tls.as_ref()?;
        Some(
            ClientConnection::new(t.config.clone(), t.server_name.clone())
                .map(|mut s| {
                    s.set_buffer_limit(None);
                    Box::new(s)
                })
                .map_err(|e| ConnectError {
                    kind: ErrorKind::Tls,
                    detail: format!("TLS handshake with {}: {e}", self.addr),
                }),
        )
    }
}
