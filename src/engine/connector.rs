//! Opening a connection to the target: TCP (TCP_NODELAY on by default), then TLS when asked.

use crate::stats::ErrorKind;
use rustls::pki_types::ServerName;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;
use tokio_rustls::TlsConnector;

pub enum Stream {
    Plain(TcpStream),
    Tls(Box<TlsStream<TcpStream>>),
}

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

impl ConnectError {
    fn new(kind: ErrorKind, detail: impl std::fmt::Display) -> Self {
        ConnectError {
            kind,
            detail: detail.to_string(),
        }
    }
}

#[derive(Clone)]
pub struct Connector {
    pub addr: SocketAddr,
    pub tls: Option<ClientTls>,
    pub nodelay: bool,
    pub timeout: Duration,
}

impl Connector {
    pub async fn connect(&self) -> Result<Stream, ConnectError> {
        let tcp = match tokio::time::timeout(self.timeout, TcpStream::connect(self.addr)).await {
            Err(_) => {
                return Err(ConnectError::new(
                    ErrorKind::ConnectTimeout,
                    format!("connecting to {} timed out", self.addr),
                ))
            }
            Ok(Err(e)) => {
                return Err(ConnectError::new(
                    ErrorKind::from_connect(&e),
                    format!("connecting to {}: {e}", self.addr),
                ))
            }
            Ok(Ok(s)) => s,
        };
        if self.nodelay {
            let _ = tcp.set_nodelay(true);
        }
        let Some(tls) = &self.tls else {
            return Ok(Stream::Plain(tcp));
        };
        let connector = TlsConnector::from(tls.config.clone());
        match tokio::time::timeout(
            self.timeout,
            connector.connect(tls.server_name.clone(), tcp),
        )
        .await
        {
            Ok(Ok(s)) => Ok(Stream::Tls(Box::new(s))),
            Ok(Err(e)) => Err(ConnectError::new(
                ErrorKind::Tls,
                format!("TLS handshake with {}: {e}", self.addr),
            )),
            Err(_) => Err(ConnectError::new(
                ErrorKind::ConnectTimeout,
                format!("TLS handshake with {} timed out", self.addr),
            )),
        }
    }
}
