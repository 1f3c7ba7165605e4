//! Where and how the engine connects: the target, TLS when asked, TCP_NODELAY (on by
//! default), the connect timeout. Connecting itself is the event loop's (non-blocking
//! connect on a raw socket, then a rustls client session driven by readiness).
//! A load aims at one address; a mass-connection run spreads its connections over
//! several targets and source addresses (`Spread`), each connection's pair picked by
//! its number, so shares of a run over processes pick as one run would.

use crate::net::unix::Dest;
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
            config: crate::net::tls::client_config(trust, None, &[])?,
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
    /// A TCP address, or a unix socket (no source address, no TCP option).
    pub addr: Dest,
    pub tls: Option<ClientTls>,
    pub nodelay: bool,
    pub timeout: Duration,
    pub spread: Spread,
    /// An HTTP CONNECT proxy's tunnel to the target (`addr` is then the proxy's).
    pub tunnel: Option<Arc<crate::net::proxy::Tunnel>>,
    /// Whether a connection could meet itself (see `may_meet_itself`), decided once.
    meets_itself: bool,
}

impl Connector {
    pub fn new(
        addr: impl Into<Dest>,
        tls: Option<ClientTls>,
        nodelay: bool,
        timeout: Duration,
        spread: Spread,
    ) -> Connector {
        let addr = addr.into();
        let ports = crate::sys::proc_fs::ephemeral_ports();
        let meets_itself = addr
            .tcp()
            .is_some_and(|a| may_meet_itself(a, &spread, ports));
        Connector {
            addr,
            tls,
            nodelay,
            timeout,
            spread,
            tunnel: None,
            meets_itself,
        }
    }

    /// Connects from these source addresses, one per connection in turn.
    pub fn set_sources(&mut self, sources: Vec<IpAddr>) {
        self.spread.sources = sources;
        let ports = crate::sys::proc_fs::ephemeral_ports();
        self.meets_itself = self
            .addr
            .tcp()
            .is_some_and(|a| may_meet_itself(a, &self.spread, ports));
    }

    /// True when this connection is connected to itself: a connect to a loopback port
    /// in the ephemeral range where nothing listens can be given that very port as its
    /// source, and the SYN meets its own socket (TCP simultaneous open). It "succeeds",
    /// and every message would echo back from the kernel. Only asked where it can
    /// happen, so other loads make no extra system call.
    pub fn met_itself(&self, fd: i32) -> bool {
        self.meets_itself && crate::net::socket::connected_to_itself(fd)
    }

    /// The failure a connection that met itself counts as: nothing listens there.
    pub fn met_itself_error(&self) -> ConnectError {
        ConnectError {
            kind: ErrorKind::ConnectRefused,
            detail: format!(
                "connecting to {}: nothing listens there (the kernel gave the connection the target's own port as its source, and it met itself)",
                self.addr
            ),
            errno: libc::ECONNREFUSED,
        }
    }

    /// Starts a non-blocking connect for this share's connection number `n`:
    /// (descriptor, connected already).
    pub fn start(&self, n: u64) -> Result<(i32, bool), ConnectError> {
        let started = match &self.addr {
            Dest::Tcp(addr) => {
                let (dest, source) = self.spread.pick(*addr, n);
                crate::net::socket::start_connect(dest, source, self.nodelay)
            }
            Dest::Unix(path) => crate::net::unix::start_connect(path),
        };
        started.map_err(|e| {
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
                    detail: format!(
                        "TLS handshake with {}: {}",
                        self.addr,
                        crate::net::tls_words::failure(&e)
                    ),
                    errno: 0,
                }),
        )
    }
}

/// Whether any connection of this spread could meet itself: its target is a loopback
/// address on a port the kernel may pick as a source port, and its source is not
/// another address.
fn may_meet_itself(addr: SocketAddr, spread: &Spread, (lo, hi): (u16, u16)) -> bool {
    let targets = if spread.targets.is_empty() {
        std::slice::from_ref(&addr)
    } else {
        &spread.targets[..]
    };
    targets.iter().any(|t| {
        t.ip().is_loopback()
            && (lo..=hi).contains(&t.port())
            && (spread.sources.is_empty() || spread.sources.contains(&t.ip()))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_connection_that_met_itself_is_refused_and_a_real_one_is_not() {
        use socket2::{Domain, Socket, Type};
        use std::os::fd::AsRawFd;
        let sock = Socket::new(Domain::IPV4, Type::STREAM, None).unwrap();
        sock.bind(&"127.0.0.1:0".parse::<SocketAddr>().unwrap().into())
            .unwrap();
        let me = sock.local_addr().unwrap().as_socket().unwrap();
        // Simultaneous open: the SYN meets its own socket and the connect succeeds.
        sock.connect(&me.into()).unwrap();
        let at = |addr| Connector::new(addr, None, true, Duration::from_secs(1), Spread::default());
        let c = at(me);
        let (lo, hi) = crate::sys::proc_fs::ephemeral_ports();
        assert_eq!(
            c.met_itself(sock.as_raw_fd()),
            (lo..=hi).contains(&me.port())
        );
        assert_eq!(c.met_itself_error().kind, ErrorKind::ConnectRefused);
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let real = std::net::TcpStream::connect(l.local_addr().unwrap()).unwrap();
        assert!(!at(l.local_addr().unwrap()).met_itself(real.as_raw_fd()));
        assert!(crate::net::socket::connected_to_itself(sock.as_raw_fd()));
        assert!(!crate::net::socket::connected_to_itself(real.as_raw_fd()));
    }

    #[test]
    fn only_a_loopback_target_on_an_ephemeral_port_from_its_own_address_can_meet_itself() {
        let ports = (32768, 60999);
        let at = |s: &str| s.parse::<SocketAddr>().unwrap();
        let none = Spread::default();
        assert!(may_meet_itself(at("127.0.0.1:40000"), &none, ports));
        assert!(may_meet_itself(at("[::1]:32768"), &none, ports));
        assert!(!may_meet_itself(at("127.0.0.1:8080"), &none, ports));
        assert!(!may_meet_itself(at("127.0.0.1:61000"), &none, ports));
        assert!(!may_meet_itself(at("10.1.2.3:40000"), &none, ports));
        let elsewhere = Spread {
            sources: vec!["127.0.0.2".parse().unwrap()],
            ..Default::default()
        };
        assert!(!may_meet_itself(at("127.0.0.1:40000"), &elsewhere, ports));
        let one_of_them = Spread {
            targets: vec![at("127.0.0.1:8080"), at("127.0.0.3:50000")],
            sources: vec!["127.0.0.3".parse().unwrap()],
            first: 0,
        };
        assert!(may_meet_itself(at("127.0.0.1:8080"), &one_of_them, ports));
    }

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
