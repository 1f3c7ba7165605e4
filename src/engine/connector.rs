//! Where and how the engine connects: the target, TLS when asked, TCP_NODELAY (on by
//! default), the connect timeout. Connecting itself is the event loop's (non-blocking
//! connect on a raw socket, then a rustls client session driven by readiness).
//! A load aims at one address; a mass-connection run spreads its connections over
//! several targets and source addresses (`Spread`), each connection's pair picked by
//! its number, so shares of a run over processes pick as one run would.

use crate::stats::ErrorKind;
use rustls::pki_types::ServerName;
use rustls::ClientConnection;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

#[derive(Clone)]
pub struct ClientTls {
    pub config: Arc<rustls::ClientConfig>,
    pub server_name: ServerName<'static>,
}

impl ClientTls {
    /// TLS to `host`, checking the server with `trust`.
    pub fn new(trust: &crate::net::tls::Trust, host: &str) -> crate::error::Result<Self> {
        Ok(ClientTls {
            config: crate::net::tls::client_config(trust)?,
            server_name: crate::net::tls::server_name(host)?,
        })
    }
}

/// A failed connection attempt: its kind for the counters, its text for the report.
#[derive(Debug)]
pub struct ConnectError {
    pub kind: ErrorKind,
    pub detail: String,
    /// The errno of a failed connect (0: none, as for a TLS failure), tallied by name.
    pub errno: i32,
}

/// Several targets and source addresses: connection `n` (its number in the run,
/// `first` + its place in this share) goes to `targets[n % t]` from
/// `sources[(n / t) % s]`, so every target sees every source and each
/// (source, target) pair gets its share of the source ports.
#[derive(Clone, Default, Debug)]
pub struct Spread {
    /// Empty: `Connector::addr` alone.
    pub targets: Vec<SocketAddr>,
    /// Empty: the kernel picks the source.
    pub sources: Vec<IpAddr>,
    /// The number of this share's first connection in the whole run.
    pub first: u64,
}

impl Spread {
    /// The target and source of connection `n` of this share.
    pub fn pick(&self, addr: SocketAddr, n: u64) -> (SocketAddr, Option<IpAddr>) {
        let g = self.first.wrapping_add(n);
        let t = self.targets.len().max(1) as u64;
        let dest = self.targets.get((g % t) as usize).copied().unwrap_or(addr);
        let source = (!self.sources.is_empty())
            .then(|| self.sources[((g / t) % self.sources.len() as u64) as usize]);
        (dest, source)
    }
}

#[derive(Clone)]
pub struct Connector {
    pub addr: SocketAddr,
    pub tls: Option<ClientTls>,
    pub nodelay: bool,
    pub timeout: Duration,
    pub spread: Spread,
}

impl Connector {
    /// Starts a non-blocking connect for this share's connection number `n`:
    /// (descriptor, connected already).
    pub fn start(&self, n: u64) -> Result<(i32, bool), ConnectError> {
        let (dest, source) = self.spread.pick(self.addr, n);
        crate::net::socket::start_connect(dest, source, self.nodelay).map_err(|e| {
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
            errno,
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
                    errno: 0,
                }),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spread_pairs_every_target_with_every_source() {
        let t: Vec<SocketAddr> = vec![
            "127.0.0.1:7".parse().unwrap(),
            "127.0.0.2:7".parse().unwrap(),
        ];
        let s: Vec<IpAddr> = vec!["127.0.0.11".parse().unwrap(), "127.0.0.12".parse().unwrap()];
        let spread = Spread {
            targets: t.clone(),
            sources: s.clone(),
            first: 1,
        };
        let addr: SocketAddr = "127.0.0.9:9".parse().unwrap();
        let picks: Vec<_> = (0..4).map(|n| spread.pick(addr, n)).collect();
        assert_eq!(
            picks,
            vec![
                (t[1], Some(s[0])),
                (t[0], Some(s[1])),
                (t[1], Some(s[1])),
                (t[0], Some(s[0])),
            ]
        );
        assert_eq!(Spread::default().pick(addr, 5), (addr, None));
    }
}
