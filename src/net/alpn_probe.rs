//! One TLS handshake before a load, to learn which application protocol the server
//! chooses by ALPN (`wirebench http https://...` speaks HTTP/2 or HTTP/1.1 by it). A
//! blocking socket with the load's connect timeout, closed with close_notify once the
//! handshake is done; no request is sent on it.

use rustls::pki_types::ServerName;
use rustls::{ClientConfig, ClientConnection};
use std::io::{Error, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::Duration;

/// The protocol the server at `addr` chose from `config`'s ALPN list (None: it chose
/// none, or refused them all with a no_application_protocol alert), or why the
/// handshake did not complete.
pub fn chosen_protocol(
    addr: SocketAddr,
    config: Arc<ClientConfig>,
    name: ServerName<'static>,
    timeout: Duration,
) -> std::io::Result<Option<Vec<u8>>> {
    let mut sock = TcpStream::connect_timeout(&addr, timeout)?;
    sock.set_read_timeout(Some(timeout))?;
    sock.set_write_timeout(Some(timeout))?;
    let mut tls = ClientConnection::new(config, name).map_err(Error::other)?;
    while tls.is_handshaking() {
        if let Err(e) = tls.complete_io(&mut sock) {
            return match e.get_ref().and_then(|i| i.downcast_ref::<rustls::Error>()) {
                Some(rustls::Error::AlertReceived(
                    rustls::AlertDescription::NoApplicationProtocol,
                )) => Ok(None),
                _ => Err(e),
            };
        }
    }
    let chosen = tls.alpn_protocol().map(<[u8]>::to_vec);
    tls.send_close_notify();
    // The close is a courtesy: the answer is known whether or not it goes out.
    let _ = tls.write_tls(&mut sock).and_then(|_| sock.flush());
    Ok(chosen)
}
