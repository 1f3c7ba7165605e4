//! Turning what the user typed into socket addresses, with one clear sentence on failure.

use crate::error::{Error, Result};
use std::net::{SocketAddr, ToSocketAddrs};

/// Parses and resolves `HOST:PORT` (`127.0.0.1:8081`, `localhost:8081`, `[::1]:8081`).
/// Returns the address and the host part (for TLS server names).
pub fn resolve(text: &str) -> Result<(SocketAddr, String)> {
    let bad = || {
        Error::usage(format!(
            "'{text}' is not a HOST:PORT address (for example 127.0.0.1:8081 or [::1]:8081)"
        ))
    };
    if let Ok(a) = text.parse::<SocketAddr>() {
        return Ok((a, a.ip().to_string()));
    }
    let (host, port) = text.rsplit_once(':').ok_or_else(bad)?;
    if host.is_empty() || port.parse::<u16>().is_err() {
        return Err(bad());
    }
    let host = host
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_string();
    // Something shaped like an IP literal that does not parse is a typo, not a name to
    // look up: say so at once instead of asking DNS.
    let ip_shaped = host.contains(':') || host.chars().all(|c| c.is_ascii_digit() || c == '.');
    if ip_shaped && host.parse::<std::net::IpAddr>().is_err() {
        return Err(bad());
    }
    let addr = text
        .to_socket_addrs()
        .map_err(|e| Error::usage(format!("cannot resolve '{text}': {e}")))?
        .next()
        .ok_or_else(|| Error::usage(format!("'{text}' resolves to no address")))?;
    Ok((addr, host))
}

/// `resolve` for an address to connect to: port 0 is only for listening (the kernel
/// picks a port), so as a target it is refused instead of failing every connect.
pub fn resolve_target(text: &str) -> Result<(SocketAddr, String)> {
    let (addr, host) = resolve(text)?;
    refuse_port_zero(text, addr)?;
    Ok((addr, host))
}

/// Refuses a target address with port 0, naming what the user typed.
pub fn refuse_port_zero(text: &str, addr: SocketAddr) -> Result<()> {
    if addr.port() == 0 {
        return Err(Error::usage(format!(
            "'{text}' has port 0, which a server can listen on but nothing can connect to: give the server's port"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn port_zero_is_no_target() {
        assert!(resolve("127.0.0.1:0").is_ok());
        let e = resolve_target("127.0.0.1:0").unwrap_err().to_string();
        assert!(e.contains("'127.0.0.1:0' has port 0"), "{e}");
        assert!(resolve_target("[::1]:1").is_ok());
    }

    #[test]
    fn parses_forms() {
        assert_eq!(resolve("127.0.0.1:80").unwrap().0.port(), 80);
        assert_eq!(resolve("[::1]:81").unwrap().1, "::1");
        assert_eq!(resolve("localhost:82").unwrap().1, "localhost");
        for bad in [
            "127.0.0.1",
            "nohost:",
            ":80",
            "1.2.3.4:99999",
            "a b:1",
            "999.1.1.1:80",
            "[::g]:80",
        ] {
            assert!(resolve(bad).is_err(), "{bad}");
        }
    }
}
