//! A port for a server we are about to start (the suite's servers, the tests' peers).
//!
//! The usual trick (bind port 0, read the port, let it go) hands out a port from the
//! kernel's ephemeral range, and between letting it go and the server's bind anything
//! else on the machine may take it: another bind to port 0, or an outgoing
//! connection's source port. A readiness probe then reaches the wrong server, and the
//! right one fails to bind. Ports below the ephemeral range are never handed out by
//! the kernel on its own, so a port chosen there and free now stays free for us; a
//! process-wide counter keeps two callers of one process off the same port.

use std::net::TcpListener;
use std::sync::atomic::{AtomicU32, Ordering};

/// Lowest port handed out: above the registered ports that peers started on this
/// machine use (RabbitMQ's distribution port 25672 included).
const FIRST: u16 = 26_000;

/// Where the kernel's ephemeral range starts.
fn ephemeral_start() -> u16 {
    crate::sys::proc_fs::ephemeral_ports().0
}

/// A port free on `host` now, below the ephemeral range when there is room there
/// (else the kernel's choice from port 0).
pub fn free_port(host: &str) -> std::io::Result<u16> {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let end = ephemeral_start();
    if end > FIRST {
        let span = u32::from(end - FIRST);
        // Processes start at different places, so two test binaries or suites
        // running at once rarely probe the same ports.
        let offset = std::process::id().wrapping_mul(7_919) % span;
        for _ in 0..span {
            let i = NEXT.fetch_add(1, Ordering::Relaxed);
            let port = FIRST + ((offset + i) % span) as u16;
            if TcpListener::bind((host, port)).is_ok() {
                return Ok(port);
            }
        }
    }
    TcpListener::bind((host, 0))?.local_addr().map(|a| a.port())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports_are_below_the_ephemeral_range_and_never_repeat() {
        let end = ephemeral_start();
        let a = free_port("127.0.0.1").unwrap();
        let b = free_port("127.0.0.1").unwrap();
        assert_ne!(a, b);
        if end > FIRST {
            assert!((FIRST..end).contains(&a), "{a}");
            assert!((FIRST..end).contains(&b), "{b}");
        }
        // Free now: a server can bind it.
        TcpListener::bind(("127.0.0.1", a)).unwrap();
    }
}
