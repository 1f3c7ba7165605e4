//! SO_REUSEPORT listeners: one per server thread, all on the same address, so the
//! kernel spreads connections over threads without a shared accept queue.

use crate::error::{Error, Result};
use socket2::{Domain, Protocol, Socket, Type};
use std::net::{SocketAddr, TcpListener};

fn new_socket(addr: SocketAddr, reuseport: bool) -> std::io::Result<Socket> {
    let s = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    s.set_reuse_address(true)?;
    if reuseport {
        s.set_reuse_port(true)?;
    }
    if addr.is_ipv6() {
        s.set_only_v6(true)?;
    }
    s.set_nonblocking(true)?;
    Ok(s)
}

fn bind_error(addr: SocketAddr, e: std::io::Error) -> Error {
    let why = match e.raw_os_error() {
        Some(libc::EADDRINUSE) => "the port is already in use".to_string(),
        Some(libc::EADDRNOTAVAIL) => "that address is not on this machine".to_string(),
        Some(libc::EACCES) => "permission denied (ports below 1024 need root)".to_string(),
        _ => e.to_string(),
    };
    Error::usage(format!("cannot listen on {addr}: {why}"))
}

/// Binds `count` listeners on `addr` with SO_REUSEPORT. Port 0 picks one free port for all.
pub fn bind_reuseport(addr: SocketAddr, count: usize, backlog: i32) -> Result<Vec<TcpListener>> {
    // SO_REUSEPORT would let us share a port silently with another server of the same
    // user; a plain bind first tells "port in use" apart from "ours to share".
    if addr.port() != 0 {
        probe_free(addr)?;
    }
    bind_reuseport_shared(addr, count, backlog)
}

/// Fails with a clear sentence when `addr` cannot be bound by a plain socket (in use,
/// not on this machine). The probe socket is closed again at once.
pub fn probe_free(addr: SocketAddr) -> Result<()> {
    let probe = new_socket(addr, false).map_err(|e| bind_error(addr, e))?;
    probe.bind(&addr.into()).map_err(|e| bind_error(addr, e))
}

/// A socket bound to `addr` with SO_REUSEPORT that never listens: it keeps the port
/// ours (no other bind, no outgoing connection's source port can take it) while the
/// processes that will listen there start; they join it with `bind_reuseport_shared`,
/// and as it does not listen, no connection reaches it. Port 0: the kernel picks a
/// port no socket uses (it never shares one through SO_REUSEPORT for port 0).
///
/// Without SO_REUSEADDR: with it, a bound socket that does not listen would let any
/// other SO_REUSEADDR socket (std's `TcpListener` sets it) bind and listen there too.
/// Only when that fails (connections of an earlier server in TIME_WAIT on the port)
/// does it take SO_REUSEADDR, as the servers' own listeners do.
pub fn hold_reuseport(addr: SocketAddr) -> Result<Socket> {
    let strict = new_socket(addr, true).and_then(|s| {
        s.set_reuse_address(false)?;
        s.bind(&addr.into())?;
        Ok(s)
    });
    match strict {
        Err(e) if e.raw_os_error() == Some(libc::EADDRINUSE) && addr.port() != 0 => {
            let s = new_socket(addr, true).map_err(|e| bind_error(addr, e))?;
            s.bind(&addr.into()).map_err(|e| bind_error(addr, e))?;
            Ok(s)
        }
        other => other.map_err(|e| bind_error(addr, e)),
    }
}

/// Like `bind_reuseport` without the "port in use" probe: for worker processes that
/// join listeners their siblings already hold (the parent probed once for all).
pub fn bind_reuseport_shared(
    addr: SocketAddr,
    count: usize,
    backlog: i32,
) -> Result<Vec<TcpListener>> {
    let mut out = Vec::with_capacity(count);
    let mut actual = addr;
    for _ in 0..count.max(1) {
        let s = new_socket(actual, true).map_err(|e| bind_error(actual, e))?;
        s.bind(&actual.into()).map_err(|e| bind_error(actual, e))?;
        s.listen(backlog).map_err(|e| bind_error(actual, e))?;
        let l: TcpListener = s.into();
        if actual.port() == 0 {
            actual = l.local_addr().map_err(|e| bind_error(addr, e))?;
        }
        out.push(l);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_one_port_and_refuses_a_taken_one() {
        let ls = bind_reuseport("127.0.0.1:0".parse().unwrap(), 3, 128).unwrap();
        let port = ls[0].local_addr().unwrap().port();
        assert!(ls.iter().all(|l| l.local_addr().unwrap().port() == port));
        let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let err = bind_reuseport(taken.local_addr().unwrap(), 1, 128).unwrap_err();
        assert!(err.to_string().contains("already in use"), "{err}");
    }
}
