//! A server's validated config, the one thing every loop of the server reads. Its
//! own file so that the loops (`thread.rs`, `epoll.rs`, `uring.rs`) read it without
//! importing the server's `mod.rs`, which starts them.

use super::pacing::Pacing;
use super::timeouts::Timeouts;
use std::net::SocketAddr;
use std::sync::Arc;

/// What a server runs with: where it listens, its threads, limits, TLS and pacing.
#[derive(Clone)]
pub struct ServerConfig {
    pub listen: SocketAddr,
    pub threads: usize,
    /// 0: no limit.
    pub max_conns_per_thread: usize,
    pub read_buffer: usize,
    pub tls: Option<Arc<rustls::ServerConfig>>,
    pub nodelay: bool,
    /// Print one line per connection event on stderr.
    pub debug: bool,
    /// --header-timeout and --idle-timeout.
    pub timeouts: Timeouts,
    /// --delay and --stall (the stall schedule counts from `start`).
    pub pacing: Pacing,
    /// One of several server processes (`serve --processes`, connect's built-in
    /// server): the mass-connection case, served on epoll (`Machinery::for_config`).
    pub one_of_processes: bool,
}
